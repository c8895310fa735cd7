# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
Bézier ground-reaction-force stance policy (Ding & Ramos, "Hopping Leg Simulator", UIUC).

In stance the leg pushes a force profile given as a Bézier polynomial of the normalised stance
time ``s = (t − t_touchdown) / T_st`` (clipped to [0, 1], ``T_st`` the nominal stance time),
through the foot jacobian relative to the hip, with a soft joint PD superimposed::

    F(s) = Σ_k α_k C(n, k) s^k (1 − s)^(n − k)           (their polyval_bz)
    τ = −J_relᵀ κ F(s) + K_p (q_d − q_a) − K_d q̇_a

``F = [F_x, F_z]`` is the desired ground reaction force on the foot in the task frame (forward,
up; N), ``J_rel`` the jacobian of the foot relative to the hip w.r.t. the actuated joints (the
task frame's J_f restricted to them), ``q_a`` the actuated joint angles. ``κ`` scales the
profile; a per-hop integral on the measured apex height adapts it (gain 0: the fixed profile of
Ding & Ramos). Stance ends when ``s`` reaches 1 (or the foot leaves the ground).
"""
from __future__ import annotations

import math


def bezier_value(coefficients, s: float) -> float:
    """
    Bernstein-form Bézier polynomial with ``coefficients`` α_0..α_n at ``s`` (clipped to [0, 1]).

    An empty tuple is 0.
    """
    n = len(coefficients) - 1
    if n < 0:
        return 0.0
    s = min(max(s, 0.0), 1.0)
    r = 1.0 - s
    return sum(a * math.comb(n, k) * s ** k * r ** (n - k) for k, a in enumerate(coefficients))


def stance_phase(t: float, touchdown_t: float, stance_time_s: float) -> float:
    """Normalised stance time s in [0, 1]."""
    return min(max((t - touchdown_t) / stance_time_s, 0.0), 1.0)


def bezier_torque(jf, force_x: float, force_z: float, joints, rates, target, kp: float,
                  kd: float) -> tuple[float, float]:
    """
    Return the joint torques τ = −J_relᵀ F + K_p (q_d − q_a) − K_d q̇_a, N*m.

    J_rel is columns 2, 3 of the foot's task jacobian ``jf`` (rows as sequences).
    """
    (_, _, a02, a03), (_, _, a12, a13) = jf
    tau0 = -(a02 * force_x + a12 * force_z) + kp * (target[0] - joints[0]) - kd * rates[0]
    tau1 = -(a03 * force_x + a13 * force_z) + kp * (target[1] - joints[1]) - kd * rates[1]
    return tau0, tau1


def adapt_scale(scale: float, apex_error_m: float, gain_per_m: float, max_scale: float) -> float:
    """Per-hop integral on the apex height error: κ ← clip(κ + gain e, 1/max, max)."""
    return min(max(scale + gain_per_m * apex_error_m, 1.0 / max_scale), max_scale)


__all__ = ['bezier_value', 'stance_phase', 'bezier_torque', 'adapt_scale']
