# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
Compiled Moreau-Jean step for the common small case (numba).

The same step as :class:`dodo_sim.physics.timestepping.MoreauJeanIntegrator` (docs/physics.md,
"Speed").

At the size of a hopper or a planar biped (4 to 10 DoF, one or two contacts) a step costs less
arithmetic than the per-call overhead of numpy and of pinocchio's Python bindings: ~25 numpy
operations and ~10 pinocchio calls made the generic step ~60 us where the arithmetic is ~2 us.
The kernels (:mod:`dodo_sim.physics.kernels`, one module a job) do the whole step in one compiled
call:

* kinematics and dynamics of a tree of 1-DoF revolute / prismatic joints (any axes), in world
  coordinates: joint frames, the mass matrix as sum of m J_c^T J_c + J_w^T I J_w over the
  bodies, the bias forces from the velocity-product accelerations, a Cholesky factorisation
  (the same quantities pinocchio's CRBA / RNEA give; the step uses M^-1 through the factor);
* the point-contact gaps and rows on a plane (flat ground or a slope; sphere radius included)
  and the joint-limit rows, the active set, the Delassus operator, restitution;
* the NCP solve of :mod:`dodo_sim.physics.solver` for planar blocks (exact single-block solve,
  block Gauss-Seidel / Jacobi with the polish), the same iteration and tests;
* the update, the position correction and the contact positions of the new state.

This module is their entry: whether a model qualifies and its packed arrays (:func:`pack_model`:
every joint 1-DoF revolute or prismatic, planar, flat or sloped terrain, numba installed;
otherwise the generic step runs), the warm-up that compiles or loads them (:func:`warm_up`) and
M, h of a packed model (:func:`dynamics`, for tests). Both steps give the same results to
rounding (test_physics_fast.py compares them step by step to 1e-12).
"""
from __future__ import annotations

import numpy as np

from .kernels.buffers import joint_arrays, pack_buffers, PackedModel
from .kernels.event import evaluate, rk4
from .kernels.jit import njit
from .kernels.kinematics import PRISMATIC, REVOLUTE
from .kernels.point_terms import pack_point_buffers, point_terms, point_terms_size
from .kernels.rigid_body import mass_matrix_and_bias
from .kernels.step import step


def pack_model(robot, geometry) -> PackedModel | None:
    """
    Return the packed arrays of ``robot`` for the compiled step, or None.

    None when the model does not qualify (a joint that is not 1-DoF revolute/prismatic, a 3-D
    model, a terrain that is not a plane) or numba is not installed.
    """
    if njit is None or not robot.vector_space or not robot.planar:
        return None
    if geometry.plane is None:
        return None
    model = robot.model
    joints = joint_arrays(model)
    if joints is None:
        return None
    parent, joint_rot, joint_pos, joint_type, axis, mass, com, inertia, support = joints
    frames = [model.frames[f] for f in geometry.frame_ids]
    frame_joint = np.array([f.parentJoint - 1 for f in frames], np.int64)
    if (frame_joint < 0).any():
        return None  # a contact frame fixed to the world
    frame_rot = np.array([f.placement.rotation for f in frames]).reshape(-1, 3, 3)
    frame_pos = np.array([f.placement.translation for f in frames]).reshape(-1, 3)
    bounds = geometry.bounds
    # load (or compile) the kernels now, not in the first step of a real-time run
    warm_up()
    return PackedModel(
        parent=parent, joint_rot=joint_rot, joint_pos=joint_pos, joint_type=joint_type,
        axis=axis, mass=mass, com=com, inertia=inertia, support=support,
        gravity=np.array(model.gravity.linear, float), frame_joint=frame_joint,
        frame_rot=frame_rot, frame_pos=frame_pos,
        radius=np.array(geometry.radii, float).reshape(-1),
        bound_iv=np.array([b[3] for b in bounds], np.int64),
        bound_side=np.array([float(b[1]) for b in bounds]),
        bound_value=np.array([b[4] for b in bounds], float),
        armature=np.array(model.armature, float))


def dynamics(packed: PackedModel, q, v):
    """M(q) and h(q, v) from the compiled model (tests compare them with pinocchio)."""
    nv = len(packed.parent)
    M, h = np.empty((nv, nv)), np.empty(nv)
    mass_matrix_and_bias(
        np.asarray(q, float), np.asarray(v, float), packed.parent, packed.joint_rot,
        packed.joint_pos, packed.joint_type, packed.axis, packed.mass, packed.com, packed.inertia,
        packed.support, packed.gravity, np.empty((nv, 3, 3)), np.empty((nv, 3)),
        np.empty((nv, 3)), M, h, np.empty((6, nv)), np.empty((nv, 3)), np.empty((nv, 3)),
        np.empty((nv, 3)), packed.armature)
    return M, h


def warm_up() -> bool:
    """
    Compile the kernels ahead of the first step.

    Compile the step, the event evaluation and the controller's point terms now (or load them from
    numba's on-disk cache, ``kernels/__pycache__``): the first compilation takes ~20-60 s
    of CPU, later processes load it in < 1 s. Returns False without numba.
    """
    if njit is None:
        return False
    nj, nc = 2, 1
    packed = PackedModel(
        parent=np.array([-1, 0], np.int64), joint_rot=np.tile(np.eye(3), (nj, 1, 1)),
        joint_pos=np.zeros((nj, 3)), joint_type=np.array([PRISMATIC, REVOLUTE], np.int64),
        axis=np.array([[0.0, 0.0, 1.0], [0.0, 1.0, 0.0]]), mass=np.ones(nj),
        com=np.zeros((nj, 3)), inertia=np.tile(np.eye(3), (nj, 1, 1)),
        support=np.array([[True, False], [True, True]]), gravity=np.array([0.0, 0.0, -9.81]),
        frame_joint=np.array([1], np.int64), frame_rot=np.eye(3)[None],
        frame_pos=np.array([[0.0, 0.0, -0.5]]), radius=np.zeros(nc),
        bound_iv=np.array([1], np.int64), bound_side=np.array([1.0]), bound_value=np.array([-1.0]),
        armature=np.zeros(nj))
    floats, ints = pack_buffers(packed, [1], plane=(0.0, 0.0, 0.0, 1.0), friction=0.8,
                                restitution=0.0,
                                margin=1e-5, far=0.5, tolerance=1e-10, max_iterations=100,
                                jacobi=False, position_correction=True)
    step(np.array([0.5, 0.0]), np.array([-1.0, 0.0]), np.zeros(1), 1e-3, floats, ints)
    for mode in (0, 1, 2):
        evaluate(np.array([0.5, 0.0]), np.array([-1.0, 0.0]), np.zeros(1), floats, ints, 200.0,
                 np.array([mode], np.int64), np.array([1.0]), np.zeros(1), np.zeros(2),
                 np.array([mode % 2], np.int64))
    rk4(np.array([0.5, 0.0]), np.array([-1.0, 0.0]), 1e-3, np.zeros(2), np.zeros((1, 3)),
        np.zeros(1), floats, ints, 200.0, np.array([1], np.int64), np.array([1.0]),
        np.zeros(1), np.zeros(2), np.array([0], np.int64))
    dynamics(packed, np.zeros(nj), np.zeros(nj))
    # a controller's per-tick terms
    point_floats, point_ints = pack_point_buffers(
        packed.parent, packed.joint_rot, packed.joint_pos, packed.joint_type, packed.axis,
        packed.mass, packed.com, packed.inertia, packed.support, packed.gravity, 1,
        packed.frame_rot[0], packed.frame_pos[0])
    point_terms(np.zeros(nj), np.zeros(nj), point_floats, point_ints, np.zeros(nj),
                np.empty(point_terms_size(nj)))
    return True


if __name__ == '__main__':
    print('compiled' if warm_up() else 'numba not installed: the generic step runs')


__all__ = ['pack_model', 'dynamics', 'warm_up']
