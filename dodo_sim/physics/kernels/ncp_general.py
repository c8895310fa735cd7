# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
The block NCP iteration of :mod:`dodo_sim.physics.solver` for any block sizes, compiled.

:func:`dodo_sim.physics.solver._solve_general` (block Gauss-Seidel / Jacobi with the exact
per-contact solve, the mode polish and the natural-map residual) on arrays, for blocks of size 1
(unilateral row), 2 (planar contact, :func:`.ncp.solve_contact_2d`) and 3 (3-D contact with an
isotropic Coulomb cone, :mod:`.contact_3d`), with or without a fixed sliding direction, and any
relaxation. It is the same algorithm step for step; only the floating-point summation order
differs (explicit loops instead of BLAS and LAPACK), so results agree to rounding
(test_physics_ncp_general.py checks <= 1e-12).

One case is not compiled: a 3-D contact whose sliding direction neither the fixed-point iteration
(30 steps) nor the compiled bracketing finds (a Brent search that does not converge, or no
sliding solution at its root). The kernel then returns ``status`` 1 and :func:`solve_general`
gives the problem to the Python path, which solves it from the start: the result is the Python
path's, always. A singular 3x3 contact block is solved here as in the Python path
(contact_solve.minimum_norm_stick_3d).

Every kernel is ``njit(cache=True)`` and compiled at install time by
:mod:`dodo_sim.tools.precompile` (:func:`warm_up` here).
"""
from __future__ import annotations

import math

import numpy as np

from .contact_3d import solve_contact_3d
from .jit import c_contiguous, compiled, njit
from .linalg import lu_solve
from .ncp import solve_contact_2d

#: status of :func:`_solve_blocks`: solved; the Python path must solve this problem
SOLVED, NEEDS_PYTHON = 0, 1
#: mode codes of :func:`_modes` (solver._modes: None, 'active', 'stick', a sliding direction)
_SEPARATE, _ACTIVE, _STICK, _SLIDE = 0, 1, 2, 3


def _solve_block(g, b_loc, size, mu, has_dir, d, out):
    """solver.solve_block into ``out`` (size,); False: the Python path must solve it."""
    if size == 1:
        out[0] = -b_loc[0] / g[0, 0] if b_loc[0] < 0.0 else 0.0
        return True
    if has_dir:
        acc = 0.0
        for i in range(size - 1):
            acc += g[0, 1 + i] * d[i]
        den = g[0, 0] - mu * acc
        lam_n = -b_loc[0] / den if (b_loc[0] < 0.0 and den > 0.0) else 0.0
        out[0] = lam_n
        for i in range(size - 1):
            out[1 + i] = -mu * lam_n * d[i]
        return True
    if size == 2:
        lam_n, lam_t = solve_contact_2d(g[0, 0], g[0, 1], g[1, 0], g[1, 1], b_loc[0],
                                        b_loc[1], mu)
        out[0] = lam_n
        out[1] = lam_t
        return True
    return solve_contact_3d(g, b_loc, mu, out)


_solve_block = compiled(_solve_block)


def _residual(G, b, lam, starts, sizes, mus, has_dir, dirs):
    """solver.residual: natural-map residual of the NCP in velocity units."""
    m = len(b)
    u = np.empty(m)
    for i in range(m):
        acc = 0.0
        for j in range(m):
            acc += G[i, j] * lam[j]
        u[i] = acc + b[i]
    worst = 0.0
    for k in range(len(starts)):
        s = starts[k]
        size = sizes[k]
        lam_n = lam[s]
        g_nn = G[s, s]
        value = abs(min(lam_n * g_nn, u[s]))
        if value > worst:
            worst = value
        if size == 1:
            continue
        pressure = lam_n if lam_n > 0.0 else 0.0
        if has_dir[k]:
            err = 0.0
            for i in range(size - 1):
                e = abs(lam[s + 1 + i] + mus[k] * pressure * dirs[k, i])
                if e > err:
                    err = e
            err *= g_nn
            if err > worst:
                worst = err
            continue
        diag_max = G[s + 1, s + 1]
        for i in range(2, size):
            if G[s + i, s + i] > diag_max:
                diag_max = G[s + i, s + i]
        rho = 1.0 / max(diag_max, 1e-300)
        z = np.empty(size - 1)
        norm2 = 0.0
        for i in range(size - 1):
            z[i] = lam[s + 1 + i] - rho * u[s + 1 + i]
            norm2 += z[i] * z[i]
        radius = mus[k] * pressure
        norm = math.sqrt(norm2)
        if norm > radius:
            for i in range(size - 1):
                z[i] = z[i] * (radius / norm)
        err = 0.0
        for i in range(size - 1):
            e = abs(lam[s + 1 + i] - z[i])
            if e > err:
                err = e
        err /= rho
        if err > worst:
            worst = err
    return worst


_residual = compiled(_residual)


def _modes(lam, starts, sizes, mus, has_dir, codes, directions):
    """
    solver._modes into ``codes`` (nb,) and ``directions`` (nb, 2).

    A sliding direction is rounded to 9 decimals as numpy's ``round`` does (x 1e9, rint, / 1e9)
    so that a converging 3-D direction counts as unchanged, and so that the polish uses the same
    rounded direction as the Python path.
    """
    for k in range(len(starts)):
        s = starts[k]
        directions[k, 0] = 0.0
        directions[k, 1] = 0.0
        if not lam[s] > 0.0:
            codes[k] = _SEPARATE
        elif sizes[k] == 1 or has_dir[k]:
            codes[k] = _ACTIVE
        else:
            n = sizes[k] - 1
            norm2 = 0.0
            for i in range(n):
                norm2 += lam[s + 1 + i] * lam[s + 1 + i]
            norm = math.sqrt(norm2)
            if norm < mus[k] * lam[s] * (1.0 - 1e-9):
                codes[k] = _STICK
            elif norm > 0.0:
                codes[k] = _SLIDE
                for i in range(n):
                    directions[k, i] = np.rint((-lam[s + 1 + i] / norm) * 1e9) / 1e9
            else:
                codes[k] = _STICK


_modes = compiled(_modes)


def _polish(G, b, starts, sizes, mus, dirs, codes, directions):
    """solver._polish: the exact solution of the linear system of a mode set; (lam, ok)."""
    m = len(b)
    nb = len(starts)
    ncols = 0
    for k in range(nb):
        if codes[k] == _STICK:
            ncols += sizes[k]
        elif codes[k] != _SEPARATE:
            ncols += 1
    if ncols == 0:
        return np.zeros(m), True
    P = np.zeros((m, ncols))
    rows = np.empty(ncols, np.int64)
    c = 0
    for k in range(nb):
        s = starts[k]
        code = codes[k]
        if code == _SEPARATE:
            continue
        if code == _STICK:
            for r in range(s, s + sizes[k]):
                P[r, c] = 1.0
                rows[c] = r
                c += 1
            continue
        P[s, c] = 1.0
        for i in range(sizes[k] - 1):
            d = dirs[k, i] if code == _ACTIVE else directions[k, i]
            P[s + 1 + i, c] = -mus[k] * d
        rows[c] = s
        c += 1
    A = np.zeros((ncols, ncols))
    rhs = np.empty(ncols)
    for r in range(ncols):
        row = rows[r]
        for j in range(ncols):
            acc = 0.0
            for i in range(m):
                if P[i, j] != 0.0:
                    acc += G[row, i] * P[i, j]
            A[r, j] = acc
        rhs[r] = -b[row]
    x, ok = lu_solve(A, rhs)
    lam = np.zeros(m)
    if not ok:
        return lam, False
    for i in range(m):
        acc = 0.0
        for j in range(ncols):
            acc += P[i, j] * x[j]
        lam[i] = acc
    return lam, True


_polish = compiled(_polish)


def _solve_blocks(G, b, starts, sizes, mus, has_dir, dirs, tolerance, max_iterations, jacobi,
                  relaxation):
    """
    solver._solve_general on arrays.

    Returns (lam, iterations, residual, converged, status); status NEEDS_PYTHON: a block the
    kernel does not solve (module docs), the other values are then meaningless.
    """
    m = len(b)
    nb = len(starts)
    lam = np.zeros(m)
    codes = np.full(nb, -1, np.int64)
    directions = np.zeros((nb, 2))
    current = np.empty(nb, np.int64)
    current_dirs = np.zeros((nb, 2))
    res = math.inf
    best = np.zeros(m)
    best_res = math.inf
    have_best = False
    u = np.empty(m)
    local = np.empty(3)
    for iteration in range(1, max_iterations + 1):
        if jacobi:
            for i in range(m):
                acc = 0.0
                for j in range(m):
                    acc += G[i, j] * lam[j]
                u[i] = acc + b[i]
            new = lam.copy()
        else:
            new = lam
        for k in range(nb):
            lo = starts[k]
            size = sizes[k]
            hi = lo + size
            b_loc = np.empty(size)
            for i in range(lo, hi):
                block_part = 0.0
                for j in range(lo, hi):
                    block_part += G[i, j] * lam[j]
                if jacobi:
                    b_loc[i - lo] = u[i] - block_part
                else:
                    acc = 0.0
                    for j in range(m):
                        acc += G[i, j] * lam[j]
                    b_loc[i - lo] = (b[i] + acc) - block_part
            g_bb = np.ascontiguousarray(G[lo:hi, lo:hi])
            if not _solve_block(g_bb, b_loc, size, mus[k], has_dir[k], dirs[k], local):
                return lam, iteration, math.inf, False, NEEDS_PYTHON
            if relaxation != 1.0:   # solver._project of the relaxed update
                for i in range(size):
                    local[i] = lam[lo + i] + relaxation * (local[i] - lam[lo + i])
                if local[0] < 0.0:
                    local[0] = 0.0
                if size > 1 and not has_dir[k]:
                    norm2 = 0.0
                    for i in range(1, size):
                        norm2 += local[i] * local[i]
                    norm = math.sqrt(norm2)
                    radius = mus[k] * local[0]
                    if norm > radius:
                        for i in range(1, size):
                            local[i] *= radius / norm
            for i in range(size):
                new[lo + i] = local[i]
        lam = new
        res = _residual(G, b, lam, starts, sizes, mus, has_dir, dirs)
        if res <= tolerance:
            return lam, iteration, res, True, SOLVED
        _modes(lam, starts, sizes, mus, has_dir, current, current_dirs)
        same = True
        for k in range(nb):
            if current[k] != codes[k] or (current[k] == _SLIDE and (
                    current_dirs[k, 0] != directions[k, 0]
                    or current_dirs[k, 1] != directions[k, 1])):
                same = False
                break
        if same:
            polished, ok = _polish(G, b, starts, sizes, mus, dirs, current, current_dirs)
            if ok:
                p_res = _residual(G, b, polished, starts, sizes, mus, has_dir, dirs)
                if p_res <= tolerance:
                    return polished, iteration, p_res, True, SOLVED
                if not have_best or p_res < best_res:
                    best = polished
                    best_res = p_res
                    have_best = True
        codes[:] = current
        directions[:, :] = current_dirs
    if have_best and best_res < res:
        return best, max_iterations, best_res, False, SOLVED
    return lam, max_iterations, res, False, SOLVED


_solve_blocks = compiled(_solve_blocks)

#: the block sizes the kernel solves
SIZES = (1, 2, 3)


def pack_blocks(blocks):
    """Return the block arrays of :func:`_solve_blocks` (starts, sizes, mus, has_dir, dirs)."""
    nb = len(blocks)
    # built from lists: one array per field (element-wise stores cost ~0.1 us each)
    starts = np.array([blk.start for blk in blocks], np.int64)
    sizes = np.array([blk.size for blk in blocks], np.int64)
    mus = np.array([blk.mu for blk in blocks], np.float64)
    has_dir = np.array([blk.slip_dir is not None for blk in blocks], np.bool_)
    dirs = np.zeros((nb, 2))
    for k, blk in enumerate(blocks):
        if blk.slip_dir is not None:
            dirs[k, :blk.size - 1] = blk.slip_dir
    return starts, sizes, mus, has_dir, dirs


def solve_general(G, b, blocks, tolerance, max_iterations, jacobi, relaxation):
    """
    Return (lam, iterations, residual, converged) of the compiled iteration.

    None when the Python path must solve the problem (no numba, a block size the kernel does not
    take, or a block it hands back: module docs).
    """
    if njit is None:
        return None
    for blk in blocks:
        if blk.size not in SIZES:
            return None
    lam, iterations, res, converged, status = _solve_blocks(
        c_contiguous(G), c_contiguous(b), *pack_blocks(blocks), float(tolerance),
        int(max_iterations), bool(jacobi), float(relaxation))
    if status != SOLVED:
        return None
    return lam, iterations, res, converged


def warm_up() -> None:
    """Compile the kernels with the argument types the integrators use (precompile.py)."""
    from collections import namedtuple
    # blocks as solver.Block lays them out (start, size, mu, slip_dir); this module sits below
    # solver.py, which calls it, so it does not import solver's Block
    block = namedtuple('Block', 'start size mu slip_dir', defaults=(0.0, None))
    G = np.array([[2.0, 0.1, 0.0, 0.2], [0.1, 1.0, 0.0, 0.0], [0.0, 0.0, 1.0, 0.1],
                  [0.2, 0.0, 0.1, 1.0]])
    b = np.array([-1.0, 0.5, -0.2, -1.0])
    blocks = [block(0, 3, 0.5), block(3, 1)]
    for jacobi in (False, True):
        solve_general(G, b, blocks, 1e-10, 100, jacobi, 1.0)


__all__ = ['solve_general', 'pack_blocks', 'warm_up', 'SIZES', 'SOLVED', 'NEEDS_PYTHON']
