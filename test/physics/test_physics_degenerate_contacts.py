# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
Contacts whose 3x3 Delassus block is singular: solved, never a singular-matrix crash.

A support point that cannot move along some direction (the upper arm of a fixed-base arm, any link
next to the root, a wrist whose axes align) has a rank-deficient block G = W M^-1 W^T: its stick
impulses form a line or a plane. The contact sticks with the least-norm impulse of that set inside
the Coulomb cone, else slides (docs/physics.md "Degenerate contacts"); the compiled NCP kernel does
the same (kernels/contact_3d.py). UR5 (example-robot-data) falling under zero torque died at
t = 0.53 s with LinAlgError (Singular matrix) before.
"""
import math

from dodo_sim.physics import contact_solve
from dodo_sim.physics import solver as ncp
from dodo_sim.physics.kernels import contact_3d, ncp_general
import numpy as np
import pytest


def local_residual(g, b, lam, mu):
    return ncp.residual(g, b, lam, [ncp.Block(0, 3, mu)])


def in_cone(lam, mu, slack=1e-9):
    return lam[0] >= 0.0 and math.hypot(lam[1], lam[2]) <= mu * lam[0] * (1.0 + slack)


def test_a_contact_that_cannot_move_sideways_sticks_with_no_force_along_that_side():
    """G's last row is exactly zero (the point cannot move along t2): np.linalg.solve raised."""
    g = np.array([[2.0, 0.5, 0.0], [0.5, 1.0, 0.0], [0.0, 0.0, 0.0]])
    b = np.array([-1.0, 0.2, 0.0])
    lam, ok = contact_solve.solve_contact_3d(g, b, 1.0)
    expected = np.linalg.solve(g[:2, :2], -b[:2])
    assert ok and abs(expected[1]) < expected[0]         # inside the cone: it sticks
    np.testing.assert_allclose(lam, [expected[0], expected[1], 0.0], rtol=0, atol=1e-14)
    assert local_residual(g, b, lam, 1.0) < 1e-14
    lam, ok = contact_solve.solve_contact_3d(g, b, 0.8)  # outside: it slides on the cone
    assert ok and local_residual(g, b, lam, 0.8) < 1e-14
    assert lam[2] == 0.0 and abs(lam[1]) == pytest.approx(0.8 * lam[0], rel=1e-12)


def random_singular_block(rng, rank):
    """G of a point that moves in ``rank`` directions, and a pressing b in its range."""
    while True:
        a = rng.normal(size=(3, rank))
        g = a @ a.T
        b = -g @ rng.normal(size=3)
        if b[0] < 0.0:
            return g, b


@pytest.mark.parametrize('rank', [1, 2])
def test_a_rank_deficient_block_is_solved_exactly(rank):
    """
    Each solution meets every contact condition to rounding; a stick is the least-norm one.

    The least norm of the stick solutions in the cone: the pseudo-inverse one when it lies in the
    cone, else a point of the cone's surface, no farther than any other stick solution found by
    sampling the solution set.
    """
    rng = np.random.default_rng(rank)
    sticks = slides = 0
    for _ in range(300):
        g, b = random_singular_block(rng, rank)
        mu = float(rng.uniform(0.1, 2.0))
        lam, ok = contact_solve.solve_contact_3d(g, b, mu)
        scale = np.abs(b).max()
        assert ok and in_cone(lam, mu)
        assert local_residual(g, b, lam, mu) < 1e-9 * scale
        u = g @ lam + b
        if np.abs(u).max() > 1e-9 * scale:
            slides += 1
            continue
        sticks += 1
        pinv = -np.linalg.pinv(g) @ b
        if in_cone(pinv, mu, 0.0):
            np.testing.assert_allclose(lam, pinv, rtol=0, atol=1e-9 * np.abs(pinv).max())
            continue
        null = np.linalg.eigh(g)[1][:, :3 - rank]
        others = pinv + rng.normal(size=(2000, 3 - rank)) @ null.T * 3.0 * np.abs(lam).max()
        inside = [x for x in others if in_cone(x, mu, 0.0)]
        assert all(np.linalg.norm(x) >= np.linalg.norm(lam) * (1.0 - 1e-9) for x in inside)
    # a point moving along one line is always stopped by a push inside the cone (its normal
    # component alone); a point moving in a plane may slide
    assert sticks > 50 and (slides == 0 if rank == 1 else slides > 20)


