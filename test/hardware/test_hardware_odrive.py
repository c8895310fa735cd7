# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
ODrive CAN Simple backend: the wire format against the protocol's byte layout.

The emulated axis state machine (arming, watchdog, errors, cyclic rates), and the driver core
closing the loop through it (readings, a watchdog expiry as a named fault, the SLIP hopper
hopping).

Reference layouts: ODrive CAN protocol documentation (docs.odriverobotics.com/v/latest/manual/
can-protocol.html), firmware 0.6.x: arbitration id ``node_id << 5 | cmd_id``, little-endian;
Heartbeat ``<IBBB`` (axis error, axis state, procedure result, trajectory done), encoder
estimates ``<ff`` (rev, rev/s), Set_Controller_Mode ``<II``, Set_Axis_State ``<I``,
Set_Input_Torque ``<f`` (N*m), Get_Torques ``<ff``, Clear_Errors ``<B``.
"""
import math
import struct

import can
from dodo_sim.hardware.backend import ActuatorFrame
from dodo_sim.hardware.backends import make_backend
from dodo_sim.hardware.config import actuator_configs, DriverConfig, urdf_joints
from dodo_sim.hardware.driver_status import actuated_status_text
from dodo_sim.hardware.emulated_rig import EmulatedRig
from dodo_sim.hardware.emulator import EmulatorConfig
from dodo_sim.hardware.odrive import (arbitration_id, AXIS_STATE_CLOSED_LOOP_CONTROL,
                                      AXIS_STATE_IDLE, CLEAR_ERRORS, EmulatedOdriveAxis,
                                      GET_ENCODER_ESTIMATES, GET_TORQUES, HEARTBEAT,
                                      odrive_error_name, OdriveBackend, OdriveEmulation,
                                      OdriveWire, SET_AXIS_STATE, SET_CONTROLLER_MODE,
                                      SET_INPUT_TORQUE, WATCHDOG_TIMER_EXPIRED)
from dodo_sim.hardware.protocol import MitCommand
from dodo_sim.hardware.safety import SafetyState
from dodo_sim.simulator import SimConfig, Simulator
import numpy as np
import pytest
from rig_support import assert_steady_apexes

START = (0.0, 1.2, 0.3, -0.6)
GEAR = 25.0
#: the hopper on two ODrive Pro + M8325s axes behind a 25:1 reduction (config/hardware.yaml)
ODRIVE = {'protocols': ('odrive_can_simple',) * 2, 'can_ids': (0, 1),
          'models': ('ODrivePro-M8325s',) * 2, 'gear_ratios': (GEAR, GEAR),
          'torque_constants': (0.0827, 0.0827)}


# -- wire format --------------------------------------------------------------------------------

def test_arbitration_id_is_node_id_shifted_by_5_or_cmd_id():
    assert arbitration_id(3, SET_INPUT_TORQUE) == 0x6E
    assert arbitration_id(0x3F, HEARTBEAT) == 0x7E1


@pytest.mark.parametrize('error, state, result, done', [(0, 1, 0, 1), (0x1000000, 8, 3, 0),
                                                        (0xFFFFFFFF, 255, 255, 1)])
def test_heartbeat_matches_the_documented_byte_layout(error, state, result, done):
    wire = OdriveWire()
    data = wire.encode(HEARTBEAT, Axis_Error=error, Axis_State=state, Procedure_Result=result,
                       Trajectory_Done_Flag=done)
    assert data == struct.pack('<IBBBx', error, state, result, done)
    d = wire.decode(HEARTBEAT, struct.pack('<IBBBx', error, state, result, done))
    assert (d['Axis_Error'], d['Axis_State'], d['Procedure_Result'],
            d['Trajectory_Done_Flag']) == (error, state, result, done)


def test_float_messages_are_little_endian_float32():
    wire = OdriveWire()
    rng = np.random.default_rng(1)
    for pos, vel in rng.normal(0.0, 50.0, size=(20, 2)):
        ref = struct.pack('<ff', pos, vel)
        d = wire.decode(GET_ENCODER_ESTIMATES, ref)
        assert struct.pack('<ff', d['Pos_Estimate'], d['Vel_Estimate']) == ref
        assert wire.encode(GET_ENCODER_ESTIMATES, Pos_Estimate=float(np.float32(pos)),
                           Vel_Estimate=float(np.float32(vel))) == ref
    assert wire.encode(SET_INPUT_TORQUE, Input_Torque=-1.25) == struct.pack('<f', -1.25)
    assert wire.encode(GET_TORQUES, Torque_Target=0.5, Torque_Estimate=-0.25) == \
        struct.pack('<ff', 0.5, -0.25)


def test_mode_state_and_clear_frames_match_the_documented_layout():
    wire = OdriveWire()
    assert wire.encode(SET_CONTROLLER_MODE, Control_Mode=1, Input_Mode=1) == \
        struct.pack('<II', 1, 1)
    assert wire.encode(SET_AXIS_STATE, Axis_Requested_State=8) == struct.pack('<I', 8)
    assert wire.encode(CLEAR_ERRORS, Identify=0) == b'\x00'


@pytest.mark.parametrize('node', [4, 8, 64])
def test_node_ids_that_clash_with_the_sensor_board_or_exceed_6_bits_are_refused(node):
    with pytest.raises(ValueError, match='can_ids'):
        DriverConfig(hardware='emulated', **dict(ODRIVE, can_ids=(0, node)))


def test_error_bits_are_named():
    assert odrive_error_name(0) == 'no error'
    assert odrive_error_name(WATCHDOG_TIMER_EXPIRED | 0x2000) == \
        'MOTOR_OVER_TEMP | WATCHDOG_TIMER_EXPIRED'


# -- the backend's frames -----------------------------------------------------------------------

@pytest.fixture
def backend_and_peer(urdf_xml):
    channel = f'odrive-test-{id(urdf_xml)}'
    _, limits = urdf_joints(urdf_xml)
    actuators = actuator_configs(DriverConfig(hardware='emulated', **ODRIVE), limits)
    backend = make_backend(can.Bus(interface='virtual', channel=channel), actuators, board=False)
    peer = can.Bus(interface='virtual', channel=channel)
    yield backend, peer
    backend.close()
    peer.shutdown()


def received(peer):
    """(id, data) of the frames the backend sent; an RTR as (id, 'RTR')."""
    out = []
    while (msg := peer.recv(0.0)) is not None:
        out.append((msg.arbitration_id, 'RTR' if msg.is_remote_frame else bytes(msg.data)))
    return out


def test_enable_sets_torque_control_then_closed_loop_and_disable_idles(backend_and_peer):
    backend, peer = backend_and_peer
    assert isinstance(backend, OdriveBackend)
    backend.exchange([ActuatorFrame(1, 'enable')], 0, 0.0)
    assert received(peer) == [(0x2B, struct.pack('<II', 1, 1)), (0x27, struct.pack('<I', 8)),
                              (0x29, 'RTR')]          # every cycle polls the estimate
    backend.exchange([ActuatorFrame(0, 'disable')], 0, 0.0)
    assert received(peer) == [(0x07, struct.pack('<I', 1)), (0x09, 'RTR')]


def test_command_torque_plus_host_side_pd_on_the_newest_estimate(backend_and_peer):
    backend, peer = backend_and_peer
    # the axis reports 0.5 rev, 2 rev/s; a damping command kd = 0.1, v_des = 0; torque 0.3
    peer.send(can.Message(arbitration_id=arbitration_id(0, GET_ENCODER_ESTIMATES),
                          data=struct.pack('<ff', 0.5, 2.0), is_extended_id=False))
    backend.exchange([ActuatorFrame(0, 'command', MitCommand(kd=0.1, torque=0.3))], 0, 0.0)
    assert backend.axes[0].position == pytest.approx(math.pi)
    frames = received(peer)
    assert [f[0] for f in frames] == [0x0E, 0x09]
    (torque,) = struct.unpack('<f', frames[0][1])
    assert torque == pytest.approx(0.3 - 0.1 * 2.0 * 2.0 * math.pi, rel=1e-6)


# -- the emulated axis --------------------------------------------------------------------------

def emulated_axis(urdf_xml, **emulation):
    _, limits = urdf_joints(urdf_xml)
    config = actuator_configs(DriverConfig(hardware='emulated', **ODRIVE), limits)[0]
    return EmulatedOdriveAxis(config, OdriveEmulation(**emulation), EmulatorConfig(),
                              np.random.default_rng(0))


def send(axis, cmd, now, **signals):
    axis.receive(cmd, OdriveWire().encode(cmd, **signals), now, 0.0, 0.0)


def test_axis_applies_torque_only_in_closed_loop_torque_control(urdf_xml):
    axis = emulated_axis(urdf_xml)
    send(axis, SET_INPUT_TORQUE, 0.0, Input_Torque=2.0)
    assert axis.axis_state == AXIS_STATE_IDLE and axis.torque(0.0, 0.0, 0.0) == 0.0
    send(axis, SET_AXIS_STATE, 0.0, Axis_Requested_State=AXIS_STATE_CLOSED_LOOP_CONTROL)
    assert axis.motor_mode and axis.torque(0.0, 0.0, 0.0) == 0.0     # control mode not set
    send(axis, SET_CONTROLLER_MODE, 0.0, Control_Mode=1, Input_Mode=1)
    assert axis.torque(0.0, 0.0, 0.0) == pytest.approx(2.0)
    send(axis, SET_INPUT_TORQUE, 0.0, Input_Torque=1e3)
    assert axis.torque(0.0, 0.0, 0.0) == pytest.approx(axis.torque_limit)
    send(axis, SET_AXIS_STATE, 0.001, Axis_Requested_State=AXIS_STATE_IDLE)
    assert axis.axis_state == AXIS_STATE_IDLE and axis.torque(0.001, 0.0, 0.0) == 0.0


def test_watchdog_expiry_disarms_with_an_error_until_clear_errors(urdf_xml):
    axis = emulated_axis(urdf_xml, watchdog_timeout=0.1)
    send(axis, SET_CONTROLLER_MODE, 0.0, Control_Mode=1, Input_Mode=1)
    send(axis, SET_AXIS_STATE, 0.0, Axis_Requested_State=AXIS_STATE_CLOSED_LOOP_CONTROL)
    send(axis, SET_INPUT_TORQUE, 0.05, Input_Torque=1.0)
    assert axis.torque(0.15, 0.0, 0.0) == 1.0                       # fed 0.1 s ago
    assert axis.torque(0.1501, 0.0, 0.0) == 0.0                     # expired
    assert axis.axis_error == WATCHDOG_TIMER_EXPIRED and axis.axis_state == AXIS_STATE_IDLE
    send(axis, SET_AXIS_STATE, 0.2, Axis_Requested_State=AXIS_STATE_CLOSED_LOOP_CONTROL)
    assert axis.axis_state == AXIS_STATE_IDLE and axis.procedure_result == 3   # refused
    send(axis, CLEAR_ERRORS, 0.2, Identify=0)
    send(axis, SET_AXIS_STATE, 0.2, Axis_Requested_State=AXIS_STATE_CLOSED_LOOP_CONTROL)
    assert axis.axis_error == 0 and axis.motor_mode


def test_cyclic_messages_go_out_at_their_rates(urdf_xml):
    axis = emulated_axis(urdf_xml, heartbeat_period=0.1, encoder_period=0.001)
    counts = {}
    for k in range(1000):                                            # 1 s at 1 kHz
        for frame_id, _ in axis.cyclic(k * 0.001, 0.0, 0.0):
            counts[frame_id & 0x1F] = counts.get(frame_id & 0x1F, 0) + 1
    assert counts[HEARTBEAT] == 10 and counts[GET_ENCODER_ESTIMATES] == 1000


# -- the driver core on emulated ODrive axes ---------------------------------------------------

def make_rig(urdf_xml, driver=None, emulator=None):
    sim = Simulator(urdf_xml, SimConfig(initial_q=START))
    config = DriverConfig(hardware='emulated', **dict(ODRIVE, **(driver or {})))
    return EmulatedRig(sim, config, EmulatorConfig(**(emulator or {})))


def test_readings_match_the_physics_through_float32_estimates(urdf_xml):
    rig = make_rig(urdf_xml, emulator={'odrive': OdriveEmulation(velocity_noise=0.0)})
    try:
        for _ in range(120):                 # past the first heartbeat after the enable
            state = rig.step([0.0, 0.0])
        sim = rig.sim.state
        assert np.allclose(state.q[2:], sim.q[2:], atol=1e-5)    # float32 of motor rev / 25
        assert np.allclose(state.v[2:], sim.v[2:], atol=1e-4)
        axes = rig.driver.backend.axes
        assert all(a.axis_state == AXIS_STATE_CLOSED_LOOP_CONTROL for a in axes.values())
        assert all(a.heartbeats >= 1 for a in axes.values())
        assert all(s.missed == 0 for s in rig.driver.status)
    finally:
        rig.close()


def test_an_odrive_watchdog_expiry_is_a_fault_naming_the_error(urdf_xml):
    """
    The host goes silent on the bus (frames dropped): the ODrive's own watchdog disarms the axis.

    Its heartbeat's error makes the driver fault, naming the ODrive error.
    """
    rig = make_rig(urdf_xml, emulator={'odrive': OdriveEmulation(watchdog_timeout=0.05)})
    try:
        rig.step([0.0, 0.0])
        rig.emulator.actuators[1].last_feed = -math.inf     # the knee's frames stop arriving
        for _ in range(150):
            rig.step([0.0, 0.0])
        assert rig.driver.safety.state is SafetyState.FAULT
        assert (f'knee: actuator error code {WATCHDOG_TIMER_EXPIRED} (WATCHDOG_TIMER_EXPIRED)'
                in rig.driver.safety.reason), rig.driver.safety.reason
        assert not rig.emulator.actuator_on('knee')
        assert 'WATCHDOG_TIMER_EXPIRED' in actuated_status_text(rig.driver.status[1])
        # Clear_Errors (what the ODrive user does), then the driver enables again
        rig.driver.backend.request_clear_errors()
        for _ in range(120):                                 # > one heartbeat period
            rig.step(None)
        ok, message = rig.driver.enable(rig.state.t)
        assert ok, message
    finally:
        rig.close()


def test_slip_controller_hops_on_emulated_odrive_axes(urdf_xml):
    """
    SLIP controller core on driver + emulated ODrives: apexes within 2 %.

    The controller core is unchanged; the loop has a one-period delay, float32 estimates and
    host-side torque. The apexes are within 2 % from the 3rd hop on.
    """
    from dodo_control.controller import Controller, ControllerConfig
    from dodo_sim.rollout import rollout
    rig = make_rig(urdf_xml)
    try:
        controller = Controller(urdf_xml, ControllerConfig(apex_height=1.2))
        run = rollout(rig, controller, duration_s=8.0)
        assert rig.driver.safety.state is SafetyState.ENABLED, rig.driver.safety.reason
        assert all(s.missed == 0 for s in rig.driver.status)
    finally:
        rig.close()
    assert_steady_apexes(run, 1.2)
