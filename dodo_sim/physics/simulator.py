# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
The simulator core: URDF + config -> ``reset(q, v)`` / ``step(tau)``.

No rclpy here.

Example::

    from dodo_sim.simulator import Simulator, SimConfig
    sim = Simulator('urdf/hopper.urdf.xacro',
                    SimConfig(integrator='event', initial_q=(0.0, 1.1, 0.3, -0.6)))
    state = sim.reset()
    for _ in range(1000):
        state = sim.step([0.0, 0.0])     # one torque per actuated joint (sim.actuated_joint_names)
    print(state.t, state.q, state.in_contacts, state.contact_forces)

``step`` runs ``control_period / dt`` physics steps (an integer, checked) with the command held
(zero-order hold) through the motor model. Pushes act at the origin of the heaviest link (the
hopper's body) and come from the config schedule or :meth:`Simulator.apply_impulse`; a constant
external force from :meth:`Simulator.set_external_force`. See ``docs/physics.md``. The
parameters, their units and bounds: :class:`.sim_config.SimConfig`.

Longer than ~500 lines: :class:`Simulator` is one object whose reset, step (substeps, motor
model, pushes, the integrators' reports) and state assembly share the model, the integrator and
the per-step bookkeeping.
"""
from __future__ import annotations

import dataclasses
import logging
import math
import os
from typing import Mapping, NamedTuple

import numpy as np
import pinocchio as pin

from .collision import add_collision_points
from .contact import ContactParams
from .event import EventDrivenIntegrator, EventLimitExceeded, EventParams
from .kernels.step import step as compiled_step
from .motor import armature, BackEmfLimit, MotorModel
from .robot import load_robot, ModelError, RobotModel
from .sim_config import INTEGRATORS, MODES, SimConfig
from .start_state import check_above_terrain, check_start_sizes, check_within_limits
from .timestepping import MoreauJeanIntegrator, TimeSteppingParams


class State(NamedTuple):
    """
    Simulator output after a control period (world frame, SI units).

    Fields:
        t: simulated time, s.
        q: configuration (pinocchio order, ``Simulator.joint_names``).
        v: generalised velocities.
        in_contact: any contact frame carried a normal force in the last physics step.
        contact_force: total ground reaction force on the contact frames, world [fx, fz], N,
            averaged over the control period (a one-foot robot: its foot force sensor).
        foot_position: world [x, z] of the first contact frame, m.
        tau_applied: torques applied to the actuated joints after the motor model, N*m.
        integrator: 'timestepping' or 'event'.
        solver_iterations: most contact-solver iterations in a physics step of the period.
        events: events located in the period (event-driven), e.g. ('touchdown', 'liftoff').
        in_contacts: per contact frame, it carried a normal force in the last physics step.
        contact_forces: (n_contacts, 3) world force on each contact frame, mean over the
            control period, N.
        foot_positions: (n_contacts, 3) world position of each contact frame, m.
        link_contacts: the links' collision points that carried a normal force in the last
            physics step (``collisions='links'``), as :class:`LinkContact` (link, world point,
            world force averaged over the control period); the feet are not in it.
        solver_residual: largest contact-solver residual in the period, m/s.
        unconverged_steps: physics steps since reset whose solve missed solver_tolerance.
    """

    t: float
    q: np.ndarray
    v: np.ndarray
    in_contact: bool
    contact_force: np.ndarray
    foot_position: np.ndarray
    tau_applied: np.ndarray
    integrator: str = 'timestepping'
    solver_iterations: int = 0
    events: tuple = ()
    in_contacts: tuple = ()
    contact_forces: np.ndarray | None = None
    foot_positions: np.ndarray | None = None
    solver_residual: float = 0.0
    unconverged_steps: int = 0
    link_contacts: tuple = ()


class LinkContact(NamedTuple):
    """
    A link's collision point in contact.

    ``link`` name, world ``point`` [x, y, z] (m) and world ``force`` [fx, fy, fz] on the link at it
    (N, mean over the control period).
    """

    link: str
    point: np.ndarray
    force: np.ndarray


# Numerical failures of an integrator inside one physics step (a singular or non-finite
# matrix, a non-finite state, the event integrator's event-count guard): Simulator.step turns
# them into SimulationDiverged with the last good state.
NUMERICAL_FAILURES = (np.linalg.LinAlgError, FloatingPointError, OverflowError,
                      ZeroDivisionError, EventLimitExceeded)


class SimulationDiverged(RuntimeError):
    """The state left the valid range; ``last_good_state`` holds the last sound state."""

    def __init__(self, message: str, last_good_state: State):
        super().__init__(message)
        self.last_good_state = last_good_state


class Simulator:
    """Rigid multibody simulator with hard contact and joint limits (see module docs)."""

    def __init__(self, urdf_xml_or_path, config: SimConfig | None = None,
                 xacro_args: Mapping[str, object] | None = None):
        self.config = config if config is not None else SimConfig()
        if not isinstance(self.config, SimConfig):
            raise TypeError(f'config must be a SimConfig, got {type(self.config).__name__}')
        cfg = self.config
        self.robot: RobotModel = load_robot(
            urdf_xml_or_path, contact_frames=cfg.contact_frames, contact_radii=cfg.contact_radii,
            actuated_joints=cfg.actuated_joints, xacro_args=xacro_args, base=cfg.base)
        if cfg.collisions == 'links':
            self.robot = dataclasses.replace(self.robot, collision_points=add_collision_points(
                self.robot, cfg.excluded_collision_links,
                urdf_xml_or_path if isinstance(urdf_xml_or_path, (str, os.PathLike)) else None))
        robot = self.robot
        self._n_feet = len(robot.contact_frame_ids)
        if cfg.motor_dynamics:        # before the integrators read the model
            robot.model.armature[list(robot.actuated_idx_v)] = armature(
                self._per_joint('motor_gear_ratio'), self._per_joint('motor_rotor_inertia_kgm2'))
        check_start_sizes(self.robot, self.config)
        self.terrain = cfg.make_terrain()
        contact = ContactParams(friction=cfg.friction, restitution=cfg.restitution)
        self._contact = contact
        self._accumulation_integrator = None    # event: built at its first accumulation step
        if cfg.integrator == 'timestepping':
            self.integrator = self._time_stepping()
        else:
            self.integrator = EventDrivenIntegrator(
                robot, self.terrain, contact,
                EventParams(drift_correction_rate=cfg.drift_correction_rate,
                            time_tolerance_s=cfg.event_tolerance_s,
                            solver_tolerance=cfg.solver_tolerance,
                            max_iterations=cfg.solver_max_iterations,
                            accumulation_speed=cfg.event_accumulation_speed),
                joint_limits=cfg.joint_limits)
        # the compiled time-stepping step with the motor torques as input (fast lane of step())
        self._fast = None
        if cfg.integrator == 'timestepping':
            buffers = self.integrator.compiled_buffers(robot.actuated_idx_v)
            if buffers is not None:
                self._fast = (compiled_step,) + buffers
        self.motor = self._motor_model()
        self._data = robot.model.createData()
        self._actuated = np.array(robot.actuated_idx_v, dtype=int)
        self._n_actuated = len(robot.actuated_idx_v)
        idx = list(robot.actuated_idx_v)
        contiguous = idx == list(range(idx[0], idx[0] + len(idx))) if idx else True
        self._actuated_slice = ((idx[0] if idx else 0, idx[-1] + 1 if idx else 0) if contiguous
                                else (None, None))
        self._substeps = cfg.substeps
        self._control_period = cfg.control_period
        self._max_speed_squared = cfg.max_speed * cfg.max_speed
        self._forced = False
        self._impulse_pending = False
        self._pushes = sorted(zip(cfg.push_times, cfg.push_impulses_x, cfg.push_impulses_z))
        self._external_force = np.zeros(3)
        self._pending_impulse = np.zeros(3)
        self.state: State | None = None
        # a pose the user gave (initial_q) is checked against the terrain; the model's default
        # pose (a floating base at the origin, half under the ground) is not: the user sets the
        # pose with reset(q), which checks it
        self.reset(check_terrain=bool(cfg.initial_q))

    def _per_joint(self, name: str) -> np.ndarray:
        """
        Return a motor parameter as one value per actuated joint.

        A bad length raises ValueError naming it.
        """
        values = getattr(self.config, name)
        n = len(self.robot.actuated_idx_v)
        if len(values) not in (1, n):
            raise ValueError(f'SimConfig.{name} = {list(values)}: needs one value or one per '
                             f'actuated joint {list(self.robot.actuated_joint_names)}')
        return np.broadcast_to(np.asarray(values, dtype=float), (n,)).copy()

    def _motor_model(self) -> MotorModel:
        cfg, robot = self.config, self.robot
        n = len(robot.actuated_idx_v)
        peak = (self._per_joint('motor_peak_torque_nm') if cfg.motor_peak_torque_nm
                else np.asarray(robot.effort_limits, dtype=float))
        back_emf = None
        if cfg.torque_saturation and cfg.motor_supply_voltage_v:
            back_emf = BackEmfLimit(
                gear_ratio=self._per_joint('motor_gear_ratio'),
                torque_constant=self._per_joint('motor_torque_constant_nm_per_a'),
                back_emf_constant=self._per_joint('motor_back_emf_constant_v_s_per_rad'),
                supply_voltage=self._per_joint('motor_supply_voltage_v'),
                resistance=self._per_joint('motor_resistance_ohm'), peak_torque=peak)
        return MotorModel(peak if cfg.torque_saturation else None, cfg.motor_time_constant, n,
                          back_emf=back_emf, speed_index=robot.actuated_idx_v)

    # -- model information --------------------------------------------------------------------

    @property
    def leg(self) -> RobotModel:
        """Return the robot model (name kept from the hopper-only simulator)."""
        return self.robot

    @property
    def joint_names(self) -> tuple:
        return self.robot.joint_names

    @property
    def actuated_joint_names(self) -> tuple:
        return self.robot.actuated_joint_names

    @property
    def contact_frames(self) -> tuple:
        return self.robot.contact_frames

    # -- public API ---------------------------------------------------------------------------

    def reset(self, q=None, v=None, *, check_terrain: bool = True) -> State:
        """
        Set the state (defaults: config initial_q / initial_v, else the model's) and time 0.

        Raises ValueError for a state with a contact point more than
        ``start_state.INITIAL_PENETRATION_TOLERANCE_M`` under the terrain (the message names the
        contact frame, its depth and how far to raise the robot), and (with ``joint_limits``) for
        a joint outside its URDF limits; ``check_terrain=False`` skips both checks (the
        constructor does for the model's default pose).
        """
        robot = self.robot
        cfg = self.config
        if q is None:
            q = cfg.initial_q if cfg.initial_q else robot.default_q
        if v is None:
            v = cfg.initial_v if cfg.initial_v else robot.default_v
        q = np.array(q, dtype=float)
        v = np.array(v, dtype=float)
        if q.shape != (robot.nq,) or v.shape != (robot.nv,) or not (
                np.isfinite(q).all() and np.isfinite(v).all()):
            raise ValueError(f'reset needs {robot.nq} finite values for q '
                             f'{robot.coordinate_names()} and {robot.nv} for v, '
                             f'got q={q.tolist()}, v={v.tolist()}')
        if not robot.vector_space:
            q = pin.normalize(robot.model, q)
        if check_terrain:
            self._check_above_terrain(q)
            if cfg.joint_limits:
                check_within_limits(robot, q)
        self._q, self._v = q, v
        self._steps = 0
        self._next_push = 0
        self._pending_impulse = np.zeros(3)
        self._impulse_pending = False
        self._unconverged = 0
        self._accumulations = 0
        self.motor.reset()
        self.integrator.reset(q, v)
        n = len(robot.contact_frame_ids)
        self.state = self._make_state(0.0, (False,) * n, np.zeros((n, 3)), 0, 0.0, ())
        return self.state

    def step(self, tau) -> State:
        """
        Advance one control period holding the torque command.

        The command has one value per actuated joint, in ``actuated_joint_names`` order, N*m or N.
        """
        n_act = self._n_actuated
        try:
            command = np.array(tau, dtype=float).reshape(-1)
            valid = command.shape == (n_act,) and all(map(math.isfinite, command.tolist()))
        except (TypeError, ValueError):
            valid = False
        if not valid:
            raise ValueError(f'tau must be {n_act} finite values '
                             f'{list(self.actuated_joint_names)} in N*m, got {tau!r}')
        cfg = self.config
        dt = cfg.dt
        if self._next_push < len(self._pushes):
            self._collect_scheduled_pushes()
        pushed = self._impulse_pending
        impulse = self._pending_impulse
        if pushed:
            self._pending_impulse = np.zeros(3)
            self._impulse_pending = False
        base_force = self._external_force
        forced = self._forced
        q, v = self._q, self._v
        self._applied_before_step = self.motor.applied
        if (self._fast is not None and not forced and not pushed
                and 'step' not in self.integrator.__dict__):  # a wrapped step (tests) runs it
            return self._step_compiled(q, v, command, dt)
        impulses = None
        iterations = 0
        residual = 0.0
        events = ()
        step = self.integrator.step
        advance = self.motor.advance
        lo, hi = self._actuated_slice
        nv = self.robot.nv
        for substep in range(self._substeps):
            generalized = np.zeros(nv)
            if lo is not None:
                generalized[lo:hi] = advance(command, dt, v)
            else:
                generalized[self._actuated] = advance(command, dt, v)
            if forced or (pushed and substep == 0):
                force = base_force
                if pushed and substep == 0:
                    # a push is a constant force over one physics step carrying the impulse
                    force = base_force + impulse / dt
                generalized += self._push_map(q).dot(force)
            try:
                q, v, report = step(q, v, generalized, dt)
            except EventLimitExceeded as err:
                if cfg.event_accumulation == 'stop':
                    self._diverged(f'{type(err).__name__} inside the {self.integrator.name} '
                                   f'integrator ({err})', err)
                q, v, report = self._accumulation_step(q, v, generalized, dt, err)
            except NUMERICAL_FAILURES as err:
                self._diverged(f'{type(err).__name__} inside the {self.integrator.name} '
                               f'integrator ({err})', err)
            impulses = report.contact_impulses if impulses is None else (
                impulses + report.contact_impulses)
            if report.iterations > iterations:
                iterations = report.iterations
            if report.residual > residual:
                residual = report.residual
            if not report.converged:
                self._unconverged += 1
            if report.events:
                events += report.events
        speed_squared = float(v.dot(v))
        # NaN fails every comparison, so this also catches a non-finite state
        if not speed_squared <= self._max_speed_squared:
            self._diverged(f'speed bound exceeded (q = {q}, v = {v})')
        self._steps += 1
        t = self._steps * cfg.control_period
        self._q, self._v = q, v
        self.state = self._make_state(t, report.in_contact, impulses / cfg.control_period,
                                      iterations, residual, events)
        return self.state

    def _diverged(self, why: str, cause: BaseException | None = None):
        """
        Raise SimulationDiverged for the control step that started at the last good state.

        The simulator is left at that state (the integrator's modes and the motor too).
        """
        self.integrator.reset(self._q, self._v)
        self.motor.applied = self._applied_before_step
        start = self._steps * self.config.control_period
        end = (self._steps + 1) * self.config.control_period
        raise SimulationDiverged(
            f'simulation diverged in control step {self._steps + 1} (t = {start:.6f} s to '
            f'{end:.6f} s): {why}; last good state at t = {start:.6f} s',
            self.state) from cause

    def _step_compiled(self, q, v, command, dt) -> State:
        """step() through the compiled time-stepping step (no push or external force)."""
        kernel, floats, ints = self._fast
        advance = self.motor.advance
        impulses = None
        iterations = 0
        residual = 0.0
        for _ in range(self._substeps):
            q, v, impulse, positions, stats = kernel(q, v, advance(command, dt, v), dt, floats,
                                                     ints)
            impulses = impulse if impulses is None else impulses + impulse
            values = stats.tolist()
            if values[0] > iterations:
                iterations = int(values[0])
            if values[1] > residual:
                residual = values[1]
            if values[2] == 0.0:
                self._unconverged += 1
        if not float(v.dot(v)) <= self._max_speed_squared:
            self._diverged(f'speed bound exceeded (q = {q}, v = {v})')
        steps = self._steps = self._steps + 1
        period = self._control_period
        t = steps * period
        self._q, self._v = q, v
        nf = self._n_feet
        flags = values[4:]
        in_contacts = tuple([flag != 0.0 for flag in flags[:nf]])
        forces = impulses / period
        links = ()
        if len(flags) > nf:
            links = self._link_contacts(flags, forces, positions)
            forces, positions = forces[:nf], positions[:nf]
        total, foot = total_force_and_foot(forces, positions)
        self.state = state = State(t, q, v, True in in_contacts, total, foot, self.motor.applied,
                                   'timestepping', iterations, (), in_contacts, forces,
                                   positions, residual, self._unconverged, links)
        return state

    def apply_impulse(self, impulse) -> None:
        """
        Push the base (heaviest link) with a world impulse.

        The impulse is [x, z] or [x, y, z], N*s; it acts at the start of the next step.
        """
        self._pending_impulse = self._pending_impulse + self._world_vector(impulse, 'impulse',
                                                                           'N*s')
        self._impulse_pending = bool(self._pending_impulse.any())

    def set_external_force(self, force) -> None:
        """Apply a constant world [x, z] or [x, y, z] force (N) on the base until changed."""
        self._external_force = self._world_vector(force, 'force', 'N')
        self._forced = bool(self._external_force.any())

    def energy(self, q=None, v=None) -> float:
        """Return the kinetic + gravitational potential energy in J (zero potential: z_CoG = 0)."""
        q = self._q if q is None else np.asarray(q, float)
        v = self._v if v is None else np.asarray(v, float)
        model, data = self.robot.model, self._data
        kinetic = pin.computeKineticEnergy(model, data, q, v)
        potential = pin.computePotentialEnergy(model, data, q)
        return float(kinetic + potential)

    def contact_positions(self, q=None) -> np.ndarray:
        """(n_contacts, 3) world positions of the contact frames at q (default: current), m."""
        q = self._q if q is None else np.asarray(q, float)
        model, data = self.robot.model, self._data
        pin.forwardKinematics(model, data, q)
        positions = np.empty((len(self.robot.contact_frame_ids), 3))
        for k, frame in enumerate(self.robot.contact_frame_ids):
            positions[k] = pin.updateFramePlacement(model, data, frame).translation
        return positions

    @property
    def time(self) -> float:
        return self._steps * self.config.control_period

    @property
    def accumulation_steps(self) -> int:
        """Physics steps since reset the event integrator left to time-stepping (see config)."""
        return self._accumulations

    @property
    def unconverged_steps(self) -> int:
        """Physics steps since reset whose contact solve missed the tolerance."""
        return self._unconverged

    # -- internals ----------------------------------------------------------------------------

    def _time_stepping(self) -> MoreauJeanIntegrator:
        cfg = self.config
        return MoreauJeanIntegrator(
            self.robot, self.terrain, self._contact,
            TimeSteppingParams(solver=cfg.solver, relaxation=cfg.solver_relaxation,
                               max_iterations=cfg.solver_max_iterations,
                               tolerance=cfg.solver_tolerance,
                               position_correction=cfg.position_correction),
            joint_limits=cfg.joint_limits)

    def _accumulation_step(self, q, v, generalized, dt, err):
        """
        Take a physics step the event integrator could not resolve by time-stepping.

        An event-driven scheme cannot pass an accumulation of events (Acary & Brogliato 2008,
        "Numerical Methods for Nonsmooth Dynamical Systems", ch. 8), and with dozens of support
        points landing at once the event count outgrows max_events_per_step. The Moreau-Jean
        step passes through it with the same contact law; the event integrator then derives
        its modes anew at (q+, v+). Numerical failures of that step are divergences as usual.
        """
        if self._accumulation_integrator is None:
            self._accumulation_integrator = self._time_stepping()
        if self._accumulations == 0:
            logging.getLogger(__name__).warning(
                't = %.6f s: %s; this physics step is taken by time-stepping (SimConfig.'
                "event_accumulation='timestepping'; counted in Simulator.accumulation_steps)",
                self.time, err)
        try:
            q, v, report = self._accumulation_integrator.step(q, v, generalized, dt)
        except NUMERICAL_FAILURES as failure:
            self._diverged(f'{type(failure).__name__} inside the time-stepping step taken at '
                           f'an accumulation of events ({failure})', failure)
        self.integrator.reset(q, v)
        self._accumulations += 1
        return q, v, report

    def _check_above_terrain(self, q) -> None:
        positions = self.contact_positions(q)
        check_above_terrain(self.robot, self.integrator.geometry, positions, q,
                            self.config.terrain, self._data)

    @staticmethod
    def _world_vector(value, what, unit) -> np.ndarray:
        vec = np.asarray(value, dtype=float).reshape(-1)
        if vec.shape not in ((2,), (3,)) or not np.isfinite(vec).all():
            raise ValueError(f'{what} must be 2 finite values [x, z] or 3 [x, y, z] in {unit}, '
                             f'got {value!r}')
        return vec if vec.shape == (3,) else np.array((vec[0], 0.0, vec[1]))

    def _collect_scheduled_pushes(self) -> None:
        t = self.time
        while (self._next_push < len(self._pushes)
               and self._pushes[self._next_push][0] <= t + 1e-12):
            _, jx, jz = self._pushes[self._next_push]
            self._pending_impulse = self._pending_impulse + np.array((jx, 0.0, jz))
            self._next_push += 1
        self._impulse_pending = bool(self._pending_impulse.any())

    def _push_map(self, q) -> np.ndarray:
        """Map J^T (nv x 3) from a world force at the push frame's origin to generalised forces."""
        model, data = self.robot.model, self._data
        jac = pin.computeFrameJacobian(model, data, q, self.robot.push_frame_id,
                                       pin.LOCAL_WORLD_ALIGNED).reshape(6, model.nv)
        return jac[:3].T

    def _link_contacts(self, flags, forces, positions=None) -> tuple:
        """Return a LinkContact per collision point with a set flag (positions at q when None)."""
        nf = self._n_feet
        robot = self.robot
        touching = [k for k in range(nf, len(flags)) if flags[k]]
        if not touching:
            return ()
        if positions is None:
            model, data = robot.model, self._data
            pin.forwardKinematics(model, data, self._q)
            geometry = self.integrator.geometry
            points = {k: pin.updateFramePlacement(model, data, geometry.frame_ids[k])
                      .translation.copy() for k in touching}
        else:
            points = {k: positions[k].copy() for k in touching}
        return tuple(LinkContact(robot.collision_points[k - nf].link, points[k],
                                 np.array(forces[k], float)) for k in touching)

    def _make_state(self, t, in_contacts, forces, iterations, residual, events) -> State:
        positions = self.contact_positions()
        links = ()
        nf = self._n_feet
        if len(in_contacts) > nf:
            links = self._link_contacts(in_contacts, forces)
            in_contacts, forces = in_contacts[:nf], forces[:nf]
        in_contacts = tuple(bool(c) for c in in_contacts)
        total, foot = total_force_and_foot(forces, positions)
        # q and v are fresh arrays from the integrator and never modified in place: no copies
        return State(t, self._q, self._v, any(in_contacts), total, foot,
                     self.motor.applied, self.config.integrator, iterations, events,
                     in_contacts, forces, positions, residual, self._unconverged, links)


def total_force_and_foot(forces, positions):
    """Return State.contact_force and foot_position from the feet's world [x, y, z] rows."""
    n = len(forces)
    if n == 1:
        return forces[0, ::2].copy(), positions[0, ::2].copy()
    if n:
        return forces.sum(axis=0)[::2], positions[0, ::2].copy()
    return np.zeros(2), np.zeros(2)


__all__ = ['Simulator', 'SimConfig', 'State', 'LinkContact', 'SimulationDiverged', 'ModelError',
           'INTEGRATORS', 'MODES']
