# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
The block NCP iteration of :mod:`dodo_sim.physics.solver` for any block sizes, compiled.

:func:`dodo_sim.physics.solver._solve_general` (block Gauss-Seidel / Jacobi with the exact
per-contact solve, the mode polish and the natural-map residual) on arrays, for blocks of size 1
(unilateral row), 2 (planar contact) and 3 (3-D contact with an isotropic Coulomb cone), with or
without a fixed sliding direction, and any relaxation. It is the same algorithm step for step;
only the floating-point summation order differs (explicit loops instead of BLAS and LAPACK), so
results agree to rounding (test_physics_solver_kernel.py checks <= 1e-12).

One case is not compiled: a 3-D contact whose sliding direction the fixed-point iteration does
not find in 30 steps (a strongly anisotropic block; the Python path then brackets the angle with
scipy's Brent method), and an exactly singular 3x3 contact block (the Python path raises). The
kernel then returns ``status`` 1 and :func:`solve_general` gives the problem to the Python path,
which solves it from the start: the result is the Python path's, always.

:func:`position_correction` is the linear algebra of the time-stepping step's position
correction (timestepping.py ``_correct_positions``) in one compiled call.

Every kernel is ``njit(cache=True)`` and compiled at install time by
:mod:`dodo_sim.tools.precompile` (:func:`warm_up` here).
"""
from __future__ import annotations

import math

import numpy as np

try:
    from numba import njit
except ImportError:  # the Python path runs without numba
    njit = None

#: status of :func:`_solve_kernel`: solved; the Python path must solve this problem
SOLVED, NEEDS_PYTHON = 0, 1
#: mode codes of :func:`_modes` (solver._modes: None, 'active', 'stick', a sliding direction)
_SEPARATE, _ACTIVE, _STICK, _SLIDE = 0, 1, 2, 3


def _compiled(function):
    return function if njit is None else njit(cache=True, fastmath=False)(function)


def _lu_solve(A, rhs):
    """
    Solve A x = rhs by Gaussian elimination with partial pivoting (LAPACK gesv's algorithm).

    Returns (x, ok); ok is False when a pivot is exactly zero (numpy raises LinAlgError there).
    A and rhs are not modified.
    """
    n = A.shape[0]
    a = A.copy()
    x = rhs.copy()
    for k in range(n):
        p = k
        big = abs(a[k, k])
        for i in range(k + 1, n):
            if abs(a[i, k]) > big:
                big = abs(a[i, k])
                p = i
        if big == 0.0:
            return x, False
        if p != k:
            for j in range(n):
                tmp = a[k, j]
                a[k, j] = a[p, j]
                a[p, j] = tmp
            tmp = x[k]
            x[k] = x[p]
            x[p] = tmp
        pivot = a[k, k]
        for i in range(k + 1, n):
            f = a[i, k] / pivot
            if f != 0.0:
                for j in range(k + 1, n):
                    a[i, j] -= f * a[k, j]
                x[i] -= f * x[k]
    for i in range(n - 1, -1, -1):
        acc = x[i]
        for j in range(i + 1, n):
            acc -= a[i, j] * x[j]
        x[i] = acc / a[i, i]
    return x, True


_lu_solve = _compiled(_lu_solve)


def _solve_contact_2d(g_nn, g_nt, g_tn, g_tt, b_n, b_t, mu):
    """solver.solve_contact_2d: (lambda_N, lambda_T)."""
    if b_n >= 0.0:
        return 0.0, 0.0
    det = g_nn * g_tt - g_nt * g_tn
    if det <= 1e-12 * g_nn * g_tt:  # solver.SINGULAR_CONTACT_RATIO: a rank-1 block
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


_solve_contact_2d = _compiled(_solve_contact_2d)


def _slip_cross(g, b, mu, phi):
    """
    solver._slip_3d_bracketed's ``cross``: (u_T x d, u_T . d, ok) for d at angle ``phi``.

    ok is False where no sliding solution exists in that direction (solver._slip_3d: None).
    """
    d0 = math.cos(phi)
    d1 = math.sin(phi)
    den = g[0, 0] - mu * (g[0, 1] * d0 + g[0, 2] * d1)
    if den <= 0.0:
        return 0.0, 0.0, False
    lam_n = -b[0] / den
    t0 = -mu * lam_n * d0
    t1 = -mu * lam_n * d1
    u0 = g[1, 0] * lam_n + (g[1, 1] * t0 + g[1, 2] * t1) + b[1]
    u1 = g[2, 0] * lam_n + (g[2, 1] * t0 + g[2, 2] * t1) + b[2]
    return u0 * d1 - u1 * d0, u0 * d0 + u1 * d1, True


_slip_cross = _compiled(_slip_cross)


def _brentq(g, b, mu, xa, xb, xtol, rtol):
    """
    Root of the slip cross product in [xa, xb]: scipy.optimize.brentq (scipy's brentq.c).

    Returns (phi, status): 0 converged, 1 an evaluation had no sliding solution (the Python
    path's ValueError: the bracket is skipped), 2 not converged in 100 iterations (scipy raises
    RuntimeError: the Python path must handle it).
    """
    xpre, xcur = xa, xb
    xblk = 0.0
    fblk = 0.0
    spre = 0.0
    scur = 0.0
    fpre, _, ok_pre = _slip_cross(g, b, mu, xpre)
    fcur, _, ok_cur = _slip_cross(g, b, mu, xcur)
    if not (ok_pre and ok_cur):
        return xcur, 1
    if fpre == 0.0:
        return xpre, 0
    if fcur == 0.0:
        return xcur, 0
    for _ in range(100):
        if fpre != 0.0 and fcur != 0.0 and (math.copysign(1.0, fpre)
                                            != math.copysign(1.0, fcur)):
            xblk = xpre
            fblk = fpre
            spre = scur = xcur - xpre
        if abs(fblk) < abs(fcur):
            xpre = xcur
            xcur = xblk
            xblk = xpre
            fpre = fcur
            fcur = fblk
            fblk = fpre
        delta = (xtol + rtol * abs(xcur)) / 2.0
        sbis = (xblk - xcur) / 2.0
        if fcur == 0.0 or abs(sbis) < delta:
            return xcur, 0
        if abs(spre) > delta and abs(fcur) < abs(fpre):
            if xpre == xblk:   # interpolate
                stry = -fcur * (xcur - xpre) / (fcur - fpre)
            else:              # extrapolate
                dpre = (fpre - fcur) / (xpre - xcur)
                dblk = (fblk - fcur) / (xblk - xcur)
                stry = -fcur * (fblk * dblk - fpre * dpre) / (dblk * dpre * (fblk - fpre))
            if 2.0 * abs(stry) < min(abs(spre), 3.0 * abs(sbis) - delta):
                spre = scur    # good short step
                scur = stry
            else:
                spre = sbis    # bisect
                scur = sbis
        else:
            spre = sbis
            scur = sbis
        xpre = xcur
        fpre = fcur
        if abs(scur) > delta:
            xcur += scur
        else:
            xcur += delta if sbis > 0.0 else -delta
        fcur, _, ok_cur = _slip_cross(g, b, mu, xcur)
        if not ok_cur:
            return xcur, 1
    return xcur, 2


_brentq = _compiled(_brentq)

#: solver._BRENT_RTOL
_BRENT_RTOL = 4.0 * np.finfo(np.float64).eps


def _slip_3d_bracketed(g, b, mu, out):
    """
    solver._slip_3d_bracketed into ``out``: bracket the slip angle on 48 intervals, then Brent.

    Returns False when the Python path must solve it (Brent unconverged, or no slip solution at
    the root: the Python path raises there).
    """
    count = 49
    step = (2.0 * math.pi) / (count - 1)       # numpy.linspace(0, 2 pi, 49)
    f_values = np.empty(count)
    valid = np.empty(count, np.bool_)
    angles = np.empty(count)
    for k in range(count):
        angles[k] = k * step if k < count - 1 else 2.0 * math.pi
        f_values[k], _, valid[k] = _slip_cross(g, b, mu, angles[k])
    have_best = False
    for k in range(count - 1):
        if not (valid[k] and valid[k + 1]) or f_values[k] * f_values[k + 1] > 0.0:
            continue
        phi, status = _brentq(g, b, mu, angles[k], angles[k + 1], 1e-15, _BRENT_RTOL)
        if status == 1:
            continue
        if status == 2:
            return False
        d0 = math.cos(phi)
        d1 = math.sin(phi)
        den = g[0, 0] - mu * (g[0, 1] * d0 + g[0, 2] * d1)
        if den <= 0.0:
            return False
        lam_n = -b[0] / den
        t0 = -mu * lam_n * d0
        t1 = -mu * lam_n * d1
        u0 = g[1, 0] * lam_n + (g[1, 1] * t0 + g[1, 2] * t1) + b[1]
        u1 = g[2, 0] * lam_n + (g[2, 1] * t0 + g[2, 2] * t1) + b[2]
        if lam_n >= 0.0 and u0 * d0 + u1 * d1 >= 0.0:
            out[0] = lam_n
            out[1] = t0
            out[2] = t1
            return True
        if not have_best:
            out[0] = max(lam_n, 0.0)
            out[1] = t0
            out[2] = t1
            have_best = True
    if have_best:
        return True
    lam, ok = _lu_solve(g, -b)
    if not ok:
        return False
    lam[0] = max(lam[0], 0.0)
    norm = math.hypot(lam[1], lam[2])
    if norm > mu * lam[0]:
        lam[1] *= mu * lam[0] / norm
        lam[2] *= mu * lam[0] / norm
    out[0] = lam[0]
    out[1] = lam[1]
    out[2] = lam[2]
    return True


_slip_3d_bracketed = _compiled(_slip_3d_bracketed)


def _solve_contact_3d(g, b, mu, out):
    """
    solver.solve_contact_3d into ``out`` (3,): stick, else the fixed-point sliding direction.

    Returns False when the Python path must solve it (a singular block, or a case of
    :func:`_slip_3d_bracketed`).
    """
    if b[0] >= 0.0:
        out[0] = 0.0
        out[1] = 0.0
        out[2] = 0.0
        return True
    lam, ok = _lu_solve(g, -b)
    if not ok:
        return False
    if lam[0] >= 0.0 and math.hypot(lam[1], lam[2]) <= mu * lam[0]:
        out[0] = lam[0]
        out[1] = lam[1]
        out[2] = lam[2]
        return True
    if mu == 0.0:
        out[0] = -b[0] / g[0, 0]
        out[1] = 0.0
        out[2] = 0.0
        return True
    norm = math.hypot(lam[1], lam[2])
    if norm > 0.0:
        d0 = -lam[1] / norm
        d1 = -lam[2] / norm
    else:
        d0, d1 = 1.0, 0.0
    scale = abs(b[0]) + abs(b[1]) + abs(b[2])
    for _ in range(30):
        den = g[0, 0] - mu * (g[0, 1] * d0 + g[0, 2] * d1)   # solver._slip_3d
        if den <= 0.0:
            break
        lam_n = -b[0] / den
        t0 = -mu * lam_n * d0
        t1 = -mu * lam_n * d1
        u0 = g[1, 0] * lam_n + (g[1, 1] * t0 + g[1, 2] * t1) + b[1]
        u1 = g[2, 0] * lam_n + (g[2, 1] * t0 + g[2, 2] * t1) + b[2]
        speed = math.hypot(u0, u1)
        if speed <= 1e-15 * scale:
            break
        e0 = u0 / speed
        e1 = u1 / speed
        if abs(e0 * d1 - e1 * d0) <= 1e-15 and e0 * d0 + e1 * d1 > 0.0:
            out[0] = lam_n
            out[1] = t0
            out[2] = t1
            return True
        d0, d1 = e0, e1
    return _slip_3d_bracketed(g, b, mu, out)


_solve_contact_3d = _compiled(_solve_contact_3d)


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
        lam_n, lam_t = _solve_contact_2d(g[0, 0], g[0, 1], g[1, 0], g[1, 1], b_loc[0],
                                         b_loc[1], mu)
        out[0] = lam_n
        out[1] = lam_t
        return True
    return _solve_contact_3d(g, b_loc, mu, out)


_solve_block = _compiled(_solve_block)


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


_residual = _compiled(_residual)


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


_modes = _compiled(_modes)


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
    x, ok = _lu_solve(A, rhs)
    lam = np.zeros(m)
    if not ok:
        return lam, False
    for i in range(m):
        acc = 0.0
        for j in range(ncols):
            acc += P[i, j] * x[j]
        lam[i] = acc
    return lam, True


_polish = _compiled(_polish)


def _solve_kernel(G, b, starts, sizes, mus, has_dir, dirs, tolerance, max_iterations, jacobi,
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


_solve_kernel = _compiled(_solve_kernel)

#: the block sizes the kernel solves
SIZES = (1, 2, 3)


def pack_blocks(blocks):
    """Return the block arrays of :func:`_solve_kernel` (starts, sizes, mus, has_dir, dirs)."""
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


def _c_array(a):
    """Return ``a`` as a C-contiguous float64 array (the kernels' compiled signature)."""
    if a.dtype == np.float64 and a.flags.c_contiguous:
        return a
    return np.ascontiguousarray(a, dtype=np.float64)


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
    lam, iterations, res, converged, status = _solve_kernel(
        _c_array(G), _c_array(b), *pack_blocks(blocks), float(tolerance), int(max_iterations),
        bool(jacobi), float(relaxation))
    if status != SOLVED:
        return None
    return lam, iterations, res, converged


def _correction(G, minv_wt, rows, targets):
    """
    Return the time-stepping position correction M^-1 W_C^T delta with G_CC delta = targets.

    G_CC = G[rows][:, rows] by Cholesky when well conditioned (smallest pivot^2 > 1e-12 largest
    pivot^2, timestepping._spd_solve_or_least_squares), then solved as np.linalg.solve does (LU
    with partial pivoting). Returns (dq (nv,), ok); not ok: the Python path's least squares.
    """
    n = len(rows)
    nv = minv_wt.shape[0]
    A = np.empty((n, n))
    for i in range(n):
        for j in range(n):
            A[i, j] = G[rows[i], rows[j]]
    dq = np.zeros(nv)
    L = np.zeros((n, n))
    for i in range(n):
        for j in range(i + 1):
            acc = A[i, j]
            for k in range(j):
                acc -= L[i, k] * L[j, k]
            if i == j:
                if not acc > 0.0:
                    return dq, False
                L[i, i] = math.sqrt(acc)
            else:
                L[i, j] = acc / L[j, j]
    smallest = math.inf
    largest = 0.0
    for i in range(n):
        smallest = min(smallest, L[i, i])
        largest = max(largest, L[i, i])
    if not smallest * smallest > 1e-12 * largest * largest:
        return dq, False
    delta, ok = _lu_solve(A, targets)
    if not ok:
        return dq, False
    for j in range(nv):
        acc = 0.0
        for p in range(n):
            acc += minv_wt[j, rows[p]] * delta[p]
        dq[j] = acc
    return dq, True


_correction = _compiled(_correction)


def position_correction(G, minv_wt, rows, targets):
    """
    Return the displacement dq = M^-1 W_C^T delta of timestepping's position correction.

    ``rows``: the rows C of the constraints to close, ``targets``: their gap corrections;
    G_CC delta = targets. None without numba or when G_CC is not well conditioned (the caller's
    least squares then handles redundant constraints).
    """
    if njit is None:
        return None
    dq, ok = _correction(_c_array(G), _c_array(minv_wt), np.array(rows, np.int64),
                         np.array(targets, np.float64))
    return dq if ok else None


def warm_up() -> None:
    """Compile the kernel with the argument types the integrators use (precompile.py)."""
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
    position_correction(G, G, [0, 3], [1e-6, 2e-6])


__all__ = ['solve_general', 'position_correction', 'pack_blocks', 'warm_up', 'SIZES', 'SOLVED',
           'NEEDS_PYTHON']
