# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
Factors and solves of the small dense matrices of the kernels (M, the Delassus G, a polish).

Explicit loops on preallocated arrays: numba turns a small ``@`` into a BLAS call and every
temporary into an allocation, each costing more than the arithmetic at this size.
"""
from __future__ import annotations

import math

import numpy as np

from .jit import compiled


def cholesky(A, L):
    """Lower Cholesky factor of the SPD matrix A into L; False if A is not positive definite."""
    n = A.shape[0]
    for i in range(n):
        for j in range(i + 1):
            acc = A[i, j]
            for k in range(j):
                acc -= L[i, k] * L[j, k]
            if i == j:
                if not acc > 0.0:
                    return False
                L[i, i] = math.sqrt(acc)
            else:
                L[i, j] = acc / L[j, j]
        for j in range(i + 1, n):
            L[i, j] = 0.0
    return True


cholesky = compiled(cholesky)


def cholesky_solve_vec(L, y):
    """Solve (L L^T) x = y in place."""
    n = L.shape[0]
    for i in range(n):
        acc = y[i]
        for j in range(i):
            acc -= L[i, j] * y[j]
        y[i] = acc / L[i, i]
    for i in range(n - 1, -1, -1):
        acc = y[i]
        for j in range(i + 1, n):
            acc -= L[j, i] * y[j]
        y[i] = acc / L[i, i]


cholesky_solve_vec = compiled(cholesky_solve_vec)


def cholesky_solve_rows(L, A, m):
    """Return X = (L L^T)^-1 A[:m]^T (nv x m), solved column by column: M^-1 W^T of m rows W."""
    nv = L.shape[0]
    X = np.empty((nv, m))
    column = np.empty(nv)
    for r in range(m):
        for j in range(nv):
            column[j] = A[r, j]
        cholesky_solve_vec(L, column)
        for j in range(nv):
            X[j, r] = column[j]
    return X


cholesky_solve_rows = compiled(cholesky_solve_rows)


def row_products(A, X, m):
    """Return A[:m] X (m x m): the Delassus operator W M^-1 W^T when X = M^-1 W^T."""
    nv = X.shape[0]
    P = np.empty((m, m))
    for r in range(m):
        for c in range(m):
            acc = 0.0
            for j in range(nv):
                acc += A[r, j] * X[j, c]
            P[r, c] = acc
    return P


row_products = compiled(row_products)


def lu_solve(A, rhs):
    """
    Solve A x = rhs by Gaussian elimination with partial pivoting (LAPACK gesv's algorithm).

    Returns (x, ok); ok is False when a pivot is exactly zero (numpy raises LinAlgError there).
    A and rhs are not modified.
    """
    n = A.shape[0]
    a = A.copy()
    x = rhs.copy()
    for k in range(n):
        p = k
        big = abs(a[k, k])
        for i in range(k + 1, n):
            if abs(a[i, k]) > big:
                big = abs(a[i, k])
                p = i
        if big == 0.0:
            return x, False
        if p != k:
            for j in range(n):
                tmp = a[k, j]
                a[k, j] = a[p, j]
                a[p, j] = tmp
            tmp = x[k]
            x[k] = x[p]
            x[p] = tmp
        pivot = a[k, k]
        for i in range(k + 1, n):
            f = a[i, k] / pivot
            if f != 0.0:
                for j in range(k + 1, n):
                    a[i, j] -= f * a[k, j]
                x[i] -= f * x[k]
    for i in range(n - 1, -1, -1):
        acc = x[i]
        for j in range(i + 1, n):
            acc -= a[i, j] * x[j]
        x[i] = acc / a[i, i]
    return x, True


lu_solve = compiled(lu_solve)


def well_conditioned_spd(A):
    """
    Return whether A is positive definite and well conditioned for a direct solve.

    Its Cholesky pivots satisfy smallest^2 > 1e-12 largest^2
    (timestepping._spd_solve_or_least_squares' test).
    """
    n = A.shape[0]
    L = np.zeros((n, n))
    if not cholesky(A, L):
        return False
    smallest = math.inf
    largest = 0.0
    for i in range(n):
        smallest = min(smallest, L[i, i])
        largest = max(largest, L[i, i])
    return smallest * smallest > 1e-12 * largest * largest


well_conditioned_spd = compiled(well_conditioned_spd)


def spd_solve_or_least_squares(A, r):
    """timestepping._spd_solve_or_least_squares on arrays."""
    if well_conditioned_spd(A):
        return np.linalg.solve(A, r)
    return np.linalg.lstsq(A, r)[0]


spd_solve_or_least_squares = compiled(spd_solve_or_least_squares)

#: the largest mass-weighted displacement a position correction may take, relative to closing
#: each of its gaps alone: sum(delta * targets) <= this * sum(targets_i^2 / G_ii)
PROJECTION_AMPLIFICATION = 100.0


def projection_is_well_posed(G_cc, targets, delta):
    """
    Say whether the correction multipliers ``delta`` (G_cc delta = targets) move little.

    The displacement dq = M^-1 W_C^T delta has the mass-weighted size dq^T M dq = delta .
    targets. Closing each gap alone would take sum(targets_i^2 / G_ii). Constraints that are
    nearly dependent (two support points of one link, a straight leg) and ask for different
    moves make G_cc nearly singular: the exact solution then turns the joints by radians to
    close gaps of micrometres (Solo-12 on its side: 23 rad in one step), far outside the
    linearisation the projection rests on.
    """
    energy = 0.0
    alone = 0.0
    for i in range(len(targets)):
        energy += delta[i] * targets[i]
        if G_cc[i, i] > 0.0:
            alone += targets[i] * targets[i] / G_cc[i, i]
    return energy <= PROJECTION_AMPLIFICATION * alone


projection_is_well_posed = compiled(projection_is_well_posed)


def truncated_projection(G_cc, targets):
    """
    Return the multipliers of the correction in G_cc's well-determined directions only.

    The eigen-directions with eigenvalue >= largest / PROJECTION_AMPLIFICATION; the gaps along
    the others (nearly dependent constraints) are left to the next steps' velocity constraints.
    The mass-weighted displacement is then at most PROJECTION_AMPLIFICATION times that of
    closing each gap alone.
    """
    w, U = np.linalg.eigh(G_cc)
    cutoff = w[len(w) - 1] / PROJECTION_AMPLIFICATION
    delta = np.zeros(len(targets))
    for k in range(len(w)):
        if w[k] >= cutoff and w[k] > 0.0:
            along = 0.0
            for i in range(len(targets)):
                along += U[i, k] * targets[i]
            along /= w[k]
            for i in range(len(targets)):
                delta[i] += along * U[i, k]
    return delta


truncated_projection = compiled(truncated_projection)


def projection_multipliers(G_cc, targets):
    """
    Multipliers delta of a position correction: G_cc delta = targets when well posed.

    Otherwise :func:`truncated_projection` gives them (see :func:`projection_is_well_posed`).
    """
    delta = spd_solve_or_least_squares(G_cc, targets)
    if projection_is_well_posed(G_cc, targets, delta):
        return delta
    return truncated_projection(G_cc, targets)


projection_multipliers = compiled(projection_multipliers)


__all__ = ['cholesky', 'cholesky_solve_vec', 'cholesky_solve_rows', 'row_products', 'lu_solve',
           'well_conditioned_spd', 'spd_solve_or_least_squares', 'PROJECTION_AMPLIFICATION',
           'projection_is_well_posed', 'truncated_projection', 'projection_multipliers']
