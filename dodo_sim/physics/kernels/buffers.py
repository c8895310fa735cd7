# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
The packed model the kernels read, and its two flat buffers (one float64, one int64).

A compiled call pays per argument: two buffers instead of 30 arrays and scalars. The layout of a
buffer is written once here (:func:`tree_floats` / :func:`tree_ints` pack the kinematic tree,
:func:`unpack_tree` reads it back; :func:`pack_buffers` / :func:`unpack_model` add the contacts,
limits and parameters of the step and the event evaluation).
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np
import pinocchio as pin

from .jit import compiled_inline
from .kinematics import PRISMATIC, REVOLUTE


class PackedModel(NamedTuple):
    """The arrays the compiled kernels read (built once by ``fast.pack_model``)."""

    parent: np.ndarray        # (nj,) int, -1 for the world
    joint_rot: np.ndarray     # (nj, 3, 3) joint placement rotation in the parent joint frame
    joint_pos: np.ndarray     # (nj, 3) joint placement translation
    joint_type: np.ndarray    # (nj,) int, 0 revolute, 1 prismatic
    axis: np.ndarray          # (nj, 3) unit axis in the joint frame
    mass: np.ndarray          # (nj,) kg
    com: np.ndarray           # (nj, 3) centre of mass in the joint frame, m
    inertia: np.ndarray       # (nj, 3, 3) rotational inertia about the com, joint frame
    support: np.ndarray       # (nj, nj) bool, [i, j]: joint j is i or an ancestor of i
    gravity: np.ndarray       # (3,) m/s^2
    frame_joint: np.ndarray   # (nc,) int, parent joint of each contact frame
    frame_rot: np.ndarray     # (nc, 3, 3)
    frame_pos: np.ndarray     # (nc, 3)
    radius: np.ndarray        # (nc,) m
    bound_iv: np.ndarray      # (nb,) int, velocity index of each finite limit bound
    bound_side: np.ndarray    # (nb,) float, +1 lower bound, -1 upper bound
    bound_value: np.ndarray   # (nb,) m or rad
    armature: np.ndarray      # (nj,) diagonal added to the mass matrix (reflected rotor
    # inertia, pinocchio model.armature), kg m^2 or kg


def joint_arrays(model):
    """
    Per-joint arrays of a model with 1-DoF revolute/prismatic joints.

    The model is a pinocchio model whose joints are all 1-DoF revolute or prismatic (any axis); q
    and v indices are in joint order. The arrays: parent, joint placement rotation and translation,
    type, axis, body mass, com, rotational inertia, support matrix. None when a joint does not
    qualify.
    """
    nj = model.njoints - 1
    if model.nv != nj or model.nq != nj:
        return None
    data = model.createData()
    q0 = pin.neutral(model)
    parent = np.empty(nj, np.int64)
    joint_rot = np.empty((nj, 3, 3))
    joint_pos = np.empty((nj, 3))
    joint_type = np.empty(nj, np.int64)
    axis = np.empty((nj, 3))
    mass = np.empty(nj)
    com = np.empty((nj, 3))
    inertia = np.empty((nj, 3, 3))
    for i in range(1, model.njoints):
        joint = model.joints[i]
        if joint.nq != 1 or joint.nv != 1 or joint.idx_v != i - 1 or joint.idx_q != i - 1:
            return None
        # motion subspace in the joint frame: [linear; angular] column of the local jacobian
        # (6, nv) even for nv = 1 (pinocchio returns a 1-D array for a single column)
        column = np.asarray(pin.computeJointJacobian(model, data, q0, i)).reshape(6, model.nv)[
            :, i - 1]
        lin, ang = column[:3], column[3:]
        if np.abs(lin).max() < 1e-12 and abs(np.linalg.norm(ang) - 1.0) < 1e-12:
            joint_type[i - 1], axis[i - 1] = REVOLUTE, ang
        elif np.abs(ang).max() < 1e-12 and abs(np.linalg.norm(lin) - 1.0) < 1e-12:
            joint_type[i - 1], axis[i - 1] = PRISMATIC, lin
        else:
            return None
        parent[i - 1] = model.parents[i] - 1
        placement = model.jointPlacements[i]
        joint_rot[i - 1] = placement.rotation
        joint_pos[i - 1] = placement.translation
        body = model.inertias[i]
        mass[i - 1] = body.mass
        com[i - 1] = body.lever
        inertia[i - 1] = body.inertia
    support = np.zeros((nj, nj), dtype=np.bool_)
    for i in range(nj):
        j = i
        while j >= 0:
            support[i, j] = True
            j = parent[j]
    return parent, joint_rot, joint_pos, joint_type, axis, mass, com, inertia, support


def tree_floats(joint_rot, joint_pos, axis, mass, com, inertia, gravity):
    """Float buffer head of a kinematic tree: placements, axes, masses, coms, inertias, gravity."""
    return np.concatenate([joint_rot.ravel(), joint_pos.ravel(), axis.ravel(), mass, com.ravel(),
                           inertia.ravel(), gravity]).astype(np.float64)


