# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
The linear algebra of the time-stepping step's position correction, compiled, for any model.

timestepping.py ``_correct_positions`` closes the gaps of the constraints that pushed with the
displacement dq = M^-1 W_C^T delta, G_CC delta = targets. :func:`position_correction` computes it
in one call when G_CC is well conditioned and the correction is small
(:func:`.linalg.projection_is_well_posed`); otherwise (or without numba) the caller's least
squares handles redundant constraints and the truncated projection ill-posed ones.
"""
from __future__ import annotations

import numpy as np

from .jit import c_contiguous, compiled, njit
from .linalg import (lu_solve, projection_is_well_posed, truncated_projection,
                     well_conditioned_spd)


def _displacement(G, minv_wt, rows, targets):
    """
    Return the time-stepping position correction M^-1 W_C^T delta with G_CC delta = targets.

    G_CC = G[rows][:, rows] when well conditioned (:func:`.linalg.well_conditioned_spd`), then
    solved as np.linalg.solve does (LU with partial pivoting). Returns (dq (nv,), ok); not ok:
    the Python path's least squares.
    """
    n = len(rows)
    nv = minv_wt.shape[0]
    A = np.empty((n, n))
    for i in range(n):
        for j in range(n):
            A[i, j] = G[rows[i], rows[j]]
    dq = np.zeros(nv)
    if not well_conditioned_spd(A):
        return dq, False
    delta, ok = lu_solve(A, targets)
    if not ok or not projection_is_well_posed(A, targets, delta):
        return dq, False
    for j in range(nv):
        acc = 0.0
        for p in range(n):
            acc += minv_wt[j, rows[p]] * delta[p]
        dq[j] = acc
    return dq, True


_displacement = compiled(_displacement)


def position_correction(G, minv_wt, rows, targets):
    """
    Return the displacement dq = M^-1 W_C^T delta of timestepping's position correction.

    ``rows``: the rows C of the constraints to close, ``targets``: their gap corrections;
    G_CC delta = targets. None without numba or when G_CC is not well conditioned (the caller's
    least squares then handles redundant constraints).
    """
    if njit is None:
        return None
    dq, ok = _displacement(c_contiguous(G), c_contiguous(minv_wt), np.array(rows, np.int64),
                           np.array(targets, np.float64))
    return dq if ok else None


def bounded_multipliers(G_cc, targets, delta):
    """
    Return ``delta`` (G_cc delta = targets) when the correction it makes is small.

    Otherwise it returns the truncated projection's multipliers
    (:func:`.linalg.projection_is_well_posed`); the compiled step does the same
    (:func:`.linalg.projection_multipliers`).
    """
    G_cc = c_contiguous(np.asarray(G_cc, dtype=np.float64))
    targets = np.asarray(targets, dtype=np.float64)
    if projection_is_well_posed(G_cc, targets, np.asarray(delta, dtype=np.float64)):
        return delta
    return truncated_projection(G_cc, targets)


def warm_up() -> None:
    """Compile the kernel with the argument types the time-stepping step uses (precompile.py)."""
    G = np.array([[2.0, 0.1, 0.0, 0.2], [0.1, 1.0, 0.0, 0.0], [0.0, 0.0, 1.0, 0.1],
                  [0.2, 0.0, 0.1, 1.0]])
    position_correction(G, G, [0, 3], [1e-6, 2e-6])
    bounded_multipliers(G[:2, :2], np.array([1e-6, -1e-6]), np.array([1.0, -1.0]))


__all__ = ['bounded_multipliers', 'position_correction', 'warm_up']
