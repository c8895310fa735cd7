"""Point-contact geometry of the foot against the terrain, shared by both integrators."""
from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import numpy as np


@dataclass(frozen=True)
class ContactParams:
    """Contact law constants.

    Attributes:
        friction: Coulomb coefficient mu (-).
        restitution: Newton normal restitution e in [0, 1] (0: plastic impact).
    """

    friction: float = 0.8
    restitution: float = 0.0


class ContactStep(NamedTuple):
    """What one physics step did at the contact.

    Attributes:
        in_contact: the foot carries a normal force at the end of the step.
        impulse_normal: normal impulse transmitted during the step, N*s.
        impulse_world: total contact impulse on the foot, world [x, z], N*s.
        iterations / converged: prox solver statistics (time-stepping).
        events: hybrid events located in the step (event-driven).
    """

    in_contact: bool = False
    impulse_normal: float = 0.0
    impulse_world: tuple = (0.0, 0.0)
    iterations: int = 0
    converged: bool = True
    events: tuple = ()


def contact_frame(terrain, foot_x: float, foot_z: float):
    """Gap (m, positive above ground), unit normal n and tangent t (world x-z) under the foot.

    t = (nz, -nx) points along +x on flat ground.
    """
    nx, nz = terrain.normal(foot_x)
    gap = (foot_z - terrain.height(foot_x)) * nz
    return gap, (nx, nz), (nz, -nx)


def contact_jacobians(jac_xz: np.ndarray, normal, tangent) -> np.ndarray:
    """2x4 matrix W = [n^T J; t^T J] of normal and tangential contact velocities."""
    return np.array((normal, tangent)) @ jac_xz


def solve_contact_impulse(g_nn: float, g_nt: float, g_tn: float, g_tt: float,
                          gamma_n: float, gamma_t: float, gamma_pre_normal: float,
                          params: ContactParams, *, method: str = 'gauss_seidel',
                          relaxation: float = 1.0, max_iterations: int = 100,
                          tolerance: float = 1e-12, warm_start=None):
    """Prox iterations for the velocity-level normal-cone inclusion of one point contact.

    Finds impulses (Lambda_N, Lambda_T) with
        Lambda_N = prox_R+(Lambda_N - r_N (gamma_N+ + e gamma_N-)),
        Lambda_T = prox_[-mu Lambda_N, mu Lambda_N](Lambda_T - r_T gamma_T+),
    where gamma+ = gamma_free + G Lambda, G = [[g_nn, g_nt], [g_tn, g_tt]] the Delassus matrix
    W M^-1 W^T and (gamma_n, gamma_t) the free contact velocities. ``method`` is 'gauss_seidel'
    (SOR when relaxation != 1) or 'jacobi' (JOR). Everything is a Python float: for a 2x2
    problem that is much faster than numpy.
    Without ``warm_start`` the iterations start from the sticking solution G Lambda = -gamma
    projected onto the cone, which is the fixed point whenever the contact sticks, so steady
    stance converges in one iteration. Returns (Lambda_N, Lambda_T, iterations, converged).
    """
    free_n = gamma_n + params.restitution * gamma_pre_normal
    free_t = gamma_t
    mu = params.friction
    r_n = relaxation / g_nn
    r_t = relaxation / g_tt
    if warm_start is None:
        det = g_nn * g_tt - g_nt * g_tn
        lam_n = (-free_n * g_tt + g_nt * free_t) / det
        lam_t = (-free_t * g_nn + g_tn * free_n) / det
        lam_n = lam_n if lam_n > 0.0 else 0.0
        lam_t = min(max(lam_t, -mu * lam_n), mu * lam_n)
    else:
        lam_n, lam_t = max(float(warm_start[0]), 0.0), float(warm_start[1])
    jacobi = method == 'jacobi'
    for iteration in range(1, max_iterations + 1):
        new_n = lam_n - r_n * (free_n + g_nn * lam_n + g_nt * lam_t)
        if new_n < 0.0:
            new_n = 0.0
        lam_n_for_t = lam_n if jacobi else new_n
        new_t = lam_t - r_t * (free_t + g_tn * lam_n_for_t + g_tt * lam_t)
        bound = mu * new_n
        if new_t > bound:
            new_t = bound
        elif new_t < -bound:
            new_t = -bound
        change = abs(new_n - lam_n) + abs(new_t - lam_t)
        lam_n, lam_t = new_n, new_t
        if change <= tolerance * (1.0 + abs(lam_n)):
            return lam_n, lam_t, iteration, True
    return lam_n, lam_t, max_iterations, False
