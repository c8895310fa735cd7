"""Moreau-Jean midpoint time-stepping with a hard unilateral frictional point contact (seed 002).

One step of size dt:
    q_M = q + dt/2 v
    M(q_M)(v+ - v) = dt (S^T tau - h(q_M, v)) + W^T Lambda          (only if gap(q_M) <= 0)
    Lambda from the prox (Gauss-Seidel/SOR or Jacobi/JOR) iterations of contact.py
    q+ = q_M + dt/2 v+
Using M v_free = M v + dt (tau - h) = M v + dt M aba(q_M, v, tau), the free velocity comes from
pinocchio's ABA and the contact correction from M^-1 W^T Lambda.

Moreau's velocity-level scheme lets the foot sink by up to |gamma_N| dt/2 in the step of an impact.
With ``position_correction`` the remaining penetration of an active contact is projected out
after the step along the mass-weighted normal direction M^-1 W_N^T (velocities untouched), so the
gap stays >= 0 up to the linearisation error.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pinocchio as pin

from .contact import (ContactParams, ContactStep, contact_frame, contact_jacobians,
                      solve_contact_impulse)

SOLVERS = ('gauss_seidel', 'jacobi')

# A contact whose midpoint gap is below this is in the active set. Slightly positive so that a
# foot resting exactly on the ground after position correction stays active instead of
# alternating between a free step and a double-impulse step (the impulse is still zero when the
# foot separates: the inclusion only pushes).
ACTIVATION_MARGIN_M = 1e-5
# Below this midpoint gap a free step checks its end point for penetration.
NEAR_GROUND_M = 0.05


@dataclass(frozen=True)
class TimeSteppingParams:
    """Attributes:
        solver: 'gauss_seidel' (default) or 'jacobi'.
        relaxation: SOR/JOR factor omega in (0, 2) (Jacobi needs < 1 for coupled contacts).
        max_iterations: prox iteration cap per step.
        tolerance: stop when the impulse change is below tolerance * (1 + Lambda_N), N*s.
        position_correction: project penetration out after each contact step.
    """

    solver: str = 'gauss_seidel'
    relaxation: float = 1.0
    max_iterations: int = 100
    tolerance: float = 1e-12
    position_correction: bool = True


_NO_CONTACT = ContactStep()


class MoreauJeanIntegrator:
    """Time-stepping integrator; owns its pinocchio Data."""

    name = 'timestepping'

    def __init__(self, leg, terrain, contact: ContactParams, params: TimeSteppingParams):
        if params.solver not in SOLVERS:
            raise ValueError(f'unknown solver {params.solver!r}; choose one of {SOLVERS}')
        self.model = leg.model
        self.data = leg.model.createData()
        self.foot = leg.foot_frame_id
        self.terrain = terrain
        self.contact = contact
        self.params = params

    def reset(self, q: np.ndarray, v: np.ndarray) -> None:
        """Stateless between steps: nothing to reset."""

    def step(self, q: np.ndarray, v: np.ndarray, generalized_force: np.ndarray, dt: float):
        """Advance (q, v) by dt. Returns (q+, v+, ContactStep)."""
        model, data = self.model, self.data
        half = 0.5 * dt
        q_mid = q + half * v
        pin.forwardKinematics(model, data, q_mid)
        foot = pin.updateFramePlacement(model, data, self.foot).translation
        gap, normal, tangent = contact_frame(self.terrain, foot[0], foot[2])
        v_free = v + dt * pin.aba(model, data, q_mid, v, generalized_force)
        if gap > ACTIVATION_MARGIN_M:
            q_free = q_mid + half * v_free
            # A free step that would end below the ground (a fast foot, or strong joint
            # accelerations just after an impact) gets the contact in its active set too.
            if gap > NEAR_GROUND_M or self._gap(q_free) >= 0.0:
                return q_free, v_free, _NO_CONTACT

        minv = pin.computeMinverse(model, data, q_mid)
        jac = pin.computeFrameJacobian(model, data, q_mid, self.foot, pin.LOCAL_WORLD_ALIGNED)
        w = contact_jacobians(jac[0:3:2], normal, tangent)
        minv_wt = minv @ w.T
        delassus = w @ minv_wt
        params = self.params
        lam_n, lam_t, iterations, converged = solve_contact_impulse(
            delassus, w @ v_free, float(w[0] @ v), self.contact, method=params.solver,
            relaxation=params.relaxation, max_iterations=params.max_iterations,
            tolerance=params.tolerance)
        v_next = v_free + minv_wt @ np.array((lam_n, lam_t))
        q_next = q_mid + half * v_next
        if params.position_correction and lam_n > 0.0:
            q_next = self._project_out(q_next, minv_wt[:, 0], float(delassus[0, 0]))
        impulse = (normal[0] * lam_n + tangent[0] * lam_t, normal[1] * lam_n + tangent[1] * lam_t)
        return q_next, v_next, ContactStep(in_contact=lam_n > 0.0, impulse_normal=lam_n,
                                           impulse_world=impulse, iterations=iterations,
                                           converged=converged)

    def _gap(self, q: np.ndarray) -> float:
        pin.forwardKinematics(self.model, self.data, q)
        foot = pin.updateFramePlacement(self.model, self.data, self.foot).translation
        return contact_frame(self.terrain, foot[0], foot[2])[0]

    def _project_out(self, q: np.ndarray, direction: np.ndarray, g_nn: float) -> np.ndarray:
        """Remove penetration along the mass-weighted normal direction M^-1 W_N^T."""
        gap = self._gap(q)
        if gap >= 0.0:
            return q
        return q + direction * (-gap / g_nn)
