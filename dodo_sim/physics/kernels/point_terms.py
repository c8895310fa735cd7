# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
A controller's rigid-body terms at (q, v) in one compiled call (the control tick's fast path).

:func:`point_terms` gives what a task-space controller reads of its own model each tick (CoM and
one frame: positions, velocities, drifts, jacobians; M^-1, M^-1 h, h) from the same kinematics
pass and mass matrix as the step (:mod:`.kinematics`, :mod:`.rigid_body`). docs/control.md.
"""
from __future__ import annotations

import numpy as np

from .buffers import joint_arrays, tree_floats, tree_ints, unpack_tree
from .jit import compiled, njit
from .kinematics import point_drift, point_jacobian, rotate, workspace
from .linalg import cholesky, cholesky_solve_vec
from .rigid_body import mass_matrix_and_bias


def pack_point_buffers(parent, joint_rot, joint_pos, joint_type, axis, mass, com, inertia,
                       support, gravity, frame_joint, frame_rot, frame_pos):
    """
    Buffers ``(floats, ints)`` of :func:`point_terms` from a tree's arrays and one frame.

    ``frame_joint``: index of the frame's parent joint (0-based, the world excluded);
    ``frame_rot`` / ``frame_pos``: its placement in that joint's frame.
    """
    floats = np.concatenate([
        tree_floats(joint_rot, joint_pos, axis, mass, com, inertia, gravity),
        np.asarray(frame_rot, float).ravel(), np.asarray(frame_pos, float).ravel()]
    ).astype(np.float64)
    ints = np.concatenate([np.array([len(parent), frame_joint], np.int64),
                           tree_ints(parent, joint_type, support)]).astype(np.int64)
    return floats, ints


def pack_point_terms(model, frame_id: int):
    """
    Buffers ``(floats, ints)`` of :func:`point_terms` for a model.

    ``model`` is a pinocchio model and ``frame_id`` one of its frames (a controller's foot). None
    when the model does not qualify (a joint that is not 1-DoF revolute / prismatic, an inertia on
    the world body, the frame fixed to the world) or numba is not installed. Works from any model
    (e.g. a controller's own model with other masses than the simulator's); the model's armature is
    read at each call, not packed.
    """
    if njit is None:
        return None
    joints = joint_arrays(model)
    if joints is None or model.inertias[0].mass != 0.0:
        return None
    parent, joint_rot, joint_pos, joint_type, axis, mass, com, inertia, support = joints
    frame = model.frames[frame_id]
    if frame.parentJoint < 1 or not mass.sum() > 0.0:
        return None
    nj = len(parent)
    floats, ints = pack_point_buffers(
        parent, joint_rot, joint_pos, joint_type, axis, mass, com, inertia, support,
        np.array(model.gravity.linear, float), frame.parentJoint - 1,
        np.asarray(frame.placement.rotation), np.asarray(frame.placement.translation, float))
    point_terms(np.zeros(nj), np.zeros(nj), floats, ints, np.zeros(nj),
                np.empty(point_terms_size(nj)))   # compile / load now, not in the first tick
    return floats, ints


def point_terms_size(nv: int) -> int:
    """Length of :func:`point_terms`' output for nv degrees of freedom."""
    return 18 + 6 * nv + nv * nv + 2 * nv


def point_terms(q, v, floats, ints, armature, out):
    """
    Return a controller's rigid-body terms at (q, v) in one compiled call.

    They are written into ``out`` (world frame, the quantities of pinocchio's centerOfMass /
    jacobianCenterOfMass / computeFrameJacobian(LOCAL_WORLD_ALIGNED) /
    getFrameClassicalAcceleration / computeMinverse / nonLinearEffects with zero joint
    accelerations), in this order:

    CoM position (3), CoM velocity (3), CoM drift J̇_c q̇ (3), frame position (3), frame
    velocity (3), frame drift J̇_f q̇ (3), CoM jacobian (3 x nv, row-major), frame jacobian
    (3 x nv, linear rows), M^-1 (nv x nv, symmetric), M^-1 h (nv), h (nv).
    ``floats`` / ``ints``: :func:`pack_point_terms`; ``armature``: the model's diagonal added
    to M. Returns False (``out`` undefined) if M is not positive definite.
    """
    nj, frame_joint = ints[0], ints[1]
    (parent, joint_type, support, joint_rot, joint_pos, axis, mass, com, inertia, gravity, _,
     f) = unpack_tree(floats, ints, nj, 2)
    f += 9  # the frame's rotation, unused here
    frame_pos = floats[f:f + 3]
    nv = nj
    rot, pos, waxis, M, h, jac, omega, alpha, acc = workspace(nv)
    mass_matrix_and_bias(q, v, parent, joint_rot, joint_pos, joint_type, axis, mass, com,
                         inertia, support, gravity, rot, pos, waxis, M, h, jac, omega, alpha,
                         acc, armature)
    # CoM: mass-weighted position, jacobian and drift of the body centres
    i_com = 18
    i_frame = 18 + 3 * nv
    for k in range(18 + 6 * nv):
        out[k] = 0.0
    total = 0.0
    for i in range(nv):
        total += mass[i]
    for i in range(nv):
        m = mass[i]
        if m == 0.0:
            continue
        dx, dy, dz = rotate(rot[i], com[i])
        w = m / total
        out[0] += w * (pos[i, 0] + dx)
        out[1] += w * (pos[i, 1] + dy)
        out[2] += w * (pos[i, 2] + dz)
        ax, ay, az = point_drift(i, dx, dy, dz, omega, alpha, acc)
        out[6] += w * ax
        out[7] += w * ay
        out[8] += w * az
        point_jacobian(pos[i, 0] + dx, pos[i, 1] + dy, pos[i, 2] + dz, i, support, joint_type,
                       pos, waxis, jac)
        for r in range(3):
            for c in range(nv):
                out[i_com + r * nv + c] += w * jac[r, c]
    # the frame: position, jacobian, classical drift of a point fixed to its joint
    j0 = frame_joint
    px, py, pz = pos[j0, 0], pos[j0, 1], pos[j0, 2]
    rx, ry, rz = rotate(rot[j0], frame_pos)
    out[9], out[10], out[11] = px + rx, py + ry, pz + rz
    out[15], out[16], out[17] = point_drift(j0, rx, ry, rz, omega, alpha, acc)
    point_jacobian(px + rx, py + ry, pz + rz, j0, support, joint_type, pos, waxis, jac)
    for r in range(3):
        for c in range(nv):
            out[i_frame + r * nv + c] = jac[r, c]
    # velocities J v
    for r in range(3):
        vc = 0.0
        vf = 0.0
        for c in range(nv):
            vc += out[i_com + r * nv + c] * v[c]
            vf += out[i_frame + r * nv + c] * v[c]
        out[3 + r] = vc
        out[12 + r] = vf
    # M^-1 (columns through the Cholesky factor; upper triangle mirrored), M^-1 h, h
    L = np.empty((nv, nv))
    if not cholesky(M, L):
        return False
    i_minv = 18 + 6 * nv
    column = np.empty(nv)
    for c in range(nv):
        for r in range(nv):
            column[r] = 1.0 if r == c else 0.0
        cholesky_solve_vec(L, column)
        for r in range(c + 1):
            out[i_minv + r * nv + c] = column[r]
            out[i_minv + c * nv + r] = column[r]
    i_mh = i_minv + nv * nv
    for r in range(nv):
        acc_r = 0.0
        for c in range(nv):
            acc_r += out[i_minv + r * nv + c] * h[c]
        out[i_mh + r] = acc_r
        out[i_mh + nv + r] = h[r]
    return True


point_terms = compiled(point_terms)


__all__ = ['pack_point_buffers', 'pack_point_terms', 'point_terms_size', 'point_terms']
