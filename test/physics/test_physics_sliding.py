# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
The sliding foot: the contact solve while the hopper's foot slides.

It also checks the two integrators' agreement on contact changes (docs/physics.md, "What was wrong
with the sliding foot").

The open-loop torque sequence (deterministic, no feedback): the hopper is dropped with its foot
0.15 m above flat ground (mu = 0.8, e = 0) in the posture hip 0.3, knee -0.6 rad; zero torque in
flight keeps that posture (uniform gravity); from t = 0.17 s, just before touchdown at 0.175 s,
both joints get tau = 120 N*m * sin(pi (t - 0.17 s) / 0.25 s) until t = 0.42 s, then 0. The foot
lands sliding, sticks at 0.191 s, starts sliding again at 0.277 s (the hip torque drives it
backwards at up to 5 m/s) and lifts off at 0.374 s.
"""
import math

from conftest import URDF_XACRO
from dodo_sim.model import Kinematics
from dodo_sim.physics import solver as ncp
from dodo_sim.physics.robot import load_robot
from dodo_sim.simulator import SimConfig, Simulator
import numpy as np
import pinocchio as pin
import pytest

MU = 0.8
SLIDE_END_S = 0.45


def torque_sequence(t):
    if 0.17 <= t < 0.42:
        s = math.sin(math.pi * (t - 0.17) / 0.25)
        return [120.0 * s, 120.0 * s]
    return [0.0, 0.0]


def previous_scalar_prox(g, b_n, b_t, mu, max_iterations=100, tolerance=1e-12):
    """
    Return the solver this engine had before: one scalar prox step per row (Gauss-Seidel).

    R = 1 / G_ii.

    Started from the sticking solution projected on the cone.
    """
    (g_nn, g_nt), (g_tn, g_tt) = g
    det = g_nn * g_tt - g_nt * g_tn
    lam_n = max((-b_n * g_tt + g_nt * b_t) / det, 0.0)
    lam_t = min(max((-b_t * g_nn + g_tn * b_n) / det, -mu * lam_n), mu * lam_n)
    for _ in range(max_iterations):
        new_n = max(lam_n - (b_n + g_nn * lam_n + g_nt * lam_t) / g_nn, 0.0)
        new_t = lam_t - (b_t + g_tn * new_n + g_tt * lam_t) / g_tt
        new_t = min(max(new_t, -mu * new_n), mu * new_n)
        change = abs(new_n - lam_n) + abs(new_t - lam_t)
        lam_n, lam_t = new_n, new_t
        if change <= tolerance * (1.0 + lam_n):
            return lam_n, lam_t, True
    return lam_n, lam_t, False


@pytest.fixture(scope='module')
def sliding_problem():
    """
    Delassus matrix of the hopper foot, leg nearly straight (hip 0, knee -0.3 rad).

    There mu |G_NT| / G_NN = 1.44. A free velocity that makes the foot slide backwards comes with
    it.
    """
    robot = load_robot(URDF_XACRO)
    model, data = robot.model, robot.create_data()
    q = np.array([0.0, 1.0, 0.0, -0.3])
    minv = pin.computeMinverse(model, data, q)
    minv = np.triu(minv) + np.triu(minv, 1).T
    jac = pin.computeFrameJacobian(model, data, q, robot.foot_frame_id,
                                   pin.LOCAL_WORLD_ALIGNED)[(2, 0), :]
    g = jac @ minv @ jac.T
    return g, np.array((-0.01, -1.0))


def test_sliding_problem_is_the_case_of_the_report(sliding_problem):
    g, _ = sliding_problem
    assert MU * abs(g[0, 1]) / g[0, 0] == pytest.approx(1.44, abs=0.01)


def test_previous_scalar_prox_does_not_converge_while_sliding(sliding_problem):
    g, (b_n, b_t) = sliding_problem
    lam_n, lam_t, converged = previous_scalar_prox(g, b_n, b_t, MU)
    u_n = b_n + g[0, 0] * lam_n + g[0, 1] * lam_t
    assert not converged
    assert u_n < -1e-3  # the foot is driven into the ground


def test_block_solve_is_exact_while_sliding(sliding_problem):
    g, b = sliding_problem
    sol = ncp.solve(g, b, [ncp.Block(0, 2, MU)])
    u = g @ sol.lam + b
    assert sol.converged and sol.iterations == 1
    assert sol.residual < 1e-15
    assert abs(u[0]) < 1e-15 and sol.lam[0] > 0.0               # closed, pushing
    assert sol.lam[1] == pytest.approx(MU * sol.lam[0], rel=1e-14)  # on the cone ...
    assert u[1] < 0.0                                          # ... opposing the slide


def test_2d_enumeration_satisfies_every_mode_condition():
    """Random planar problems: the exact solve always meets the complementarity conditions."""
    rng = np.random.default_rng(3)
    for _ in range(500):
        a = rng.normal(size=(2, 2))
        g = a @ a.T + 0.05 * np.eye(2)
        b = rng.normal(size=2)
        mu = rng.uniform(0.0, 2.0)
        sol = ncp.solve(g, b, [ncp.Block(0, 2, mu)])
        assert sol.residual < 1e-12, (g, b, mu)


def run_slide(integrator, dt, radius=0.0):
    """
    Return the open-loop sequence; ``radius``: the foot is a sphere of that radius.

    The slide flag then uses the velocity of its lowest point.
    """
    kin = Kinematics(load_robot(URDF_XACRO))
    q0 = np.array([0.0, 1.0, 0.3, -0.6])
    q0[1] += 0.15 + radius - kin.foot_position(q0)[1]
    sim = Simulator(URDF_XACRO, SimConfig(integrator=integrator, dt=dt, control_period=1e-3,
                                          friction=MU, contact_radii=(radius,),
                                          initial_q=tuple(q0)))
    state = sim.state
    contact_changes, slide_changes = [], []
    was_contact = was_sliding = False
    min_normal_velocity = math.inf
    integrator_step = sim.integrator.step

    def step(q, v, force, h):
        nonlocal min_normal_velocity
        out = integrator_step(q, v, force, h)
        min_normal_velocity = min(min_normal_velocity, out[2].min_normal_velocity)
        return out

    sim.integrator.step = step
    for _ in range(int(round(SLIDE_END_S / 1e-3))):
        state = sim.step(torque_sequence(state.t))
        contact = bool(state.in_contact)
        sliding = contact and abs(bottom_speed(sim, state, radius)) > 1e-3
        if contact != was_contact:
            contact_changes.append(state.t)
        if sliding != was_sliding:
            slide_changes.append(state.t)
        was_contact, was_sliding = contact, sliding
    return {'contact': contact_changes, 'slide': slide_changes, 'state': state,
            'min_normal_velocity': min_normal_velocity}


def bottom_speed(sim, state, radius):
    """Velocity along x of the lowest point of the foot sphere (the foot point for r = 0)."""
    model, data = sim.robot.model, sim.robot.create_data()
    pin.computeJointJacobians(model, data, state.q)
    pin.updateFramePlacements(model, data)
    jac = pin.getFrameJacobian(model, data, sim.robot.foot_frame_id, pin.LOCAL_WORLD_ALIGNED)
    return float((jac[0] - radius * jac[4]) @ state.v)


@pytest.fixture(scope='module')
def slides():
    return {(integrator, dt): run_slide(integrator, dt)
            for integrator in ('timestepping', 'event') for dt in (1e-4,)}


def test_slide_has_touchdown_stick_slip_and_liftoff(slides):
    run = slides[('event', 1e-4)]
    assert len(run['contact']) == 2          # touchdown, liftoff
    assert len(run['slide']) == 4            # slides at touchdown, sticks, slides, lifts off


@pytest.mark.parametrize('key', ['contact', 'slide'])
def test_integrators_agree_on_contact_changes_within_two_control_periods(slides, key):
    a, b = slides[('timestepping', 1e-4)][key], slides[('event', 1e-4)][key]
    assert len(a) == len(b)
    np.testing.assert_allclose(a, b, atol=2e-3 + 1e-9)


def test_timestepping_post_impulse_normal_velocity_is_not_negative(slides):
    assert slides[('timestepping', 1e-4)]['min_normal_velocity'] >= -1e-9


@pytest.mark.parametrize('integrator', ['timestepping', 'event'])
def test_no_step_ends_with_an_unconverged_solve(slides, integrator):
    state = slides[(integrator, 1e-4)]['state']
    assert state.unconverged_steps == 0


def test_integrators_agree_with_a_rolling_sphere_foot():
    """
    A 1 mm sphere at the foot (the contact point rolls with the shank).

    Both integrators give the same contact and slide changes (a sticking sphere rolls: only its
    contact point's velocity is held at zero, not the sphere's centre).
    """
    runs = [run_slide(integrator, 1e-4, radius=1e-3) for integrator in ('timestepping', 'event')]
    for key in ('contact', 'slide'):
        assert len(runs[0][key]) == len(runs[1][key]) == (2 if key == 'contact' else 4)
        np.testing.assert_allclose(runs[0][key], runs[1][key], atol=2e-3 + 1e-9)


@pytest.mark.slow
def test_integrators_converge_to_each_other_as_dt_shrinks(slides):
    """The final positions of both integrators approach each other as dt shrinks."""
    fine = {i: run_slide(i, 1e-5)['state'].q for i in ('timestepping', 'event')}
    coarse = {i: slides[(i, 1e-4)]['state'].q for i in ('timestepping', 'event')}
    gap_coarse = np.abs(coarse['timestepping'] - coarse['event']).max()
    gap_fine = np.abs(fine['timestepping'] - fine['event']).max()
    assert gap_fine < 0.3 * gap_coarse
