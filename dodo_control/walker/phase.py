# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
Which foot is the stance foot, and when a step starts, from measured foot contact forces.

A biped's step begins when the swing foot touches down: that foot becomes the stance foot and
the other one the swing foot. The detector sees only one world force row per contact frame (the
feet's force sensors; no simulator internals) and decides per control tick:

* **load** of a foot: the magnitude of its force row, N (terrain-independent: a contact that
  carries a normal force N carries at least N in magnitude; Coulomb friction adds at most mu N).
* **loaded** flag per foot with hysteresis: it becomes loaded when the load exceeds
  ``load_on_n`` and unloaded when it falls below ``load_off_n`` (< ``load_on_n``), so a load
  that dithers around one threshold cannot toggle it.
* **touchdown** (step event): the swing foot is loaded, it has been unloaded (lifted off) at
  least once since the step started, and at least ``min_step_time_s`` has passed since the step
  started. The refractory time rejects the chatter of a foot that scuffs or bounces right after
  it left the ground; a foot that lands early and stays loaded is accepted when the refractory
  time ends.

At reset the detector takes the stance foot from its argument and the loaded flags from the
first force rows it sees, without an event: a foot already loaded must first unload (lift off)
before its touchdown can count. Double support keeps the current stance foot until the swing
foot's touchdown as above.
"""
from __future__ import annotations

import math

import numpy as np


class StepPhaseDetector:
    """
    Stance foot, step count and step start time from per-foot force rows.

    Inputs:
        n_feet: number of contact frames (rows of the force input).
        load_on_n: load above which a foot becomes loaded, N (> load_off_n).
        load_off_n: load below which a loaded foot becomes unloaded, N (>= 0).
        min_step_time_s: shortest accepted step (touchdown to touchdown), s (>= 0).
        initial_stance: index of the stance foot at reset.
    """

    def __init__(self, n_feet: int, load_on_n: float, load_off_n: float,
                 min_step_time_s: float, initial_stance: int = 0):
        if n_feet < 2:
            raise ValueError(f'a step detector needs at least 2 feet, got n_feet = {n_feet}')
        if not (math.isfinite(load_off_n) and 0.0 <= load_off_n < load_on_n
                and math.isfinite(load_on_n)):
            raise ValueError(f'need 0 <= load_off_n < load_on_n (N), got load_off_n = '
                             f'{load_off_n}, load_on_n = {load_on_n}')
        if not (math.isfinite(min_step_time_s) and min_step_time_s >= 0.0):
            raise ValueError(f'min_step_time_s must be >= 0 s, got {min_step_time_s}')
        if not 0 <= initial_stance < n_feet:
            raise ValueError(f'initial_stance must index one of the {n_feet} feet, '
                             f'got {initial_stance}')
        self.n_feet = int(n_feet)
        self.load_on_n = float(load_on_n)
        self.load_off_n = float(load_off_n)
        self.min_step_time_s = float(min_step_time_s)
        self.initial_stance = int(initial_stance)
        self.reset()

    def reset(self, initial_stance: int | None = None) -> None:
        """Forget the history; the next update starts step 0 with ``initial_stance``."""
        if initial_stance is not None:
            if not 0 <= initial_stance < self.n_feet:
                raise ValueError(f'initial_stance must index one of the {self.n_feet} feet, '
                                 f'got {initial_stance}')
            self.initial_stance = int(initial_stance)
        self.stance = self.initial_stance
        self.step_count = 0
        self.step_start_s = math.nan
        self.loaded = [False] * self.n_feet
        self.touchdown = False
        self.swing_lifted = False
        self._started = False

    @property
    def swing(self) -> int:
        """Index of the swing foot (the next foot after the stance foot)."""
        return (self.stance + 1) % self.n_feet

    def loads(self, contact_forces) -> list:
        """Load (force magnitude, N) of each foot from its force row."""
        rows = np.asarray(contact_forces, dtype=float).reshape(self.n_feet, -1).tolist()
        # Python floats: numpy's per-call overhead is larger than the arithmetic (same sums,
        # in the same order, as numpy's of a row)
        return [math.sqrt(sum([x * x for x in row])) for row in rows]

    def update(self, t: float, contact_forces) -> bool:
        """Take one tick's force rows (one row per foot, world N); True on a step event."""
        loads = self.loads(contact_forces)
        if not self._started:
            self._started = True
            self.step_start_s = float(t)
            self.loaded = [bool(load > self.load_on_n) for load in loads]
            self.swing_lifted = not self.loaded[self.swing]
            self.touchdown = False
            return False
        for i, load in enumerate(loads):
            if self.loaded[i]:
                if load < self.load_off_n:
                    self.loaded[i] = False
            elif load > self.load_on_n:
                self.loaded[i] = True
        swing = self.swing
        if not self.loaded[swing]:
            self.swing_lifted = True
        self.touchdown = bool(self.swing_lifted and self.loaded[swing]
                              and t - self.step_start_s >= self.min_step_time_s)
        if self.touchdown:
            self.stance = swing
            self.step_start_s = float(t)
            self.step_count += 1
            self.swing_lifted = not self.loaded[self.swing]
        return self.touchdown

    def time_in_step(self, t: float) -> float:
        """Time since the current step started, s (0 before the first update)."""
        return 0.0 if math.isnan(self.step_start_s) else float(t) - self.step_start_s


__all__ = ['StepPhaseDetector']
