# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
The compiled Moreau-Jean step (:class:`dodo_sim.physics.timestepping.MoreauJeanIntegrator`).

One call does the whole step of a planar tree of 1-DoF joints on a plane: the kinematics pass and
M, h at the midpoint, the contact gaps and rows, the active set, the Delassus operator and
restitution, the planar NCP solve (:mod:`.ncp`), the update, the position correction and the
contact positions of the new state. Same results as the generic step to rounding
(test_physics_fast.py compares them step by step to 1e-12).
"""
from __future__ import annotations

import math

import numpy as np

from .buffers import unpack_model
from .jit import compiled
from .kinematics import contact_points, placements, point_jacobian, PRISMATIC, workspace
from .linalg import (cholesky, cholesky_solve_rows, cholesky_solve_vec, projection_multipliers,
                     row_products)
from .ncp import solve_planar
from .rigid_body import mass_matrix_and_bias
from ..solver import STICK_MARGIN


def step_arrays(q, v, tau, dt, P_parent, P_joint_rot, P_joint_pos, P_joint_type, P_axis, P_mass,
                P_com, P_inertia, P_support, P_gravity, P_frame_joint, P_frame_rot, P_frame_pos,
                P_radius, P_bound_iv, P_bound_side, P_bound_value, h0, slope, nx, nz, friction,
                restitution, margin, far, tolerance, max_iterations, jacobi, position_correction,
                P_armature):
    """
    One Moreau-Jean step (timestepping.MoreauJeanIntegrator.step).

    Returns q+, v+, the (nc, 3) world impulses, the per-contact pushing flags, iterations,
    residual, converged, the smallest post-step normal velocity of a pushing constraint and the
    (nc, 3) contact positions at q+.
    """
    nv = len(q)
    nc = len(P_frame_joint)
    nb = len(P_bound_iv)
    half = 0.5 * dt
    rot, pos, waxis, M, h, jac, omega, alpha, acc = workspace(nv)
    L = np.empty((nv, nv))
    q_mid = np.empty(nv)
    for i in range(nv):
        q_mid[i] = q[i] + half * v[i]
    mass_matrix_and_bias(q_mid, v, P_parent, P_joint_rot, P_joint_pos, P_joint_type, P_axis,
                         P_mass, P_com, P_inertia, P_support, P_gravity, rot, pos, waxis, M, h,
                         jac, omega, alpha, acc, P_armature)
    if not cholesky(M, L):
        # a non-finite state (or a singular model): NaN out, the Simulator reports divergence
        nan = np.full(nv, np.nan)
        return (nan, nan.copy(), np.zeros((nc, 3)), np.zeros(nc, np.bool_), 0, math.inf, False,
                math.inf, np.full((nc, 3), np.nan))
    v_free = np.empty(nv)
    for i in range(nv):
        v_free[i] = tau[i] - h[i]
    cholesky_solve_vec(L, v_free)
    for i in range(nv):
        v_free[i] = v[i] + dt * v_free[i]
    points = np.empty((nc, 3))
    contact_points(rot, pos, P_frame_joint, P_frame_rot, P_frame_pos, points)
    # broad phase: no point moves faster than sum_j |v_free_j| * max(1, extent), extent bounding
    # the distance from any joint to any contact point at q_mid (the sum of the joints' offsets,
    # of the prismatic joints' displacements and the largest frame offset; a revolute joint moves
    # a point at |v_j| |p - o_j|, a prismatic one at |v_j|). A point farther than half a step of
    # that never enters the active set, so its jacobian is skipped (the link points of a falling
    # hopper, issue 22 item 3)
    extent = 0.0
    for j in range(nv):
        extent += math.sqrt(P_joint_pos[j, 0] ** 2 + P_joint_pos[j, 1] ** 2
                            + P_joint_pos[j, 2] ** 2)
        if P_joint_type[j] == PRISMATIC:
            extent += abs(q_mid[j])
    frame_max = 0.0
    for k in range(nc):
        frame_max = max(frame_max, math.sqrt(P_frame_pos[k, 0] ** 2 + P_frame_pos[k, 1] ** 2
                                             + P_frame_pos[k, 2] ** 2))
    speed_bound = 0.0
    for j in range(nv):
        speed_bound += abs(v_free[j])
    reach = half * speed_bound * max(1.0, extent + frame_max) * (1.0 + 1e-9) + 1e-12
    # active set: contacts (normal, tangent rows) then limit bounds (one row), in that order
    kind = np.empty(nc + nb, np.int64)      # 0 contact, 1 limit
    index = np.empty(nc + nb, np.int64)
    W = np.zeros((2 * nc + nb, nv))
    n_active = 0
    m = 0
    for k in range(nc):
        gap = (points[k, 2] - (h0 + slope * points[k, 0])) * nz - P_radius[k]
        if gap > far or (gap > margin and gap > reach):
            continue
        point_jacobian(points[k, 0], points[k, 1], points[k, 2], P_frame_joint[k], P_support,
                       P_joint_type, pos, waxis, jac)
        rate = 0.0
        for j in range(nv):
            rate += (nx * jac[0, j] + nz * jac[2, j]) * v_free[j]
        if gap <= margin or gap + half * rate < 0.0:
            for j in range(nv):
                W[m, j] = nx * jac[0, j] + nz * jac[2, j]
                W[m + 1, j] = (nz * jac[0, j] - nx * jac[2, j]) - P_radius[k] * jac[4, j]
            kind[n_active] = 0
            index[n_active] = k
            n_active += 1
            m += 2
    for j in range(nb):
        iv = P_bound_iv[j]
        side = P_bound_side[j]
        gap = side * (q_mid[iv] - P_bound_value[j])
        if gap <= margin or gap + half * side * v_free[iv] < 0.0:
            W[m, iv] = side
            kind[n_active] = 1
            index[n_active] = j
            n_active += 1
            m += 1
    impulses = np.zeros((nc, 3))
    pushing_flags = np.zeros(nc, np.bool_)
    q_next = np.empty(nv)
    if n_active == 0:
        for i in range(nv):
            q_next[i] = q_mid[i] + half * v_free[i]
        placements(q_next, P_parent, P_joint_rot, P_joint_pos, P_joint_type, P_axis, rot, pos,
                   waxis)
        contact_points(rot, pos, P_frame_joint, P_frame_rot, P_frame_pos, points)
        return (q_next, v_free, impulses, pushing_flags, 0, 0.0, True, math.inf, points)
    # M^-1 W^T column by column, G = W M^-1 W^T, b = W v_free
    minv_wt = cholesky_solve_rows(L, W, m)
    G = row_products(W, minv_wt, m)
    b = np.empty(m)
    for r in range(m):
        acc = 0.0
        for j in range(nv):
            acc += W[r, j] * v_free[j]
        b[r] = acc
    starts = np.empty(n_active, np.int64)
    sizes = np.empty(n_active, np.int64)
    mus = np.empty(n_active)
    dirs = np.zeros(n_active)
    r = 0
    for a in range(n_active):
        starts[a] = r
        if kind[a] == 0:
            sizes[a] = 2
            mus[a] = friction
        else:
            sizes[a] = 1
            mus[a] = 0.0
        r += sizes[a]
    if restitution > 0.0:
        for a in range(n_active):
            s = starts[a]
            u_pre = 0.0
            for j in range(nv):
                u_pre += W[s, j] * v[j]
            if u_pre < 0.0:
                b[s] += restitution * u_pre
    lam, iterations, residual, converged = solve_planar(G, b, starts, sizes, mus, dirs, tolerance,
                                                        max_iterations, jacobi)
    v_next = np.empty(nv)
    for j in range(nv):
        acc = v_free[j]
        for c in range(m):
            acc += minv_wt[j, c] * lam[c]
        v_next[j] = acc
        q_next[j] = q_mid[j] + half * acc
    min_u = math.inf
    n_push = 0
    push_rows = np.empty(n_active, np.int64)
    push_active = np.empty(n_active, np.int64)
    for a in range(n_active):
        s = starts[a]
        pushed = lam[s] > 0.0
        if pushed:
            push_rows[n_push] = s
            push_active[n_push] = a
            n_push += 1
            u_next = 0.0
            for j in range(nv):
                u_next += W[s, j] * v_next[j]
            if u_next < min_u:
                min_u = u_next
        if kind[a] == 0:
            k = index[a]
            # world impulse lambda_N n + lambda_T t1, n = (nx, 0, nz), t1 = (nz, 0, -nx)
            impulses[k, 0] = lam[s] * nx + lam[s + 1] * nz
            impulses[k, 2] = lam[s] * nz + lam[s + 1] * -nx
            pushing_flags[k] = pushed
    placements(q_next, P_parent, P_joint_rot, P_joint_pos, P_joint_type, P_axis, rot, pos,
               waxis)
    contact_points(rot, pos, P_frame_joint, P_frame_rot, P_frame_pos, points)
    if position_correction and n_push > 0:
        # timestepping.MoreauJeanIntegrator._correct_positions: close the gaps of the pushing
        # constraints, hold the tangential displacement of the sticking contacts at zero
        rows = np.empty(2 * n_push, np.int64)
        targets = np.empty(2 * n_push)
        any_gap = False
        for p in range(n_push):
            a = push_active[p]
            if kind[a] == 0:
                k = index[a]
                gap = (points[k, 2] - (h0 + slope * points[k, 0])) * nz - P_radius[k]
            else:
                j = index[a]
                gap = P_bound_side[j] * (q_next[P_bound_iv[j]] - P_bound_value[j])
            rows[p] = push_rows[p]
            targets[p] = -gap
            if gap != 0.0:
                any_gap = True
        if any_gap:
            n_rows = n_push
            for p in range(n_push):
                a = push_active[p]
                s = push_rows[p]
                if kind[a] == 0 and abs(lam[s + 1]) < mus[a] * lam[s] * (1.0 - STICK_MARGIN):
                    rows[n_rows] = s + 1
                    targets[n_rows] = 0.0
                    n_rows += 1
            if n_rows == 1:
                s = rows[0]
                scale = targets[0] / G[s, s]
                for j in range(nv):
                    q_next[j] = q_next[j] + minv_wt[j, s] * scale
            else:
                G_cc = np.empty((n_rows, n_rows))
                for p in range(n_rows):
                    for p2 in range(n_rows):
                        G_cc[p, p2] = G[rows[p], rows[p2]]
                delta = projection_multipliers(G_cc, targets[:n_rows].copy())
                for j in range(nv):
                    acc = 0.0
                    for p in range(n_rows):
                        acc += minv_wt[j, rows[p]] * delta[p]
                    q_next[j] = q_next[j] + acc
            placements(q_next, P_parent, P_joint_rot, P_joint_pos, P_joint_type, P_axis, rot,
                       pos, waxis)
            contact_points(rot, pos, P_frame_joint, P_frame_rot, P_frame_pos, points)
    return (q_next, v_next, impulses, pushing_flags, iterations, residual, converged, min_u,
            points)


step_arrays = compiled(step_arrays)


def step(q, v, applied, dt, floats, ints):
    """
    One Moreau-Jean step from the packed buffers (:func:`pack_buffers`).

    ``applied``: the torques of the actuated joints. Returns q+, v+, the (nc, 3) world impulses,
    the (nc, 3) contact positions at q+ and stats = [iterations, residual, converged, min normal
    velocity of a pushing constraint, pushing flag of each contact].
    """
    (nj, nc, nb, na, parent, joint_type, support, frame_joint, bound_iv, actuated, joint_rot,
     joint_pos, axis, mass, com, inertia, gravity, frame_rot, frame_pos, radius, bound_side,
     bound_value, f) = unpack_model(floats, ints)
    max_iterations, jacobi, position_correction = ints[4], ints[5] != 0, ints[6] != 0
    h0, slope, nx, nz = floats[f], floats[f + 1], floats[f + 2], floats[f + 3]
    friction, restitution = floats[f + 4], floats[f + 5]
    margin, far, tolerance = floats[f + 6], floats[f + 7], floats[f + 8]
    armature = floats[f + 9:f + 9 + nj]
    tau = np.zeros(nj)
    for i in range(na):
        tau[actuated[i]] = applied[i]
    (q_next, v_next, impulses, pushing, iterations, residual, converged, min_u,
     positions) = step_arrays(q, v, tau, dt, parent, joint_rot, joint_pos, joint_type, axis,
                              mass, com, inertia, support, gravity, frame_joint, frame_rot,
                              frame_pos, radius, bound_iv, bound_side, bound_value, h0,
                              slope, nx, nz, friction, restitution, margin, far, tolerance,
                              max_iterations, jacobi, position_correction, armature)
    stats = np.empty(4 + nc)
    stats[0] = iterations
    stats[1] = residual
    stats[2] = 1.0 if converged else 0.0
    stats[3] = min_u
    for k in range(nc):
        stats[4 + k] = 1.0 if pushing[k] else 0.0
    return q_next, v_next, impulses, positions, stats


step = compiled(step)


__all__ = ['step', 'step_arrays']
