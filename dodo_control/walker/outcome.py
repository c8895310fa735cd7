# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
Whether the walker walked or fell.

Fall detection and the result of a walking run. No rclpy.

Used by the tests, by ``dodo walk`` (exit code) and by parameter searches::

    from dodo_control.walker.outcome import FallCriteria, FallDetector, walk
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

from dataclasses import dataclass
import math

from dodo_sim.rollout import Rollout, rollout
from dodo_sim.simulator import SimulationDiverged
import numpy as np
import pinocchio as pin

FALL_REASONS = ('torso_pitch', 'hip_height', 'knee_contact', 'diverged')


@dataclass(frozen=True)
class FallCriteria:
    """
    When a walker counts as fallen.

    Fields:
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
    """
    Judges simulator states against :class:`FallCriteria` (module docs).

    Inputs:
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
        """Return the fall reason of configuration q, or None when upright."""
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


def count_steps(in_contacts, times_s, min_step_time_s: float = 0.1) -> tuple:
    """
    Touchdowns of alternating feet from per-state contact flags.

    ``in_contacts`` is (ticks, n_feet) bool, ``times_s`` the states' times. Row 0 is the reset
    state (no contact solved yet), so edges are looked for from row 1 on, against row 1's flags.
    A touchdown is a foot's False -> True edge; it is a step when that foot is not the foot of the
    previous step and at least ``min_step_time_s`` after it (a trailing foot that scuffs right
    after the touchdown of the other is not a step). Returns (tick indices, feet).
    """
    flags = np.asarray(in_contacts, dtype=bool)
    times = np.asarray(times_s, dtype=float)
    ticks, feet = [], []
    last, last_t = None, -math.inf
    if len(flags) < 3:
        return (), ()
    rising = flags[2:] & ~flags[1:-1]
    for k, row in enumerate(rising, start=2):
        for foot in np.flatnonzero(row):
            if foot != last and times[k] - last_t >= min_step_time_s:
                ticks.append(k)
                feet.append(int(foot))
                last, last_t = foot, times[k]
    return tuple(ticks), tuple(feet)


def place_on_terrain(sim, q, v, stance_frame: str, *, x_joint: str = 'base_x',
                     z_joint: str = 'base_z', pitch_joint: str = 'base_pitch') -> tuple:
    """
    Return a walking state (q, v) of a planar robot, moved rigidly onto the simulator's terrain.

    The whole robot is rotated about its stance foot by the terrain's inclination under that
    foot and shifted vertically so that the stance foot lies on the terrain: a gait state
    recorded on flat ground becomes the same state on a slope (joint angles unchanged; the base
    pitch turns with the ground, the base velocity is rotated). Returns new (q, v) arrays.

    The simulator must already exist, and the Simulator refuses to be constructed with a
    contact point under its terrain: to start a run on another terrain, build the Simulator
    from :func:`config_on_terrain` instead.
    """
    return _place(list(sim.joint_names), list(sim.contact_frames), sim.contact_positions,
                  sim.terrain, q, v, stance_frame, (x_joint, z_joint, pitch_joint))


def config_on_terrain(urdf_xml_or_path, config, stance_frame: str, *, xacro_args=None,
                      x_joint: str = 'base_x', z_joint: str = 'base_z',
                      pitch_joint: str = 'base_pitch'):
    """
    Return ``config`` with its start state moved onto its own terrain.

    ``config`` is a :class:`dodo_sim.simulator.SimConfig`; the state is moved as
    :func:`place_on_terrain` moves it. Construct the Simulator with the result.

    The start state is ``config.initial_q`` / ``initial_v`` (empty: the robot description's
    default pose at rest). Only the robot description and the terrain description of the config
    are read; no Simulator is built, so a state recorded on flat ground (config/walk.yaml) can
    start a run on a slope, a sinusoid or steps::

        cfg = dataclasses.replace(config_from_file(SimConfig, 'config/walk.yaml', 'simulator'),
                                  terrain='slope', slope_deg=-3.0)
        sim = Simulator(urdf, config_on_terrain(urdf, cfg, 'left_foot'))
    """
    import dataclasses

    from dodo_sim.physics.robot import load_robot
    import pinocchio as pin

    robot = load_robot(urdf_xml_or_path, contact_frames=config.contact_frames,
                       contact_radii=config.contact_radii,
                       actuated_joints=config.actuated_joints, xacro_args=xacro_args)
    model = robot.model
    data = model.createData()

    def contact_positions(q):
        pin.forwardKinematics(model, data, np.asarray(q, dtype=float))
        return np.array([pin.updateFramePlacement(model, data, frame).translation
                         for frame in robot.contact_frame_ids])

    q0 = config.initial_q if config.initial_q else robot.default_q
    v0 = config.initial_v if config.initial_v else robot.default_v
    q, v = _place(list(robot.joint_names), list(robot.contact_frames), contact_positions,
                  config.make_terrain(), q0, v0, stance_frame, (x_joint, z_joint, pitch_joint))
    return dataclasses.replace(config, initial_q=tuple(q.tolist()),
                               initial_v=tuple(v.tolist()))


