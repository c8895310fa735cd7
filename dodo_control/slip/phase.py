# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
Phase machine FLIGHT -> STANCE -> FLIGHT with apex events (docs/control.md).

Pure logic on per-tick booleans; the controller decides what "contact" means (foot force sensor
or the kinematic fallback). Chatter robustness:

* a phase must last ``min_flight_time_s`` / ``min_stance_time_s`` before it can be left, so a
  bouncing sensor right after an edge cannot toggle the phase;
* liftoff on lost contact needs ``liftoff_samples`` consecutive contact-free ticks; the regular
  liftoff (spring back at rest length and extending) is immediate;
* an apex is reported once per flight, when the CoG vertical velocity changes sign from + to −
  (or on the first flight tick if the CoG is already falling, e.g. a drop from rest).
"""
from __future__ import annotations

from dataclasses import dataclass

FLIGHT = 'flight'
STANCE = 'stance'


@dataclass(frozen=True)
class PhaseParams:
    """
    Thresholds of the flight/stance phase machine (robust to contact chatter).

    Fields:
        min_flight_time_s: shortest flight before a touchdown is accepted, s.
        min_stance_time_s: shortest stance before a liftoff is accepted, s.
        liftoff_samples: consecutive ticks without contact that end a stance.
    """

    min_flight_time_s: float = 0.03
    min_stance_time_s: float = 0.03
    liftoff_samples: int = 5


class PhaseMachine:
    """Tracks the phase; :meth:`update` returns the events of this tick, in order."""

    def __init__(self, params: PhaseParams):
        self.params = params
        self.phase: str | None = None
        self.phase_start_t = 0.0
        self.apex_seen = False
        self._no_contact = 0
        self._last_vz: float | None = None

    def reset(self) -> None:
        self.phase = None
        self.apex_seen = False
        self._no_contact = 0
        self._last_vz = None

    def update(self, t: float, contact: bool, spring_released: bool, com_vz: float) -> tuple:
        """
        Advance one tick.

        Inputs:
            t: time, s.
            contact: the foot touches the ground this tick (sensor or kinematic fallback).
            spring_released: stance only: the SLIP spring is back at its rest length and extending.
            com_vz: CoG vertical velocity, m/s.
        Return value:
            tuple of events among 'touchdown', 'liftoff', 'apex'.
        """
        p = self.params
        events = []
        if self.phase is None:                       # first tick: start where we are
            self.phase = STANCE if contact else FLIGHT
            self.phase_start_t = t
            self.apex_seen = False
            if self.phase == STANCE:
                events.append('touchdown')
        elif self.phase == FLIGHT:
            if contact and t - self.phase_start_t >= p.min_flight_time_s - 1e-12:
                self.phase = STANCE
                self.phase_start_t = t
                self._no_contact = 0
                events.append('touchdown')
        else:
            self._no_contact = 0 if contact else self._no_contact + 1
            if (t - self.phase_start_t >= p.min_stance_time_s - 1e-12
                    and (spring_released or self._no_contact >= p.liftoff_samples)):
                self.phase = FLIGHT
                self.phase_start_t = t
                self.apex_seen = False
                events.append('liftoff')
        if self.phase == FLIGHT and not self.apex_seen:
            rising_before = self._last_vz is not None and self._last_vz > 0.0
            first_tick = 'liftoff' not in events and self._last_vz is None
            if com_vz <= 0.0 and (rising_before or first_tick):
                self.apex_seen = True
                events.append('apex')
        self._last_vz = com_vz
        return tuple(events)
