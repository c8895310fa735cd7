# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""Physics invariants of both integrators on the hopper (docs/physics.md)."""
import math

from conftest import pd_hold
from dodo_sim.model import Kinematics
from dodo_sim.physics.contact import ContactParams
from dodo_sim.physics.event import impact_map
from dodo_sim.simulator import SimConfig, Simulator
import numpy as np
import pinocchio as pin
import pytest

INTEGRATORS = ('timestepping', 'event')
G = 9.81
STANCE_Q = np.array([0.0, 1.0, 0.3, -0.6])  # knee bent, foot under the hip
#: flat ground's contact basis in x-z: normal (0, 1), tangent (1, 0)
FLAT_NORMAL_TANGENT = np.array(((0.0, 1.0), (1.0, 0.0)))


def foot_on_ground(sim, q, clearance_m=0.0):
    """Return q shifted vertically so the foot is clearance_m above the terrain."""
    q = np.array(q, dtype=float)
    foot_x, foot_z = Kinematics(sim.leg).foot_position(q)
    q[1] += sim.terrain.height(foot_x) + clearance_m - foot_z
    return q


def drop(integrator, seconds=3.0, height_m=0.3, **config):
    """PD-held leg dropped with the foot height_m above flat ground; returns sim, states."""
    sim = Simulator_from(integrator, **config)
    q0 = foot_on_ground(sim, STANCE_Q, height_m)
    state = sim.reset(q0, np.zeros(4))
    states = []
    for _ in range(int(round(seconds / sim.config.control_period))):
        state = sim.step(pd_hold(state, q0))
        states.append(state)
    return sim, states


def Simulator_from(integrator, **config):
    from conftest import URDF_XACRO
    return Simulator(URDF_XACRO, SimConfig(integrator=integrator, **config))


DROP_SECONDS = 5.0  # the slowest mode (body rocking on the pinned foot) decays as exp(-0.8 t)


@pytest.fixture(scope='module')
def drops():
    return {integrator: drop(integrator, DROP_SECONDS) for integrator in INTEGRATORS}


@pytest.fixture(params=INTEGRATORS)
def dropped(request, drops):
    return request.param, *drops[request.param]


@pytest.mark.parametrize('integrator', INTEGRATORS)
def test_free_fall_is_a_parabola(integrator):
    sim = Simulator_from(integrator)
    q0 = np.array([0.2, 3.0, 0.4, -0.7])
    v0 = np.array([0.8, 1.5, 0.0, 0.0])
    sim.reset(q0, v0)
    for _ in range(500):
        state = sim.step([0.0, 0.0])
    t = state.t
    assert t == pytest.approx(0.5)
    # uniform gravity accelerates every body alike: the joints stay put, the base is a projectile
    np.testing.assert_allclose(state.q,
                               [0.2 + 0.8 * t, 3.0 + 1.5 * t - 0.5 * G * t * t, 0.4, -0.7],
                               atol=1e-9)
    np.testing.assert_allclose(state.v, [0.8, 1.5 - G * t, 0.0, 0.0], atol=1e-9)
    assert not state.in_contact
    np.testing.assert_array_equal(state.contact_force, [0.0, 0.0])


def test_drop_never_penetrates(dropped):
    """
    A drop never penetrates the ground by more than 1 um, with either integrator.

    Event-driven: impacts at the located touchdown (measured 1.2e-8 m, the drift control's
    residual). Time-stepping: the position correction closes the gap of every constraint that
    pushed, up to the linearisation error of that projection (measured 3.4e-7 m after the 2.4 m/s
    touchdown). The same bound for both, 1 um.
    """
    integrator, sim, states = dropped
    limit = 1e-6
    lowest = min(s.foot_position[1] for s in states)
    assert lowest >= -limit, f'{integrator}: foot sank to {lowest:.3g} m'
    assert any(s.in_contact for s in states)


def test_rest_normal_force_equals_weight(dropped):
    integrator, sim, states = dropped
    last = states[-1]
    weight = sim.leg.total_mass * G
    assert last.in_contact
    assert np.abs(last.v).max() < 0.01, 'the leg should be (nearly) at rest'
    assert last.contact_force[1] == pytest.approx(weight, rel=0.005)
    assert abs(last.contact_force[0]) < 0.005 * weight


def test_integrators_agree_on_drop_and_settle(drops):
    """
    Both settle the same PD-held leg to the same rest state.

    Justification of the tolerances: the foot sticks where it lands (same point for both: the drop
    is vertical), and the rest pose is the PD equilibrium under the weight, so only residual
    motion (|v| < 1 cm/s, i.e. < 1 mm of rocking) and the time-stepping scheme's O(dt) impact
    differences remain: 2 mm on positions, 2 mrad on angles, 0.5 % on the force.
    """
    (_, ts), (_, ev) = drops['timestepping'], drops['event']
    a, b = ts[-1], ev[-1]
    np.testing.assert_allclose(a.q[:2], b.q[:2], atol=2e-3)
    np.testing.assert_allclose(a.q[2:], b.q[2:], atol=2e-3)
    np.testing.assert_allclose(a.contact_force, b.contact_force, atol=0.005 * 12 * G)
    # the first control period with a ground force ends just after the analytic touchdown time
    touchdown = math.sqrt(2 * 0.3 / G)
    for states in (ts, ev):
        first = next(s.t for s in states if s.contact_force[1] > 0.0)
        assert 0.0 <= first - touchdown < 1e-3 + 1e-9