def _place(joint_names, contact_frames, contact_positions, terrain, q, v, stance_frame,
           base_joints) -> tuple:
    """
    :func:`place_on_terrain` on its parts: the base joints (x, z, pitch) are named.

    The contact positions come from ``contact_positions(q)``.
    """
    if stance_frame not in contact_frames:
        raise ValueError(f'stance_frame {stance_frame!r} is not a contact frame: '
                         f'{contact_frames}')
    missing = [j for j in base_joints if j not in joint_names]
    if missing:
        raise ValueError(f'joints {missing} are not in the model: {joint_names}')
    ix, iz, ip = (joint_names.index(j) for j in base_joints)
    q = np.array(q, dtype=float)
    v = np.array(v, dtype=float)
    foot = contact_positions(q)[contact_frames.index(stance_frame)]
    beta = -math.atan(terrain.slope(foot[0]))      # rotation about +y taking x onto the ground
    c, s = math.cos(beta), math.sin(beta)
    dx, dz = q[ix] - foot[0], q[iz] - foot[2]
    q[ix], q[iz] = foot[0] + c * dx + s * dz, foot[2] - s * dx + c * dz
    q[ip] += beta
    vx, vz = v[ix], v[iz]
    v[ix], v[iz] = c * vx + s * vz, -s * vx + c * vz
    shift = terrain.height(foot[0]) - foot[2]
    q[iz] += shift
    return q, v


@dataclass(frozen=True)
class WalkerOutcome:
    """
    Result of a walking run.

    Fields:
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
    """
    Motor work of each tick, J: the held torque times the actuated joints' displacement.

    This is exact for a zero-order-hold torque; ``actuated_index_v`` indexes q = v of those joints.
    """
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


class OnlineStepCounter:
    """
    :func:`count_steps` one state at a time.

    It serves to stop a run after a number of steps; the controller node's walk monitor counts from
    the contact forces it receives.
    """

    def __init__(self, min_step_time_s: float = 0.1):
        self.min_step_time_s = min_step_time_s
        self.steps = 0
        self._previous = None
        self._rows = 0
        self._last, self._last_t = None, -math.inf

    def add(self, state) -> bool:
        """Count a simulator state (its per-foot contact flags); True if it makes a step."""
        return self.add_flags(state.t, state.in_contacts)

    def add_flags(self, t: float, in_contacts) -> bool:
        """Count one state given as its time and per-foot contact flags; True if a step."""
        flags = tuple(bool(c) for c in in_contacts)
        self._rows += 1
        stepped = False
        if self._rows >= 3:
            for foot, (now, before) in enumerate(zip(flags, self._previous)):
                if now and not before and foot != self._last \
                        and t - self._last_t >= self.min_step_time_s:
                    self.steps += 1
                    self._last, self._last_t = foot, t
                    stepped = True
        self._previous = flags
        return stepped


def walk(sim, controller, *, duration_s: float, criteria: FallCriteria | None = None,
         settle_steps: int = 4, max_steps: int | None = None) -> WalkerOutcome:
    """
    Run ``controller`` on ``sim`` from its current state until ``duration_s`` or a fall.

    With ``max_steps`` the run also ends at the touchdown that completes ``max_steps`` steps.
    """
    detector = FallDetector(sim, criteria)
    counter = OnlineStepCounter()

    def stop(state) -> bool:
        if detector(state):
            return True
        counter.add(state)
        return max_steps is not None and counter.steps >= max_steps

    seen_states, seen_taus = [], []

    def remember(k, state, tau):
        seen_states.append(state)
        seen_taus.append(tau)

    diverged = False
    try:
        run = rollout(sim, controller, duration_s=duration_s, stop=stop, on_tick=remember,
                      keep_states=True)
    except SimulationDiverged:
        # the runner's own arrays go with the exception: rebuild the run from the states seen
        # (the last one is the last good state)
        diverged = True
        run = _run_from_states(seen_states, seen_taus)
    flags = np.array([s.in_contacts for s in run.states], dtype=bool) if run.states else \
        np.zeros((1, len(sim.contact_frames)), dtype=bool)
    ticks, feet = count_steps(flags, run.t)
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
           'OnlineStepCounter', 'config_on_terrain', 'motor_work_per_tick', 'place_on_terrain',
           'walk']
