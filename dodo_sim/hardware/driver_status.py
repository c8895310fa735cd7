# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
What the driver core reports (:class:`dodo_sim.hardware.driver.DriverCore`; no rclpy, no bus).

The measured :class:`Sample` of each cycle and the live status of the actuators, the sensor
board and the cycle's timing that the driver node's ``/diagnostics`` show.
"""
from __future__ import annotations

from dataclasses import dataclass, field
import math
from typing import NamedTuple

import numpy as np

from .config import actuator_error_name, ActuatorConfig
from .safety import SafetyState

#: Identical readings in a row before an actuator's reading counts as frozen: a live velocity
#: estimate jitters by a count or so, but two or three equal readings in a row are common, and
#: at a low cycle rate (a starved driver) a few of them span ``stuck_reading_time``.
MIN_FROZEN_CYCLES = 20


class Sample(NamedTuple):
    """
    The measured state after a cycle (joint side, every joint in ``joint_names`` order).

    Fields:
        t: the cycle's time (the ``now`` passed to :meth:`DriverCore.cycle`), s.
        q / v: positions (m, rad) and velocities; effort: measured torque (N*m, 0 on the boom).
        contact_force: foot force, world [x, z] N (zeros without a sensor).
        in_contact: foot switch closed or vertical force above ``contact_threshold``.
        fresh: every actuator and the board answered this cycle.
        state: the safety state after the cycle.
        watchdog: this cycle's frames carried the watchdog's safe law (the driver's own record
            of which cycles were tripped: a wall-clock window around a stalled controller is
            not, see docs/hardware.md "The 279 N*m").
    """

    t: float
    q: np.ndarray
    v: np.ndarray
    effort: np.ndarray
    contact_force: np.ndarray
    in_contact: bool
    fresh: bool
    state: SafetyState
    watchdog: bool = False


@dataclass
class ActuatorStatus:
    """Live status of one actuator (diagnostics)."""

    config: ActuatorConfig
    position: float = 0.0           # joint side
    velocity: float = 0.0
    torque: float = 0.0
    actuator_position: float = 0.0  # actuator side, rad (calibration reads this)
    temperature: float = math.nan
    error_code: int = 0
    replies: int = 0
    missed: int = 0
    consecutive_missed: int = 0
    missed_window: int = 0          # since the last diagnostics report
    counts: tuple | None = None
    frozen_for: float = 0.0         # s of identical readings in a row
    frozen_cycles: int = 0          # identical readings in a row

    @property
    def frozen_time(self) -> float:
        """
        Time in s the reading has been frozen.

        It stays 0 until MIN_FROZEN_CYCLES readings in a row have been identical.
        """
        return self.frozen_for if self.frozen_cycles >= MIN_FROZEN_CYCLES else 0.0
    motor_on: bool = False          # what the driver last told the actuator
    primed: bool = False            # zero command sent before the enable frame
    clearing: list = field(default_factory=list)    # clear_errors frames still to send
    clears: int = 0                 # clear_errors requests for this actuator
    soft_limited: bool = False
    mode: str = 'off'               # what the actuator was sent: off, damping or torque
    command_torque: float = 0.0     # joint side, N*m
    command_kd: float = 0.0         # joint side, N*m*s/rad

    @property
    def current(self) -> float:
        """Estimated current, A (torque / torque constant, actuator side)."""
        return abs(self.torque / self.config.gear_ratio) / self.config.torque_constant


@dataclass
class BoardStatus:
    """Live status of the sensor board (diagnostics)."""

    samples: int = 0
    missed: int = 0
    consecutive_missed: int = 0
    missed_window: int = 0
    counts: tuple = (0, 0)
    yaw_encoder_error: bool = False
    pitch_encoder_error: bool = False
    force_overload: bool = False
    foot_switch: bool = False
    encoder_errors: int = 0


@dataclass
class CycleTiming:
    """perf_counter stamps of the last cycle, s."""

    start: float = 0.0
    sent: float = 0.0
    received: float = 0.0
    done: float = 0.0


def actuated_status_text(s: ActuatorStatus) -> str:
    """Return one line on an actuator: joint, CAN id, model, fault, temperature."""
    return (f'{s.config.joint} (CAN id {s.config.can_id}, {s.config.model}): '
            f'{actuator_error_name(s.config.protocol, s.error_code)}, {s.temperature:.0f} degC')


__all__ = ['Sample', 'ActuatorStatus', 'BoardStatus', 'CycleTiming', 'actuated_status_text']
