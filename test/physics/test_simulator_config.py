# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""Configuration checks, terrain shapes, motor model and bad input (docs/physics.md)."""
import math

from dodo_sim.physics.event import EventLimitExceeded
from dodo_sim.physics.motor import MotorModel
from dodo_sim.physics.terrain import make_terrain
from dodo_sim.simulator import SimConfig, SimulationDiverged, Simulator
import numpy as np
import pytest


@pytest.mark.parametrize('field, value, message', [
    ('integrator', 'rk45', 'integrator'),
    ('terrain', 'moon', 'terrain'),
    ('solver', 'newton', 'solver'),
    ('dt', 0.0, 'dt'),
    ('dt', float('nan'), 'dt'),
    ('control_period', -1e-3, 'control_period'),
    ('friction', -0.1, 'friction'),
    ('restitution', 1.5, 'restitution'),
    ('initial_q', (0.0, float('nan'), 0.3, 0.0), 'initial_q'),
    ('contact_radii', (0.01, 0.02), 'contact_radii'),
    ('contact_radii', (-0.01,), 'contact_radii'),
    ('contact_frames', ('foot', 'foot'), 'contact_frames'),
    ('actuated_joints', (), 'actuated_joints'),
    ('solver_relaxation', 2.5, 'solver_relaxation'),
    ('mode', 'fast', 'mode'),
    ('motor_time_constant', -0.01, 'motor_time_constant'),
    ('event_accumulation_speed', -1e-4, 'event_accumulation_speed'),
])
def test_bad_values_are_named(field, value, message):
    with pytest.raises(ValueError, match=message):
        SimConfig(**{field: value})


def test_control_period_must_be_integer_multiple_of_dt():
    with pytest.raises(ValueError, match='integer multiple'):
        SimConfig(dt=3e-4, control_period=1e-3)
    assert SimConfig(dt=2e-4, control_period=1e-3).substeps == 5


def test_push_schedule_lengths_must_match():
    with pytest.raises(ValueError, match='push_impulses'):
        SimConfig(push_times=(1.0, 2.0), push_impulses_x=(1.0,), push_impulses_z=(0.0, 0.0))


def test_terrain_shape_errors_are_named():
    with pytest.raises(ValueError, match='step_rises_m'):
        SimConfig(terrain='steps', step_edges_x_m=(1.0,), step_rises_m=())
    with pytest.raises(ValueError, match='sine_wavelength_m'):
        SimConfig(terrain='sinusoid', sine_wavelength_m=0.0)


def test_from_dict_rejects_unknown_keys():
    with pytest.raises(ValueError, match="unknown simulator parameter.*'frictoin'"):
        SimConfig.from_dict({'frictoin': 0.5})
    assert SimConfig.from_dict({'friction': 0.5, 'initial_q': [0, 1, 0, 0]}).initial_q == (
        0.0, 1.0, 0.0, 0.0)


def test_initial_state_sized_from_the_model(urdf_path):
    with pytest.raises(ValueError, match=r"initial_q has 3 values.*nq = 4.*'base_x'"):
        Simulator(urdf_path, SimConfig(initial_q=(0.0, 1.0, 0.3)))
    with pytest.raises(ValueError, match=r'initial_v has 2 values.*nv = 4'):
        Simulator(urdf_path, SimConfig(initial_v=(0.0, 1.0)))


def test_bad_commands_are_rejected(urdf_path):
    sim = Simulator(urdf_path)
    with pytest.raises(ValueError, match='tau'):
        sim.step([1.0, 2.0, 3.0])
    with pytest.raises(ValueError, match='tau'):
        sim.step([float('nan'), 0.0])
    with pytest.raises(ValueError, match='reset'):
        sim.reset([0.0, 1.0])


def test_divergence_stops_with_last_good_state(urdf_path):
    # joint limits off: the stops would catch the runaway joints
    sim = Simulator(urdf_path, SimConfig(max_speed=50.0, joint_limits=False))
    sim.reset([0.0, 5.0, 0.0, 0.0], np.zeros(4))
    good = sim.step([0.0, 0.0])
    with pytest.raises(SimulationDiverged, match='diverged') as info:
        for _ in range(10):
            good = sim.step([1e6, -1e6])
    assert info.value.last_good_state is good
    assert np.isfinite(info.value.last_good_state.q).all()


@pytest.mark.parametrize('integrator', ['event', 'timestepping'])
@pytest.mark.parametrize('failure', [np.linalg.LinAlgError('SVD did not converge'),
                                     FloatingPointError('non-finite state'),
                                     EventLimitExceeded('more than 50 contact events')])
