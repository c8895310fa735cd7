# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
Stance: support-consistent dynamics, impact projection and the SLIP operational-space law.

Forms of docs/control.md (Hutter et al. 2010; the reports of Feng, Lehner & Lutze 2021 and
Schneyer & Kolb have typos in them):

* ``Λ_s = (J_s M⁻¹ J_sᵀ)⁻¹``, ``N_s = I − M⁻¹ J_sᵀ Λ_s J_s``; plastic impact ``q̇⁺ = N_s q̇⁻``.
* support-consistent dynamics ``M q̈ + N_sᵀ h + J_sᵀ Λ_s J̇_s q̇ = (S N_s)ᵀ τ``.
* stance law ``τ = J*ᵀ (Λ* a + μ* + p*)`` with ``J* = J_c M⁻¹ (S N_s)ᵀ [S N_s M⁻¹ (S N_s)ᵀ]⁺``,
  ``Λ* = (J_c M⁻¹ (S N_s)ᵀ J*ᵀ)⁻¹``, ``μ* = Λ* J_c M⁻¹ N_sᵀ b − Λ* J̇_c q̇
  + Λ* J_c M⁻¹ J_sᵀ Λ_s J̇_s q̇``, ``p* = Λ* J_c M⁻¹ N_sᵀ g``.

For this leg (2 actuators, 2-D CoG task) the law equals solving ``J_c q̈ + J̇_c q̇ = a`` for τ with
q̈ from the support-consistent dynamics (:func:`slip_torque`, used at run time);
:func:`slip_torque_osc` is the operational-space form, kept to show the two agree (unit test).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .compiled import compiled, compiled_inline
from .dynamics import (DJC, DJF, DJS, inv2, JC, JF, JS, MINV, MINV_H, SELECTION, solve2,
                       Terms)

_EYE4 = np.eye(4)
_EYE4.flags.writeable = False


@dataclass(frozen=True)
class SupportProjection:
    """Support quantities at one state: Λ_s (2x2), N_s (4x4), S N_s (2x4)."""

    Lambda_s: np.ndarray
    N_s: np.ndarray
    SN_s: np.ndarray


def support_projection(terms: Terms) -> SupportProjection:
    Js, Minv = terms.Js, terms.Minv
    MinvJsT = Minv @ Js.T
    Lambda_s = inv2(Js @ MinvJsT)
    N_s = _EYE4 - MinvJsT @ Lambda_s @ Js
    return SupportProjection(Lambda_s=Lambda_s, N_s=N_s, SN_s=SELECTION @ N_s)


def impact_velocity(terms: Terms, v_minus, proj: SupportProjection | None = None) -> np.ndarray:
    """Generalised velocity after a plastic, sticking foot impact: q̇⁺ = N_s q̇⁻."""
    proj = proj or support_projection(terms)
    return proj.N_s @ np.asarray(v_minus, dtype=float)


def impact_energy_loss(terms: Terms, v_minus, mass: float,
                       proj: SupportProjection | None = None) -> float:
    """
    Return the CoG kinetic energy lost at the impact (SLIPic), J.

    ΔE = ½ m q̇⁻ᵀ (J_cᵀ J_c − N_sᵀ J_cᵀ J_c N_s) q̇⁻ = ½ m (|J_c q̇⁻|² − |J_c N_s q̇⁻|²).
    """
    proj = proj or support_projection(terms)
    v_minus = np.asarray(v_minus, dtype=float)
    JcN = terms.Jc @ proj.N_s
    quad = terms.Jc.T @ terms.Jc - JcN.T @ JcN
    return float(0.5 * mass * v_minus @ quad @ v_minus)


