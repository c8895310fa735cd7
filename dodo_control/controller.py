# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
Hybrid SLIP controller of the articulated hopping leg (Hutter et al. 2010).

Pure core, no rclpy.

API (stable; the ROS controller node wraps exactly this)::

    from dodo_control.controller import Controller, ControllerConfig
    ctrl = Controller('urdf/hopper.urdf.xacro', ControllerConfig(apex_height=1.2),
                      xacro_args=None)                      # same robot description as the sim
    tau = ctrl.update(t, q, v, foot_force)                  # -> np.array([hip, knee]) N*m
    ctrl.telemetry                                          # ControllerTelemetry (frozen)
    ctrl.set_setpoints(target_x=4.0)                        # runtime set-point change
    ctrl.set_setpoints(target_velocity=1.5, apex_height=1.1, flight_policy='deadbeat')
    ctrl.reconfigure(new_config)                            # swap the whole config (gains too)
    ctrl.reset()                                            # forget phase, loops and history
    ControllerConfig.from_dict({'target_x': 4.0})           # unknown keys -> ValueError naming
    them

Inputs of ``update``: ``t`` (s), ``q`` in ``ctrl.joint_names`` order — the hopper's
``[x, z, hip, knee]`` (m, m, rad, rad) or the boom-mounted leg's ``[boom_yaw, boom_pitch, hip,
knee]`` (rad) —, ``v`` (their rates) — boom/base joints are measured like on the boom rig — and
``foot_force`` = world ``[fx, fz]`` (N) from the foot force sensor (zero in flight; ignored when
``use_foot_sensor`` is False). The controller never reads simulator internals. It builds its own
pinocchio Model/Data from the URDF (masses and lengths come from there), picks the task frame
from its joints (:func:`.task_frame.load_dynamics`; docs/control.md "Task frame": world x-z for the
hopper, the plane tangent to the boom circle for the boom leg) and is meant to be called every
``control_period``.

Structure (docs/control.md):

* :mod:`.phase` — FLIGHT -> STANCE (touchdown: foot force sensor, kinematic fallback) -> FLIGHT
  (liftoff: spring back at rest length and extending, or contact lost), apex events; minimum
  phase times make it robust to contact chatter.
* :mod:`.stance` — support-consistent SLIP law: τ such that r̈_CoG = F_leg/m + g⃗ exactly (the
  operational-space form of docs/control.md is there too and equal). SLIPic: at touchdown the
  spring
  is pre-compressed by Δl = √(2ΔE/k), ΔE the model-predicted CoG energy lost in the impact.
  Apex regulation: after maximum compression the rest length is re-chosen every tick so that the
  spring holds exactly the vertical energy still missing for the apex set-point (exact at
  liftoff, whatever the speed); a per-hop integral on the measured apex removes what is left.
