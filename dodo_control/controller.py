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
    ControllerConfig.from_dict({'target_x': 4.0})           # unknown keys -> ValueError

``ControllerConfig`` (:mod:`.slip.config`) and ``ControllerTelemetry`` (:mod:`.slip.telemetry`)
are importable from here too: the controller's API takes and gives them.

Inputs of ``update``: ``t`` (s), ``q`` in ``ctrl.joint_names`` order — the hopper's
``[x, z, hip, knee]`` (m, m, rad, rad) or the boom-mounted leg's ``[boom_yaw, boom_pitch, hip,
knee]`` (rad) —, ``v`` (their rates) — boom/base joints are measured like on the boom rig — and
``foot_force`` = world ``[fx, fz]`` (N) from the foot force sensor (zero in flight; ignored when
``use_foot_sensor`` is False). The controller never reads simulator internals. It builds its own
pinocchio Model/Data from the URDF (masses and lengths come from there), picks the task frame
from its joints (:func:`.task_frame.load_dynamics`; docs/control.md "Task frame": world x-z for the
hopper, the plane tangent to the boom circle for the boom leg) and is meant to be called every
``control_period``.

Structure (docs/control.md). This module holds the tick and the hop events (touchdown, liftoff,
apex and the apex solve spread over the following ticks); it is longer than ~500 lines because
those share the controller's per-tick state (phase, rest length, commanded angle, loops, the job
under way) and its configuration-dependent gains, which split apart would have to be passed
around on every tick. Its parts:

