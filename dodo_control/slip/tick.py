# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
The SLIP controller's per-tick work, compiled (docs/control.md, "Per-tick cost").

A tick of :class:`dodo_control.controller.Controller` reads the task-frame terms
(:mod:`.dynamics`), the leg length and its rate, decides contact and spring release, advances
the phase machine (:func:`.phase.advance_phase`) and, in a tick without a hop event, applies the
stance or flight law (:func:`.template.slip_acceleration`,
:func:`.template.regulated_rest_length`, :func:`.flight.foot_target`,
:func:`.flight.posture_acceleration`, :func:`.stance.slip_torque_tick`,
:func:`.stance.flight_foot_torque_tick`) and the torque limits. These functions run compiled
(numba, :mod:`.compiled`); on the hopper :func:`hopper_tick` does all of it, the compiled point
terms included, in one call. Touchdown, liftoff and apex ticks (a few per hop) leave the law to
the controller's Python event code, which then calls :func:`tick_law` / :func:`tick_end`, the same
compiled functions; so does the boom leg, whose terms pinocchio evaluates. Compiled and Python
arithmetic are the same IEEE operations in the same order (numba without fastmath contracts no
multiply-add), so the torques are those of the former Python tick bit for bit; :func:`leg_length`
is CPython's ``math.hypot`` (which libm's ``hypot`` is not, in the last bit).