def test_event_impact_map_removes_foot_velocity_and_equals_ns_projection(urdf_path):
    sim = Simulator(urdf_path, SimConfig(integrator='event'))
    leg = sim.leg
    model, data = leg.model, leg.create_data()
    q = np.array([0.0, 0.95, 0.35, -0.7])
    v_minus = np.array([0.3, -2.0, 1.5, -0.5])
    mass = pin.crba(model, data, q).copy()
    mass = np.triu(mass) + np.triu(mass, 1).T
    minv = np.linalg.inv(mass)
    jac = pin.computeFrameJacobian(model, data, q, leg.foot_frame_id,
                                   pin.LOCAL_WORLD_ALIGNED)[(0, 2), :]
    # Hutter et al. 2010: Lambda_s = (J M^-1 J^T)^-1, N_s = I - M^-1 J^T Lambda_s J
    lambda_s = np.linalg.inv(jac @ minv @ jac.T)
    n_s = np.eye(4) - minv @ jac.T @ lambda_s @ jac
    w = FLAT_NORMAL_TANGENT @ jac   # rows n^T J (normal z), t^T J (tangent x)
    v_plus, lam_n, lam_t = impact_map(minv, w, v_minus, ContactParams(friction=10.0))
    np.testing.assert_allclose(jac @ v_plus, [0.0, 0.0], atol=1e-12)
    np.testing.assert_allclose(v_plus, n_s @ v_minus, atol=1e-12)
    assert lam_n > 0.0
    # kinetic energy can only be lost in a plastic impact
    assert v_plus @ mass @ v_plus < v_minus @ mass @ v_minus


def test_event_touchdown_through_the_simulator_zeroes_foot_velocity(urdf_path):
    sim = Simulator(urdf_path, SimConfig(integrator='event'))
    kin = Kinematics(sim.leg)
    q0 = foot_on_ground(sim, STANCE_Q, 0.002)
    state = sim.reset(q0, np.array([0.0, -2.0, 0.0, 0.0]))
    # a joint hold that already resists the knee collapsing the impact starts
    state = sim.step([-60.0, 60.0])
    assert 'touchdown' in state.events and state.in_contact
    foot_velocity = kin.foot_jacobian(state.q) @ state.v
    np.testing.assert_allclose(foot_velocity, [0.0, 0.0], atol=1e-9)


def test_sliding_impact_stays_in_the_friction_cone(urdf_path):
    sim = Simulator(urdf_path, SimConfig(integrator='event'))
    leg = sim.leg
    data = leg.create_data()
    q = np.array([0.0, 0.95, 0.35, -0.7])
    v_minus = np.array([3.0, -1.0, 0.0, 0.0])  # fast horizontal landing
    minv = pin.computeMinverse(leg.model, data, q).copy()
    minv = np.triu(minv) + np.triu(minv, 1).T
    jac = pin.computeFrameJacobian(leg.model, data, q, leg.foot_frame_id,
                                   pin.LOCAL_WORLD_ALIGNED)[(0, 2), :]
    w = FLAT_NORMAL_TANGENT @ jac   # rows n^T J (normal z), t^T J (tangent x)
    v_plus, lam_n, lam_t = impact_map(minv, w, v_minus, ContactParams(friction=0.2))
    assert lam_t == pytest.approx(-0.2 * lam_n)      # on the cone, opposing the slide
    assert (w @ v_plus)[0] == pytest.approx(0.0, abs=1e-12)
    assert (w @ v_plus)[1] > 0.0                     # still sliding forward


def slope_run(integrator, slope_deg, friction, seconds=1.0):
    sim = Simulator_from(integrator, terrain='slope', slope_deg=slope_deg, friction=friction)
    q0 = foot_on_ground(sim, STANCE_Q)
    state = sim.reset(q0, np.zeros(4))
    theta = math.radians(slope_deg)
    times, along = [], []
    for _ in range(int(seconds / sim.config.control_period)):
        # stiff joint hold: the leg is locked, so the robot slides like one rigid body
        state = sim.step(pd_hold(state, q0, kp=2000.0, kd=20.0))
        times.append(state.t)
        along.append(state.foot_position[0] * math.cos(theta)
                     + state.foot_position[1] * math.sin(theta))
    return np.array(times), np.array(along)


@pytest.mark.parametrize('integrator', INTEGRATORS)
def test_locked_leg_sticks_on_slope_when_friction_suffices(integrator):
    theta = math.radians(20.0)
    assert 0.5 > math.tan(theta)
    _, along = slope_run(integrator, 20.0, 0.5)
    assert np.abs(along - along[0]).max() < 1e-6


