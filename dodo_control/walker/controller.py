# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
Pulse controller of the planar Kneed Walker (As & Mailhot 2018).

Pure core, no rclpy.

API (a ROS node wraps exactly this)::

    from dodo_control.walker.controller import WalkerController, WalkerConfig
    ctrl = WalkerController(WalkerConfig())
    tau = ctrl.update(t, q, v, contact_forces)   # -> [left_hip, left_knee, right_hip, right_knee]
    N*m
    ctrl.telemetry                               # WalkerTelemetry (frozen) of the last update
    ctrl.reconfigure(new_config)                 # swap the whole config (pulses, gains, ...)
    ctrl.reset()                                 # forget the step history
    WalkerConfig.from_dict({'step_frequency_hz': 2.0})   # unknown keys -> ValueError naming them

Inputs of ``update``: ``t`` (s); ``q``, ``v`` in the order of ``WalkerConfig.joint_names``
(the simulator's ``joint_names``: base x, z, pitch, then the leg joints; m, rad, m/s, rad/s);
``contact_forces``: one world force row per ``WalkerConfig.contact_frames`` entry (N; [fx, fz]
or [fx, fy, fz]). Output: one torque per ``WalkerConfig.actuated_joints`` entry, N*m.

Control law (docs/walker.md). Each step has a stance foot s and a swing foot w, switched at the
touchdown of the swing foot (:class:`~dodo_control.walker.phase.StepPhaseDetector`, from the
force rows only). The step phase is ``phase = step_frequency_hz * (t - t_touchdown)``. The four
motors play four roles within a step, each driven by two rectangular pulses on the phase
(:class:`~dodo_control.walker.pulses.PulseGenerator`; As & Mailhot's amplitude, phase and period):

* swing knee: a flexion pulse early in the swing lifts the foot; an extension pulse late in the
  swing drives the shank onto the knee stop (the URDF lower limit 0), which locks the knee
  before touchdown;
* swing hip: a protraction pulse swings the leg forward, a retraction pulse brakes it;
* stance knee: pulses pressing the straight knee onto its stop keep the stance leg locked;
* stance hip: the torso PD plus its own pulses (push-off).

The torso is the passive base pitch, so it is controlled through the hips: the torque the
hips exert on the torso is ``-(tau_stance_hip + tau_swing_hip)``. The stance hip carries the
torso PD ``tau_torso = -kp (pitch - pitch_ref) - kd pitch_rate`` and cancels the swing hip's
reaction: ``tau_stance_hip = stance_hip_pulses - tau_torso - tau_swing_hip``. Every torque is
clipped to ``max_torque_nm``.

Conventions (docs/robots.md): positive pitch leans the torso forward (+x); a positive hip or knee
angle swings the distal segment backwards; knee 0 is the straight (locked) knee.
"""
from __future__ import annotations

from dataclasses import dataclass
import math
from typing import Mapping

from dodo_sim.parameter import bounded, check_fields, config_from_dict
import numpy as np

from .monitor import WalkMonitor
from .phase import StepPhaseDetector
from .pulses import Pulse, PulseGenerator

#: The motor roles within a step, in the order of the pulse parameter vectors (two entries each).
ROLES = ('stance_hip', 'swing_hip', 'stance_knee', 'swing_knee')
PULSES_PER_ROLE = 2


@dataclass(frozen=True)
class WalkerConfig:
    """
    Walker controller parameters (a controller node declares exactly these as ROS parameters).

    The pulse vectors have 8 entries: two pulses for each role in ``ROLES`` order,
    (stance hip 1, stance hip 2, swing hip 1, swing hip 2, stance knee 1, stance knee 2,
    swing knee 1, swing knee 2). Phases and periods are fractions of the nominal step time
    ``1 / step_frequency_hz``.

    Fields:
        contact_frames: the feet's contact frames, one force row each in ``update`` (default
            left then right, the simulator's ``contact_frames`` order).
        joint_names: order of q and v (the simulator's ``joint_names``).
        pitch_joint: the torso pitch coordinate in q (rad, positive = leaning forward).
        forward_joint: the hip's horizontal coordinate in q (m, walking direction +x); its rate
            is the hip speed of the placement feedback.
        hip_joints: the hip joint of each foot's leg, same order as ``contact_frames``.
        knee_joints: the knee joint of each foot's leg, same order as ``contact_frames``.
        actuated_joints: order of the returned torques (the simulator's actuated joints).
        initial_stance_frame: the stance foot at reset (one of ``contact_frames``).
        step_frequency_hz: omega, steps per second of the nominal step, 1/s, in (0.5, 5].
        pulse_amplitude_nm: torque of each pulse, N*m, within [-max_torque_nm, max_torque_nm].
        pulse_phase: start of each pulse in step phase, in [0, 1].
        pulse_period: width of each pulse in step phase, in [0, 1].
        torso_pitch_ref_rad: torso pitch the PD holds, rad, in [-0.5, 0.5].
        torso_kp_nm_per_rad: torso PD stiffness, N*m/rad, in [0, 1000].
        torso_kd_nms_per_rad: torso PD damping, N*m*s/rad, in [0, 100].
        swing_leg_kp_nm_per_rad: swing-leg placement stiffness, N*m/rad, in [0, 1000] (0: off,
            the pure pulse controller of As & Mailhot).
        swing_leg_kd_nms_per_rad: swing-leg placement damping, N*m*s/rad, in [0, 100].
        swing_leg_angle_rad: nominal swing-thigh angle ahead of the vertical at touchdown, rad,
            in [-0.6, 0.6].
        swing_leg_velocity_gain_rad_s_per_m: extra placement angle per m/s of hip speed, rad*s/m,
            in [-2, 2].
        swing_leg_stance_gain: extra placement angle per rad of stance-thigh angle behind the
            vertical, (-), in [-2, 2].
        swing_leg_feedback_phase: step phase from which the placement PD acts, in [0, 1].
        speed_target_m_s: hip speed the torso lean regulates, m/s, in [0, 3].
        torso_pitch_speed_gain_rad_s_per_m: the torso pitch reference leans back by this much per
            m/s of filtered hip speed above ``speed_target_m_s`` (and forward below it),
            rad*s/m, in [0, 2] (0: a fixed reference). The reference is kept within +-0.5 rad.
        speed_filter_time_s: time constant of the first-order low-pass filter of the hip speed,
            s, in (0, 5].
        swing_knee_kp_nm_per_rad: late-swing knee extension stiffness towards the straight knee
            (its stop), N*m/rad, in [0, 100] (0: pulses only).
        swing_knee_kd_nms_per_rad: late-swing knee extension damping, N*m*s/rad, in [0, 10].
        swing_knee_extend_phase: step phase from which the swing knee extension acts, in [0, 1].
        stance_knee_lock_nm: constant torque on the stance knee for the whole step, N*m, within
            [-max_torque_nm, 0] (negative presses the straight knee onto its stop, the knee lock).
        max_torque_nm: every motor torque is clipped to +-this, N*m, > 0 (the URDF effort).
        load_on_n: foot load above which a foot counts as loaded, N, > load_off_n.
        load_off_n: foot load below which a loaded foot counts as unloaded, N, >= 0.
        min_step_fraction: shortest accepted step as a fraction of ``1 / step_frequency_hz``,
            in [0, 1) (refractory time against contact chatter).
    """

    contact_frames: tuple = ('left_foot', 'right_foot')
    joint_names: tuple = ('base_x', 'base_z', 'base_pitch', 'left_hip', 'left_knee',
                          'right_hip', 'right_knee')
    pitch_joint: str = 'base_pitch'
    forward_joint: str = 'base_x'
    hip_joints: tuple = ('left_hip', 'right_hip')
    knee_joints: tuple = ('left_knee', 'right_knee')
    actuated_joints: tuple = ('left_hip', 'left_knee', 'right_hip', 'right_knee')
    initial_stance_frame: str = 'left_foot'
    step_frequency_hz: float = bounded(1.5, 0.5, 5.0, low_open=True, unit='1/s')
    pulse_amplitude_nm: tuple = bounded((-3.0, 0.0, -1.1, 1.0, 0.0, 0.0, 0.3, -0.5), unit='N*m')
    pulse_phase: tuple = bounded((0.26, 0.0, 0.13, 0.63, 0.0, 0.0, 0.0, 0.5), 0.0, 1.0,
                                 unit='-')
    pulse_period: tuple = bounded((0.41, 0.0, 0.04, 0.3, 0.0, 0.0, 0.15, 0.5), 0.0, 1.0,
                                  unit='-')
    torso_pitch_ref_rad: float = bounded(0.29, -0.5, 0.5, unit='rad')
    torso_kp_nm_per_rad: float = bounded(140.0, 0.0, 1000.0, unit='N*m/rad')
    torso_kd_nms_per_rad: float = bounded(18.0, 0.0, 100.0, unit='N*m*s/rad')
    swing_leg_kp_nm_per_rad: float = bounded(24.0, 0.0, 1000.0, unit='N*m/rad')
    swing_leg_kd_nms_per_rad: float = bounded(4.0, 0.0, 100.0, unit='N*m*s/rad')
    swing_leg_angle_rad: float = bounded(0.45, -0.6, 0.6, unit='rad')
    swing_leg_velocity_gain_rad_s_per_m: float = bounded(0.0, -2.0, 2.0, unit='rad*s/m')
    swing_leg_stance_gain: float = bounded(-0.4, -2.0, 2.0, unit='-')
    swing_leg_feedback_phase: float = bounded(0.03, 0.0, 1.0, unit='-')
    speed_target_m_s: float = bounded(0.8, 0.0, 3.0, unit='m/s')
    torso_pitch_speed_gain_rad_s_per_m: float = bounded(0.5, 0.0, 2.0, unit='rad*s/m')
    speed_filter_time_s: float = bounded(0.5, 0.0, 5.0, low_open=True, unit='s')
    swing_knee_kp_nm_per_rad: float = bounded(5.0, 0.0, 100.0, unit='N*m/rad')
    swing_knee_kd_nms_per_rad: float = bounded(0.3, 0.0, 10.0, unit='N*m*s/rad')
    swing_knee_extend_phase: float = bounded(0.5, 0.0, 1.0, unit='-')
    stance_knee_lock_nm: float = bounded(-10.0, high=0.0, unit='N*m')
    max_torque_nm: float = bounded(20.0, low=0.0, low_open=True, unit='N*m')
    load_on_n: float = bounded(5.0, low=0.0, low_open=True, unit='N')
    load_off_n: float = bounded(1.0, low=0.0, unit='N')
    min_step_fraction: float = bounded(0.3, 0.0, 1.0, high_open=True, unit='-')

    def __post_init__(self):
        for name in ('contact_frames', 'joint_names', 'hip_joints', 'knee_joints',
                     'actuated_joints'):
            value = getattr(self, name)
            if isinstance(value, str):
                value = (value,)
            object.__setattr__(self, name, tuple(str(x) for x in value))
        for name in ('pulse_amplitude_nm', 'pulse_phase', 'pulse_period'):
            object.__setattr__(self, name, tuple(float(x) for x in getattr(self, name)))
        self.validate()

    def validate(self) -> None:
        """Raise ValueError naming the first bad value."""
        def bad(name, why):
            raise ValueError(f'WalkerConfig.{name} = {getattr(self, name)!r}: {why}')

        # ranges and units: the fields' metadata (dodo_sim.parameter, shown by the ROS parameter
        # descriptors); below: rules that relate fields or lengths
        check_fields(self)
        n_feet = len(self.contact_frames)
        if n_feet < 2 or len(set(self.contact_frames)) != n_feet:
            bad('contact_frames', 'needs at least two distinct frames')
        for name in ('hip_joints', 'knee_joints'):
            if len(getattr(self, name)) != n_feet:
                bad(name, f'needs one joint per contact frame ({n_feet})')
        for name in ('hip_joints', 'knee_joints'):
            for joint in getattr(self, name):
                if joint not in self.joint_names:
                    bad(name, f'{joint!r} is not in joint_names {self.joint_names}')
                if joint not in self.actuated_joints:
                    bad(name, f'{joint!r} is not in actuated_joints {self.actuated_joints}')
        for name in ('pitch_joint', 'forward_joint'):
            if getattr(self, name) not in self.joint_names:
                bad(name, f'is not in joint_names {self.joint_names}')
        if len(set(self.actuated_joints)) != len(self.actuated_joints):
            bad('actuated_joints', 'needs distinct names')
        if self.initial_stance_frame not in self.contact_frames:
            bad('initial_stance_frame', f'must be one of contact_frames {self.contact_frames}')
        n_pulses = len(ROLES) * PULSES_PER_ROLE
        for name in ('pulse_amplitude_nm', 'pulse_phase', 'pulse_period'):
            if len(getattr(self, name)) != n_pulses:
                bad(name, f'needs {n_pulses} values ({PULSES_PER_ROLE} per role of {ROLES})')
        if not -self.max_torque_nm <= self.stance_knee_lock_nm:
            bad('stance_knee_lock_nm', f'must be within [-max_torque_nm, 0] = '
                                       f'[{-self.max_torque_nm}, 0] N*m')
        if not self.load_on_n > self.load_off_n:
            bad('load_on_n', f'must be finite and > load_off_n = {self.load_off_n} N')
        for i, amplitude in enumerate(self.pulse_amplitude_nm):
            if not abs(amplitude) <= self.max_torque_nm:
                bad('pulse_amplitude_nm', f'entry {i} must be within +-max_torque_nm = '
                                          f'{self.max_torque_nm} N*m')

    def pulses(self, role: str) -> tuple:
        """Return the :class:`Pulse` objects of one role (one of ``ROLES``)."""
        if role not in ROLES:
            raise ValueError(f'unknown role {role!r}; choose one of {ROLES}')
        first = ROLES.index(role) * PULSES_PER_ROLE
        return tuple(Pulse(self.pulse_amplitude_nm[k], self.pulse_phase[k],
                           self.pulse_period[k]) for k in range(first, first + PULSES_PER_ROLE))

    @property
    def nominal_step_time_s(self) -> float:
        return 1.0 / self.step_frequency_hz

    @classmethod
    def from_dict(cls, values: Mapping[str, object]) -> 'WalkerConfig':
        """Build from a parameter mapping; unknown keys raise ValueError naming them."""
        return config_from_dict(cls, values, 'walker')


def torso_pd_torque(pitch_rad: float, pitch_rate_rad_s: float, pitch_ref_rad: float,
                    kp_nm_per_rad: float, kd_nms_per_rad: float) -> float:
    """Torque the hips should exert on the torso, N*m (positive tips it forward, about +y)."""
    return -kp_nm_per_rad * (pitch_rad - pitch_ref_rad) - kd_nms_per_rad * pitch_rate_rad_s


@dataclass(frozen=True)
class WalkerTelemetry:
    """
    Snapshot after the last :meth:`WalkerController.update`.

    Fields:
        t: time of the update, s.
        phase: step phase omega * (t - t_touchdown), (-).
        time_in_step_s: time since the current step started, s.
        stance_frame / swing_frame: contact frame of the stance / swing foot.
        step_count: touchdowns since reset.
        touchdown: this update started a new step.
        foot_loaded: per contact frame, the detector's loaded flag.
        torso_pitch_rad / torso_pitch_rate_rad_s: measured torso pitch and its rate.
        torso_pitch_ref_rad: the torso pitch reference after the speed feedback, rad.
        hip_speed_m_s: low-pass filtered hip speed, m/s.
        torso_torque_nm: torso PD torque demanded from the hips (on the torso), N*m.
        pulses_on: per pulse (8, the pulse-vector order), whether it is on.
        role_torque_nm: commanded torque of each role in ``ROLES`` order, N*m (after clipping).
        tau: the returned torques, ``actuated_joints`` order, N*m.
    """

    t: float
    phase: float
    time_in_step_s: float
    stance_frame: str
    swing_frame: str
    step_count: int
    touchdown: bool
    foot_loaded: tuple
    torso_pitch_rad: float
    torso_pitch_rate_rad_s: float
    torso_pitch_ref_rad: float
    hip_speed_m_s: float
    torso_torque_nm: float
    pulses_on: tuple
    role_torque_nm: tuple
    tau: tuple


class WalkerController:
    """Kneed Walker pulse controller (As & Mailhot 2018), docs/walker.md."""

    # how the controller node hosts it (dodo_control.registry, entry point kneed_walker): its
    # joints and frames size the node's topics; the walk monitor judges the run
    config_class = WalkerConfig
    startup_only = ('contact_frames', 'joint_names', 'pitch_joint', 'forward_joint',
                    'hip_joints', 'knee_joints', 'actuated_joints', 'initial_stance_frame')
    default_model = 'package://dodo_sim/urdf/kneed_walker.urdf.xacro'
    monitor = WalkMonitor

    def __init__(self, config: WalkerConfig | None = None):
        self.reconfigure(config if config is not None else WalkerConfig())

    @classmethod
    def for_robot(cls, urdf_xml, config: WalkerConfig) -> 'WalkerController':
        """
        Return the controller for a robot description (the host's constructor).

        The walker reads no model: its joints and feet are named in ``config`` (the registry
        checks the robot has them).
        """
        return cls(config)

    @property
    def config(self) -> WalkerConfig:
        return self._config

    @property
    def contact_frames(self) -> tuple:
        """Frames whose force rows ``update`` expects (the rollout passes these rows)."""
        return self._config.contact_frames

    @property
    def joint_names(self) -> tuple:
        """Order of q and v in ``update`` (the controller node merges /joint_states by these)."""
        return self._config.joint_names

    @property
    def actuated_joint_names(self) -> tuple:
        """Order of the returned torques (the names of the node's /joint_commands)."""
        return self._config.actuated_joints

    @property
    def telemetry_labels(self) -> dict:
        """
        Labels of the telemetry's per-entry fields, for named channels.

        The controller node publishes ``<field>_<label>``; a text field becomes the index of its
        value among the labels. None: not published, e.g. ``tau``, which the node publishes per
        joint.
        """
        cfg = self._config
        pulses = tuple(f'{role}_{k + 1}' for role in ROLES for k in range(PULSES_PER_ROLE))
        return {'stance_frame': cfg.contact_frames, 'swing_frame': cfg.contact_frames,
                'foot_loaded': cfg.contact_frames, 'pulses_on': pulses,
                'role_torque_nm': ROLES, 'tau': None}

    def reconfigure(self, config: WalkerConfig) -> None:
        """
        Swap the configuration.

        The step history is kept when the feet and joints stay the same (a node changing pulses
        mid-walk); otherwise the controller is reset.
        """
        if not isinstance(config, WalkerConfig):
            raise TypeError(f'config must be a WalkerConfig, got {type(config).__name__}')
        old = getattr(self, '_config', None)
        if old is not None:
            self.telemetry                  # the last tick's snapshot, with the old config
        self._config = config
        cfg = config
        index = {name: i for i, name in enumerate(cfg.joint_names)}
        self._pitch = index[cfg.pitch_joint]
        self._forward = index[cfg.forward_joint]
        self._hip_q = [index[j] for j in cfg.hip_joints]
        self._knee_q = [index[j] for j in cfg.knee_joints]
        act = {name: i for i, name in enumerate(cfg.actuated_joints)}
        self._hip_out = [act[j] for j in cfg.hip_joints]
        self._knee_out = [act[j] for j in cfg.knee_joints]
        self._generators = {role: PulseGenerator(cfg.pulses(role)) for role in ROLES}
        self._role_generators = tuple(self._generators[role] for role in ROLES)
        self._min_step_s = cfg.min_step_fraction * cfg.nominal_step_time_s
        same_layout = old is not None and all(
            getattr(old, name) == getattr(cfg, name)
            for name in ('contact_frames', 'joint_names', 'hip_joints', 'knee_joints',
                         'actuated_joints', 'initial_stance_frame', 'pitch_joint',
                         'forward_joint'))
        if same_layout:
            detector = self._detector
            detector.load_on_n, detector.load_off_n = cfg.load_on_n, cfg.load_off_n
            detector.min_step_time_s = self._min_step_s
        else:
            self._detector = StepPhaseDetector(
                len(cfg.contact_frames), cfg.load_on_n, cfg.load_off_n, self._min_step_s,
                cfg.contact_frames.index(cfg.initial_stance_frame))
            self.reset()

    def reset(self) -> None:
        """Forget the step history; the next update starts step 0 on the initial stance foot."""
        self._detector.reset(self._config.contact_frames.index(self._config.initial_stance_frame))
        self._telemetry = None
        self._tick = None
        self._speed = math.nan
        self._last_t = math.nan

    @property
    def telemetry(self) -> WalkerTelemetry | None:
        """Snapshot of the last update (None before the first)."""
        if self._telemetry is None and self._tick is not None:
            self._telemetry = self._snapshot()
        return self._telemetry

    @property
    def step_count(self) -> int:
        return self._detector.step_count

    @property
    def stance_frame(self) -> str:
        return self._config.contact_frames[self._detector.stance]

    def _filter_speed(self, t: float, speed: float) -> float:
        """First-order low-pass of the hip speed (exact discretisation for any tick length)."""
        if math.isnan(self._speed):
            self._speed = speed
        else:
            dt = max(float(t) - self._last_t, 0.0)
            alpha = 1.0 - math.exp(-dt / self._config.speed_filter_time_s)
            self._speed += alpha * (speed - self._speed)
        self._last_t = float(t)
        return self._speed

    def _placement(self, q, v, stance: int, swing: int) -> float:
        """
        Swing-leg placement PD torque, N*m.

        The swing thigh's angle ahead of the vertical is driven to swing_leg_angle + velocity and
        stance-angle feedback. ``q``, ``v``: lists of floats.
        """
        cfg = self._config
        pitch, pitch_rate = q[self._pitch], v[self._pitch]
        # absolute thigh angles, positive = ahead of the vertical (the joint angles' opposite)
        swing_angle = -(pitch + q[self._hip_q[swing]])
        swing_rate = -(pitch_rate + v[self._hip_q[swing]])
        stance_angle_behind = pitch + q[self._hip_q[stance]]
        target = (cfg.swing_leg_angle_rad
                  + cfg.swing_leg_velocity_gain_rad_s_per_m * v[self._forward]
                  + cfg.swing_leg_stance_gain * stance_angle_behind)
        # a torque ahead (about -y) is a negative joint torque
        return -(cfg.swing_leg_kp_nm_per_rad * (target - swing_angle)
                 - cfg.swing_leg_kd_nms_per_rad * swing_rate)

    def update(self, t: float, q, v, contact_forces) -> np.ndarray:
        """
        One control tick: torques for ``actuated_joints``, N*m.

        Scalar Python on the inputs' floats (numpy's per-call overhead is larger than the
        arithmetic of a tick); the telemetry is built when read.
        """
        cfg = self._config
        q = np.asarray(q, dtype=float).tolist()
        v = np.asarray(v, dtype=float).tolist()
        detector = self._detector
        touchdown = detector.update(t, contact_forces)
        stance = detector.stance
        swing = detector.swing
        time_in_step = detector.time_in_step(t)
        phase = cfg.step_frequency_hz * time_in_step
        stance_hip_pulses, swing_hip_pulses, stance_knee_pulses, swing_knee_pulses = (
            self._role_generators)
        limit = cfg.max_torque_nm

        speed = self._filter_speed(t, v[self._forward])
        pitch_ref = cfg.torso_pitch_ref_rad - cfg.torso_pitch_speed_gain_rad_s_per_m * (
            speed - cfg.speed_target_m_s)
        pitch_ref = min(max(pitch_ref, -0.5), 0.5)
        pitch, pitch_rate = q[self._pitch], v[self._pitch]
        torso = torso_pd_torque(pitch, pitch_rate, pitch_ref,
                                cfg.torso_kp_nm_per_rad, cfg.torso_kd_nms_per_rad)
        swing_hip = swing_hip_pulses.torque(phase)
        if cfg.swing_leg_kp_nm_per_rad or cfg.swing_leg_kd_nms_per_rad:
            if phase >= cfg.swing_leg_feedback_phase:
                swing_hip += self._placement(q, v, stance, swing)
        swing_hip = _clip(swing_hip, limit)
        swing_knee = swing_knee_pulses.torque(phase)
        if cfg.swing_knee_kp_nm_per_rad and phase >= cfg.swing_knee_extend_phase:
            knee = self._knee_q[swing]
            swing_knee -= (cfg.swing_knee_kp_nm_per_rad * q[knee]
                           + cfg.swing_knee_kd_nms_per_rad * v[knee])
        swing_knee = _clip(swing_knee, limit)
        stance_knee = _clip(stance_knee_pulses.torque(phase) + cfg.stance_knee_lock_nm, limit)
        stance_hip = _clip(stance_hip_pulses.torque(phase) - torso - swing_hip, limit)

        tau = [0.0] * len(cfg.actuated_joints)
        tau[self._hip_out[stance]] = stance_hip
        tau[self._hip_out[swing]] = swing_hip
        tau[self._knee_out[stance]] = stance_knee
        tau[self._knee_out[swing]] = swing_knee
        # the telemetry's values, built into a WalkerTelemetry when read
        self._telemetry = None
        self._tick = (float(t), phase, time_in_step, stance, swing, detector.step_count,
                      touchdown, tuple(detector.loaded), pitch, pitch_rate, pitch_ref, speed,
                      torso, (stance_hip, swing_hip, stance_knee, swing_knee), tuple(tau))
        return np.array(tau)

    def _snapshot(self) -> WalkerTelemetry:
        """Build the telemetry of the last tick (its config: ``reconfigure`` takes it first)."""
        (t, phase, time_in_step, stance, swing, steps, touchdown, loaded, pitch, pitch_rate,
         pitch_ref, speed, torso, roles, tau) = self._tick
        frames, gens = self._config.contact_frames, self._generators
        return WalkerTelemetry(
            t=t, phase=phase, time_in_step_s=time_in_step,
            stance_frame=frames[stance], swing_frame=frames[swing], step_count=steps,
            touchdown=touchdown, foot_loaded=loaded, torso_pitch_rad=pitch,
            torso_pitch_rate_rad_s=pitch_rate, torso_pitch_ref_rad=pitch_ref,
            hip_speed_m_s=speed, torso_torque_nm=torso,
            pulses_on=sum((gens[role].states(phase) for role in ROLES), ()),
            role_torque_nm=roles, tau=tau)


def _clip(value: float, limit: float) -> float:
    return -limit if value < -limit else (limit if value > limit else value)


__all__ = ['WalkerController', 'WalkerConfig', 'WalkerTelemetry', 'ROLES', 'PULSES_PER_ROLE',
           'torso_pd_torque']
