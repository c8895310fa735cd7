# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
The exact solve of one contact or unilateral row of the NCP (:mod:`dodo_sim.physics.solver`).

Given the others, each block of the block Gauss-Seidel iteration is solved exactly: a
frictionless unilateral row in closed form; a planar contact by enumerating separate, stick and
slip (+/-); a 3-D contact with an isotropic Coulomb cone by stick, else the sliding direction by
root finding on its angle. On Python floats or small numpy arrays; the compiled twins are in
:mod:`dodo_sim.physics.kernels` (``ncp``, ``contact_3d``).
"""
from __future__ import annotations

import math

import numpy as np


#: A planar contact block with det(G) <= this * G_NN * G_TT is treated as rank 1 (Cauchy-Schwarz
#: bounds det by G_NN G_TT; rounding leaves ~1e-16 of it for a truly rank-1 block).
SINGULAR_CONTACT_RATIO = 1e-12
#: An eigenvalue of a singular 3-D contact block below this fraction of its largest is a null
#: direction (minimum_norm_stick_3d).
NULL_EIGENVALUE_RATIO = 1e-6


def solve_unilateral(g: float, b: float) -> float:
    """0 <= lambda ⟂ g lambda + b >= 0 for g > 0."""
    return -b / g if b < 0.0 else 0.0


def solve_contact_2d(g_nn, g_nt, g_tn, g_tt, b_n, b_t, mu):
    """
    Exact solution of a planar point contact: enumerate separate, stick, slip (+/-).

    Returns (lambda_N, lambda_T, ok). With G positive definite a solution exists; if several do
    (mu |G_NT| / G_NN large), the first of separate, stick, slip against the stick force's sense
    is returned. ``ok`` is False only if no mode is consistent (rounding at a mode boundary).
    """
    if b_n >= 0.0:
        return 0.0, 0.0, True
    det = g_nn * g_tt - g_nt * g_tn
    if det <= SINGULAR_CONTACT_RATIO * g_nn * g_tt:
        # rank-1 block (a 1-DoF robot, or a leg whose contact point can move along one line
        # only): stopping the normal motion stops the tangential one too, so the normal push
        # alone (inside every cone) is a solution; the stick solve would divide by zero
        lam_n = -b_n / g_nn
        if abs(g_tn * lam_n + b_t) <= 1e-9 * (abs(b_t) + abs(b_n)):
            return lam_n, 0.0, True
        det = math.inf  # no stick solution to enumerate: try the slip modes
    lam_n = (g_nt * b_t - g_tt * b_n) / det
    lam_t = (g_tn * b_n - g_nn * b_t) / det
    if lam_n >= 0.0 and abs(lam_t) <= mu * lam_n:
        return lam_n, lam_t, True
    # slip with tangential velocity sense s and friction -s mu lambda_N; try the sense the stick
    # force could not hold first
    first = -1.0 if lam_t > 0.0 else 1.0
    scale = abs(b_t) + abs(b_n)
    for s in (first, -first):
        den = g_nn - s * mu * g_nt
        if den <= 0.0:
            continue
        ln = -b_n / den
        u_t = (g_tn - s * mu * g_tt) * ln + b_t
        if s * u_t >= -1e-14 * scale:
            return ln, -s * mu * ln, True
    # no consistent mode: return the stick solution projected on the cone (residual shows it)
    lam_n = max(lam_n, 0.0)
    return lam_n, min(max(lam_t, -mu * lam_n), mu * lam_n), False


def _slip_3d(g, b, mu, d):
    """lambda_N, lambda_T, u_T for sliding direction d (friction -mu lambda_N d)."""
    den = g[0, 0] - mu * (g[0, 1] * d[0] + g[0, 2] * d[1])
    if den <= 0.0:
        return None
    lam_n = -b[0] / den
    lam_t = -mu * lam_n * d
    u_t = g[1:, 0] * lam_n + g[1:, 1:] @ lam_t + b[1:]
    return lam_n, lam_t, u_t


def solve_contact_3d(g: np.ndarray, b: np.ndarray, mu: float):
    """
    Exact solution of a 3-D point contact with an isotropic Coulomb cone.

    Separate if b_N >= 0; stick if -G^-1 b lies in the cone; else slide in the direction d where
    u_T(d) is parallel to d (found by a fixed-point iteration, or by bracketing the angle and
    Brent's method). A singular block (:func:`singular_contact_3d`) sticks with its least-norm
    impulse in the cone (:func:`minimum_norm_stick_3d`), else slides the same way. Returns
    (lambda (3,), ok).
    """
    if b[0] >= 0.0 or not g[0, 0] > 0.0:   # separating, or a point that cannot move normally
        return np.zeros(3), True
    if singular_contact_3d(g):
        lam, inside = minimum_norm_stick_3d(g, b, mu)
        if inside:
            return lam, True
    else:
        lam = np.linalg.solve(g, -b)
        if lam[0] >= 0.0 and math.hypot(lam[1], lam[2]) <= mu * lam[0]:
            return lam, True
    if mu == 0.0:
        return np.array((-b[0] / g[0, 0], 0.0, 0.0)), True
    norm = math.hypot(lam[1], lam[2])
    d = -lam[1:] / norm if norm > 0.0 else np.array((1.0, 0.0))
    scale = float(np.abs(b).sum())
    for _ in range(30):  # fixed point d <- u_T(d)/|u_T(d)|: converges in a few steps near isotropy
        out = _slip_3d(g, b, mu, d)
        if out is None:
            break
        lam_n, lam_t, u_t = out
        speed = math.hypot(u_t[0], u_t[1])
        if speed <= 1e-15 * scale:
            break
        d_new = u_t / speed
        if abs(d_new[0] * d[1] - d_new[1] * d[0]) <= 1e-15 and d_new @ d > 0.0:
            return np.array((lam_n, lam_t[0], lam_t[1])), True
        d = d_new
    return _slip_3d_bracketed(g, b, mu, lam)


def singular_contact_3d(g) -> bool:
    """
    Return whether a 3-D contact block is singular (rank < 3, up to rounding).

    Hadamard's inequality bounds det(G) by G_NN G_T1T1 G_T2T2 for a positive semi-definite G;
    a ratio below ``SINGULAR_CONTACT_RATIO`` (then its smallest eigenvalue is below 1e-6 of its
    largest) is rank deficient: a point that cannot move along some direction (the upper arm of
    a fixed-base arm, a link next to the root, a wrist whose axes align).
    """
    g00, g01, g02 = float(g[0, 0]), float(g[0, 1]), float(g[0, 2])
    g10, g11, g12 = float(g[1, 0]), float(g[1, 1]), float(g[1, 2])
    g20, g21, g22 = float(g[2, 0]), float(g[2, 1]), float(g[2, 2])
    det = (g00 * (g11 * g22 - g12 * g21) - g01 * (g10 * g22 - g12 * g20)
           + g02 * (g10 * g21 - g11 * g20))
    return det <= SINGULAR_CONTACT_RATIO * g00 * g11 * g22


def minimum_norm_stick_3d(g: np.ndarray, b: np.ndarray, mu: float):
    """
    Return the sticking impulse of least norm of a singular 3-D contact: (lambda, in the cone).

    The stick solutions of G lambda = -b (b lies in G's range: a point's velocity is W v) are
    lambda_p + N t, lambda_p the pseudo-inverse solution and N G's null directions (eigenvalues
    <= ``NULL_EIGENVALUE_RATIO`` of the largest; the smallest always, the singular test implies
    it is below 1e-6 of the largest): impulses the robot's structure carries without moving.
    Of those inside the Coulomb cone, the one of least norm: lambda_p itself; else, with one null
    direction n, the point where the line lambda_p + t n enters the cone nearest to lambda_p (a
    root of mu^2 lambda_N(t)^2 = |lambda_T(t)|^2, put on the cone surface); with two (the point
    moves along one line a: a . lambda = c), lambda_N (1, mu a_T / |a_T|), lambda_N = c /
    (a_N + mu |a_T|). ``in the cone`` is False when no stick solution lies in the cone (the
    contact slides); lambda is then lambda_p. docs/physics.md "Degenerate contacts".
    """
    moments, modes = np.linalg.eigh(g)
    top = float(moments[2])
    if not top > 0.0:          # the point cannot move: no impulse acts on the robot
        return np.zeros(3), True
    ranked = [i for i in (1, 2) if moments[i] > NULL_EIGENVALUE_RATIO * top]
    lam = np.zeros(3)
    for i in ranked:
        lam -= (modes[:, i] @ b / moments[i]) * modes[:, i]
    if _in_cone(lam, mu):
        return lam, True
    if len(ranked) == 2:
        inside = _line_enters_cone(lam, modes[:, 0], mu)
    else:
        inside = _plane_touches_cone(modes[:, 2], float(modes[:, 2] @ lam), mu)
    return (inside, True) if inside is not None else (lam, False)


def _in_cone(lam, mu) -> bool:
    return lam[0] >= 0.0 and math.hypot(lam[1], lam[2]) <= mu * lam[0]


def _on_cone(lam, mu):
    """Return lambda with its tangential part scaled onto the cone's surface (rounding)."""
    out = np.array((max(float(lam[0]), 0.0), float(lam[1]), float(lam[2])))
    norm = math.hypot(out[1], out[2])
    if norm > mu * out[0]:
        out[1:] *= mu * out[0] / norm
    return out


