# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
Event-driven hybrid integration with hard contacts and joint limits.

It follows the hybrid simulators of the Kneed Walker (As & Mailhot 2018) and of the boom hopping
leg (Ding & Ramos), and Hutter et al. 2010 for the impact map.

Each contact is FREE, STICK (point fixed) or SLIP (Coulomb force opposing the sliding velocity);
each joint-limit bound is free or active. Smooth phases are integrated with classical RK4 steps of
the active-set dynamics

    M a + h = S^T tau + W_A^T lambda,   W_A a + W-dot_A v = -2 w W_A v - w^2 drift

(a KKT system solved through M^-1 and the Delassus operator; Baumgarte drift control at rate w on
the gaps and on a sticking point's tangential drift; a sliding contact's friction column is
W_N - mu d^T W_T). Events, each a sign change from > 0 to <= 0 located by Brent's method on the
RK4 step length:

    free contact / limit:  gap -> 0                        (touchdown / limit impact)
    stick:   lambda_N -> 0 (liftoff),  mu lambda_N - |lambda_T| -> 0 (slip)
    slip:    lambda_N -> 0 (liftoff),  u_T . d -> 0 (the slide stops or turns)
    active limit: lambda -> 0 (release)

At an impact the velocity jump is the complementarity problem of all closed constraints at once
(M (v+ - v-) = W^T Lambda, Newton restitution, Coulomb cones): the same block NCP as a Moreau-Jean
step with dt = 0. After an impact or any event, the new active set is the acceleration-level
complementarity problem of every closed constraint (0 <= lambda_N ⟂ normal acceleration >= 0,
Coulomb at acceleration level for contacts at rest, the sliding direction fixed for sliding ones);
see ``docs/physics.md``.

