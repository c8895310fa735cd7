# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
The compiled time-stepping step against the generic step.

The compiled step is dodo_sim/physics/fast.py; it is also checked against pinocchio. They give the
same dynamics, the same step to rounding and the same trajectories (docs/physics.md, "Speed").
"""
from conftest import URDF_XACRO
from dodo_sim.paths import default_urdf_path
from dodo_sim.physics import fast
from dodo_sim.physics import solver as ncp
from dodo_sim.physics.contact import ContactParams
from dodo_sim.physics.timestepping import MoreauJeanIntegrator, TimeSteppingParams
from dodo_sim.simulator import SimConfig, Simulator
import numpy as np
from physics_models import horizontal_double_pendulum, rimless_wheel, two_foot_body
import pinocchio as pin
import pytest

pytest.importorskip('numba')

WALKER = default_urdf_path().parent / 'kneed_walker.urdf.xacro'
WALKER_FEET = ('left_foot', 'right_foot')


def lifted_default(model, frames, height_m=0.01):
    """
    Return the model's default configuration with its base z set for ``height_m``.

    The base z puts the lowest contact frame ``height_m`` above the ground (the Kneed Walker's URDF
    default has its feet 17 um under the ground, which reset() refuses).
    """
    from dodo_sim.physics.robot import load_robot
    robot = load_robot(model, contact_frames=frames)
    q = robot.default_q.copy()
    data = robot.create_data()
    pin.framesForwardKinematics(robot.model, data, q)
    q[1] += height_m - min(data.oMf[f].translation[2] for f in robot.contact_frame_ids)
    return tuple(q)


def integrators(sim, **contact):
    """Return the generic and the compiled integrator of one simulator's model and terrain."""
    params = ContactParams(**contact)
    generic = MoreauJeanIntegrator(sim.robot, sim.terrain, params,
                                   TimeSteppingParams(compiled=False))
    compiled = MoreauJeanIntegrator(sim.robot, sim.terrain, params, TimeSteppingParams())
    assert generic.packed is None and compiled.packed is not None
    return generic, compiled


@pytest.mark.parametrize('model, frames', [
    (URDF_XACRO, ('foot',)), (WALKER, WALKER_FEET),
    (rimless_wheel(), tuple(f'spoke{k}' for k in range(8)))])
def test_mass_matrix_and_bias_forces_equal_pinocchio(model, frames):
    sim = Simulator(model, SimConfig(contact_frames=frames,
                                     initial_q=lifted_default(model, frames)))
    packed = sim.integrator.packed
    model_, data = sim.robot.model, sim.robot.create_data()
    rng = np.random.default_rng(0)
    for _ in range(20):
        q = rng.normal(size=model_.nq)
        v = rng.normal(size=model_.nv) * 3.0
        mass, bias = fast.dynamics(packed, q, v)
        reference = pin.crba(model_, data, q)
        reference = np.triu(reference) + np.triu(reference, 1).T
        np.testing.assert_allclose(mass, reference, rtol=0, atol=1e-12)
        np.testing.assert_allclose(bias, pin.rnea(model_, data, q, v, np.zeros(model_.nv)),
                                   rtol=0, atol=1e-11)


def test_models_the_compiled_step_does_not_cover_use_the_generic_one():
    sim = Simulator(horizontal_double_pendulum(), SimConfig(contact_frames=()))
    assert sim.integrator.packed is None                  # not planar
    sim = Simulator(two_foot_body(), SimConfig(contact_frames=('left', 'right'),
                                               terrain='sinusoid', sine_amplitude_m=0.05,
                                               initial_q=(0.0, 1.0, 0.0)))
    assert sim.integrator.packed is None                  # not a plane


