# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
The mass matrix M(q) and the bias forces h(q, v) from the kinematics pass.

The same quantities as pinocchio's CRBA and RNEA (test_physics_fast.py compares them).
"""
from __future__ import annotations

import numpy as np

from .jit import compiled
from .kinematics import kinematics, point_drift, point_jacobian, rotate


def mass_matrix_and_bias(q, v, parent, joint_rot, joint_pos, joint_type, axis, mass, com,
                         inertia, support, gravity, rot, pos, waxis, M, h, jac, omega, alpha,
                         acc, armature):
    """
    Mass matrix M(q) and bias h(q, v) (M a + h = tau) into ``M`` and ``h``.

    It also writes the joint frames at q into rot / pos / waxis, and their angular velocities and
    velocity-product accelerations (angular, origin) into omega / alpha / acc. M = sum over bodies
    of m J_c^T J_c + J_w^T I J_w, h = sum of J_c^T m (a_c - g) + J_w^T (I alpha + w x I w) with the
    velocity-product accelerations; the ``armature`` is added to the diagonal of M (pinocchio's
    CRBA / ABA do the same).
    """
    nv = len(q)
    kinematics(q, v, parent, joint_rot, joint_pos, joint_type, axis, rot, pos, waxis, omega,
               alpha, acc)
    for r in range(nv):
        h[r] = 0.0
        for c in range(nv):
            M[r, c] = 0.0
    world_inertia = np.empty((3, 3))
    tmp = np.empty((3, 3))
    for i in range(nv):
        m = mass[i]
        R = rot[i]
        inertia_i = inertia[i]
        for r in range(3):
            for c in range(3):
                tmp[r, c] = (inertia_i[r, 0] * R[c, 0] + inertia_i[r, 1] * R[c, 1]
                             + inertia_i[r, 2] * R[c, 2])
        empty = m == 0.0
        for r in range(3):
            for c in range(3):
                world_inertia[r, c] = R[r, 0] * tmp[0, c] + \
                    R[r, 1] * tmp[1, c] + R[r, 2] * tmp[2, c]
                if world_inertia[r, c] != 0.0:
                    empty = False
        if empty:
            continue
        dx, dy, dz = rotate(R, com[i])
        point_jacobian(pos[i, 0] + dx, pos[i, 1] + dy, pos[i, 2] + dz, i, support, joint_type,
                       pos, waxis, jac)
        ax, ay, az = point_drift(i, dx, dy, dz, omega, alpha, acc)
        fx = m * (ax - gravity[0])
        fy = m * (ay - gravity[1])
        fz = m * (az - gravity[2])
        wx, wy, wz = omega[i, 0], omega[i, 1], omega[i, 2]
        bx, by, bz = alpha[i, 0], alpha[i, 1], alpha[i, 2]
        Iw0 = world_inertia[0, 0] * wx + world_inertia[0, 1] * wy + world_inertia[0, 2] * wz
        Iw1 = world_inertia[1, 0] * wx + world_inertia[1, 1] * wy + world_inertia[1, 2] * wz
        Iw2 = world_inertia[2, 0] * wx + world_inertia[2, 1] * wy + world_inertia[2, 2] * wz
        tx = (world_inertia[0, 0] * bx + world_inertia[0, 1] * by + world_inertia[0, 2] * bz
              + wy * Iw2 - wz * Iw1)
        ty = (world_inertia[1, 0] * bx + world_inertia[1, 1] * by + world_inertia[1, 2] * bz
              + wz * Iw0 - wx * Iw2)
        tz = (world_inertia[2, 0] * bx + world_inertia[2, 1] * by + world_inertia[2, 2] * bz
              + wx * Iw1 - wy * Iw0)
        for r in range(nv):
            if not support[i, r]:
                continue
            h[r] += jac[0, r] * fx + jac[1, r] * fy + jac[2, r] * fz \
                + jac[3, r] * tx + jac[4, r] * ty + jac[5, r] * tz
            # I J_w column r
            i0 = world_inertia[0, 0] * jac[3, r] + world_inertia[0, 1] * jac[4, r] \
                + world_inertia[0, 2] * jac[5, r]
            i1 = world_inertia[1, 0] * jac[3, r] + world_inertia[1, 1] * jac[4, r] \
                + world_inertia[1, 2] * jac[5, r]
            i2 = world_inertia[2, 0] * jac[3, r] + world_inertia[2, 1] * jac[4, r] \
                + world_inertia[2, 2] * jac[5, r]
            for c in range(r + 1):
                if not support[i, c]:
                    continue
                value = m * (jac[0, r] * jac[0, c] + jac[1, r] * jac[1, c]
                             + jac[2, r] * jac[2, c]) \
                    + i0 * jac[3, c] + i1 * jac[4, c] + i2 * jac[5, c]
                M[r, c] += value
    for r in range(nv):
        M[r, r] += armature[r]
        for c in range(r):
            M[c, r] = M[r, c]


mass_matrix_and_bias = compiled(mass_matrix_and_bias)


__all__ = ['mass_matrix_and_bias']