* :mod:`.slip.config` — the parameters and their validation; :mod:`.slip.telemetry` — the
  snapshot after a tick; :mod:`.slip.hop_memory` — what is kept from hop to hop (touchdown and
  apex records, per-hop corrections, the observers of the hop model's errors);
  :mod:`.slip.apex_range` — the feasible apex heights; :mod:`.slip.posture_table` — touchdown
  posture quantities as functions of the angle of attack.
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
import math
from typing import Mapping

import numpy as np

from .slip.apex_range import apex_range, check_apex_height
from .slip.bezier import adapt_scale, bezier_torque, bezier_value, stance_phase
from .slip.config import APEX_RANGE_FIELDS, ControllerConfig, gains_changed, same_value
from .slip.flight import critically_damped_lead, PositionLoop, raibert_angle, VelocityLoop
from .slip.hop_memory import HopMemory
from .slip.phase import FLIGHT, PhaseMachine, PhaseParams, STANCE
from .slip.posture_table import posture_table_steps
from .slip.stance import (flight_foot_torque_tick, impact_energy_loss, slip_torque_tick,
                          support_projection)
from .slip.task_frame import load_dynamics
from .slip.telemetry import ControllerTelemetry
from .slip.template import (apex_return_map, apex_return_map_steps, deadbeat_angle,
                            deadbeat_angle_steps, precompression, run_steps, StanceSpec)

#: RK4 steps of the SLIP stance flow (~3 us each in Python; a return-map evaluation takes ~100)
#: the apex solve may run per control tick. The solve (neutral angle, observer prediction:
#: several return-map evaluations, 1-5 ms in one go) starts at the apex tick and is spread over
#: the following ticks, so no tick carries it (a 1 kHz deadline); it is scheduled in ticks, not
#: wall time, so a run and its replay through the controller compute the same torques.
APEX_SOLVE_RK4_STEPS_PER_TICK = 20
_NAN_XZ = (math.nan, math.nan)
_ZERO_XZ = (0.0, 0.0)


class Controller:
    """Hybrid SLIP hopping controller (Hutter et al. 2010), docs/control.md."""

    # how the controller node hosts it (dodo_control.registry, entry point slip_hopper)
    config_class = ControllerConfig
    startup_only = ('control_period',)
    default_model = 'package://dodo_sim/urdf/hopper.urdf.xacro'

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

        Hopper: ``base_x, base_z, hip, knee``; boom leg: ``boom_yaw, boom_pitch, hip, knee``.
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
        rest_length, max_rest_length = cfg.rest_lengths(self.stretched_length)
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
        if old is None or any(not same_value(getattr(old, n), getattr(cfg, n))
                              for n in ('apex_height', 'joint_armature_kgm2')
                              + APEX_RANGE_FIELDS):
            check_apex_height(self.dyn, cfg, rest_length, max_rest_length)
        self._config = cfg
        self.rest_length, self.max_rest_length = rest_length, max_rest_length
        new_gains = old is None or gains_changed(old, cfg)
        if new_gains or old.apex_height != cfg.apex_height:
            try:
                self.velocity_kc, self.slip_sensitivity = self._neutral_gain()
            except ValueError:
                if old is not None:
                    self.reconfigure(old)
                raise
            if math.isfinite(cfg.velocity_kc):
                self.velocity_kc = cfg.velocity_kc
        kp = self._velocity_kp()
        if new_gains:
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
                or not same_value(old.leg_rest_length_m, cfg.leg_rest_length_m)
                or old.leg_rest_length_fraction != cfg.leg_rest_length_fraction):
            self._table = None        # rebuilt from the measured knee branch at the next update
            self.map_sensitivity = None
        elif (new_gains or old.apex_height != cfg.apex_height) and self._table is not None:
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
        return map of this leg still returns to within
        :data:`.slip.apex_range.APEX_REACH_TOLERANCE_M` — vertical
        hop, the leg's touchdown impact (from N_s at the touchdown posture), SLIPic
        pre-compression and apex regulation with the spring no longer than its longest rest
        length (``max_leg_length_fraction``): above it the impact takes more energy than the
        stance can give back. Necessary, not sufficient (the return map ignores torque limits).
        """
        cfg = config if config is not None else self._config
        return apex_range(self.dyn, cfg, *cfg.rest_lengths(self.stretched_length))

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

        It is taken around the in-place neutral angle (needs the posture table).
        """
        run_steps(self._calibration_steps(None))

    def _calibration_steps(self, chunk_steps: int | None):
        """:meth:`_calibrate_map_sensitivity` as a step generator (chunks of RK4 steps)."""
        cfg = self._config
        offset = self._hop_memory.apex_offset
        apex_rel = cfg.apex_height + (offset if offset is not None else 0.0)
        spec = self._stance_spec(apex_rel)
        impact = self._table.impact_matrix
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

        The gain is α/v (rad/(m/s), at 1 m/s), the sensitivity −d v_liftoff / d α at rest
        ((m/s)/rad); both come from the apex return map.
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
        self._alpha = 0.0
        self._v_set = 0.0
        self._hop_memory = HopMemory(
            ground=self._config.ground_height_guess_m,
            stance_time=math.pi * math.sqrt(self.mass / self._config.leg_stiffness))
        self._telemetry = None
        self._telemetry_args = None
        self._apex_job = None           # the apex solve under way (a step generator)
        self.apex_solve_ticks = 0       # ticks the last apex solve was spread over
        self.apex_solves_forced = 0     # solves finished in one go (a touchdown came first)

    @property
    def telemetry(self) -> ControllerTelemetry | None:
        """Snapshot of the last update (None before the first one)."""
        if self._telemetry is None and self._telemetry_args is not None:
            self._telemetry = ControllerTelemetry.from_tick(self._telemetry_args)
        return self._telemetry

    @property
    def busy(self) -> bool:
        """
        Work spread over the coming ticks is under way.

        That work is the start-up posture table and calibration, or an apex solve.
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
        memory = self._hop_memory
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
            released = in_stance and t - memory.touchdown_t >= cfg.bezier_stance_time_s - 1e-9
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
                memory.stance_time = max(t - memory.touchdown_t, cfg.min_stance_time_s)
            elif event == 'apex':
                com, vcom = tuple(tt.com), tuple(tt.com_vel)
                if self._apex_job is None:
                    self._start_apex_job(self._on_apex(t, q, com, vcom))
                else:   # the start-up work (the first tick of a drop is an apex): after it
                    self._apex_job = self._after(self._apex_job, t, q.copy(), com, vcom)

        mass = self.mass
        if phase.phase == STANCE and cfg.stance_policy == 'bezier':
            scale = memory.bezier_scale
            sp = stance_phase(t, memory.touchdown_t, cfg.bezier_stance_time_s)
            fx = scale * bezier_value(cfg.bezier_force_x_n, sp)
            fz = scale * bezier_value(cfg.bezier_force_z_n, sp)
            if cfg.bezier_force_frame == 'leg':      # axial along foot -> SLIP point, x normal
                ux, uz = dx / length, dz / length
                fx, fz = fz * ux + fx * uz, fz * uz - fx * ux
            qa, va = q.tolist(), v.tolist()
            tau0, tau1 = bezier_torque(tt.Jf, fx, fz, qa[2:], va[2:], memory.bezier_target,
                                       cfg.bezier_joint_kp, cfg.bezier_joint_kd)
            accel = _NAN_XZ
            leg_force = (fx, fz)
            target = memory.foothold
            memory.energy_injected = self._cog_energy(cz, vx, vz) - memory.energy_td
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
            target = memory.foothold
            memory.energy_injected = self._cog_energy(cz, vx, vz) - memory.energy_td
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
            float(t), phase.phase, memory.hops, events, length, float(self._rest),
            float(self._alpha if phase.phase == FLIGHT else memory.td_alpha),
            cfg.target_x, cfg.target_velocity, cfg.apex_height, float(self._v_set),
            float(memory.last_apex_h), float(memory.last_apex_vx), float(memory.energy_injected),
            float(memory.impact_loss), tt.com, tt.com_vel, tt.foot, target, accel, leg_force,
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
        memory = self._hop_memory
        memory.hops += 1
        memory.touchdown_t = t
        foot, com = tt.foot, tt.com
        memory.foothold = foot
        memory.ground = foot[1]
        self._decompressing = False
        memory.td_alpha = math.atan2(foot[0] - com[0], com[1] - foot[1])
        v_minus = self._prev_v if (self._prev_v is not None and self._prev_phase == FLIGHT) else v
        loss = 0.0
        if cfg.impact_compensation:
            terms = self.dyn.terms(q, v)            # once per hop: the full terms
            loss = impact_energy_loss(terms, v_minus, self.mass, support_projection(terms))
        memory.impact_loss = loss
        dl = precompression(loss, cfg.leg_stiffness)
        self._rest = min(length + dl, self.max_rest_length)
        memory.energy_td = self._cog_energy(com[1], tt.com_vel[0], tt.com_vel[1])
        memory.energy_injected = 0.0
        memory.apex_offset_pred = self._table.posture_offset(self._alpha)
        if cfg.stance_policy == 'bezier':
            memory.bezier_target = (cfg.bezier_joint_target_rad
                                    or (float(q[2]), float(q[3])))

    def _apex_target_rel(self) -> float:
        """Return the CoG apex height (m) over the foothold putting the base at ``apex_height``."""
        memory = self._hop_memory
        offset = memory.apex_offset_pred
        if offset is None:
            offset = memory.apex_offset if memory.apex_offset is not None else 0.0
        return self._config.apex_height + offset + memory.apex_correction

    def _cog_energy(self, com_z, com_vx, com_vz) -> float:
        """Return the CoG energy ½ m |ṙ|² + m |g| (z − z_foothold), J."""
        memory = self._hop_memory
        height = com_z - (memory.foothold[1] if memory.foothold is not None else 0.0)
        return 0.5 * self.mass * (com_vx * com_vx + com_vz * com_vz) + self.dyn.weight * height

    def _decompression_rest(self, length, com_z, com_vz) -> float:
        """
        Rest length after maximum compression: constant, or apex-regulated.

        The regulated one is :func:`.slip.regulated_force`, here in scalar form.
        """
        cfg = self._config
        if not cfg.apex_regulation:
            return self._rest
        # ½ k (l0' − l)² = m |g| (z_apex − z) − ½ m ż², l0' <= max rest length
        foothold_z = self._hop_memory.foothold[1]
        e_v = self.dyn.weight * (self._apex_target_rel() - (com_z - foothold_z)) \
            - 0.5 * self.mass * com_vz * com_vz
        stretch = math.sqrt(2.0 * e_v / cfg.leg_stiffness) if e_v > 0.0 else 0.0
        return min(length + stretch, self.max_rest_length)

    def _on_apex(self, t, q, com, vcom):
        """
        Return the apex's set-points and loops.

        Returns the return-map solve still to run (a step generator) or None.
        """
        cfg = self._config
        memory = self._hop_memory
        g = abs(float(self.gravity[1]))
        base_h = self.dyn.base_height(q)
        apex_h = float(base_h - memory.ground)
        memory.apex_offset = float(com[1] - base_h)
        if memory.foothold is not None and cfg.stance_policy == 'bezier':
            memory.bezier_scale = adapt_scale(memory.bezier_scale, cfg.apex_height - apex_h,
                                              cfg.bezier_apex_gain, cfg.max_bezier_scale)
        elif memory.foothold is not None and cfg.apex_regulation:
            err = cfg.apex_height - apex_h
            memory.apex_correction = float(np.clip(
                memory.apex_correction + cfg.apex_integral_gain * err,
                -cfg.max_apex_correction_m, cfg.max_apex_correction_m))
        dt_hop = 0.0 if memory.last_apex_t is None else t - memory.last_apex_t
        memory.last_apex_t = t
        memory.last_apex_h = apex_h
        vx = float(vcom[0])
        memory.last_apex_vx = vx
        memory.update_velocity_bias(cfg, vx)
        # velocity set-point: position PI plus the in-place speed v_ff, the apex speed whose hop
        # has zero net displacement despite the touchdown impact's speed change (the stance
        # starts at v + kick: v_ff (2 t_fall + T_s) + kick T_s / 2 = 0). The error is that of
        # the CoG x predicted ``lead`` ahead relative to an in-place hop, x + (v − v_ff) lead:
        # zero in steady state means the apex CoG x is on the target.
        if math.isfinite(cfg.target_x):
            z_td = memory.ground + self.rest_length * math.cos(self._alpha)
            fall = math.sqrt(2.0 * max(com[1] - z_td, 0.0) / g)
            kick = self._predicted_impact_kick(self._alpha, com, vx)
            if cfg.displacement_bias_gain > 0.0:
                memory.update_displacement_bias(cfg, float(com[0]), vx, fall, kick)
                v_ff = -(0.5 * kick * memory.stance_time + memory.x_bias) / (
                    2.0 * fall + memory.stance_time)
            else:
                v_ff = -0.5 * kick * memory.stance_time / (2.0 * fall + memory.stance_time)
            lead = self._position_lead(fall, memory.stance_time)
            self._v_set = self._position.update(cfg.target_x - (com[0] + (vx - v_ff) * lead),
                                                dt_hop, feedforward=v_ff)
        else:
            self._v_set = cfg.target_velocity
        # the model-based policies aim the SLIP return map at v_set minus its learned bias
        v_model = self._v_set - memory.v_bias
        memory.v_pred = None
        if cfg.flight_policy == 'deadbeat' or (cfg.flight_policy == 'cascade'
                                               and not math.isfinite(cfg.velocity_kc)):
            # the return-map solve runs over the next ticks (APEX_SOLVE_RK4_STEPS_PER_TICK), on
            # the inputs of this apex; the flight posture keeps the last angle until it ends
            return self._apex_solve(com, vx, v_model)
        if cfg.flight_policy == 'cascade':
            alpha = self._velocity.update(vx, self._v_set)
        else:
            alpha = raibert_angle(vx, self._v_set, memory.stance_time, self.rest_length,
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

        It is :func:`.flight.critically_damped_lead` with a = t_fall + T_s/2 (apex to mid-stance)
        and T = 2 t_fall + T_s.
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

        It comes from the linearised SLIP return map, sensitivity S = −d v_next / d α.
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

    def _apex_solve(self, com, vx: float, v_model: float):
        """
        Yield the apex's return-map work as a step generator (one chunk per ``next``).

        On the inputs of the apex tick (all bound here): 'deadbeat' the angle for ``v_model``;
        'cascade' the neutral angle (keeps the current speed through the coming touchdown and
        stance, from the SLIP apex return map with the leg's impact: no separate impact term) and
        the velocity loop around it; then the observer's prediction of the next apex speed. Sets
        ``_alpha`` and the hop memory's ``v_pred`` as it gets them.
        """
        cfg = self._config
        memory = self._hop_memory
        height = float(com[1] - memory.ground)
        spec = self._stance_spec(self._apex_target_rel())
        impact = self._table.impact_matrix
        rest, precompress, max_angle = (self.rest_length, cfg.impact_compensation,
                                        cfg.max_angle_of_attack)
        hops = memory.hops
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
        memory.hops_at_pred = hops
        memory.v_pred = speed

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
        z_td = self._hop_memory.ground + self.rest_length * math.cos(alpha)
        v_minus = np.array([vx, -math.sqrt(2.0 * g * max(com[1] - z_td, 0.0))])
        return float((self._table.impact_matrix(alpha) @ v_minus)[0] - vx)

    # -- start-up work: the posture table and the return map's calibration ------------------

    def _startup_steps(self, q):
        """
        Posture table, then the return-map calibration, as a step generator.

        One grid point of the table or one chunk of RK4 steps per ``next``.
        """
        cfg = self._config
        self._table = yield from posture_table_steps(
            self.dyn, np.array(q, dtype=float), cfg.max_angle_of_attack, self.rest_length,
            cfg.ground_height_guess_m)
        yield from self._calibration_steps(APEX_SOLVE_RK4_STEPS_PER_TICK)
