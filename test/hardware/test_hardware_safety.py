# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""The safety supervisor as a pure state machine (dodo_sim.hardware.safety)."""
import math

from dodo_sim.hardware.safety import (JointHealth, JointMode, SafetyConfig, SafetyLimits,
                                      SafetyState, SafetySupervisor)
import pytest

PERIOD = 0.001
LIMITS = [SafetyLimits(-1.9, 1.9, 100.0, 4.0), SafetyLimits(-2.8, 2.8, 100.0, 3.0)]
HEALTHY = [JointHealth(), JointHealth()]


def supervisor(**overrides):
    s = SafetySupervisor(('hip', 'knee'), LIMITS, SafetyConfig(**overrides))
    s.observe([0.0, -1.0], HEALTHY)
    return s


def modes(out):
    return [sp.mode for sp in out.setpoints]


def test_disabled_until_enable_even_with_commands():
    s = supervisor()
    for k in range(100):
        s.command(k * PERIOD, [5.0, 5.0])
        out = s.setpoints(k * PERIOD, [0.0, -1.0], [0.0, 0.0])
        assert out.state is SafetyState.DISABLED
        assert modes(out) == [JointMode.OFF, JointMode.OFF]


def test_commands_from_before_the_enable_are_dropped():
    s = supervisor()
    s.command(0.0, [5.0, 5.0])
    s.enable(0.001)
    out = s.setpoints(0.002, [0.0, -1.0], [0.0, 0.0])
    assert modes(out) == [JointMode.DAMPING, JointMode.DAMPING]
    s.command(0.002, [5.0, -7.0])
    out = s.setpoints(0.003, [0.0, -1.0], [0.0, 0.0])
    assert [sp.torque for sp in out.setpoints] == [5.0, -7.0]


def test_estop_turns_motors_off_in_the_next_cycle_and_latches():
    s = supervisor()
    s.enable(0.0)
    s.command(0.001, [5.0, 5.0])
    assert modes(s.setpoints(0.001, [0.0, -1.0], [0.0, 0.0])) == [JointMode.TORQUE] * 2
    s.estop()
    s.command(0.002, [5.0, 5.0])
    out = s.setpoints(0.002, [0.0, -1.0], [0.0, 0.0])
    assert out.state is SafetyState.ESTOP
    assert modes(out) == [JointMode.OFF, JointMode.OFF]
    s.command(0.5, [5.0, 5.0])
    assert modes(s.setpoints(0.5, [0.0, -1.0], [0.0, 0.0])) == [JointMode.OFF, JointMode.OFF]


def test_estop_damping_mode():
    s = supervisor(estop_mode='damping')
    s.enable(0.0)
    s.estop()
    out = s.setpoints(0.001, [0.0, -1.0], [0.0, 0.0])
    assert modes(out) == [JointMode.DAMPING, JointMode.DAMPING]
    assert [sp.kd for sp in out.setpoints] == [4.0, 3.0]
    assert [sp.torque for sp in out.setpoints] == [0.0, 0.0]


def test_estop_input_blocks_enable_until_released():
    s = supervisor()
    s.enable(0.0)
    s.set_estop_input(True)
    assert s.state is SafetyState.ESTOP
    ok, why = s.enable(0.1)
    assert not ok and 'e-stop' in why
    s.set_estop_input(False)
    assert s.state is SafetyState.ESTOP            # releasing does not enable
    assert s.enable(0.2)[0]
    assert s.state is SafetyState.ENABLED


