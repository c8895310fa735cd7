# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
The driver core on the emulated hardware (lockstep, in process).

Readings against the physics, enable/e-stop/watchdog as seen by the emulated firmware, each
injected fault reported and handled as docs/hardware.md says, calibration across a restart, and
closed-loop hopping through the wire format.
"""
import math

from dodo_sim.hardware.calibration import load_calibration
from dodo_sim.hardware.config import DriverConfig
from dodo_sim.hardware.emulated_rig import EmulatedRig
from dodo_sim.hardware.emulator import EmulatorConfig
from dodo_sim.hardware.safety import SafetyState
from dodo_sim.rollout import JointHold
from dodo_sim.simulator import SimConfig, Simulator
import numpy as np
import pinocchio as pin
import pytest
from rig_support import assert_steady_apexes
import yaml

START = (0.0, 1.2, 0.3, -0.6)
GEAR = 4.0


def make_rig(urdf_xml, driver=None, emulator=None, initial_q=START, enable=True):
    sim = Simulator(urdf_xml, SimConfig(initial_q=initial_q))
    config = DriverConfig(hardware='emulated', **(driver or {}))
    return EmulatedRig(sim, config, EmulatorConfig(**(emulator or {})), enable=enable)


@pytest.fixture
def rig(urdf_xml):
    r = make_rig(urdf_xml)
    yield r
    r.close()


HOLD = JointHold([2, 3], START, kp=300.0, kd=20.0)


def hold(rig, steps):
    for _ in range(steps):
        rig.step(HOLD.update(rig.state.t, rig.state.q, rig.state.v, None))
    return rig.state


def test_readings_match_the_physics_within_quantisation(rig):
    boom_count = 2.0 * math.pi * 2.5 / 65536                 # m per boom encoder count
    joint_count = 25.0 / 65535 / GEAR                         # rad per position count
    for _ in range(60):
        state = hold(rig, 5)
        truth = rig.sim.state
        assert np.all(np.abs(state.q[:2] - truth.q[:2]) <= 1.01 * boom_count)
        assert np.all(np.abs(state.q[2:] - truth.q[2:]) <= 1.01 * joint_count)
        assert np.all(np.abs(state.v[:2] - truth.v[:2]) <= 2.6 * 2e-4 * 2.5 + 1e-9)
        # the velocity field spans +-50 rad/s at the actuator: +-12.5 rad/s at the joint;
        # faster joints (the landing) read the range end
        expected = np.clip(truth.v[2:], -50.0 / GEAR, 50.0 / GEAR)
        assert np.all(np.abs(state.v[2:] - expected) <= 6 * 100.0 / 4095 / GEAR)
        assert np.allclose(state.contact_force, truth.contact_force, atol=0.26)


def test_actuators_stay_off_until_enable(urdf_xml):
    rig = make_rig(urdf_xml, enable=False)
    try:
        for _ in range(50):
            rig.step([50.0, 50.0])
            assert not rig.emulator.actuator_on('hip') and not rig.emulator.actuator_on('knee')
        assert rig.sim.state.t == 0.0                        # still on its stand
        assert rig.driver.enable(rig.state.t)[0]
        for _ in range(2):
            rig.step([0.0, 0.0])
        assert rig.emulator.actuator_on('hip') and rig.emulator.actuator_on('knee')
    finally:
        rig.close()


def test_enable_clears_a_stale_firmware_setpoint_first(urdf_xml):
    rig = make_rig(urdf_xml, enable=False)
    try:
        hip = rig.emulator._actuator('hip')
        hip.command = hip.command._replace(torque=30.0)      # left over in the firmware
        rig.driver.enable(rig.state.t)
        rig.step(None)                                       # zero command goes out first
        assert hip.command.torque == pytest.approx(0.0, abs=0.02)
        assert not hip.motor_mode
        rig.step(None)
        assert hip.motor_mode
    finally:
        rig.close()


def test_estop_turns_the_emulated_motors_off_within_one_cycle(rig):
    hold(rig, 50)
    assert rig.emulator.actuator_on('hip')
    rig.driver.estop('test')
    state = rig.step(HOLD.update(rig.state.t, rig.state.q, rig.state.v, None))
    assert not rig.emulator.actuator_on('hip') and not rig.emulator.actuator_on('knee')
    assert np.all(np.abs(state.tau_applied) < 0.2)           # measured torque: zero (+- 1 count)
    hold(rig, 20)
    assert rig.driver.safety.state is SafetyState.ESTOP


def test_watchdog_zero_torque_plus_damping_within_command_timeout_and_recovery(urdf_xml):
    timeout = 0.05
    rig = make_rig(urdf_xml, driver={'command_timeout': timeout, 'damping': (4.0, 3.0),
                                     'watchdog_mode': 'damp'})
    try:
        hold(rig, 600)                                        # landed, standing
        knee = rig.emulator._actuator('knee')
        assert abs(knee.command.torque) > 0.5
        silent_from = rig.state.t
        while rig.state.t < silent_from + timeout + 0.002:
            rig.step(None)
        assert rig.driver.safety.watchdog_active
        assert knee.motor_mode
        assert abs(knee.command.torque) < 0.02                # zero (one count)
        assert knee.command.kd == pytest.approx(3.0 / GEAR ** 2, abs=0.002)
        assert knee.command.kp == 0.0
        assert rig.driver.safety.watchdog_trips == 1
        hold(rig, 5)                                          # commands return
        assert not rig.driver.safety.watchdog_active
        assert knee.command.kd == 0.0 and abs(knee.command.torque) > 0.5
    finally:
        rig.close()


def test_a_few_dropped_replies_are_counted_and_survived(rig):
    hold(rig, 20)
    rig.emulator.drop_replies('knee', count=3)
    hold(rig, 20)
    knee = rig.driver.status[1]
    assert knee.missed == 3
    assert rig.driver.safety.state is SafetyState.ENABLED


def test_many_dropped_replies_fault_the_driver(rig):
    hold(rig, 20)
    rig.emulator.drop_replies('knee', count=50)
    hold(rig, 12)
    assert rig.driver.safety.state is SafetyState.FAULT
    assert 'knee: no reply for 10 cycles' in rig.driver.safety.reason
    assert not rig.emulator.actuator_on('hip')               # every motor off
    hold(rig, 40)                                            # replies are back
    assert rig.driver.enable(rig.state.t)[0]


def test_motor_fault_code_disables_and_blocks_enable_until_cleared(rig):
    hold(rig, 20)
    rig.emulator.set_error('knee', 2)
    hold(rig, 2)
    assert rig.driver.safety.state is SafetyState.FAULT
    assert 'knee: actuator error code 2' in rig.driver.safety.reason
    assert rig.driver.status[1].error_code == 2
    ok, why = rig.driver.enable(rig.state.t)
    assert not ok and 'error code 2' in why
    rig.emulator.set_error('knee', 0)
    hold(rig, 2)
    assert rig.driver.enable(rig.state.t)[0]


def test_warm_actuator_is_reported_hot_actuator_disables(rig):
    hold(rig, 20)
    rig.emulator.set_temperature('hip', 75.0)
    hold(rig, 2)
    assert rig.driver.status[0].temperature == 75.0
    assert rig.driver.safety.state is SafetyState.ENABLED
    rig.emulator.set_temperature('hip', 90.0)                # below the firmware's own 100
    hold(rig, 2)
    assert rig.driver.safety.state is SafetyState.FAULT
    assert 'hip: temperature 90 degC' in rig.driver.safety.reason


def test_stuck_actuator_encoder_faults_within_stuck_reading_time(urdf_xml):
    rig = make_rig(urdf_xml, driver={'stuck_reading_time': 0.1})
    try:
        hold(rig, 20)
        rig.emulator.freeze_encoder('knee')
        for _ in range(99):
            hold(rig, 1)
            assert rig.driver.safety.state is SafetyState.ENABLED
        hold(rig, 3)
        assert rig.driver.safety.state is SafetyState.FAULT
        assert 'knee: reading frozen' in rig.driver.safety.reason
    finally:
        rig.close()


def test_boom_encoder_signal_fault_disables(rig):
    hold(rig, 20)
    rig.emulator.boom_encoder_error(1)
    hold(rig, 2)
    assert rig.driver.safety.state is SafetyState.FAULT
    assert 'boom encoder' in rig.driver.safety.reason
    assert rig.driver.board.pitch_encoder_error


def test_bus_off_is_counted_faults_and_recovers(rig):
    hold(rig, 20)
    rig.emulator.bus_off(0.03)
    hold(rig, 5)
    backend = rig.driver.backend
    assert backend.bus_state == 'bus-off'
    assert backend.counters['bus_off_events'] == 1
    assert backend.counters['tx_enobufs'] > 0
    hold(rig, 30)
    assert rig.driver.safety.state is SafetyState.FAULT
    assert 'no reply' in rig.driver.safety.reason
    hold(rig, 5)                                              # bus back
    assert backend.bus_state == 'error-active'
    assert rig.driver.status[0].consecutive_missed == 0
    assert rig.driver.enable(rig.state.t)[0]


def test_transmit_queue_full_is_counted_and_survived(rig):
    hold(rig, 20)
    rig.emulator.transmit_queue_full(2)
    hold(rig, 20)
    counters = rig.driver.backend.counters
    assert counters['tx_enobufs'] == 2 and counters['tx_errors'] == 2
    assert rig.driver.safety.state is SafetyState.ENABLED


def test_calibration_file_survives_a_restart(urdf_xml, tmp_path):
    path = tmp_path / 'calibration.yaml'
    driver = {'calibration_file': str(path), 'calibration_pose': START}
    emulator = {'actuator_offsets': (0.7, -1.3), 'boom_power_on_counts': (1234, -5678)}
    rig = make_rig(urdf_xml, driver, emulator, enable=False)
    try:
        assert abs(rig.state.q[2] - START[2]) > 0.1          # uncalibrated reading is off
        rig.driver.calibrate()
        state = rig.step(None)
        assert np.allclose(state.q, START, atol=1e-3)
    finally:
        rig.close()
    data = yaml.safe_load(path.read_text())
    assert data['format'] == 'dodo_sim_calibration/1'
    assert data['actuators']['hip']['can_id'] == 1
    assert load_calibration(path).zero_offsets['hip'] == pytest.approx(0.7, abs=1e-3)
    restarted = make_rig(urdf_xml, driver, emulator, enable=False)   # power cycle
    try:
        assert np.allclose(restarted.state.q, START, atol=1e-3)
    finally:
        restarted.close()


def test_calibrate_refused_while_enabled(urdf_xml, tmp_path):
    path = tmp_path / 'c.yaml'
    rig = make_rig(urdf_xml, {'calibration_file': str(path), 'calibration_pose': START},
                   enable=False)
    try:
        rig.driver.calibrate()
        written = path.read_text()
        rig.step(None)
        assert rig.driver.enable(rig.state.t)[0]
        with pytest.raises(RuntimeError, match='only while disabled'):
            rig.driver.calibrate()
        assert path.read_text() == written
    finally:
        rig.close()


def test_missing_calibration_file_refuses_enable_until_calibrated(urdf_xml, tmp_path):
    path = tmp_path / 'nope.yaml'
    rig = make_rig(urdf_xml, {'calibration_file': str(path), 'calibration_pose': START},
                   enable=False)
    try:
        rig.step(None)
        ok, why = rig.driver.enable(rig.state.t)
        assert not ok and f'not calibrated: {path} does not exist' in why
        rig.driver.calibrate()
        rig.step(None)
        assert rig.driver.enable(rig.state.t)[0]
    finally:
        rig.close()


def test_corrupt_calibration_file_is_a_clear_error(urdf_xml, tmp_path):
    path = tmp_path / 'bad.yaml'
    path.write_text('format: something else\n')
    with pytest.raises(ValueError, match=f'calibration file {path}: expected format'):
        make_rig(urdf_xml, {'calibration_file': str(path)})


@pytest.mark.slow
def test_slip_controller_hops_through_the_emulated_hardware(urdf_xml):
    """
    The SLIP controller core on driver and emulator.

    With a one-period command delay and quantised encoders and forces, the apex heights are within
    2 % of each other from the 3rd hop on.
    """
    from dodo_control.controller import Controller, ControllerConfig
    from dodo_sim.rollout import rollout
    rig = make_rig(urdf_xml)
    try:
        controller = Controller(urdf_xml, ControllerConfig(apex_height=1.2))
        run = rollout(rig, controller, duration_s=8.0)
        assert rig.driver.safety.state is SafetyState.ENABLED
        assert all(s.missed == 0 for s in rig.driver.status)
    finally:
        rig.close()
    assert_steady_apexes(run, 1.2)


# -- every torque explained (issue 16 item 1) and the landing fallback (item 2) -----------------

def wire_check(rig, q_prev, v_prev) -> bool:
    """
    After one cycle: what each emulated actuator decoded from the bytes, on the joint side.

    Against the clamp and (if the driver's record says the cycle was tripped) the safe law
    evaluated on the measurement the cycle started from. Returns whether it was tripped.
    """
    driver = rig.driver
    tripped = rig.state is not None and driver.last_output.watchdog
    law = driver.safety.safe_law(rig.state.t, q_prev, v_prev) if tripped else None
    for k, (a, st) in enumerate(zip(driver.actuators, driver.status)):
        if not st.motor_on:
            continue
        r = a.ranges
        half_torque = 0.5 * (r.t_max - r.t_min) / 4095 * a.gear_ratio + 1e-9
        half_kd = 0.5 * (r.kd_max - r.kd_min) / 4095 * a.gear_ratio ** 2 + 1e-9
        command = rig.emulator._actuator(a.joint).command
        torque = a.joint_torque(command.torque)
        kd = command.kd * a.gear_ratio ** 2
        assert command.kp == 0.0
        assert abs(torque) <= a.max_torque + half_torque, (a.joint, torque)
        if tripped:
            mode, law_torque, law_kd = law[k]
            assert abs(torque - law_torque) <= half_torque, (a.joint, torque, law_torque)
            assert abs(kd - law_kd) <= half_kd, (a.joint, kd, law_kd)
    return tripped


def run_checked(rig, steps, command=None):
    """
    ``Step`` cycles (``command(state)`` -> torques, or None: a silent controller).

    Each checked by :func:`wire_check`; returns the joint positions, velocities and tripped flags.
    """
    qs, vs, tripped = [], [], []
    for _ in range(steps):
        q_prev, v_prev = rig.state.q[2:].copy(), rig.state.v[2:].copy()
        rig.step(None if command is None else command(rig.state))
        tripped.append(wire_check(rig, q_prev, v_prev))
        qs.append(rig.state.q.copy())
        vs.append(rig.state.v.copy())
    return np.array(qs), np.array(vs), np.array(tripped)


def slip(urdf_xml):
    from dodo_control.controller import Controller, ControllerConfig
    controller = Controller(urdf_xml, ControllerConfig(apex_height=1.2))
    return lambda s: controller.update(s.t, s.q, s.v, s.contact_force)


@pytest.mark.parametrize('watchdog_mode', ['land', 'damp'])
def test_every_cycle_the_torque_on_the_wire_is_clamped_and_while_tripped_is_the_safe_law(
        urdf_xml, watchdog_mode):
    """
    Hopping (the clamp acts at touchdown), then a silent controller.

    Every cycle's frames, as the emulated firmware decoded them, within the clamp, and the safe law
    while tripped.
    """
    rig = make_rig(urdf_xml, driver={'watchdog_mode': watchdog_mode,
                                     'max_torques': (120.0, 120.0)})
    try:
        run_checked(rig, 2500, slip(urdf_xml))
        _, _, tripped = run_checked(rig, 400)
        assert tripped[60:].all() and not tripped[:49].any()        # command_timeout 50 ms
    finally:
        rig.close()


@pytest.mark.parametrize('before', ['standing', 'hopping'])
def test_a_controller_silent_for_2_s_lands_the_leg_without_a_limit_fault(urdf_xml, before):
    """
    The 'land' fallback: no fault, no joint into its soft zone by the law's own motion.

    The leg resting at the end; the controller then takes over again.
    """
    rig = make_rig(urdf_xml)
    try:
        if before == 'standing':
            run_checked(rig, 600, lambda s: HOLD.update(s.t, s.q, s.v, None))
        else:
            run_checked(rig, 3000, slip(urdf_xml))
        q, v, tripped = run_checked(rig, 2000)
        assert rig.driver.safety.state is SafetyState.ENABLED, rig.driver.safety.reason
        assert rig.driver.safety.faults == 0 and tripped[60:].all()
        for j, (lower, upper) in zip((2, 3), ((-1.9, 1.9), (-2.8, 2.8))):
            assert lower + 0.1 < q[:, j].min() and q[:, j].max() < upper - 0.1, q[:, j]
        assert np.abs(v[-100:, 2:]).max() < 0.3, v[-100:, 2:]         # resting in the crouch
        assert q[-1, 1] > 0.5                                         # the body held up
        hold(rig, 5)
        assert not rig.driver.safety.watchdog_active
    finally:
        rig.close()


def test_the_old_damping_only_watchdog_drops_a_standing_leg_onto_its_limit(urdf_xml):
    """
    What the 'land' law replaces (watchdog_mode 'damp').

    The same 2 s silence ends in a URDF-limit fault with the motors off.
    """
    rig = make_rig(urdf_xml, driver={'watchdog_mode': 'damp'})
    try:
        hold(rig, 600)
        for _ in range(2000):
            rig.step(None)
        assert rig.driver.safety.state is SafetyState.FAULT
        assert 'beyond the URDF limit' in rig.driver.safety.reason
    finally:
        rig.close()


def test_the_279_nm_while_tripped_was_the_controllers_torque_before_the_trip(urdf_xml):
    """
    docs/hardware.md "The 279 N*m".

    The old DDS test called every state stamped later than SIGSTOP + command_timeout "tripped", by
    the test's wall clock. The watchdog counts from the driver's receipt of the last command, which
    DDS and the driver's executor deliver up to ~10 ms late (state-to-command age p99), so the
    first states of that window still carried the controller's last (stance, near-clamp) torque:
    |tau + kd v| = |tau_controller + kd v|. Reproduced here with the last command delivered 10 ms
    after the controller stopped; the driver's own per-cycle record (Sample.watchdog) separates the
    two, and on its tripped cycles the wire carries the safe law (wire_check).
    """
    rig = make_rig(urdf_xml, driver={'watchdog_mode': 'damp'})
    controller = slip(urdf_xml)
    try:
        run_checked(rig, 2000, controller)
        for _ in range(3000):                 # into a stance push, where the torque is high
            tau = controller(rig.state)
            if np.abs(tau).max() > 200.0:
                break
            rig.step(tau)
        assert np.abs(tau).max() > 200.0
        stopped = rig.state.t                 # the controller computed tau, then was stopped
        rows = []
        for k in range(150):
            if k == 10:                       # ... and its last command arrives 10 ms late
                rig.driver.set_command(rig.state.t, tau)
            q_prev, v_prev = rig.state.q[2:].copy(), rig.state.v[2:].copy()
            rig.step(None)
            tripped = wire_check(rig, q_prev, v_prev)
            rows.append((rig.state.t, tripped, *rig.state.tau_applied, *rig.state.v[2:]))
    finally:
        rig.close()
    t, tripped, effort, v = (np.array(rows)[:, 0], np.array(rows)[:, 1].astype(bool),
                             np.array(rows)[:, 2:4], np.array(rows)[:, 4:6])
    residual = np.abs(effort + 4.0 * v).max(axis=1)            # damping (4, 4) N*m*s/rad
    old_window = t > stopped + 0.05 + 0.001
    assert residual[old_window].max() > 200.0                   # hundreds of N*m "while tripped"
    assert residual[old_window & ~tripped].max() > 200.0        # ... on untripped cycles
    assert tripped[t > stopped + 0.061].all()
    # the measured torque of cycle k is the firmware's output since cycle k's frames, from the
    # velocity it measured then (the one-period delay): on cycles tripped since the one before,
    # tau_k = -kd v_(k-1) within a count (0.13 N*m) plus the firmware's own velocity rounding
    steady = tripped[1:] & tripped[:-1]
    lagged = np.abs(effort[1:] + 4.0 * v[:-1]).max(axis=1)[steady]
    # measured 0.100 N*m (in-process, deterministic); bound: one reply count (0.13) + the velocity
    # rounding's share, well below the 0.5 that would hide a constant offset of a few counts
    assert lagged.max() < 0.2, lagged.max()
    print(f'old window: max |tau + kd v| {residual[old_window].max():.1f} N*m; on the cycles '
          f'the driver records as tripped |tau_k + kd v_(k-1)| <= {lagged.max():.3f} N*m')


@pytest.mark.parametrize('collisions, body_above_floor', [('links', True), ('feet', False)])
def test_an_estopped_leg_collapses_onto_its_body_not_through_the_floor(urdf_xml, collisions,
                                                                       body_above_floor):
    """
    Issue 22 on the emulated rig: the motors off, the leg folds and the body lands on the floor.

    With 'feet' (the default before issue 22) the body ends 0.6 m under the floor, resting on the
    foot above it, as in the recorded bag of the issue; with the default 'links' no collision
    point of the leg is below the floor.
    """
    sim = Simulator(urdf_xml, SimConfig(initial_q=START, collisions=collisions))
    rig = EmulatedRig(sim, DriverConfig(hardware='emulated'), EmulatorConfig())
    try:
        hold(rig, 300)
        rig.driver.estop('test')
        for _ in range(2000):                                     # 2 s limp
            rig.step(None)
        state = sim.state
        assert bool(state.q[1] > 0.0) is body_above_floor, state.q
        if collisions == 'links':
            model = sim.robot.model
            data = model.createData()
            pin.framesForwardKinematics(model, data, state.q)
            assert min(data.oMf[p.frame_id].translation[2] - p.radius
                       for p in sim.robot.collision_points) > -1e-6
            assert {c.link for c in state.link_contacts} - {'foot'}   # a link carries it
    finally:
        rig.close()
