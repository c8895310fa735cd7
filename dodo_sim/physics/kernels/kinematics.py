# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
The one kinematics pass of the compiled kernels, and what it gives of points fixed to a body.

For a tree of 1-DoF revolute / prismatic joints (any axes), in world coordinates:
:func:`kinematics` computes every joint frame (rotation, origin, world axis) at q, and its angular
velocity, and its angular and origin accelerations for zero joint accelerations (the
velocity-product terms) at (q, v). The step, the event evaluation, the mass matrix and bias
(:mod:`.rigid_body`) and a controller's point terms (:mod:`.point_terms`) all start from it; a
point fixed to a body then has its position (:func:`rotate`), its jacobian
(:func:`point_jacobian`) and its drift J-dot v (:func:`point_drift`) from the pass's arrays.

Explicit loops on preallocated arrays: numba turns a 3x3 ``@`` into a BLAS call and every
temporary into an allocation, each costing more than the arithmetic here.
"""
from __future__ import annotations

import math

import numpy as np

from .jit import compiled, compiled_inline

#: joint types of the packed model (pinocchio's generalised-force convention: M a + h = tau)
REVOLUTE, PRISMATIC = 0, 1


def workspace(nv):
    """
    Return the arrays the kinematics pass and the mass matrix write, for nv joints.

    ``(rot, pos, waxis, M, h, jac, omega, alpha, acc)``: joint rotations (nv, 3, 3), origins,
    world axes, mass matrix (nv, nv), bias (nv), a point jacobian (6, nv), angular velocities,
    angular and origin velocity-product accelerations (nv, 3 each).
    """
    return (np.empty((nv, 3, 3)), np.empty((nv, 3)), np.empty((nv, 3)), np.empty((nv, nv)),
            np.empty(nv), np.empty((6, nv)), np.empty((nv, 3)), np.empty((nv, 3)),
            np.empty((nv, 3)))


workspace = compiled_inline(workspace)


def placements(q, parent, joint_rot, joint_pos, joint_type, axis, rot, pos, waxis):
    """
    World rotation ``rot[i]``, origin ``pos[i]`` and axis ``waxis[i]`` of every joint frame at q.

    They are written into the given arrays.
    """
    base = np.empty((3, 3))
    local = np.empty((3, 3))
    for i in range(len(q)):
        p = parent[i]
        jr = joint_rot[i]
        jp = joint_pos[i]
        if p >= 0:
            rp = rot[p]
            for r in range(3):
                for c in range(3):
                    base[r, c] = rp[r, 0] * jr[0, c] + rp[r, 1] * jr[1, c] + rp[r, 2] * jr[2, c]
                pos[i, r] = pos[p, r] + rp[r, 0] * jp[0] + rp[r, 1] * jp[1] + rp[r, 2] * jp[2]
        else:
            for r in range(3):
                for c in range(3):
                    base[r, c] = jr[r, c]
                pos[i, r] = jp[r]
        ax, ay, az = axis[i, 0], axis[i, 1], axis[i, 2]
        for r in range(3):
            waxis[i, r] = base[r, 0] * ax + base[r, 1] * ay + base[r, 2] * az
        if joint_type[i] == REVOLUTE:
            # Rodrigues: rotation of q[i] about the joint axis
            cq, sq = math.cos(q[i]), math.sin(q[i])
            t = 1.0 - cq
            local[0, 0] = cq + ax * ax * t
            local[0, 1] = ax * ay * t - az * sq
            local[0, 2] = ax * az * t + ay * sq
            local[1, 0] = ay * ax * t + az * sq
            local[1, 1] = cq + ay * ay * t
            local[1, 2] = ay * az * t - ax * sq
            local[2, 0] = az * ax * t - ay * sq
            local[2, 1] = az * ay * t + ax * sq
            local[2, 2] = cq + az * az * t
            for r in range(3):
                for c in range(3):
                    rot[i, r, c] = (base[r, 0] * local[0, c] + base[r, 1] * local[1, c]
                                    + base[r, 2] * local[2, c])
        else:
            for r in range(3):
                for c in range(3):
                    rot[i, r, c] = base[r, c]
                pos[i, r] += waxis[i, r] * q[i]


placements = compiled(placements)


def rotate(R, x):
    """Return R x for a 3x3 ``R`` and a 3-vector ``x`` (the world offset of a body point)."""
    return (R[0, 0] * x[0] + R[0, 1] * x[1] + R[0, 2] * x[2],
            R[1, 0] * x[0] + R[1, 1] * x[1] + R[1, 2] * x[2],
            R[2, 0] * x[0] + R[2, 1] * x[1] + R[2, 2] * x[2])


rotate = compiled_inline(rotate)


def point_drift(joint, rx, ry, rz, omega, alpha, acc):
    """
    Return the acceleration of a point fixed to ``joint``'s body for zero joint accelerations.

    The point is at world offset r = (rx, ry, rz) from the joint origin: a_o + alpha x r +
    w x (w x r) (the classical drift J-dot v of the point, pinocchio's
    getFrameClassicalAcceleration with a = 0).
    """
    wx, wy, wz = omega[joint, 0], omega[joint, 1], omega[joint, 2]
    bx, by, bz = alpha[joint, 0], alpha[joint, 1], alpha[joint, 2]
    cx, cy, cz = wy * rz - wz * ry, wz * rx - wx * rz, wx * ry - wy * rx
    return (acc[joint, 0] + (by * rz - bz * ry) + (wy * cz - wz * cy),
            acc[joint, 1] + (bz * rx - bx * rz) + (wz * cx - wx * cz),
            acc[joint, 2] + (bx * ry - by * rx) + (wx * cy - wy * cx))


point_drift = compiled_inline(point_drift)


def motion(v, parent, joint_type, pos, waxis, omega, alpha, acc):
    """
    Joint frames' angular velocities and velocity-product accelerations at v.

    From the frames of :func:`placements`: ``omega[i]``, and for zero joint accelerations the
    angular acceleration ``alpha[i]`` and the origin acceleration ``acc[i]`` (written into the
    given arrays).
    """
    nv = len(v)
    for i in range(nv):
        for r in range(3):
            omega[i, r] = 0.0
            alpha[i, r] = 0.0
            acc[i, r] = 0.0
    for i in range(nv):
        p = parent[i]
        qd = v[i]
        ax, ay, az = waxis[i, 0] * qd, waxis[i, 1] * qd, waxis[i, 2] * qd
        if p >= 0:
            wx, wy, wz = omega[p, 0], omega[p, 1], omega[p, 2]
            bx, by, bz = alpha[p, 0], alpha[p, 1], alpha[p, 2]
            # the parent's origin acceleration carried to this origin
            acc[i, 0], acc[i, 1], acc[i, 2] = point_drift(
                p, pos[i, 0] - pos[p, 0], pos[i, 1] - pos[p, 1], pos[i, 2] - pos[p, 2], omega,
                alpha, acc)
            # w_p x (axis qd)
            ex, ey, ez = wy * az - wz * ay, wz * ax - wx * az, wx * ay - wy * ax
            if joint_type[i] == REVOLUTE:
                omega[i, 0], omega[i, 1], omega[i, 2] = wx + ax, wy + ay, wz + az
                alpha[i, 0], alpha[i, 1], alpha[i, 2] = bx + ex, by + ey, bz + ez
            else:
                omega[i, 0], omega[i, 1], omega[i, 2] = wx, wy, wz
                alpha[i, 0], alpha[i, 1], alpha[i, 2] = bx, by, bz
                acc[i, 0] += 2.0 * ex
                acc[i, 1] += 2.0 * ey
                acc[i, 2] += 2.0 * ez
        elif joint_type[i] == REVOLUTE:
            omega[i, 0], omega[i, 1], omega[i, 2] = ax, ay, az


motion = compiled_inline(motion)


def kinematics(q, v, parent, joint_rot, joint_pos, joint_type, axis, rot, pos, waxis, omega,
               alpha, acc):
    """Run the kinematics pass: :func:`placements` at q, then :func:`motion` at v."""
    placements(q, parent, joint_rot, joint_pos, joint_type, axis, rot, pos, waxis)
    motion(v, parent, joint_type, pos, waxis, omega, alpha, acc)


kinematics = compiled_inline(kinematics)


def point_jacobian(px, py, pz, joint, support, joint_type, pos, waxis, jac):
    """
    World jacobian [linear; angular] of a point fixed to a body, written into ``jac``.

    ``jac`` is 6 x nv; the point (px, py, pz) is fixed to ``joint``'s body. This is pinocchio's
    LOCAL_WORLD_ALIGNED frame jacobian.
    """
    nv = jac.shape[1]
    for j in range(nv):
        if not support[joint, j]:
            for r in range(6):
                jac[r, j] = 0.0
            continue
        ax, ay, az = waxis[j, 0], waxis[j, 1], waxis[j, 2]
        if joint_type[j] == REVOLUTE:
            dx, dy, dz = px - pos[j, 0], py - pos[j, 1], pz - pos[j, 2]
            jac[0, j] = ay * dz - az * dy
            jac[1, j] = az * dx - ax * dz
            jac[2, j] = ax * dy - ay * dx
            jac[3, j] = ax
            jac[4, j] = ay
            jac[5, j] = az
        else:
            jac[0, j] = ax
            jac[1, j] = ay
            jac[2, j] = az
            jac[3, j] = 0.0
            jac[4, j] = 0.0
            jac[5, j] = 0.0


point_jacobian = compiled(point_jacobian)


def contact_points(rot, pos, frame_joint, frame_rot, frame_pos, out):
    for k in range(len(frame_joint)):
        j = frame_joint[k]
        for r in range(3):
            out[k, r] = pos[j, r] + rot[j, r, 0] * frame_pos[k, 0] \
                + rot[j, r, 1] * frame_pos[k, 1] + rot[j, r, 2] * frame_pos[k, 2]


contact_points = compiled(contact_points)


__all__ = ['REVOLUTE', 'PRISMATIC', 'workspace', 'placements', 'rotate', 'point_drift', 'motion',
           'kinematics', 'point_jacobian', 'contact_points']