def random_contact_state(sim, rng, nominal):
    """
    Return a configuration near the nominal one close to the ground.

    Its lowest contact point is within [-0.1, 2] mm of the terrain (height above it); the
    velocities and generalised forces are random.
    """
    q = np.array(nominal, float)
    q[2:] += rng.normal(scale=0.3, size=len(q) - 2)
    points = sim.contact_positions(q)
    clearance = min(p[2] - sim.terrain.height(p[0]) for p in points)
    q[1] += rng.uniform(-1e-4, 2e-3) - clearance
    return q, rng.normal(size=len(q)), rng.normal(scale=50.0, size=len(q))


def terrain_config(terrain):
    return {'flat': {}, 'slope': {'terrain': 'slope', 'slope_deg': 12.0}}[terrain]


@pytest.mark.parametrize('terrain', ['flat', 'slope'])
@pytest.mark.parametrize('restitution', [0.0, 0.5])
@pytest.mark.parametrize('model, frames', [(URDF_XACRO, ('foot',)), (WALKER, WALKER_FEET)])
def test_compiled_step_equals_the_generic_step(model, frames, restitution, terrain):
    """
    Random states around touchdown.

    The states cover free motion, impacts, sticking, sliding, joint stops, one and two feet and
    unconverged solves. Both steps give the same q+, v+, impulses to 1e-12 (relative to their
    size), the same contact flags and solver iterations.
    """
    sim = Simulator(model, SimConfig(contact_frames=frames, contact_radii=(1e-3,) * len(frames),
                                     initial_q=lifted_default(model, frames, height_m=1.0),
                                     **terrain_config(terrain)))
    generic, compiled = integrators(sim, friction=0.8, restitution=restitution)
    nominal = sim.robot.default_q if model == WALKER else (0.0, 1.0, 0.3, -0.6)
    rng = np.random.default_rng(1)
    seen = set()
    for _ in range(300):
        q, v, force = random_contact_state(sim, rng, nominal)
        q1, v1, r1 = generic.step(q, v, force, 1e-3)
        q2, v2, r2 = compiled.step(q, v, force, 1e-3)
        scale = 1.0 + np.abs(v1).max()
        np.testing.assert_allclose(q2, q1, rtol=0, atol=1e-12 * scale)
        np.testing.assert_allclose(v2, v1, rtol=0, atol=1e-12 * scale)
        np.testing.assert_allclose(r2.contact_impulses, r1.contact_impulses, rtol=0,
                                   atol=1e-12 * (1.0 + np.abs(r1.contact_impulses).max()))
        assert (r2.in_contact, r2.iterations, r2.converged) == (
            r1.in_contact, r1.iterations, r1.converged)
        seen.add((any(r1.in_contact), r1.iterations))
    # free steps, contacts and (with two feet) multi-sweep solves were all exercised
    assert {contact for contact, _ in seen} == {False, True}
    assert max(iterations for _, iterations in seen) > (1 if len(frames) > 1 else 0)


def test_a_closed_loop_run_gives_the_same_trajectory():
    """
    0.6 s of the PD-held hopper dropped on the ground.

    The Simulator's compiled lane and the generic step stay within 1e-9 (rounding differences grow
    slowly through the contact).
    """
    runs = []
    for compiled in (True, False):
        sim = Simulator(URDF_XACRO, SimConfig(initial_q=(0.0, 1.1, 0.3, -0.6)))
        if not compiled:
            sim.integrator = MoreauJeanIntegrator(sim.robot, sim.terrain, ContactParams(),
                                                  TimeSteppingParams(compiled=False))
            sim._fast = None
        state = sim.reset()
        qs = []
        for _ in range(600):
            state = sim.step([300.0 * (0.3 - state.q[2]) - 20.0 * state.v[2],
                              300.0 * (-0.6 - state.q[3]) - 20.0 * state.v[3]])
            qs.append(state.q)
        runs.append((np.array(qs), state))
    (qa, sa), (qb, sb) = runs
    assert sa.in_contact and sb.in_contact
    np.testing.assert_allclose(qa, qb, rtol=0, atol=1e-9)
    np.testing.assert_allclose(sa.contact_forces, sb.contact_forces, rtol=0, atol=1e-6)
    np.testing.assert_allclose(sa.foot_positions, sb.foot_positions, rtol=0, atol=1e-9)


