# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
Rectangular torque pulses on a step phase (As & Mailhot 2018, Kneed Walker controller).

A motor's torque within a step is a sum of rectangular pulses on the normalised step phase
``phase = omega * (t - t_touchdown)`` (0 at the touchdown that started the step, 1 one nominal
step period ``1 / omega`` later). Pulse k is on while ``start_k <= phase < start_k + width_k``
and then contributes ``amplitude_k``. As & Mailhot call start and width the pulse *phase* and
*period*, both normalised by the step time.

Phases are not wrapped: a step that lasts longer than ``1 / omega`` has phases beyond 1, and a
pulse whose window reaches beyond 1 keeps acting until the touchdown that ends the step resets
the phase to 0 (As & Mailhot's free-running clock wraps instead; here the step clock is reset
by the measured touchdown, so there is nothing to wrap into).
"""
from __future__ import annotations

from dataclasses import dataclass
import math
from typing import Sequence


@dataclass(frozen=True)
class Pulse:
    """
    One rectangular torque pulse on the step phase.

    Fields:
        amplitude_nm: torque while the pulse is on, N*m (any sign).
        start: phase at which it switches on, in [0, 1] (fraction of the nominal step time).
        width: how long it stays on, in [0, 1] (fraction of the nominal step time); 0 = never on.
    """

    amplitude_nm: float
    start: float
    width: float

    def __post_init__(self):
        if not math.isfinite(self.amplitude_nm):
            raise ValueError(f'pulse amplitude_nm must be finite, got {self.amplitude_nm}')
        if not (math.isfinite(self.start) and 0.0 <= self.start <= 1.0):
            raise ValueError(f'pulse start must be within [0, 1] (step phase), got {self.start}')
        if not (math.isfinite(self.width) and 0.0 <= self.width <= 1.0):
            raise ValueError(f'pulse width must be within [0, 1] (step phase), got {self.width}')

    def is_on(self, phase: float) -> bool:
        return self.start <= phase < self.start + self.width

    def torque(self, phase: float) -> float:
        """Return the pulse's torque at ``phase``, N*m."""
        return self.amplitude_nm if self.start <= phase < self.start + self.width else 0.0


class PulseGenerator:
    """
    The torque of one motor role (e.g. the swing hip) over a step: a sum of pulses.

    Inputs:
        pulses: the role's pulses (the reference uses two per step and motor).
    """

    def __init__(self, pulses: Sequence[Pulse]):
        self.pulses = tuple(pulses)
        # (start, end, amplitude) of each pulse: the window of Pulse.is_on, once
        self._windows = tuple((p.start, p.start + p.width, p.amplitude_nm) for p in self.pulses)

    def torque(self, phase: float) -> float:
        """Sum of the pulses that are on at ``phase``, N*m."""
        total = 0.0
        for start, end, amplitude in self._windows:
            if start <= phase < end:
                total += amplitude
        return total

    def states(self, phase: float) -> tuple:
        """Which pulses are on at ``phase`` (one bool per pulse)."""
        return tuple(pulse.is_on(phase) for pulse in self.pulses)


__all__ = ['Pulse', 'PulseGenerator']
