# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
The planar NCP of hard contact on arrays: :mod:`dodo_sim.physics.solver` for planar blocks.

The same exact single-block solve, block Gauss-Seidel / Jacobi iteration, mode polish and
natural-map residual as the generic solver (test_physics_fast.py compares them).
"""
from __future__ import annotations

import math

import numpy as np

from .jit import compiled


def solve_contact_2d(g_nn, g_nt, g_tn, g_tt, b_n, b_t, mu):
    """contact_solve.solve_contact_2d."""
    if b_n >= 0.0:
        return 0.0, 0.0
    det = g_nn * g_tt - g_nt * g_tn
    if det <= 1e-12 * g_nn * g_tt:  # contact_solve.SINGULAR_CONTACT_RATIO: rank 1
        lam_n = -b_n / g_nn
        if abs(g_tn * lam_n + b_t) <= 1e-9 * (abs(b_t) + abs(b_n)):
            return lam_n, 0.0
        det = np.inf
    lam_n = (g_nt * b_t - g_tt * b_n) / det
    lam_t = (g_tn * b_n - g_nn * b_t) / det
    if lam_n >= 0.0 and abs(lam_t) <= mu * lam_n:
        return lam_n, lam_t
    first = -1.0 if lam_t > 0.0 else 1.0
    scale = abs(b_t) + abs(b_n)
    for k in range(2):
        s = first if k == 0 else -first
        den = g_nn - s * mu * g_nt
        if den <= 0.0:
            continue
        ln = -b_n / den
        u_t = (g_tn - s * mu * g_tt) * ln + b_t
        if s * u_t >= -1e-14 * scale:
            return ln, -s * mu * ln
    lam_n = max(lam_n, 0.0)
    return lam_n, min(max(lam_t, -mu * lam_n), mu * lam_n)


solve_contact_2d = compiled(solve_contact_2d)


def _residual(G, b, lam, starts, sizes, mus, dirs):
    """
    solver.residual for planar blocks.

    dirs[k] = 0 means the Coulomb cone, else the fixed sliding direction +-1.
    """
    m = len(b)
    u = np.empty(m)
    for i in range(m):
        acc = b[i]
        for j in range(m):
            acc += G[i, j] * lam[j]
        u[i] = acc
    worst = 0.0
    for k in range(len(starts)):
        s = starts[k]
        lam_n = lam[s]
        g_nn = G[s, s]
        value = abs(min(lam_n * g_nn, u[s]))
        if value > worst:
            worst = value
        if sizes[k] == 1:
            continue
        pressure = lam_n if lam_n > 0.0 else 0.0
        if dirs[k] != 0.0:
            err = abs(lam[s + 1] + mus[k] * pressure * dirs[k]) * g_nn
            if err > worst:
                worst = err
            continue
        rho = 1.0 / max(G[s + 1, s + 1], 1e-300)
        t = lam[s + 1]
        z = t - rho * u[s + 1]
        radius = mus[k] * pressure
        norm = math.sqrt(z * z)
        if norm > radius:
            z = z * (radius / norm)
        err = abs(t - z) / rho
        if err > worst:
            worst = err
    return worst


_residual = compiled(_residual)


def _modes(lam, starts, sizes, mus, dirs):
    """solver._modes_lists: per block 0 separated, 1 stick/active, 2 slide (+), 3 slide (-)."""
    out = np.zeros(len(starts), np.int64)
    for k in range(len(starts)):
        s = starts[k]
        if not lam[s] > 0.0:
            out[k] = 0
        elif sizes[k] == 1 or dirs[k] != 0.0:
            out[k] = 1
        else:
            t = lam[s + 1]
            if abs(t) < mus[k] * lam[s] * (1.0 - 1e-9) or t == 0.0:
                out[k] = 1
            else:
                out[k] = 2 if t < 0.0 else 3   # sliding direction -sign(t)
    return out


_modes = compiled(_modes)


def _polish(G, b, starts, sizes, mus, dirs, modes):
    """solver._polish: the linear system of a mode set; (lam, ok)."""
    m = len(b)
    nb = len(starts)
    ncols = 0
    for k in range(nb):
        if modes[k] == 0:
            continue
        if modes[k] == 1 and sizes[k] == 2 and dirs[k] == 0.0:
            ncols += 2
        else:
            ncols += 1
    if ncols == 0:
        return np.zeros(m), True
    P = np.zeros((m, ncols))
    rows = np.empty(ncols, np.int64)
    c = 0
    for k in range(nb):
        s = starts[k]
        mode = modes[k]
        if mode == 0:
            continue
        if mode == 1 and sizes[k] == 2 and dirs[k] == 0.0:
            P[s, c] = 1.0
            rows[c] = s
            P[s + 1, c + 1] = 1.0
            rows[c + 1] = s + 1
            c += 2
            continue
        P[s, c] = 1.0
        if sizes[k] == 2:
            if mode == 1:
                d = dirs[k]
            elif mode == 2:
                d = 1.0
            else:
                d = -1.0
            P[s + 1, c] = -mus[k] * d
        rows[c] = s
        c += 1
    A = np.empty((ncols, ncols))
    rhs = np.empty(ncols)
    GP = G @ P
    for r in range(ncols):
        A[r] = GP[rows[r]]
        rhs[r] = -b[rows[r]]
    det = np.linalg.det(A)
    if det == 0.0 or not math.isfinite(det):
        return np.zeros(m), False
    x = np.linalg.solve(A, rhs)
    return P @ x, True


_polish = compiled(_polish)


def solve_planar(G, b, starts, sizes, mus, dirs, tolerance, max_iterations, jacobi):
    """solver.solve for planar blocks: returns (lam, iterations, residual, converged)."""
    m = len(b)
    nb = len(starts)
    if nb == 1:
        if sizes[0] == 2 and dirs[0] == 0.0:
            lam_n, lam_t = solve_contact_2d(G[0, 0], G[0, 1], G[1, 0], G[1, 1], b[0], b[1],
                                            mus[0])
            lam = np.array((lam_n, lam_t))
        elif sizes[0] == 1:
            lam = np.array((-b[0] / G[0, 0] if b[0] < 0.0 else 0.0,))
        else:
            d = dirs[0]
            den = G[0, 0] - mus[0] * G[0, 1] * d
            lam_n = -b[0] / den if (b[0] < 0.0 and den > 0.0) else 0.0
            lam = np.array((lam_n, -mus[0] * lam_n * d))
        res = _residual(G, b, lam, starts, sizes, mus, dirs)
        return lam, 1, res, res <= tolerance
    lam = np.zeros(m)
    modes = np.full(nb, -1, np.int64)
    res = math.inf
    best = np.zeros(m)
    best_res = math.inf
    have_best = False
    for iteration in range(1, max_iterations + 1):
        source = lam.copy() if jacobi else lam
        for k in range(nb):
            lo = starts[k]
            hi = lo + sizes[k]
            b_loc = np.empty(sizes[k])
            for i in range(lo, hi):
                acc = b[i]
                for j in range(lo):
                    acc += G[i, j] * source[j]
                for j in range(hi, m):
                    acc += G[i, j] * source[j]
                b_loc[i - lo] = acc
            if sizes[k] == 1:
                lam[lo] = -b_loc[0] / G[lo, lo] if b_loc[0] < 0.0 else 0.0
            elif dirs[k] != 0.0:
                d = dirs[k]
                den = G[lo, lo] - mus[k] * G[lo, lo + 1] * d
                lam_n = -b_loc[0] / den if (b_loc[0] < 0.0 and den > 0.0) else 0.0
                lam[lo] = lam_n
                lam[lo + 1] = -mus[k] * lam_n * d
            else:
                lam_n, lam_t = solve_contact_2d(G[lo, lo], G[lo, lo + 1], G[lo + 1, lo],
                                                G[lo + 1, lo + 1], b_loc[0], b_loc[1], mus[k])
                lam[lo] = lam_n
                lam[lo + 1] = lam_t
        res = _residual(G, b, lam, starts, sizes, mus, dirs)
        if res <= tolerance:
            return lam, iteration, res, True
        current = _modes(lam, starts, sizes, mus, dirs)
        if (current == modes).all():
            polished, ok = _polish(G, b, starts, sizes, mus, dirs, current)
            if ok:
                p_res = _residual(G, b, polished, starts, sizes, mus, dirs)
                if p_res <= tolerance:
                    return polished, iteration, p_res, True
                if not have_best or p_res < best_res:
                    best = polished
                    best_res = p_res
                    have_best = True
        modes = current
    if have_best and best_res < res:
        return best, max_iterations, best_res, False
    return lam, max_iterations, res, False


solve_planar = compiled(solve_planar)


__all__ = ['solve_contact_2d', 'solve_planar']
