# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
Parameters of the SLIP hopping controller (:class:`dodo_control.controller.Controller`).

:class:`ControllerConfig` (set-points, gains, timing; the controller node declares its fields as
ROS parameters), its validation, and which of its fields a reconfiguration must act on.
"""
from __future__ import annotations

from dataclasses import dataclass
import math
from typing import Mapping

from dodo_sim.parameter import bounded, check_fields, config_from_dict, one_of

FLIGHT_POLICIES = ('cascade', 'raibert', 'deadbeat')
STANCE_POLICIES = ('slip', 'bezier')
BEZIER_FORCE_FRAMES = ('leg', 'task')
#: ControllerConfig fields besides apex_height that change the feasible apex range.
APEX_RANGE_FIELDS = ('leg_stiffness', 'leg_rest_length_m', 'leg_rest_length_fraction',
                     'max_leg_length_fraction', 'impact_compensation', 'apex_regulation',
                     'deadbeat_step_s')
#: ControllerConfig fields whose change rebuilds the position and velocity loops.
GAIN_FIELDS = ('position_kp', 'position_ki', 'position_integral_band', 'max_speed',
               'velocity_kc', 'velocity_kp', 'velocity_ki', 'velocity_integral_band',
               'max_angle_of_attack', 'leg_stiffness', 'leg_rest_length_m',
               'leg_rest_length_fraction', 'max_leg_length_fraction', 'apex_regulation',
               'deadbeat_step_s')


@dataclass(frozen=True)
class ControllerConfig:
    """
    Controller parameters (the controller node declares exactly these as ROS parameters).

    Set-points (changeable at run time, see
    :meth:`dodo_control.controller.Controller.set_setpoints`). Positions and velocities are those
    of the SLIP point in the robot's task frame (docs/control.md, "Task frame"): the hopper's CoG
    x; the boom leg's hip arc coordinate s = R boom_yaw (R the hip's distance from the yaw axis,
    boom_radius_m):
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

    target_x: float = bounded(math.nan, unit='m', allow_nan=True)
    target_velocity: float = bounded(0.0, unit='m/s')
    apex_height: float = bounded(1.2, low=0.0, low_open=True, unit='m')
    flight_policy: str = one_of('cascade', FLIGHT_POLICIES)
    stance_policy: str = one_of('slip', STANCE_POLICIES)
    use_foot_sensor: bool = True
    control_period: float = bounded(0.001, low=0.0, low_open=True, unit='s')
    leg_stiffness: float = bounded(6000.0, low=0.0, low_open=True, unit='N/m')
    leg_rest_length_m: float = bounded(math.nan, low=0.0, low_open=True, unit='m',
                                       allow_nan=True)
    leg_rest_length_fraction: float = bounded(0.8, 0.0, 1.0, low_open=True, high_open=True,
                                              unit='-')
    max_leg_length_fraction: float = bounded(0.93, 0.0, 1.0, low_open=True, high_open=True,
                                             unit='-')
    impact_compensation: bool = True
    apex_regulation: bool = True
    apex_integral_gain: float = bounded(0.5, low=0.0, unit='-')
    max_apex_correction_m: float = bounded(0.1, low=0.0, unit='m')
    position_kp: float = bounded(1.0, low=0.0, unit='1/s')
    position_ki: float = bounded(0.3, low=0.0, unit='1/s^2')
    position_integral_band: float = bounded(0.02, low=0.0, low_open=True, unit='m')
    max_speed: float = bounded(1.5, low=0.0, low_open=True, unit='m/s')
    velocity_kc: float = bounded(math.nan, unit='rad/(m/s)', allow_nan=True)
    velocity_kp: float = bounded(math.nan, low=0.0, unit='rad/(m/s)', allow_nan=True)
    velocity_step_fraction: float = bounded(0.9, 0.0, 1.0, low_open=True, unit='-')
    velocity_ki: float = bounded(0.0, low=0.0, unit='rad/(m/s)')
    velocity_integral_band: float = bounded(0.3, low=0.0, low_open=True, unit='m/s')
    max_angle_of_attack: float = bounded(0.5, 0.0, 1.2, low_open=True, high_open=True,
                                         unit='rad')
    velocity_bias_gain: float = bounded(0.6, 0.0, 1.0, unit='-')
    max_velocity_bias: float = bounded(0.1, low=0.0, unit='m/s')
    max_velocity_bias_step: float = bounded(1.0, low=0.0, unit='m/s')
    displacement_bias_gain: float = bounded(0.0, 0.0, 1.0, unit='-')
    max_displacement_bias_m: float = bounded(0.05, low=0.0, unit='m')
    raibert_gain_s: float = bounded(0.05, low=0.0, unit='s')
    impact_feedforward: bool = True
    deadbeat_step_s: float = bounded(0.002, low=0.0, low_open=True, unit='s')
    bezier_force_frame: str = one_of('leg', BEZIER_FORCE_FRAMES)
    bezier_force_x_n: tuple = bounded((0.0, 0.0, 0.0, 0.0, 0.0), unit='N')
    bezier_force_z_n: tuple = bounded((0.0, 20.0, 100.0, 0.0, 0.0), unit='N')
    bezier_stance_time_s: float = bounded(0.35, low=0.0, low_open=True, unit='s')
    bezier_joint_kp: float = bounded(0.03, low=0.0, unit='N*m/rad')
    bezier_joint_kd: float = bounded(0.08, low=0.0, unit='N*m*s/rad')
    bezier_joint_target_rad: tuple = bounded((), unit='rad')
    bezier_apex_gain: float = bounded(0.0, low=0.0, unit='1/m')
    max_bezier_scale: float = bounded(2.0, low=1.0, unit='-')
    posture_kp: float = bounded(900.0, low=0.0, low_open=True, unit='1/s^2')
    posture_kd: float = bounded(60.0, low=0.0, low_open=True, unit='1/s')
    contact_force_threshold_n: float = bounded(10.0, low=0.0, low_open=True, unit='N')
    min_flight_time_s: float = bounded(0.03, low=0.0, unit='s')
    min_stance_time_s: float = bounded(0.03, low=0.0, unit='s')
    liftoff_samples: int = bounded(5, low=1, unit='ticks')
    kinematic_touchdown_ratio: float = bounded(0.5, low=0.0, low_open=True, unit='-')
    ground_height_guess_m: float = bounded(0.0, unit='m')
    saturate_torque: bool = True
    joint_armature_kgm2: tuple = bounded((), low=0.0, unit='kg*m^2')

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
        """
        Raise ValueError naming the first bad value.

        Ranges, units and allowed values are the fields' metadata (:mod:`dodo_sim.parameter`, the
        same the ROS parameter descriptors show); what is left here relates fields or lengths.
        """
        def bad(name, why):
            raise ValueError(f'ControllerConfig.{name} = {getattr(self, name)!r}: {why}')

        check_fields(self)
        if len(self.bezier_joint_target_rad) not in (0, 2):
            bad('bezier_joint_target_rad', 'needs [hip, knee] (2 values) or none')
        if len(self.joint_armature_kgm2) not in (0, 2):
            bad('joint_armature_kgm2', 'needs [hip, knee] (2 finite values >= 0) or none')
        if int(self.liftoff_samples) != self.liftoff_samples:
            bad('liftoff_samples', 'must be an integer >= 1')

    @classmethod
    def from_dict(cls, values: Mapping[str, object]) -> 'ControllerConfig':
        """Build from a parameter mapping; unknown keys raise ValueError naming them."""
        return config_from_dict(cls, values, 'controller')

    def rest_lengths(self, stretched_length: float) -> tuple[float, float]:
        """
        Return the spring's rest length and its longest rest length, m.

        ``stretched_length``: the stretched leg's foot-to-CoG distance from the URDF.
        """
        rest = (self.leg_rest_length_m if math.isfinite(self.leg_rest_length_m)
                else self.leg_rest_length_fraction * stretched_length)
        return rest, self.max_leg_length_fraction * stretched_length


def gains_changed(old: ControllerConfig, new: ControllerConfig) -> bool:
    """Return whether ``new`` changes a field of :data:`GAIN_FIELDS`."""
    return any(not same_value(getattr(old, n), getattr(new, n)) for n in GAIN_FIELDS)


def same_value(a: float, b: float) -> bool:
    """Return whether two field values are equal, NaN equal to NaN."""
    return a == b or (isinstance(a, float) and isinstance(b, float)
                      and math.isnan(a) and math.isnan(b))