Longer than ~500 lines on purpose: :class:`EventDrivenIntegrator` is one state machine (the
modes, the event keys located in a segment, the transitions and their consistency resolve,
the impacts) whose methods read and change the same mode, anchor and layout state within one
physics step; the compiled dynamics evaluation it calls lives in ``kernels/event.py``.
"""
from __future__ import annotations

from dataclasses import dataclass
import math
from typing import NamedTuple

import numpy as np
import pinocchio as pin
from scipy.optimize import brentq

from . import solver as ncp
from .contact import blocks_for, Constraint, ConstraintGeometry, ContactParams
from .fast import pack_model
from .kernels.buffers import pack_buffers
from .kernels.event import evaluate, rk4
from .timestepping import StepReport

FREE, STICK, SLIP = 'free', 'stick', 'slip'

# Gaps (m, rad) and normal velocities (m/s) below these count as closed when an event is resolved.
# A closed constraint that becomes free at gap g0 ~ 0 (a liftoff, a bounce; the drift control and
# the event location leave it at +-1e-12) has the touchdown event function
# gap + _GAP_EPS - min(g0, 0), which starts at >= _GAP_EPS, until its gap exceeds _GAP_EPS: if it
# comes straight back (a ball bouncing, a wheel rocking) the touchdown still has a sign change
# to locate. Otherwise the event function is the gap.
_GAP_EPS = 1e-9
_VELOCITY_EPS = 1e-9
# A free constraint at gap <= 0 whose normal velocity is below -this (m/s) at the start of a step
# hits now; slower ones (the stabilisation residual of a contact that just lifted off, ~1e-9)
# close only if their free acceleration points into the obstacle.
_IMPACT_EPS = 1e-6
# The compiled evaluation's gaps and the Python check's gaps of the same point differ by
# rounding (~1e-16 m): a free constraint within this (m, rad) of touching by the former gets
# the exact check of the latter (EventDrivenIntegrator._start_segment).
_TOUCH_HINT_M = 1e-6
# Force conditions (liftoff lambda_N, cone margin, limit release) trigger at -this (N or N*m), not
# at 0: a constraint that carries ~0 force (a knee resting on its stop with no torque) would
# otherwise flip between the active-set solve (lambda = +1e-16) and the KKT solve (-1e-16).
_FORCE_EPS = 1e-9
# A contact at rest slides (its friction direction is set by its velocity) above this, m/s.
_SLIDE_EPS = 1e-6
_LWA = pin.LOCAL_WORLD_ALIGNED
_WORLD = pin.Convention.WORLD


#: A 2x2 active-set system with |det| <= this |K_00 K_11| is singular: least squares instead.
SINGULAR_KKT_RATIO = 1e-12


def _small_solve(K: np.ndarray, r: np.ndarray) -> np.ndarray:
    """
    Return x with K x = r; 1x1 and 2x2 in closed form.

    At this size numpy's LAPACK call costs more than the arithmetic. Three rows or more may be
    redundant (two sticking spokes of a rigid wheel: 4 rows, 3 DoF): the minimum-norm least-squares
    solution (the accelerations are unique, the multipliers of redundant constraints are shared);
    so is a singular 1x1 or 2x2 system, which divided by zero before.
    """
    n = len(r)
    if n == 1 and K[0, 0] != 0.0:
        return r / K[0, 0]
    if n == 2:
        (a, b), (c, d) = K.tolist()
        r0, r1 = r.tolist()
        det = a * d - b * c
        if abs(det) > SINGULAR_KKT_RATIO * abs(a * d):
            return np.array(((d * r0 - b * r1) / det, (a * r1 - c * r0) / det))
    # three rows or more, or a singular 1x1 / 2x2 system (both bounds of a joint with
    # lower = upper, as published URDFs write an unspecified limit; a point that cannot move)
    return _least_squares(K, r, 1e-12)


def _least_squares(A: np.ndarray, r: np.ndarray, rcond=None) -> np.ndarray:
    """
    Return the minimum-norm least-squares x of A x = r; FloatingPointError on a non-finite input.

    A NaN handed to LAPACK's least squares prints "DLASCL parameter number 4 had an illegal
    value" and returns garbage (an RK4 stage of a blown-up state); it is a numerical failure of
    the step instead (Simulator.step: SimulationDiverged).
    """
    if not (math.isfinite(float(A.sum())) and math.isfinite(float(r.sum()))):
        raise FloatingPointError('a non-finite matrix or vector reached a least-squares solve')
    return np.linalg.lstsq(A, r, rcond=rcond)[0]


#: A generic (3-D) event step may gain at most ENERGY_GAIN_FLOOR_J + ENERGY_GAIN_RATIO (T0 + |W|)
#: of mechanical energy beyond the applied work W (T0: kinetic energy at its start); beyond, the
#: step is taken by time-stepping (EventDrivenIntegrator._check_energy).
ENERGY_GAIN_FLOOR_J = 1e-4
ENERGY_GAIN_RATIO = 0.01
#: Most contact points (contact frames + link support points) the event integrator takes on a 3-D
#: robot (docs/physics.md "Robots the event integrator refuses").
EVENT_MAX_CONTACTS_3D = 200


def check_contact_count(robot, n_contacts: int) -> None:
    """
    Refuse a 3-D robot with more than EVENT_MAX_CONTACTS_3D contact points, in one line.

    The event integrator resolves every contact event exactly, each point with its own event
    function and mode; with hundreds of box corners landing together it spends most steps in
    accumulations it hands to time-stepping, at minutes of wall time per simulated 0.1 s
    (example-robot-data's Tiago, 431 points: 0.5 s in 11 min). Raises ValueError naming the
    count and what to use instead.
    """
    if robot.planar or n_contacts <= EVENT_MAX_CONTACTS_3D:
        return
    feet = len(robot.contact_frame_ids)
    raise ValueError(
        f"integrator 'event' does not take robot '{robot.model.name}': {n_contacts} contact "
        f'points in 3-D ({feet} contact frames + {n_contacts - feet} link collision support '
        f'points), more than its {EVENT_MAX_CONTACTS_3D}; use integrator: timestepping, or '
        f'collisions: feet or collision_exclude_links to keep fewer points')


class EventLimitExceeded(RuntimeError):
    """More than ``EventParams.max_events_per_step`` events in one physics step."""


@dataclass(frozen=True)
class EventParams:
    """
    Tuning of the event-driven integrator: drift control, event search, its NCP solves.

    Fields:
        drift_correction_rate: Baumgarte rate w of the active constraints (critically damped), 1/s.
        time_tolerance_s: accuracy of located event times, s.
        max_events_per_step: guard against Zeno sequences within one physics step.
        solver_tolerance: NCP residual of impact / active-set problems, m/s or m/s^2.
        max_iterations: NCP sweep cap.
        accumulation_speed: an impact whose fastest approaching constraint is slower than this
            is the end of a Zeno sequence (docs/physics.md), m/s. The default 1e-4 m/s: a
            separation that slow rises at most u^2 / (2 g) = 5e-10 m under gravity, below the
            1e-9 m at which a gap counts as closed.
        compiled: evaluate the dynamics with :func:`dodo_sim.physics.kernels.event.evaluate` when
            the model qualifies (the same values to rounding; much faster).
    """

    drift_correction_rate: float = 200.0
    time_tolerance_s: float = 1e-12
    max_events_per_step: int = 50
    solver_tolerance: float = 1e-10
    max_iterations: int = 100
    accumulation_speed: float = 1e-4
    compiled: bool = True


class _Layout(NamedTuple):
    """The event values' meaning in one set of modes (rebuilt only when the modes change)."""

    keys: list               # EventDrivenIntegrator._keys(): one per event value
    gap_at: np.ndarray       # positions of the touchdown ('gap') values
    gap_slot: np.ndarray     # their slots in the shift list (contacts, then limit bounds)
    force_at: np.ndarray     # positions of the active-mode force conditions ('lift', 'cone')
    mode_codes: np.ndarray   # per contact 0 free / 1 stick / 2 slip (the compiled kernels')
    limit_active: np.ndarray  # per limit bound 0 / 1


class _Eval(NamedTuple):
    """Dynamics at one (q, v) in the current modes."""

    accel: np.ndarray
    forces: np.ndarray       # (n_contacts, 3) world contact forces, N
    values: tuple            # event functions, ordered like _keys()
    array: np.ndarray | None = None   # the same as an array (the compiled kernels')


def impact_map(minv: np.ndarray, w: np.ndarray, v_minus: np.ndarray, contact: ContactParams):
    """
    Velocity jump of a touchdown of one planar point contact.

    Returns (v+, Lambda_N, Lambda_T).

    Solves M (v+ - v-) = W^T Lambda, W = [W_N; W_T] (2 x nv), with the contact closed:
    W_N v+ = -e W_N v- and a sticking impact (W_T v+ = 0) when its impulse lies in the friction
    cone, else a sliding one (Lambda_T = -s mu Lambda_N, s the sense the point keeps sliding in).
    For e = 0 and a sticking impact this is v+ = N_s v- (Hutter et al. 2010). The simulator's
    impacts solve the complementarity problem of all closed constraints instead (module docs);
    for an approaching contact the two agree.
    """
    gamma = w @ v_minus
    mu = contact.friction
    target = np.array((-contact.restitution * gamma[0], 0.0))
    minv_wt = minv @ w.T
    lam = np.linalg.solve(w @ minv_wt, target - gamma)
    if lam[0] >= 0.0 and abs(lam[1]) <= mu * lam[0]:
        return v_minus + minv_wt @ lam, float(lam[0]), float(lam[1])
    sign = -math.copysign(1.0, lam[1])
    direction = w[0] - sign * mu * w[1]
    minv_d = minv @ direction
    lam_n = float((target[0] - gamma[0]) / (w[0] @ minv_d))
    return v_minus + minv_d * lam_n, lam_n, -sign * mu * lam_n


class EventDrivenIntegrator:
    """Event-driven integrator; owns its pinocchio Data and the contact / limit modes."""

    name = 'event'

    def __init__(self, robot, terrain, contact: ContactParams, params: EventParams,
                 joint_limits: bool = True):
        self.robot = robot
        self.model = robot.model
        self.data = robot.model.createData()
        self._energy_data = robot.model.createData()
        self.geometry = ConstraintGeometry(robot, terrain, joint_limits)
        self.contact = contact
        self.params = params
        self.n_contacts = len(self.geometry.frame_ids)
        self.dim = robot.contact_dim
        check_contact_count(robot, self.n_contacts)
        self._zero = np.zeros(robot.model.nv)
        self._no_forces = np.zeros((self.n_contacts, 3))
        bounds = []
        for i, lim in enumerate(self.geometry.limits):
            if lim.lower > -math.inf:
                bounds.append((i, 1))
            if lim.upper < math.inf:
                bounds.append((i, -1))
        self.bounds = tuple(bounds)
        # the compiled evaluation (kernels/event.py) when the model qualifies (planar, flat,
        # 1-DoF joints)
        self._kernel = None
        self.packed = None
        if params.compiled:
            self.packed = pack_model(robot, self.geometry)
            if self.packed is not None:
                self._kernel = evaluate
                self._compiled_rk4 = rk4
                self._buffers = pack_buffers(
                    self.packed, np.arange(robot.nv), plane=self.geometry.plane,
                    friction=float(contact.friction), restitution=0.0, margin=0.0, far=0.0,
                    tolerance=0.0, max_iterations=1, jacobi=False, position_correction=False)
        self.reset(None, None)

    # -- public ----------------------------------------------------------------------------

    def reset(self, q, v) -> None:
        self.mode = [FREE] * self.n_contacts
        self.slip_dir = [None] * self.n_contacts
        self.anchor = [None] * self.n_contacts
        self.limit_active = [False] * len(self.bounds)
        # touchdown event function offset of each contact then each limit bound (see _GAP_EPS)
        self._shift = [0.0] * (self.n_contacts + len(self.bounds))
        self._mode_arrays = None
        self._layout_of = None      # (modes, limit_active) the cached _Layout belongs to
        self._layout_cache = None
        self._classify = True
        self._stats = [0, 0.0, True]

    def _integrate(self, q, dv):
        return q + dv if self.robot.vector_space else pin.integrate(self.model, q, dv)

    def step(self, q: np.ndarray, v: np.ndarray, generalized_force: np.ndarray, dt: float):
        """
        Advance (q, v) by dt, locating and resolving events.

        Returns (q+, v+, StepReport).
        """
        self._force = generalized_force
        self._stats = [0, 0.0, True]
        q_start, v_start = q, v
        remaining = dt
        impulses = np.zeros((self.n_contacts, 3))
        events = []
        if self._classify:
            self._classify = False
            v = self._close(q, v, impulses, events, initial=True)
        # gap crossings that closed nothing (a foot rising past a step edge of the height-field
        # terrain: the gap jumps, it does not cross zero) are not located again in this step
        passed = set()
        seen = set()              # (event key, modes, q, v) of the transitions made so far
        for _ in range(self.params.max_events_per_step):
            start, keys, v = self._start_segment(q, v, impulses, events)
            violated = self._violated_at_start(start, passed)
            if violated is not None:
                # the command changed at this step boundary and a mode no longer holds
                if self._cycles(keys[violated], q, v, seen, passed):
                    continue
                v = self._transition(keys[violated], q, v, impulses, events, start)
                continue
            # one RK4 step to the end of the physics step, unless a slide is predicted to stop
            # well before (see _slide_stop_horizon): the step then ends past the predicted stop
            h = min(remaining, self._slide_stop_horizon(q, v, start, keys))
            q1, v1, end, impulse = self._rk4(q, v, h, start)
            if not (np.isfinite(v1).all() and np.isfinite(q1).all()):
                # resolving events on a blown-up state only ends in a singular matrix later
                raise FloatingPointError(f'non-finite state after an RK4 step of {h} s')
            crossed = self._crossed(start, end, keys, passed)
            if not crossed:
                q, v = q1, v1
                impulses += impulse
                self._clear_shifts(keys, end.values)
                if h >= remaining:
                    break
                remaining -= h
                continue
            when, which = min((self._locate(q, v, start, i, h), i) for i in crossed)
            q, v, _, impulse = self._rk4(q, v, when, start)
            impulses += impulse
            remaining -= when
            key = keys[which]
            if key[0] == 'gap':
                before = len(events)
                v = self._close(q, v, impulses, events)
                if self._keys() == keys and len(events) == before:
                    # no impact and no mode change (the gap jumped at a step edge): not again
                    passed.add(key)
            elif not self._cycles(key, q, v, seen, passed):
                v = self._transition(key, q, v, impulses, events, None)
                if (key[0] == 'stop' and when <= self.params.time_tolerance_s
                        and self.mode[key[2]] == STICK):
                    # a slide that stopped where it started cannot develop: the contact's
                    # tangential motion is locked by the other closed constraints (the friction
                    # is statically indeterminate and the minimum-norm stick forces may leave
                    # the cone). It sticks for the rest of this physics step instead of
                    # alternating stick -> slip -> stop without end (the Kneed Walker landing on
                    # its thigh with a knee on its stop); the next step checks its cone again.
                    passed.add(('cone', 'contact', key[2]))
            if remaining <= 0.0:
                break
        else:
            raise EventLimitExceeded(
                f'more than {self.params.max_events_per_step} contact events in one physics step '
                f'of {dt} s (Zeno behaviour?)')
        if self._kernel is None:
            self._check_energy(q_start, v_start, q, v, generalized_force)
        in_contact = tuple(m != FREE for m in self.mode)
        iterations, residual, converged = self._stats
        return q, v, StepReport(impulses, in_contact, iterations, residual, converged,
                                tuple(events))

    def _check_energy(self, q0, v0, q1, v1, generalized_force) -> None:
        """
        Refuse a physics step that made mechanical energy (docs/physics.md).

        Contacts, friction, impacts and joint stops only dissipate: T + V may grow by the work
        of the applied forces (constant over the step: f . (q1 - q0)) and by the drift
        control's rounding-level share (<= 2e-8 J a step on the published robots), not more. A
        slide near Painleve's singularity can blow an RK4 segment up instead (the Allegro hand
        of example-robot-data gained 843 J in one 1 ms step from 1e-4 J of kinetic energy and
        left the speed bound); such a step raises EventLimitExceeded, so Simulator.step takes it
        by time-stepping like an accumulation of events.
        """
        model, data = self.model, self._energy_data
        kinetic = pin.computeKineticEnergy(model, data, q0, v0)
        before = kinetic + pin.computePotentialEnergy(model, data, q0)
        after = (pin.computeKineticEnergy(model, data, q1, v1)
                 + pin.computePotentialEnergy(model, data, q1))
        work = float(generalized_force.dot(pin.difference(model, q0, q1)))
        allowed = ENERGY_GAIN_FLOOR_J + ENERGY_GAIN_RATIO * (kinetic + abs(work))
        if not after - before - work <= allowed:
            raise EventLimitExceeded(
                f'the event step made {after - before - work:.3g} J of mechanical energy '
                f'(kinetic energy at its start {kinetic:.3g} J; contacts only dissipate)')

    def _start_segment(self, q, v, impulses, events):
        """
        Close what touches and approaches at (q, v), then evaluate there: (start, keys, v).

        Broad phase of the compiled path (planar models): its evaluation gives every free
        contact's and inactive limit's gap (plus its shift) for the cost of the dynamics, so
        the per-contact Python check of :meth:`_impact_if_approaching` runs only when one of
        them is within :data:`_TOUCH_HINT_M` of touching, and the evaluation is redone only then.
        Link collision points far above the ground then cost nothing in Python (issue 22: the
        event integrator paid 1.24-1.47x per step for the hopper's and the walker's links).
        """
        if self._kernel is not None:
            self._mode_arrays = None  # the modes may have changed: rebuild the kernel's view
            start = self._evaluate(q, v)
            keys = self._keys()
            if not self._free_may_touch(start.array):
                return start, keys, v
        v = self._impact_if_approaching(q, v, impulses, events)
        if self.dim == 3:
            self._refresh_slide_directions(v)
        self._mode_arrays = None
        return self._evaluate(q, v), self._keys(), v

    @staticmethod
    def _crossed(start: _Eval, end: _Eval, keys, passed) -> list:
        """Positions of the event values that went from > 0 to <= 0 (not in ``passed``)."""
        if start.array is not None and end.array is not None:
            crossed = np.flatnonzero((start.array > 0.0) & (end.array <= 0.0)).tolist()
        else:
            crossed = [i for i, (a, b) in enumerate(zip(start.values, end.values))
                       if a > 0.0 and b <= 0.0]
        return [i for i in crossed if keys[i] not in passed] if passed else crossed

    def _free_may_touch(self, values: np.ndarray) -> bool:
        """
        Whether a free contact or inactive limit is at gap <= _TOUCH_HINT_M.

        ``values``: the compiled evaluation's event values in the current modes.
        """
        layout = self._layout()
        if not len(layout.gap_at):
            return False
        shift = self._compiled_modes()[3]
        gaps = values[layout.gap_at] - shift[layout.gap_slot]
        return bool((gaps <= _TOUCH_HINT_M).any())

    def _layout(self) -> _Layout:
        """Return the current modes' :class:`_Layout` (cached: modes change at events only)."""
        signature = (tuple(self.mode), tuple(self.limit_active))
        if signature != self._layout_of:
            keys = self._make_keys()
            n = self.n_contacts
            gap_at = [i for i, key in enumerate(keys) if key[0] == 'gap']
            code = {FREE: 0, STICK: 1, SLIP: 2}
            self._layout_cache = _Layout(
                keys, np.array(gap_at, np.int64),
                np.array([keys[i][2] if keys[i][1] == 'contact' else n + keys[i][2]
                          for i in gap_at], np.int64),
                np.array([i for i, key in enumerate(keys) if key[0] in ('lift', 'cone')],
                         np.int64),
                np.array([code[m] for m in self.mode], np.int64),
                np.array(self.limit_active, np.int64))
            self._layout_of = signature
        return self._layout_cache

    # -- constraints in the current modes --------------------------------------------------

    def _clear_shifts(self, keys, values):
        """
        Clear the touchdown offset of the free constraints farther than _GAP_EPS.

        Such a constraint then has the plain gap as its event function.
        """
        if not any(self._shift):
            return
        n = self.n_contacts
        for key, value in zip(keys, values):
            if key[0] != 'gap' or value <= 2.0 * _GAP_EPS:
                continue
            slot = key[2] if key[1] == 'contact' else n + key[2]
            self._shift[slot] = 0.0

    def _keys(self) -> list:
        """Return what each event value is: (kind, 'contact' | 'limit', index); read only."""
        return self._layout().keys

    def _make_keys(self) -> list:
        keys = []
        for k, mode in enumerate(self.mode):
            if mode == FREE:
                keys.append(('gap', 'contact', k))
            elif mode == STICK:
                keys += [('lift', 'contact', k), ('cone', 'contact', k)]
            else:
                keys += [('lift', 'contact', k), ('stop', 'contact', k)]
        for j, active in enumerate(self.limit_active):
            keys.append(('lift' if active else 'gap', 'limit', j))
        return keys

    def _contact_constraint(self, k, need_rows=True):
        gap, basis, p = self.geometry.contact_gap(self.data, k)
        rows = self.geometry.contact_rows(self.data, k, basis) if need_rows else None
        return gap, basis, p, rows

    def _limit_constraint(self, j, q):
        _, side, iq, _, bound, row = self.geometry.bounds[j]
        return side * (float(q[iq]) - bound), row

    def _limit_gaps(self, q) -> list:
        values = q.tolist()
        return [side * (values[iq] - bound) for _, side, iq, _, bound, _ in self.geometry.bounds]

    def _kinematics(self, q, v):
        model, data = self.model, self.data
        pin.forwardKinematics(model, data, q, v, self._zero)
        pin.computeJointJacobians(model, data, q)

    def _any_active(self) -> bool:
        return self.mode.count(FREE) != self.n_contacts or True in self.limit_active

    def _minv(self, q):
        """M^-1 at q (pinocchio 4 fills the whole symmetric matrix)."""
        return pin.computeMinverse(self.model, self.data, q)

    def _compiled_modes(self):
        """Return the modes as the compiled evaluation reads them (rebuilt when they change)."""
        if self._mode_arrays is None:
            layout = self._layout()
            self._mode_arrays = (
                layout.mode_codes,
                np.array([float(d[0]) if m == SLIP else 0.0
                          for m, d in zip(self.mode, self.slip_dir)]),
                np.array([float(a[0]) if a is not None else 0.0 for a in self.anchor]),
                np.array(self._shift, float),
                layout.limit_active)
        return self._mode_arrays

    def _evaluate(self, q, v) -> _Eval:
        if self._kernel is not None:
            accel, forces, values = self._kernel(
                q, v, self._force, *self._buffers, self.params.drift_correction_rate,
                *self._compiled_modes())
            return _Eval(accel, forces, tuple(values.tolist()), values)
        return self._evaluate_generic(q, v)

    def _evaluate_generic(self, q, v) -> _Eval:
        model, data, geometry = self.model, self.data, self.geometry
        # ABA with the WORLD convention leaves the placements, joint jacobians and the
        # factorisation computeMinverse(model, data) reuses
        a_free = pin.aba(model, data, q, v, self._force, _WORLD).copy()
        modes = self.mode
        if not (self._any_active()):
            values = []
            for k in range(self.n_contacts):
                p = geometry.contact_position(data, k)
                values.append(geometry.gap_and_basis(k, p[0], p[2])[0] + self._shift[k])
            if geometry.bounds:
                values += [gap + shift for gap, shift in
                           zip(self._limit_gaps(q), self._shift[self.n_contacts:])]
            return _Eval(a_free, self._no_forces, tuple(values))
        minv = pin.computeMinverse(model, data)
        pin.forwardKinematics(model, data, q, v, self._zero)  # for J-dot v (placements unchanged)
        rate = self.params.drift_correction_rate
        rate2 = rate * rate
        mu = self.contact.friction
        dim = self.dim
        rows_list, target_list, cols = [], [], []
        pieces = []  # per contact: its gap (free) or (k, basis, u, mode, d, size of lambda)
        for k, mode in enumerate(modes):
            p = geometry.contact_position(data, k)
            gap, basis = geometry.gap_and_basis(k, p[0], p[2])
            if mode == FREE:
                pieces.append(gap + self._shift[k])
                continue
            rows = geometry.contact_rows(data, k, basis)
            jdv = geometry.contact_jdot_v(data, k, basis)
            u = rows.dot(v)
            if mode == STICK:
                target = -jdv - 2.0 * rate * u
                target[0] -= rate2 * gap
                if geometry.radii[k] == 0.0:
                    # a point sticks where it touched down; a sphere's contact point moves as it
                    # rolls, so only its tangential velocity is stabilised
                    target[1:] -= rate2 * (basis[1:dim].dot(p) - self.anchor[k])
                rows_list.append(rows)
                target_list.append(target)
                cols.append(rows)
                pieces.append((k, basis, u, STICK, None, dim))
            else:
                d = self._slide_direction(k, u[1:])
                rows_list.append(rows[:1])
                target_list.append((-jdv[0] - 2.0 * rate * u[0] - rate2 * gap,))
                cols.append((rows[0] - mu * d.dot(rows[1:]))[None, :])
                pieces.append((k, basis, u, SLIP, d, 1))
        limit_gaps = self._limit_gaps(q) if geometry.bounds else []
        rates = v.tolist()
        limit_pieces = []
        for j, active in enumerate(self.limit_active):
            if not active:
                continue
            _, side, _, iv, _, row = geometry.bounds[j]
            u = side * rates[iv]
            rows_list.append(row)
            target_list.append((-2.0 * rate * u - rate2 * limit_gaps[j],))
            cols.append(row)
            limit_pieces.append(j)
        E = rows_list[0] if len(rows_list) == 1 else np.vstack(rows_list)
        C = cols[0] if len(cols) == 1 else np.vstack(cols)
        minv_ct = minv.dot(C.T)
        target = (np.asarray(target_list[0], float) if len(target_list) == 1
                  else np.concatenate(target_list))
        x = _small_solve(E.dot(minv_ct), target - E.dot(a_free))
        accel = a_free + minv_ct.dot(x)
        forces = np.zeros((self.n_contacts, 3))
        x_list = x.tolist()
        # event values in _keys() order
        values_out = []
        pos = 0
        for piece in pieces:
            if not isinstance(piece, tuple):
                values_out.append(piece)  # a free contact's gap
                continue
            k, basis, u, mode, d, size = piece
            if mode == STICK:
                lam = x[pos:pos + dim]
                lam_n = x_list[pos]
                tangential = x_list[pos + 1:pos + dim]
                forces[k] = lam.dot(basis[:dim])
                values_out.append(lam_n + _FORCE_EPS)
                values_out.append(mu * lam_n - math.sqrt(sum(t * t for t in tangential))
                                  + _FORCE_EPS)
            else:
                lam_n = x_list[pos]
                lam = np.empty(dim)
                lam[0] = lam_n
                lam[1:] = -mu * lam_n * d
                forces[k] = lam.dot(basis[:dim])
                values_out.append(lam_n + _FORCE_EPS)
                values_out.append(float(u[1:].dot(self.slip_dir[k])))
            pos += size
        limit_lam = dict(zip(limit_pieces, x_list[pos:]))
        for j, active in enumerate(self.limit_active):
            values_out.append(limit_lam[j] + _FORCE_EPS if active
                              else limit_gaps[j] + self._shift[self.n_contacts + j])
        return _Eval(accel, forces, tuple(values_out))

    def _slide_direction(self, k, u_t):
        """
        Return the unit sliding direction of contact k.

        It is the tangential velocity while that stays on the side of the direction stored at the
        step start (a 3-D slide turns), else the stored one (planar slides, a slide starting from
        rest, and a velocity about to reverse: the reversal is the slip-stop event, not a friction
        flip inside an RK4 stage).
        """
        ref = self.slip_dir[k]
        if self.dim == 3:
            speed = math.sqrt(float(u_t @ u_t))
            if speed > _SLIDE_EPS and u_t @ ref > 0.0:
                return u_t / speed
        return ref

    def _refresh_slide_directions(self, v):
        """
        Start a step with each 3-D slide's reference direction along its velocity.

        The Data holds the kinematics of the step's start.
        """
        for k, mode in enumerate(self.mode):
            if mode != SLIP:
                continue
            rows = self._contact_constraint(k)[3]
            u_t = rows[1:] @ v
            speed = math.sqrt(float(u_t @ u_t))
            if speed > _SLIDE_EPS:
                self.slip_dir[k] = u_t / speed

    def _rk4(self, q, v, h, start: _Eval):
        """
        One RK4 step of length h.

        Returns q, v, end evaluation, world contact impulses.
        """
        if self._kernel is not None:
            q1, v1, accel, forces, values, impulse = self._compiled_rk4(
                q, v, h, start.accel, start.forces, self._force, *self._buffers,
                self.params.drift_correction_rate, *self._compiled_modes())
            return q1, v1, _Eval(accel, forces, tuple(values.tolist()), values), impulse
        k1 = start
        v2 = v + 0.5 * h * k1.accel
        k2 = self._evaluate(self._integrate(q, 0.5 * h * v), v2)
        v3 = v + 0.5 * h * k2.accel
        k3 = self._evaluate(self._integrate(q, 0.5 * h * v2), v3)
        v4 = v + h * k3.accel
        k4 = self._evaluate(self._integrate(q, h * v3), v4)
        q1 = self._integrate(q, (h / 6.0) * (v + 2.0 * v2 + 2.0 * v3 + v4))
        v1 = v + (h / 6.0) * (k1.accel + 2.0 * k2.accel + 2.0 * k3.accel + k4.accel)
        end = self._evaluate(q1, v1)
        impulse = (h / 6.0) * (k1.forces + 2.0 * k2.forces + 2.0 * k3.forces + k4.forces)
        return q1, v1, end, impulse

    def _slide_stop_horizon(self, q, v, start: _Eval, keys) -> float:
        """
        Length of the next RK4 step that cannot pass a slide stop unseen.

        The length is in s; inf without a decelerating slide.

        The slide-stop event function of a sliding contact is s = u_T . d; its rate at the step
        start is d . (W_T a + J-dot_T v). Where friction decelerates the slide (rate < 0) the
        stop is predicted at t* = s / -rate, and the step is limited to 2 t* (so that a
        constant deceleration crosses s = 0 inside it and the stop is located). A slide can end
        far inside a physics step: near Painlevé's singularity (the sliding contact's effective
        normal mass W_N M^-1 (W_N - mu d W_T)^T small) the normal force is huge and stops a
        slow slide within nanoseconds. The Kneed Walker's stance foot, set sliding at 3.3e-5 m/s
        by a knee-stop impact, had 1.6e4 N and stopped in 2e-10 s; one RK4 step over the rest
        of the 1 ms step passed the stop and diverged (docs/physics.md).
        """
        if SLIP not in self.mode:
            return math.inf
        self._kinematics(q, v)
        horizon = math.inf
        for index, key in enumerate(keys):
            if key[0] != 'stop':
                continue
            value = start.values[index]
            if not value > 0.0:
                continue  # a slide that has just started from rest
            k = key[2]
            _, basis, _, rows = self._contact_constraint(k)
            jdv = self.geometry.contact_jdot_v(self.data, k, basis)
            rate = float(self.slip_dir[k] @ (rows[1:] @ start.accel + jdv[1:]))
            if rate < 0.0:
                horizon = min(horizon, max(2.0 * value / -rate, self.params.time_tolerance_s))
        return horizon

    def _locate(self, q, v, start, index, h_max) -> float:
        def value(h):
            return self._rk4(q, v, h, start)[2].values[index]
        when = brentq(value, 0.0, h_max, xtol=self.params.time_tolerance_s, rtol=1e-15)
        if self.geometry.normal_curvature is not None:
            # a terrain with corners (steps): the contact force jumps where a point passes a
            # corner (the normal starts to turn), so the event function jumps there too; the
            # event state must lie past the jump, or the resolve at it sees the tread again
            # and closes the contact it has just released, forever (a ball rolling off an edge)
            step = self.params.time_tolerance_s
            while value(when) > 0.0 and when < h_max:
                when = min(h_max, when + step)
                step *= 2.0
        return when

    def _cycles(self, key, q, v, seen: set, passed: set) -> bool:
        """
        Whether the transition at ``key`` was already made in these modes at this very state.

        Then the mode changes cycle at one instant (Solo-12 landing with a foot and an upper leg
        of one leg sticking: one leaves its cone, the consistency resolve sticks the other, whose
        cone is then violated, and so on; the friction of a locked chain is statically
        indeterminate). The key is passed for the rest of this physics step, as a locked slide
        is (see :meth:`step`); the next step checks it again. Transitions that change the state
        never repeat it, so this changes no run that ended before.
        """
        here = (key, tuple(self.mode), tuple(self.limit_active), q.tobytes(), v.tobytes())
        if here in seen:
            passed.add(key)
            return True
        seen.add(here)
        return False

    def _violated_at_start(self, start: _Eval, passed=()):
        """
        Index of an active-mode condition already violated, else None.

        In the current modes' layout (the one ``start`` was evaluated in); the slide-stop
        condition is exempt: it is zero right after a slide starts.
        """
        layout = self._layout()
        if not len(layout.force_at):
            return None
        values = start.array if start.array is not None else np.array(start.values)
        for at in layout.force_at[values[layout.force_at] <= 0.0].tolist():
            if layout.keys[at] not in passed:      # a locked contact's cone (see step)
                return at
        return None

    # -- events ----------------------------------------------------------------------------

    def _transition(self, key, q, v, impulses, events, start):
        """
        Mode change at an event of an active constraint.

        A consistency check of the whole active set (acceleration-level complementarity problem)
        follows. Returns v (changed only by a tangential impact, see :meth:`_resolve`).
        """
        before = (list(self.mode), list(self.limit_active))
        pin.forwardKinematics(self.model, self.data, q)  # placements for anchors and bases
        _, kind, index = key
        if key[0] == 'lift':
            if kind == 'contact':
                events.append('liftoff')
                self.mode[index] = FREE
            else:
                events.append('limit_release')
                self.limit_active[index] = False
        elif key[0] == 'cone':
            events.append('slip')
            self._start_slip(index, q, v)
        else:
            events.append('slip_stop')
            self.mode[index] = STICK
            self._set_anchor(index)
        forced = (list(self.mode), list(self.limit_active))
        v = self._resolve(q, v, impulses, events)
        if (list(self.mode), list(self.limit_active)) == before:
            # the event point is a mode boundary: keep the forced change instead of going back
            self.mode, self.limit_active = forced
            for k, m in enumerate(self.mode):
                if m == STICK and self.anchor[k] is None:
                    self._set_anchor(k)
        return v

    def _start_slip(self, k, q, v):
        """STICK -> SLIP: the slide starts against the friction force the stick needed."""
        ev = self._evaluate(q, v)
        basis = self.geometry.contact_gap(self.data, k)[1]
        lam_t = basis[1:self.dim] @ ev.forces[k]
        norm = math.sqrt(float(lam_t @ lam_t))
        self.slip_dir[k] = -lam_t / norm if norm > 0.0 else np.eye(self.dim - 1)[0]
        self.mode[k] = SLIP
        self.anchor[k] = None

    def _set_anchor(self, k):
        gap, basis, p = self.geometry.contact_gap(self.data, k)
        self.anchor[k] = basis[1:self.dim] @ p

    def _closed_candidates(self, q, v, include_all_near=True):
        """Constraints closed at (q, v): active ones and free ones at gap ~0."""
        pin.forwardKinematics(self.model, self.data, q)
        pin.computeJointJacobians(self.model, self.data, q)
        out = []
        geometry, data = self.geometry, self.data
        for k, mode in enumerate(self.mode):
            gap, basis, _ = geometry.contact_gap(data, k)
            if mode != FREE or gap <= _GAP_EPS:
                # the rows only of the closed ones: a robot's many link points far from the
                # ground cost a gap each at an event, not a jacobian (issue 22 item 3)
                out.append(Constraint('contact', k, 0, gap, basis,
                                      geometry.contact_rows(data, k, basis)))
        for j, active in enumerate(self.limit_active):
            gap, row = self._limit_constraint(j, q)
            if active or gap <= _GAP_EPS:
                out.append(Constraint('limit', j, self.bounds[j][1], gap, None, row))
        return out

    def _impact_if_approaching(self, q, v, impulses, events):
        """
        Close at once a free constraint at or below gap 0 that approaches.

        Examples: a reset below the ground, or the foot coming straight back after a liftoff.
        """
        model, data, geometry = self.model, self.data, self.geometry
        slow = []
        if FREE in self.mode:
            pin.forwardKinematics(model, data, q)
            jacobians = False
            for k, mode in enumerate(self.mode):
                if mode != FREE:
                    continue
                p = geometry.contact_position(data, k)
                gap, basis = geometry.gap_and_basis(k, p[0], p[2])
                if gap > 0.0:
                    continue
                if not jacobians:
                    pin.computeJointJacobians(model, data, q)
                    jacobians = True
                rows = geometry.contact_rows(data, k, basis)
                u_n = rows[0].dot(v)
                if u_n < -_IMPACT_EPS:
                    return self._close(q, v, impulses, events)
                if u_n < 0.0:
                    slow.append(('contact', k, basis, rows))
        if geometry.bounds and False in self.limit_active:
            gaps = self._limit_gaps(q)
            rates = v.tolist()
            for j, active in enumerate(self.limit_active):
                if active or gaps[j] > 0.0:
                    continue
                _, side, _, iv, _, row = geometry.bounds[j]
                u_n = side * rates[iv]
                if u_n < -_IMPACT_EPS:
                    return self._close(q, v, impulses, events)
                if u_n < 0.0:
                    slow.append(('limit', j, None, row))
        if slow:
            a_free = pin.aba(self.model, self.data, q, v, self._force)
            self._kinematics(q, v)
            for kind, index, basis, rows in slow:
                a_n = rows[0] @ a_free
                if kind == 'contact':
                    a_n += self.geometry.contact_jdot_v(self.data, index, basis)[0]
                if a_n < 0.0:
                    return self._close(q, v, impulses, events)
        return v

    def _close(self, q, v, impulses, events, initial=False):
        """
        Impact of every closed constraint (velocity-level NCP), then the new active set.

        Accumulation rule (the end of a Zeno sequence: a rimless wheel rocking between two
        spokes, a ball bouncing with e < 1): an impact whose fastest approaching constraint is
        slower than ``accumulation_speed`` is plastic, and after any impact every closed
        constraint that would separate slower than that speed stays closed (its normal velocity,
        and the tangential velocity of the contacts that stuck, projected to zero along
        M^-1 W^T); the acceleration-level problem then decides which constraints stay active.
        """
        closed = self._closed_candidates(q, v)
        if not closed:
            return v
        W, blocks = blocks_for(closed, self.contact.friction)
        u = W @ v
        approaching = [blk for blk in blocks if u[blk.start] < -_VELOCITY_EPS]
        if approaching:
            kinds = {c.kind for c, blk in zip(closed, blocks) if blk in approaching}
            events.append('touchdown' if 'contact' in kinds else 'limit')
            minv = self._minv(q)
            minv_wt = minv @ W.T
            b = u.copy()
            speed = max(-u[blk.start] for blk in approaching)
            accumulating = speed < self.params.accumulation_speed
            e = 0.0 if accumulating else self.contact.restitution
            for blk in blocks:
                if u[blk.start] < 0.0:
                    b[blk.start] += e * u[blk.start]
            G = W @ minv_wt
            sol = self._solve(G, b, blocks)
            lam = sol.lam
            v = v + minv_wt @ lam
            extra = self._close_slow_separations(W, minv_wt, G, v, lam, blocks)
            if extra is not None:
                v = v + minv_wt @ extra
                lam = lam + extra
                events.append('accumulation')
            elif accumulating:
                events.append('accumulation')
            for c, blk in zip(closed, blocks):
                if c.kind == 'contact':
                    impulses[c.index] += lam[blk.start:blk.start + blk.size] @ \
                        c.basis[:blk.size]
        return self._resolve(q, v, impulses, events)

    def _close_slow_separations(self, W, minv_wt, G, v, lam, blocks):
        """
        Impulse that stops the closed constraints that separate too slowly.

        It zeroes the normal velocity of every closed constraint separating slower than
        ``accumulation_speed`` (and keeps the constraints that pushed closed, sticking contacts
        without tangential velocity); None if no constraint separates that slowly.
        """
        u = W @ v
        limit = self.params.accumulation_speed
        rows = []
        slow = False
        for blk in blocks:
            s = blk.start
            if u[s] >= limit:
                continue  # a real separation: it flies off
            rows.append(s)
            slow = slow or u[s] > _VELOCITY_EPS
            if blk.size > 1 and lam[s] > 0.0:
                tangential = lam[s + 1:s + blk.size]
                if math.sqrt(float(tangential @ tangential)) < blk.mu * lam[s] * (1.0 - 1e-9):
                    rows += list(range(s + 1, s + blk.size))
        if not slow:
            return None
        # least squares: the closed constraints may be redundant (two spokes of a rigid wheel)
        delta = _least_squares(G[np.ix_(rows, rows)], -u[rows])
        extra = np.zeros(len(u))
        extra[rows] = delta
        return extra

    def _resolve(self, q, v, impulses=None, events=None):
        """
        Active set of the closed constraints with zero normal velocity.

        It is the acceleration-level complementarity problem (sliding contacts keep their friction
        direction). Returns v.

        A slide may have no consistent continuation (Painlevé's paradox: with the sliding
        friction force the contact would be pushed into the obstacle whatever the normal force;
        the problem then has no solution, e.g. a foot that an impact elsewhere set sliding by
        2e-4 m/s while its leg's stiff geometry couples friction into the normal direction).
        The slide then stops in a tangential impact (an impact without collision, Génot &
        Brogliato 1999), the same impulse a velocity-level (time-stepping) step gives, and the
        active set is solved again with the contact at rest. Before, such a contact was left
        free with its normal acceleration pointing into the obstacle: it touched down again
        microseconds later, and the stance foot and knee stop of the Kneed Walker alternated
        without end (docs/physics.md).
        """
        for attempt in range(2):
            stats = list(self._stats)
            closed, candidates, dirs, sol = self._active_set_problem(q, v)
            if (sol is None or sol.converged or attempt == 1
                    or all(d is None for d in dirs)):
                break
            dv, lam, W = self._tangential_impact(q, v, candidates)
            if dv is None:
                break
            # the solve that found no consistent slide is not a solver failure: it is resolved
            self._stats = stats
            v = v + dv
            if events is not None:
                events.append('tangential_impact')
            if impulses is not None:
                _, blocks = blocks_for(candidates, self.contact.friction)
                for c, blk in zip(candidates, blocks):
                    if c.kind == 'contact':
                        impulses[c.index] += lam[blk.start:blk.start + blk.size] @ \
                            c.basis[:blk.size]
        self._apply_active_set(q, closed, candidates, dirs, sol)
        return v

    def _active_set_problem(self, q, v):
        """
        Return the closed constraints, the candidates for the active set (zero normal velocity).

        With them come their fixed sliding directions (None: at rest) and the acceleration-level
        solution (None if there is no candidate).
        """
        closed = self._closed_candidates(q, v)
        self._kinematics(q, v)
        mu = self.contact.friction
        rate = self.params.drift_correction_rate
        candidates, dirs, offsets = [], [], []
        for c in closed:
            u = c.rows @ v
            if u[0] > _VELOCITY_EPS:
                continue  # separating (a bounce): stays free
            if c.kind == 'contact':
                k = c.index
                jdv = self.geometry.contact_jdot_v(self.data, k, c.basis)
                p = self.geometry.contact_position(self.data, k)
                drift = np.zeros(len(u))
                drift[0] = c.gap
                if self.mode[k] == STICK and self.anchor[k] is not None:
                    drift[1:] = c.basis[1:self.dim] @ p - self.anchor[k]
                speed = math.sqrt(float(u[1:] @ u[1:]))
                if speed > _SLIDE_EPS:
                    dirs.append(tuple(u[1:] / speed))
                    drift[1:] = 0.0
                else:
                    dirs.append(None)
                offsets.append(jdv + 2.0 * rate * u + rate * rate * drift)
            else:
                dirs.append(None)
                offsets.append(2.0 * rate * u + rate * rate * np.array((c.gap,)))
            candidates.append(c)
        if not candidates:
            return closed, candidates, dirs, None
        a_free = pin.aba(self.model, self.data, q, v, self._force).copy()
        minv = self._minv(q)
        W, blocks = blocks_for(candidates, mu, dirs)
        minv_wt = minv @ W.T
        b = W @ a_free + np.concatenate(offsets)
        return closed, candidates, dirs, self._solve(W @ minv_wt, b, blocks)

    def _tangential_impact(self, q, v, candidates):
        """
        Velocity jump that stops slides with no consistent continuation.

        It solves the plastic velocity-level problem of the candidates (Coulomb cones) on its
        closed branch. At an exactly zero approach, 0 solves that problem too (the
        Painlevé-inconsistent free motion); the closed branch is the limit of a vanishing approach.
        It is found as an active set: every candidate closed and every contact sticking (velocity 0
        on all their rows, minimum-norm least squares), dropping the constraints that would pull,
        and is accepted only if it solves the complementarity problem (impulses in the cones, no
        dropped constraint approaching). Returns (dv, Lambda, W), or (None, None, None).
        """
        W, blocks = blocks_for(candidates, self.contact.friction)
        minv_wt = self._minv(q) @ W.T
        G = W @ minv_wt
        u = W @ v
        closed = list(blocks)
        lam = np.zeros(len(u))
        while closed:
            rows = [r for blk in closed for r in range(blk.start, blk.start + blk.size)]
            lam = np.zeros(len(u))
            lam[rows] = _least_squares(G[np.ix_(rows, rows)], -u[rows])
            pulling = [blk for blk in closed if lam[blk.start] < 0.0]
            if not pulling:
                break
            closed = [blk for blk in closed if blk not in pulling]
        if not closed or ncp.residual(G, u, lam, blocks) > self.params.solver_tolerance:
            return None, None, None
        return minv_wt @ lam, lam, W

    def _apply_active_set(self, q, closed, candidates, dirs, sol):
        """Modes from the acceleration-level solution of :meth:`_active_set_problem`."""
        mu = self.contact.friction
        previous = list(self.mode)
        for k in range(self.n_contacts):
            self.mode[k] = FREE
        self.limit_active = [False] * len(self.bounds)
        if sol is None:
            self._shift_free_closed(closed)
            return
        blocks = blocks_for(candidates, mu, dirs)[1]
        for c, blk, d in zip(candidates, blocks, dirs):
            lam = sol.lam[blk.start:blk.start + blk.size]
            if not lam[0] > 0.0:
                continue
            if c.kind == 'limit':
                self.limit_active[c.index] = True
                continue
            k = c.index
            if d is not None:
                self.mode[k] = SLIP
                self.slip_dir[k] = np.array(d)
                continue
            lam_t = lam[1:]
            norm = math.sqrt(float(lam_t @ lam_t))
            if norm < mu * lam[0] * (1.0 - 1e-9):
                if previous[k] != STICK or self.anchor[k] is None:
                    p = self.geometry.contact_position(self.data, k)
                    self.anchor[k] = c.basis[1:self.dim] @ p
                self.mode[k] = STICK
            else:
                # at rest on a frictionless contact (mu = 0, lambda_T = 0) the direction is
                # arbitrary: the friction column is W_N whatever it is
                self.mode[k] = SLIP
                self.slip_dir[k] = -lam_t / norm if norm > 0.0 else np.eye(self.dim - 1)[0]
        for k in range(self.n_contacts):
            if self.mode[k] != STICK:
                self.anchor[k] = None
        self._shift_free_closed(closed)

    def _shift_free_closed(self, closed):
        """
        Give the touchdown offset to the closed constraints a resolve left free.

        See _GAP_EPS.
        """
        for c in closed:
            shift = _GAP_EPS - min(c.gap, 0.0)
            if c.kind == 'contact':
                if self.mode[c.index] == FREE:
                    self._shift[c.index] = shift
            elif not self.limit_active[c.index]:
                self._shift[self.n_contacts + c.index] = shift

    def _solve(self, G, b, blocks):
        p = self.params
        sol = ncp.solve(G, b, blocks, tolerance=p.solver_tolerance,
                        max_iterations=p.max_iterations, enumerate_modes=True)
        stats = self._stats
        stats[0] = max(stats[0], sol.iterations)
        stats[1] = max(stats[1], sol.residual)
        stats[2] = stats[2] and sol.converged
        return sol


__all__ = [
    'EventDrivenIntegrator',
    'EventLimitExceeded',
    'EventParams',
    'EVENT_MAX_CONTACTS_3D',
    'check_contact_count',
    'impact_map',
    'FREE',
    'STICK',
    'SLIP']
