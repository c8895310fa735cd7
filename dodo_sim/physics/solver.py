# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
The nonlinear complementarity problem (NCP) of hard contact, solved block by block.

Both integrators reduce an instant of hard contact to one problem in the constraint "velocities"
(an impulse problem at velocity level, or a force problem at acceleration level)::

    u = G lambda + b,      G = W M^-1 W^T (Delassus operator),  b = W v_free (or W a_free + ...)

with one *block* of rows per constraint (Jean & Moreau's notation, see Acary & Brogliato 2008):

* a frictionless unilateral row (joint limit): 0 <= lambda ⟂ u >= 0;
* a point contact [normal; tangent(s)] with a Coulomb cone: 0 <= lambda_N ⟂ u_N >= 0 and either
  u_T = 0 with |lambda_T| <= mu lambda_N (stick) or lambda_T = -mu lambda_N u_T/|u_T| (slip);
* a point contact sliding in a known direction d (acceleration level, foot already sliding):
  lambda_T = -mu lambda_N d and 0 <= lambda_N ⟂ u_N >= 0.

Solution: non-smooth block Gauss-Seidel (Jean 1999, "The non-smooth contact dynamics method"):
each block is solved *exactly* given the others (:mod:`.contact_solve`; 2-D contact: enumeration
of separate / stick / slip±; 3-D: stick, else the sliding direction by root finding on the
angle), then, once the contact modes repeat, a "polish" solves the linear system of that mode
set exactly and keeps it if it satisfies every condition. The earlier solver updated each row
separately with a scalar step, which diverges while sliding when mu |G_NT| / G_NN > 1; an exact
block solve has no such limit. The residual is the natural-map residual of the NCP in velocity
units (m/s, rad/s): 0 means every condition holds exactly.
"""
from __future__ import annotations

import itertools
import math
from typing import NamedTuple, Sequence

import numpy as np

from .contact_solve import (residual_contact_2d, solve_contact_2d, solve_contact_3d,
                            solve_unilateral)
from .kernels import ncp_general

METHODS = ('gauss_seidel', 'jacobi')

#: a block whose normal multiplier is below this (N*s or N) counts as separated in the polish
_ZERO = 0.0
#: A contact impulse with |lambda_T| below mu lambda_N (1 - this) sticks: position correction
#: holds its tangential displacement at zero (an exact per-contact solve puts a sliding contact on
#: the cone to rounding). Shared by the generic and the compiled step.
STICK_MARGIN = 1e-9


class Block(NamedTuple):
    """
    Rows ``start:start+size`` of one constraint.

    size 1: frictionless unilateral row; size 2 / 3: point contact [normal, tangent(s)] with
    friction coefficient ``mu``; ``slip_dir`` (unit, size - 1 values) fixes the sliding direction
    instead of the Coulomb cone.
    """

    start: int
    size: int
    mu: float = 0.0
    slip_dir: tuple | None = None


class Solution(NamedTuple):
    lam: np.ndarray
    iterations: int
    residual: float
    converged: bool


# -- local (one-block) exact solves (contact_solve.py) -------------------------------------

def solve_block(g: np.ndarray, b: np.ndarray, block: Block) -> np.ndarray:
    """Exact solution of one block given its Delassus block g and free velocity b."""
    size = block.size
    if size == 1:
        return np.array((solve_unilateral(g[0, 0], b[0]),))
    if block.slip_dir is not None:
        d = np.asarray(block.slip_dir, float)
        col = g[:, 0] - block.mu * (g[:, 1:] @ d)
        den = col[0]
        lam_n = -b[0] / den if (b[0] < 0.0 and den > 0.0) else 0.0
        return np.concatenate(((lam_n,), -block.mu * lam_n * d))
    if size == 2:
        lam_n, lam_t, _ = solve_contact_2d(g[0, 0], g[0, 1], g[1, 0], g[1, 1], b[0], b[1],
                                           block.mu)
        return np.array((lam_n, lam_t))
    return solve_contact_3d(g, b, block.mu)[0]


# -- residual -------------------------------------------------------------------------------

def residual(G: np.ndarray, b: np.ndarray, lam: np.ndarray, blocks: Sequence[Block]) -> float:
    """Natural-map residual of the NCP, in velocity units (0: every condition holds)."""
    u = (G.dot(lam) + b).tolist()
    return _residual_lists(u, lam.tolist(), G.diagonal().tolist(), blocks)


def _residual_lists(u: list, lam: list, diag: list, blocks: Sequence[Block]) -> float:
    """:func:`residual` on Python floats: u = G lam + b, lam and diag(G) as lists."""
    worst = 0.0
    for blk in blocks:
        s = blk.start
        lam_n = lam[s]
        g_nn = diag[s]
        value = abs(min(lam_n * g_nn, u[s]))
        if value > worst:
            worst = value
        size = blk.size
        if size == 1:
            continue
        pressure = lam_n if lam_n > 0.0 else 0.0
        if blk.slip_dir is not None:
            # the tangential multiplier must be exactly -mu lambda_N d
            err = max(abs(lam[s + 1 + i] + blk.mu * pressure * float(blk.slip_dir[i]))
                      for i in range(size - 1)) * g_nn
            if err > worst:
                worst = err
            continue
        rho = 1.0 / max(max(diag[s + 1:s + size]), 1e-300)
        tangential = lam[s + 1:s + size]
        z = [t - rho * w for t, w in zip(tangential, u[s + 1:s + size])]
        radius = blk.mu * pressure
        norm = math.sqrt(sum(c * c for c in z))
        if norm > radius:
            z = [c * (radius / norm) for c in z]
        err = max(abs(t - c) for t, c in zip(tangential, z)) / rho
        if err > worst:
            worst = err
    return worst


def _solve_single(G, b, blk: Block, tolerance: float) -> Solution:
    """
    One block: its exact local solve is the solution (no sweeps).

    Planar contacts and unilateral rows on Python floats (the common cases: a hopper's foot, one
    joint stop).
    """
    if blk.size == 2 and blk.slip_dir is None:
        (g_nn, g_nt), (g_tn, g_tt) = G.tolist()
        b_n, b_t = b.tolist()
        lam_n, lam_t, _ = solve_contact_2d(g_nn, g_nt, g_tn, g_tt, b_n, b_t, blk.mu)
        res = residual_contact_2d(g_nn, g_nt, g_tn, g_tt, b_n, b_t, blk.mu, lam_n, lam_t)
        return Solution(np.array((lam_n, lam_t)), 1, res, res <= tolerance)
    if blk.size == 1:
        g = float(G[0, 0])
        b0 = float(b[0])
        lam = solve_unilateral(g, b0)
        res = abs(min(lam * g, g * lam + b0))
        return Solution(np.array((lam,)), 1, res, res <= tolerance)
    lam = solve_block(G, b, blk)
    res = residual(G, b, lam, [blk])
    return Solution(lam, 1, res, res <= tolerance)


# -- the problem ----------------------------------------------------------------------------

def solve(G: np.ndarray, b: np.ndarray, blocks: Sequence[Block], *, tolerance: float = 1e-10,
          max_iterations: int = 100, method: str = 'gauss_seidel',
          relaxation: float = 1.0, enumerate_modes: bool = False) -> Solution:
    """
    Solve the NCP of ``blocks`` (module docs).

    ``method``: block 'gauss_seidel' (default) or block 'jacobi'; ``relaxation`` omega blends each
    block's exact solution with its last value (SOR/JOR). One block is solved exactly in one
    iteration. ``enumerate_modes``: when the iteration does not converge, try every mode set of a
    small planar problem (:func:`_enumerate_modes`; the event-driven integrator's problems. The
    time-stepping step keeps the plain iteration, which its compiled twin in fast.py reproduces
    exactly).
    """
    if len(blocks) == 1:
        return _solve_single(G, b, blocks[0], tolerance)
    if relaxation == 1.0 and all(blk.size <= 2 for blk in blocks):
        sol = _solve_planar(G, b, blocks, tolerance, max_iterations, method == 'jacobi')
    else:
        sol = _solve_general(G, b, blocks, tolerance=tolerance, max_iterations=max_iterations,
                             method=method, relaxation=relaxation)
    if sol.converged or not enumerate_modes:
        return sol
    return _enumerate_modes(G, b, blocks, tolerance) or sol


#: Most mode sets :func:`_enumerate_modes` tries.
_MAX_MODE_SETS = 1024


def _enumerate_modes(G, b, blocks, tolerance) -> Solution | None:
    """
    Return the exact solution of a small planar problem by trying every mode set.

    None if none solves it, or if the problem is 3-D or too large. The block iteration can miss a
    solution that exists: a contact sliding in a fixed direction whose own block is
    Painlevé-inconsistent (G_NN - mu d G_NT <= 0) returns lambda_N = 0 whatever the other blocks
    do, while with the other constraints active (a leg whose knee stop is closed) the coupled
    problem is consistent.
    """
    choices = []
    count = 1
    for blk in blocks:
        if blk.size == 1 or blk.slip_dir is not None:
            options = (None, 'active')
        elif blk.size == 2:
            options = (None, 'stick', (1.0,), (-1.0,))
        else:
            return None
        choices.append(options)
        count *= len(options)
        if count > _MAX_MODE_SETS:
            return None
    for tried, modes in enumerate(itertools.product(*choices), start=1):
        lam = _polish(G, b, blocks, modes)
        if lam is None:
            continue
        res = residual(G, b, lam, blocks)
        if res <= tolerance:
            return Solution(lam, tried, res, True)
    return None


def _solve_general(G: np.ndarray, b: np.ndarray, blocks: Sequence[Block], *,
                   tolerance: float = 1e-10, max_iterations: int = 100,
                   method: str = 'gauss_seidel', relaxation: float = 1.0) -> Solution:
    """
    Return the iteration of :func:`solve` for any block sizes.

    Compiled (:mod:`dodo_sim.physics.kernels.ncp_general`, the same iteration to rounding) when
    numba is installed and the kernel takes the problem, else :func:`_solve_general_python`.
    """
    out = ncp_general.solve_general(G, b, blocks, tolerance, max_iterations,
                                    method == 'jacobi', relaxation)
    if out is not None:
        return Solution(*out)
    return _solve_general_python(G, b, blocks, tolerance=tolerance,
                                 max_iterations=max_iterations, method=method,
                                 relaxation=relaxation)


def _solve_general_python(G: np.ndarray, b: np.ndarray, blocks: Sequence[Block], *,
                          tolerance: float = 1e-10, max_iterations: int = 100,
                          method: str = 'gauss_seidel', relaxation: float = 1.0) -> Solution:
    """Return the iteration of :func:`solve` on numpy arrays, for any block sizes."""
    lam = np.zeros(len(b))
    jacobi = method == 'jacobi'

    def sweep():
        nonlocal lam
        if jacobi:
            u = G @ lam + b
        new = lam if not jacobi else lam.copy()
        for blk in blocks:
            sl = slice(blk.start, blk.start + blk.size)
            g_bb = G[sl, sl]
            if jacobi:
                b_loc = u[sl] - g_bb @ lam[sl]
            else:
                b_loc = b[sl] + G[sl] @ lam - g_bb @ lam[sl]
            local = solve_block(g_bb, b_loc, blk)
            if relaxation != 1.0:
                local = _project(lam[sl] + relaxation * (local - lam[sl]), blk)
            new[sl] = local
        lam = new
        return lam, residual(G, b, lam, blocks)

    return _iterate(sweep, lambda: _modes(lam, blocks), lam, G, b, blocks, tolerance,
                    max_iterations)


def _iterate(sweep, modes_of, initial, G, b, blocks, tolerance, max_iterations) -> Solution:
    """
    Repeat ``sweep`` (one block sweep: returns the multipliers and their residual) to tolerance.

    Once the modes of the last sweep (``modes_of()``) repeat those of the sweep before, the
    polish of that mode set is tried; if nothing converges, the last multipliers or the best
    polish, whichever has the smaller residual. ``initial``: the multipliers before any sweep.
    """
    lam = initial
    modes = None
    res = math.inf
    best = None
    for iteration in range(1, max_iterations + 1):
        lam, res = sweep()
        if res <= tolerance:
            return Solution(lam, iteration, res, True)
        current = modes_of()
        if current == modes:
            polished = _polish(G, b, blocks, current)
            if polished is not None:
                p_res = residual(G, b, polished, blocks)
                if p_res <= tolerance:
                    return Solution(polished, iteration, p_res, True)
                if best is None or p_res < best[1]:
                    best = (polished, p_res)
        modes = current
    if best is not None and best[1] < res:
        return Solution(best[0], max_iterations, best[1], False)
    return Solution(lam, max_iterations, res, False)


def _local_planar(G: list, b_loc: list, blk: Block) -> tuple:
    """Exact solve of a block of size 1 or 2 on Python floats (see :func:`solve_block`)."""
    s = blk.start
    if blk.size == 1:
        return (solve_unilateral(G[s][s], b_loc[0]),)
    g_nn, g_nt = G[s][s], G[s][s + 1]
    if blk.slip_dir is not None:
        d = float(blk.slip_dir[0])
        den = g_nn - blk.mu * g_nt * d
        lam_n = -b_loc[0] / den if (b_loc[0] < 0.0 and den > 0.0) else 0.0
        return lam_n, -blk.mu * lam_n * d
    lam_n, lam_t, _ = solve_contact_2d(g_nn, g_nt, G[s + 1][s], G[s + 1][s + 1], b_loc[0],
                                       b_loc[1], blk.mu)
    return lam_n, lam_t


def _cone_mode_planar(lam: list, blk: Block):
    """:func:`_cone_mode` of a planar contact block on Python floats."""
    t = lam[blk.start + 1]
    if abs(t) < blk.mu * lam[blk.start] * (1.0 - 1e-9) or t == 0.0:
        return 'stick'
    return (-1.0 if t > 0.0 else 1.0,)


def _solve_planar(G, b, blocks, tolerance, max_iterations, jacobi) -> Solution:
    """
    Block Gauss-Seidel / Jacobi of :func:`solve` for small blocks.

    Blocks of size 1 and 2, on Python floats (numpy's per-call cost dominates at this size); the
    same iteration, polish and residual.
    """
    m = len(b)
    Gl = G.tolist()
    bl = b.tolist()
    diag = [Gl[i][i] for i in range(m)]
    lam = [0.0] * m
    spans = [(blk, range(blk.start, blk.start + blk.size)) for blk in blocks]

    def sweep():
        source = lam[:] if jacobi else lam
        for blk, rows in spans:
            lo, hi = rows.start, rows.stop
            b_loc = []
            for i in rows:
                row = Gl[i]
                acc = bl[i]
                for j in range(lo):
                    acc += row[j] * source[j]
                for j in range(hi, m):
                    acc += row[j] * source[j]
                b_loc.append(acc)
            lam[lo:hi] = _local_planar(Gl, b_loc, blk)
        lam_array = np.array(lam)
        u = (G.dot(lam_array) + b).tolist()
        return lam_array, _residual_lists(u, lam, diag, blocks)

    return _iterate(sweep, lambda: _modes(lam, blocks, _cone_mode_planar), np.array(lam), G, b,
                    blocks, tolerance, max_iterations)


def _project(lam, blk: Block):
    out = lam.copy()
    out[0] = max(out[0], 0.0)
    if blk.size > 1 and blk.slip_dir is None:
        norm = float(np.sqrt(out[1:] @ out[1:]))
        radius = blk.mu * out[0]
        if norm > radius:
            out[1:] *= radius / norm
    return out


def _modes(lam, blocks, cone_mode=None) -> tuple:
    """
    Per block: None (separated), 'stick'/'active', or a sliding direction.

    ``cone_mode(lam, blk)``: the mode of a pressed contact block under its Coulomb cone
    (default :func:`_cone_mode`, on arrays).
    """
    cone_mode = _cone_mode if cone_mode is None else cone_mode
    modes = []
    for blk in blocks:
        s = blk.start
        if not lam[s] > _ZERO:
            modes.append(None)
        elif blk.size == 1 or blk.slip_dir is not None:
            modes.append('active')
        else:
            modes.append(cone_mode(lam, blk))
    return tuple(modes)


def _cone_mode(lam, blk: Block):
    """Return 'stick' inside the cone, else the sliding direction (opposing the friction)."""
    s = blk.start
    t = lam[s + 1:s + blk.size]
    norm = float(np.sqrt(t @ t))
    if norm < blk.mu * lam[s] * (1.0 - 1e-9):
        return 'stick'
    # rounded so that a converging 3-D direction counts as unchanged
    return tuple(np.round(-t / norm, 9)) if norm > 0.0 else 'stick'


def _polish(G, b, blocks, modes):
    """Exact solution of the linear system of a mode set (None if singular)."""
    m = len(b)
    cols, rows = [], []
    for blk, mode in zip(blocks, modes):
        s = blk.start
        if mode is None:
            continue
        if mode == 'stick':
            for r in range(s, s + blk.size):
                col = np.zeros(m)
                col[r] = 1.0
                cols.append(col)
                rows.append(r)
            continue
        col = np.zeros(m)
        col[s] = 1.0
        if blk.size > 1:
            d = np.asarray(blk.slip_dir if mode == 'active' else mode, float)
            col[s + 1:s + blk.size] = -blk.mu * d
        cols.append(col)
        rows.append(s)
    if not cols:
        return np.zeros(m)
    P = np.array(cols).T
    A = G[rows] @ P
    try:
        x = np.linalg.solve(A, -b[rows])
    except np.linalg.LinAlgError:
        return None
    return P @ x


__all__ = ['Block', 'Solution', 'METHODS', 'STICK_MARGIN', 'solve', 'solve_block', 'residual']
