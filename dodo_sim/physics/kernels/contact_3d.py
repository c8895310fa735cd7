# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
The exact solve of one 3-D point contact with an isotropic Coulomb cone, compiled.

:func:`dodo_sim.physics.contact_solve.solve_contact_3d` on arrays: stick, else the sliding
direction by a fixed-point iteration, else by bracketing its angle on 48 intervals and Brent's
method (scipy.optimize.brentq's algorithm). A singular block (rank < 3) sticks
with its least-norm impulse in the cone (contact_solve.minimum_norm_stick_3d) or slides. Cases it
hands back to the Python path (it returns False): a Brent search that does not converge, or no
sliding solution at the root (:mod:`.ncp_general` module docs).
"""
from __future__ import annotations

import math

import numpy as np

from .jit import compiled
from .linalg import lu_solve
from ..contact_solve import NULL_EIGENVALUE_RATIO, SINGULAR_CONTACT_RATIO


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


def _slip_3d_bracketed(g, b, mu, stick, out):
    """
    contact_solve._slip_3d_bracketed into ``out``: bracket the angle on 48 intervals, then Brent.

    ``stick``: the stick impulse tried first, projected on the cone when nothing else is found.
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
    lam = stick.copy()
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


def singular_contact_3d(g):
    """contact_solve.singular_contact_3d: det(G) <= SINGULAR_CONTACT_RATIO G_NN G_T1T1 G_T2T2."""
    det = (g[0, 0] * (g[1, 1] * g[2, 2] - g[1, 2] * g[2, 1])
           - g[0, 1] * (g[1, 0] * g[2, 2] - g[1, 2] * g[2, 0])
           + g[0, 2] * (g[1, 0] * g[2, 1] - g[1, 1] * g[2, 0]))
    return det <= SINGULAR_CONTACT_RATIO * g[0, 0] * g[1, 1] * g[2, 2]


singular_contact_3d = compiled(singular_contact_3d)


def _on_cone(lam, mu):
    """contact_solve._on_cone: the tangential part scaled onto the cone's surface."""
    out = np.empty(3)
    out[0] = max(lam[0], 0.0)
    out[1] = lam[1]
    out[2] = lam[2]
    norm = math.hypot(out[1], out[2])
    if norm > mu * out[0]:
        out[1] *= mu * out[0] / norm
        out[2] *= mu * out[0] / norm
    return out


_on_cone = compiled(_on_cone)


def minimum_norm_stick_3d(g, b, mu):
    """Return the least-norm stick impulse of a singular block (contact_solve's, same name)."""
    moments, modes = np.linalg.eigh(np.ascontiguousarray(g))
    top = moments[2]
    lam = np.zeros(3)
    if not top > 0.0:
        return lam, True
    ranked = 0
    for i in (1, 2):
        if moments[i] > NULL_EIGENVALUE_RATIO * top:
            ranked += 1
            along = (modes[0, i] * b[0] + modes[1, i] * b[1] + modes[2, i] * b[2]) / moments[i]
            for r in range(3):
                lam[r] -= along * modes[r, i]
    if lam[0] >= 0.0 and math.hypot(lam[1], lam[2]) <= mu * lam[0]:
        return lam, True
    if ranked == 2:        # one null direction n: where the line lam + t n enters the cone
        n = modes[:, 0]
        a = mu * mu * n[0] * n[0] - n[1] * n[1] - n[2] * n[2]
        half_b = mu * mu * lam[0] * n[0] - lam[1] * n[1] - lam[2] * n[2]
        c = mu * mu * lam[0] * lam[0] - lam[1] * lam[1] - lam[2] * lam[2]
        roots = np.empty(2)
        count = 0
        if abs(a) <= 1e-12 * (mu * mu + 1.0):
            if half_b != 0.0:
                roots[0] = -c / (2.0 * half_b)
                count = 1
        else:
            disc = half_b * half_b - a * c
            if disc >= 0.0:
                root = math.sqrt(disc)
                roots[0] = (-half_b - root) / a
                roots[1] = (-half_b + root) / a
                count = 2
        have = False
        best = 0.0
        for k in range(count):
            t = roots[k]
            if lam[0] + t * n[0] >= 0.0 and (not have or abs(t) < abs(best)):
                best = t
                have = True
        if have:
            return _on_cone(lam + best * n, mu), True
        return lam, False
    # two null directions: the point moves along the line a only, a . lambda = c
    a0 = modes[0, 2]
    a1 = modes[1, 2]
    a2 = modes[2, 2]
    c = a0 * lam[0] + a1 * lam[1] + a2 * lam[2]
    if c < 0.0:
        a0, a1, a2, c = -a0, -a1, -a2, -c
    across = math.hypot(a1, a2)
    den = a0 + mu * across
    if not den > 0.0:
        return lam, False
    lam_n = c / den
    out = np.empty(3)
    out[0] = lam_n
    if across == 0.0:
        out[1] = 0.0
        out[2] = 0.0
    else:
        out[1] = mu * lam_n * a1 / across
        out[2] = mu * lam_n * a2 / across
    return out, True


minimum_norm_stick_3d = compiled(minimum_norm_stick_3d)


def solve_contact_3d(g, b, mu, out):
    """
    contact_solve.solve_contact_3d into ``out`` (3,): stick, else the fixed-point slip direction.

    A singular block sticks with its least-norm impulse in the cone (:func:`minimum_norm_stick_3d`)
    or slides. Returns False when the Python path must solve it (an exactly singular LU pivot of
    a block the singular test passed, or a case of :func:`_slip_3d_bracketed`).
    """
    if b[0] >= 0.0 or not g[0, 0] > 0.0:
        out[0] = 0.0
        out[1] = 0.0
        out[2] = 0.0
        return True
    if singular_contact_3d(g):
        lam, inside = minimum_norm_stick_3d(g, b, mu)
        if inside:
            out[0] = lam[0]
            out[1] = lam[1]
            out[2] = lam[2]
            return True
    else:
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
    return _slip_3d_bracketed(g, b, mu, lam, out)


solve_contact_3d = compiled(solve_contact_3d)


__all__ = ['solve_contact_3d']
