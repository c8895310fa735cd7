"""Stance: support-consistent dynamics, impact projection and the SLIP operational-space law.

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

from .dynamics import SELECTION, Terms, inv2, solve2


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
    """CoG kinetic energy lost at the impact (SLIPic), J.

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
    """[hip, knee] torques (N*m) giving the CoG acceleration ``accel_des`` (m/s^2) in stance.

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
    """The operational-space form τ = J*ᵀ (Λ* a + μ* + p*) of docs/control.md."""
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
    """[hip, knee] torques giving the foot-relative-to-CoG acceleration ``rel_accel_des`` in flight.

    In flight M q̈ + h = Sᵀ τ; the foot-minus-CoG point has jacobian J_r = J_s − J_c (its base
    columns vanish) and p̈_r = J_r q̈ + (J̇_s − J̇_c) q̇, affine in τ and solved exactly.
    """
    Jr = terms.Js - terms.Jc
    A = Jr @ terms.Minv @ SELECTION.T
    c = terms.dJs_v - terms.dJc_v - Jr @ terms.Minv @ terms.h
    return solve2(A, np.asarray(rel_accel_des, dtype=float) - c)
