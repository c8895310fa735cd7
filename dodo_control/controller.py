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
* :mod:`.tick` — the tick's per-tick work (terms, contact, phase, law, limits), compiled; on
  the hopper one call (docs/control.md, "Per-tick cost").
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

from .slip import tick
from .slip.apex_range import apex_range, check_apex_height
from .slip.bezier import adapt_scale, bezier_torque, bezier_value, stance_phase
from .slip.config import APEX_RANGE_FIELDS, ControllerConfig, gains_changed, same_value
from .slip.dynamics import COM, COM_VEL, FOOT, JF
from .slip.flight import critically_damped_lead, PositionLoop, raibert_angle, VelocityLoop
from .slip.hop_memory import HopMemory
from .slip.outcome import HopMonitor
from .slip.phase import (APEX, EVENT_NAMES, FLIGHT, IN_FLIGHT, IN_STANCE, LIFTOFF, PHASE,
                         PhaseMachine, PhaseParams, TOUCHDOWN)
from .slip.posture_table import posture_table_steps
from .slip.stance import impact_energy_loss, support_projection
from .slip.task_frame import load_dynamics
from .slip.telemetry import ControllerTelemetry
from .slip.template import (apex_return_map, apex_return_map_steps, deadbeat_angle,
                            deadbeat_angle_steps, run_steps, StanceSpec, touchdown_rest_length)
from .slip.tick import (BAD_INPUT, LAW_DONE, NO_TERMS, O_ACCEL, O_ALPHA, O_ENERGY_INJECTED,
                        O_LEG_FORCE, O_LENGTH, O_REST, O_SATURATED, O_TARGET, S_ALPHA,
                        S_DECOMPRESSING, S_PREV_PHASE, S_PREV_V, S_REST)

#: RK4 steps of the SLIP stance flow (compiled, ~0.1 us each; a return-map evaluation takes ~100)
#: the apex solve may run per control tick. The solve (neutral angle, observer prediction:
#: several return-map evaluations, 1-5 ms in Python) starts at the apex tick and is spread over
#: the following ticks, so no tick carries it (a 1 kHz deadline); it is scheduled in ticks, not
#: wall time, so a run and its replay through the controller compute the same torques.
APEX_SOLVE_RK4_STEPS_PER_TICK = 20
_Q_SHAPE = (4,)
#: foot force shapes ``update`` reads without reshaping: [fx, fz] or one [fx, fy, fz] row
_FORCE_SHAPES = ((2,), (1, 3), (3,))


def _parse_inputs(q, v, foot_force):
    """Parse ``update``'s inputs: q (4), v (4) float arrays and (fx, fz); ValueError on shapes."""
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
                         f'fz] row); got shapes {q.shape}, {v.shape}, {np.shape(foot_force)}')
    fx, fz = force.tolist()
    return q, v, (fx, fz)


