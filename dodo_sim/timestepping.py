"""Moreau-Jean midpoint time-stepping with a hard unilateral frictional point contact (seed 002).

One step of size dt:
    q_M = q + dt/2 v
    M(q_M)(v+ - v) = dt (S^T tau - h(q_M, v)) + W^T Lambda          (only if gap(q_M) <= 0)
    Lambda from the prox (Gauss-Seidel/SOR or Jacobi/JOR) iterations of contact.py
    q+ = q_M + dt/2 v+
Using M v_free = M v + dt (tau - h) = M v + dt M aba(q_M, v, tau), the free velocity comes from
pinocchio's ABA and the contact correction from M^-1 W^T Lambda. A contact is in the active set
when its midpoint gap is below ACTIVATION_MARGIN_M or when the free step would end below ground.

Moreau's velocity-level scheme lets the foot sink by up to |gamma_N| dt/2 in the step of an impact.
With ``position_correction`` the remaining penetration of an active contact is projected out
after the step along the mass-weighted normal direction M^-1 W_N^T (velocities untouched), so the
gap stays >= 0 up to the linearisation error.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pinocchio as pin

from .contact import ContactParams, ContactStep, contact_frame, solve_contact_impulse

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
    """Time-stepping integrator; owns its pinocchio Data (two: one keeps the midpoint
    quantities of the step, the other checks end-of-step gaps)."""

    name = 'timestepping'

    def __init__(self, leg, terrain, contact: ContactParams, params: TimeSteppingParams):
        if params.solver not in SOLVERS:
            raise ValueError(f'unknown solver {params.solver!r}; choose one of {SOLVERS}')
        self.model = leg.model
        self.data = leg.model.createData()
        self.check_data = leg.model.createData()
        self.foot = leg.foot_frame_id
        self.terrain = terrain
        self.contact = contact
        self.params = params
        self.jacobi = params.solver == 'jacobi'
        #: world (x, z) of the foot at the end of the last step when the step computed it, else
        #: None; lets the simulator skip a forward-kinematics pass for its State.
        self.end_foot = None

    def reset(self, q: np.ndarray, v: np.ndarray) -> None:
        self.end_foot = None

    def step(self, q: np.ndarray, v: np.ndarray, generalized_force: np.ndarray, dt: float):
        """Advance (q, v) by dt. Returns (q+, v+, ContactStep).

        The 4-vectors and the 2x4 contact algebra are kept on Python floats between the
        pinocchio calls: numpy's per-call overhead dominates at this size.
        """
        model, data, terrain = self.model, self.data, self.terrain
        half = 0.5 * dt
        q0, q1, q2, q3 = q.tolist()
        v0, v1, v2, v3 = v.tolist()
        q_mid = [q0 + half * v0, q1 + half * v1, q2 + half * v2, q3 + half * v3]
        # ABA with the WORLD convention leaves the placements, joint jacobians and the
        # factorisation computeMinverse(model, data) reuses, all at q_mid.
        a0, a1, a2, a3 = pin.aba(model, data, np.array(q_mid), v, generalized_force,
                                 pin.Convention.WORLD).tolist()
        v_free = [v0 + dt * a0, v1 + dt * a1, v2 + dt * a2, v3 + dt * a3]
        foot_x, _, foot_z = pin.updateFramePlacement(model, data, self.foot).translation.tolist()
        gap, (nx, nz), (tx, tz) = contact_frame(terrain, foot_x, foot_z)
        self.end_foot = None
        if gap > ACTIVATION_MARGIN_M:
            q_free = np.array([m + half * f for m, f in zip(q_mid, v_free)])
            if gap > NEAR_GROUND_M:
                return q_free, np.array(v_free), _NO_CONTACT
            # A free step that would end below the ground (a fast foot, or strong joint
            # accelerations just after an impact) gets the contact in its active set too.
            end_foot = self._foot(q_free)
            if contact_frame(terrain, *end_foot)[0] >= 0.0:
                self.end_foot = end_foot
                return q_free, np.array(v_free), _NO_CONTACT

        minv = pin.computeMinverse(model, data).tolist()
        jac = pin.getFrameJacobian(model, data, self.foot, pin.LOCAL_WORLD_ALIGNED).tolist()
        # W = [n^T J; t^T J] (2x4), M^-1 W^T by columns, Delassus G = W M^-1 W^T
        w_n = [nx * a + nz * b for a, b in zip(jac[0], jac[2])]
        w_t = [tx * a + tz * b for a, b in zip(jac[0], jac[2])]
        minv_wn = [_dot(row, w_n) for row in minv]
        minv_wt = [_dot(row, w_t) for row in minv]
        g_nn = _dot(w_n, minv_wn)
        params = self.params
        lam_n, lam_t, iterations, converged = solve_contact_impulse(
            g_nn, _dot(w_n, minv_wt), _dot(w_t, minv_wn), _dot(w_t, minv_wt),
            _dot(w_n, v_free), _dot(w_t, v_free), v0 * w_n[0] + v1 * w_n[1] + v2 * w_n[2]
            + v3 * w_n[3], self.contact, method=params.solver, relaxation=params.relaxation,
            max_iterations=params.max_iterations, tolerance=params.tolerance)
        v_next = [f + a * lam_n + b * lam_t for f, a, b in zip(v_free, minv_wn, minv_wt)]
        q_next = [m + half * x for m, x in zip(q_mid, v_next)]
        q_array = np.array(q_next)
        if params.position_correction and lam_n > 0.0:
            end_foot = self._foot(q_array)
            gap_end = contact_frame(terrain, *end_foot)[0]
            if gap_end < 0.0:
                # remove the penetration along the mass-weighted normal direction M^-1 W_N^T
                scale = -gap_end / g_nn
                q_array = np.array([x + a * scale for x, a in zip(q_next, minv_wn)])
            else:
                self.end_foot = end_foot
        impulse = (nx * lam_n + tx * lam_t, nz * lam_n + tz * lam_t)
        return q_array, np.array(v_next), ContactStep(lam_n > 0.0, lam_n, impulse, iterations,
                                                      converged)

    def _foot(self, q: np.ndarray) -> tuple[float, float]:
        """World (x, z) of the foot at q, on the check Data (data keeps the midpoint)."""
        pin.forwardKinematics(self.model, self.check_data, q)
        x, _, z = pin.updateFramePlacement(self.model, self.check_data, self.foot).translation.tolist()
        return x, z


def _dot(a, b) -> float:
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2] + a[3] * b[3]