def test_planar_solver_equals_the_array_solver():
    """
    solver.solve's float path for planar blocks and its numpy path.

    They give the same solution to rounding and the same iteration count on random multi-block
    problems.
    """
    rng = np.random.default_rng(0)
    for _ in range(500):
        blocks, start = [], 0
        for _ in range(int(rng.integers(2, 5))):
            size = int(rng.integers(1, 3))
            direction = ((float(rng.choice([-1.0, 1.0])),)
                         if size == 2 and rng.random() < 0.2 else None)
            blocks.append(ncp.Block(start, size, rng.uniform(0.0, 1.5) if size == 2 else 0.0,
                                    direction))
            start += size
        a = rng.normal(size=(start, start + 2))
        G, b = a @ a.T + 0.05 * np.eye(start), rng.normal(size=start)
        for method in ('gauss_seidel', 'jacobi'):
            fast_path = ncp.solve(G, b, blocks, method=method)
            array_path = ncp._solve_general(G, b, blocks, method=method)
            assert (fast_path.iterations, fast_path.converged) == (
                array_path.iterations, array_path.converged)
            if array_path.converged:
                np.testing.assert_allclose(fast_path.lam, array_path.lam, rtol=0,
                                           atol=1e-12 * (1.0 + np.abs(array_path.lam).max()))


@pytest.mark.parametrize('terrain', ['flat', 'slope'])
@pytest.mark.parametrize('radius', [0.0, 1e-3])
@pytest.mark.parametrize('model, frames', [(URDF_XACRO, ('foot',)), (WALKER, WALKER_FEET)])
def test_compiled_event_evaluation_equals_the_generic_one(model, frames, radius, terrain):
    """
    The event-driven integrator's dynamics in random modes.

    Each contact is free, sticks with an anchor or slips either way; at most one limit bound is
    active. Both evaluations give the same accelerations, contact forces and event values to 1e-12
    (relative to their size).
    """
    from dodo_sim.physics import event
    # the feet in random modes ('feet': random stick/slip on a dozen link points as well makes
    # the KKT system too ill-conditioned for a 1e-12 comparison)
    sim = Simulator(model, SimConfig(integrator='event', contact_frames=frames,
                                     contact_radii=(radius,) * len(frames), collisions='feet',
                                     initial_q=lifted_default(model, frames, height_m=1.0),
                                     **terrain_config(terrain)))
    integrator = sim.integrator
    assert integrator._kernel is not None
    nominal = sim.robot.default_q if model == WALKER else (0.0, 1.0, 0.3, -0.6)
    rng = np.random.default_rng(2)
    for _ in range(200):
        q, v, force = random_contact_state(sim, rng, nominal)
        integrator._force = force
        integrator.mode = [rng.choice([event.FREE, event.STICK, event.SLIP]) for _ in frames]
        integrator.slip_dir = [np.array([rng.choice([-1.0, 1.0])]) for _ in frames]
        integrator.anchor = [np.array([rng.normal(scale=0.01)]) if m == event.STICK else None
                             for m in integrator.mode]
        integrator._shift = list(rng.uniform(0.0, 1e-9, size=len(integrator._shift)))
        integrator.limit_active = [False] * len(integrator.limit_active)
        if rng.random() < 0.5:
            integrator.limit_active[int(rng.integers(len(integrator.limit_active)))] = True
        integrator._mode_arrays = None
        compiled, generic = integrator._evaluate(q, v), integrator._evaluate_generic(q, v)
        np.testing.assert_allclose(compiled.accel, generic.accel, rtol=0,
                                   atol=1e-12 * (1.0 + np.abs(generic.accel).max()))
        np.testing.assert_allclose(compiled.forces, generic.forces, rtol=0,
                                   atol=1e-12 * (1.0 + np.abs(generic.forces).max()))
        np.testing.assert_allclose(compiled.values, generic.values, rtol=0,
                                   atol=1e-12 * (1.0 + np.abs(generic.values).max()))
