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
import math

import numpy as np

FLIGHT = 'flight'
STANCE = 'stance'

#: The phase machine's state: one float64 array (the compiled control tick advances it too).
#: ``PHASE``: 0 before the first tick, then :data:`IN_FLIGHT` or :data:`IN_STANCE`;
#: ``PHASE_START``: when the phase began, s; ``APEX_SEEN``: 1 once this flight's apex was
#: reported; ``NO_CONTACT``: consecutive stance ticks without contact; ``LAST_VZ``: the SLIP
#: point's vertical velocity at the last tick, m/s (NaN before the first).
PHASE, PHASE_START, APEX_SEEN, NO_CONTACT, LAST_VZ = 0, 1, 2, 3, 4
PHASE_STATE_SIZE = 5
IN_FLIGHT, IN_STANCE = 1.0, 2.0
#: the events of a tick as bits (in this order within a tick)
TOUCHDOWN, LIFTOFF, APEX = 1, 2, 4
PHASE_NAMES = {0.0: None, IN_FLIGHT: FLIGHT, IN_STANCE: STANCE}
#: event bits -> the tuple of event names
_EVENT_BITS = ((TOUCHDOWN, 'touchdown'), (LIFTOFF, 'liftoff'), (APEX, 'apex'))
EVENT_NAMES = tuple(tuple(name for bit, name in _EVENT_BITS if bits & bit) for bits in range(8))


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


def reset_phase(state) -> None:
    """Put a phase state array (:data:`PHASE_STATE_SIZE`) before its first tick."""
    state[PHASE] = 0.0
    state[PHASE_START] = 0.0
    state[APEX_SEEN] = 0.0
    state[NO_CONTACT] = 0.0
    state[LAST_VZ] = math.nan


def advance_phase(state, t: float, contact: bool, spring_released: bool, com_vz: float,
                  min_flight_time_s: float, min_stance_time_s: float,
                  liftoff_samples: float) -> int:
    """
    Advance the phase ``state`` one tick; return its events as bits (:data:`TOUCHDOWN` ...).

    Inputs: ``t`` time, s; ``contact`` the foot touches the ground (sensor or kinematic fallback);
    ``spring_released`` (stance only) the SLIP spring is back at its rest length and extending;
    ``com_vz`` the SLIP point's vertical velocity, m/s; the thresholds of :class:`PhaseParams`.
    The one phase rule: :class:`PhaseMachine` and the compiled control tick call it.
    """
    events = 0
    phase = state[PHASE]
    if phase == 0.0:                               # first tick: start where we are
        phase = IN_STANCE if contact else IN_FLIGHT
        state[PHASE_START] = t
        state[APEX_SEEN] = 0.0
        if phase == IN_STANCE:
            events |= TOUCHDOWN
    elif phase == IN_FLIGHT:
        if contact and t - state[PHASE_START] >= min_flight_time_s - 1e-12:
            phase = IN_STANCE
            state[PHASE_START] = t
            state[NO_CONTACT] = 0.0
            events |= TOUCHDOWN
    else:
        state[NO_CONTACT] = 0.0 if contact else state[NO_CONTACT] + 1.0
        if (t - state[PHASE_START] >= min_stance_time_s - 1e-12
                and (spring_released or state[NO_CONTACT] >= liftoff_samples)):
            phase = IN_FLIGHT
            state[PHASE_START] = t
            state[APEX_SEEN] = 0.0
            events |= LIFTOFF
    state[PHASE] = phase
    if phase == IN_FLIGHT and state[APEX_SEEN] == 0.0:
        last_vz = state[LAST_VZ]
        rising_before = not math.isnan(last_vz) and last_vz > 0.0
        first_tick = not events & LIFTOFF and math.isnan(last_vz)
        if com_vz <= 0.0 and (rising_before or first_tick):
            state[APEX_SEEN] = 1.0
            events |= APEX
    state[LAST_VZ] = com_vz
    return events


class PhaseMachine:
    """
    Tracks the phase; :meth:`update` returns the events of this tick, in order.

    Its state is the array ``state`` (:data:`PHASE_STATE_SIZE`; the control tick advances the
    controller's machine in compiled code through the same :func:`advance_phase`).
    """

    def __init__(self, params: PhaseParams):
        self.params = params
        self.state = np.empty(PHASE_STATE_SIZE)
        reset_phase(self.state)

    def reset(self) -> None:
        reset_phase(self.state)

    @property
    def phase(self) -> str | None:
        """FLIGHT, STANCE or None (before the first tick)."""
        return PHASE_NAMES[float(self.state[PHASE])]

    @property
    def phase_start_t(self) -> float:
        """When the current phase began, s."""
        return float(self.state[PHASE_START])

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
        return EVENT_NAMES[advance_phase(self.state, float(t), bool(contact),
                                         bool(spring_released), float(com_vz),
                                         p.min_flight_time_s, p.min_stance_time_s,
                                         float(p.liftoff_samples))]
