# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
The event-driven integrator's dynamics in given contact modes, compiled.

:func:`evaluate` is :meth:`dodo_sim.physics.event.EventDrivenIntegrator._evaluate` (acceleration,
contact forces, event values) for a planar tree of 1-DoF joints on a plane; :func:`rk4` its
classical RK4 step (``EventDrivenIntegrator._rk4``).
"""
from __future__ import annotations

import math

import numpy as np

from .buffers import unpack_model
from .jit import compiled
from .kinematics import contact_points, point_drift, point_jacobian, workspace
from .linalg import cholesky, cholesky_solve_rows, cholesky_solve_vec, row_products
from .rigid_body import mass_matrix_and_bias

#: the event integrator's force-condition offset (event.py _FORCE_EPS), N
_FORCE_EPS = 1e-9


def evaluate(q, v, applied, floats, ints, rate, modes, slip_dir, anchor, shift, limit_active):
    """
    Return the event-driven integrator's dynamics in given modes (EventDrivenIntegrator._evaluate).

    ``modes`` per contact 0 free / 1 stick / 2 slip, ``slip_dir`` +-1 of a sliding contact (along
    t1 = +x), ``anchor`` the x a sticking point contact holds, ``shift`` the touchdown offsets
    (contacts, then limit bounds), ``limit_active`` per bound. Returns the acceleration, the (nc,
    3) world contact forces and the event values in the order of EventDrivenIntegrator._keys().
    """
    (nj, nc, nb, na, parent, joint_type, support, frame_joint, bound_iv, actuated, joint_rot,
     joint_pos, axis, mass, com, inertia, gravity, frame_rot, frame_pos, radius, bound_side,
     bound_value, f) = unpack_model(floats, ints)
    h0, slope, nx, nz, friction = floats[f], floats[f + 1], floats[f + 2], floats[f + 3], \
        floats[f + 4]
    armature = floats[f + 9:f + 9 + nj]
    nv = nj
    tau = np.zeros(nv)
    for i in range(na):
        tau[actuated[i]] = applied[i]
    rot, pos, waxis, M, h, jac, omega, alpha, acc = workspace(nv)
    mass_matrix_and_bias(q, v, parent, joint_rot, joint_pos, joint_type, axis, mass, com,
                         inertia, support, gravity, rot, pos, waxis, M, h, jac, omega, alpha,
                         acc, armature)
    L = np.empty((nv, nv))
    if not cholesky(M, L):
        # a non-finite state: NaN out (the integrator's divergence check reports it)
        n_values = nb
        for k in range(nc):
            n_values += 1 if modes[k] == 0 else 2
        return np.full(nv, np.nan), np.zeros((nc, 3)), np.full(n_values, np.nan)
    a_free = np.empty(nv)
    for i in range(nv):
        a_free[i] = tau[i] - h[i]
    cholesky_solve_vec(L, a_free)
    points = np.empty((nc, 3))
    contact_points(rot, pos, frame_joint, frame_rot, frame_pos, points)
    n_values = nb
    for k in range(nc):
        n_values += 1 if modes[k] == 0 else 2
    values = np.empty(n_values)
    forces = np.zeros((nc, 3))
    any_active = False
    for k in range(nc):
        if modes[k] != 0:
            any_active = True
    for j in range(nb):
        if limit_active[j] != 0:
            any_active = True
    limit_gaps = np.empty(nb)
    for j in range(nb):
        limit_gaps[j] = bound_side[j] * (q[bound_iv[j]] - bound_value[j])
    if not any_active:
        for k in range(nc):
            values[k] = (points[k, 2] - (h0 + slope * points[k, 0])) * nz - radius[k] + shift[k]
        for j in range(nb):
            values[nc + j] = limit_gaps[j] + shift[nc + j]
        return a_free, forces, values
    rate2 = rate * rate
    m_max = 2 * nc + nb
    E = np.zeros((m_max, nv))
    C = np.zeros((m_max, nv))
    target = np.empty(m_max)
    gaps = np.empty(nc)
    u_t = np.empty(nc)
    m = 0
    for k in range(nc):
        gaps[k] = (points[k, 2] - (h0 + slope * points[k, 0])) * nz - radius[k]
        if modes[k] == 0:
            continue
        j0 = frame_joint[k]
        point_jacobian(points[k, 0], points[k, 1], points[k, 2], j0, support, joint_type, pos,
                       waxis, jac)
        # J-dot v: the frame origin's acceleration for zero joint accelerations
        rx, ry, rz = points[k, 0] - pos[j0, 0], points[k, 1] - pos[j0, 1], \
            points[k, 2] - pos[j0, 2]
        ax_, _, az_ = point_drift(j0, rx, ry, rz, omega, alpha, acc)
        jdv_n = nx * ax_ + nz * az_
        jdv_t = nz * ax_ - nx * az_
        u_n = 0.0
        u_tk = 0.0
        for j in range(nv):
            u_n += (nx * jac[0, j] + nz * jac[2, j]) * v[j]
            u_tk += ((nz * jac[0, j] - nx * jac[2, j]) - radius[k] * jac[4, j]) * v[j]
        u_t[k] = u_tk
        if modes[k] == 1:
            for j in range(nv):
                E[m, j] = nx * jac[0, j] + nz * jac[2, j]
                E[m + 1, j] = (nz * jac[0, j] - nx * jac[2, j]) - radius[k] * jac[4, j]
                C[m, j] = E[m, j]
                C[m + 1, j] = E[m + 1, j]
            target[m] = -jdv_n - 2.0 * rate * u_n - rate2 * gaps[k]
            target[m + 1] = -jdv_t - 2.0 * rate * u_tk
            if radius[k] == 0.0:
                target[m + 1] -= rate2 * ((nz * points[k, 0] - nx * points[k, 2]) - anchor[k])
            m += 2
        else:
            d = slip_dir[k]
            for j in range(nv):
                E[m, j] = nx * jac[0, j] + nz * jac[2, j]
                C[m, j] = E[m, j] - friction * d * ((nz * jac[0, j] - nx * jac[2, j])
                                                    - radius[k] * jac[4, j])
            target[m] = -jdv_n - 2.0 * rate * u_n - rate2 * gaps[k]
            m += 1
    for j in range(nb):
        if limit_active[j] == 0:
            continue
        iv = bound_iv[j]
        side = bound_side[j]
        E[m, iv] = side
        C[m, iv] = side
        target[m] = -2.0 * rate * side * v[iv] - rate2 * limit_gaps[j]
        m += 1
    # K = E M^-1 C^T, x = K^-1 (target - E a_free)
    minv_ct = cholesky_solve_rows(L, C, m)
    K = row_products(E, minv_ct, m)
    rhs = np.empty(m)
    for r in range(m):
        acc_r = target[r]
        for j in range(nv):
            acc_r -= E[r, j] * a_free[j]
        rhs[r] = acc_r
    if m == 1:
        x = np.array((rhs[0] / K[0, 0],))
    elif m == 2:
        det = K[0, 0] * K[1, 1] - K[0, 1] * K[1, 0]
        x = np.array(((K[1, 1] * rhs[0] - K[0, 1] * rhs[1]) / det,
                      (K[0, 0] * rhs[1] - K[1, 0] * rhs[0]) / det))
    else:
        x = np.linalg.lstsq(K, rhs, 1e-12)[0]
    accel = a_free.copy()
    for j in range(nv):
        for c in range(m):
            accel[j] += minv_ct[j, c] * x[c]
    pos_x = 0
    n = 0
    for k in range(nc):
        if modes[k] == 0:
            values[n] = gaps[k] + shift[k]
            n += 1
            continue
        lam_n = x[pos_x]
        if modes[k] == 1:
            lam_t = x[pos_x + 1]
            pos_x += 2
            values[n] = lam_n + _FORCE_EPS
            values[n + 1] = friction * lam_n - math.sqrt(lam_t * lam_t) + _FORCE_EPS
        else:
            lam_t = -friction * lam_n * slip_dir[k]
            pos_x += 1
            values[n] = lam_n + _FORCE_EPS
            values[n + 1] = u_t[k] * slip_dir[k]
        forces[k, 0] = lam_n * nx + lam_t * nz
        forces[k, 2] = lam_n * nz + lam_t * -nx
        n += 2
    for j in range(nb):
        if limit_active[j] != 0:
            values[n] = x[pos_x] + _FORCE_EPS
            pos_x += 1
        else:
            values[n] = limit_gaps[j] + shift[nc + j]
        n += 1
    return accel, forces, values


evaluate = compiled(evaluate)


def rk4(q, v, h, start_accel, start_forces, applied, floats, ints, rate, modes, slip_dir,
        anchor, shift, limit_active):
    """
    One classical RK4 step of the event integrator's dynamics.

    The step has length h, in given modes (EventDrivenIntegrator._rk4, vector-space q). Returns q1,
    v1, the evaluation at the end (acceleration, forces, event values) and the world contact
    impulses over the step.
    """
    v2 = v + 0.5 * h * start_accel
    a2, f2, _ = evaluate(q + 0.5 * h * v, v2, applied, floats, ints, rate, modes, slip_dir,
                         anchor, shift, limit_active)
    v3 = v + 0.5 * h * a2
    a3, f3, _ = evaluate(q + 0.5 * h * v2, v3, applied, floats, ints, rate, modes, slip_dir,
                         anchor, shift, limit_active)
    v4 = v + h * a3
    a4, f4, _ = evaluate(q + h * v3, v4, applied, floats, ints, rate, modes, slip_dir, anchor,
                         shift, limit_active)
    q1 = q + (h / 6.0) * (v + 2.0 * v2 + 2.0 * v3 + v4)
    v1 = v + (h / 6.0) * (start_accel + 2.0 * a2 + 2.0 * a3 + a4)
    end_accel, end_forces, end_values = evaluate(q1, v1, applied, floats, ints, rate, modes,
                                                 slip_dir, anchor, shift, limit_active)
    impulse = (h / 6.0) * (start_forces + 2.0 * f2 + 2.0 * f3 + f4)
    return q1, v1, end_accel, end_forces, end_values, impulse


rk4 = compiled(rk4)


__all__ = ['evaluate', 'rk4']