def _line_enters_cone(p, n, mu):
    """Return the point of {p + t n} in the Coulomb cone nearest to p (least |t|), or None."""
    a = mu * mu * n[0] * n[0] - n[1] * n[1] - n[2] * n[2]
    half_b = mu * mu * p[0] * n[0] - p[1] * n[1] - p[2] * n[2]
    c = mu * mu * p[0] * p[0] - p[1] * p[1] - p[2] * p[2]
    if abs(a) <= 1e-12 * (mu * mu + 1.0):
        roots = [-c / (2.0 * half_b)] if half_b != 0.0 else []
    else:
        disc = half_b * half_b - a * c
        if disc < 0.0:
            return None
        root = math.sqrt(disc)
        roots = [(-half_b - root) / a, (-half_b + root) / a]
    best = None
    for t in roots:
        if p[0] + t * n[0] >= 0.0 and (best is None or abs(t) < abs(best)):
            best = t
    return None if best is None else _on_cone(p + best * n, mu)


def _plane_touches_cone(a, c, mu):
    """Return the least-norm lambda in the cone with a . lambda = c (a unit), or None."""
    if c < 0.0:
        a, c = -a, -c
    across = math.hypot(a[1], a[2])
    den = a[0] + mu * across
    if not den > 0.0:
        return None
    lam_n = c / den
    if across == 0.0:
        return np.array((lam_n, 0.0, 0.0))
    return np.array((lam_n, mu * lam_n * a[1] / across, mu * lam_n * a[2] / across))


