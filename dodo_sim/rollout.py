# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
One closed-loop runner: the simulator core and a controller, no ROS.

Tests, benchmarks, ``dodo replay`` and the demo all run their closed loops through
:func:`rollout`, so that the loop — and how the controller sees time and sensors — is written
once and matches what the ROS nodes do::

    from dodo_sim.rollout import rollout
    run = rollout(sim, ctrl, duration_s=5.0)
    run.t, run.q, run.v, run.tau, run.contact_force     # arrays over control ticks

Per control tick k (state ``s_k`` at time ``t_k``): ``tau_k = policy.update(t, q, v, force)``
with ``t = dodo_sim.stamps.controller_time(t_k)``, the state's time rounded to integer
nanoseconds (the header stamp the controller node receives, by the one stamp rule of
:mod:`dodo_sim.stamps`, so an offline run reproduces a ROS run bit for bit), then ``on_tick``
(pushes, bookkeeping), then ``s_{k+1} = sim.step(tau_k)``. ``policy`` is anything with that
``update`` method (the SLIP :class:`dodo_control.controller.Controller`, a PD hold, a
replayed sequence).
``q``, ``v`` and ``force`` are read-only float64 rows of the run's record (the loop allocates
its arrays once, sized from the number of ticks): a policy may keep them, and copies what it
wants to change.

The force argument: by default the state's single-foot ``contact_force`` ([fx, fz], N). A policy
with a ``contact_frames`` attribute (e.g. the biped
:class:`dodo_control.walker.controller.WalkerController`) instead receives one world force row per
frame it names, in its order, taken from the state's ``contact_forces`` (rows in
``sim.contact_frames`` order; [fx, fy, fz], N). A frame the simulator does not simulate is a
ValueError naming it.

Sensors: the policy is given what the robot's sensors read
(:class:`dodo_sim.physics.sensors.SensorModel` of the simulator's ``SimConfig``: encoder and
force-sensor noise, bias, latency, quantisation; ideal by default), exactly as the simulator
node publishes it on ``/joint_states`` and the contact topics; the run's ``q``, ``v`` and
forces are the ground truth, the readings are in ``measured_*`` (and an IMU's in ``imu``). Pass
``sensors=`` to continue a model's noise streams over several rollouts of one simulator (each
rollout otherwise starts them at step 0).

The state argument: by default the simulator's whole ``q`` and ``v``. A policy whose
``joint_names`` are not the simulator's (``sim.joint_names``) receives ``q`` and ``v`` in its
``joint_names`` order, the 1-DoF joints only, as the controller node merges them from
``/joint_states``: the free flyer of a floating base is not among them
(:class:`dodo_control.joint.JointController` on a quadruped sees its joint encoders only). A
policy joint the simulator lacks, or one with more than one coordinate, is a ValueError naming it.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

from dodo_sim.stamps import controller_time
import numpy as np


@dataclass
class Rollout:
    """
    A closed-loop run, one row per control tick (``n + 1`` states, ``n`` commands).

    Fields:
        t: state times, s.
        q / v: generalised positions / velocities of the states.
        tau: command of each tick (one torque per actuated joint, N*m).
        contact_force: measured contact force of each state (world, N; the single-foot field).
        in_contact: whether the state's contact carried a force.
        contact_forces: per state, one world force row [fx, fy, fz] per contact frame
            (``sim.contact_frames`` order), N; shape (n + 1, n_contacts, 3).
        states: the State objects (only with ``keep_states=True``).
        stopped_early: ``stop`` ended the run before the requested length.
        measured_q / measured_v / measured_contact_forces: what the sensors read at each state
            (the policy's input; see the module docs), or the same arrays as q, v,
            contact_forces when the sensors are ideal.
        imu / imu_truth: the IMU's reading and the exact IMU quantities at each state, one row
            of orientation xyzw, angular velocity (rad/s), specific force (m/s^2) in the IMU
            link's axes; None without an IMU.
    """

    t: np.ndarray
    q: np.ndarray
    v: np.ndarray
    tau: np.ndarray
    contact_force: np.ndarray
    in_contact: np.ndarray
    states: list = field(default_factory=list)
    stopped_early: bool = False
    contact_forces: np.ndarray | None = None
    measured_q: np.ndarray | None = None
    measured_v: np.ndarray | None = None
    measured_contact_forces: np.ndarray | None = None
    imu: np.ndarray | None = None
    imu_truth: np.ndarray | None = None

    @property
    def ticks(self) -> int:
        return len(self.tau)