def test_watchdog_zero_torque_and_damping_within_command_timeout_then_recovers():
    timeout = 0.05
    s = supervisor(command_timeout=timeout, watchdog_mode='damp')
    s.enable(0.0)
    t = 0.0
    for _ in range(20):                            # commands at 1 kHz
        t += PERIOD
        s.command(t, [10.0, -10.0])
        assert modes(s.setpoints(t, [0.0, -1.0], [0.0, 0.0])) == [JointMode.TORQUE] * 2
    last_command = t
    while t < last_command + timeout + 2 * PERIOD:  # commands stop
        t += PERIOD
        out = s.setpoints(t, [0.0, -1.0], [0.0, 0.0])
        if t - last_command > timeout:
            assert out.watchdog
            assert modes(out) == [JointMode.DAMPING] * 2
            assert [sp.torque for sp in out.setpoints] == [0.0, 0.0]
            assert [sp.kd for sp in out.setpoints] == [4.0, 3.0]
        else:
            assert modes(out) == [JointMode.TORQUE] * 2
    assert s.watchdog_trips == 1
    t += PERIOD
    s.command(t, [1.0, 2.0])                       # commands return
    out = s.setpoints(t, [0.0, -1.0], [0.0, 0.0])
    assert not out.watchdog
    assert [sp.torque for sp in out.setpoints] == [1.0, 2.0]


def test_torque_clamped_to_max_torque():
    s = supervisor()
    s.enable(0.0)
    s.command(0.0, [1e4, -1e4])
    out = s.setpoints(0.0, [0.0, -1.0], [0.0, 0.0])
    assert [sp.torque for sp in out.setpoints] == [100.0, -100.0]


def simulate_push(s, torque, inertia=0.3, steps=3000, q0=1.7):
    """1-DOF joint (hip) pushed with ``torque`` toward its upper limit; returns the path."""
    q, v, path = q0, 0.0, []
    for k in range(steps):
        t = k * PERIOD
        s.command(t, [torque, 0.0])
        out = s.setpoints(t, [q, -1.0], [v, 0.0])
        s.observe([q, -1.0], HEALTHY)
        tau = out.setpoints[0].torque if out.setpoints[0].mode is JointMode.TORQUE else 0.0
        v += tau / inertia * PERIOD
        q += v * PERIOD
        path.append(q)
    return path


@pytest.mark.parametrize('torque', [5.0, 20.0, 80.0])
def test_soft_limit_stops_a_joint_pushed_toward_its_limit(torque):
    s = supervisor(soft_limit_margin=0.15, soft_limit_stiffness=1000.0, soft_limit_damping=20.0)
    s.enable(0.0)
    path = simulate_push(s, torque)
    assert s.state is SafetyState.ENABLED
    assert max(path) < 1.9                          # never reaches the URDF limit
    assert max(path) > 1.9 - 0.15                   # it did get into the soft zone
    assert abs(path[-1] - path[-100]) < 1e-3        # and came to rest there


def test_without_soft_limits_the_same_push_crosses_the_limit_and_faults():
    s = supervisor(soft_limit_margin=0.0)
    s.enable(0.0)
    path = simulate_push(s, 20.0)
    assert max(path) > 1.9
    assert s.state is SafetyState.FAULT
    assert 'beyond the URDF limit' in s.reason


def test_hard_limit_faults_and_blocks_enable():
    s = supervisor()
    s.enable(0.0)
    s.observe([1.95, -1.0], HEALTHY)
    assert s.state is SafetyState.FAULT
    assert modes(s.setpoints(0.001, [1.95, -1.0], [0.0, 0.0])) == [JointMode.OFF] * 2
    ok, why = s.enable(0.002)
    assert not ok and 'hip' in why
    s.observe([1.5, -1.0], HEALTHY)
    assert s.enable(0.003)[0]


@pytest.mark.parametrize('health,word', [
    (JointHealth(error_code=2), 'error code 2'),
    (JointHealth(temperature=90.0), 'temperature'),
    (JointHealth(consecutive_missed=10), 'no reply'),
    (JointHealth(frozen_for=0.3), 'frozen'),
])
def test_fault_conditions(health, word):
    s = supervisor()
    s.enable(0.0)
    s.observe([0.0, -1.0], [JointHealth(), health])
    assert s.state is SafetyState.FAULT
    assert word in s.reason and 'knee' in s.reason


def test_warm_actuator_is_not_a_fault():
    s = supervisor()
    s.enable(0.0)
    s.observe([0.0, -1.0], [JointHealth(temperature=75.0), JointHealth()])
    assert s.state is SafetyState.ENABLED