#: Relative tolerance of the slip-angle root: the smallest scipy.optimize.brentq accepts.
_BRENT_RTOL = 4.0 * np.finfo(float).eps


def _slip_3d_bracketed(g, b, mu, stick):
    """
    Slide of a 3-D contact found by bracketing the angle of its direction, then Brent.

    ``stick``: the stick impulse tried first (G^-1 (-b), or the singular block's least-norm one),
    projected on the cone when no slide is found. Returns (lambda, ok).
    """
    def cross(phi):
        d = np.array((math.cos(phi), math.sin(phi)))
        out = _slip_3d(g, b, mu, d)
        if out is None:
            return None, None
        lam_n, lam_t, u_t = out
        return u_t[0] * d[1] - u_t[1] * d[0], u_t @ d

    from scipy.optimize import brentq
    angles = np.linspace(0.0, 2.0 * math.pi, 49)
    values = [cross(a) for a in angles]
    best = None
    for k in range(len(angles) - 1):
        f0, f1 = values[k][0], values[k + 1][0]
        if f0 is None or f1 is None or f0 * f1 > 0.0:
            continue

        def crossing(a):
            value = cross(a)[0]
            if value is None:   # no sliding solution in this direction: not a root
                raise ValueError('no slip solution inside the bracket')
            return value

        try:
            # rtol: Brent's method needs at least 4 machine epsilons
            phi = brentq(crossing, angles[k], angles[k + 1], xtol=1e-15, rtol=_BRENT_RTOL)
        except ValueError:
            continue
        d = np.array((math.cos(phi), math.sin(phi)))
        lam_n, lam_t, u_t = _slip_3d(g, b, mu, d)
        if lam_n >= 0.0 and u_t @ d >= 0.0:
            return np.array((lam_n, lam_t[0], lam_t[1])), True
        if best is None:
            best = np.array((max(lam_n, 0.0), lam_t[0], lam_t[1]))
    lam = stick.copy()
    lam[0] = max(lam[0], 0.0)
    norm = math.hypot(lam[1], lam[2])
    if norm > mu * lam[0]:
        lam[1:] *= mu * lam[0] / norm
    return (best if best is not None else lam), False


def residual_contact_2d(g_nn, g_nt, g_tn, g_tt, b_n, b_t, mu, lam_n, lam_t) -> float:
    """:func:`residual` of one planar contact block, on Python floats."""
    u_n = g_nn * lam_n + g_nt * lam_t + b_n
    u_t = g_tn * lam_n + g_tt * lam_t + b_t
    worst = abs(min(lam_n * g_nn, u_n))
    rho = 1.0 / max(g_tt, 1e-300)
    z = lam_t - rho * u_t
    radius = mu * max(lam_n, 0.0)
    proj = z if abs(z) <= radius else math.copysign(radius, z)
    return max(worst, abs(lam_t - proj) / rho)


__all__ = ['solve_unilateral', 'solve_contact_2d', 'solve_contact_3d', 'residual_contact_2d',
           'singular_contact_3d', 'minimum_norm_stick_3d', 'SINGULAR_CONTACT_RATIO',
           'NULL_EIGENVALUE_RATIO']
