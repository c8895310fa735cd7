"""Event-driven hybrid integration of the hopper with a hard point contact (seeds 001/003/004).

Modes: FLIGHT, STICK (foot fixed), SLIP (foot sliding, Coulomb force opposing the slip).
Smooth phases are integrated with classical RK4 steps; the events
    FLIGHT: gap(q) reaches 0                            -> touchdown impact
    STICK:  lambda_N reaches 0 / |lambda_T| reaches mu lambda_N  -> liftoff / slip
    SLIP:   lambda_N reaches 0 / tangential velocity reaches 0   -> liftoff / stick check
are located inside a step by Brent root finding on the RK4 step length (time tolerance
``time_tolerance_s``), so touchdown happens at the gap's zero, not after penetration.

Touchdown impact map: M (v+ - v-) = W^T Lambda with W v+ = [-e gamma_N-, 0] (stick impact) when
Lambda lies in the friction cone, else a sliding impact with Lambda_T = -s mu Lambda_N. For a
plastic sticking impact this is v+ = N_s v- (DESIGN.md section 5).

Stance: the KKT system [M -W^T; W 0][a; lambda] = [tau - h; -Wdot v - 2 w W v - w^2 g] with
Baumgarte drift control (rate w = ``drift_correction_rate``) on the gap and, in STICK, on the
tangential drift from the touchdown point. Solved as a = a_free + M^-1 W^T lambda,
(W M^-1 W^T) lambda = rhs - W a_free, with a_free from pinocchio's ABA.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pinocchio as pin
from scipy.optimize import brentq

from .contact import ContactParams, ContactStep, contact_frame, contact_jacobians

FLIGHT, STICK, SLIP = 'flight', 'stick', 'slip'

# Velocities below this (m/s) count as zero when classifying a contact after an event.
_VELOCITY_EPS = 1e-9


@dataclass(frozen=True)
class EventParams:
    """Attributes:
        drift_correction_rate: Baumgarte rate w of the stance constraint (critically damped), 1/s.
        time_tolerance_s: accuracy of located event times, s.
        max_events_per_step: guard against Zeno sequences within one physics step.
    """

    drift_correction_rate: float = 200.0
    time_tolerance_s: float = 1e-12
    max_events_per_step: int = 50


@dataclass
class _Eval:
    """Dynamics evaluated at one (q, v) in one mode."""

    accel: np.ndarray
    lam_n: float = 0.0
    lam_t: float = 0.0
    gap: float = 0.0
    gamma_t: float = 0.0
    force_world: tuple = (0.0, 0.0)
    accel_t: float = 0.0  # tangential foot acceleration, m/s^2


def impact_map(minv: np.ndarray, w: np.ndarray, v_minus: np.ndarray, contact: ContactParams):
    """Velocity jump of a point-contact impact. Returns (v+, Lambda_N, Lambda_T).

    Solves M (v+ - v-) = W^T Lambda with W = [W_N; W_T] (2x4) and target contact velocities
    gamma_N+ = -e gamma_N-, gamma_T+ = 0 (sticking impact). If that Lambda leaves the friction cone,
    the impact slides: Lambda_T = -s mu Lambda_N with s the sense the foot keeps sliding in.
    For e = 0 and a sticking impact this is v+ = N_s v- of DESIGN.md section 5.
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
    """Event-driven integrator; owns its pinocchio Data and its contact mode."""

    name = 'event'

    def __init__(self, leg, terrain, contact: ContactParams, params: EventParams):
        self.model = leg.model
        self.data = leg.model.createData()
        self.foot = leg.foot_frame_id
        self.terrain = terrain
        self.contact = contact
        self.params = params
        self._zero = np.zeros(leg.model.nv)
        self.mode = FLIGHT
        self.slip_sign = 0.0
        self.anchor_t = 0.0
        self._classify = True
        self._force = self._zero

    # -- public ----------------------------------------------------------------------------

    def reset(self, q: np.ndarray, v: np.ndarray) -> None:
        self.mode = FLIGHT
        self._classify = True

    def step(self, q: np.ndarray, v: np.ndarray, generalized_force: np.ndarray, dt: float):
        """Advance (q, v) by dt, locating and resolving events. Returns (q+, v+, ContactStep)."""
        self._force = generalized_force
        remaining = dt
        impulse = np.zeros(2)
        normal_impulse = 0.0
        events = []
        if self._classify:
            self._classify = False
            q, v, jump = self._classify_state(q, v, events)
            impulse += jump
        for _ in range(self.params.max_events_per_step):
            if self.mode == FLIGHT:
                q, v, jump = self._touchdown_if_penetrating(q, v, events)
                impulse += jump
            start = self._evaluate(q, v, generalized_force)
            start_values = self._event_values(start, v)
            violated = self._violated_at_start(start_values)
            if violated is not None:
                # the command changed at this step boundary and the contact mode no longer holds
                q, v, jump = self._handle_event(violated, q, v, generalized_force, events)
                impulse += jump
                continue
            q1, v1, end, lam_int, n_int = self._rk4(q, v, generalized_force, remaining, start)
            end_values = self._event_values(end, v1)
            crossed = [i for i, (a, b) in enumerate(zip(start_values, end_values))
                       if a > 0.0 and b <= 0.0]
            if not crossed:
                q, v = q1, v1
                impulse += lam_int
                normal_impulse += n_int
                break
            when, which = min((self._locate(q, v, generalized_force, start, i, remaining), i)
                              for i in crossed)
            q, v, _, lam_int, n_int = self._rk4(q, v, generalized_force, when, start)
            impulse += lam_int
            normal_impulse += n_int
            remaining -= when
            q, v, jump = self._handle_event(which, q, v, generalized_force, events)
            impulse += jump
            if remaining <= 0.0:
                break
        else:
            raise RuntimeError(f'more than {self.params.max_events_per_step} contact events in one '
                               f'physics step of {dt} s (Zeno behaviour?)')
        in_contact = self.mode != FLIGHT
        return q, v, ContactStep(in_contact=in_contact, impulse_normal=normal_impulse,
                                 impulse_world=(float(impulse[0]), float(impulse[1])),
                                 events=tuple(events))

    # -- dynamics --------------------------------------------------------------------------

    def _kinematics(self, q, v):
        """Foot position, 2x4 jacobian (world x, z) and Jdot v of the foot point."""
        model, data = self.model, self.data
        pin.forwardKinematics(model, data, q, v, self._zero)
        pin.computeJointJacobians(model, data, q)
        foot = pin.updateFramePlacement(model, data, self.foot).translation
        jac = pin.getFrameJacobian(model, data, self.foot, pin.LOCAL_WORLD_ALIGNED)[0:3:2]
        jdot_v = pin.getFrameClassicalAcceleration(model, data, self.foot,
                                                   pin.LOCAL_WORLD_ALIGNED).linear
        return (foot[0], foot[2]), jac, (jdot_v[0], jdot_v[2])

    def _contact_terms(self, q, v):
        foot, jac, jdot_v = self._kinematics(q, v)
        gap, normal, tangent = contact_frame(self.terrain, foot[0], foot[1])
        w = contact_jacobians(jac, normal, tangent)
        wdot_v = np.array((normal[0] * jdot_v[0] + normal[1] * jdot_v[1],
                           tangent[0] * jdot_v[0] + tangent[1] * jdot_v[1]))
        tangential_position = tangent[0] * foot[0] + tangent[1] * foot[1]
        return gap, normal, tangent, w, wdot_v, tangential_position

    def _evaluate(self, q, v, generalized_force) -> _Eval:
        a_free = pin.aba(self.model, self.data, q, v, generalized_force).copy()
        if self.mode == FLIGHT:
            return _Eval(a_free, gap=self._gap(q))
        gap, normal, tangent, w, wdot_v, tangential_position = self._contact_terms(q, v)
        minv = pin.computeMinverse(self.model, self.data, q)
        gamma = w @ v
        rate = self.params.drift_correction_rate
        mu = self.contact.friction
        if self.mode == STICK:
            drift = np.array((gap, tangential_position - self.anchor_t))
            rhs = -wdot_v - 2.0 * rate * gamma - rate * rate * drift
            minv_wt = minv @ w.T
            (g_nn, g_nt), (g_tn, g_tt) = (w @ minv_wt).tolist()
            b_n, b_t = (rhs - w @ a_free).tolist()
            det = g_nn * g_tt - g_nt * g_tn  # closed-form 2x2 solve: np.linalg.solve costs ~8 us
            lam_n = (g_tt * b_n - g_nt * b_t) / det
            lam_t = (g_nn * b_t - g_tn * b_n) / det
            accel = a_free + minv_wt @ np.array((lam_n, lam_t))
        else:
            direction = w[0] - self.slip_sign * mu * w[1]
            rhs_n = -wdot_v[0] - 2.0 * rate * gamma[0] - rate * rate * gap
            minv_d = minv @ direction
            lam_n = float((rhs_n - w[0] @ a_free) / (w[0] @ minv_d))
            accel = a_free + minv_d * lam_n
            lam_t = -self.slip_sign * mu * lam_n
        force = (normal[0] * lam_n + tangent[0] * lam_t, normal[1] * lam_n + tangent[1] * lam_t)
        return _Eval(accel, lam_n, lam_t, gap, float(gamma[1]), force,
                     float(w[1] @ accel) + wdot_v[1])

    def _rk4(self, q, v, generalized_force, h, start: _Eval):
        """One RK4 step of length h. Returns q, v, end evaluation, world impulse, normal impulse."""
        k1 = start
        k2 = self._evaluate(q + 0.5 * h * v, v + 0.5 * h * k1.accel, generalized_force)
        v2 = v + 0.5 * h * k1.accel
        k3 = self._evaluate(q + 0.5 * h * v2, v + 0.5 * h * k2.accel, generalized_force)
        v3 = v + 0.5 * h * k2.accel
        v4 = v + h * k3.accel
        k4 = self._evaluate(q + h * v3, v4, generalized_force)
        q1 = q + (h / 6.0) * (v + 2.0 * v2 + 2.0 * v3 + v4)
        v1 = v + (h / 6.0) * (k1.accel + 2.0 * k2.accel + 2.0 * k3.accel + k4.accel)
        end = self._evaluate(q1, v1, generalized_force)
        impulse = (h / 6.0) * (np.array(k1.force_world) + 2.0 * np.array(k2.force_world)
                               + 2.0 * np.array(k3.force_world) + np.array(k4.force_world))
        normal_impulse = (h / 6.0) * (k1.lam_n + 2.0 * k2.lam_n + 2.0 * k3.lam_n + k4.lam_n)
        return q1, v1, end, impulse, normal_impulse

    # -- events ----------------------------------------------------------------------------

    def _event_values(self, ev: _Eval, v) -> tuple:
        """Event functions of the current mode; an event is a crossing from > 0 to <= 0."""
        if self.mode == FLIGHT:
            return (ev.gap,)
        if self.mode == STICK:
            return (ev.lam_n, self.contact.friction * ev.lam_n - abs(ev.lam_t))
        return (ev.lam_n, self.slip_sign * ev.gamma_t)

    def _violated_at_start(self, values):
        """Index of a contact condition already violated at the start of a step, else None.

        The slip-stop condition is exempt: it is zero right after a slip starts.
        """
        if self.mode == STICK:
            for index, value in enumerate(values):
                if value <= 0.0:
                    return index
        elif self.mode == SLIP and values[0] <= 0.0:
            return 0
        return None

    def _locate(self, q, v, generalized_force, start, index, h_max) -> float:
        def value(h):
            _, v1, end, _, _ = self._rk4(q, v, generalized_force, h, start)
            return self._event_values(end, v1)[index]
        return brentq(value, 0.0, h_max, xtol=self.params.time_tolerance_s, rtol=1e-15)

    def _handle_event(self, index, q, v, generalized_force, events):
        if self.mode == FLIGHT:
            return self._touchdown(q, v, events)
        if index == 0:  # normal force reached zero
            events.append('liftoff')
            self.mode = FLIGHT
            return q, v, np.zeros(2)
        if self.mode == STICK:
            ev = self._evaluate(q, v, generalized_force)
            events.append('slip')
            self.mode = SLIP
            self.slip_sign = -math.copysign(1.0, ev.lam_t)
            return q, v, np.zeros(2)
        events.append('slip_stop')
        return self._enter_contact(q, v, events)

    def _gap(self, q) -> float:
        pin.forwardKinematics(self.model, self.data, q)
        foot = pin.updateFramePlacement(self.model, self.data, self.foot).translation
        return contact_frame(self.terrain, foot[0], foot[2])[0]

    def _classify_state(self, q, v, events):
        """Pick the mode for a state given by reset()."""
        self.mode = FLIGHT
        if self._gap(q) > 1e-9:
            return q, v, np.zeros(2)
        gap, _, _, w, _, _ = self._contact_terms(q, v)
        if float(w[0] @ v) < -_VELOCITY_EPS:
            return self._touchdown(q, v, events)
        return self._enter_contact(q, v, events)

    def _touchdown_if_penetrating(self, q, v, events):
        """A flight step that starts on/below the ground while approaching it (e.g. right after a
        liftoff the foot comes straight back) is a touchdown now."""
        gap = self._gap(q)
        if gap > 1e-9:
            return q, v, np.zeros(2)
        _, _, _, w, _, _ = self._contact_terms(q, v)
        if float(w[0] @ v) >= -_VELOCITY_EPS:
            return q, v, np.zeros(2)
        return self._touchdown(q, v, events)

    def _touchdown(self, q, v, events):
        """Impact map at touchdown; then classify the contact that follows."""
        events.append('touchdown')
        _, normal, tangent, w, _, _ = self._contact_terms(q, v)
        minv = pin.computeMinverse(self.model, self.data, q)
        v_plus, lam_n, lam_t = impact_map(minv, w, v, self.contact)
        jump = np.array((normal[0] * lam_n + tangent[0] * lam_t,
                         normal[1] * lam_n + tangent[1] * lam_t))
        if float(w[0] @ v_plus) > _VELOCITY_EPS:  # bounced (restitution > 0)
            self.mode = FLIGHT
            return q, v_plus, jump
        q, v_plus, _ = self._enter_contact(q, v_plus, events)
        return q, v_plus, jump

    def _enter_contact(self, q, v, events):
        """Choose the contact mode consistent with the forces for a foot on the ground with
        zero normal velocity: STICK if its force is in the friction cone; else SLIP in the
        sense the foot would accelerate (tangential velocity ~0) or keeps moving; else FLIGHT
        if the free foot accelerates away from the ground. If none is consistent (a
        Painleve-type jam of the locked-knee kind) the foot sticks while it pushes."""
        force = self._force
        _, _, _, w, wdot_v, tangential_position = self._contact_terms(q, v)
        self.anchor_t = tangential_position
        gamma_t = float(w[1] @ v)
        mu = self.contact.friction
        sliding = abs(gamma_t) > 1e-6
        self.mode = STICK
        stick = self._evaluate(q, v, force)
        if not sliding:
            if stick.lam_n > 0.0 and abs(stick.lam_t) <= mu * stick.lam_n:
                return q, v, np.zeros(2)
            senses = (-math.copysign(1.0, stick.lam_t), math.copysign(1.0, stick.lam_t))
        else:
            senses = (math.copysign(1.0, gamma_t),)
        self.mode = SLIP
        for sense in senses:
            self.slip_sign = sense
            slip = self._evaluate(q, v, force)
            if slip.lam_n > 0.0 and (sliding or sense * slip.accel_t >= 0.0):
                return q, v, np.zeros(2)
        self.mode = FLIGHT
        a_free = self._evaluate(q, v, force).accel
        if float(w[0] @ a_free) + wdot_v[0] >= 0.0 or stick.lam_n <= 0.0:
            return q, v, np.zeros(2)
        self.mode = STICK
        return q, v, np.zeros(2)
