"""The hopper simulator core: URDF + config -> ``reset(q, v)`` / ``step(tau)``. No rclpy here.

Example::

    from dodo_sim.simulator import Simulator, SimConfig
    sim = Simulator('urdf/hopper.urdf.xacro', SimConfig(integrator='event'))
    state = sim.reset()
    for _ in range(1000):
        state = sim.step([0.0, 0.0])        # [hip, knee] N*m, one control period
    print(state.t, state.q, state.in_contact, state.contact_force)

``step`` runs ``control_period / dt`` physics steps (an integer, checked) with the command held
(zero-order hold) through the motor model. Pushes on the base come from the config schedule or
from :meth:`Simulator.apply_impulse`; a constant external force from
:meth:`Simulator.set_external_force`.
"""
from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import Mapping, NamedTuple

import numpy as np
import pinocchio as pin

from .contact import ContactParams
from .event import EventDrivenIntegrator, EventParams
from .model import LegModel, ModelError, load_leg_model
from .motor import MotorModel
from .terrain import TERRAIN_KINDS, make_terrain
from .timestepping import SOLVERS, MoreauJeanIntegrator, TimeSteppingParams

INTEGRATORS = ('timestepping', 'event')
MODES = ('lockstep', 'realtime')


@dataclass(frozen=True)
class SimConfig:
    """Simulator parameters (the simulator node declares exactly these as ROS parameters).

    Attributes:
        integrator: 'timestepping' (Moreau-Jean midpoint) or 'event' (event-driven hybrid).
        dt: physics step, s. Event-driven: the fixed RK4 step between located events.
        control_period: one ``step()``, s; must be an integer multiple of dt.
        mode: 'lockstep' or 'realtime' (used by the simulator node; the core ignores it).
        command_timeout: s without a valid command before the node applies zero torque.
        initial_q: [x m, z m, hip rad, knee rad] used by ``reset()``.
        initial_v: [m/s, m/s, rad/s, rad/s] used by ``reset()``.
        friction: Coulomb coefficient mu (-).
        restitution: normal restitution e in [0, 1] (0: plastic impact).
        terrain: one of 'flat', 'slope', 'steps', 'sinusoid'.
        terrain_height_m: ground height at x = 0 (flat/slope/sinusoid) or before the first step, m.
        slope_deg: slope angle, degrees (positive: ground rises with x).
        step_edges_x_m: x of each step edge, m (increasing).
        step_rises_m: height change at each edge, m.
        sine_amplitude_m / sine_wavelength_m: sinusoidal ground, m.
        solver: prox solver of the time-stepping contact, 'gauss_seidel' or 'jacobi'.
        solver_relaxation: SOR/JOR factor in (0, 2).
        solver_max_iterations: prox iteration cap.
        solver_tolerance: prox stop tolerance on the impulse change, N*s (relative to 1 + Lambda_N).
        position_correction: time-stepping: project residual penetration out after each step.
        drift_correction_rate: event-driven stance constraint stabilisation (Baumgarte), 1/s.
        event_tolerance_s: event-driven root-finding tolerance on event times, s.
        torque_saturation: clip commanded torques at the URDF effort limits.
        motor_time_constant: first-order torque lag, s (0: ideal motors).
        push_times: times of scheduled pushes on the base, s.
        push_impulses_x / push_impulses_z: impulse of each push, N*s (world x / z).
        max_speed: |v| above this (m/s or rad/s) or non-finite state stops the run as diverged.
    """

    integrator: str = 'timestepping'
    dt: float = 0.001
    control_period: float = 0.001
    mode: str = 'lockstep'
    command_timeout: float = 0.5
    initial_q: tuple = (0.0, 1.1, 0.3, -0.6)
    initial_v: tuple = (0.0, 0.0, 0.0, 0.0)
    friction: float = 0.8
    restitution: float = 0.0
    terrain: str = 'flat'
    terrain_height_m: float = 0.0
    slope_deg: float = 0.0
    step_edges_x_m: tuple = ()
    step_rises_m: tuple = ()
    sine_amplitude_m: float = 0.0
    sine_wavelength_m: float = 1.0
    solver: str = 'gauss_seidel'
    solver_relaxation: float = 1.0
    solver_max_iterations: int = 100
    solver_tolerance: float = 1e-12
    position_correction: bool = True
    drift_correction_rate: float = 200.0
    event_tolerance_s: float = 1e-12
    torque_saturation: bool = False
    motor_time_constant: float = 0.0
    push_times: tuple = ()
    push_impulses_x: tuple = ()
    push_impulses_z: tuple = ()
    max_speed: float = 1.0e3

    def __post_init__(self):
        for name in ('initial_q', 'initial_v', 'step_edges_x_m', 'step_rises_m', 'push_times',
                     'push_impulses_x', 'push_impulses_z'):
            object.__setattr__(self, name, tuple(float(x) for x in getattr(self, name)))
        self.validate()

    def validate(self) -> None:
        """Raise ValueError naming the first bad value."""
        def bad(name, why):
            raise ValueError(f'SimConfig.{name} = {getattr(self, name)!r}: {why}')

        if self.integrator not in INTEGRATORS:
            bad('integrator', f'choose one of {INTEGRATORS}')
        if self.mode not in MODES:
            bad('mode', f'choose one of {MODES}')
        if self.terrain not in TERRAIN_KINDS:
            bad('terrain', f'choose one of {TERRAIN_KINDS}')
        if self.solver not in SOLVERS:
            bad('solver', f'choose one of {SOLVERS}')
        for name in ('dt', 'control_period', 'command_timeout', 'drift_correction_rate',
                     'event_tolerance_s', 'max_speed'):
            value = getattr(self, name)
            if not (math.isfinite(value) and value > 0.0):
                bad(name, 'must be a positive finite number')
        ratio = self.control_period / self.dt
        if abs(ratio - round(ratio)) > 1e-9 * ratio or round(ratio) < 1:
            bad('control_period', f'must be an integer multiple of dt = {self.dt} s '
                                  f'(ratio is {ratio:.6g})')
        if len(self.initial_q) != 4 or not all(map(math.isfinite, self.initial_q)):
            bad('initial_q', 'needs 4 finite values [x, z, hip, knee]')
        if len(self.initial_v) != 4 or not all(map(math.isfinite, self.initial_v)):
            bad('initial_v', 'needs 4 finite values')
        if not (math.isfinite(self.friction) and self.friction >= 0.0):
            bad('friction', 'must be >= 0')
        if not 0.0 <= self.restitution <= 1.0:
            bad('restitution', 'must be within [0, 1]')
        if not 0.0 < self.solver_relaxation < 2.0:
            bad('solver_relaxation', 'must be within (0, 2)')
        if self.solver_max_iterations < 1:
            bad('solver_max_iterations', 'must be >= 1')
        if not (math.isfinite(self.solver_tolerance) and self.solver_tolerance > 0.0):
            bad('solver_tolerance', 'must be positive')
        if not (math.isfinite(self.motor_time_constant) and self.motor_time_constant >= 0.0):
            bad('motor_time_constant', 'must be >= 0')
        if not len(self.push_times) == len(self.push_impulses_x) == len(self.push_impulses_z):
            bad('push_times', 'push_times, push_impulses_x and push_impulses_z need equal lengths')
        self.make_terrain()  # raises ValueError naming the bad shape value

    @property
    def substeps(self) -> int:
        return int(round(self.control_period / self.dt))

    def make_terrain(self):
        return make_terrain(self.terrain, height_m=self.terrain_height_m,
                            slope_deg=self.slope_deg, step_edges_x_m=self.step_edges_x_m,
                            step_rises_m=self.step_rises_m,
                            sine_amplitude_m=self.sine_amplitude_m,
                            sine_wavelength_m=self.sine_wavelength_m)

    @classmethod
    def from_dict(cls, values: Mapping[str, object]) -> 'SimConfig':
        """Build from a parameter mapping; unknown keys raise ValueError naming them."""
        known = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(set(values) - known)
        if unknown:
            raise ValueError(f'unknown simulator parameter(s) {unknown}; known: {sorted(known)}')
        return cls(**values)