def test_numerical_failure_inside_a_step_is_a_divergence(urdf_path, integrator, failure):
    """
    An integrator that fails numerically inside a step.

    A singular matrix, a non-finite state or the event guard ends the step in SimulationDiverged
    naming the control step and the failure, with the last good state, and the simulator goes on
    from that state.
    """
    # 'stop': the event guard is a divergence too (the default takes a time-stepping step)
    sim = Simulator(urdf_path, SimConfig(integrator=integrator, event_accumulation='stop'))
    sim.reset([0.0, 1.2, 0.3, -0.6], np.zeros(4))
    good = sim.step([0.0, 0.0])
    good = sim.step([0.0, 0.0])
    step = sim.integrator.step

    def failing(*args):
        raise failure
    sim.integrator.step = failing
    with pytest.raises(SimulationDiverged, match=rf'control step 3 .*{type(failure).__name__}') \
            as info:
        sim.step([0.0, 0.0])
    assert info.value.last_good_state is good
    assert info.value.__cause__ is failure
    sim.integrator.step = step
    after = sim.step([0.0, 0.0])
    assert after.t == pytest.approx(good.t + sim.config.control_period)
    reference = Simulator(urdf_path, SimConfig(integrator=integrator))
    reference.reset([0.0, 1.2, 0.3, -0.6], np.zeros(4))
    for _ in range(3):
        expected = reference.step([0.0, 0.0])
    assert np.array_equal(after.q, expected.q) and np.array_equal(after.v, expected.v)


def test_an_event_step_past_the_event_guard_is_taken_by_time_stepping(urdf_path):
    """
    The default event_accumulation='timestepping'.

    A physics step the event integrator gives up on (EventLimitExceeded) is the time-stepping
    integrator's step from the same state and force, counted, and the event integrator goes on
    from its result (its modes derived anew).
    """
    from dodo_sim.physics.timestepping import MoreauJeanIntegrator
    sim = Simulator(urdf_path, SimConfig(integrator='event'))
    start = sim.reset([0.0, 1.2, 0.3, -0.6], np.zeros(4))
    step = sim.integrator.step

    def gives_up(*args):
        raise EventLimitExceeded('more than 50 contact events')
    sim.integrator.step = gives_up
    fell_back = sim.step([0.0, 0.0])
    assert sim.accumulation_steps == 1
    time_stepping = sim._accumulation_integrator
    assert isinstance(time_stepping, MoreauJeanIntegrator)
    other = Simulator(urdf_path, SimConfig(integrator='timestepping'))
    other.integrator.reset(start.q, start.v)
    q, v, _ = other.integrator.step(start.q, start.v, np.zeros(4), sim.config.dt)
    assert np.array_equal(fell_back.q, q) and np.array_equal(fell_back.v, v)
    sim.integrator.step = step
    after = sim.step([0.0, 0.0])
    assert sim.accumulation_steps == 1 and after.t == pytest.approx(2 * sim.config.dt)
    assert sim.reset().t == 0.0 and sim.accumulation_steps == 0


def test_terrains_give_heights_and_unit_normals():
    flat = make_terrain('flat', height_m=0.1)
    assert flat.height(3.0) == 0.1 and flat.normal(3.0) == (0.0, 1.0)
    slope = make_terrain('slope', slope_deg=10.0)
    assert slope.height(2.0) == pytest.approx(2.0 * math.tan(math.radians(10.0)))
    nx, nz = slope.normal(0.0)
    assert (nx, nz) == pytest.approx((-math.sin(math.radians(10)), math.cos(math.radians(10))))
    steps = make_terrain('steps', step_edges_x_m=(1.0, 2.0), step_rises_m=(0.05, -0.02))
    assert [steps.height(x) for x in (0.5, 1.0, 1.5, 2.5)] == pytest.approx(
        [0.0, 0.05, 0.05, 0.03])
    sine = make_terrain('sinusoid', sine_amplitude_m=0.1, sine_wavelength_m=2.0)
    for x in np.linspace(0.0, 2.0, 9):
        nx, nz = sine.normal(x)
        assert math.hypot(nx, nz) == pytest.approx(1.0)
        # the normal is perpendicular to the surface tangent (1, h'(x))
        h = 1e-6
        slope_fd = (sine.height(x + h) - sine.height(x - h)) / (2 * h)
        assert nx + nz * slope_fd == pytest.approx(0.0, abs=1e-8)