def support_consistent_acceleration(terms: Terms, tau,
                                    proj: SupportProjection | None = None) -> np.ndarray:
    """q̈ from M q̈ + N_sᵀ h + J_sᵀ Λ_s J̇_s q̇ = (S N_s)ᵀ τ."""
    proj = proj or support_projection(terms)
    rhs = (proj.SN_s.T @ np.asarray(tau, dtype=float) - proj.N_s.T @ terms.h
           - terms.Js.T @ proj.Lambda_s @ terms.dJs_v)
    return terms.Minv @ rhs


def slip_torque(terms: Terms, accel_des, proj: SupportProjection | None = None) -> np.ndarray:
    """
    [hip, knee] torques (N*m) giving the CoG acceleration ``accel_des`` (m/s^2) in stance.

    r̈ = J_c q̈ + J̇_c q̇ with q̈ from the support-consistent dynamics is affine in τ:
    r̈ = A τ + c, A = J_c M⁻¹ (S N_s)ᵀ; solved exactly (A is 2x2, regular away from the
    stretched-leg singularity).
    """
    proj = proj or support_projection(terms)
    Minv = terms.Minv
    A = terms.Jc @ Minv @ proj.SN_s.T
    c = terms.dJc_v - terms.Jc @ Minv @ (proj.N_s.T @ terms.h
                                         + terms.Js.T @ proj.Lambda_s @ terms.dJs_v)
    return solve2(A, np.asarray(accel_des, dtype=float) - c)


def slip_torque_osc(terms: Terms, accel_des, proj: SupportProjection | None = None) -> np.ndarray:
    """Return the operational-space form τ = J*ᵀ (Λ* a + μ* + p*) of docs/control.md."""
    proj = proj or support_projection(terms)
    Minv, Jc, SN = terms.Minv, terms.Jc, proj.SN_s
    b = terms.h - terms.g
    phi = SN @ Minv @ SN.T
    J_star = Jc @ Minv @ SN.T @ np.linalg.pinv(phi)
    Lambda_star = np.linalg.inv(Jc @ Minv @ SN.T @ J_star.T)
    mu_star = (Lambda_star @ Jc @ Minv @ proj.N_s.T @ b - Lambda_star @ terms.dJc_v
               + Lambda_star @ Jc @ Minv @ terms.Js.T @ proj.Lambda_s @ terms.dJs_v)
    p_star = Lambda_star @ Jc @ Minv @ proj.N_s.T @ terms.g
    force = Lambda_star @ np.asarray(accel_des, dtype=float) + mu_star + p_star
    return J_star.T @ force


def flight_foot_torque(terms: Terms, rel_accel_des) -> np.ndarray:
    """
    [hip, knee] torques giving the foot-relative-to-CoG acceleration ``rel_accel_des`` in flight.

    In flight M q̈ + h = Sᵀ τ; the foot-minus-CoG point has jacobian J_r = J_f − J_c (the foot's
    task jacobian J_f is J_s on the hopper, where the base columns of J_r vanish) and
    p̈_r = J_r q̈ + (J̇_f − J̇_c) q̇, affine in τ and solved exactly.
    """
    Jr = terms.foot_jacobian - terms.Jc
    A = Jr @ terms.Minv @ SELECTION.T
    c = terms.foot_drift - terms.dJc_v - Jr @ terms.Minv @ terms.h
    return solve2(A, np.asarray(rel_accel_des, dtype=float) - c)


# -- the control tick's fast path: the same laws on the tick terms, in scalar arithmetic ------

def _solve2(a00, a01, a10, a11, b0, b1) -> tuple[float, float]:
    det = a00 * a11 - a01 * a10
    if abs(det) <= 1e-13 * max(abs(a00 * a11), abs(a01 * a10), 1e-300):
        raise np.linalg.LinAlgError('singular 2x2 system')
    return (a11 * b0 - a01 * b1) / det, (a00 * b1 - a10 * b0) / det


_solve2 = compiled_inline(_solve2)


