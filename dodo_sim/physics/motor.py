# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
Joint motor model: torque saturation, torque dynamics and rotor inertia.

The saturation is static, or the back-EMF torque-speed limit of a geared DC motor; the torque
dynamics are first order; the rotor inertia is reflected through the gear. These are the
``isControlSaturate`` and ``isMotorDynamics`` options of the boom hopping-leg simulator of Ding &
Ramos, UIUC (docs/physics.md "Motors").

Back-EMF limit of a DC motor behind a gear of ratio G (joint speed q̇, rotor speed G q̇), fed
from a supply of V volts through its winding resistance R: the largest current is
(V − K_e G |q̇|)/R, so the largest joint torque is

    τ_max(q̇) = clip(G K_t (V − K_e G |q̇|) / R, 0, τ_peak)

(K_t torque constant, K_e back-EMF constant; τ_peak the stall/peak torque) along the motion
(motoring: τ q̇ >= 0). It falls linearly from G K_t V / R at rest to 0 at the no-load speed
V / (K_e G) and stays 0 above it. Against the motion (braking) the supply adds to the back-EMF:
|τ| <= clip(G K_t (V + K_e G |q̇|) / R, 0, τ_peak) — the braking quadrants of Ding & Ramos'
torque-speed polytope |a q̇ + τ| <= b, |τ| <= τ_peak (:meth:`BackEmfLimit.bounds`).

Rotor inertia: a rotor of inertia J_rotor turning G times as fast as its joint adds G² J_rotor to
that joint's diagonal of the mass matrix (pinocchio's ``model.armature``; :func:`armature`).
"""
from __future__ import annotations

from dataclasses import dataclass
import math

import numpy as np

#: Ding & Ramos' motors (get_params.m of their boom hopping-leg simulator): hip and knee gear
#: ratios, rotor inertia kg*m^2, winding resistance ohm, torque constant N*m/A, back-EMF
#: ("speed") constant V*s/rad, supply voltage V (their "12V" saturation).
DING_RAMOS_GEAR_RATIOS = (26.9, 28.8)
DING_RAMOS_ROTOR_INERTIA_KGM2 = 7e-6
DING_RAMOS_RESISTANCE_OHM = 1.3
DING_RAMOS_TORQUE_CONSTANT_NM_PER_A = 0.0135
DING_RAMOS_BACK_EMF_CONSTANT_V_S_PER_RAD = 0.0186
DING_RAMOS_SUPPLY_VOLTAGE_V = 12.0


@dataclass(frozen=True)
class BackEmfLimit:
    """
    Electrical parameters of the actuated joints' motors (arrays, one value per joint).

    Fields:
        gear_ratio: G, rotor turns per joint turn (-).
        torque_constant: K_t, N*m/A.
        back_emf_constant: K_e, V*s/rad.
        supply_voltage: V, volts.
        resistance: R, ohm.
        peak_torque: joint-side stall/peak torque cap, N*m.
    """

    gear_ratio: np.ndarray
    torque_constant: np.ndarray
    back_emf_constant: np.ndarray
    supply_voltage: np.ndarray
    resistance: np.ndarray
    peak_torque: np.ndarray

    def limit(self, joint_speed) -> np.ndarray:
        """τ_max(q̇) of each joint (module docstring): the torque bound along the motion, N*m."""
        g = self.gear_ratio
        current = (self.supply_voltage - self.back_emf_constant * g * np.abs(joint_speed)) \
            / self.resistance
        return np.clip(g * self.torque_constant * current, 0.0, self.peak_torque)

    def bounds(self, joint_speed) -> tuple[np.ndarray, np.ndarray]:
        """
        (lower, upper) joint torque bounds at q̇, N*m.

        Along the motion (motoring) |τ| <= τ_max(q̇); against it (braking) the supply adds to the
        back-EMF, |τ| <= clip(G K_t (V + K_e G |q̇|) / R, 0, τ_peak) — the braking quadrants of
        Ding & Ramos' torque-speed polytope.
        """
        w = np.asarray(joint_speed, dtype=float)
        g, k = self.gear_ratio, self.gear_ratio * self.torque_constant / self.resistance
        emf = self.back_emf_constant * g * w
        upper = np.clip(k * (self.supply_voltage - emf), 0.0, self.peak_torque)
        lower = -np.clip(k * (self.supply_voltage + emf), 0.0, self.peak_torque)
        return lower, upper

    def no_load_speed(self) -> np.ndarray:
        """Joint speed at which τ_max reaches 0, V / (K_e G), rad/s (inf for K_e = 0)."""
        with np.errstate(divide='ignore'):
            return self.supply_voltage / (self.back_emf_constant * self.gear_ratio)


def armature(gear_ratio, rotor_inertia_kgm2) -> np.ndarray:
    """Reflected rotor inertia G² J_rotor of each joint, kg*m^2."""
    g = np.asarray(gear_ratio, dtype=float)
    return g * g * np.asarray(rotor_inertia_kgm2, dtype=float)


class MotorModel:
    """
    Turns commanded joint torques into applied torques, one physics step at a time.

    Inputs:
        torque_limits: |tau| bound of each actuated joint (N*m), or None for no saturation.
        time_constant_s: first-order lag T of the torque (s); 0 applies commands at once.
        size: number of actuated joints (defaults to the length of ``torque_limits``, else 2).
        back_emf: the back-EMF torque-speed limit (:class:`BackEmfLimit`), applied on top of
            ``torque_limits``; None: static limits only.
        speed_index: velocity indices of the actuated joints in ``v`` (needed with back_emf).

    The saturation acts on the command (before the lag), with the joint speeds at the start
    of the physics step.
    """

    def __init__(self, torque_limits: np.ndarray | None, time_constant_s: float,
                 size: int | None = None, back_emf: BackEmfLimit | None = None,
                 speed_index=None):
        self.torque_limits = None if torque_limits is None else np.asarray(torque_limits, float)
        if size is None:
            size = 2 if self.torque_limits is None else len(self.torque_limits)
        self.size = size
        self.time_constant_s = time_constant_s
        self.back_emf = back_emf
        self.speed_index = None if speed_index is None else np.asarray(speed_index, int)
        if back_emf is not None and self.speed_index is None:
            raise ValueError('MotorModel: back_emf needs speed_index')
        self.applied = np.zeros(size)

    def reset(self) -> None:
        self.applied = np.zeros(self.size)

    def advance(self, command: np.ndarray, dt: float, v: np.ndarray | None = None) -> np.ndarray:
        """
        Return the applied torque, held over the next physics step of length dt (N*m).

        ``v``: the generalised velocity at the start of the step (read with a back-EMF limit).

        The lag is integrated exactly for a command held over the step (zero-order hold).
        """
        if self.torque_limits is None and self.time_constant_s == 0.0 and self.back_emf is None:
            self.applied = command
            return command
        target = command
        if self.torque_limits is not None:
            target = np.clip(command, -self.torque_limits, self.torque_limits)
        if self.back_emf is not None:
            lower, upper = self.back_emf.bounds(np.asarray(v, float)[self.speed_index])
            target = np.clip(target, lower, upper)
        if self.time_constant_s > 0.0:
            blend = 1.0 - math.exp(-dt / self.time_constant_s)
            self.applied = self.applied + blend * (target - self.applied)
        else:
            self.applied = target
        return self.applied