@pytest.mark.parametrize('integrator', INTEGRATORS)
def test_locked_leg_slides_with_coulomb_acceleration(integrator):
    theta, mu = math.radians(20.0), 0.2
    times, along = slope_run(integrator, 20.0, mu)
    late = times > 0.5  # after the joints have taken the load
    fit = np.polyfit(times[late], along[late], 2)
    acceleration = 2.0 * fit[0]
    expected = -G * (math.sin(theta) - mu * math.cos(theta))  # down the slope = -x direction
    assert acceleration == pytest.approx(expected, rel=0.02)


@pytest.mark.parametrize('integrator', INTEGRATORS)
def test_zero_torque_flight_conserves_energy(integrator):
    errors = []
    for dt in (1e-3, 5e-4):
        # the knee spins through its URDF stop (-2.8 rad) in 0.4 s: limits off, free flight only
        sim = Simulator_from(integrator, dt=dt, control_period=1e-3, joint_limits=False)
        sim.reset([0.0, 5.0, 0.3, -0.6], [0.5, 2.0, 4.0, -6.0])  # tumbling leg, far from ground
        e0 = sim.energy()
        worst = 0.0
        for _ in range(1000):
            sim.step([0.0, 0.0])
            worst = max(worst, abs(sim.energy() - e0))
        errors.append(worst / abs(e0))
    if integrator == 'event':  # RK4: fourth order, essentially exact at these steps
        assert errors[0] < 1e-8
    else:  # Moreau midpoint (h(q_M, v) at the step's start velocity): first order in dt
        assert errors[0] < 1e-4
        assert errors[0] / errors[1] > 1.6


@pytest.mark.parametrize('integrator', INTEGRATORS)
def test_push_in_flight_changes_momentum_by_the_impulse(integrator):
    sim = Simulator_from(integrator)
    sim.reset([0.0, 5.0, 0.3, -0.6], [0.0, 0.0, 0.0, 0.0])
    mass = sim.leg.total_mass
    sim.apply_impulse([6.0, 3.0])
    state = sim.step([0.0, 0.0])
    kin = Kinematics(sim.leg)
    com_velocity = kin.com_jacobian(state.q) @ state.v
    dt = sim.config.control_period
    # event-driven: exact; time-stepping: the step conserves momentum with the midpoint
    # jacobian, so m J_com(q+) v+ is off by O(dt |v|^2): 1e-3 N*s here (0.02 % of the push)
    tolerance = {'event': 1e-9, 'timestepping': 1e-3}[integrator]
    np.testing.assert_allclose(mass * com_velocity, [6.0, 3.0 - mass * G * dt], atol=tolerance)


def test_scheduled_push_fires_once_at_its_time(urdf_path):
    config = SimConfig(push_times=(0.01,), push_impulses_x=(12.0,), push_impulses_z=(0.0,))
    sim = Simulator(urdf_path, config)
    sim.reset([0.0, 5.0, 0.3, -0.6], np.zeros(4))
    kin = Kinematics(sim.leg)
    momentum_x = []
    for _ in range(20):
        state = sim.step([0.0, 0.0])
        momentum_x.append(sim.leg.total_mass * (kin.com_jacobian(state.q) @ state.v)[0])
    jumps = np.flatnonzero(np.abs(np.diff(momentum_x)) > 1e-3)
    assert jumps.tolist() == [9]  # the step that starts at t = 0.01 s
    assert momentum_x[-1] == pytest.approx(12.0, abs=1e-3)


@pytest.mark.parametrize('integrator', INTEGRATORS)
def test_restitution_one_bounces_back(integrator):
    sim = Simulator_from(integrator, restitution=1.0)
    q0 = np.array([0.0, 2.0, 0.0, 0.0])  # straight leg, foot at z = 1 m
    sim.reset(q0, np.zeros(4))
    peak_after = 0.0
    touched = False
    for _ in range(1200):
        state = sim.step([0.0, 0.0])
        touched = touched or state.in_contact or any(state.contact_force)
        if touched:
            peak_after = max(peak_after, state.foot_position[1])
    assert touched
    # a straight leg lands on its foot as one rigid body: elastic impact returns ~all of 1 m
    assert peak_after == pytest.approx(1.0, abs=0.01)


def test_jacobi_and_gauss_seidel_agree_at_rest():
    forces = []
    for solver, relaxation in (('gauss_seidel', 1.0), ('jacobi', 0.8)):
        _, states = drop('timestepping', seconds=1.5, solver=solver,
                         solver_relaxation=relaxation)
        forces.append(states[-1].contact_force)
    np.testing.assert_allclose(forces[0], forces[1], rtol=1e-3, atol=0.05)


def test_substeps_advance_one_control_period(urdf_path):
    sim = Simulator(urdf_path, SimConfig(dt=2.5e-4, control_period=1e-3))
    sim.reset()
    state = sim.step([0.0, 0.0])
    assert state.t == pytest.approx(1e-3)
    assert sim.config.substeps == 4


def test_runs_are_deterministic():
    _, first = drop('timestepping', seconds=0.5)
    _, second = drop('timestepping', seconds=0.5)
    assert all(np.array_equal(a.q, b.q) and np.array_equal(a.v, b.v)
               for a, b in zip(first, second))
