# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
Moreau-Jean midpoint time-stepping with hard unilateral contacts and joint limits.

Friction is Coulomb's (Moreau 1988, "Unilateral contact and dry friction in finite freedom
dynamics"; Jean 1999).

One step of size dt::

    q_M = q (+) dt/2 v
    M(q_M) (v+ - v) = dt (S^T tau - h(q_M, v)) + W(q_M)^T Lambda
    u+ = W v+,  Newton restitution on the normal rows: u_N+ + e u_N- >= 0 ⟂ Lambda_N >= 0,
    Coulomb on the tangential rows (velocity level)
    q+ = q_M (+) dt/2 v+

The free velocity v_free = v + dt aba(q_M, v, tau) comes from pinocchio's ABA, the contact
correction from M^-1 W^T Lambda, and Lambda from the block NCP solver of
:mod:`dodo_sim.physics.solver` (exact per contact). A constraint enters the step when its
midpoint gap is below ``ACTIVATION_MARGIN_M`` or the free step would close it.

The scheme is velocity-level: the gap may become slightly negative in an impact step, or drift
open while a contact pushes. With ``position_correction`` the gaps of the constraints that pushed
are closed at the end of the step along the mass-weighted normal directions M^-1 W_N^T
(velocities untouched).
"""
from __future__ import annotations

from dataclasses import dataclass
import math
from typing import NamedTuple

import numpy as np
import pinocchio as pin

from . import solver as ncp
from .contact import blocks_for, Constraint, ConstraintGeometry, ContactParams
from .fast import pack_model
from .kernels import correction
from .kernels.buffers import pack_buffers
from .kernels.step import step as compiled_step
from .solver import Block, STICK_MARGIN

SOLVERS = ncp.METHODS

# A constraint whose midpoint gap is below this is in the active set. Slightly positive so that a
# foot resting on the ground after position correction stays active instead of alternating
# between a free step and a double-impulse step (the impulse is still zero when it separates).
ACTIVATION_MARGIN_M = 1e-5
# A contact farther than this (m) is not closed by any step: at max_speed 1e3 m/s and dt <= 1 ms
# a point moves at most 0.5 m in half a step. Its jacobian is not computed.
_FAR_M = 0.5
_WORLD = pin.Convention.WORLD


@dataclass(frozen=True)
class TimeSteppingParams:
    """
    Tuning of the Moreau-Jean time-stepping integrator and its contact solver.

    Fields:
        solver: 'gauss_seidel' (block NSGS, default) or 'jacobi' (block Jacobi).
        relaxation: SOR/JOR factor omega in (0, 2).
        max_iterations: sweep cap per step.
        tolerance: NCP residual at which a solve counts as converged, m/s.
        position_correction: project penetration out after each contact step.
        compiled: use the compiled step of :mod:`dodo_sim.physics.fast` when the model
            qualifies (same results as the generic step to rounding; much faster).
    """

    solver: str = 'gauss_seidel'
    relaxation: float = 1.0
    max_iterations: int = 100
    tolerance: float = 1e-10
    position_correction: bool = True
    compiled: bool = True


class StepReport(NamedTuple):
    """
    What one physics step did at the constraints.

    Fields:
        contact_impulses: (n_contacts, 3) world impulse on each contact frame, N*s.
        in_contact: per contact frame, it carries a normal force at the end of the step.
        iterations / residual / converged: NCP solver statistics (0 / 0.0 / True without one).
        events: hybrid events located in the step (event-driven integrator).
        min_normal_velocity: smallest post-step normal velocity of a constraint that carried an
            impulse, m/s (inf without one).
        contact_positions: (n_contacts, 3) world positions of the contact frames at q+, m, when
            the step computed them (the compiled step), else None.
    """

    contact_impulses: np.ndarray
    in_contact: tuple
    iterations: int = 0
    residual: float = 0.0
    converged: bool = True
    events: tuple = ()
    min_normal_velocity: float = float('inf')
    contact_positions: np.ndarray | None = None


def _spd_solve_or_least_squares(A: np.ndarray, r: np.ndarray) -> np.ndarray:
    """
    Return x with A x = r for a symmetric positive semi-definite A.

    It is a Cholesky solve when A is well conditioned, else least squares (several closed contacts
    may be redundant, e.g. two spokes of a rigid wheel and a third point).
    """
    try:
        lower = np.linalg.cholesky(A)
    except np.linalg.LinAlgError:
        lower = None
    if lower is not None:
        pivots = np.diagonal(lower)
        if pivots.min() ** 2 > 1e-12 * pivots.max() ** 2:
            return np.linalg.solve(A, r)
    return np.linalg.lstsq(A, r, rcond=None)[0]


class MoreauJeanIntegrator:
    """
    Time-stepping integrator.

    It owns its pinocchio Data (``data`` keeps the midpoint quantities of a step, ``check_data``
    evaluates end-of-step gaps).
    """

    name = 'timestepping'

    def __init__(self, robot, terrain, contact: ContactParams, params: TimeSteppingParams,
                 joint_limits: bool = True):
        if params.solver not in SOLVERS:
            raise ValueError(f'unknown solver {params.solver!r}; choose one of {SOLVERS}')
        self.robot = robot
        self.model = robot.model
        self.data = robot.model.createData()
        self.check_data = robot.model.createData()
        self.geometry = ConstraintGeometry(robot, terrain, joint_limits)
        self.contact = contact
        self.params = params
        self.n_contacts = len(self.geometry.frame_ids)
        self._free_report = StepReport(np.zeros((self.n_contacts, 3)),
                                       (False,) * self.n_contacts)
        self.packed = None
        if params.compiled and params.relaxation == 1.0:
            self.packed = pack_model(robot, self.geometry)
        if self.packed is not None:
            self._compiled_step = compiled_step
            self._compiled_buffers = pack_buffers(
                self.packed, np.arange(robot.nv), plane=self.geometry.plane,
                friction=float(contact.friction), restitution=float(contact.restitution),
                margin=ACTIVATION_MARGIN_M, far=_FAR_M, tolerance=float(params.tolerance),
                max_iterations=int(params.max_iterations), jacobi=params.solver == 'jacobi',
                position_correction=bool(params.position_correction))

    @staticmethod
    def compiled_report(impulses, positions, stats) -> StepReport:
        values = stats.tolist()
        return StepReport(impulses, tuple(flag != 0.0 for flag in values[4:]), int(values[0]),
                          values[1], values[2] != 0.0, (), values[3], positions)

    def compiled_buffers(self, actuated_idx_v):
        """
        Return the compiled step's buffers with the given actuated torques.

        The torques of ``actuated_idx_v`` are their input (the Simulator's fast lane); None without
        a compiled step.
        """
        if self.packed is None:
            return None
        params, contact = self.params, self.contact
        return pack_buffers(
            self.packed, actuated_idx_v, plane=self.geometry.plane,
            friction=float(contact.friction), restitution=float(contact.restitution),
            margin=ACTIVATION_MARGIN_M, far=_FAR_M, tolerance=float(params.tolerance),
            max_iterations=int(params.max_iterations), jacobi=params.solver == 'jacobi',
            position_correction=bool(params.position_correction))

    def reset(self, q: np.ndarray, v: np.ndarray) -> None:
        """No state is carried between steps."""

    def _integrate(self, q, dv):
        return q + dv if self.robot.vector_space else pin.integrate(self.model, q, dv)

    def step(self, q: np.ndarray, v: np.ndarray, generalized_force: np.ndarray, dt: float):
        """
        Advance (q, v) by dt.

        Returns (q+, v+, StepReport).
        """
        if self.packed is not None:
            q_next, v_next, impulses, positions, stats = self._compiled_step(
                q, v, generalized_force, dt, *self._compiled_buffers)
            return q_next, v_next, self.compiled_report(impulses, positions, stats)
        model, data = self.model, self.data
        half = 0.5 * dt
        q_mid = self._integrate(q, half * v)
        # ABA with the WORLD convention leaves the placements, joint jacobians and the
        # factorisation that computeMinverse(model, data) reuses, all at q_mid.
        v_free = v + dt * pin.aba(model, data, q_mid, v, generalized_force, _WORLD)
        active = self._active_constraints(q_mid, v_free, half)
        if not active:
            return self._integrate(q_mid, half * v_free), v_free, self._free_report

        minv = pin.computeMinverse(model, data)
        if len(active) == 1:
            W = active[0].rows
            blocks = [Block(0, W.shape[0], self.contact.friction
                            if active[0].kind == 'contact' else 0.0)]
        else:
            W, blocks = blocks_for(active, self.contact.friction)
        minv_wt = minv.dot(W.T)
        G = W.dot(minv_wt)
        b = W.dot(v_free)
        e = self.contact.restitution
        if e > 0.0:
            u_pre = W.dot(v)
            for blk in blocks:
                if u_pre[blk.start] < 0.0:
                    b[blk.start] += e * u_pre[blk.start]
        params = self.params
        sol = ncp.solve(G, b, blocks, tolerance=params.tolerance,
                        max_iterations=params.max_iterations, method=params.solver,
                        relaxation=params.relaxation)
        lam = sol.lam
        v_next = v_free + minv_wt.dot(lam)
        q_next = self._integrate(q_mid, half * v_next)
        impulses = np.zeros((self.n_contacts, 3))
        in_contact = [False] * self.n_contacts
        pushing = []
        lam_list = lam.tolist()
        for c, blk in zip(active, blocks):
            pushed = lam_list[blk.start] > 0.0
            if pushed:
                pushing.append((c, blk))
            if c.kind == 'contact':
                impulses[c.index] = lam[blk.start:blk.start + blk.size].dot(c.basis[:blk.size])
                in_contact[c.index] = pushed
        min_u = float('inf')
        if pushing:
            u_next = W.dot(v_next).tolist()
            min_u = min(u_next[blk.start] for _, blk in pushing)
            if params.position_correction:
                q_next = self._correct_positions(q_next, pushing, W, minv_wt, G, lam_list)
        return q_next, v_next, StepReport(impulses, tuple(in_contact), sol.iterations,
                                          sol.residual, sol.converged, (), min_u)

    def _active_constraints(self, q_mid, v_free, half) -> list:
        geometry = self.geometry
        data = self.data
        active = []
        near = []
        for k in range(self.n_contacts):
            p = geometry.contact_position(data, k)
            gap, basis = geometry.gap_and_basis(k, p[0], p[2])
            if gap <= _FAR_M:     # farther, no step closes it: no jacobian needed
                near.append((k, p, gap, basis))
        reach = self._reach(near, v_free, half) if len(near) > 1 else math.inf
        for k, _, gap, basis in near:
            if gap > ACTIVATION_MARGIN_M and gap > reach:
                continue          # the free step cannot close it either (see _reach)
            rows = geometry.contact_rows(data, k, basis)
            # a free step that would end below the ground enters the active set too
            if gap <= ACTIVATION_MARGIN_M or gap + half * rows[0].dot(v_free) < 0.0:
                active.append(Constraint('contact', k, 0, gap, basis, rows))
        if geometry.bounds:
            values, rates = q_mid.tolist(), v_free.tolist()
            for i, side, iq, iv, bound, row in geometry.bounds:
                gap = side * (values[iq] - bound)
                if gap <= ACTIVATION_MARGIN_M or gap + half * side * rates[iv] < 0.0:
                    active.append(Constraint('limit', i, side, gap, None, row))
        return active

    def _reach(self, near, v_free, half) -> float:
        """
        Return a bound on how far any contact point moves in half a step at ``v_free``, m.

        The broad phase of the generic path (the compiled 2-D step has its own, kernels/step.py):
        a point's speed is at most sum_j |v_j| * max(1, extent), extent bounding the distance from
        any joint to any point (a joint's rate turns a lever at most that long; a prismatic or
        base translation moves it at |v_j|; the free flyer's local-frame rates are norm-preserving
        components). Measured from the root joint: the largest point offset plus the largest
        joint offset. A point farther than that and than the activation margin is not active:
        the active set, and so the step, is the same as with every point's rows (Solo-12 with
        link collisions: 4 of 92 points need rows while it stands).
        """
        data = self.data
        centre = data.oMi[min(1, self.model.njoints - 1)].translation
        offsets = np.array([p for _, p, _, _ in near] + [
            data.oMi[j].translation for j in range(1, self.model.njoints)]) - centre
        distances = np.sqrt(np.einsum('ij,ij->i', offsets, offsets))
        points, joints = float(distances[:len(near)].max()), float(distances[len(near):].max(
            initial=0.0))
        speed = float(np.abs(v_free).sum())
        return half * speed * max(1.0, points + joints) * (1.0 + 1e-9) + 1e-12

    def _correct_positions(self, q_next, pushing, W, minv_wt, G, lam):
        """
        Close the gap of the constraints that pushed in this step.

        A constraint that carried an impulse is closed at the end of the step up to the
        midpoint rule's O(dt^2) error: it may end slightly below the ground (after an impact) or
        slightly above it (the constraint velocity is zero at q_M, not at q+). Both are removed
        by the smallest mass-weighted displacement M^-1 W_C^T delta (a projection on the
        constraint manifold, Acary 2013); velocities are untouched. W_C holds the normal rows of
        the constraints that pushed and the tangential rows of the contacts that stuck (impulse
        strictly inside the friction cone), whose tangential displacement is held at zero: a
        normal-only projection moves a sticking foot sideways by G_tn/G_nn times the gap (up to
        1.1 mm in a touchdown step of the hopper, and a steady creep while it rests). Without
        the correction a resting foot creeps up by ~3e-8 m per 0.1 ms step on the hopper and
        leaves the active set every few ms. When nearly dependent constraints ask for different
        moves, the exact projection is ill posed (Solo-12 on its side turned a knee by 23 rad in
        one step and gained 5.6 J); it is then made in the well-determined directions only
        (kernels/linalg.py ``projection_is_well_posed``).
        """
        geometry = self.geometry
        targets = []
        rows = []
        check = None
        values = None
        for c, blk in pushing:
            if c.kind == 'contact':
                if check is None:
                    pin.forwardKinematics(self.model, self.check_data, q_next)
                    check = self.check_data
                p = geometry.contact_position(check, c.index)
                gap = geometry.gap_and_basis(c.index, p[0], p[2])[0]
            else:
                if values is None:
                    values = q_next.tolist()
                lim = geometry.limits[c.index]
                gap = c.side * (values[lim.idx_q] - (lim.lower if c.side > 0 else lim.upper))
            targets.append(-gap)
            rows.append(blk.start)
        if not any(targets):
            return q_next
        for c, blk in pushing:
            if c.kind == 'contact' and blk.size > 1 and sticking(lam, blk):
                rows.extend(range(blk.start + 1, blk.start + blk.size))
                targets.extend([0.0] * (blk.size - 1))
        if len(rows) == 1:
            r = rows[0]
            return self._integrate(q_next, minv_wt[:, r] * (targets[0] / G[r, r]))
        dq = correction.position_correction(G, minv_wt, rows, targets)
        if dq is not None:
            return self._integrate(q_next, dq)
        minv_wc = minv_wt[:, rows]
        G_cc = G[np.ix_(rows, rows)]
        targets = np.array(targets)
        delta = correction.bounded_multipliers(
            G_cc, targets, _spd_solve_or_least_squares(G_cc, targets))
        return self._integrate(q_next, minv_wc.dot(delta))


def sticking(lam, blk) -> bool:
    """
    Return whether the contact block's impulse lies strictly inside its friction cone (it sticks).

    That is, |lambda_T| < mu lambda_N (1 - STICK_MARGIN).
    """
    normal = lam[blk.start]
    tangential = math.sqrt(sum(lam[r] * lam[r] for r in range(blk.start + 1,
                                                              blk.start + blk.size)))
    return tangential < blk.mu * normal * (1.0 - STICK_MARGIN)


__all__ = ['MoreauJeanIntegrator', 'TimeSteppingParams', 'StepReport', 'SOLVERS',
           'ACTIVATION_MARGIN_M']