* :mod:`.flight` — once per hop, at the apex: position PI (+ lead and impact-drift
  feed-forward, saturated, anti-windup) -> velocity set-point -> angle of attack by
  ``flight_policy``: 'cascade' (the velocity PI of Feng, Lehner & Lutze 2021 around the neutral
  angle from the SLIP
  apex return map incl. the leg's touchdown impact), 'raibert' (foot placement v T_s/2 +
  k (v − v_set)), 'deadbeat' (α solving the return map for the set-point speed). The
  model-based policies aim the return map at v_set minus a per-hop observer's estimate of its
  bias (measured minus predicted apex speed). The position error uses the critically damped
  horizon of the hop model; its integral survives target changes (docs/control.md, "Position
  precision"). Every tick an exact-model posture controller drives the foot to the SLIP
  touchdown point relative to the CoG.
* :mod:`.slip` — SLIP template, stance flow, apex return map, deadbeat solver (a few ms once
  per hop: the neutral-angle solve and the observer's prediction, spread over the ticks after
  the apex in chunks of ``APEX_SOLVE_RK4_STEPS_PER_TICK`` RK4 steps, docs/control.md "Bounded
  ticks"); :mod:`.dynamics` — the controller's own pinocchio terms.
* :mod:`.bezier` — ``stance_policy='bezier'``: Ding & Ramos' Bézier ground-reaction-force
  profile over the normalised stance time, through the hip-relative foot jacobian, with a soft
  joint PD; :mod:`.boom` — the boom-mounted leg's task frame.

Conventions: α is the leg angle from the vertical at touchdown, positive with the foot ahead
(+x) of the CoG. ``target_x`` is the CoG x (boom leg: the hip's arc coordinate R boom_yaw);
``apex_height`` the base (boom leg: hip) height above the ground at the apex (docs/control.md).
"CoG" in this module is the SLIP point of the task frame (the boom leg's hip). The ground height is
estimated from the last foothold
(``ground_height_guess_m`` before the first one). ``telemetry`` is built lazily when read.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass
import math
from typing import Mapping

import numpy as np

from .slip.bezier import adapt_scale, bezier_torque, bezier_value, stance_phase
from .slip.flight import (critically_damped_lead, foot_target, PositionLoop, raibert_angle,
                          VelocityLoop)
from .slip.phase import FLIGHT, PhaseMachine, PhaseParams, STANCE
from .slip.stance import (flight_foot_torque_tick, impact_energy_loss, slip_torque_tick,
                          support_projection)
from .slip.task_frame import load_dynamics
from .slip.template import (apex_return_map, apex_return_map_single, apex_return_map_steps,
                            deadbeat_angle, deadbeat_angle_steps, precompression, run_steps,
                            StanceSpec)

FLIGHT_POLICIES = ('cascade', 'raibert', 'deadbeat')
#: RK4 steps of the SLIP stance flow (~3 us each in Python; a return-map evaluation takes ~100)
#: the apex solve may run per control tick. The solve (neutral angle, observer prediction:
#: several return-map evaluations, 1-5 ms in one go) starts at the apex tick and is spread over
#: the following ticks, so no tick carries it (a 1 kHz deadline); it is scheduled in ticks, not
#: wall time, so a run and its replay through the controller compute the same torques.
APEX_SOLVE_RK4_STEPS_PER_TICK = 20
STANCE_POLICIES = ('slip', 'bezier')
BEZIER_FORCE_FRAMES = ('leg', 'task')
#: An apex set-point is reachable if the SLIP return map brings the apex back to within this, m.
APEX_REACH_TOLERANCE_M = 1e-3
#: ControllerConfig fields besides apex_height that change the feasible apex range.
APEX_RANGE_FIELDS = ('leg_stiffness', 'leg_rest_length_m', 'leg_rest_length_fraction',
                     'max_leg_length_fraction', 'impact_compensation', 'apex_regulation',
                     'deadbeat_step_s')
_NAN_XZ = (math.nan, math.nan)
_ZERO_XZ = (0.0, 0.0)


@dataclass(frozen=True)
class ControllerConfig:
    """
    Controller parameters (the controller node declares exactly these as ROS parameters).

    Set-points (changeable at run time, see :meth:`Controller.set_setpoints`). Positions and
    velocities are those of the SLIP point in the robot's task frame (docs/control.md, "Task
    frame"): the hopper's CoG x; the boom leg's hip arc coordinate s = R boom_yaw (R the hip's
    distance from the yaw axis, boom_radius_m):
        target_x: horizontal position target of the SLIP point (hopper: CoG x; boom: hip arc
            coordinate), m; NaN = no position target (velocity mode).
        target_velocity: horizontal velocity set-point of the SLIP point in velocity mode, m/s.
        apex_height: height of the base (hopper: base_z; boom: the hip) above the ground at the
            apex, m.
        flight_policy: 'cascade' | 'raibert' | 'deadbeat' (angle-of-attack law).
        stance_policy: 'slip' (the SLIP law) | 'bezier' (the Bézier force profile of Ding &
            Ramos, see below).
        use_foot_sensor: touchdown/liftoff from the foot force sensor; False = kinematic fallback.

    Timing:
        control_period: period at which ``update`` is called, s (1 kHz default).

    SLIP stance:
        leg_stiffness: virtual spring stiffness k, N/m.
        leg_rest_length_m: rest (= touchdown) leg length l0 foot-to-CoG, m; NaN =
            ``leg_rest_length_fraction`` x the stretched-leg foot-to-CoG distance from the URDF.
        leg_rest_length_fraction: see above, (-).
        max_leg_length_fraction: longest rest length after energy injection, as a fraction of the
            stretched foot-to-CoG distance (keeps the knee off its singularity), (-).
        impact_compensation: SLIPic pre-compression at touchdown (off: plain SLIP, apexes decay
            unless ``apex_regulation`` makes up for it).
        apex_regulation: reset the rest length at maximum compression to reach ``apex_height``.
        apex_integral_gain: per-hop integral gain on the apex height error, (-) (m per m).
        max_apex_correction_m: bound of that integral correction, m.

    Position loop (Feng, Lehner & Lutze 2021, eq. 21-23), updated at each apex, on the error
    e = target_x − (x + (v − v_ff) L) with the in-place speed v_ff and the horizon L that makes
    the hop-to-hop loop critically damped (docs/control.md, "Position precision"):
        position_kp: 1/s.   position_ki: 1/s^2.   max_speed: |v_set| limit, m/s.
        position_integral_band: the position integral only runs while |e| is below this, m
            (it is kept across target_x changes).

    Velocity loop ('cascade', Feng, Lehner & Lutze 2021, eq. 20), updated at each apex:
        velocity_kc: neutral-point gain: α = K_c v keeps the speed, rad/(m/s). NaN (default) =
            use the exact neutral angle from the SLIP apex return map (with the leg's touchdown
            impact) every hop instead of K_c v.
        velocity_kp: rad/(m/s); NaN (default) = velocity_step_fraction / S, i.e. that fraction
            of the one-hop (deadbeat) correction of the linearised SLIP map, S = −d v_next / d α
            of the return map with the touchdown impact, evaluated at the first update (posture
            table).
        velocity_step_fraction: β, see velocity_kp, (-), within (0, 1].
        velocity_ki: rad/(m/s) per hop.
        velocity_integral_band: the velocity integral only runs while |v − v_set| is below
            this, m/s (integral separation against windup in large transients).
        max_angle_of_attack: |α| limit for every policy, rad.
        velocity_bias_gain: per-hop gain γ of the observer of the SLIP return map's apex-speed
            bias b ← b + γ (v_measured − v_predicted − b); 'cascade' (return-map neutral angle)
            and 'deadbeat' aim the map at v_set − b. (-), within [0, 1]; 0: off.
        max_velocity_bias: |b| limit; hops whose residual exceeds it (pushes, missteps) are not
            used, m/s.
        max_velocity_bias_step: largest change of b in one hop, m/s.
        displacement_bias_gain: per-hop gain of the observer of the horizontal displacement per
            hop that the hop model misses, d ← d + γ (Δx_measured − Δx_predicted − d) (e.g. the
            boom leg's radial foot friction turning the boom); the in-place speed becomes
            v_ff = −(kick T_s/2 + d) / (2 t_fall + T_s), so the position error keeps its
            meaning. (-), within [0, 1]; 0: off.
        max_displacement_bias_m: hops whose displacement residual exceeds this (pushes,
            missteps) are not used, m.
        raibert_gain_s: Raibert foot-placement gain k in x_f = v T_s/2 + k (v - v_set), s.
        impact_feedforward: 'raibert' and 'cascade' with a finite ``velocity_kc``: add to α the
            angle that cancels the horizontal
            CoG velocity change the touchdown impact will cause (predicted from N_s at the
            touchdown posture): kick x (K_c + 1/S), S = −d v_liftoff / d α of the SLIP.
        deadbeat_step_s: RK4 step of the SLIP return map (cascade neutral angle, deadbeat), s.

    Bézier stance ('bezier', Ding & Ramos; dodo_control.slip.bezier): τ = −J_relᵀ κ F(s) +
    K_p (q_d − q_a) − K_d q̇_a over s = stance time / bezier_stance_time_s in [0, 1]:
        bezier_force_frame: 'leg': the z profile acts along the leg (foot to SLIP point)
            and the x profile perpendicular to it (forward positive), so foot placement steers
            the horizontal speed as in a SLIP; 'task': horizontal and vertical of the task frame
            (Ding & Ramos' [F_x, F_z]; foot placement then has no authority over the speed).
        bezier_force_x_n: Bézier coefficients of the forward ground reaction force on the
            foot, N; empty = 0.
        bezier_force_z_n: Bézier coefficients of the upward (leg-axial or vertical) ground
            reaction force, N (first and last 0 for a force that starts and ends at zero).
        bezier_stance_time_s: nominal stance time T_st; stance ends at s = 1, s (> 0).
        bezier_joint_kp: soft joint PD stiffness, N*m/rad (>= 0).
        bezier_joint_kd: soft joint PD damping, N*m*s/rad (>= 0).
        bezier_joint_target_rad: PD target [hip, knee], rad; empty = the joint angles at
            touchdown.
        bezier_apex_gain: per-hop integral gain of the profile scale κ on the apex height
            error, 1/m (>= 0; 0: the fixed profile).
        max_bezier_scale: κ stays within [1/max, max], (-) (>= 1).

    Posture (flight, foot relative to the CoG):
        posture_kp: 1/s^2.   posture_kd: 1/s.

    Phase machine:
        contact_force_threshold_n: vertical foot force that counts as contact, N.
        min_flight_time_s / min_stance_time_s: chatter guards, s.
        liftoff_samples: contact-free ticks that end a stance early (e.g. lifted by a push).
        kinematic_touchdown_ratio: kinematic fallback: touchdown when the foot's vertical velocity
            relative to the CoG jumps by more than this fraction of the CoG sink rate in one tick.
        ground_height_guess_m: ground height assumed before the first touchdown, m.

    Output:
        saturate_torque: clip torques at the URDF effort limits.

    Model:
        joint_armature_kgm2: [hip, knee] reflected rotor inertia G² J_rotor the controller adds
            to the diagonal of its model's mass matrix, kg*m^2 (>= 0): the motors the
            simulator's ``motor_dynamics`` simulates (docs/physics.md "Motors"); empty: none.
    """

    target_x: float = math.nan
    target_velocity: float = 0.0
    apex_height: float = 1.2
    flight_policy: str = 'cascade'
    stance_policy: str = 'slip'
    use_foot_sensor: bool = True
    control_period: float = 0.001
    leg_stiffness: float = 6000.0
    leg_rest_length_m: float = math.nan
    leg_rest_length_fraction: float = 0.8
    max_leg_length_fraction: float = 0.93
    impact_compensation: bool = True
    apex_regulation: bool = True
    apex_integral_gain: float = 0.5
    max_apex_correction_m: float = 0.1
    position_kp: float = 1.0
    position_ki: float = 0.3
    position_integral_band: float = 0.02
    max_speed: float = 1.5
    velocity_kc: float = math.nan
    velocity_kp: float = math.nan
    velocity_step_fraction: float = 0.9
    velocity_ki: float = 0.0
    velocity_integral_band: float = 0.3
    max_angle_of_attack: float = 0.5
    velocity_bias_gain: float = 0.6
    max_velocity_bias: float = 0.1
    max_velocity_bias_step: float = 1.0
    displacement_bias_gain: float = 0.0
    max_displacement_bias_m: float = 0.05
    raibert_gain_s: float = 0.05
    impact_feedforward: bool = True
    deadbeat_step_s: float = 0.002
    bezier_force_frame: str = 'leg'
    bezier_force_x_n: tuple = (0.0, 0.0, 0.0, 0.0, 0.0)
    bezier_force_z_n: tuple = (0.0, 20.0, 100.0, 0.0, 0.0)
    bezier_stance_time_s: float = 0.35
    bezier_joint_kp: float = 0.03
    bezier_joint_kd: float = 0.08
    bezier_joint_target_rad: tuple = ()
    bezier_apex_gain: float = 0.0
    max_bezier_scale: float = 2.0
    posture_kp: float = 900.0
    posture_kd: float = 60.0
    contact_force_threshold_n: float = 10.0
    min_flight_time_s: float = 0.03
    min_stance_time_s: float = 0.03
    liftoff_samples: int = 5
    kinematic_touchdown_ratio: float = 0.5
    ground_height_guess_m: float = 0.0
    saturate_torque: bool = True
    joint_armature_kgm2: tuple = ()

    def __post_init__(self):
        for name in ('bezier_force_x_n', 'bezier_force_z_n', 'bezier_joint_target_rad',
                     'joint_armature_kgm2'):
            value = getattr(self, name)
            try:
                object.__setattr__(self, name, tuple(float(x) for x in value))
            except (TypeError, ValueError):
                raise ValueError(f'ControllerConfig.{name} = {value!r}: needs a list of '
                                 f'numbers') from None
        self.validate()

    def validate(self) -> None:
        """Raise ValueError naming the first bad value."""
        def bad(name, why):
            raise ValueError(f'ControllerConfig.{name} = {getattr(self, name)!r}: {why}')

        if self.flight_policy not in FLIGHT_POLICIES:
            bad('flight_policy', f'choose one of {FLIGHT_POLICIES}')
        if self.stance_policy not in STANCE_POLICIES:
            bad('stance_policy', f'choose one of {STANCE_POLICIES}')
        if self.bezier_force_frame not in BEZIER_FORCE_FRAMES:
            bad('bezier_force_frame', f'choose one of {BEZIER_FORCE_FRAMES}')
        for name in ('bezier_force_x_n', 'bezier_force_z_n', 'bezier_joint_target_rad'):
            if not all(map(math.isfinite, getattr(self, name))):
                bad(name, 'needs finite values')
        if len(self.bezier_joint_target_rad) not in (0, 2):
            bad('bezier_joint_target_rad', 'needs [hip, knee] (2 values) or none')
        if len(self.joint_armature_kgm2) not in (0, 2) or not all(
                math.isfinite(x) and x >= 0.0 for x in self.joint_armature_kgm2):
            bad('joint_armature_kgm2', 'needs [hip, knee] (2 finite values >= 0) or none')
        for name in ('bezier_stance_time_s', 'bezier_joint_kp', 'bezier_joint_kd',
                     'bezier_apex_gain', 'max_bezier_scale'):
            if not math.isfinite(getattr(self, name)):
                bad(name, 'must be finite')
        if not self.bezier_stance_time_s > 0.0:
            bad('bezier_stance_time_s', 'must be positive')
        for name in ('bezier_joint_kp', 'bezier_joint_kd', 'bezier_apex_gain'):
            if getattr(self, name) < 0.0:
                bad(name, 'must be >= 0')
        if not self.max_bezier_scale >= 1.0:
            bad('max_bezier_scale', 'must be >= 1')
        for name in ('target_velocity', 'apex_height', 'position_kp', 'position_ki',
                     'velocity_ki', 'raibert_gain_s', 'posture_kp', 'posture_kd',
                     'apex_integral_gain', 'max_apex_correction_m', 'ground_height_guess_m',
                     'contact_force_threshold_n', 'min_flight_time_s', 'min_stance_time_s',
                     'kinematic_touchdown_ratio'):
            if not math.isfinite(getattr(self, name)):
                bad(name, 'must be finite')
        for name in ('control_period', 'leg_stiffness', 'apex_height', 'max_speed',
                     'velocity_integral_band', 'position_integral_band',
                     'max_angle_of_attack', 'deadbeat_step_s', 'posture_kp', 'posture_kd',
                     'kinematic_touchdown_ratio', 'contact_force_threshold_n'):
            if not getattr(self, name) > 0.0:
                bad(name, 'must be positive')
        for name in ('position_kp', 'position_ki', 'velocity_kp', 'velocity_ki',
                     'raibert_gain_s', 'apex_integral_gain', 'max_apex_correction_m',
                     'min_flight_time_s', 'min_stance_time_s'):
            if getattr(self, name) < 0.0:
                bad(name, 'must be >= 0')
        if not (math.isnan(self.target_x) or math.isfinite(self.target_x)):
            bad('target_x', 'must be finite or NaN (velocity mode)')
        if not (math.isnan(self.velocity_kc) or math.isfinite(self.velocity_kc)):
            bad('velocity_kc', 'must be finite or NaN (derived from the SLIP)')
        if not (math.isnan(self.velocity_kp) or math.isfinite(self.velocity_kp)):
            bad('velocity_kp', 'must be finite or NaN (derived from the SLIP)')
        if not (math.isnan(self.leg_rest_length_m) or self.leg_rest_length_m > 0.0):
            bad('leg_rest_length_m', 'must be positive or NaN (derived from the URDF)')
        if not 0.0 < self.leg_rest_length_fraction < 1.0:
            bad('leg_rest_length_fraction', 'must be within (0, 1)')
        if not 0.0 < self.max_leg_length_fraction < 1.0:
            bad('max_leg_length_fraction', 'must be within (0, 1)')
        if not self.max_angle_of_attack < 1.2:
            bad('max_angle_of_attack', 'must be below 1.2 rad')
        if not 0.0 < self.velocity_step_fraction <= 1.0:
            bad('velocity_step_fraction', 'must be within (0, 1]')
        if not 0.0 <= self.velocity_bias_gain <= 1.0:
            bad('velocity_bias_gain', 'must be within [0, 1]')
        if not 0.0 <= self.displacement_bias_gain <= 1.0:
            bad('displacement_bias_gain', 'must be within [0, 1]')
        for name in ('max_velocity_bias', 'max_velocity_bias_step', 'max_displacement_bias_m'):
            if not (math.isfinite(getattr(self, name)) and getattr(self, name) >= 0.0):
                bad(name, 'must be finite and >= 0')
        if int(self.liftoff_samples) != self.liftoff_samples or self.liftoff_samples < 1:
            bad('liftoff_samples', 'must be an integer >= 1')

    @classmethod
    def from_dict(cls, values: Mapping[str, object]) -> 'ControllerConfig':
        """Build from a parameter mapping; unknown keys raise ValueError naming them."""
        known = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(set(values) - known)
        if unknown:
            raise ValueError(f'unknown controller parameter(s) {unknown}; known: {sorted(known)}')
        return cls(**values)


@dataclass(frozen=True)
class ControllerTelemetry:
    """
    Read-only snapshot after the last :meth:`Controller.update` (units in the names/docs).

    Fields:
        t: time of the update, s.       phase: 'flight' or 'stance'.
        hops: number of touchdowns so far.
        events: events of this tick ('touchdown', 'liftoff', 'apex').
        slip_leg_length_m: foot-to-CoG distance l, m.
        slip_rest_length_m: current rest length of the virtual spring, m.
        angle_of_attack_rad: flight: commanded touchdown angle; stance: the touchdown angle.
        target_x / target_velocity / apex_height: set-points (m, m/s, m).
        velocity_setpoint: velocity the flight policy aims at this hop (position loop output), m/s.
        last_apex_height_m: base height above the ground at the last apex, m.
        last_apex_velocity_mps: CoG horizontal velocity at the last apex, m/s.
        energy_injected_j: energy put into the virtual spring in the current/last stance (SLIPic
            pre-compression + apex regulation), J.
        impact_loss_j: predicted CoG kinetic energy lost at the last touchdown, J.
        com_position / com_velocity: CoG, world x-z, m and m/s.
        foot_position: world x-z, m.
        foot_target: flight: desired foot point (world x-z, m); stance: the foothold.
        slip_acceleration: stance: commanded CoG acceleration a (m/s^2); flight: NaN.
        leg_force_n: stance: SLIP leg force on the CoG (world x-z, N); flight: zeros.
        torque_saturated: the command was clipped at the effort limits.
    """

    t: float
    phase: str
    hops: int
    events: tuple
    slip_leg_length_m: float
    slip_rest_length_m: float
    angle_of_attack_rad: float
    target_x: float
    target_velocity: float
    apex_height: float
    velocity_setpoint: float
    last_apex_height_m: float
    last_apex_velocity_mps: float
    energy_injected_j: float
    impact_loss_j: float
    com_position: np.ndarray
    com_velocity: np.ndarray
    foot_position: np.ndarray
    foot_target: np.ndarray
    slip_acceleration: np.ndarray
    leg_force_n: np.ndarray
    torque_saturated: bool


class Controller:
    """Hybrid SLIP controller; see the module docstring for the API."""

    def __init__(self, urdf_xml_or_path, config: ControllerConfig | None = None,
                 xacro_args: Mapping[str, object] | None = None):
        self.leg, self.dyn = load_dynamics(urdf_xml_or_path, xacro_args)
        self.mass = self.dyn.mass
        self.gravity = self.dyn.gravity
        self.stretched_length = self.dyn.stretched_leg_length()
        self.effort_limits = np.asarray(self.leg.effort_limits, dtype=float)
        self.map_sensitivity = None
        self._table = None
        self._config = None
        self.reconfigure(config if config is not None else ControllerConfig())
        self.reset()

    # -- the robot it drives (the controller node sizes its topics from these) ----------------

    @property
    def config(self) -> ControllerConfig:
        return self._config

    @property
    def joint_names(self) -> tuple:
        """
        Order of ``q`` / ``v`` in :meth:`update`, from the model.

        (hopper ``base_x, base_z, hip, knee``; boom leg ``boom_yaw, boom_pitch, hip, knee``).
        """
        return tuple(self.dyn.joint_names)

    @property
    def actuated_joint_names(self) -> tuple:
        """Order of the returned torques: the last two joints (the selection matrix S)."""
        return tuple(self.dyn.joint_names[2:])

    @property
    def contact_frames(self) -> tuple:
        """Return the contact force sensor read by :meth:`update`: the model's foot frame."""
        return (str(self.dyn.model.frames[self.leg.foot_frame_id].name),)

    @property
    def task_frame(self) -> str:
        """'planar_xz' (hopper) or 'boom' (boom-mounted leg); docs/control.md."""
        return self.dyn.frame

    def reconfigure(self, config: ControllerConfig) -> None:
        """Use a new config from the next tick on (phase and hop history are kept)."""
        if not isinstance(config, ControllerConfig):
            raise TypeError(f'config must be a ControllerConfig, got {type(config).__name__}')
        cfg = config
        rest_length = (cfg.leg_rest_length_m if math.isfinite(cfg.leg_rest_length_m)
                       else cfg.leg_rest_length_fraction * self.stretched_length)
        max_rest_length = cfg.max_leg_length_fraction * self.stretched_length
        if rest_length >= max_rest_length:
            raise ValueError(f'leg rest length {rest_length:.4f} m must be shorter than '
                             f'max_leg_length_fraction x stretched leg = '
                             f'{max_rest_length:.4f} m')
        if getattr(self, '_apex_job', None) is not None:
            self._finish_apex_job()     # it was started with the old config: end it with it
        old = self._config
        armature = self.dyn.model.armature
        wanted = cfg.joint_armature_kgm2 or (0.0, 0.0)
        if tuple(armature[2:4]) != tuple(wanted):     # the mass matrix changes: new tables
            armature[2:4] = wanted
            self._table = None
        if old is None or any(not _same(getattr(old, n), getattr(cfg, n))
                              for n in ('apex_height', 'joint_armature_kgm2')
                              + APEX_RANGE_FIELDS):
            self._check_apex_height(cfg, rest_length, max_rest_length)
        self._config = cfg
        self.rest_length, self.max_rest_length = rest_length, max_rest_length
        gains_changed = old is None or self._gains_changed(old, cfg)
        if gains_changed or old.apex_height != cfg.apex_height:
            try:
                self.velocity_kc, self.slip_sensitivity = self._neutral_gain()
            except ValueError:
                if old is not None:
                    self.reconfigure(old)
                raise
            if math.isfinite(cfg.velocity_kc):
                self.velocity_kc = cfg.velocity_kc
        kp = self._velocity_kp()
        if gains_changed:
            self._position = PositionLoop(cfg.position_kp, cfg.position_ki, cfg.max_speed,
                                          cfg.position_integral_band)
            self._velocity = VelocityLoop(self.velocity_kc, kp, cfg.velocity_ki,
                                          cfg.max_angle_of_attack, cfg.velocity_integral_band)
        else:
            self._velocity.kc, self._velocity.kp = self.velocity_kc, kp
            # a new target keeps the position integral: it holds the in-place gait's speed
            # offset (a property of the robot, not of the target); integral separation keeps
            # it from winding up on the way to a far target
            if math.isnan(old.target_x) != math.isnan(cfg.target_x):
                self._position.reset()
        if (old is None or old.max_angle_of_attack != cfg.max_angle_of_attack
                or not _same(old.leg_rest_length_m, cfg.leg_rest_length_m)
                or old.leg_rest_length_fraction != cfg.leg_rest_length_fraction):
            self._table = None        # rebuilt from the measured knee branch at the next update
            self.map_sensitivity = None
        elif (gains_changed or old.apex_height != cfg.apex_height) and self._table is not None:
            # without a posture table (before the first update) the first update calibrates
            self._calibrate_map_sensitivity()
        self._phase_params = PhaseParams(cfg.min_flight_time_s, cfg.min_stance_time_s,
                                         int(cfg.liftoff_samples))
        if hasattr(self, '_phase'):
            self._phase.params = self._phase_params

    def set_setpoints(self, *, target_x: float | None = None,
                      target_velocity: float | None = None, apex_height: float | None = None,
                      flight_policy: str | None = None) -> None:
        """Change set-points at run time (None keeps a value; target_x=math.nan: velocity mode)."""
        changes = {name: value for name, value in (
            ('target_x', target_x), ('target_velocity', target_velocity),
            ('apex_height', apex_height), ('flight_policy', flight_policy)) if value is not None}
        self.reconfigure(dataclasses.replace(self._config, **changes))

    # -- feasibility of the apex set-point ---------------------------------------------------

    def apex_height_range(self, config: ControllerConfig | None = None) -> tuple[float, float]:
        """
        Apex heights (base above the ground, m) this leg can hop at with ``config``.

        Lower end (exclusive): the base height at a vertical touchdown with the leg at its rest
        length — a lower apex never leaves the ground. Upper end: the highest apex the SLIP apex
        return map of this leg still returns to within :data:`APEX_REACH_TOLERANCE_M` — vertical
        hop, the leg's touchdown impact (from N_s at the touchdown posture), SLIPic
        pre-compression and apex regulation with the spring no longer than its longest rest
        length (``max_leg_length_fraction``): above it the impact takes more energy than the
        stance can give back. Necessary, not sufficient (the return map ignores torque limits).
        """
        cfg = config if config is not None else self._config
        rest = (cfg.leg_rest_length_m if math.isfinite(cfg.leg_rest_length_m)
                else cfg.leg_rest_length_fraction * self.stretched_length)
        max_rest = cfg.max_leg_length_fraction * self.stretched_length
        return self._apex_range(cfg, rest, max_rest)

    def _apex_range(self, cfg: ControllerConfig, rest: float, max_rest: float,
                    probe: float | None = None):
        """(low, high) of :meth:`apex_height_range`; with ``probe``: whether it is inside."""
        dyn = self.dyn
        table_q = dyn.table_q(np.array([0.0, 0.0, *dyn.crouch_joints]), rest)
        try:
            for _ in range(2):     # boom leg: the leg's plane tilts with the table's pitch
                joints = dyn.posture_for_foot(np.array([0.0, -rest]), table_q)
                table_q = dyn.table_q(np.array([0.0, 0.0, joints[0], joints[1]]), rest)
        except ValueError:
            raise ValueError(f'the leg cannot reach its rest length {rest:.3f} m below the '
                             f'SLIP point: check leg_rest_length_m against the URDF') from None
        terms = dyn.terms(table_q, np.zeros(4))
        # base height above the foot at a vertical touchdown; SLIP point above the base
        touchdown = dyn.base_height(table_q) - float(terms.foot[1])
        offset = dyn.posture_offset(terms)
        impact = dyn.impact_map(terms, support_projection(terms).N_s)

        def returns(height: float) -> bool:
            rel = height + offset                      # CoG apex above the ground
            spec = StanceSpec(stiffness=cfg.leg_stiffness, mass=self.mass,
                              gravity_z=float(self.gravity[1]), regulate=cfg.apex_regulation,
                              apex_height_rel=rel, max_rest_length=max_rest,
                              step_s=cfg.deadbeat_step_s)
            apex, _ = apex_return_map_single(0.0, rel, 0.0, rest, spec, impact_matrix=impact,
                                             precompress=cfg.impact_compensation)
            return math.isfinite(apex) and apex >= rel - APEX_REACH_TOLERANCE_M

        if probe is not None:
            return probe > touchdown and returns(probe)
        low = high = touchdown + 0.01
        if not returns(low):
            return touchdown, touchdown
        step = 0.5
        while returns(high + step) and high < 100.0:
            high += step
        for _ in range(20):                            # bisection to < 1 mm
            step *= 0.5
            if returns(high + step):
                high += step
        return touchdown, high

    def _check_apex_height(self, cfg: ControllerConfig, rest: float, max_rest: float) -> None:
        if self._apex_range(cfg, rest, max_rest, probe=cfg.apex_height):
            return
        low, high = self._apex_range(cfg, rest, max_rest)
        raise ValueError(
            f'ControllerConfig.apex_height = {cfg.apex_height!r} m is out of reach for this leg: '
            f'feasible {low:.3f} m < apex_height <= {high:.3f} m (above the base height at a '
            f'vertical touchdown with the leg at rest length {rest:.3f} m, and no higher than '
            f'the SLIP stance with spring {cfg.leg_stiffness:g} N/m and longest rest length '
            f'{max_rest:.3f} m gives back after the touchdown impact)')

    @staticmethod
    def _gains_changed(old: ControllerConfig, new: ControllerConfig) -> bool:
        names = ('position_kp', 'position_ki', 'position_integral_band', 'max_speed',
                 'velocity_kc', 'velocity_kp', 'velocity_ki', 'velocity_integral_band',
                 'max_angle_of_attack', 'leg_stiffness', 'leg_rest_length_m',
                 'leg_rest_length_fraction', 'max_leg_length_fraction', 'apex_regulation',
                 'deadbeat_step_s')
        return any(not _same(getattr(old, n), getattr(new, n)) for n in names)

    def _stance_spec(self, apex_rel: float) -> StanceSpec:
        cfg = self._config
        return StanceSpec(stiffness=cfg.leg_stiffness, mass=self.mass,
                          gravity_z=float(self.gravity[1]), regulate=cfg.apex_regulation,
                          apex_height_rel=apex_rel, max_rest_length=self.max_rest_length,
                          step_s=cfg.deadbeat_step_s)

    def _velocity_kp(self) -> float:
        """Velocity-loop P gain: configured, or β / S of the return map with the impact."""
        cfg = self._config
        if math.isfinite(cfg.velocity_kp):
            return cfg.velocity_kp
        sensitivity = self.map_sensitivity or self.slip_sensitivity
        return cfg.velocity_step_fraction / sensitivity

    def _calibrate_map_sensitivity(self) -> None:
        """
        S = −d v_next / d α of the apex return map with the leg's touchdown impact.

        Around the in-place neutral angle (needs the posture table).
        """
        run_steps(self._calibration_steps(None))

    def _calibration_steps(self, chunk_steps: int | None):
        """:meth:`_calibrate_map_sensitivity` as a step generator (chunks of RK4 steps)."""
        cfg = self._config
        offset = self._apex_offset if self._apex_offset is not None else 0.0
        apex_rel = cfg.apex_height + offset
        spec = self._stance_spec(apex_rel)
        impact = self._impact_from(self._table)
        rest = self.rest_length
        alpha = yield from deadbeat_angle_steps(0.0, apex_rel, 0.0, rest, spec,
                                                cfg.max_angle_of_attack, impact_matrix=impact,
                                                chunk_steps=chunk_steps)
        delta = 0.02
        vx = []
        for a in (alpha - delta, alpha + delta):
            _, speed = yield from apex_return_map_steps(a, apex_rel, 0.0, rest, spec, impact,
                                                        True, chunk_steps)
            vx.append(speed)
        sensitivity = float((vx[0] - vx[1]) / (2.0 * delta))
        self.map_sensitivity = sensitivity if math.isfinite(sensitivity) and sensitivity > 0 \
            else None
        if hasattr(self, '_velocity'):
            self._velocity.kp = self._velocity_kp()

    def _neutral_gain(self) -> tuple[float, float]:
        """
        SLIP neutral-point gain and its sensitivity.

        SLIP neutral-point gain α/v (rad/(m/s), at 1 m/s) and the sensitivity −d v_liftoff / d α at
        rest ((m/s)/rad), both from the apex return map.
        """
        cfg = self._config
        apex_rel = cfg.apex_height
        spec = self._stance_spec(apex_rel)
        alpha = deadbeat_angle(1.0, apex_rel, 1.0, self.rest_length, spec,
                               cfg.max_angle_of_attack)
        delta = 0.02
        _, vx = apex_return_map(np.array([-delta, delta]), apex_rel, 0.0, self.rest_length, spec)
        sensitivity = float((vx[0] - vx[1]) / (2.0 * delta))
        if not (math.isfinite(alpha) and math.isfinite(sensitivity) and sensitivity > 0.0):
            raise ValueError(f'SLIP return map unusable for apex_height={cfg.apex_height} m, '
                             f'leg_stiffness={cfg.leg_stiffness} N/m, rest length '
                             f'{self.rest_length:.3f} m')
        return float(alpha), sensitivity

    # -- state -----------------------------------------------------------------------------

    def reset(self) -> None:
        """Forget phase, loop integrators and hop history (config is kept)."""
        self._phase = PhaseMachine(self._phase_params)
        self._position.reset()
        self._velocity.reset()
        self._prev_v = None
        self._prev_rel_vz = None
        self._prev_phase = None
        self._rest = self.rest_length
        self._decompressing = False
        self._foothold = None
        self._ground = self._config.ground_height_guess_m
        self._alpha = 0.0
        self._td_alpha = 0.0
        self._v_set = 0.0
        self._v_bias = 0.0
        self._v_pred = None
        self._hops_at_pred = 0
        self._apex_offset = None
        self._apex_offset_pred = None
        self._energy_td = 0.0
        self._apex_correction = 0.0
        self._last_apex_t = None
        self._last_apex_h = math.nan
        self._last_apex_vx = math.nan
        self._stance_time = math.pi * math.sqrt(self.mass / self._config.leg_stiffness)
        self._touchdown_t = 0.0
        self._energy_injected = 0.0
        self._impact_loss = 0.0
        self._hops = 0
        self._bezier_scale = 1.0
        self._bezier_target = (0.0, 0.0)
        self._x_bias = 0.0
        self._hop_pred = None
        self._telemetry = None
        self._telemetry_args = None
        self._apex_job = None           # the apex solve under way (a step generator)
        self.apex_solve_ticks = 0       # ticks the last apex solve was spread over
        self.apex_solves_forced = 0     # solves finished in one go (a touchdown came first)

    @property
    def telemetry(self) -> ControllerTelemetry | None:
        """Snapshot of the last update (None before the first one)."""
        if self._telemetry is None and self._telemetry_args is not None:
            args = list(self._telemetry_args)
            for i in range(15, 21):     # com_position ... leg_force: tuples/lists -> arrays
                args[i] = np.array(args[i], dtype=float)
            self._telemetry = ControllerTelemetry(*args)
        return self._telemetry

    @property
    def busy(self) -> bool:
        """
        Work spread over the coming ticks is under way.

        (the start-up posture table and calibration, or an apex solve).
        """
        return self._apex_job is not None

    @property
    def phase(self) -> str | None:
        return self._phase.phase

    # -- the control law -------------------------------------------------------------------

    def update(self, t: float, q, v, foot_force) -> np.ndarray:
        """
        One control tick: returns ``[hip, knee]`` torques, N*m.

        ``foot_force``: the foot force sensor, world frame, N — ``[fx, fz]``, or the contact
        row ``[[fx, fy, fz]]`` of :attr:`contact_frames` as the controller node and
        :func:`dodo_sim.rollout.rollout` pass it (y is not used: the hopper is planar; the boom
        leg's contact detection reads only the vertical fz).
        """
        q = np.asarray(q, dtype=float)
        v = np.asarray(v, dtype=float)
        force = np.asarray(foot_force, dtype=float)
        if q.ndim != 1 or v.ndim != 1:
            q, v = q.reshape(-1), v.reshape(-1)
        if force.shape in ((1, 3), (3,)):
            force = force.reshape(3)[0::2]
        elif force.ndim != 1:
            force = force.reshape(-1)
        if q.shape != (4,) or v.shape != (4,) or force.shape != (2,):
            raise ValueError(f'update needs q (4), v (4), foot_force ([fx, fz] or one [fx, fy, '
                             f'fz] row); got shapes {q.shape}, {v.shape}, '
                             f'{np.shape(foot_force)}')
        fx, fz = force.tolist()
        # a NaN or inf anywhere makes the sum non-finite
        if not math.isfinite(sum(q.tolist()) + sum(v.tolist()) + fx + fz + t):
            raise ValueError(f'non-finite controller input at t={t}: q={q}, v={v}, f={force}')
        cfg = self._config
        if self._table is None and self._apex_job is None:
            # posture table and return-map calibration, spread over the first ticks (they are
            # needed at the first touchdown or apex, which finish them if they come sooner)
            self._apex_job = self._startup_steps(q)
            self.apex_solve_ticks = 0
        if self._apex_job is not None:
            self._step_apex_job()
        tt = self.dyn.tick_terms(q, v)
        (cx, cz), (vx, vz), (px, pz), (pvx, pvz) = tt.com, tt.com_vel, tt.foot, tt.foot_vel
        dx, dz = cx - px, cz - pz
        length = math.hypot(dx, dz)
        length_rate = (dx * (vx - pvx) + dz * (vz - pvz)) / length
        rel_vz = pvz - vz

        phase = self._phase
        contact = self._contact(fz, pvx, pvz, vz, rel_vz)
        in_stance = phase.phase == STANCE
        if cfg.stance_policy == 'bezier':         # the profile's nominal stance time is over
            released = in_stance and t - self._touchdown_t >= cfg.bezier_stance_time_s - 1e-9
        else:
            if in_stance and self._decompressing:
                self._rest = self._decompression_rest(length, cz, vz)
            released = (in_stance and self._decompressing and length >= self._rest - 1e-12
                        and length_rate > 0.0)
        events = phase.update(t, contact, released, vz)
        for event in events:
            if event == 'touchdown':
                if self._apex_job is not None:  # needs the table and the angle: finish now
                    self.apex_solves_forced += 1    # not expected: a fall lasts ~200 ticks
                    self._finish_apex_job()
                self._on_touchdown(t, q, v, length, tt)
            elif event == 'liftoff':
                self._stance_time = max(t - self._touchdown_t, cfg.min_stance_time_s)
            elif event == 'apex':
                com, vcom = tuple(tt.com), tuple(tt.com_vel)
                if self._apex_job is None:
                    self._start_apex_job(self._on_apex(t, q, com, vcom))
                else:   # the start-up work (the first tick of a drop is an apex): after it
                    self._apex_job = self._after(self._apex_job, t, q.copy(), com, vcom)

        mass = self.mass
        if phase.phase == STANCE and cfg.stance_policy == 'bezier':
            scale = self._bezier_scale
            sp = stance_phase(t, self._touchdown_t, cfg.bezier_stance_time_s)
            fx = scale * bezier_value(cfg.bezier_force_x_n, sp)
            fz = scale * bezier_value(cfg.bezier_force_z_n, sp)
            if cfg.bezier_force_frame == 'leg':      # axial along foot -> SLIP point, x normal
                ux, uz = dx / length, dz / length
                fx, fz = fz * ux + fx * uz, fz * uz - fx * ux
            qa, va = q.tolist(), v.tolist()
            tau0, tau1 = bezier_torque(tt.Jf, fx, fz, qa[2:], va[2:], self._bezier_target,
                                       cfg.bezier_joint_kp, cfg.bezier_joint_kd)
            accel = _NAN_XZ
            leg_force = (fx, fz)
            target = self._foothold
            self._energy_injected = self._cog_energy(cz, vx, vz) - self._energy_td
        elif phase.phase == STANCE:
            if not self._decompressing and length_rate > 0.0:
                self._decompressing = True       # maximum compression passed
                self._rest = self._decompression_rest(length, cz, vz)
            # SLIP: a = F_leg/m + g, F_leg = k (l0 - l) (r - p_f) / l (slip.slip_acceleration)
            scale = cfg.leg_stiffness * (self._rest - length) / (length * mass)
            gx, gz = self.dyn.gravity_xz
            ax, az = scale * dx + gx, scale * dz + gz
            tau0, tau1 = slip_torque_tick(tt, ax, az)
            accel = (ax, az)
            leg_force = (mass * (ax - gx), mass * (az - gz))
            target = self._foothold
            self._energy_injected = self._cog_energy(cz, vx, vz) - self._energy_td
        else:
            # posture: PD on the foot relative to the CoG towards the SLIP touchdown point
            tx = self.rest_length * math.sin(self._alpha)     # flight.foot_target
            tz = -self.rest_length * math.cos(self._alpha)
            kp, kd = cfg.posture_kp, cfg.posture_kd
            tau0, tau1 = flight_foot_torque_tick(tt, kp * (tx - (px - cx)) - kd * (pvx - vx),
                                                 kp * (tz - (pz - cz)) - kd * (pvz - vz))
            accel = _NAN_XZ
            leg_force = _ZERO_XZ
            target = (cx + tx, cz + tz)
        saturated = False
        if cfg.saturate_torque:
            lim0, lim1 = self.dyn.effort_limits
            if abs(tau0) > lim0:
                tau0, saturated = math.copysign(lim0, tau0), True
            if abs(tau1) > lim1:
                tau1, saturated = math.copysign(lim1, tau1), True
        self._prev_v = v.copy()
        self._prev_rel_vz = rel_vz
        self._prev_phase = phase.phase
        # telemetry is assembled lazily (only when read): positional in field order
        self._telemetry = None
        self._telemetry_args = (
            float(t), phase.phase, self._hops, events, length, float(self._rest),
            float(self._alpha if phase.phase == FLIGHT else self._td_alpha),
            cfg.target_x, cfg.target_velocity, cfg.apex_height, float(self._v_set),
            float(self._last_apex_h), float(self._last_apex_vx), float(self._energy_injected),
            float(self._impact_loss), tt.com, tt.com_vel, tt.foot, target, accel, leg_force,
            saturated)
        return np.array((tau0, tau1))

    # -- pieces ----------------------------------------------------------------------------

    def _contact(self, force_z, foot_vx, foot_vz, com_vz, rel_vz) -> bool:
        cfg = self._config
        if cfg.use_foot_sensor:
            return force_z > cfg.contact_force_threshold_n
        # kinematic fallback (no sensor): the foot stops dead at a plastic impact
        if self._phase.phase == STANCE:
            return foot_vz < 0.05 and abs(foot_vx) < 0.05
        if self._phase.phase is None or self._prev_rel_vz is None:
            return False  # no history yet: start in flight
        sink = -com_vz
        return sink > 0.1 and rel_vz - self._prev_rel_vz > cfg.kinematic_touchdown_ratio * sink

    def _on_touchdown(self, t, q, v, length, tt) -> None:
        cfg = self._config
        self._hops += 1
        self._touchdown_t = t
        foot, com = tt.foot, tt.com
        self._foothold = foot
        self._ground = foot[1]
        self._decompressing = False
        self._td_alpha = math.atan2(foot[0] - com[0], com[1] - foot[1])
        v_minus = self._prev_v if (self._prev_v is not None and self._prev_phase == FLIGHT) else v
        loss = 0.0
        if cfg.impact_compensation:
            terms = self.dyn.terms(q, v)            # once per hop: the full terms
            loss = impact_energy_loss(terms, v_minus, self.mass, support_projection(terms))
        self._impact_loss = loss
        dl = precompression(loss, cfg.leg_stiffness)
        self._rest = min(length + dl, self.max_rest_length)
        self._energy_td = self._cog_energy(com[1], tt.com_vel[0], tt.com_vel[1])
        self._energy_injected = 0.0
        self._apex_offset_pred = self._posture_offset(self._alpha)
        if cfg.stance_policy == 'bezier':
            self._bezier_target = (cfg.bezier_joint_target_rad
                                   or (float(q[2]), float(q[3])))

    def _apex_target_rel(self) -> float:
        """Return the CoG apex height (m) over the foothold putting the base at ``apex_height``."""
        offset = self._apex_offset_pred
        if offset is None:
            offset = self._apex_offset if self._apex_offset is not None else 0.0
        return self._config.apex_height + offset + self._apex_correction

    def _cog_energy(self, com_z, com_vx, com_vz) -> float:
        """Return the CoG energy ½ m |ṙ|² + m |g| (z − z_foothold), J."""
        height = com_z - (self._foothold[1] if self._foothold is not None else 0.0)
        return 0.5 * self.mass * (com_vx * com_vx + com_vz * com_vz) + self.dyn.weight * height

    def _decompression_rest(self, length, com_z, com_vz) -> float:
        """
        Rest length after maximum compression: constant, or apex-regulated.

        (:func:`.slip.regulated_force`, here in scalar form).
        """
        cfg = self._config
        if not cfg.apex_regulation:
            return self._rest
        # ½ k (l0' − l)² = m |g| (z_apex − z) − ½ m ż², l0' <= max rest length
        e_v = self.dyn.weight * (self._apex_target_rel() - (com_z - self._foothold[1])) \
            - 0.5 * self.mass * com_vz * com_vz
        stretch = math.sqrt(2.0 * e_v / cfg.leg_stiffness) if e_v > 0.0 else 0.0
        return min(length + stretch, self.max_rest_length)

    def _on_apex(self, t, q, com, vcom):
        """
        Return the apex's set-points and loops.

        Returns the return-map solve still to run (a step generator) or None.
        """
        cfg = self._config
        g = abs(float(self.gravity[1]))
        base_h = self.dyn.base_height(q)
        apex_h = float(base_h - self._ground)
        self._apex_offset = float(com[1] - base_h)
        if self._foothold is not None and cfg.stance_policy == 'bezier':
            self._bezier_scale = adapt_scale(self._bezier_scale, cfg.apex_height - apex_h,
                                             cfg.bezier_apex_gain, cfg.max_bezier_scale)
        elif self._foothold is not None and cfg.apex_regulation:
            err = cfg.apex_height - apex_h
            self._apex_correction = float(np.clip(
                self._apex_correction + cfg.apex_integral_gain * err,
                -cfg.max_apex_correction_m, cfg.max_apex_correction_m))
        dt_hop = 0.0 if self._last_apex_t is None else t - self._last_apex_t
        self._last_apex_t = t
        self._last_apex_h = apex_h
        vx = float(vcom[0])
        self._last_apex_vx = vx
        self._update_velocity_bias(vx)
        # velocity set-point: position PI plus the in-place speed v_ff, the apex speed whose hop
        # has zero net displacement despite the touchdown impact's speed change (the stance
        # starts at v + kick: v_ff (2 t_fall + T_s) + kick T_s / 2 = 0). The error is that of
        # the CoG x predicted ``lead`` ahead relative to an in-place hop, x + (v − v_ff) lead:
        # zero in steady state means the apex CoG x is on the target.
        if math.isfinite(cfg.target_x):
            z_td = self._ground + self.rest_length * math.cos(self._alpha)
            fall = math.sqrt(2.0 * max(com[1] - z_td, 0.0) / g)
            kick = self._predicted_impact_kick(self._alpha, com, vx)
            if cfg.displacement_bias_gain > 0.0:
                self._update_displacement_bias(float(com[0]), vx, fall, kick)
                v_ff = -(0.5 * kick * self._stance_time + self._x_bias) / (
                    2.0 * fall + self._stance_time)
            else:
                v_ff = -0.5 * kick * self._stance_time / (2.0 * fall + self._stance_time)
            lead = self._position_lead(fall, self._stance_time)
            self._v_set = self._position.update(cfg.target_x - (com[0] + (vx - v_ff) * lead),
                                                dt_hop, feedforward=v_ff)
        else:
            self._v_set = cfg.target_velocity
        # the model-based policies aim the SLIP return map at v_set minus its learned bias
        v_model = self._v_set - self._v_bias
        self._v_pred = None
        if cfg.flight_policy == 'deadbeat' or (cfg.flight_policy == 'cascade'
                                               and not math.isfinite(cfg.velocity_kc)):
            # the return-map solve runs over the next ticks (APEX_SOLVE_RK4_STEPS_PER_TICK), on
            # the inputs of this apex; the flight posture keeps the last angle until it ends
            return self._apex_solve(com, vx, v_model)
        if cfg.flight_policy == 'cascade':
            alpha = self._velocity.update(vx, self._v_set)
        else:
            alpha = raibert_angle(vx, self._v_set, self._stance_time, self.rest_length,
                                  cfg.raibert_gain_s, cfg.max_angle_of_attack)
        if cfg.impact_feedforward:
            # the impact changes the speed the stance starts with: shift the neutral point
            # by K_c kick and cancel the kick by kick / S (kick evaluated at the α found)
            gain = self.velocity_kc + 1.0 / self.slip_sensitivity
            ff = gain * self._predicted_impact_kick(alpha, com, vx)
            ff = gain * self._predicted_impact_kick(alpha + ff, com, vx)
            alpha += ff
        self._alpha = float(np.clip(alpha, -cfg.max_angle_of_attack, cfg.max_angle_of_attack))

    def _position_lead(self, fall_s: float, stance_s: float) -> float:
        """
        Prediction horizon of the position error, s.

        :func:`.flight.critically_damped_lead` with a = t_fall + T_s/2 (apex to mid-stance) and T =
        2 t_fall + T_s.
        """
        cfg = self._config
        a = fall_s + 0.5 * stance_s
        if cfg.position_kp <= 0.0:
            return a
        return critically_damped_lead(a, 2.0 * fall_s + stance_s, self._velocity_fraction(),
                                      cfg.position_kp)

    def _velocity_fraction(self) -> float:
        """
        β: the fraction of a velocity set-point change the flight policy achieves in one hop.

        (linearised SLIP return map, sensitivity S = −d v_next / d α).
        """
        cfg = self._config
        if cfg.flight_policy == 'deadbeat':
            return 1.0
        sensitivity = self.map_sensitivity or self.slip_sensitivity
        if cfg.flight_policy == 'cascade':
            per_speed = self._velocity.kp                       # rad per (m/s) of error
        else:                                                    # raibert: foot placement
            per_speed = cfg.raibert_gain_s / self.rest_length
        return min(max(sensitivity * per_speed, 0.05), 1.0)

    def _update_velocity_bias(self, vx: float) -> None:
        """
        Learn the bias of the SLIP return map's apex-speed prediction per hop.

        Per hop: learn the bias of the SLIP return map's apex-speed prediction (model errors of the
        template, of the contact, of the touchdown timing) from the prediction made at the previous
        apex. Hops with a residual beyond ``max_velocity_bias`` (a push, a misstep) are not used.
        """
        cfg = self._config
        pred, self._v_pred = self._v_pred, None
        if pred is None or self._hops == self._hops_at_pred or not math.isfinite(pred):
            return
        residual = vx - pred
        if abs(residual) <= cfg.max_velocity_bias:
            step = cfg.velocity_bias_gain * (residual - self._v_bias)
            limit = cfg.max_velocity_bias_step
            self._v_bias += min(max(step, -limit), limit)

    def _update_displacement_bias(self, x: float, vx: float, fall: float, kick: float) -> None:
        """
        Per hop: learn the horizontal displacement per hop the hop model misses.

        From the prediction made at the previous apex: Δx = (v_n + v_n+1)/2 (2 t_fall + T_s) + kick
        T_s/2 (the model behind v_ff). Hops whose residual exceeds ``max_displacement_bias_m`` are
        not used; only consecutive apexes count.
        """
        cfg = self._config
        pred, self._hop_pred = self._hop_pred, (self._hops, x, vx, fall, kick, self._stance_time)
        if pred is None or pred[0] + 1 != self._hops:
            return
        _, x0, v0, fall0, kick0, stance0 = pred
        residual = (x - x0) - (0.5 * (v0 + vx) * (2.0 * fall0 + stance0) + 0.5 * kick0 * stance0)
        if abs(residual) <= cfg.max_displacement_bias_m:
            self._x_bias += cfg.displacement_bias_gain * (residual - self._x_bias)

    def _apex_solve(self, com, vx: float, v_model: float):
        """
        Yield the apex's return-map work as a step generator (one chunk per ``next``).

        On the inputs of the apex tick (all bound here): 'deadbeat' the angle for ``v_model``;
        'cascade' the neutral angle (keeps the current speed through the coming touchdown and
        stance, from the SLIP apex return map with the leg's impact: no separate impact term) and
        the velocity loop around it; then the observer's prediction of the next apex speed. Sets
        ``_alpha`` and ``_v_pred`` as it gets them.
        """
        cfg = self._config
        height = float(com[1] - self._ground)
        spec = self._stance_spec(self._apex_target_rel())
        impact = self._impact_from(self._table)
        rest, precompress, max_angle = (self.rest_length, cfg.impact_compensation,
                                        cfg.max_angle_of_attack)
        hops = self._hops
        target = v_model if cfg.flight_policy == 'deadbeat' else vx
        chunk = APEX_SOLVE_RK4_STEPS_PER_TICK
        angle = yield from deadbeat_angle_steps(
            target, height, vx, rest, spec, max_angle, impact_matrix=impact,
            precompress=precompress, guess=self._alpha, tolerance_mps=1e-3, chunk_steps=chunk)
        if cfg.flight_policy == 'deadbeat':
            self._alpha = angle
        else:
            alpha = self._velocity.update(vx, v_model, neutral=angle)
            self._alpha = float(np.clip(alpha, -max_angle, max_angle))
        _, speed = yield from apex_return_map_steps(self._alpha, height, vx, rest, spec, impact,
                                                    precompress, chunk)
        self._hops_at_pred = hops
        self._v_pred = speed

    def _start_apex_job(self, steps) -> None:
        if steps is None:
            return
        self._apex_job, self.apex_solve_ticks = steps, 0
        self._step_apex_job()           # up to its first RK4 chunk (cheap)

    def _after(self, pending, t, q, com, vcom):
        """Yield the pending work, then the apex of (t, q, com, vcom) and its solve, as one job."""
        yield from pending
        solve = self._on_apex(t, q, com, vcom)
        if solve is not None:
            yield from solve

    def _step_apex_job(self) -> None:
        """Run the apex solve on for this tick (one chunk)."""
        self.apex_solve_ticks += 1
        try:
            next(self._apex_job)
        except StopIteration:
            self._apex_job = None

    def _finish_apex_job(self) -> None:
        job, self._apex_job = self._apex_job, None
        run_steps(job)

    def _predicted_impact_kick(self, alpha: float, com, vx) -> float:
        """Horizontal CoG velocity change a touchdown at α will cause, m/s."""
        g = abs(float(self.gravity[1]))
        z_td = self._ground + self.rest_length * math.cos(alpha)
        v_minus = np.array([vx, -math.sqrt(2.0 * g * max(com[1] - z_td, 0.0))])
        return float((self._impact_matrix(alpha) @ v_minus)[0] - vx)

    # -- posture table: touchdown posture quantities as functions of α ------------------------

    def _startup_steps(self, q):
        """
        Posture table, then the return-map calibration, as a step generator.

        One grid point of the table or one chunk of RK4 steps per ``next``.
        """
        yield from self._posture_table_steps(np.array(q, dtype=float))
        yield from self._calibration_steps(APEX_SOLVE_RK4_STEPS_PER_TICK)

    def _posture_table_steps(self, q):
        """
        IK of the flight posture on a grid of α (knee branch of the measured q).

        The impact map of the CoG velocity (2x2, from N_s with resting joints) and the
        CoG-minus-base height. A step generator: yields before each grid point.
        """
        cfg = self._config
        alphas = np.linspace(-cfg.max_angle_of_attack, cfg.max_angle_of_attack, 21)
        impacts = np.full((alphas.size, 2, 2), np.nan)
        offsets = np.full(alphas.size, np.nan)
        middle = alphas.size // 2
        for order in (range(middle, alphas.size), range(middle, -1, -1)):
            guess = self.dyn.table_q(q, cfg.ground_height_guess_m + self.rest_length)
            for i in order:
                yield
                try:
                    joints = self.dyn.posture_for_foot(foot_target(alphas[i], self.rest_length),
                                                       guess)
                except ValueError:
                    continue
                guess = np.array([guess[0], guess[1], joints[0], joints[1]])
                terms = self.dyn.terms(guess, np.zeros(4))
                impacts[i] = self.dyn.impact_map(terms, support_projection(terms).N_s)
                offsets[i] = self.dyn.posture_offset(terms)
        ok = np.isfinite(offsets)
        if not ok.any():
            raise ValueError('no flight posture reaches the SLIP touchdown point: check '
                             'leg_rest_length_m against the URDF leg lengths')
        self._table = (alphas[ok], impacts[ok], offsets[ok])

    def _impact_matrix(self, alpha: float) -> np.ndarray:
        return self._impact_from(self._table)(alpha)

    @staticmethod
    def _impact_from(table):
        """
        Α -> the 2x2 CoG velocity impact map, interpolated in ``table``.

        (bound: a later rebuild of the controller's table does not change it).
        """
        alphas, impacts, _ = table

        def impact_matrix(alpha: float) -> np.ndarray:
            out = np.empty((2, 2))
            for i in range(2):
                for j in range(2):
                    out[i, j] = np.interp(alpha, alphas, impacts[:, i, j])
            return out
        return impact_matrix

    def _posture_offset(self, alpha: float) -> float:
        alphas, _, offsets = self._table
        return float(np.interp(alpha, alphas, offsets))


def _same(a: float, b: float) -> bool:
    return a == b or (isinstance(a, float) and isinstance(b, float)
                      and math.isnan(a) and math.isnan(b))