def rollout(sim, policy, *, duration_s: float | None = None, steps: int | None = None,
            on_tick: Callable | None = None, stop: Callable | None = None,
            keep_states: bool = False, sensors=None) -> Rollout:
    """
    Run ``policy`` on ``sim`` from its current state for ``steps`` control ticks.

    ``duration_s`` of simulated time can be given instead.

    ``on_tick(k, state, tau)`` is called after the command of tick k is computed and before the
    step (it may push the base with ``sim.apply_impulse``). ``stop(state) -> bool`` ends the run
    early after a state is recorded. ``sensors``: the :class:`SensorModel` to read the states
    with (default: a new one of ``sim``'s robot and config).
    """
    if (duration_s is None) == (steps is None):
        raise ValueError('give exactly one of duration_s and steps')
    if steps is None:
        steps = int(round(duration_s / sim.config.control_period))
    if steps < 0:
        raise ValueError(f'steps must be >= 0, got {steps}')
    state = sim.state
    nq, nv = len(state.q), len(state.v)
    t = np.empty(steps + 1)
    q = np.empty((steps + 1, nq))
    v = np.empty((steps + 1, nv))
    force = np.empty((steps + 1, len(state.contact_force)))
    contact = np.empty(steps + 1, dtype=bool)
    n_frames = len(sim.contact_frames)
    forces = np.empty((steps + 1, n_frames, 3))
    if sensors is None:
        sensors = _sensor_model(sim)
    if sensors is not None and sensors.passthrough:
        sensors = None
    # what the sensors read: the policy's input (the truth itself with ideal sensors)
    seen_q, seen_v, seen_force, seen_forces = q, v, force, forces
    imu = imu_truth = None
    if sensors is not None:
        seen_q, seen_v = np.empty_like(q), np.empty_like(v)
        seen_force, seen_forces = np.empty_like(force), np.empty_like(forces)
        if sensors.imu_link is not None:
            imu, imu_truth = np.empty((steps + 1, 10)), np.empty((steps + 1, 10))
    rows = _policy_rows(sim, policy)
    span = _row_span(rows)
    coordinates = _policy_coordinates(sim, policy)
    # the policy reads rows of the record, read-only (no copy, no allocation per tick); a
    # policy naming its joints, or force rows in another order, its own rows filled per tick
    if coordinates is None:
        q_given, v_given = _read_only(seen_q), _read_only(seen_v)
    else:
        q_given = np.empty((steps + 1, len(coordinates[0])))
        v_given = np.empty((steps + 1, len(coordinates[1])))
    if rows is None:
        sensed = _read_only(seen_force)
    elif span is not None:           # the same rows as a slice (no fancy indexing)
        sensed = _read_only(seen_forces[:, span[0]:span[1]])
    else:
        sensed = np.empty((steps + 1, len(rows), 3))
    taus = None
    states = []
    update, step = policy.update, sim.step
    k = 0
    stopped = False
    while True:
        state_t = state.t
        t[k] = state_t
        q[k] = state.q
        v[k] = state.v
        force[k] = state.contact_force
        contact[k] = state.in_contact
        forces[k] = state.contact_forces
        seen = state
        if sensors is not None:
            reading = sensors.measure(state)
            seen = reading.state
            seen_q[k] = seen.q
            seen_v[k] = seen.v
            seen_force[k] = seen.contact_force
            seen_forces[k] = seen.contact_forces
            if imu is not None:
                imu[k] = reading.imu.row()
                imu_truth[k] = reading.imu_truth.row()
        if keep_states:
            states.append(state)
        if k == steps:
            break
        if stop is not None and stop(state):
            stopped = True
            break
        if span is None and rows is not None:
            np.take(seen.contact_forces, rows, axis=0, out=sensed[k])
        if coordinates is not None:
            np.take(seen.q, coordinates[0], out=q_given[k])
            np.take(seen.v, coordinates[1], out=v_given[k])
        tau = np.asarray(update(controller_time(state_t), q_given[k], v_given[k], sensed[k]),
                         dtype=float)
        if on_tick is not None:
            on_tick(k, state, tau)
        if taus is None:
            taus = np.empty((steps,) + tau.shape)
        taus[k] = tau
        state = step(tau)
        k += 1
    n = k + 1
    tau_rows = taus[:k] if taus is not None else np.empty((0, len(sim.state.tau_applied)))
    return Rollout(t=t[:n], q=q[:n], v=v[:n], tau=tau_rows, contact_force=force[:n],
                   in_contact=contact[:n], states=states, stopped_early=stopped,
                   contact_forces=forces[:n], measured_q=seen_q[:n], measured_v=seen_v[:n],
                   measured_contact_forces=seen_forces[:n],
                   imu=None if imu is None else imu[:n],
                   imu_truth=None if imu_truth is None else imu_truth[:n])


