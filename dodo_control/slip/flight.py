# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
Flight: position PI -> velocity set-point -> angle of attack -> posture (foot placement).

All loops except the posture controller are updated once per hop, at the apex event
(Feng, Lehner & Lutze 2021, sections 4.3-4.5; docs/control.md). Sign convention of α: see
:mod:`.slip`
(positive = foot ahead of the CoG). A foot further ahead brakes, so the velocity loop reads
``α = K_c·v + K_p·(v − v_set) + K_i·Σ(v − v_set)`` — eq. (20) of Feng, Lehner & Lutze 2021 with
its error sign
flipped to match this α convention.
"""
from __future__ import annotations

import math

import numpy as np


class PositionLoop:
    """
    v_set = sat(v_ff + K_p e + K_i Σ e Δt) with anti-windup.

    ``e`` is the CoG x error (m), ``Δt`` the time since the previous update (s); the output is
    saturated at ±``max_speed`` (m/s, Feng, Lehner & Lutze 2021 eq. 23). The integral only grows
    while |e| is
    below ``integral_band`` (m; integral separation: the long approach to a far target does not
    wind it up) and the output is unsaturated or the error drives it back out of saturation.
    """

    def __init__(self, kp: float, ki: float, max_speed: float, integral_band: float = math.inf):
        self.kp, self.ki, self.max_speed = kp, ki, max_speed
        self.integral_band = integral_band
        self.integral = 0.0

    def reset(self) -> None:
        self.integral = 0.0

    def update(self, error: float, dt: float, feedforward: float = 0.0) -> float:
        """v_set = sat(v_ff + K_p e + K_i Σ e Δt), m/s."""
        raw = feedforward + self.kp * error + self.ki * (self.integral + error * dt)
        saturated = abs(raw) > self.max_speed
        if abs(error) <= self.integral_band and (
                not saturated or math.copysign(1.0, error) != math.copysign(1.0, raw)):
            self.integral += error * dt
        out = feedforward + self.kp * error + self.ki * self.integral
        return float(np.clip(out, -self.max_speed, self.max_speed))


class VelocityLoop:
    """
    Velocity loop: α = K_c v + K_p (v − v_set) + K_i Σ (v − v_set), saturated at ±max_angle, rad.

    ``K_c v`` is the neutral angle (the one that keeps the speed); the caller may pass a better
    neutral angle (e.g. from the SLIP return map) instead.

    The sum runs once per hop. Anti-windup: it is frozen while α is saturated in the direction
    the error pushes, and while |v − v_set| exceeds ``integral_band`` (m/s; integral separation:
    large transients, e.g. a push or a saturated position loop, do not wind it up).
    """

    def __init__(self, kc: float, kp: float, ki: float, max_angle: float,
                 integral_band: float = math.inf):
        self.kc, self.kp, self.ki, self.max_angle = kc, kp, ki, max_angle
        self.integral_band = integral_band
        self.integral = 0.0

    def reset(self) -> None:
        self.integral = 0.0

    def update(self, velocity: float, velocity_set: float, neutral: float | None = None) -> float:
        """
        Return α for the next touchdown (rad).

        ``neutral`` replaces the linear K_c v if given.
        """
        err = velocity - velocity_set
        base = (self.kc * velocity if neutral is None else neutral) + self.kp * err
        trial = base + self.ki * (self.integral + err)
        if abs(err) <= self.integral_band and (
                abs(trial) <= self.max_angle
                or math.copysign(1.0, trial) != math.copysign(1.0, err)):
            self.integral += err
        alpha = base + self.ki * self.integral
        return float(np.clip(alpha, -self.max_angle, self.max_angle))


def critically_damped_lead(a_s: float, period_s: float, fraction: float, kp: float) -> float:
    """
    Horizon L (s) of the position error e − L v for v_set = K_p (e − L v).

    Per hop (apex n -> n+1, period T) the CoG moves a v_n + (T − a) v_{n+1} and the velocity loop
    gets the fraction β of the way to its set-point, v_{n+1} = v_n + β (v_set − v_n). The hop map
    of (e, v) then has the double eigenvalue λ = 1 − √(K_p β T) (no overshoot) for
    L = a + (1 − β − λ²) / (β K_p); λ = 0 (deadbeat) once K_p β T >= 1. ``a_s`` is a (s),
    ``period_s`` T (s), ``fraction`` β in (0, 1], ``kp`` K_p (1/s, > 0).
    """
    lam = max(0.0, 1.0 - math.sqrt(kp * fraction * period_s))
    return a_s + (1.0 - fraction - lam * lam) / (fraction * kp)


def raibert_angle(velocity: float, velocity_set: float, stance_time_s: float,
                  touchdown_length: float, gain_s: float, max_angle: float) -> float:
    """Raibert foot placement as an angle: foot ahead of the CoG by v T_s/2 + k (v − v_set) (m)."""
    ahead = velocity * stance_time_s / 2.0 + gain_s * (velocity - velocity_set)
    s = float(np.clip(ahead / touchdown_length, -math.sin(max_angle), math.sin(max_angle)))
    return math.asin(s)


def foot_target(alpha: float, touchdown_length: float) -> tuple[float, float]:
    """
    Foot position relative to the SLIP point at touchdown, (x, z) in m.

    The foot is ``touchdown_length`` l from the SLIP point at angle of attack α (rad): l (sin α,
    −cos α). The flight posture aims at it; the return map starts its stance from it.
    """
    return touchdown_length * math.sin(alpha), -touchdown_length * math.cos(alpha)


def posture_acceleration(rel_x: float, rel_z: float, rel_vx: float, rel_vz: float,
                         target_x: float, target_z: float, kp: float,
                         kd: float) -> tuple[float, float]:
    """
    Flight posture PD on the foot relative to the SLIP point: desired relative acceleration.

    a = K_p (p_target − p_rel) − K_d ṗ_rel (m/s^2) with the foot's position ``rel_x``, ``rel_z``
    (m) and velocity ``rel_vx``, ``rel_vz`` (m/s) relative to the SLIP point, the target
    :func:`foot_target` (m), ``kp`` (1/s^2) and ``kd`` (1/s). The control tick calls it.
    """
    return (kp * (target_x - rel_x) - kd * rel_vx, kp * (target_z - rel_z) - kd * rel_vz)