def test_enable_refused_before_any_reply():
    s = SafetySupervisor(('hip', 'knee'), LIMITS)
    s.observe([0.0, 0.0], [JointHealth(seen=False), JointHealth(seen=False)])
    ok, why = s.enable(0.0)
    assert not ok and 'no reply' in why


def test_bad_command_length_raises():
    s = supervisor()
    with pytest.raises(ValueError, match='2 torques'):
        s.command(0.0, [1.0])
    assert math.isinf(s.command_age(0.0))


LANDING = [SafetyLimits(-1.9, 1.9, 100.0, 4.0, fallback_stiffness=300.0, fallback_damping=15.0,
                        crouch=0.6),
           SafetyLimits(-2.8, 2.8, 100.0, 3.0, fallback_stiffness=300.0, fallback_damping=15.0,
                        crouch=-2.79)]     # a crouch inside the soft zone: clipped out of it


def tripped_landing(q_trip, timeout=0.05, **config):
    s = SafetySupervisor(('hip', 'knee'), LANDING,
                         SafetyConfig(command_timeout=timeout, watchdog_mode='land',
                                      fallback_hold_time=0.2, fallback_lower_time=1.0, **config))
    s.observe([0.0, -1.0], HEALTHY)
    s.enable(0.0)
    s.command(0.0, [5.0, -5.0])
    out = s.setpoints(timeout + PERIOD, q_trip, [0.0, 0.0])
    assert out.watchdog and modes(out) == [JointMode.FALLBACK] * 2
    return s, timeout + PERIOD


def test_landing_law_holds_the_trip_pose_then_lowers_to_the_crouch_inside_the_soft_limits():
    s, t_trip = tripped_landing([0.3, -0.6])
    margin = s.config.soft_limit_margin
    crouch = (0.6, -2.8 + margin)                  # the knee's crouch clipped inside the soft zone
    for dt, expected in [(0.0, (0.3, -0.6)), (0.2, (0.3, -0.6)),              # hold
                         (0.7, tuple(0.5 * (a + b) for a, b in zip((0.3, -0.6), crouch))),
                         (1.2, crouch), (5.0, crouch)]:                        # lowered, resting
        for j in range(2):
            assert s.landing_reference(j, t_trip + dt) == pytest.approx(expected[j], abs=1e-12)
    # the law: tau = kp (r - q) - kd v, clamped, at the reference zero torque
    t = t_trip + 5.0
    out = s.setpoints(t, [0.6, -2.5], [0.1, 0.0])
    assert out.setpoints[0].torque == pytest.approx(-15.0 * 0.1)
    assert out.setpoints[1].torque == pytest.approx(300.0 * (crouch[1] + 2.5))
    assert [sp.torque for sp in out.setpoints] == [law[1] for law in s.safe_law(t, [0.6, -2.5],
                                                                                [0.1, 0.0])]


def test_landing_law_never_aims_beyond_the_soft_limits_and_is_clamped():
    # tripped with the knee already past its soft limit: the reference is inside the soft zone,
    # so the law pulls the joint out of it; far from the reference the clamp holds
    s, t_trip = tripped_landing([1.85, -2.75])
    margin = s.config.soft_limit_margin
    assert s.landing_reference(0, t_trip) == pytest.approx(1.9 - margin)
    assert s.landing_reference(1, t_trip) == pytest.approx(-2.8 + margin)
    out = s.setpoints(t_trip + PERIOD, [1.85, -2.75], [0.0, 0.0])
    assert out.setpoints[0].torque < 0.0 and out.setpoints[1].torque > 0.0
    out = s.setpoints(t_trip + 2 * PERIOD, [-1.0, 2.0], [0.0, 0.0])
    assert [abs(sp.torque) for sp in out.setpoints] == [100.0, 100.0]


def test_commands_returning_end_the_landing_law():
    s, t_trip = tripped_landing([0.3, -0.6])
    s.command(t_trip + 0.5, [1.0, 2.0])
    out = s.setpoints(t_trip + 0.5, [0.3, -0.6], [0.0, 0.0])
    assert not out.watchdog and [sp.torque for sp in out.setpoints] == [1.0, 2.0]
