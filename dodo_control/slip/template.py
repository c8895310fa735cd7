# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
The spring-loaded inverted pendulum (SLIP) template: leg force, stance flow, apex return map.

Conventions (used throughout dodo_control):

* Positions are world x-z (m). The SLIP leg runs from the foot point ``p_f`` to the CoG ``r``;
  its length is ``l = |r − p_f|``.
* The angle of attack ``α`` (rad) is the leg's angle from the vertical at touchdown, **positive
  when the foot is ahead (+x) of the CoG**: ``p_f − r = l_td (sin α, −cos α)``.
* Leg force ``F_leg = k (l₀ − l)(r − p_f)/l`` and the CoG acceleration ``a = F_leg/m + g⃗``
  (docs/control.md).

The stance flow here mirrors the controller's stance law exactly (same touchdown rest length with
the SLIPic pre-compression, same apex-regulated decompression: the same functions), so the apex
return map it produces is what the articulated leg does when its CoG follows the SLIP. The flow
is a scalar RK4, compiled (numba; the same arithmetic as Python's); the ``*_steps`` forms are
generators that pause every few RK4 steps, so a controller can spread a solve over its ticks.
"""
from __future__ import annotations

from dataclasses import dataclass
import math

import numpy as np

from .compiled import compiled, compiled_inline
from .flight import foot_target


def slip_acceleration(dx: float, dz: float, length: float, rest_length: float,
                      stiffness: float, mass: float, gravity_x: float,
                      gravity_z: float) -> tuple[float, float]:
    """
    SLIP point acceleration a = F_leg/m + g⃗, F_leg = k (l₀ − l)(r − p_f)/l (m/s^2).

    ``dx``, ``dz``: r − p_f, the foot-to-SLIP-point vector (m) of length ``length`` (m);
    ``rest_length`` l₀ (m), ``stiffness`` k (N/m), ``mass`` m (kg), gravity g⃗ (m/s^2).
    Returns (a_x, a_z). The one definition of the SLIP law: the stance flow of the return map
    (:func:`stance_flow_steps`) and the control tick (:mod:`.tick`, compiled) call it.
    """
    scale = stiffness * (rest_length - length) / (length * mass)
    return scale * dx + gravity_x, scale * dz + gravity_z


def precompression(energy_loss_j: float, stiffness: float) -> float:
    """SLIPic: spring pre-compression storing the impact loss, Δl = √(2ΔE/k) (m)."""
    return float(np.sqrt(2.0 * max(energy_loss_j, 0.0) / stiffness))


def touchdown_rest_length(length: float, energy_loss_j: float, stiffness: float,
                          max_rest_length: float) -> float:
    """
    Rest length at touchdown (m): the leg length plus the SLIPic pre-compression.

    It is never longer than ``max_rest_length``; ``energy_loss_j`` 0 leaves the leg length (no
    compensation). The return map and the controller's touchdown call it.
    """
    return min(length + precompression(energy_loss_j, stiffness), max_rest_length)


def regulated_rest_length(length: float, height: float, vz: float, apex_height_rel: float,
                          stiffness: float, mass: float, weight: float,
                          max_rest_length: float) -> float:
    """
    Rest length l₀' (m) of the apex-regulated decompression.

    After maximum compression the rest length is re-chosen every instant so that the spring
    holds exactly the vertical energy still missing for the apex:
    ½ k (l₀' − l)² = E_v = m |g| (z_apex − z) − ½ m ż²  (``height`` z and ``apex_height_rel``
    z_apex above the foothold, m; ``vz`` ż, m/s; ``weight`` m |g|, N; E_v < 0 counts as 0). Then
    at liftoff (l = l₀', E_v = 0) the SLIP point leaves with z + ż²/(2|g|) = z_apex exactly,
    whatever the horizontal speed. l₀' never exceeds ``max_rest_length``. The one definition:
    the return map's stance flow and the control tick (:mod:`.tick`) call it.
    """
    e_v = weight * (apex_height_rel - height) - 0.5 * mass * vz * vz
    stretch = math.sqrt(2.0 * e_v / stiffness) if e_v > 0.0 else 0.0
    return min(length + stretch, max_rest_length)


@dataclass(frozen=True)
class StanceSpec:
    """
    What the stance flow needs besides the touchdown state.

    Fields:
        stiffness: k, N/m.  mass: m, kg.  gravity_z: m/s^2 (negative).
        regulate: apex-regulated decompression (:func:`regulated_rest_length`) after max
            compression.
        apex_height_rel: CoG apex target above the foothold, m (used when ``regulate``).
        max_rest_length: longest rest length allowed, m.
        step_s: RK4 step of the flow, s.  max_time_s: give up after this stance time, s.
    """

    stiffness: float
    mass: float
    gravity_z: float
    regulate: bool
    apex_height_rel: float
    max_rest_length: float
    step_s: float = 0.002
    max_time_s: float = 1.0


def stance_flow(pos, vel, rest_length: float, spec: StanceSpec):
    """:func:`stance_flow_steps` in one call (no chunks)."""
    return run_steps(stance_flow_steps(pos, vel, rest_length, spec, None))


# the stance flow's parameters and state (float arrays, so the compiled flow can be resumed)
_K, _M, _GZ, _WEIGHT, _APEX, _LMAX, _REGULATE, _H, _MAX_TIME, _REST = range(10)
_X, _Z, _VX, _VZ, _T, _DECOMP, _F_PREV, _STEPS, _RESUMED = range(9)
_LO = 9                     # liftoff: x, z, vx, vz, stance time
_FLOW_SIZE = 14
_PAUSED, _LIFTOFF, _NO_LIFTOFF = 0, 1, 2


def _rest_now(length, z, vz, decomp, p):
    """Rest length (m); regulated, never below l: the spring only pushes (liftoff at 0)."""
    if decomp and p[_REGULATE] != 0.0:
        return max(_regulated_rest_length(length, z, vz, p[_APEX], p[_K], p[_M], p[_WEIGHT],
                                          p[_LMAX]), length)
    return p[_REST]


def _force(x, z, vz, decomp, p):
    """Leg force magnitude along the leg, N (liftoff when it reaches 0 extending)."""
    length = math.sqrt(x * x + z * z)
    return p[_K] * (_rest_now(length, z, vz, decomp, p) - length)


def _accel(x, z, vz, decomp, p):
    length = math.sqrt(x * x + z * z)
    return _slip_acceleration(x, z, length, _rest_now(length, z, vz, decomp, p), p[_K], p[_M],
                              0.0, p[_GZ])


def _rk4(x, z, vx, vz, h, decomp, p):
    ax1, az1 = _accel(x, z, vz, decomp, p)
    x2, z2 = x + 0.5 * h * vx, z + 0.5 * h * vz
    vx2, vz2 = vx + 0.5 * h * ax1, vz + 0.5 * h * az1
    ax2, az2 = _accel(x2, z2, vz2, decomp, p)
    x3, z3 = x + 0.5 * h * vx2, z + 0.5 * h * vz2
    vx3, vz3 = vx + 0.5 * h * ax2, vz + 0.5 * h * az2
    ax3, az3 = _accel(x3, z3, vz3, decomp, p)
    x4, z4 = x + h * vx3, z + h * vz3
    vx4, vz4 = vx + h * ax3, vz + h * az3
    ax4, az4 = _accel(x4, z4, vz4, decomp, p)
    return (x + h / 6.0 * (vx + 2.0 * vx2 + 2.0 * vx3 + vx4),
            z + h / 6.0 * (vz + 2.0 * vz2 + 2.0 * vz3 + vz4),
            vx + h / 6.0 * (ax1 + 2.0 * ax2 + 2.0 * ax3 + ax4),
            vz + h / 6.0 * (az1 + 2.0 * az2 + 2.0 * az3 + az4))


def _flow(s, p, chunk_steps):
    """
    Run the stance flow of state ``s`` on until a pause, the liftoff or the end; compiled.

    A pause comes before the first RK4 step and every ``chunk_steps``-th (0: never), and the
    next call resumes there. Returns _PAUSED, _LIFTOFF (``s[_LO:]``: x, z, vx, vz, time) or
    _NO_LIFTOFF (a collapse or the time limit); ``s[_STEPS]`` counts the RK4 steps taken.
    """
    x, z, vx, vz, t = s[_X], s[_Z], s[_VX], s[_VZ], s[_T]
    decomp = s[_DECOMP] != 0.0
    f_prev = s[_F_PREV]
    steps = int(s[_STEPS])
    resumed = s[_RESUMED] != 0.0
    h, k = p[_H], p[_K]
    while t < p[_MAX_TIME]:
        if chunk_steps > 0 and steps % chunk_steps == 0 and not resumed:
            s[_X], s[_Z], s[_VX], s[_VZ], s[_T] = x, z, vx, vz, t
            s[_DECOMP] = 1.0 if decomp else 0.0
            s[_F_PREV] = f_prev
            s[_STEPS] = steps
            s[_RESUMED] = 1.0
            return _PAUSED                        # before the first step and every chunk
        resumed = False
        steps += 1
        nx, nz, nvx, nvz = _rk4(x, z, vx, vz, h, decomp, p)
        if not decomp:
            rate0 = x * vx + z * vz
            rate1 = nx * nvx + nz * nvz
            if rate1 > 0.0:                       # maximum compression inside this step
                frac = rate0 / (rate0 - rate1) if rate0 < 0.0 else 0.0
                if frac > 1e-9:
                    x, z, vx, vz = _rk4(x, z, vx, vz, frac * h, False, p)
                    t += frac * h
                decomp = True
                f_prev = _force(x, z, vz, decomp, p)
                continue
        f_new = _force(nx, nz, nvz, decomp, p)
        if decomp and f_new <= 0.0:               # liftoff inside this step: secant on the
            lo, f_lo, hi, f_hi = 0.0, f_prev, h, f_new   # step length, re-integrating from
            ex, ez, evx, evz = x, z, vx, vz             # the step start each time
            for _ in range(4):
                if f_lo <= 0.0:
                    break
                mid = lo + (hi - lo) * f_lo / (f_lo - f_hi)
                ex, ez, evx, evz = _rk4(x, z, vx, vz, mid, True, p)
                f_mid = _force(ex, ez, evz, True, p)
                if abs(f_mid) < 1e-9 * k:
                    lo = mid
                    break
                if f_mid > 0.0:
                    lo, f_lo = mid, f_mid
                else:
                    hi, f_hi = mid, f_mid
            s[_LO], s[_LO + 1], s[_LO + 2], s[_LO + 3], s[_LO + 4] = ex, ez, evx, evz, t + lo
            s[_STEPS] = steps
            return _LIFTOFF
        if nz <= 0.0:
            break
        x, z, vx, vz, f_prev = nx, nz, nvx, nvz, f_new
        t += h
    s[_STEPS] = steps
    return _NO_LIFTOFF


_slip_acceleration = compiled_inline(slip_acceleration)
_regulated_rest_length = compiled_inline(regulated_rest_length)
_rest_now = compiled_inline(_rest_now)
_force = compiled_inline(_force)
_accel = compiled_inline(_accel)
_rk4 = compiled_inline(_rk4)
_flow = compiled(_flow)


def stance_flow_steps(pos, vel, rest_length: float, spec: StanceSpec, chunk_steps: int | None):
    """
    Integrate one SLIP stance from touchdown to liftoff (RK4, fixed step; compiled).

    Compression: spring of rest length ``rest_length``; after maximum compression (located inside
    the step by linear interpolation of l̇, the step is split there) either the same spring
    (``spec.regulate`` False) or the apex-regulated decompression. Liftoff when the leg force
    reaches zero while extending (interpolated inside the step). The integration is a compiled
    function (:mod:`.compiled`) run on between the generator's pauses.

    Inputs:
        pos: CoG relative to the foot at touchdown (x, z), m.
        vel: CoG velocity just after touchdown (post impact), m/s.
        rest_length: rest length at touchdown (incl. SLIPic pre-compression), m.
        chunk_steps: a generator: yield after every this many RK4 steps (None: never), so a
            caller can spread the integration over control ticks; same arithmetic either way.
    Return value:
        (pos_lo, vel_lo, duration) at liftoff as (2,), (2,), float; None if the leg collapses
        (CoG reaches the ground) or no liftoff happens within ``spec.max_time_s`` (as the
        generator's ``StopIteration.value``).
    """
    m, gz = float(spec.mass), float(spec.gravity_z)
    params = np.array([spec.stiffness, m, gz, m * abs(gz), spec.apex_height_rel,
                       spec.max_rest_length, 1.0 if spec.regulate else 0.0, spec.step_s,
                       spec.max_time_s, rest_length], dtype=float)
    state = np.zeros(_FLOW_SIZE)
    x, z, vz = float(pos[0]), float(pos[1]), float(vel[1])
    state[_X], state[_Z], state[_VX], state[_VZ] = x, z, float(vel[0]), vz
    state[_F_PREV] = _force(x, z, vz, False, params)
    chunk = 0 if chunk_steps is None else int(chunk_steps)
    while True:
        status = _flow(state, params, chunk)
        if status != _PAUSED:
            break
        yield
    if status == _NO_LIFTOFF:
        return None
    x, z, vx, vz, duration = state[_LO:_LO + 5].tolist()
    return np.array([x, z]), np.array([vx, vz]), duration


def touchdown_state(alpha: float, apex_height_rel: float, apex_vx: float,
                    touchdown_length: float, gravity_z: float):
    """
    Return the CoG position relative to the foot and CoG velocity just before touchdown.

    The CoG falls ballistically from its apex (``apex_height_rel`` above the foothold level) until
    the foot, held at ``touchdown_length`` and angle α, reaches the ground.
    """
    foot_x, foot_z = foot_target(alpha, touchdown_length)
    z_td = -foot_z
    pos = np.array([-foot_x, z_td])
    drop = max(apex_height_rel - z_td, 0.0)
    vel = np.array([apex_vx, -math.sqrt(2.0 * abs(gravity_z) * drop)])
    return pos, vel


def _impact_at(impact, alpha: float) -> np.ndarray:
    if impact is None:
        return np.eye(2)
    if callable(impact):
        return np.asarray(impact(alpha), dtype=float)
    return np.asarray(impact, dtype=float)


def apex_return_map_single(alpha: float, apex_height_rel: float, apex_vx: float,
                           touchdown_length: float, spec: StanceSpec, impact_matrix=None,
                           precompress: bool = True):
    """:func:`apex_return_map_steps` in one call: (apex height, apex speed)."""
    return run_steps(apex_return_map_steps(alpha, apex_height_rel, apex_vx, touchdown_length,
                                           spec, impact_matrix, precompress, None))


def apex_return_map_steps(alpha: float, apex_height_rel: float, apex_vx: float,
                          touchdown_length: float, spec: StanceSpec, impact_matrix=None,
                          precompress: bool = True, chunk_steps: int | None = None):
    """
    Next apex (CoG height above the foothold level, m; horizontal speed, m/s) for one α.

    ``impact_matrix``: 2x2 (or a callable α -> 2x2) mapping the CoG velocity before touchdown to
    the one after it (from the leg's N_s at the touchdown posture; None: identity, the massless-
    leg SLIP). With ``precompress`` the SLIPic pre-compression stores the energy it removes.
    Returns (nan, nan) if the stance does not lift off. A generator: the stance integration
    yields every ``chunk_steps`` RK4 steps (:func:`stance_flow_steps`).
    """
    pos, vel_minus = touchdown_state(alpha, apex_height_rel, apex_vx, touchdown_length,
                                     spec.gravity_z)
    vel_plus = _impact_at(impact_matrix, alpha) @ vel_minus
    loss = 0.0
    if precompress:
        loss = 0.5 * spec.mass * (float(vel_minus @ vel_minus) - float(vel_plus @ vel_plus))
    rest = touchdown_rest_length(touchdown_length, loss, spec.stiffness, spec.max_rest_length)
    out = yield from stance_flow_steps(pos, vel_plus, rest, spec, chunk_steps)
    if out is None:
        return math.nan, math.nan
    pos_lo, vel_lo, _ = out
    apex = pos_lo[1] + max(vel_lo[1], 0.0) ** 2 / (2.0 * abs(spec.gravity_z))
    return float(apex), float(vel_lo[0])


def apex_return_map(alpha, apex_height_rel: float, apex_vx: float, touchdown_length: float,
                    spec: StanceSpec, impact_matrix=None, precompress: bool = True):
    """:func:`apex_return_map_single` over an array of α: (apex heights, apex speeds)."""
    alpha = np.atleast_1d(np.asarray(alpha, dtype=float))
    out = np.array([apex_return_map_single(a, apex_height_rel, apex_vx, touchdown_length, spec,
                                           impact_matrix, precompress) for a in alpha])
    return out[:, 0], out[:, 1]


def deadbeat_angle(target_vx: float, apex_height_rel: float, apex_vx: float,
                   touchdown_length: float, spec: StanceSpec, max_angle: float,
                   impact_matrix=None, precompress: bool = True, guess: float = 0.0,
                   tolerance_mps: float = 1e-4, max_evaluations: int = 12) -> float:
    """
    Angle of attack (rad) whose SLIP apex return map gives the next apex speed ``target_vx``.

    The next-apex speed falls monotonically with α over the useful range. Secant steps from
    ``guess`` with a bracket kept by regula falsi (Illinois); out of reach: the bound closest.
    :func:`deadbeat_angle_steps` run to its end (one call).
    """
    return run_steps(deadbeat_angle_steps(
        target_vx, apex_height_rel, apex_vx, touchdown_length, spec, max_angle,
        impact_matrix=impact_matrix, precompress=precompress, guess=guess,
        tolerance_mps=tolerance_mps, max_evaluations=max_evaluations))


def run_steps(steps):
    """Run a step generator (:func:`deadbeat_angle_steps`) to its end; its return value."""
    while True:
        try:
            next(steps)
        except StopIteration as stop:
            return stop.value


def deadbeat_angle_steps(target_vx: float, apex_height_rel: float, apex_vx: float,
                         touchdown_length: float, spec: StanceSpec, max_angle: float,
                         impact_matrix=None, precompress: bool = True, guess: float = 0.0,
                         tolerance_mps: float = 1e-4, max_evaluations: int = 12,
                         chunk_steps: int | None = None):
    """
    :func:`deadbeat_angle` as a generator.

    The stance integrations of its return-map evaluations yield every ``chunk_steps`` RK4 steps
    (:func:`stance_flow_steps`), so a caller can spread the solve over control ticks; its
    ``StopIteration.value`` is the angle, rad. Same arithmetic, same result as the one-call form.
    """
    def err(a):
        apex = yield from apex_return_map_steps(a, apex_height_rel, apex_vx, touchdown_length,
                                                spec, impact_matrix, precompress, chunk_steps)
        return apex[1] - target_vx

    lo, hi = -max_angle, max_angle
    a0 = float(np.clip(guess, lo, hi))
    e0 = yield from err(a0)
    evaluations = 1
    if not math.isfinite(e0):
        a0 = 0.0
        e0 = yield from err(0.0)
        evaluations += 1
        if not math.isfinite(e0):
            return 0.0
    if abs(e0) < tolerance_mps:
        return a0
    # bracket: vx falls with alpha -> positive error means alpha must grow
    step = 0.05 if e0 > 0.0 else -0.05
    a1 = float(np.clip(a0 + step, lo, hi))
    e1 = yield from err(a1)
    evaluations += 1
    while math.isfinite(e1) and e1 * e0 > 0.0 and a1 not in (lo, hi) \
            and evaluations < max_evaluations:
        a0, e0 = a1, e1
        step *= 2.0
        a1 = float(np.clip(a0 + step, lo, hi))
        e1 = yield from err(a1)
        evaluations += 1
    if not math.isfinite(e1):
        return a0
    if e1 * e0 > 0.0:
        return a1 if abs(e1) < abs(e0) else a0
    side = 0
    best = a1 if abs(e1) < abs(e0) else a0
    while evaluations < max_evaluations:
        a = a1 - e1 * (a1 - a0) / (e1 - e0)
        e = yield from err(a)
        evaluations += 1
        if not math.isfinite(e):
            break
        best = a
        if abs(e) < tolerance_mps:
            break
        if e * e1 < 0.0:
            a0, e0 = a1, e1
            side = 0
        else:
            e0 = e0 * 0.5 if side == 1 else e0
            side = 1
        a1, e1 = a, e
    return float(best)