def slip_torque_tick(terms, ax: float, az: float) -> tuple[float, float]:
    """
    :func:`slip_torque` on the tick terms (same law, scalar arithmetic), N*m.

    ``terms``: the float array of :data:`.dynamics.TERMS_SIZE` (:meth:`.dynamics.RobotDynamics.
    tick_terms_into`; ``TickTerms.values``). With W = M⁻¹ J_sᵀ and Λ_s = (J_s W)⁻¹:
    A = J_c M⁻¹ (S N_s)ᵀ = J_c M⁻¹ Sᵀ − (J_c W) Λ_s (S W)ᵀ and c = J̇_c q̇ + J_c q̈₀ with the
    zero-torque support-consistent acceleration q̈₀ = −M⁻¹ h − W Λ_s (J_s (−M⁻¹ h) + J̇_s q̇).
    Compiled (the control tick calls it).
    """
    c0, c1, c2, c3 = terms[JC], terms[JC + 1], terms[JC + 2], terms[JC + 3]
    d0, d1, d2, d3 = terms[JC + 4], terms[JC + 5], terms[JC + 6], terms[JC + 7]
    s0, s1, s2, s3 = terms[JS], terms[JS + 1], terms[JS + 2], terms[JS + 3]
    t0, t1, t2, t3 = terms[JS + 4], terms[JS + 5], terms[JS + 6], terms[JS + 7]
    m00, m01, m02, m03 = terms[MINV], terms[MINV + 1], terms[MINV + 2], terms[MINV + 3]
    m10, m11, m12, m13 = terms[MINV + 4], terms[MINV + 5], terms[MINV + 6], terms[MINV + 7]
    m20, m21, m22, m23 = terms[MINV + 8], terms[MINV + 9], terms[MINV + 10], terms[MINV + 11]
    m30, m31, m32, m33 = terms[MINV + 12], terms[MINV + 13], terms[MINV + 14], terms[MINV + 15]
    # W = M⁻¹ J_sᵀ, 4x2
    w00, w01 = m00 * s0 + m01 * s1 + m02 * s2 + m03 * s3, m00 * t0 + m01 * t1 + m02 * t2 + m03 * t3
    w10, w11 = m10 * s0 + m11 * s1 + m12 * s2 + m13 * s3, m10 * t0 + m11 * t1 + m12 * t2 + m13 * t3
    w20, w21 = m20 * s0 + m21 * s1 + m22 * s2 + m23 * s3, m20 * t0 + m21 * t1 + m22 * t2 + m23 * t3
    w30, w31 = m30 * s0 + m31 * s1 + m32 * s2 + m33 * s3, m30 * t0 + m31 * t1 + m32 * t2 + m33 * t3
    g00 = s0 * w00 + s1 * w10 + s2 * w20 + s3 * w30
    g01 = s0 * w01 + s1 * w11 + s2 * w21 + s3 * w31
    g10 = t0 * w00 + t1 * w10 + t2 * w20 + t3 * w30
    g11 = t0 * w01 + t1 * w11 + t2 * w21 + t3 * w31
    det = g00 * g11 - g01 * g10
    if abs(det) <= 1e-13 * max(abs(g00 * g11), abs(g01 * g10), 1e-300):
        raise np.linalg.LinAlgError('singular 2x2 matrix')
    l00, l01, l10, l11 = g11 / det, -g01 / det, -g10 / det, g00 / det       # Λ_s
    # J_c W (2x2) and J_c M⁻¹ Sᵀ (2x2)
    cw00 = c0 * w00 + c1 * w10 + c2 * w20 + c3 * w30
    cw01 = c0 * w01 + c1 * w11 + c2 * w21 + c3 * w31
    cw10 = d0 * w00 + d1 * w10 + d2 * w20 + d3 * w30
    cw11 = d0 * w01 + d1 * w11 + d2 * w21 + d3 * w31
    cm00 = c0 * m02 + c1 * m12 + c2 * m22 + c3 * m32
    cm01 = c0 * m03 + c1 * m13 + c2 * m23 + c3 * m33
    cm10 = d0 * m02 + d1 * m12 + d2 * m22 + d3 * m32
    cm11 = d0 * m03 + d1 * m13 + d2 * m23 + d3 * m33
    # (J_c W) Λ_s
    p00, p01 = cw00 * l00 + cw01 * l10, cw00 * l01 + cw01 * l11
    p10, p11 = cw10 * l00 + cw11 * l10, cw10 * l01 + cw11 * l11
    # A = J_c M⁻¹ Sᵀ − (J_c W Λ_s) (S W)ᵀ, rows of S W are W's rows 2, 3
    a00 = cm00 - (p00 * w20 + p01 * w21)
    a01 = cm01 - (p00 * w30 + p01 * w31)
    a10 = cm10 - (p10 * w20 + p11 * w21)
    a11 = cm11 - (p10 * w30 + p11 * w31)
    f0, f1, f2, f3 = (terms[MINV_H], terms[MINV_H + 1], terms[MINV_H + 2],
                      terms[MINV_H + 3])                # q̈_free = −M⁻¹ h
    js0 = -(s0 * f0 + s1 * f1 + s2 * f2 + s3 * f3) + terms[DJS]
    js1 = -(t0 * f0 + t1 * f1 + t2 * f2 + t3 * f3) + terms[DJS + 1]
    e0 = -(c0 * f0 + c1 * f1 + c2 * f2 + c3 * f3) - (p00 * js0 + p01 * js1)
    e1 = -(d0 * f0 + d1 * f1 + d2 * f2 + d3 * f3) - (p10 * js0 + p11 * js1)
    return _solve2(a00, a01, a10, a11, ax - terms[DJC] - e0, az - terms[DJC + 1] - e1)