def tree_ints(parent, joint_type, support):
    """Int buffer part of a kinematic tree: parents, joint types, support matrix."""
    return np.concatenate([parent, joint_type,
                           support.astype(np.int64).ravel()]).astype(np.int64)


def unpack_tree(floats, ints, nj, o):
    """
    Return the kinematic tree of ``nj`` joints packed by :func:`tree_floats` / :func:`tree_ints`.

    The int part starts at ``ints[o]``, the float part at ``floats[0]``. Returns ``(parent,
    joint_type, support, joint_rot, joint_pos, axis, mass, com, inertia, gravity, o, f)`` with
    ``o`` / ``f`` the offsets just past the tree in each buffer.
    """
    parent = ints[o:o + nj]
    o += nj
    joint_type = ints[o:o + nj]
    o += nj
    support = ints[o:o + nj * nj].reshape((nj, nj)) != 0
    o += nj * nj
    f = 0
    joint_rot = floats[f:f + 9 * nj].reshape((nj, 3, 3))
    f += 9 * nj
    joint_pos = floats[f:f + 3 * nj].reshape((nj, 3))
    f += 3 * nj
    axis = floats[f:f + 3 * nj].reshape((nj, 3))
    f += 3 * nj
    mass = floats[f:f + nj]
    f += nj
    com = floats[f:f + 3 * nj].reshape((nj, 3))
    f += 3 * nj
    inertia = floats[f:f + 9 * nj].reshape((nj, 3, 3))
    f += 9 * nj
    gravity = floats[f:f + 3]
    f += 3
    return parent, joint_type, support, joint_rot, joint_pos, axis, mass, com, inertia, gravity, \
        o, f


unpack_tree = compiled_inline(unpack_tree)


def pack_buffers(packed: PackedModel, actuated_idx_v, *, plane, friction, restitution,
                 margin, far, tolerance, max_iterations, jacobi, position_correction):
    """
    One float64 and one int64 buffer holding the model and the parameters.

    A compiled call pays per argument: 2 buffers instead of 30 arrays and scalars.
    """
    nj, nc, nb = len(packed.parent), len(packed.frame_joint), len(packed.bound_iv)
    floats = np.concatenate([
        tree_floats(packed.joint_rot, packed.joint_pos, packed.axis, packed.mass, packed.com,
                    packed.inertia, packed.gravity),
        packed.frame_rot.ravel(), packed.frame_pos.ravel(), packed.radius, packed.bound_side,
        packed.bound_value,
        np.array(tuple(plane) + (friction, restitution, margin, far, tolerance)),
        packed.armature]).astype(np.float64)
    actuated = np.asarray(actuated_idx_v, np.int64)
    ints = np.concatenate([
        np.array([nj, nc, nb, len(actuated), max_iterations, int(jacobi),
                  int(position_correction)], np.int64),
        tree_ints(packed.parent, packed.joint_type, packed.support),
        packed.frame_joint, packed.bound_iv, actuated]).astype(np.int64)
    return floats, ints


def unpack_model(floats, ints):
    """
    Return the arrays of :func:`pack_buffers`' buffers (views, no copies).

    ``(nj, nc, nb, na, parent, joint_type, support, frame_joint, bound_iv, actuated, joint_rot,
    joint_pos, axis, mass, com, inertia, gravity, frame_rot, frame_pos, radius, bound_side,
    bound_value, f)``; ``f`` is the offset of the scalars that follow (plane h0, slope, nx, nz,
    friction, restitution, margin, far, tolerance), then the armature (nj).
    """
    nj, nc, nb, na = ints[0], ints[1], ints[2], ints[3]
    (parent, joint_type, support, joint_rot, joint_pos, axis, mass, com, inertia, gravity, o,
     f) = unpack_tree(floats, ints, nj, 7)
    frame_joint = ints[o:o + nc]
    o += nc
    bound_iv = ints[o:o + nb]
    o += nb
    actuated = ints[o:o + na]
    frame_rot = floats[f:f + 9 * nc].reshape((nc, 3, 3))
    f += 9 * nc
    frame_pos = floats[f:f + 3 * nc].reshape((nc, 3))
    f += 3 * nc
    radius = floats[f:f + nc]
    f += nc
    bound_side = floats[f:f + nb]
    f += nb
    bound_value = floats[f:f + nb]
    f += nb
    return (nj, nc, nb, na, parent, joint_type, support, frame_joint, bound_iv, actuated,
            joint_rot, joint_pos, axis, mass, com, inertia, gravity, frame_rot, frame_pos, radius,
            bound_side, bound_value, f)


unpack_model = compiled_inline(unpack_model)


__all__ = ['PackedModel', 'joint_arrays', 'tree_floats', 'tree_ints', 'unpack_tree',
           'pack_buffers', 'unpack_model']