def singular_problem(rng):
    """Return (G, b, blocks): 2-4 contact blocks of a robot whose first point has rank 2."""
    n_blocks = int(rng.integers(2, 5))
    nv = int(rng.integers(3, 3 * n_blocks + 1))
    w = rng.normal(size=(3 * n_blocks, nv))
    w[:3] = np.outer(rng.normal(size=3), rng.normal(size=nv)) + np.outer(
        rng.normal(size=3), rng.normal(size=nv))
    blocks = [ncp.Block(3 * k, 3, float(rng.uniform(0.2, 1.2))) for k in range(n_blocks)]
    return w @ w.T, w @ rng.normal(size=nv), blocks      # b = W v_free, M = I


@pytest.mark.skipif(ncp_general.njit is None, reason='numba is not installed')
def test_the_compiled_solve_equals_the_python_solve_on_singular_blocks():
    rng = np.random.default_rng(11)
    singular = converged = same = 0
    for _ in range(200):
        G, b, blocks = singular_problem(rng)
        singular += contact_solve.singular_contact_3d(G[:3, :3])
        out = ncp_general.solve_general(G, b, blocks, 1e-10, 100, False, 1.0)
        assert out is not None
        python = ncp._solve_general_python(G, b, blocks)
        kernel = ncp.Solution(*out)
        assert kernel.converged == python.converged
        if not python.converged:   # compared when solved (13 of 200 random ones are not)
            continue
        converged += 1
        # the same motion: impulses that differ only along G's null directions (redundant
        # contacts share a load differently; the polish of a nearly singular mode set amplifies
        # rounding there) move the robot the same way
        scale = 1.0 + np.abs(python.lam).max()
        np.testing.assert_allclose(G @ kernel.lam, G @ python.lam, rtol=0,
                                   atol=1e-9 * np.abs(G).max() * scale)
        same += bool(np.abs(kernel.lam - python.lam).max() <= 1e-9 * scale)
    assert singular > 150 and converged > 180 and same > 175
    for rank in (1, 2):
        for _ in range(100):
            g, b = random_singular_block(rng, rank)
            out = np.empty(3)
            assert contact_3d.solve_contact_3d(g, b, 0.5, out)
            np.testing.assert_allclose(out, contact_solve.solve_contact_3d(g, b, 0.5)[0],
                                       rtol=0, atol=1e-12 * np.abs(out).max())


def test_a_singular_small_active_set_system_takes_least_squares():
    """
    Both bounds of a joint with lower = upper: rows +e and -e, a singular 2x2 KKT system.

    The double pendulum of example-robot-data writes an unspecified limit so; the event
    integrator's closed-form 2x2 solve divided by zero (ZeroDivisionError: a divergence).
    """
    from dodo_sim.physics.event import _small_solve
    x = _small_solve(np.array([[2.0, -2.0], [-2.0, 2.0]]), np.array([1.0, -1.0]))
    np.testing.assert_allclose(x, [0.25, -0.25], rtol=0, atol=1e-15)
    np.testing.assert_allclose(_small_solve(np.zeros((1, 1)), np.zeros(1)), [0.0])


def test_a_non_finite_system_never_reaches_lapack():
    """LAPACK printed 'DLASCL parameter number 4 had an illegal value' and returned garbage."""
    from dodo_sim.physics.event import _small_solve
    with pytest.raises(FloatingPointError, match='non-finite'):
        _small_solve(np.array([[1.0, 0.0, 0.0], [0.0, np.nan, 0.0], [0.0, 0.0, 1.0]]),
                     np.ones(3))
