# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
The compiled block NCP iteration (dodo_sim/physics/kernels/ncp_general.py) against the Python one.

Same solution to 1e-12, same iteration count and convergence flag as
``solver._solve_general_python`` on random well-posed problems with 3-D contacts, and the same
Solo-12 trajectories (docs/physics.md, "Speed").
"""
from dodo_sim.physics import contact_solve
from dodo_sim.physics import solver as ncp
from dodo_sim.physics.kernels import correction, ncp_general
from dodo_sim.simulator import SimConfig, Simulator
import numpy as np
import pytest

pytest.importorskip('numba')


def random_problem(rng, with_directions):
    """
    Return (G, b, blocks): 2-5 blocks of size 1, 2 or 3, G symmetric positive definite.

    ``with_directions``: some contact blocks slide in a fixed direction (the event integrator's
    blocks) instead of having a Coulomb cone.
    """
    blocks, start = [], 0
    for _ in range(int(rng.integers(2, 6))):
        size = int(rng.integers(1, 4))
        mu = float(rng.uniform(0.0, 1.5)) if size > 1 else 0.0
        direction = None
        if size > 1 and with_directions and rng.random() < 0.3:
            d = rng.normal(size=size - 1)
            direction = tuple(d / np.linalg.norm(d))
        blocks.append(ncp.Block(start, size, mu, direction))
        start += size
    a = rng.normal(size=(start, start + 2))
    return a @ a.T + 0.05 * np.eye(start), rng.normal(size=start), blocks


def assert_same(kernel, python):
    assert (kernel.iterations, kernel.converged) == (python.iterations, python.converged)
    scale = 1.0 + np.abs(python.lam).max()
    np.testing.assert_allclose(kernel.lam, python.lam, rtol=0, atol=1e-12 * scale)
    assert kernel.residual == pytest.approx(python.residual, rel=1e-6, abs=1e-13)


@pytest.mark.parametrize('method', ['gauss_seidel', 'jacobi'])
@pytest.mark.parametrize('with_directions', [False, True])
def test_kernel_equals_the_python_iteration_on_random_3d_problems(method, with_directions,
                                                                  monkeypatch):
    """
    Random G: anisotropic 3-D blocks, where many slip directions need the bracketed search.

    The kernel takes every problem, and the Python path used its Brent search on some of them
    (so the kernel's port of it is exercised).
    """
    rng = np.random.default_rng(1 + with_directions)
    bracketed = []
    original = contact_solve._slip_3d_bracketed
    monkeypatch.setattr(contact_solve, '_slip_3d_bracketed',
                        lambda *args: bracketed.append(1) or original(*args))
    for _ in range(150):
        G, b, blocks = random_problem(rng, with_directions)
        out = ncp_general.solve_general(G, b, blocks, 1e-10, 100, method == 'jacobi', 1.0)
        assert out is not None
        assert_same(ncp.Solution(*out),
                    ncp._solve_general_python(G, b, blocks, method=method))
    assert len(bracketed) > 10


def test_kernel_equals_the_python_iteration_with_relaxation():
    rng = np.random.default_rng(7)
    for _ in range(80):
        G, b, blocks = random_problem(rng, False)
        relaxation = float(rng.uniform(0.5, 1.5))
        out = ncp_general.solve_general(G, b, blocks, 1e-10, 100, False, relaxation)
        if out is None:
            continue
        assert_same(ncp.Solution(*out),
                    ncp._solve_general_python(G, b, blocks, relaxation=relaxation))


def test_a_singular_contact_block_is_solved_alike_by_both_paths():
    """
    A point that moves along its normal only: both paths push it out, neither raises.

    (The Python path raised LinAlgError on this block before; docs/physics.md "Degenerate
    contacts".)
    """
    G = np.zeros((4, 4))
    G[0, 0] = G[3, 3] = 1.0
    b = np.array([-1.0, 0.0, 0.0, -1.0])
    blocks = [ncp.Block(0, 3, 0.5), ncp.Block(3, 1)]
    kernel = ncp.Solution(*ncp_general.solve_general(G, b, blocks, 1e-10, 100, False, 1.0))
    assert_same(kernel, ncp._solve_general_python(G, b, blocks))
    np.testing.assert_allclose(kernel.lam, [1.0, 0.0, 0.0, 1.0], rtol=0, atol=1e-15)


def solo12_run(integrator, steps, use_kernel, monkeypatch):
    import public_robots as pr
    if pr.robots_dir() is None:
        pytest.skip('example-robot-data is not installed')
    if not use_kernel:
        monkeypatch.setattr(ncp_general, 'solve_general', lambda *args: None)
    sim = Simulator(pr.solo12(), SimConfig(integrator=integrator, contact_frames=pr.SOLO_FEET,
                                           friction=0.3))
    q = pr.standing_pose(sim, pr.SOLO_STAND_LEGS, gap_m=2e-3)
    sim.reset(q, np.concatenate([(0.3, 0.1, 0.0, 0.0, 0.0, 0.5), np.zeros(12)]))
    states = []
    for _ in range(steps):
        s = sim.state
        states.append(sim.step(2.0 * (pr.SOLO_STAND_LEGS - s.q[7:]) - 0.05 * s.v[6:]))
    monkeypatch.undo()
    return states


@pytest.mark.parametrize('integrator', ['timestepping', 'event'])
def test_solo12_trajectory_is_the_same_with_the_kernel(integrator, monkeypatch):
    """
    Dropped 2 mm, sliding and turning (mu 0.3) onto its four feet: the same states.

    Measured coverage: time-stepping solves 130 multi-block problems with every foot sliding
    (3-D slip solves, several sweeps each); the event integrator 9, at its events.
    """
    steps = 150
    kernel = solo12_run(integrator, steps, True, monkeypatch)
    python = solo12_run(integrator, steps, False, monkeypatch)
    assert sum(any(s.in_contacts) for s in kernel) > steps // 2
    for a, b in zip(kernel, python):
        assert a.in_contacts == b.in_contacts
        np.testing.assert_allclose(a.q, b.q, rtol=0, atol=1e-12)
        np.testing.assert_allclose(a.v, b.v, rtol=0, atol=1e-10)
        np.testing.assert_allclose(a.contact_forces, b.contact_forces, rtol=0, atol=1e-7)


def test_position_correction_equals_the_numpy_formula():
    """M^-1 W_C^T G_CC^-1 targets on random SPD G (timestepping._correct_positions)."""
    rng = np.random.default_rng(5)
    for _ in range(200):
        m, nv = int(rng.integers(2, 13)), int(rng.integers(2, 19))
        a = rng.normal(size=(m, m + 2))
        G, minv_wt = a @ a.T + 0.05 * np.eye(m), rng.normal(size=(nv, m))
        rows = sorted(rng.choice(m, size=int(rng.integers(2, m + 1)), replace=False).tolist())
        targets = list(rng.normal(scale=1e-4, size=len(rows)))
        expected = minv_wt[:, rows] @ np.linalg.solve(G[np.ix_(rows, rows)], targets)
        np.testing.assert_allclose(correction.position_correction(G, minv_wt, rows, targets),
                                   expected, rtol=0, atol=1e-12 * np.abs(expected).max())


def test_position_correction_hands_redundant_constraints_back():
    """A singular G_CC (two identical rows): None, so the caller takes least squares."""
    G = np.array([[1.0, 1.0, 0.0], [1.0, 1.0, 0.0], [0.0, 0.0, 1.0]])
    assert correction.position_correction(G, np.eye(3), [0, 1], [1e-4, 1e-4]) is None
