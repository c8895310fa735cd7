# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
Joint PD of any robot: hold the start pose or track joint set-points (docs/joint.md).

Pure core, no rclpy. What a new robot runs first, and what optimisation studies of robots
without a controller of their own use.

API (the controller node hosts exactly this, registry name ``joint_hold``)::

    from dodo_control.joint import JointController, JointControllerConfig
    ctrl = JointController(urdf_xml_or_path, JointControllerConfig())
    tau = ctrl.update(t, q, v, contact_forces)    # -> one torque per ctrl.actuated_joint_names
    ctrl.telemetry                                 # JointTelemetry of the last update
    ctrl.reconfigure(JointControllerConfig(target_joints=('knee',), target_positions=(1.2,)))
    ctrl.reset()                                   # the next update's state is the new start pose

Inputs of ``update``: ``t`` (s); ``q``, ``v`` in ``ctrl.joint_names`` order — every 1-DoF joint
of the robot, the ones in ``/joint_states`` (m or rad, m/s or rad/s). A floating base's pose and
twist are NOT inputs: a real robot does not measure them with encoders, and the contract keeps
the free flyer out of ``/joint_states`` (docs/ros_contract.md). ``contact_forces`` (one row per
``contact_frames`` entry) is accepted and not used: the node subscribes to the simulator's
contact topics so that its lockstep start gate and stamp pairing work as for every controller.

Control law, per controlled joint i (``joints``; default every actuated joint)::

    tau_i = clip(g_i(q) + kp_i (q*_i - q_i) - kd_i v_i, -effort_i, effort_i)

* q*: the target — the joint's position at the first update (the start pose), or the value
  ``target_positions`` gives it (``target_joints`` names them; NaN: keep the start position).
* g(q): gravity compensation (``gravity_compensation``), ``pinocchio.computeGeneralizedGravity``
  of the robot with its root link bolted to the world as the URDF places it, at the measured q.
  For a world-attached robot (an arm, the hopper on its boom) that is its exact gravity torque.
  For a floating base it is the gravity torque with the base held upright (the URDF's root
  orientation): it carries each limb's own weight as if the base were held, not the weight of
  the trunk on the stance legs (that needs the contact forces and the base orientation, neither
  of which this controller reads); the PD carries that part, with a static error
  load / kp.