class State(NamedTuple):
    """Simulator output after a control period.

    Attributes:
        t: simulated time, s.
        q: [x, z, hip, knee] (m, m, rad, rad).
        v: their rates.
        in_contact: the foot carried a normal force in the last physics step.
        contact_force: ground reaction force on the foot, world [fx, fz], N, averaged over the
            control period (what a foot force sensor reads; zero in flight).
        foot_position: world [x, z] of the foot point, m.
        tau_applied: [hip, knee] torques applied after the motor model, N*m.
        integrator: 'timestepping' or 'event'.
        solver_iterations: most prox iterations in a physics step of the period (time-stepping).
        events: events located in the period (event-driven), e.g. ('touchdown', 'liftoff').
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


class SimulationDiverged(RuntimeError):
    """The state left the valid range; ``last_good_state`` holds the last sound state."""

    def __init__(self, message: str, last_good_state: State):
        super().__init__(message)
        self.last_good_state = last_good_state


class Simulator:
    """Planar hopping-leg simulator with hard contact (see module docs)."""

    def __init__(self, urdf_xml_or_path, config: SimConfig | None = None,
                 xacro_args: Mapping[str, object] | None = None):
        self.config = config if config is not None else SimConfig()
        if not isinstance(self.config, SimConfig):
            raise TypeError(f'config must be a SimConfig, got {type(self.config).__name__}')
        self.leg: LegModel = load_leg_model(urdf_xml_or_path, xacro_args)
        cfg = self.config
        self.terrain = cfg.make_terrain()
        contact = ContactParams(friction=cfg.friction, restitution=cfg.restitution)
        if cfg.integrator == 'timestepping':
            self.integrator = MoreauJeanIntegrator(
                self.leg, self.terrain, contact,
                TimeSteppingParams(solver=cfg.solver, relaxation=cfg.solver_relaxation,
                                   max_iterations=cfg.solver_max_iterations,
                                   tolerance=cfg.solver_tolerance,
                                   position_correction=cfg.position_correction))
        else:
            self.integrator = EventDrivenIntegrator(
                self.leg, self.terrain, contact,
                EventParams(drift_correction_rate=cfg.drift_correction_rate,
                            time_tolerance_s=cfg.event_tolerance_s))
        self.motor = MotorModel(self.leg.effort_limits if cfg.torque_saturation else None,
                                cfg.motor_time_constant)
        self._data = self.leg.model.createData()
        self._generalized = np.zeros(self.leg.model.nv)  # S^T tau + J_base^T f, reused buffer
        self._base_force_map = self._base_force_jacobian_transpose()
        self._pushes = sorted(zip(cfg.push_times, cfg.push_impulses_x, cfg.push_impulses_z))
        self._external_force = np.zeros(2)
        self._pending_impulse = np.zeros(2)
        self.state: State | None = None
        self.reset()

    # -- public API ---------------------------------------------------------------------------

    def reset(self, q=None, v=None) -> State:
        """Set the state (defaults: config initial_q / initial_v) and time 0."""
        q = np.array(self.config.initial_q if q is None else q, dtype=float)
        v = np.array(self.config.initial_v if v is None else v, dtype=float)
        if q.shape != (4,) or v.shape != (4,) or not (np.isfinite(q).all()
                                                      and np.isfinite(v).all()):
            raise ValueError(f'reset needs 4 finite values for q and v, got q={q}, v={v}')
        self._q, self._v = q, v
        self._steps = 0
        self._next_push = 0
        self._pending_impulse = np.zeros(2)
        self.motor.reset()
        self.integrator.reset(q, v)
        self.state = self._make_state(0.0, False, np.zeros(2), 0, ())
        return self.state

    def step(self, tau) -> State:
        """Advance one control period holding the [hip, knee] torque command (N*m)."""
        try:
            hip, knee = float(tau[0]), float(tau[1])
            valid = len(tau) == 2 and math.isfinite(hip + knee)
        except (TypeError, IndexError, ValueError):
            valid = False
        if not valid:
            raise ValueError(f'tau must be 2 finite values [hip, knee] in N*m, got {tau!r}')
        command = np.array((hip, knee))
        cfg = self.config
        dt = cfg.dt
        if self._next_push < len(self._pushes):
            self._collect_scheduled_pushes()
        impulse = self._pending_impulse
        pushed = impulse[0] != 0.0 or impulse[1] != 0.0
        if pushed:
            self._pending_impulse = np.zeros(2)
        base_force = self._external_force
        forced = base_force[0] != 0.0 or base_force[1] != 0.0
        q, v = self._q, self._v
        impulse_x = impulse_z = 0.0
        in_contact = False
        iterations = 0
        events = ()
        generalized = self._generalized
        generalized[:2] = 0.0
        step = self.integrator.step
        for substep in range(cfg.substeps):
            generalized[2:] = self.motor.advance(command, dt)
            if forced or (pushed and substep < 2):
                force = base_force
                if pushed and substep == 0:
                    # a push is a constant force over one physics step carrying the impulse
                    force = base_force + impulse / dt
                generalized[:2] = self._base_force_map @ force  # base rows of J_body^T f
            q, v, contact = step(q, v, generalized, dt)
            contact_impulse = contact.impulse_world
            if contact_impulse[0] or contact_impulse[1]:
                impulse_x += contact_impulse[0]
                impulse_z += contact_impulse[1]
                iterations = max(iterations, contact.iterations)
            in_contact = contact.in_contact
            if contact.events:
                events += contact.events
        self._steps += 1
        t = self._steps * cfg.control_period
        speed_squared = float(v.dot(v))
        # NaN fails every comparison, so this also catches a non-finite state
        if not speed_squared <= cfg.max_speed * cfg.max_speed:
            self.integrator.reset(self._q, self._v)
            raise SimulationDiverged(
                f'simulation diverged at t = {t:.6f} s (q = {q}, v = {v}); '
                f'last good state at t = {self.state.t:.6f} s', self.state)
        self._q, self._v = q, v
        force = np.array((impulse_x, impulse_z))
        force /= cfg.control_period
        self.state = self._make_state(t, in_contact, force, iterations, events)
        return self.state

    def apply_impulse(self, impulse_xz) -> None:
        """Push the base with a world [x, z] impulse (N*s) at the start of the next step."""
        impulse = np.asarray(impulse_xz, dtype=float)
        if impulse.shape != (2,) or not np.isfinite(impulse).all():
            raise ValueError(f'impulse must be 2 finite values [x, z] in N*s, got {impulse_xz!r}')
        self._pending_impulse = self._pending_impulse + impulse

    def set_external_force(self, force_xz) -> None:
        """Apply a constant world [x, z] force (N) on the base until changed."""
        force = np.asarray(force_xz, dtype=float)
        if force.shape != (2,) or not np.isfinite(force).all():
            raise ValueError(f'force must be 2 finite values [x, z] in N, got {force_xz!r}')
        self._external_force = force

    def energy(self, q=None, v=None) -> float:
        """Kinetic + gravitational potential energy (J), zero potential at z_CoG = 0."""
        q = self._q if q is None else np.asarray(q, float)
        v = self._v if v is None else np.asarray(v, float)
        model, data = self.leg.model, self._data
        kinetic = pin.computeKineticEnergy(model, data, q, v)
        potential = pin.computePotentialEnergy(model, data, q)
        return float(kinetic + potential)

    @property
    def time(self) -> float:
        return self._steps * self.config.control_period

    # -- internals ----------------------------------------------------------------------------

    def _collect_scheduled_pushes(self) -> None:
        t = self.time
        while (self._next_push < len(self._pushes)
               and self._pushes[self._next_push][0] <= t + 1e-12):
            _, jx, jz = self._pushes[self._next_push]
            self._pending_impulse = self._pending_impulse + np.array((jx, jz))
            self._next_push += 1

    def _base_force_jacobian_transpose(self) -> np.ndarray:
        """2x2 map from a world [x, z] force on the body origin to the base coordinates'
        generalised forces (the body hangs on the base joints: the leg joints get none)."""
        model, data = self.leg.model, self._data
        jac = pin.computeFrameJacobian(model, data, np.zeros(model.nq), self.leg.body_frame_id,
                                       pin.LOCAL_WORLD_ALIGNED)
        return jac[0:3:2, 0:2].T.copy()

    def _make_state(self, t, in_contact, force, iterations, events) -> State:
        foot = getattr(self.integrator, 'end_foot', None)
        if foot is None:
            model, data = self.leg.model, self._data
            pin.forwardKinematics(model, data, self._q)
            foot = pin.updateFramePlacement(model, data, self.leg.foot_frame_id).translation
            foot = foot[0:3:2]
        else:
            foot = np.array(foot)
        # q and v are fresh arrays from the integrator and never modified in place: no copies
        return State(t, self._q, self._v, bool(in_contact), force, foot,
                     self.motor.applied, self.config.integrator, iterations, events)


__all__ = ['Simulator', 'SimConfig', 'State', 'SimulationDiverged', 'ModelError', 'INTEGRATORS']