def _sensor_model(sim):
    """
    Return the sensor model of ``sim`` (a Simulator), or None.

    None: ``sim`` is something else (an emulated rig, a replay): its states are what it measured.
    """
    from dodo_sim.physics.sensors import SensorModel
    from dodo_sim.simulator import SimConfig
    config = getattr(sim, 'config', None)
    if getattr(sim, 'robot', None) is None or not isinstance(config, SimConfig):
        return None
    return SensorModel.of(sim)


def _read_only(array):
    """Return a read-only view of ``array`` (its rows are what a policy reads)."""
    view = array.view()
    view.flags.writeable = False
    return view


def _policy_rows(sim, policy):
    """
    Rows of ``state.contact_forces`` for a policy declaring ``contact_frames``.

    None: the policy takes the single-foot ``contact_force``.
    """
    frames = getattr(policy, 'contact_frames', None)
    if frames is None:
        return None
    if isinstance(frames, str):
        frames = (frames,)
    simulated = tuple(sim.contact_frames)
    missing = [f for f in frames if f not in simulated]
    if missing:
        raise ValueError(f"policy contact_frames {missing} are not simulated; the simulator's "
                         f'contact_frames are {list(simulated)} (SimConfig.contact_frames)')
    return np.array([simulated.index(f) for f in frames], dtype=int)


def _policy_coordinates(sim, policy):
    """
    Return the indices of the policy's ``joint_names`` in the simulator's q and v, or None.

    None: the policy takes the whole state (it names no joints, or the simulator's own).
    """
    names = getattr(policy, 'joint_names', None)
    robot = getattr(sim, 'robot', None)
    if names is None or robot is None or tuple(names) == tuple(robot.joint_names):
        return None
    simulated = tuple(robot.joint_names)
    missing = [n for n in names if n not in simulated]
    if missing:
        raise ValueError(f'policy joint_names {missing} are not joints of the simulated robot; '
                         f'its joints are {list(simulated)}')
    multi = [n for n in names if (robot.joint_nq[simulated.index(n)],
                                  robot.joint_nv[simulated.index(n)]) != (1, 1)]
    if multi:
        raise ValueError(f'policy joint_names {multi} have more than one coordinate; a policy '
                         f'reads 1-DoF joints (those of /joint_states)')
    return (np.array([robot.joint_idx_q[simulated.index(n)] for n in names], dtype=int),
            np.array([robot.joint_idx_v[simulated.index(n)] for n in names], dtype=int))


def _row_span(rows):
    """
    Return ``(first, stop)`` when ``rows`` are consecutive ascending indices, else None.

    ``rows`` can then be read as a slice.
    """
    if rows is None or len(rows) == 0:
        return None
    first = int(rows[0])
    if list(rows) != list(range(first, first + len(rows))):
        return None
    return first, first + len(rows)


class JointHold:
    """
    A PD hold of the actuated joints at reference positions.

    ``tau = -kp (q - q_ref) - kd v`` on the actuated coordinates (a policy for :func:`rollout`; the
    demo and physics tests use it to hold a pose).

    Inputs:
        actuated_indices: indices of the actuated joints in q (and v).
        q_ref: the full reference configuration (only the actuated entries are used).
        kp: stiffness, N*m/rad.  kd: damping, N*m*s/rad.
    """

    def __init__(self, actuated_indices, q_ref, kp: float = 300.0, kd: float = 20.0):
        self.index = np.asarray(actuated_indices, dtype=int)
        self.q_ref = np.asarray(q_ref, dtype=float)[self.index]
        self.kp, self.kd = kp, kd

    def update(self, t, q, v, contact_force):
        return -self.kp * (np.asarray(q)[self.index] - self.q_ref) \
            - self.kd * np.asarray(v)[self.index]


__all__ = ['Rollout', 'rollout', 'JointHold']