slip_torque_tick = compiled(slip_torque_tick)


def flight_foot_torque_tick(terms, ax: float, az: float) -> tuple[float, float]:
    """:func:`flight_foot_torque` on the tick terms (same law in scalars), N*m; compiled."""
    c0, c1, c2, c3 = terms[JC], terms[JC + 1], terms[JC + 2], terms[JC + 3]
    d0, d1, d2, d3 = terms[JC + 4], terms[JC + 5], terms[JC + 6], terms[JC + 7]
    s0, s1, s2, s3 = terms[JF], terms[JF + 1], terms[JF + 2], terms[JF + 3]
    t0, t1, t2, t3 = terms[JF + 4], terms[JF + 5], terms[JF + 6], terms[JF + 7]
    r0, r1, r2, r3 = s0 - c0, s1 - c1, s2 - c2, s3 - c3      # J_r = J_f − J_c
    u0, u1, u2, u3 = t0 - d0, t1 - d1, t2 - d2, t3 - d3
    m02, m03 = terms[MINV + 2], terms[MINV + 3]
    m12, m13 = terms[MINV + 6], terms[MINV + 7]
    m22, m23 = terms[MINV + 10], terms[MINV + 11]
    m32, m33 = terms[MINV + 14], terms[MINV + 15]
    a00 = r0 * m02 + r1 * m12 + r2 * m22 + r3 * m32
    a01 = r0 * m03 + r1 * m13 + r2 * m23 + r3 * m33
    a10 = u0 * m02 + u1 * m12 + u2 * m22 + u3 * m32
    a11 = u0 * m03 + u1 * m13 + u2 * m23 + u3 * m33
    f0, f1, f2, f3 = (terms[MINV_H], terms[MINV_H + 1], terms[MINV_H + 2],
                      terms[MINV_H + 3])
    b0 = ax - (terms[DJF] - terms[DJC] - (r0 * f0 + r1 * f1 + r2 * f2 + r3 * f3))
    b1 = az - (terms[DJF + 1] - terms[DJC + 1] - (u0 * f0 + u1 * f1 + u2 * f2 + u3 * f3))
    return _solve2(a00, a01, a10, a11, b0, b1)


flight_foot_torque_tick = compiled(flight_foot_torque_tick)