def test_motor_saturates_and_lags():
    motor = MotorModel(np.array([10.0, 20.0]), time_constant_s=0.01)
    applied = [motor.advance(np.array([100.0, -100.0]), 1e-3).copy() for _ in range(10)]
    # after one time constant the first-order lag reaches 1 - 1/e of the saturated target
    np.testing.assert_allclose(applied[-1], np.array([10.0, -20.0]) * (1 - math.exp(-1.0)))
    ideal = MotorModel(None, 0.0)
    np.testing.assert_array_equal(ideal.advance(np.array([100.0, -100.0]), 1e-3), [100.0, -100.0])


def test_torque_saturation_uses_urdf_effort_limits(urdf_path):
    sim = Simulator(urdf_path, SimConfig(torque_saturation=True), xacro_args={'hip_effort': 5.0})
    sim.reset([0.0, 5.0, 0.0, 0.0], np.zeros(4))
    state = sim.step([50.0, 1.0])
    np.testing.assert_allclose(state.tau_applied, [5.0, 1.0])


def test_core_modules_import_no_rclpy():
    import subprocess
    import sys
    code = ('import sys, dodo_sim.simulator, dodo_sim.model, dodo_sim.physics.terrain; '
            'import importlib.util as u\n'
            'if u.find_spec("dodo_control.controller"): import dodo_control.controller\n'
            'assert "rclpy" not in sys.modules, "core imported rclpy"')
    subprocess.run([sys.executable, '-c', code], check=True)


# -- initial states under the terrain --------------------------------------------------------

def hopper_pose_with_foot_at(sim, foot_z_m):
    """
    Return the bent-leg hopper pose with its foot point at height ``foot_z_m``.

    Its base z is returned with it.
    """
    q = np.array([0.0, 1.0, 0.3, -0.6])
    q[1] += foot_z_m - sim.contact_positions(q)[0, 2]
    return q


@pytest.mark.parametrize('integrator', ['timestepping', 'event'])
def test_reset_refuses_a_foot_under_the_ground_and_says_how_far_to_raise(urdf_path, integrator):
    sim = Simulator(urdf_path, SimConfig(integrator=integrator))
    q = hopper_pose_with_foot_at(sim, -0.01)
    with pytest.raises(ValueError) as info:
        sim.reset(q, np.zeros(4))
    message = str(info.value)
    assert "contact frame 'foot' 0.01 m below the flat terrain" in message
    assert f'base_z >= {q[1] + 0.01:.6g} m' in message


def test_construction_refuses_an_initial_q_under_a_slope(urdf_path):
    """
    The depth is measured to the terrain under the contact, with the contact's sphere radius.

    Here the terrain is a 20 deg slope rising with x.
    """
    probe = Simulator(urdf_path, SimConfig())
    q = hopper_pose_with_foot_at(probe, 0.0)  # foot at x = 0, z = 0: on the slope's line
    q[0] = 0.1                                  # 0.1 m uphill: tan(20 deg) 0.1 m under it
    depth = (math.tan(math.radians(20.0)) * 0.1) * math.cos(math.radians(20.0)) + 0.005
    with pytest.raises(ValueError, match=rf"'foot' {depth:.6g} m below the slope terrain"):
        Simulator(urdf_path, SimConfig(initial_q=tuple(q), terrain='slope', slope_deg=20.0,
                                       contact_radii=(0.005,)))


@pytest.mark.parametrize('foot_z_m', [0.0, -0.9e-6])
def test_a_foot_resting_on_the_ground_is_accepted(urdf_path, foot_z_m):
    sim = Simulator(urdf_path, SimConfig())
    q = hopper_pose_with_foot_at(sim, foot_z_m)
    state = sim.reset(q, np.zeros(4))
    assert state.foot_position[1] == pytest.approx(foot_z_m, abs=1e-12)


@pytest.mark.parametrize('integrator', ['timestepping', 'event'])
def test_reset_refuses_a_joint_outside_its_limits_and_names_it(urdf_path, integrator):
    """A published arm at its URDF zero sat outside its limits and hit its stops at once."""
    sim = Simulator(urdf_path, SimConfig(integrator=integrator))
    q = hopper_pose_with_foot_at(sim, 0.1)
    q[3] = -3.0                                   # the knee's limits are +-2.8 rad
    with pytest.raises(ValueError, match=r"joint 'knee' at -3, outside its URDF limits "
                                         r'\[-2.8, 2.8\]'):
        sim.reset(q, np.zeros(4))
    Simulator(urdf_path, SimConfig(integrator=integrator, joint_limits=False)).reset(
        q, np.zeros(4))
    q[3] = 2.8 + 0.9e-6                           # on its stop up to rounding: accepted
    sim.reset(q, np.zeros(4))
