# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
Cholesky factor and solves of the small dense SPD matrices of the kernels (M, the Delassus G).

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


def spd_solve_or_least_squares(A, r):
    """timestepping._spd_solve_or_least_squares on arrays."""
    n = A.shape[0]
    L = np.zeros((n, n))
    ok = True
    for i in range(n):
        for j in range(i + 1):
            acc = A[i, j]
            for k in range(j):
                acc -= L[i, k] * L[j, k]
            if i == j:
                if acc <= 0.0:
                    ok = False
                    break
                L[i, i] = math.sqrt(acc)
            else:
                L[i, j] = acc / L[j, j]
        if not ok:
            break
    if ok:
        smallest = math.inf
        largest = 0.0
        for i in range(n):
            smallest = min(smallest, L[i, i])
            largest = max(largest, L[i, i])
        if smallest * smallest > 1e-12 * largest * largest:
            return np.linalg.solve(A, r)
    return np.linalg.lstsq(A, r)[0]


spd_solve_or_least_squares = compiled(spd_solve_or_least_squares)


__all__ = ['cholesky', 'cholesky_solve_vec', 'cholesky_solve_rows', 'row_products',
           'spd_solve_or_least_squares']