The controller's state between ticks lives in float64 arrays the compiled code reads and writes:
the phase machine's (:data:`.phase.PHASE_STATE_SIZE`), the tick state (``S_*``), the parameters
written at ``reconfigure`` (``P_*``) and the tick's outputs (``O_*``, read by the telemetry).
"""
from __future__ import annotations

import math

import numpy as np

from .compiled import compiled, compiled_inline
from .dynamics import COM, COM_VEL, FOOT, FOOT_VEL, planar_terms, TERMS_SIZE
from .flight import foot_target, posture_acceleration
from .phase import (advance_phase, IN_FLIGHT, IN_STANCE, PHASE, PHASE_STATE_SIZE, reset_phase,
                    STANCE)
from .stance import flight_foot_torque_tick, slip_torque_tick
from .template import regulated_rest_length, slip_acceleration

# -- the tick state (written by the tick and by the hop events) --------------------------------
S_REST = 0              # spring rest length now, m
S_DECOMPRESSING = 1     # 1 after the stance's maximum compression
S_ALPHA = 2             # commanded angle of attack, rad
S_PREV_REL_VZ = 3       # foot-minus-SLIP-point vertical speed at the last tick, m/s (NaN: none)
S_PREV_PHASE = 4        # the phase after the last tick (0 before the first; .phase codes)
S_APEX_TARGET = 5       # SLIP point apex height over the foothold the regulation aims at, m
S_FOOTHOLD_X = 6        # the last foothold, m (0 before the first)
S_FOOTHOLD_Z = 7
S_ENERGY_TD = 8         # SLIP point energy at the last touchdown, J
S_ENERGY_INJECTED = 9   # energy put into the spring in this / the last stance, J
S_TOUCHDOWN_T = 10      # time of the last touchdown, s
S_PREV_V = 11           # v of the last tick (4; the touchdown's pre-impact velocity)
STATE_SIZE = 15

# -- the parameters (from the config and the model, written at reconfigure) ------------------
P_USE_SENSOR = 0        # 1: contact from the foot force sensor; 0: kinematic fallback
P_CONTACT_N = 1         # force threshold of the sensor, N
P_KINEMATIC_RATIO = 2   # kinematic touchdown ratio
P_MIN_FLIGHT = 3        # phase machine thresholds: s, s, ticks
P_MIN_STANCE = 4
P_LIFTOFF_SAMPLES = 5
P_BEZIER = 6            # 1: stance_policy 'bezier' (its law is Python)
P_BEZIER_TIME = 7       # its nominal stance time, s
P_STIFFNESS = 8         # k, N/m
P_MASS = 9              # the SLIP template's m (kg), m |g| (N), g⃗ (m/s^2)
P_WEIGHT = 10
P_GX = 11
P_GZ = 12
P_REST_LENGTH = 13      # leg rest length (touchdown length of the flight posture), m
P_MAX_REST = 14         # longest rest length, m
P_APEX_REGULATION = 15  # 1: apex-regulated decompression
P_POSTURE_KP = 16       # flight posture PD, 1/s^2 and 1/s
P_POSTURE_KD = 17
P_SATURATE = 18         # 1: clip the torques at the effort limits (N*m)
P_LIMIT0 = 19
P_LIMIT1 = 20
PARAMS_SIZE = 21

# -- the tick's outputs ------------------------------------------------------------------------
O_TAU = 0               # the torques (2), N*m
O_LENGTH = 2            # leg length l, m, and its rate, m/s
O_LENGTH_RATE = 3
O_REL_VZ = 4            # foot-minus-SLIP-point vertical speed, m/s
O_SATURATED = 5         # 1: the torques were clipped
O_ACCEL = 6             # stance: commanded SLIP point acceleration (2), m/s^2; flight: NaN
O_LEG_FORCE = 8         # stance: SLIP leg force (2), N; flight: 0
O_TARGET = 10           # flight: desired foot point (2), m; stance: the foothold
O_REST = 12             # the rest length, angle of attack and injected energy after the tick
O_ALPHA = 13
O_ENERGY_INJECTED = 14
OUT_SIZE = 15

#: return bits of :func:`hopper_tick` besides the events (.phase.TOUCHDOWN ...)
LAW_DONE = 8            # the law ran: the tick is complete
BAD_INPUT = 16          # a non-finite input: nothing was changed
NO_TERMS = 32           # M was not positive definite: nothing was changed

_slip_acceleration = compiled_inline(slip_acceleration)
_regulated_rest_length = compiled_inline(regulated_rest_length)
_foot_target = compiled_inline(foot_target)
_posture_acceleration = compiled_inline(posture_acceleration)
_advance_phase = compiled_inline(advance_phase)

_DBL_MIN = 2.2250738585072014e-308


def _two_product(a, b):
    """Return a b and its rounding error, exactly (Dekker's product, Veltkamp's split; no FMA)."""
    p = a * b
    t = 134217729.0 * a
    a_hi = t - (t - a)
    a_lo = a - a_hi
    t = 134217729.0 * b
    b_hi = t - (t - b)
    b_lo = b - b_hi
    return p, (((a_hi * b_hi - p) + a_hi * b_lo) + a_lo * b_hi) + a_lo * b_lo


_two_product = compiled_inline(_two_product)


def leg_length(dx: float, dz: float) -> float:
    """
    √(dx² + dz²) as CPython 3.11's ``math.hypot`` computes it, bit for bit.

    The controller's leg length was ``math.hypot``; compiled code would call libm's ``hypot``,
    which differs from CPython's in the last bit of ~0.5 % of the results. CPython's algorithm
    (Modules/mathmodule.c ``vector_norm``, after C. F. Borges, "An improved algorithm for
    hypot(a, b)", 2019): scale by a power of two, square and sum without loss, correct the
    square root once; below the normal range it divides by the larger magnitude instead.
    Unit-tested against ``math.hypot``.
    """
    ax, az = abs(dx), abs(dz)
    big = 0.0
    if ax > big:
        big = ax
    if az > big:
        big = az
    if math.isinf(big):
        return big
    if math.isnan(ax) or math.isnan(az):
        return math.nan
    if big == 0.0:
        return big
    _, exponent = math.frexp(big)
    if exponent < -1023:            # subnormal: 2^-exponent would overflow
        csum, frac = 1.0, 0.0
        for x in (ax / big, az / big):
            x = x * x
            old = csum
            csum += x
            frac += (old - csum) + x
        return big * math.sqrt(csum - 1.0 + frac)
    scale = math.ldexp(1.0, -exponent)
    csum, frac1, frac2 = 1.0, 0.0, 0.0
    for x in (ax * scale, az * scale):
        square, low = _two_product(x, x)
        total = csum + square
        frac2 += (csum - total) + square
        csum = total
        frac1 += low
    h = math.sqrt(csum - 1.0 + (frac1 + frac2))
    square, low = _two_product(-h, h)
    total = csum + square
    frac2 += (csum - total) + square
    csum = total
    frac1 += low
    h += (csum - 1.0 + (frac1 + frac2)) / (2.0 * h)
    return h / scale


leg_length = compiled_inline(leg_length)


def cog_energy(com_z: float, com_vx: float, com_vz: float, state, params) -> float:
    """SLIP point energy ½ m |ṙ|² + m |g| (z − z_foothold), J."""
    return (0.5 * params[P_MASS] * (com_vx * com_vx + com_vz * com_vz)
            + params[P_WEIGHT] * (com_z - state[S_FOOTHOLD_Z]))


cog_energy = compiled_inline(cog_energy)


def _decompression_rest(length: float, com_z: float, com_vz: float, state, params) -> float:
    """Rest length after maximum compression: constant, or apex-regulated."""
    if params[P_APEX_REGULATION] == 0.0:
        return state[S_REST]
    return _regulated_rest_length(length, com_z - state[S_FOOTHOLD_Z], com_vz,
                                  state[S_APEX_TARGET], params[P_STIFFNESS], params[P_MASS],
                                  params[P_WEIGHT], params[P_MAX_REST])


_decompression_rest = compiled_inline(_decompression_rest)


def _contact(fz, foot_vx, foot_vz, com_vz, rel_vz, phase, state, params) -> bool:
    """Tell whether the foot touches the ground: the force sensor, or the kinematic fallback."""
    if params[P_USE_SENSOR] != 0.0:
        return fz > params[P_CONTACT_N]
    # kinematic fallback (no sensor): the foot stops dead at a plastic impact
    if phase == IN_STANCE:
        return foot_vz < 0.05 and abs(foot_vx) < 0.05
    prev_rel_vz = state[S_PREV_REL_VZ]
    if phase == 0.0 or math.isnan(prev_rel_vz):
        return False  # no history yet: start in flight
    sink = -com_vz
    return sink > 0.1 and rel_vz - prev_rel_vz > params[P_KINEMATIC_RATIO] * sink


_contact = compiled_inline(_contact)


def tick_begin(t: float, fz: float, terms, phase, state, params, out) -> int:
    """
    Leg length and rate, contact, spring release and the phase machine for one tick.

    ``t`` s, ``fz`` the foot sensor's vertical force, N; ``terms`` the tick terms; ``phase`` the
    phase state. Writes ``O_LENGTH``, ``O_LENGTH_RATE``, ``O_REL_VZ`` and, in a decompressing
    stance, the regulated rest length. Returns the tick's event bits.
    """
    cx, cz = terms[COM], terms[COM + 1]
    vx, vz = terms[COM_VEL], terms[COM_VEL + 1]
    px, pz = terms[FOOT], terms[FOOT + 1]
    pvx, pvz = terms[FOOT_VEL], terms[FOOT_VEL + 1]
    dx, dz = cx - px, cz - pz
    length = leg_length(dx, dz)
    length_rate = (dx * (vx - pvx) + dz * (vz - pvz)) / length
    rel_vz = pvz - vz
    code = phase[PHASE]
    contact = _contact(fz, pvx, pvz, vz, rel_vz, code, state, params)
    in_stance = code == IN_STANCE
    if params[P_BEZIER] != 0.0:      # the profile's nominal stance time is over
        released = in_stance and t - state[S_TOUCHDOWN_T] >= params[P_BEZIER_TIME] - 1e-9
    else:
        decompressing = state[S_DECOMPRESSING] != 0.0
        if in_stance and decompressing:
            state[S_REST] = _decompression_rest(length, cz, vz, state, params)
        released = (in_stance and decompressing and length >= state[S_REST] - 1e-12
                    and length_rate > 0.0)
    out[O_LENGTH] = length
    out[O_LENGTH_RATE] = length_rate
    out[O_REL_VZ] = rel_vz
    return _advance_phase(phase, t, contact, released, vz, params[P_MIN_FLIGHT],
                          params[P_MIN_STANCE], params[P_LIFTOFF_SAMPLES])


tick_begin = compiled(tick_begin)


def tick_law(terms, phase, state, params, out) -> tuple:
    """
    Apply the SLIP stance law or the flight posture law of this tick: (hip, knee) torques, N*m.

    After :func:`tick_begin` and the tick's events (not for the Bézier stance, whose law is the
    controller's). Stance: the rest length turns apex-regulated at maximum compression; the
    torques give the SLIP acceleration; the energy injected into the spring is updated. Flight:
    the posture PD towards the touchdown point. Writes ``O_ACCEL``, ``O_LEG_FORCE``,
    ``O_TARGET``.
    """
    cx, cz = terms[COM], terms[COM + 1]
    vx, vz = terms[COM_VEL], terms[COM_VEL + 1]
    px, pz = terms[FOOT], terms[FOOT + 1]
    length = out[O_LENGTH]
    if phase[PHASE] == IN_STANCE:
        if state[S_DECOMPRESSING] == 0.0 and out[O_LENGTH_RATE] > 0.0:
            state[S_DECOMPRESSING] = 1.0     # maximum compression passed
            state[S_REST] = _decompression_rest(length, cz, vz, state, params)
        mass, gx, gz = params[P_MASS], params[P_GX], params[P_GZ]
        ax, az = _slip_acceleration(cx - px, cz - pz, length, state[S_REST],
                                    params[P_STIFFNESS], mass, gx, gz)
        tau0, tau1 = slip_torque_tick(terms, ax, az)
        out[O_ACCEL], out[O_ACCEL + 1] = ax, az
        out[O_LEG_FORCE], out[O_LEG_FORCE + 1] = mass * (ax - gx), mass * (az - gz)
        out[O_TARGET], out[O_TARGET + 1] = state[S_FOOTHOLD_X], state[S_FOOTHOLD_Z]
        state[S_ENERGY_INJECTED] = cog_energy(cz, vx, vz, state, params) - state[S_ENERGY_TD]
        return tau0, tau1
    # posture: PD on the foot relative to the SLIP point towards the touchdown point
    tx, tz = _foot_target(state[S_ALPHA], params[P_REST_LENGTH])
    pvx, pvz = terms[FOOT_VEL], terms[FOOT_VEL + 1]
    ax, az = _posture_acceleration(px - cx, pz - cz, pvx - vx, pvz - vz, tx, tz,
                                   params[P_POSTURE_KP], params[P_POSTURE_KD])
    out[O_ACCEL], out[O_ACCEL + 1] = math.nan, math.nan
    out[O_LEG_FORCE], out[O_LEG_FORCE + 1] = 0.0, 0.0
    out[O_TARGET], out[O_TARGET + 1] = cx + tx, cz + tz
    return flight_foot_torque_tick(terms, ax, az)


tick_law = compiled(tick_law)


def tick_end(v, tau0: float, tau1: float, phase, state, params, out) -> None:
    """Clip the torques at the effort limits, write them and what the next tick remembers."""
    saturated = False
    if params[P_SATURATE] != 0.0:
        lim0, lim1 = params[P_LIMIT0], params[P_LIMIT1]
        if abs(tau0) > lim0:
            tau0, saturated = math.copysign(lim0, tau0), True
        if abs(tau1) > lim1:
            tau1, saturated = math.copysign(lim1, tau1), True
    out[O_TAU], out[O_TAU + 1] = tau0, tau1
    out[O_SATURATED] = 1.0 if saturated else 0.0
    for i in range(4):
        state[S_PREV_V + i] = v[i]
    state[S_PREV_REL_VZ] = out[O_REL_VZ]
    state[S_PREV_PHASE] = phase[PHASE]
    out[O_REST] = state[S_REST]
    out[O_ALPHA] = state[S_ALPHA]
    out[O_ENERGY_INJECTED] = state[S_ENERGY_INJECTED]


tick_end = compiled(tick_end)


def finite_inputs(t: float, q, v, fx: float, fz: float) -> bool:
    """Tell whether the inputs are finite: their sum is (a NaN or an inf makes it not)."""
    sum_q = 0.0
    for x in q:
        sum_q += x
    sum_v = 0.0
    for x in v:
        sum_v += x
    return math.isfinite(sum_q + sum_v + fx + fz + t)


finite_inputs = compiled_inline(finite_inputs)


def hopper_tick(q, v, t: float, fx: float, fz: float, floats, ints, armature, raw, terms, phase,
                state, params, out) -> int:
    """
    Run a whole tick of the hopper's SLIP controller in one compiled call.

    The compiled point terms (:func:`.dynamics.planar_terms`), :func:`tick_begin` and, without a
    hop event and for the SLIP stance policy, :func:`tick_law` and :func:`tick_end`. Returns the
    event bits, with :data:`LAW_DONE` when the tick is complete; :data:`BAD_INPUT` (non-finite
    input) and :data:`NO_TERMS` (M not positive definite) change nothing.
    """
    if not finite_inputs(t, q, v, fx, fz):
        return BAD_INPUT
    if not planar_terms(q, v, floats, ints, armature, raw, terms):
        return NO_TERMS
    events = tick_begin(t, fz, terms, phase, state, params, out)
    if events != 0 or (params[P_BEZIER] != 0.0 and phase[PHASE] == IN_STANCE):
        return events
    tau0, tau1 = tick_law(terms, phase, state, params, out)
    tick_end(v, tau0, tau1, phase, state, params, out)
    return LAW_DONE


hopper_tick = compiled(hopper_tick)


def new_arrays() -> tuple:
    """Fresh (terms, phase, state, params, out) arrays of a controller."""
    phase = np.empty(PHASE_STATE_SIZE)
    reset_phase(phase)
    state = np.zeros(STATE_SIZE)
    state[S_PREV_REL_VZ] = math.nan
    return (np.zeros(TERMS_SIZE), phase, state, np.zeros(PARAMS_SIZE), np.zeros(OUT_SIZE))


def write_params(params, config, dyn, rest_length: float, max_rest_length: float) -> None:
    """
    Write what the tick reads of a controller's config and model into ``params`` (``P_*``).

    ``config``: the :class:`.config.ControllerConfig`; ``dyn``: the task frame's dynamics (the
    SLIP template's mass, weight and gravity, the effort limits); the leg's rest length and the
    longest one, m.
    """
    cfg, p = config, params
    p[P_USE_SENSOR] = 1.0 if cfg.use_foot_sensor else 0.0
    p[P_CONTACT_N] = cfg.contact_force_threshold_n
    p[P_KINEMATIC_RATIO] = cfg.kinematic_touchdown_ratio
    p[P_MIN_FLIGHT] = cfg.min_flight_time_s
    p[P_MIN_STANCE] = cfg.min_stance_time_s
    p[P_LIFTOFF_SAMPLES] = int(cfg.liftoff_samples)
    p[P_BEZIER] = 1.0 if cfg.stance_policy == 'bezier' else 0.0
    p[P_BEZIER_TIME] = cfg.bezier_stance_time_s
    p[P_STIFFNESS] = cfg.leg_stiffness
    p[P_MASS] = dyn.mass
    p[P_WEIGHT] = dyn.weight
    p[P_GX], p[P_GZ] = dyn.gravity_xz
    p[P_REST_LENGTH] = rest_length
    p[P_MAX_REST] = max_rest_length
    p[P_APEX_REGULATION] = 1.0 if cfg.apex_regulation else 0.0
    p[P_POSTURE_KP] = cfg.posture_kp
    p[P_POSTURE_KD] = cfg.posture_kd
    p[P_SATURATE] = 1.0 if cfg.saturate_torque else 0.0
    p[P_LIMIT0], p[P_LIMIT1] = dyn.effort_limits


def warm_up() -> None:
    """
    Compile (or load from numba's cache) the tick's functions with the types a tick uses.

    ``python -m dodo_sim.tools.precompile`` runs it; :func:`.dynamics.planar_terms` is loaded
    by :meth:`.dynamics.RobotDynamics.use_compiled` on a real model.
    """
    terms, phase, state, params, out = new_arrays()
    q, v = np.array([0.0, 1.0, 0.3, -0.6]), np.zeros(4)
    terms[:] = 0.1
    terms[FOOT + 1] = -0.5
    tick_begin(0.0, 0.0, terms, phase, state, params, out)
    for code in (IN_FLIGHT, IN_STANCE):
        phase[PHASE] = code
        try:
            tau0, tau1 = tick_law(terms, phase, state, params, out)
        except (np.linalg.LinAlgError, ZeroDivisionError):   # the terms are not a robot's
            tau0, tau1 = 0.0, 0.0
        tick_end(v, tau0, tau1, phase, state, params, out)
    cog_energy(0.0, 0.0, 0.0, state, params)          # the touchdown and the Bezier stance's
    floats, ints = np.zeros(1), np.zeros(2, np.int64)
    finite_inputs(math.nan, q, v, 0.0, 0.0)           # the check before the spread work
    hopper_tick(q, v, math.nan, 0.0, 0.0, floats, ints, np.zeros(4), np.zeros(1), terms,
                phase, state, params, out)


__all__ = ['BAD_INPUT', 'LAW_DONE', 'NO_TERMS', 'OUT_SIZE', 'PARAMS_SIZE', 'STANCE',
           'STATE_SIZE', 'cog_energy', 'finite_inputs', 'hopper_tick', 'leg_length',
           'new_arrays', 'tick_begin', 'tick_end', 'tick_law', 'warm_up', 'write_params']