* effort: the URDF ``<limit effort>`` of the joint (``RobotModel.effort_limits``).
* kp, kd: ``kp`` / ``kd`` when given (one value: every joint; else one per joint); otherwise the
  gain rule (:func:`model_gains`, docs/joint.md "Gains"): from the joint-space inertia M at the
  start pose, kp_i = M_ii w^2, kd_i = 2 zeta M_ii w, with w = 2 pi ``bandwidth_hz`` lowered so
  that the discrete loop at ``control_period`` T stays well damped for the coupled joints:
  w <= 1 / (2 zeta lambda T) and w <= 1 / (2 sqrt(lambda) T), lambda the largest eigenvalue of
  M_cc^-1 diag(M_cc) (M_cc: the controlled joints' block).
"""
from __future__ import annotations

from dataclasses import dataclass
import math
from typing import Mapping

from dodo_sim.parameter import bounded, check_fields, config_from_dict
import numpy as np

#: ``joints`` / ``target_joints`` value meaning "every actuated joint" / "the ``joints`` order".
AUTO = 'auto'


@dataclass(frozen=True)
class JointControllerConfig:
    """
    Parameters of the joint PD (a controller node declares exactly these as ROS parameters).

    Fields:
        contact_frames: the simulator's contact frames (its ``contact_frames``); the node
            subscribes to their topics and pairs them with the joint states by stamp; the control
            law does not read them.
        joints: the joints the controller drives, each an actuated 1-DoF joint of the URDF
            (``auto``: every actuated joint, URDF order); the order of the returned torques and
            of per-joint ``kp`` / ``kd``.
        target_joints: names the entries of ``target_positions`` (``auto``: the ``joints``
            order); every joint of ``joints`` not named holds its start position.
        target_positions: set-point per ``target_joints`` entry, rad (m for a prismatic joint);
            NaN: hold that joint's start position; empty: hold the start pose (the measured q at
            the first update).
        kp: stiffness, N*m/rad (N/m prismatic), >= 0; empty: the gain rule (``bandwidth_hz``,
            ``damping_ratio``); one value: every joint; else one per ``joints`` entry.
        kd: damping, N*m*s/rad (N*s/m prismatic), >= 0; empty/one/per joint as ``kp``.
        bandwidth_hz: the gain rule's natural frequency w / (2 pi) of each joint on its own
            inertia, Hz, in (0, 1000]; lowered when the control period cannot damp it.
        damping_ratio: the gain rule's damping ratio zeta, (-), in (0, 10].
        control_period: the period the controller is called at, s, > 0 (the simulator's
            ``control_period``): the gain rule keeps the loop well damped at it.
        gravity_compensation: add the model's gravity torque g(q) (a floating base: with the base
            held upright, see the module docs).
    """

    contact_frames: tuple = ('foot',)
    joints: tuple = (AUTO,)
    target_joints: tuple = (AUTO,)
    target_positions: tuple = bounded((), unit='rad or m', allow_nan=True)
    kp: tuple = bounded((), low=0.0, unit='N*m/rad or N/m')
    kd: tuple = bounded((), low=0.0, unit='N*m*s/rad or N*s/m')
    bandwidth_hz: float = bounded(20.0, 0.0, 1000.0, low_open=True, unit='Hz')
    damping_ratio: float = bounded(1.0, 0.0, 10.0, low_open=True, unit='-')
    control_period: float = bounded(0.001, low=0.0, low_open=True, unit='s')
    gravity_compensation: bool = True

    def __post_init__(self):
        for name in ('contact_frames', 'joints', 'target_joints'):
            value = getattr(self, name)
            if isinstance(value, str):
                value = (value,)
            object.__setattr__(self, name, tuple(str(x) for x in value))
        for name in ('target_positions', 'kp', 'kd'):
            value = getattr(self, name)
            if isinstance(value, (int, float)):
                value = (value,)
            object.__setattr__(self, name, tuple(float(x) for x in value))
        self.validate()

    def validate(self) -> None:
        """Raise ValueError naming the first bad value (rules that need the robot: the core)."""
        def bad(name, why):
            raise ValueError(f'JointControllerConfig.{name} = {getattr(self, name)!r}: {why}')

        check_fields(self)
        if len(set(self.contact_frames)) != len(self.contact_frames) or not all(
                self.contact_frames):
            bad('contact_frames', 'needs distinct, non-empty frame names')
        for name in ('joints', 'target_joints'):
            names = getattr(self, name)
            if not names or not all(names) or len(set(names)) != len(names):
                bad(name, f"needs distinct, non-empty joint names (or '{AUTO}')")
            if AUTO in names and names != (AUTO,):
                bad(name, f"'{AUTO}' stands alone")
        if self.target_joints != (AUTO,) and len(self.target_positions) not in (
                0, len(self.target_joints)):
            bad('target_positions', f'needs one value per target_joints entry '
                                    f'({len(self.target_joints)}) or none')

    @classmethod
    def from_dict(cls, values: Mapping[str, object]) -> 'JointControllerConfig':
        """Build from a parameter mapping; unknown keys raise ValueError naming them."""
        return config_from_dict(cls, values, 'joint controller')


@dataclass(frozen=True)
class JointTelemetry:
    """
    Snapshot after the last :meth:`JointController.update`, per controlled joint.

    Fields:
        t: time of the update, s.
        target: the joints' targets q*, rad or m.
        error: q - q*, rad or m.
        gravity: gravity compensation torque g(q), N*m or N (0 when off).
        saturated: how many torques were clipped at their URDF effort this tick.
        tau: the returned torques, N*m or N.
    """

    t: float
    target: tuple
    error: tuple
    gravity: tuple
    saturated: int
    tau: tuple


@dataclass(frozen=True)
class Gains:
    """Per-joint gains and how the rule chose them (docs/joint.md "Gains")."""

    kp: np.ndarray                 # N*m/rad
    kd: np.ndarray                 # N*m*s/rad
    inertia: np.ndarray            # M_ii at the start pose, kg*m^2 (kg prismatic)
    coupling: float                # lambda_max(M_cc^-1 diag(M_cc)), >= 1
    omega_rad_s: float             # the rule's w after the control-period limits


def model_gains(inertia_block: np.ndarray, bandwidth_hz: float, damping_ratio: float,
                control_period_s: float) -> Gains:
    """
    Apply the gain rule to the controlled joints' block M_cc of the joint-space inertia.

    kp_i = M_ii w^2, kd_i = 2 zeta M_ii w: each joint alone on its own inertia is a critically
    damped (zeta = 1) oscillator of natural frequency w. The loop is discrete: the torque of a
    state is held for one control period T. In the coupled joints a mode moves with up to lambda
    times a joint's own rate (lambda = lambda_max(M_cc^-1 diag M_cc), 1 for uncoupled joints), so
    its damping removes 2 zeta w lambda T of its velocity per tick and its stiffness w^2 lambda T^2
    of its position. w is lowered until both are <= 1 and <= 1/4: every mode then decays without
    alternating sign (the symplectic-Euler stability bounds are 2 and 4 - 2 b).
    """
    block = np.atleast_2d(np.asarray(inertia_block, dtype=float))
    diag = np.diag(block).copy()
    if block.size == 0:
        return Gains(np.zeros(0), np.zeros(0), diag, 1.0, 2.0 * math.pi * bandwidth_hz)
    scaled = np.linalg.solve(block, np.diag(diag))
    coupling = max(1.0, float(np.max(np.linalg.eigvals(scaled).real)))
    omega = min(2.0 * math.pi * bandwidth_hz,
                1.0 / (2.0 * damping_ratio * coupling * control_period_s),
                1.0 / (2.0 * math.sqrt(coupling) * control_period_s))
    return Gains(diag * omega ** 2, 2.0 * damping_ratio * diag * omega, diag, coupling, omega)


class JointController:
    """PD hold of the start pose or joint set-points of any robot, docs/joint.md."""

    # how the controller node hosts it (dodo_control.registry, entry point joint_hold)
    config_class = JointControllerConfig
    startup_only = ('contact_frames', 'joints')
    default_model = 'package://dodo_sim/urdf/hopper.urdf.xacro'

    def __init__(self, urdf_xml_or_path, config: JointControllerConfig | None = None):
        from dodo_sim.physics.robot import FLOATING_BASE_JOINT, load_robot
        import pinocchio as pin
        self._pin = pin
        # the root link bolted to the world as the URDF places it: g(q) of the base held
        # upright for a floating base (module docs); the joints are then those of /joint_states
        self.robot = load_robot(urdf_xml_or_path, contact_frames=(), base='fixed')
        self.floating_base = load_robot(urdf_xml_or_path, contact_frames=()).floating_base
        model = self.robot.model
        multi = [n for n, nq, nv in zip(self.robot.joint_names, self.robot.joint_nq,
                                        self.robot.joint_nv)
                 if (nq, nv) != (1, 1) and n != FLOATING_BASE_JOINT]
        if multi:
            raise ValueError(f'joint controller: joint(s) {multi} have more than one coordinate '
                             f'and are not in /joint_states; only 1-DoF joints are measured')
        self._data = model.createData()
        self._joint_names = tuple(self.robot.joint_names)
        self._config = None
        self.reconfigure(config if config is not None else JointControllerConfig())

    # -- what the node sizes its topics from ---------------------------------------------------

    @property
    def config(self) -> JointControllerConfig:
        return self._config

    @property
    def joint_names(self) -> tuple:
        """Order of q and v in ``update``: every 1-DoF joint (those of /joint_states)."""
        return self._joint_names

    @property
    def actuated_joint_names(self) -> tuple:
        """Order of the returned torques: the controlled joints (``joints``)."""
        return self._controlled

    @property
    def contact_frames(self) -> tuple:
        return self._config.contact_frames

    @property
    def telemetry(self) -> JointTelemetry | None:
        return self._telemetry

    @property
    def telemetry_labels(self) -> dict:
        """Per-joint channels ``target_<joint>``, ``error_<joint>``, ``gravity_<joint>``."""
        joints = self._controlled
        return {'target': joints, 'error': joints, 'gravity': joints, 'tau': None}

    @property
    def gains(self) -> Gains | None:
        """Return the gains in use (None before the first update: the rule needs the start q)."""
        return self._gains

    @property
    def start_q(self) -> np.ndarray | None:
        """Return the measured q of the first update (``joint_names`` order), None before."""
        return None if self._start_q is None else self._start_q.copy()

    # -- configuration -------------------------------------------------------------------------

    def reconfigure(self, config: JointControllerConfig) -> None:
        """
        Use ``config`` from the next update on.

        The start pose is kept while the controlled joints stay the same (a node changing
        set-points or gains mid-run); otherwise the controller is reset. Raises ValueError
        naming a joint the robot lacks or a list of the wrong length (the running config is then
        kept).
        """
        if not isinstance(config, JointControllerConfig):
            raise TypeError(f'config must be a JointControllerConfig, got '
                            f'{type(config).__name__}')
        robot = self.robot
        actuated = tuple(robot.actuated_joint_names)
        controlled = actuated if config.joints == (AUTO,) else config.joints
        unknown = [j for j in controlled if j not in actuated]
        if unknown:
            raise ValueError(f'joint controller: joints {unknown} are not actuated joints of the '
                             f'robot (URDF effort > 0); its actuated joints are {list(actuated)}')
        controlled = tuple(j for j in actuated if j in controlled) if config.joints == (AUTO,) \
            else controlled
        n = len(controlled)
        named = controlled if config.target_joints == (AUTO,) else config.target_joints
        stray = [j for j in named if j not in controlled]
        if stray:
            raise ValueError(f'joint controller: target_joints {stray} are not among the '
                             f'controlled joints {list(controlled)}')
        if config.target_positions and len(config.target_positions) != len(named):
            raise ValueError(f'joint controller: target_positions has '
                             f'{len(config.target_positions)} values for the {len(named)} '
                             f'target joints {list(named)}')
        for name in ('kp', 'kd'):
            if len(getattr(config, name)) not in (0, 1, n):
                raise ValueError(f'joint controller: {name} needs none, one or {n} values (one '
                                 f'per joint of {list(controlled)}), got '
                                 f'{len(getattr(config, name))}')
        targets = np.full(n, np.nan)
        for joint, value in zip(named, config.target_positions):
            targets[controlled.index(joint)] = value
        same_joints = self._config is not None and controlled == self._controlled
        names = self._joint_names
        self._config = config
        self._controlled = controlled
        self._q_index = np.array([names.index(j) for j in controlled], dtype=int)
        self._v_index = np.array([robot.joint_idx_v[names.index(j)] for j in controlled],
                                 dtype=int)
        self._effort = np.array([robot.effort_limits[actuated.index(j)] for j in controlled])
        self._targets_set = targets
        if not same_joints:
            self.reset()
        elif self._start_q is not None:
            self._gains = self._make_gains(self._start_q)
            self._targets = self._resolve_targets(self._start_q)

    def reset(self) -> None:
        """Forget the start pose: the next update's measured q becomes it."""
        self._start_q = None
        self._gains = None
        self._targets = None
        self._telemetry = None

    def _make_gains(self, q_start: np.ndarray) -> Gains:
        cfg = self._config
        pin, model = self._pin, self.robot.model
        mass = pin.crba(model, self._data, np.asarray(q_start, dtype=float))
        mass = np.triu(mass) + np.triu(mass, 1).T
        block = mass[np.ix_(self._v_index, self._v_index)]
        rule = model_gains(block, cfg.bandwidth_hz, cfg.damping_ratio, cfg.control_period)
        n = len(self._controlled)

        def chosen(values, default):
            return default if not values else np.broadcast_to(np.asarray(values, float),
                                                              (n,)).copy()

        return Gains(chosen(cfg.kp, rule.kp), chosen(cfg.kd, rule.kd), rule.inertia,
                     rule.coupling, rule.omega_rad_s)

    def _resolve_targets(self, q_start: np.ndarray) -> np.ndarray:
        start = q_start[self._q_index]
        return np.where(np.isnan(self._targets_set), start, self._targets_set)

    # -- the tick ------------------------------------------------------------------------------

    def update(self, t: float, q, v, contact_forces=None) -> np.ndarray:
        """One control tick: the torques of the controlled joints (module docs)."""
        q = np.asarray(q, dtype=float)
        v = np.asarray(v, dtype=float)
        if q.shape != (len(self._joint_names),) or v.shape != q.shape:
            raise ValueError(f'joint controller: q and v need one value per joint of '
                             f'{list(self._joint_names)}, got shapes {q.shape}, {v.shape}')
        if self._start_q is None:
            self._start_q = q.copy()
            self._gains = self._make_gains(q)
            self._targets = self._resolve_targets(q)
        gains = self._gains
        error = q[self._q_index] - self._targets
        if self._config.gravity_compensation:
            gravity = self._pin.computeGeneralizedGravity(self.robot.model, self._data,
                                                          q)[self._v_index]
        else:
            gravity = np.zeros(len(self._controlled))
        raw = gravity - gains.kp * error - gains.kd * v[self._v_index]
        tau = np.clip(raw, -self._effort, self._effort)
        self._telemetry = JointTelemetry(
            t=float(t), target=tuple(self._targets.tolist()), error=tuple(error.tolist()),
            gravity=tuple(gravity.tolist()), saturated=int(np.count_nonzero(tau != raw)),
            tau=tuple(tau.tolist()))
        return tau


__all__ = ['AUTO', 'Gains', 'JointController', 'JointControllerConfig', 'JointTelemetry',
           'model_gains']
