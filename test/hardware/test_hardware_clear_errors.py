# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
Clearing latched actuator errors (DriverCore.clear_errors, the driver's ~/clear_errors).

On the lockstep emulated rig, MIT-mode actuators and ODrive axes: the error is cleared the way
the firmware allows (MIT: a zero set-point, the enable frame, back to rest; ODrive: Clear_Errors,
CAN Simple 0x018, as the ODrive firmware's CAN Simple handler takes it), the cause still there
raises it again, and the request is refused while an e-stop is latched or another fault condition
(heat, a joint beyond its limit) is present.
"""
import math

from dodo_sim.hardware.config import DriverConfig
from dodo_sim.hardware.emulated_rig import EmulatedRig
from dodo_sim.hardware.emulator import EmulatorConfig
from dodo_sim.hardware.odrive import (CLEAR_ERRORS, OdriveEmulation, split_id,
                                      WATCHDOG_TIMER_EXPIRED)
from dodo_sim.hardware.safety import SafetyState
from dodo_sim.simulator import SimConfig, Simulator
import pytest

START = (0.0, 1.2, 0.3, -0.6)
ODRIVE = {'protocols': ('odrive_can_simple',) * 2, 'can_ids': (0, 1),
          'models': ('ODrivePro-M8325s',) * 2, 'gear_ratios': (25.0, 25.0),
          'torque_constants': (0.0827, 0.0827)}


def make_rig(urdf_xml, driver=None, emulator=None):
    sim = Simulator(urdf_xml, SimConfig(initial_q=START))
    config = DriverConfig(hardware='emulated', **(driver or {}))
    return EmulatedRig(sim, config, EmulatorConfig(**(emulator or {})))


@pytest.fixture
def rig(urdf_xml):
    r = make_rig(urdf_xml)
    yield r
    r.close()


def cycles(rig, n):
    for _ in range(n):
        rig.step(None)


def test_mit_clear_reenters_motor_mode_once_and_clears_a_resolved_error(rig):
    cycles(rig, 5)
    rig.emulator.set_error('knee', 2)
    cycles(rig, 2)
    assert rig.driver.safety.state is SafetyState.FAULT
    knee = rig.emulator._actuator('knee')
    # the cause is still there: the firmware keeps the error, the enable stays refused
    ok, message = rig.driver.clear_errors()
    assert ok and 'knee' in message and 'hip' not in message, message
    enables = knee.enable_frames
    cycles(rig, 5)
    assert knee.enable_frames == enables + 1 and not knee.motor_mode
    assert rig.driver.status[1].error_code == 2
    assert not rig.driver.enable(rig.state.t)[0]
    # the cause removed: the error stays latched until the clear, then the enable works
    rig.emulator.resolve_error('knee')
    cycles(rig, 3)
    assert rig.driver.status[1].error_code == 2
    assert not rig.driver.enable(rig.state.t)[0]
    assert rig.driver.clear_errors()[0]
    cycles(rig, 5)
    assert rig.driver.status[1].error_code == 0
    assert not knee.motor_mode and not rig.driver.status[1].motor_on    # back at rest
    ok, message = rig.driver.enable(rig.state.t)
    assert ok, message


def test_mit_firmware_over_temperature_is_refused_while_hot_and_cleared_once_cool(rig):
    cycles(rig, 5)
    rig.emulator.set_temperature('hip', 105.0)       # over the firmware's own 100 degC: error 1
    cycles(rig, 2)
    assert rig.driver.status[0].error_code == 1
    ok, message = rig.driver.clear_errors()
    assert not ok and 'fault still present: hip: temperature 105 degC' in message, message
    rig.emulator.set_temperature('hip', 40.0)
    cycles(rig, 2)
    assert rig.driver.status[0].error_code == 1       # latched in the firmware
    assert rig.driver.clear_errors()[0]
    cycles(rig, 5)
    assert rig.driver.status[0].error_code == 0
    assert rig.driver.enable(rig.state.t)[0]


def test_refused_while_an_estop_is_latched(rig):
    cycles(rig, 5)
    rig.emulator.set_error('knee', 2)
    cycles(rig, 2)
    rig.driver.estop('test e-stop')
    cycles(rig, 2)
    knee = rig.emulator._actuator('knee')
    enables = knee.enable_frames
    ok, message = rig.driver.clear_errors()
    assert not ok and 'e-stop latched' in message, message
    cycles(rig, 5)
    assert knee.enable_frames == enables                  # nothing was sent


def test_refused_while_a_joint_is_beyond_its_limit(urdf_xml):
    rig = make_rig(urdf_xml)
    try:
        cycles(rig, 5)
        rig.emulator.set_error('knee', 2)
        rig.driver.safety.add_condition('knee: position -2.900 rad beyond the URDF limit')
        ok, message = rig.driver.clear_errors()
        assert not ok and 'fault still present: knee: position' in message, message
    finally:
        rig.close()


def test_nothing_to_clear_when_no_actuator_reports_an_error(rig):
    cycles(rig, 5)
    ok, message = rig.driver.clear_errors()
    assert not ok and 'motors are on' in message, message
    rig.driver.disable()
    cycles(rig, 2)
    ok, message = rig.driver.clear_errors()
    assert not ok and 'no actuator reports an error' in message, message


def test_odrive_clear_errors_frame_clears_a_watchdog_expiry(urdf_xml):
    rig = make_rig(urdf_xml, ODRIVE, {'odrive': OdriveEmulation(watchdog_timeout=0.05)})
    try:
        rig.step([0.0, 0.0])
        axis = rig.emulator.actuators[1]
        axis.last_feed = -math.inf                       # the knee's frames stop arriving
        cycles(rig, 150)
        assert rig.driver.safety.state is SafetyState.FAULT
        assert rig.driver.status[1].error_code == WATCHDOG_TIMER_EXPIRED
        assert not rig.driver.enable(rig.state.t)[0]
        sent = []
        bus_send = rig.driver.backend.bus.send

        def spy(msg, *args, **kwargs):
            sent.append(split_id(msg.arbitration_id))
            return bus_send(msg, *args, **kwargs)

        rig.driver.backend.bus.send = spy
        ok, message = rig.driver.clear_errors()
        assert ok and 'WATCHDOG_TIMER_EXPIRED' in message and 'clear_errors' in message, message
        cycles(rig, 1)
        assert (1, CLEAR_ERRORS) in sent and (0, CLEAR_ERRORS) not in sent   # the knee only
        assert axis.axis_error == 0
        cycles(rig, 120)                                 # > one heartbeat period
        assert rig.driver.status[1].error_code == 0
        ok, message = rig.driver.enable(rig.state.t)
        assert ok, message
    finally:
        rig.close()
