"""Did the walker walk or fall? Fall detection and the result of a walking run. No rclpy.

Used by the tests, by ``dodo walk`` (exit code) and by parameter searches::

    from dodo_control.walker_outcome import FallCriteria, FallDetector, walk
    outcome = walk(sim, WalkerController(cfg), duration_s=15.0)     # stops at a fall
    outcome.fell, outcome.fall_reason, outcome.steps, outcome.speed_m_s

The judge looks only at the simulator's state and model (pinocchio kinematics on
``sim.robot.model``, the terrain height ``sim.terrain.height``), never at controller telemetry, so
a controller cannot report itself upright. A state is a **fall** (``FALL_REASONS``) when

* ``torso_pitch``: the torso pitch leaves ``+-max_torso_pitch_rad`` (As & Mailhot stop at a torso
  rotation of 30 deg in their report, 90 deg in their code);
* ``hip_height``: the hip point is less than ``min_hip_height_m`` above the terrain under it
  (As & Mailhot: hip less than 0.6 leg lengths above the stance ankle);
* ``knee_contact``: a knee point is below the terrain (a non-foot point hit the ground; the
  engine only has point contacts at the feet, so this is judged from the kinematics);
* ``diverged``: the simulator raised ``SimulationDiverged``.

Steps are counted from the simulator's per-foot contact flags: a step is a touchdown of the
foot that did not make the previous touchdown (alternating feet), so a foot bouncing in place
counts once.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pinocchio as pin

from dodo_sim.rollout import Rollout, rollout
from dodo_sim.simulator import SimulationDiverged

FALL_REASONS = ('torso_pitch', 'hip_height', 'knee_contact', 'diverged')


@dataclass(frozen=True)
class FallCriteria:
    """When a walker counts as fallen.

    Attributes:
        max_torso_pitch_rad: largest |torso pitch| still upright, rad, in (0, pi).
        min_hip_height_m: lowest hip height above the terrain under the hip, m, >= 0.
        pitch_joint: the torso pitch coordinate.
        hip_joint: the joint whose origin is the hip point (the planar base's pitch joint).
        knee_joints: joints whose origins must stay above the terrain.
    """

    max_torso_pitch_rad: float = 0.8
    min_hip_height_m: float = 0.55
    pitch_joint: str = 'base_pitch'
    hip_joint: str = 'base_pitch'
    knee_joints: tuple = ('left_knee', 'right_knee')

    def __post_init__(self):
        object.__setattr__(self, 'knee_joints', tuple(str(j) for j in self.knee_joints))
        if not (math.isfinite(self.max_torso_pitch_rad) and 0.0 < self.max_torso_pitch_rad
                < math.pi):
            raise ValueError(f'FallCriteria.max_torso_pitch_rad must be within (0, pi) rad, '
                             f'got {self.max_torso_pitch_rad}')
        if not (math.isfinite(self.min_hip_height_m) and self.min_hip_height_m >= 0.0):
            raise ValueError(f'FallCriteria.min_hip_height_m must be >= 0 m, '
                             f'got {self.min_hip_height_m}')


class FallDetector:
    """Judges simulator states against :class:`FallCriteria` (module docs).

    Args:
        sim: the simulator (its robot model, joint names and terrain are used).
        criteria: the fall criteria.
    """

    def __init__(self, sim, criteria: FallCriteria | None = None):
        self.criteria = criteria if criteria is not None else FallCriteria()
        robot = sim.robot
        self._model = robot.model
        self._data = robot.model.createData()
        self._terrain = sim.terrain
        names = list(sim.joint_names)
        for joint in (self.criteria.pitch_joint, self.criteria.hip_joint,
                      *self.criteria.knee_joints):
            if joint not in names:
                raise ValueError(f'FallCriteria names joint {joint!r}, which the robot does not '
                                 f'have; its joints are {names}')
        self._pitch_index = names.index(self.criteria.pitch_joint)
        self._hip_id = self._model.getJointId(self.criteria.hip_joint)
        self._knee_ids = [self._model.getJointId(j) for j in self.criteria.knee_joints]
        self.reason: str | None = None
        self.time_s: float = math.nan

    def reset(self) -> None:
        self.reason, self.time_s = None, math.nan

    def check(self, q) -> str | None:
        """The fall reason of configuration q, or None when upright."""
        crit = self.criteria
        q = np.asarray(q, dtype=float)
        if abs(q[self._pitch_index]) > crit.max_torso_pitch_rad:
            return 'torso_pitch'
        pin.forwardKinematics(self._model, self._data, q)
        height = self._terrain.height
        hip = self._data.oMi[self._hip_id].translation
        if hip[2] - height(hip[0]) < crit.min_hip_height_m:
            return 'hip_height'
        for joint_id in self._knee_ids:
            knee = self._data.oMi[joint_id].translation
            if knee[2] < height(knee[0]):
                return 'knee_contact'
        return None

    def __call__(self, state) -> bool:
        """``rollout`` stop callback: True (and remember why) at the first fallen state."""
        reason = self.check(state.q)
        if reason is not None and self.reason is None:
            self.reason, self.time_s = reason, float(state.t)
        return reason is not None


def count_steps(in_contacts) -> tuple:
    """Touchdown times (tick indices) of alternating feet from per-state contact flags.

    ``in_contacts`` is (ticks, n_feet) bool. A touchdown is a foot's False -> True edge; it is a
    step when that foot is not the foot of the previous step. Returns (indices, feet)."""
    flags = np.asarray(in_contacts, dtype=bool)
    ticks, feet = [], []
    last = None
    rising = flags[1:] & ~flags[:-1]
    for k, row in enumerate(rising, start=1):
        for foot in np.flatnonzero(row):
            if foot != last:
                ticks.append(k)
                feet.append(int(foot))
                last = foot
    return tuple(ticks), tuple(feet)


@dataclass(frozen=True)
class WalkerOutcome:
    """Result of a walking run.

    Attributes:
        fell: the run ended in a fall.
        fall_reason: one of ``FALL_REASONS``, or None.
        fall_time_s: time of the fall, s (NaN if none).
        duration_s: simulated time, s.
        steps: alternating-foot touchdowns (from the simulator's contact flags).
        step_ticks: tick index of each step's touchdown.
        step_feet: contact-frame index of each step's foot.
        distance_m: hip (base) x travelled, m.
        speed_m_s: mean hip x speed over the steps after the first ``settle_steps``, m/s (NaN
            if fewer steps).
        cost_of_transport: sum over ticks of |motor work| / (m g distance) over the same steps
            (mechanical, dimensionless; NaN if fewer steps).
        rollout: the closed-loop run (arrays per tick).
    """

    fell: bool
    fall_reason: str | None
    fall_time_s: float
    duration_s: float
    steps: int
    step_ticks: tuple
    step_feet: tuple
    distance_m: float
    speed_m_s: float
    cost_of_transport: float
    rollout: Rollout | None = None


def motor_work_per_tick(run: Rollout, actuated_index_v) -> np.ndarray:
    """Motor work of each tick, J: the held torque times the actuated joints' displacement
    (exact for a zero-order-hold torque; ``actuated_index_v`` indexes q = v of those joints)."""
    index = np.asarray(actuated_index_v, dtype=int)
    dq = np.diff(run.q[:, index], axis=0)
    return (run.tau * dq[:len(run.tau)]).sum(axis=1)


def _run_from_states(states, taus) -> Rollout:
    taus = list(taus[:len(states) - 1])
    return Rollout(t=np.array([s.t for s in states]), q=np.array([s.q for s in states]),
                   v=np.array([s.v for s in states]),
                   tau=np.array(taus) if taus else np.empty((0, len(states[0].tau_applied))),
                   contact_force=np.array([s.contact_force for s in states]),
                   in_contact=np.array([bool(s.in_contact) for s in states]),
                   states=list(states),
                   contact_forces=np.array([s.contact_forces for s in states]))


def walk(sim, controller, *, duration_s: float, criteria: FallCriteria | None = None,
         settle_steps: int = 4) -> WalkerOutcome:
    """Run ``controller`` on ``sim`` from its current state until ``duration_s`` or a fall."""
    detector = FallDetector(sim, criteria)
    seen_states, seen_taus = [], []

    def remember(k, state, tau):
        seen_states.append(state)
        seen_taus.append(tau)

    diverged = False
    try:
        run = rollout(sim, controller, duration_s=duration_s, stop=detector, on_tick=remember,
                      keep_states=True)
    except SimulationDiverged:
        # the runner's own arrays go with the exception: rebuild the run from the states seen
        # (the last one is the last good state)
        diverged = True
        run = _run_from_states(seen_states, seen_taus)
    flags = np.array([s.in_contacts for s in run.states], dtype=bool) if run.states else \
        np.zeros((1, len(sim.contact_frames)), dtype=bool)
    ticks, feet = count_steps(flags)
    if diverged:
        reason, t_fall = 'diverged', float(run.t[-1])
    else:
        reason, t_fall = detector.reason, detector.time_s
    x_index = 0
    distance = float(run.q[-1, x_index] - run.q[0, x_index])
    speed = cot = math.nan
    if len(ticks) > settle_steps + 1 and not diverged:
        k0, k1 = ticks[settle_steps], ticks[-1]
        dx = float(run.q[k1, x_index] - run.q[k0, x_index])
        dt = float(run.t[k1] - run.t[k0])
        speed = dx / dt if dt > 0 else math.nan
        work = motor_work_per_tick(run, sim.robot.actuated_idx_v)
        mass = sim.robot.total_mass
        weight = mass * float(np.linalg.norm(sim.robot.model.gravity.linear))
        cot = float(np.abs(work[k0:k1]).sum() / (weight * abs(dx))) if dx != 0 else math.nan
    return WalkerOutcome(fell=reason is not None, fall_reason=reason, fall_time_s=t_fall,
                         duration_s=float(run.t[-1] - run.t[0]), steps=len(ticks),
                         step_ticks=ticks, step_feet=feet, distance_m=distance,
                         speed_m_s=speed, cost_of_transport=cot, rollout=run)


__all__ = ['FALL_REASONS', 'FallCriteria', 'FallDetector', 'WalkerOutcome', 'count_steps',
           'motor_work_per_tick', 'walk']
