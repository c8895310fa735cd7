# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
Whether a SLIP leg hops: the task outcome of the SLIP controller (docs/control.md, "Outcome").

No rclpy. One rule, judged on the measured contact forces only (never on the controller's
telemetry, so a controller cannot report itself hopping):

* ``no_liftoff``: the leg stayed on the ground for more than ``HopCriteria.max_stance_s`` without
  a liftoff. A leg is on the ground while the force on one of its contact frames is larger than
  ``contact_force_n``. A SLIP stance lasts a fraction of a second (the shipped hopper 0.13-0.14 s,
  the boom leg 0.14 s), so 1 s on the ground is a leg too weak to lift off (a hopper whose hip
  and knee torque is limited to 5 N*m sinks and stays down after two passive bounces), a knee
  that folded or a controller that never left its stance.

Two hosts use this one definition:

* the controller node hosts :class:`HopMonitor` next to the SLIP controller
  (``dodo_control.registry``): ``dodo hop`` fails the run with its one line
  (``the leg did not hop: ...``), like a fall of the walker;
* the hopper's and the boom leg's scenarios (``dodo_control.scenarios``) judge every rollout with
  :func:`judge_rollout` and raise ``ScenarioFailed`` with the same line.

::

    monitor = HopMonitor(urdf_xml, joint_names, HopCriteria())
    reason = monitor.update(t, q, contact_forces)   # 'no_liftoff' once, at the failure
    monitor.summary(), monitor.message()
"""
from __future__ import annotations

from dataclasses import dataclass
import math

from dodo_sim.parameter import bounded, check_fields
import numpy as np

#: Why a SLIP leg's task failed (:attr:`HopMonitor.failure`).
HOP_FAILURES = ('no_liftoff',)


@dataclass(frozen=True)
class HopCriteria:
    """
    When a SLIP leg counts as not hopping (module docs).

    Fields:
        max_stance_s: longest time on the ground without a liftoff that is still a hop's stance,
            s (the shipped legs' stances last 0.13-0.14 s).
        contact_force_n: a contact frame carrying a force larger than this touches the ground, N
            (a force sensor's noise stays below it; the simulator sends exactly 0 in flight).
    """

    max_stance_s: float = bounded(1.0, low=0.0, low_open=True, unit='s')
    contact_force_n: float = bounded(2.0, low=0.0, unit='N')

    def __post_init__(self):
        check_fields(self)


class HopMonitor:
    """
    Online judge of a SLIP leg's hopping, one state at a time (module docs).

    Inputs (the controller node's outcome-monitor interface, ``dodo_control.registry``):
        urdf_xml, joint_names: the robot description and the order of q (not needed by the
            rule, which reads contact forces only).
        criteria: :class:`HopCriteria`.

    Everything is frozen at the failure (liftoffs, longest stance before it).
    """

    #: Channel names of :meth:`channels`, in order (``/controller/state``; ``hops`` is the
    #: controller's own telemetry, hence ``liftoffs``).
    CHANNELS = ('hop_failed', 'liftoffs', 'on_ground_s')
    #: Its configuration (read-only parameters of the controller node), in the order
    #: ``__init__`` takes them after ``joint_names``.
    config_classes = (HopCriteria,)

    def __init__(self, urdf_xml=None, joint_names=(), criteria: HopCriteria | None = None):
        self.criteria = criteria if criteria is not None else HopCriteria()
        self.liftoffs = 0
        self.longest_stance_s = 0.0
        self.ground_since_s: float | None = None     # start of the current ground contact
        self.failure: str | None = None
        self.failure_time_s = math.nan
        self._t = math.nan
        self._t0: float | None = None                # the first state judged

    def on_ground(self, contact_forces) -> bool:
        """Return whether any contact frame carries more than ``contact_force_n``."""
        forces = np.asarray(contact_forces, dtype=float)
        rows = forces.reshape(1, -1) if forces.ndim == 1 else forces
        return bool(np.any(np.linalg.norm(rows, axis=1) > self.criteria.contact_force_n))

    def update(self, t: float, q, contact_forces) -> str | None:
        """Judge one state; returns the failure reason at the first failed state, else None."""
        if self.failure is not None:
            return None
        t = float(t)
        self._t = t
        if self._t0 is None:
            self._t0 = t
        if not self.on_ground(contact_forces):
            if self.ground_since_s is not None:
                self.liftoffs += 1
                self.ground_since_s = None
            return None
        if self.ground_since_s is None:
            self.ground_since_s = t
        stance = t - self.ground_since_s
        self.longest_stance_s = max(self.longest_stance_s, stance)
        if stance > self.criteria.max_stance_s + 1e-9:     # (stamps in ns, times in s)
            self.failure, self.failure_time_s = 'no_liftoff', t
            return self.failure
        return None

    @property
    def on_ground_s(self) -> float:
        """Return how long the leg has been on the ground (0 in flight), s."""
        return 0.0 if self.ground_since_s is None else self._t - self.ground_since_s

    def channels(self) -> list:
        """Return the values of :data:`CHANNELS`: hop_failed (0/1), liftoffs, on_ground_s."""
        return [float(self.failure is not None), float(self.liftoffs), self.on_ground_s]

    def summary(self) -> dict:
        """
        Return the fields of the controller's summary line.

        liftoffs, longest_stance_s, task_failure (None: hopping), task_failure_time_s,
        ground_since_s (start of the ground contact that failed) and max_stance_s. Times are
        from the first state judged: simulated time (which starts at 0); on hardware, whose
        stamps are wall-clock time, s since the controller's first state.
        """
        failed = self.failure is not None
        t0 = self._t0 if self._t0 is not None else 0.0
        return {'liftoffs': self.liftoffs, 'longest_stance_s': self.longest_stance_s,
                'task_failure': self.failure,
                'task_failure_time_s': self.failure_time_s - t0 if failed else None,
                'ground_since_s': self.ground_since_s - t0 if failed else None,
                'max_stance_s': self.criteria.max_stance_s}

    def message(self) -> str:
        """Return the one line saying why the task failed (:meth:`failure_text` of the summary)."""
        return self.failure_text(self.summary())

    #: the controller node logs the failure with the monitor's ``fall_message`` (the interface's
    #: name, from the walker's monitor)
    fall_message = message

    @staticmethod
    def failure_text(summary: dict) -> str:
        """
        Return the one line of a failed summary (``dodo hop`` builds it from the summary line).

        Missing or unreadable numbers show as ``?``.
        """
        def num(key, fmt='.3f'):
            value = summary.get(key)
            ok = isinstance(value, (int, float)) and math.isfinite(value)
            return format(value, fmt) if ok else '?'

        return (f"the leg did not hop: on the ground from t = {num('ground_since_s')} s for more "
                f"than {num('max_stance_s', 'g')} s without a liftoff "
                f"({summary.get('task_failure')} at t = {num('task_failure_time_s')} s, after "
                f"{num('liftoffs', 'd')} liftoff(s))")


def judge_rollout(result, criteria: HopCriteria | None = None) -> HopMonitor:
    """Judge a finished rollout (``dodo_sim.rollout.Rollout``) state by state; the judge."""
    monitor = HopMonitor(criteria=criteria)
    forces = result.contact_forces
    if forces is None:           # a rollout of one contact frame without per-frame rows
        forces = np.asarray(result.contact_force, dtype=float)[:, None, :]
    for t, row in zip(result.t, forces):
        if monitor.update(t, None, row) is not None:
            break
    return monitor


__all__ = ['HOP_FAILURES', 'HopCriteria', 'HopMonitor', 'judge_rollout']
