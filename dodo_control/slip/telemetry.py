# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""What the SLIP hopping controller reports after each tick (``Controller.telemetry``)."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class ControllerTelemetry:
    """
    Read-only snapshot after the last ``Controller.update`` (units in the names/docs).

    Fields:
        t: time of the update, s.       phase: 'flight' or 'stance'.
        hops: number of touchdowns so far.
        events: events of this tick ('touchdown', 'liftoff', 'apex').
        slip_leg_length_m: foot-to-CoG distance l, m.
        slip_rest_length_m: current rest length of the virtual spring, m.
        angle_of_attack_rad: flight: commanded touchdown angle; stance: the touchdown angle.
        target_x / target_velocity / apex_height: set-points (m, m/s, m).
        velocity_setpoint: velocity the flight policy aims at this hop (position loop output), m/s.
        last_apex_height_m: base height above the ground at the last apex, m.
        last_apex_velocity_mps: CoG horizontal velocity at the last apex, m/s.
        energy_injected_j: energy put into the virtual spring in the current/last stance (SLIPic
            pre-compression + apex regulation), J.
        impact_loss_j: predicted CoG kinetic energy lost at the last touchdown, J.
        com_position / com_velocity: CoG, world x-z, m and m/s.
        foot_position: world x-z, m.
        foot_target: flight: desired foot point (world x-z, m); stance: the foothold.
        slip_acceleration: stance: commanded CoG acceleration a (m/s^2); flight: NaN.
        leg_force_n: stance: SLIP leg force on the CoG (world x-z, N); flight: zeros.
        torque_saturated: the command was clipped at the effort limits.
    """

    t: float
    phase: str
    hops: int
    events: tuple
    slip_leg_length_m: float
    slip_rest_length_m: float
    angle_of_attack_rad: float
    target_x: float
    target_velocity: float
    apex_height: float
    velocity_setpoint: float
    last_apex_height_m: float
    last_apex_velocity_mps: float
    energy_injected_j: float
    impact_loss_j: float
    com_position: np.ndarray
    com_velocity: np.ndarray
    foot_position: np.ndarray
    foot_target: np.ndarray
    slip_acceleration: np.ndarray
    leg_force_n: np.ndarray
    torque_saturated: bool

    @classmethod
    def from_tick(cls, values: tuple) -> 'ControllerTelemetry':
        """Build from the tick's values in field order (the x-z points as tuples or lists)."""
        args = list(values)
        for i in range(15, 21):     # com_position ... leg_force: tuples/lists -> arrays
            args[i] = np.array(args[i], dtype=float)
        return cls(*args)