class Controller:
    """Hybrid SLIP hopping controller (Hutter et al. 2010), docs/control.md."""

    # how the controller node hosts it (dodo_control.registry, entry point slip_hopper); the hop
    # monitor judges whether the leg hops
    config_class = ControllerConfig
    startup_only = ('control_period',)
    default_model = 'package://dodo_sim/urdf/hopper.urdf.xacro'
    monitor = HopMonitor

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
        self._telemetry = None
        self._tick = None               # (t, event bits, config) of the last tick, telemetry's
        # the tick's arrays (.slip.tick): terms, state, parameters, outputs; the inputs' copies
        self._terms, _, self._state, self._params, self._out = tick.new_arrays()
        self._q_in, self._v_in = np.empty(4), np.empty(4)
        self._fused = self._fused_args = None
        self._phase = PhaseMachine(PhaseParams())
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
        self.telemetry                  # the last tick's snapshot, before anything changes
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
        self._phase.params = PhaseParams(cfg.min_flight_time_s, cfg.min_stance_time_s,
                                         int(cfg.liftoff_samples))
        tick.write_params(self._params, cfg, self.dyn, self.rest_length, self.max_rest_length)
        if hasattr(self, '_hop_memory'):
            self._sync_apex_target()

    def _sync_apex_target(self) -> None:
        """Give the compiled tick the apex target of the regulation (after what changes it)."""
        self._state[tick.S_APEX_TARGET] = self._apex_target_rel()

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
        self._phase.reset()
        self._position.reset()
        self._velocity.reset()
        _, _, state, _, _ = tick.new_arrays()
        self._state[:] = state          # no previous tick, no foothold
        self._state[S_REST] = self.rest_length
        self._v_set = 0.0
        self._hop_memory = HopMemory(
            ground=self._config.ground_height_guess_m,
            stance_time=math.pi * math.sqrt(self.mass / self._config.leg_stiffness))
        self._sync_apex_target()
        self._telemetry = None
        self._tick = None
        self._apex_job = None           # the apex solve under way (a step generator)
        self.apex_solve_ticks = 0       # ticks the last apex solve was spread over
        self.apex_solves_forced = 0     # solves finished in one go (a touchdown came first)

    # the tick state the Python event code reads and writes (the compiled tick's array)
    @property
    def _rest(self) -> float:
        return float(self._state[S_REST])

    @_rest.setter
    def _rest(self, value: float) -> None:
        self._state[S_REST] = value

    @property
    def _alpha(self) -> float:
        return float(self._state[S_ALPHA])

    @_alpha.setter
    def _alpha(self, value: float) -> None:
        self._state[S_ALPHA] = value

    @property
    def telemetry(self) -> ControllerTelemetry | None:
        """Snapshot of the last update (None before the first one)."""
        if self._telemetry is None and self._tick is not None:
            self._telemetry = self._snapshot()
        return self._telemetry

    def _snapshot(self) -> ControllerTelemetry:
        """
        Build the telemetry of the last tick from the tick's arrays and the hop memory.

        Built when read; nothing it reads changes before the next update (``reconfigure`` takes
        the snapshot first).
        """
        t, bits, cfg = self._tick
        out, terms = self._out.tolist(), self._terms.tolist()
        memory = self._hop_memory
        phase = self._phase.phase
        return ControllerTelemetry.from_tick((
            float(t), phase, memory.hops, EVENT_NAMES[bits & 7], out[O_LENGTH], out[O_REST],
            out[O_ALPHA] if phase == FLIGHT else float(memory.td_alpha),
            cfg.target_x, cfg.target_velocity, cfg.apex_height, float(self._v_set),
            float(memory.last_apex_h), float(memory.last_apex_vx), out[O_ENERGY_INJECTED],
            float(memory.impact_loss), terms[COM:COM + 2], terms[COM_VEL:COM_VEL + 2],
            terms[FOOT:FOOT + 2], out[O_TARGET:O_TARGET + 2], out[O_ACCEL:O_ACCEL + 2],
            out[O_LEG_FORCE:O_LEG_FORCE + 2], out[O_SATURATED] != 0.0))

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

        On the hopper a tick without a hop event is one compiled call (:func:`.slip.tick.
        hopper_tick`); event ticks, the boom leg and the Bézier stance run the hop events and
        the terms in Python and the law compiled (docs/control.md, "Per-tick cost").
        """
        q_in, v_in = self._q_in, self._v_in
        if (type(q) is np.ndarray and type(v) is np.ndarray and type(foot_force) is np.ndarray
                and q.shape == _Q_SHAPE and v.shape == _Q_SHAPE
                and foot_force.shape in _FORCE_SHAPES):
            q_in[:] = q
            v_in[:] = v
            fx, fz = float(foot_force.item(0)), float(foot_force.item(-1))
        else:
            q_in[:], v_in[:], (fx, fz) = _parse_inputs(q, v, foot_force)
        t = float(t)
        if self._table is None and self._apex_job is None:
            # posture table and return-map calibration, spread over the first ticks (they are
            # needed at the first touchdown or apex, which finish them if they come sooner)
            self._check_finite(t, q_in, v_in, fx, fz)
            self._apex_job = self._startup_steps(q_in)
            self.apex_solve_ticks = 0
        if self._apex_job is not None:
            self._check_finite(t, q_in, v_in, fx, fz)
            self._step_apex_job()
        fused = self.dyn.compiled_buffers
        if fused is not None:
            if fused is not self._fused:         # its array arguments (use_compiled changes)
                self._fused = fused
                self._fused_args = fused + (self._terms, self._phase.state, self._state,
                                            self._params, self._out)
            bits = tick.hopper_tick(q_in, v_in, t, fx, fz, *self._fused_args)
            if bits & BAD_INPUT:
                self._check_finite(t, q_in, v_in, fx, fz)
        else:
            bits = NO_TERMS
        if not bits & LAW_DONE:
            self._telemetry, self._tick = None, None     # a failed tick leaves none
            bits = self._slow_tick(t, q_in, v_in, fx, fz, bits)
        self._telemetry = None
        self._tick = (t, bits, self._config)
        return self._out[0:2].copy()

    def _check_finite(self, t, q, v, fx, fz) -> None:
        if not tick.finite_inputs(t, q, v, fx, fz):
            raise ValueError(f'non-finite controller input at t={t}: q={q}, v={v}, '
                             f'f={np.array([fx, fz])}')

    def _slow_tick(self, t, q, v, fx, fz, bits) -> int:
        """
        Run the tick's Python part: hop events, the terms of a task frame, the Bézier law.

        ``bits`` from :func:`.slip.tick.hopper_tick` (the terms and events done) or
        :data:`.slip.tick.NO_TERMS` (nothing done). Returns the event bits.
        """
        cfg = self._config
        memory = self._hop_memory
        terms, phase, state, params, out = (self._terms, self._phase.state, self._state,
                                            self._params, self._out)
        if bits & NO_TERMS:
            self._check_finite(t, q, v, fx, fz)
            self.dyn.tick_terms_into(q, v, terms)
            bits = tick.tick_begin(t, fz, terms, phase, state, params, out)
        tt = self._terms.tolist()
        length = float(out[O_LENGTH])
        if bits & TOUCHDOWN:
            if self._apex_job is not None:  # needs the table and the angle: finish now
                self.apex_solves_forced += 1    # not expected: a fall lasts ~200 ticks
                self._finish_apex_job()
            self._on_touchdown(t, q, v, length, tt)
        if bits & LIFTOFF:
            memory.stance_time = max(t - memory.touchdown_t, cfg.min_stance_time_s)
        if bits & APEX:
            com, vcom = (tt[COM], tt[COM + 1]), (tt[COM_VEL], tt[COM_VEL + 1])
            if self._apex_job is None:
                self._start_apex_job(self._on_apex(t, q, com, vcom))
            else:   # the start-up work (the first tick of a drop is an apex): after it
                self._apex_job = self._after(self._apex_job, t, q.copy(), com, vcom)
        if phase[PHASE] == IN_STANCE and cfg.stance_policy == 'bezier':
            tau0, tau1 = self._bezier_law(t, q, v, length, tt)
        else:
            tau0, tau1 = tick.tick_law(terms, phase, state, params, out)
        tick.tick_end(v, tau0, tau1, phase, state, params, out)
        return bits

    def _bezier_law(self, t, q, v, length, tt) -> tuple[float, float]:
        """Ding & Ramos' Bézier stance: the force profile through the foot jacobian."""
        cfg = self._config
        memory = self._hop_memory
        scale = memory.bezier_scale
        sp = stance_phase(t, memory.touchdown_t, cfg.bezier_stance_time_s)
        fx = scale * bezier_value(cfg.bezier_force_x_n, sp)
        fz = scale * bezier_value(cfg.bezier_force_z_n, sp)
        if cfg.bezier_force_frame == 'leg':      # axial along foot -> SLIP point, x normal
            ux = (tt[COM] - tt[FOOT]) / length
            uz = (tt[COM + 1] - tt[FOOT + 1]) / length
            fx, fz = fz * ux + fx * uz, fz * uz - fx * ux
        qa, va = q.tolist(), v.tolist()
        tau0, tau1 = bezier_torque([tt[JF:JF + 4], tt[JF + 4:JF + 8]], fx, fz, qa[2:], va[2:],
                                   memory.bezier_target, cfg.bezier_joint_kp,
                                   cfg.bezier_joint_kd)
        out, state = self._out, self._state
        out[O_ACCEL:O_ACCEL + 2] = math.nan
        out[O_LEG_FORCE], out[O_LEG_FORCE + 1] = fx, fz
        out[O_TARGET], out[O_TARGET + 1] = memory.foothold
        state[tick.S_ENERGY_INJECTED] = tick.cog_energy(
            tt[COM + 1], tt[COM_VEL], tt[COM_VEL + 1], state, self._params) - memory.energy_td
        return tau0, tau1

    # -- pieces ----------------------------------------------------------------------------

    def _on_touchdown(self, t, q, v, length, tt) -> None:
        cfg = self._config
        memory, state = self._hop_memory, self._state
        memory.hops += 1
        memory.touchdown_t = state[tick.S_TOUCHDOWN_T] = t
        foot, com = (tt[FOOT], tt[FOOT + 1]), (tt[COM], tt[COM + 1])
        memory.foothold = foot
        state[tick.S_FOOTHOLD_X], state[tick.S_FOOTHOLD_Z] = foot
        memory.ground = foot[1]
        state[S_DECOMPRESSING] = 0.0
        memory.td_alpha = math.atan2(foot[0] - com[0], com[1] - foot[1])
        v_minus = state[S_PREV_V:S_PREV_V + 4].copy() if state[S_PREV_PHASE] == IN_FLIGHT else v
        loss = 0.0
        if cfg.impact_compensation:
            terms = self.dyn.terms(q, v)            # once per hop: the full terms
            loss = impact_energy_loss(terms, v_minus, self.mass, support_projection(terms))
        memory.impact_loss = loss
        self._rest = touchdown_rest_length(length, loss, cfg.leg_stiffness, self.max_rest_length)
        memory.energy_td = state[tick.S_ENERGY_TD] = tick.cog_energy(
            com[1], tt[COM_VEL], tt[COM_VEL + 1], state, self._params)
        state[tick.S_ENERGY_INJECTED] = 0.0
        memory.apex_offset_pred = self._table.posture_offset(self._alpha)
        self._sync_apex_target()
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
        self._sync_apex_target()
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
