# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
The exact solve of one 3-D point contact with an isotropic Coulomb cone, compiled.

:func:`dodo_sim.physics.contact_solve.solve_contact_3d` on arrays: stick, else the sliding
direction by a fixed-point iteration, else by bracketing its angle on 48 intervals and Brent's
method (scipy.optimize.brentq's algorithm). Cases it hands back to the Python path (it returns
False): an exactly singular block, a Brent search that does not converge, or no sliding solution
at the root (:mod:`.ncp_general` module docs).
"""
from __future__ import annotations

import math

import numpy as np

from .jit import compiled
from .linalg import lu_solve


def _slip_cross(g, b, mu, phi):
    """
    contact_solve._slip_3d_bracketed's ``cross``: (u_T x d, u_T . d, ok) for d at angle ``phi``.

    ok is False where no sliding solution exists in that direction (contact_solve._slip_3d: None).
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


_slip_cross = compiled(_slip_cross)


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


_brentq = compiled(_brentq)

#: contact_solve._BRENT_RTOL
_BRENT_RTOL = 4.0 * np.finfo(np.float64).eps


def _slip_3d_bracketed(g, b, mu, out):
    """
    contact_solve._slip_3d_bracketed into ``out``: bracket the angle on 48 intervals, then Brent.

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
    lam, ok = lu_solve(g, -b)
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


_slip_3d_bracketed = compiled(_slip_3d_bracketed)


def solve_contact_3d(g, b, mu, out):
    """
    contact_solve.solve_contact_3d into ``out`` (3,): stick, else the fixed-point slip direction.

    Returns False when the Python path must solve it (a singular block, or a case of
    :func:`_slip_3d_bracketed`).
    """
    if b[0] >= 0.0:
        out[0] = 0.0
        out[1] = 0.0
        out[2] = 0.0
        return True
    lam, ok = lu_solve(g, -b)
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
        den = g[0, 0] - mu * (g[0, 1] * d0 + g[0, 2] * d1)   # contact_solve._slip_3d
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


solve_contact_3d = compiled(solve_contact_3d)


__all__ = ['solve_contact_3d']
