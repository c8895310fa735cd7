# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
Compiled Moreau-Jean step for the common small case (numba).

The same step as :class:`dodo_sim.physics.timestepping.MoreauJeanIntegrator` (docs/physics.md,
"Speed").

At the size of a hopper or a planar biped (4 to 10 DoF, one or two contacts) a step costs less
arithmetic than the per-call overhead of numpy and of pinocchio's Python bindings: ~25 numpy
operations and ~10 pinocchio calls made the generic step ~60 us where the arithmetic is ~2 us.
This module does the whole step in one compiled call:

* kinematics and dynamics of a tree of 1-DoF revolute / prismatic joints (any axes), in world
  coordinates: joint frames, the mass matrix as sum of m J_c^T J_c + J_w^T I J_w over the
  bodies, the bias forces from the velocity-product accelerations, a Cholesky factorisation
  (the same quantities pinocchio's CRBA / RNEA give; the step uses M^-1 through the factor);
* the point-contact gaps and rows on a plane (flat ground or a slope; sphere radius included)
  and the joint-limit rows, the active set, the Delassus operator, restitution;
* the NCP solve of :mod:`dodo_sim.physics.solver` for planar blocks (exact single-block solve,
  block Gauss-Seidel / Jacobi with the polish), the same iteration and tests;
* the update, the position correction and the contact positions of the new state.

Used when the model qualifies (:func:`pack_model`: every joint 1-DoF revolute or prismatic,
planar, flat or sloped terrain) and numba is installed; otherwise the generic step runs. Both give
the same
results to rounding (test_physics_fast.py compares them step by step to 1e-12).
"""
from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from .solver import STICK_MARGIN

try:
    from numba import njit
except ImportError:  # the generic step runs without numba
    njit = None

#: pinocchio's generalised-force convention: M a + h(q, v) = tau.
_REVOLUTE, _PRISMATIC = 0, 1
#: the event integrator's force-condition offset (event.py _FORCE_EPS), N
_FORCE_EPS = 1e-9


class PackedModel(NamedTuple):
    """The arrays the compiled step reads (built once by :func:`pack_model`)."""

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


def pack_model(robot, geometry) -> PackedModel | None:
    """
    Return the packed arrays of ``robot`` for the compiled step.

    Or None when the model does not qualify (a joint that is not 1-DoF revolute/prismatic, a 3-D
    model, a terrain that is not a plane) or numba is not installed.
    """
    if njit is None or not robot.vector_space or not robot.planar:
        return None
    if geometry.plane is None:
        return None
    model = robot.model
    joints = _joint_arrays(model)
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


def _joint_arrays(model):
    """
    Per-joint arrays of a model with 1-DoF revolute/prismatic joints.

    Per-joint arrays of a pinocchio model whose joints are all 1-DoF revolute or prismatic (any
    axis), q and v indices in joint order: parent, joint placement rotation and translation, type,
    axis, body mass, com, rotational inertia, support matrix. None when a joint does not qualify.
    """
    import pinocchio as pin
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
            joint_type[i - 1], axis[i - 1] = _REVOLUTE, ang
        elif np.abs(ang).max() < 1e-12 and abs(np.linalg.norm(lin) - 1.0) < 1e-12:
            joint_type[i - 1], axis[i - 1] = _PRISMATIC, lin
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


def _compiled(function):
    return function if njit is None else njit(cache=True, fastmath=False)(function)


# -- kinematics and dynamics -----------------------------------------------------------------
# Written with explicit loops on preallocated arrays: numba turns a 3x3 ``@`` into a BLAS call
# and every temporary into an allocation, each costing more than the arithmetic here.

def _placements(q, parent, joint_rot, joint_pos, joint_type, axis, rot, pos, waxis):
    """
    World rotation ``rot[i]`` and origin ``pos[i]`` of every joint frame at q.

    And each joint's world axis ``waxis[i]`` (written into the given arrays).
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
        if joint_type[i] == _REVOLUTE:
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


_placements = _compiled(_placements)


def _point_jacobian(px, py, pz, joint, support, joint_type, pos, waxis, jac):
    """
    World Jacobian [linear; angular] of a frame, written into ``jac``.

    World jacobian [linear; angular] (6 x nv, written into ``jac``) of the point (px, py, pz) fixed
    to ``joint``'s body: pinocchio's LOCAL_WORLD_ALIGNED frame jacobian.
    """
    nv = jac.shape[1]
    for j in range(nv):
        if not support[joint, j]:
            for r in range(6):
                jac[r, j] = 0.0
            continue
        ax, ay, az = waxis[j, 0], waxis[j, 1], waxis[j, 2]
        if joint_type[j] == _REVOLUTE:
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


_point_jacobian = _compiled(_point_jacobian)


def _dynamics(q, v, parent, joint_rot, joint_pos, joint_type, axis, mass, com, inertia,
              support, gravity, rot, pos, waxis, M, h, jac, omega, alpha, acc, armature):
    """
    Mass matrix M(q) and bias h(q, v) (M a + h = tau) into ``M`` and ``h``.

    The joint frames at q into rot / pos / waxis, their angular velocities and velocity-product
    accelerations (angular, origin) into omega / alpha / acc. M = sum over bodies of m J_c^T J_c +
    J_w^T I J_w, h = sum of J_c^T m (a_c - g) + J_w^T (I alpha + w x I w) with the velocity-product
    accelerations; the ``armature`` is added to the diagonal of M (pinocchio's CRBA / ABA do the
    same).
    """
    nv = len(q)
    _placements(q, parent, joint_rot, joint_pos, joint_type, axis, rot, pos, waxis)
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
            rx, ry, rz = pos[i, 0] - pos[p, 0], pos[i, 1] - pos[p, 1], pos[i, 2] - pos[p, 2]
            # a_p + alpha_p x r + w_p x (w_p x r)
            cx, cy, cz = wy * rz - wz * ry, wz * rx - wx * rz, wx * ry - wy * rx
            acc[i, 0] = acc[p, 0] + (by * rz - bz * ry) + (wy * cz - wz * cy)
            acc[i, 1] = acc[p, 1] + (bz * rx - bx * rz) + (wz * cx - wx * cz)
            acc[i, 2] = acc[p, 2] + (bx * ry - by * rx) + (wx * cy - wy * cx)
            # w_p x (axis qd)
            ex, ey, ez = wy * az - wz * ay, wz * ax - wx * az, wx * ay - wy * ax
            if joint_type[i] == _REVOLUTE:
                omega[i, 0], omega[i, 1], omega[i, 2] = wx + ax, wy + ay, wz + az
                alpha[i, 0], alpha[i, 1], alpha[i, 2] = bx + ex, by + ey, bz + ez
            else:
                omega[i, 0], omega[i, 1], omega[i, 2] = wx, wy, wz
                alpha[i, 0], alpha[i, 1], alpha[i, 2] = bx, by, bz
                acc[i, 0] += 2.0 * ex
                acc[i, 1] += 2.0 * ey
                acc[i, 2] += 2.0 * ez
        elif joint_type[i] == _REVOLUTE:
            omega[i, 0], omega[i, 1], omega[i, 2] = ax, ay, az
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
        dx = R[0, 0] * com[i, 0] + R[0, 1] * com[i, 1] + R[0, 2] * com[i, 2]
        dy = R[1, 0] * com[i, 0] + R[1, 1] * com[i, 1] + R[1, 2] * com[i, 2]
        dz = R[2, 0] * com[i, 0] + R[2, 1] * com[i, 1] + R[2, 2] * com[i, 2]
        _point_jacobian(pos[i, 0] + dx, pos[i, 1] + dy, pos[i, 2] + dz, i, support, joint_type,
                        pos, waxis, jac)
        wx, wy, wz = omega[i, 0], omega[i, 1], omega[i, 2]
        bx, by, bz = alpha[i, 0], alpha[i, 1], alpha[i, 2]
        cx, cy, cz = wy * dz - wz * dy, wz * dx - wx * dz, wx * dy - wy * dx
        fx = m * (acc[i, 0] + (by * dz - bz * dy) + (wy * cz - wz * cy) - gravity[0])
        fy = m * (acc[i, 1] + (bz * dx - bx * dz) + (wz * cx - wx * cz) - gravity[1])
        fz = m * (acc[i, 2] + (bx * dy - by * dx) + (wx * cy - wy * cx) - gravity[2])
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


_dynamics = _compiled(_dynamics)


def _contact_points(rot, pos, frame_joint, frame_rot, frame_pos, out):
    for k in range(len(frame_joint)):
        j = frame_joint[k]
        for r in range(3):
            out[k, r] = pos[j, r] + rot[j, r, 0] * frame_pos[k, 0] \
                + rot[j, r, 1] * frame_pos[k, 1] + rot[j, r, 2] * frame_pos[k, 2]


_contact_points = _compiled(_contact_points)


# -- the planar NCP (solver.py on arrays) ----------------------------------------------------

def _solve_contact_2d(g_nn, g_nt, g_tn, g_tt, b_n, b_t, mu):
    """solver.solve_contact_2d."""
    if b_n >= 0.0:
        return 0.0, 0.0
    det = g_nn * g_tt - g_nt * g_tn
    if det <= 1e-12 * g_nn * g_tt:  # solver.SINGULAR_CONTACT_RATIO: a rank-1 block
        lam_n = -b_n / g_nn
        if abs(g_tn * lam_n + b_t) <= 1e-9 * (abs(b_t) + abs(b_n)):
            return lam_n, 0.0
        det = np.inf
    lam_n = (g_nt * b_t - g_tt * b_n) / det
    lam_t = (g_tn * b_n - g_nn * b_t) / det
    if lam_n >= 0.0 and abs(lam_t) <= mu * lam_n:
        return lam_n, lam_t
    first = -1.0 if lam_t > 0.0 else 1.0
    scale = abs(b_t) + abs(b_n)
    for k in range(2):
        s = first if k == 0 else -first
        den = g_nn - s * mu * g_nt
        if den <= 0.0:
            continue
        ln = -b_n / den
        u_t = (g_tn - s * mu * g_tt) * ln + b_t
        if s * u_t >= -1e-14 * scale:
            return ln, -s * mu * ln
    lam_n = max(lam_n, 0.0)
    return lam_n, min(max(lam_t, -mu * lam_n), mu * lam_n)


_solve_contact_2d = _compiled(_solve_contact_2d)


def _residual(G, b, lam, starts, sizes, mus, dirs):
    """
    solver.residual for planar blocks.

    (dirs[k] = 0: Coulomb cone, else the fixed sliding direction +-1).
    """
    m = len(b)
    u = np.empty(m)
    for i in range(m):
        acc = b[i]
        for j in range(m):
            acc += G[i, j] * lam[j]
        u[i] = acc
    worst = 0.0
    for k in range(len(starts)):
        s = starts[k]
        lam_n = lam[s]
        g_nn = G[s, s]
        value = abs(min(lam_n * g_nn, u[s]))
        if value > worst:
            worst = value
        if sizes[k] == 1:
            continue
        pressure = lam_n if lam_n > 0.0 else 0.0
        if dirs[k] != 0.0:
            err = abs(lam[s + 1] + mus[k] * pressure * dirs[k]) * g_nn
            if err > worst:
                worst = err
            continue
        rho = 1.0 / max(G[s + 1, s + 1], 1e-300)
        t = lam[s + 1]
        z = t - rho * u[s + 1]
        radius = mus[k] * pressure
        norm = math.sqrt(z * z)
        if norm > radius:
            z = z * (radius / norm)
        err = abs(t - z) / rho
        if err > worst:
            worst = err
    return worst


_residual = _compiled(_residual)


def _modes(lam, starts, sizes, mus, dirs):
    """solver._modes_lists: per block 0 separated, 1 stick/active, 2 slide (+), 3 slide (-)."""
    out = np.zeros(len(starts), np.int64)
    for k in range(len(starts)):
        s = starts[k]
        if not lam[s] > 0.0:
            out[k] = 0
        elif sizes[k] == 1 or dirs[k] != 0.0:
            out[k] = 1
        else:
            t = lam[s + 1]
            if abs(t) < mus[k] * lam[s] * (1.0 - 1e-9) or t == 0.0:
                out[k] = 1
            else:
                out[k] = 2 if t < 0.0 else 3   # sliding direction -sign(t)
    return out


_modes = _compiled(_modes)


def _polish(G, b, starts, sizes, mus, dirs, modes):
    """solver._polish: the linear system of a mode set; (lam, ok)."""
    m = len(b)
    nb = len(starts)
    ncols = 0
    for k in range(nb):
        if modes[k] == 0:
            continue
        if modes[k] == 1 and sizes[k] == 2 and dirs[k] == 0.0:
            ncols += 2
        else:
            ncols += 1
    if ncols == 0:
        return np.zeros(m), True
    P = np.zeros((m, ncols))
    rows = np.empty(ncols, np.int64)
    c = 0
    for k in range(nb):
        s = starts[k]
        mode = modes[k]
        if mode == 0:
            continue
        if mode == 1 and sizes[k] == 2 and dirs[k] == 0.0:
            P[s, c] = 1.0
            rows[c] = s
            P[s + 1, c + 1] = 1.0
            rows[c + 1] = s + 1
            c += 2
            continue
        P[s, c] = 1.0
        if sizes[k] == 2:
            if mode == 1:
                d = dirs[k]
            elif mode == 2:
                d = 1.0
            else:
                d = -1.0
            P[s + 1, c] = -mus[k] * d
        rows[c] = s
        c += 1
    A = np.empty((ncols, ncols))
    rhs = np.empty(ncols)
    GP = G @ P
    for r in range(ncols):
        A[r] = GP[rows[r]]
        rhs[r] = -b[rows[r]]
    det = np.linalg.det(A)
    if det == 0.0 or not math.isfinite(det):
        return np.zeros(m), False
    x = np.linalg.solve(A, rhs)
    return P @ x, True


_polish = _compiled(_polish)


def _solve(G, b, starts, sizes, mus, dirs, tolerance, max_iterations, jacobi):
    """solver.solve for planar blocks: returns (lam, iterations, residual, converged)."""
    m = len(b)
    nb = len(starts)
    if nb == 1:
        if sizes[0] == 2 and dirs[0] == 0.0:
            lam_n, lam_t = _solve_contact_2d(G[0, 0], G[0, 1], G[1, 0], G[1, 1], b[0], b[1],
                                             mus[0])
            lam = np.array((lam_n, lam_t))
        elif sizes[0] == 1:
            lam = np.array((-b[0] / G[0, 0] if b[0] < 0.0 else 0.0,))
        else:
            d = dirs[0]
            den = G[0, 0] - mus[0] * G[0, 1] * d
            lam_n = -b[0] / den if (b[0] < 0.0 and den > 0.0) else 0.0
            lam = np.array((lam_n, -mus[0] * lam_n * d))
        res = _residual(G, b, lam, starts, sizes, mus, dirs)
        return lam, 1, res, res <= tolerance
    lam = np.zeros(m)
    modes = np.full(nb, -1, np.int64)
    res = math.inf
    best = np.zeros(m)
    best_res = math.inf
    have_best = False
    for iteration in range(1, max_iterations + 1):
        source = lam.copy() if jacobi else lam
        for k in range(nb):
            lo = starts[k]
            hi = lo + sizes[k]
            b_loc = np.empty(sizes[k])
            for i in range(lo, hi):
                acc = b[i]
                for j in range(lo):
                    acc += G[i, j] * source[j]
                for j in range(hi, m):
                    acc += G[i, j] * source[j]
                b_loc[i - lo] = acc
            if sizes[k] == 1:
                lam[lo] = -b_loc[0] / G[lo, lo] if b_loc[0] < 0.0 else 0.0
            elif dirs[k] != 0.0:
                d = dirs[k]
                den = G[lo, lo] - mus[k] * G[lo, lo + 1] * d
                lam_n = -b_loc[0] / den if (b_loc[0] < 0.0 and den > 0.0) else 0.0
                lam[lo] = lam_n
                lam[lo + 1] = -mus[k] * lam_n * d
            else:
                lam_n, lam_t = _solve_contact_2d(G[lo, lo], G[lo, lo + 1], G[lo + 1, lo],
                                                 G[lo + 1, lo + 1], b_loc[0], b_loc[1], mus[k])
                lam[lo] = lam_n
                lam[lo + 1] = lam_t
        res = _residual(G, b, lam, starts, sizes, mus, dirs)
        if res <= tolerance:
            return lam, iteration, res, True
        current = _modes(lam, starts, sizes, mus, dirs)
        if (current == modes).all():
            polished, ok = _polish(G, b, starts, sizes, mus, dirs, current)
            if ok:
                p_res = _residual(G, b, polished, starts, sizes, mus, dirs)
                if p_res <= tolerance:
                    return polished, iteration, p_res, True
                if not have_best or p_res < best_res:
                    best = polished
                    best_res = p_res
                    have_best = True
        modes = current
    if have_best and best_res < res:
        return best, max_iterations, best_res, False
    return lam, max_iterations, res, False


_solve = _compiled(_solve)


# -- the step --------------------------------------------------------------------------------

def _cholesky(A, L):
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


_cholesky = _compiled(_cholesky)


def _cholesky_solve_vec(L, y):
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


_cholesky_solve_vec = _compiled(_cholesky_solve_vec)


def _step_arrays(q, v, tau, dt, P_parent, P_joint_rot, P_joint_pos, P_joint_type, P_axis, P_mass,
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
    rot = np.empty((nv, 3, 3))
    pos = np.empty((nv, 3))
    waxis = np.empty((nv, 3))
    M = np.empty((nv, nv))
    h = np.empty(nv)
    jac = np.empty((6, nv))
    L = np.empty((nv, nv))
    q_mid = np.empty(nv)
    for i in range(nv):
        q_mid[i] = q[i] + half * v[i]
    _dynamics(q_mid, v, P_parent, P_joint_rot, P_joint_pos, P_joint_type, P_axis, P_mass,
              P_com, P_inertia, P_support, P_gravity, rot, pos, waxis, M, h, jac,
              np.empty((nv, 3)), np.empty((nv, 3)), np.empty((nv, 3)), P_armature)
    if not _cholesky(M, L):
        # a non-finite state (or a singular model): NaN out, the Simulator reports divergence
        nan = np.full(nv, np.nan)
        return (nan, nan.copy(), np.zeros((nc, 3)), np.zeros(nc, np.bool_), 0, math.inf, False,
                math.inf, np.full((nc, 3), np.nan))
    v_free = np.empty(nv)
    for i in range(nv):
        v_free[i] = tau[i] - h[i]
    _cholesky_solve_vec(L, v_free)
    for i in range(nv):
        v_free[i] = v[i] + dt * v_free[i]
    points = np.empty((nc, 3))
    _contact_points(rot, pos, P_frame_joint, P_frame_rot, P_frame_pos, points)
    # active set: contacts (normal, tangent rows) then limit bounds (one row), in that order
    kind = np.empty(nc + nb, np.int64)      # 0 contact, 1 limit
    index = np.empty(nc + nb, np.int64)
    W = np.zeros((2 * nc + nb, nv))
    n_active = 0
    m = 0
    for k in range(nc):
        gap = (points[k, 2] - (h0 + slope * points[k, 0])) * nz - P_radius[k]
        if gap > far:
            continue
        _point_jacobian(points[k, 0], points[k, 1], points[k, 2], P_frame_joint[k], P_support,
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
        _placements(q_next, P_parent, P_joint_rot, P_joint_pos, P_joint_type, P_axis, rot, pos,
                    waxis)
        _contact_points(rot, pos, P_frame_joint, P_frame_rot, P_frame_pos, points)
        return (q_next, v_free, impulses, pushing_flags, 0, 0.0, True, math.inf, points)
    # M^-1 W^T column by column, G = W M^-1 W^T, b = W v_free
    minv_wt = np.empty((nv, m))
    column = np.empty(nv)
    for r in range(m):
        for j in range(nv):
            column[j] = W[r, j]
        _cholesky_solve_vec(L, column)
        for j in range(nv):
            minv_wt[j, r] = column[j]
    G = np.empty((m, m))
    b = np.empty(m)
    for r in range(m):
        acc = 0.0
        for j in range(nv):
            acc += W[r, j] * v_free[j]
        b[r] = acc
        for c in range(m):
            acc = 0.0
            for j in range(nv):
                acc += W[r, j] * minv_wt[j, c]
            G[r, c] = acc
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
    lam, iterations, residual, converged = _solve(G, b, starts, sizes, mus, dirs, tolerance,
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
    _placements(q_next, P_parent, P_joint_rot, P_joint_pos, P_joint_type, P_axis, rot, pos,
                waxis)
    _contact_points(rot, pos, P_frame_joint, P_frame_rot, P_frame_pos, points)
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
                delta = _spd_solve_or_least_squares(G_cc, targets[:n_rows].copy())
                for j in range(nv):
                    acc = 0.0
                    for p in range(n_rows):
                        acc += minv_wt[j, rows[p]] * delta[p]
                    q_next[j] = q_next[j] + acc
            _placements(q_next, P_parent, P_joint_rot, P_joint_pos, P_joint_type, P_axis, rot,
                        pos, waxis)
            _contact_points(rot, pos, P_frame_joint, P_frame_rot, P_frame_pos, points)
    return (q_next, v_next, impulses, pushing_flags, iterations, residual, converged, min_u,
            points)


def _spd_solve_or_least_squares(A, r):
    """timestepping._spd_solve_or_least_squares."""
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


_spd_solve_or_least_squares = _compiled(_spd_solve_or_least_squares)
_step_arrays = _compiled(_step_arrays)


def pack_buffers(packed: PackedModel, actuated_idx_v, *, plane, friction, restitution,
                 margin, far, tolerance, max_iterations, jacobi, position_correction):
    """
    One float64 and one int64 buffer holding the model and the parameters.

    (a compiled call pays per argument: 2 buffers instead of 30 arrays and scalars).
    """
    nj, nc, nb = len(packed.parent), len(packed.frame_joint), len(packed.bound_iv)
    floats = np.concatenate([
        packed.joint_rot.ravel(), packed.joint_pos.ravel(), packed.axis.ravel(), packed.mass,
        packed.com.ravel(), packed.inertia.ravel(), packed.gravity, packed.frame_rot.ravel(),
        packed.frame_pos.ravel(), packed.radius, packed.bound_side, packed.bound_value,
        np.array(tuple(plane) + (friction, restitution, margin, far, tolerance)),
        packed.armature]).astype(np.float64)
    actuated = np.asarray(actuated_idx_v, np.int64)
    ints = np.concatenate([
        np.array([nj, nc, nb, len(actuated), max_iterations, int(jacobi),
                  int(position_correction)], np.int64),
        packed.parent, packed.joint_type, packed.support.astype(np.int64).ravel(),
        packed.frame_joint, packed.bound_iv, actuated]).astype(np.int64)
    return floats, ints


def step(q, v, applied, dt, floats, ints):
    """
    One Moreau-Jean step from the packed buffers (:func:`pack_buffers`); ``applied``.

    The torques of the actuated joints. Returns q+, v+, the (nc, 3) world impulses, the (nc, 3)
    contact positions at q+ and stats = [iterations, residual, converged, min normal velocity of a
    pushing constraint, pushing flag of each contact].
    """
    nj, nc, nb, na = ints[0], ints[1], ints[2], ints[3]
    max_iterations, jacobi, position_correction = ints[4], ints[5] != 0, ints[6] != 0
    o = 7
    parent = ints[o:o + nj]
    o += nj
    joint_type = ints[o:o + nj]
    o += nj
    support = ints[o:o + nj * nj].reshape((nj, nj)) != 0
    o += nj * nj
    frame_joint = ints[o:o + nc]
    o += nc
    bound_iv = ints[o:o + nb]
    o += nb
    actuated = ints[o:o + na]
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
    h0, slope, nx, nz = floats[f], floats[f + 1], floats[f + 2], floats[f + 3]
    friction, restitution = floats[f + 4], floats[f + 5]
    margin, far, tolerance = floats[f + 6], floats[f + 7], floats[f + 8]
    armature = floats[f + 9:f + 9 + nj]
    tau = np.zeros(nj)
    for i in range(na):
        tau[actuated[i]] = applied[i]
    (q_next, v_next, impulses, pushing, iterations, residual, converged, min_u,
     positions) = _step_arrays(q, v, tau, dt, parent, joint_rot, joint_pos, joint_type, axis,
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


step = _compiled(step)


def dynamics(packed: PackedModel, q, v):
    """M(q) and h(q, v) from the compiled model (tests compare them with pinocchio)."""
    nv = len(packed.parent)
    M, h = np.empty((nv, nv)), np.empty(nv)
    _dynamics(np.asarray(q, float), np.asarray(v, float), packed.parent, packed.joint_rot,
              packed.joint_pos, packed.joint_type, packed.axis, packed.mass, packed.com,
              packed.inertia, packed.support, packed.gravity, np.empty((nv, 3, 3)),
              np.empty((nv, 3)), np.empty((nv, 3)), M, h, np.empty((6, nv)), np.empty((nv, 3)),
              np.empty((nv, 3)), np.empty((nv, 3)), packed.armature)
    return M, h


# -- a controller's per-tick terms ------------------------------------------------------------

def pack_point_terms(model, frame_id: int):
    """
    Buffers ``(floats, ints)`` of :func:`point_terms` for a model.

    Buffers ``(floats, ints)`` of :func:`point_terms` for a pinocchio model and one of its frames
    (a controller's foot), or None when the model does not qualify (a joint that is not 1-DoF
    revolute / prismatic, an inertia on the world body, the frame fixed to the world) or numba is
    not installed. Works from any model (e.g. a controller's own model with other masses than the
    simulator's); the model's armature is read at each call, not packed.
    """
    if njit is None:
        return None
    joints = _joint_arrays(model)
    if joints is None or model.inertias[0].mass != 0.0:
        return None
    parent, joint_rot, joint_pos, joint_type, axis, mass, com, inertia, support = joints
    frame = model.frames[frame_id]
    if frame.parentJoint < 1 or not mass.sum() > 0.0:
        return None
    nj = len(parent)
    floats = np.concatenate([
        joint_rot.ravel(), joint_pos.ravel(), axis.ravel(), mass, com.ravel(), inertia.ravel(),
        np.array(model.gravity.linear, float), np.asarray(frame.placement.rotation).ravel(),
        np.asarray(frame.placement.translation, float)]).astype(np.float64)
    ints = np.concatenate([np.array([nj, frame.parentJoint - 1], np.int64), parent, joint_type,
                           support.astype(np.int64).ravel()]).astype(np.int64)
    point_terms(np.zeros(nj), np.zeros(nj), floats, ints, np.zeros(nj),
                np.empty(point_terms_size(nj)))   # compile / load now, not in the first tick
    return floats, ints


def point_terms_size(nv: int) -> int:
    """Length of :func:`point_terms`' output for nv degrees of freedom."""
    return 18 + 6 * nv + nv * nv + 2 * nv


def point_terms(q, v, floats, ints, armature, out):
    """
    Return a controller's rigid-body terms at (q, v) in one compiled call.

    Written into ``out`` (world frame, the quantities of pinocchio's centerOfMass /
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
    o = 2
    parent = ints[o:o + nj]
    o += nj
    joint_type = ints[o:o + nj]
    o += nj
    support = ints[o:o + nj * nj].reshape((nj, nj)) != 0
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
    f += 9  # the frame's rotation, unused here
    frame_pos = floats[f:f + 3]
    nv = nj
    rot = np.empty((nv, 3, 3))
    pos = np.empty((nv, 3))
    waxis = np.empty((nv, 3))
    M = np.empty((nv, nv))
    h = np.empty(nv)
    jac = np.empty((6, nv))
    omega = np.empty((nv, 3))
    alpha = np.empty((nv, 3))
    acc = np.empty((nv, 3))
    _dynamics(q, v, parent, joint_rot, joint_pos, joint_type, axis, mass, com, inertia,
              support, gravity, rot, pos, waxis, M, h, jac, omega, alpha, acc, armature)
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
        R = rot[i]
        dx = R[0, 0] * com[i, 0] + R[0, 1] * com[i, 1] + R[0, 2] * com[i, 2]
        dy = R[1, 0] * com[i, 0] + R[1, 1] * com[i, 1] + R[1, 2] * com[i, 2]
        dz = R[2, 0] * com[i, 0] + R[2, 1] * com[i, 1] + R[2, 2] * com[i, 2]
        w = m / total
        out[0] += w * (pos[i, 0] + dx)
        out[1] += w * (pos[i, 1] + dy)
        out[2] += w * (pos[i, 2] + dz)
        wx, wy, wz = omega[i, 0], omega[i, 1], omega[i, 2]
        bx, by, bz = alpha[i, 0], alpha[i, 1], alpha[i, 2]
        cx, cy, cz = wy * dz - wz * dy, wz * dx - wx * dz, wx * dy - wy * dx
        out[6] += w * (acc[i, 0] + (by * dz - bz * dy) + (wy * cz - wz * cy))
        out[7] += w * (acc[i, 1] + (bz * dx - bx * dz) + (wz * cx - wx * cz))
        out[8] += w * (acc[i, 2] + (bx * dy - by * dx) + (wx * cy - wy * cx))
        _point_jacobian(pos[i, 0] + dx, pos[i, 1] + dy, pos[i, 2] + dz, i, support, joint_type,
                        pos, waxis, jac)
        for r in range(3):
            for c in range(nv):
                out[i_com + r * nv + c] += w * jac[r, c]
    # the frame: position, jacobian, classical drift of a point fixed to its joint
    j0 = frame_joint
    R = rot[j0]
    px, py, pz = pos[j0, 0], pos[j0, 1], pos[j0, 2]
    rx = R[0, 0] * frame_pos[0] + R[0, 1] * frame_pos[1] + R[0, 2] * frame_pos[2]
    ry = R[1, 0] * frame_pos[0] + R[1, 1] * frame_pos[1] + R[1, 2] * frame_pos[2]
    rz = R[2, 0] * frame_pos[0] + R[2, 1] * frame_pos[1] + R[2, 2] * frame_pos[2]
    out[9], out[10], out[11] = px + rx, py + ry, pz + rz
    wx, wy, wz = omega[j0, 0], omega[j0, 1], omega[j0, 2]
    bx, by, bz = alpha[j0, 0], alpha[j0, 1], alpha[j0, 2]
    cx, cy, cz = wy * rz - wz * ry, wz * rx - wx * rz, wx * ry - wy * rx
    out[15] = acc[j0, 0] + (by * rz - bz * ry) + (wy * cz - wz * cy)
    out[16] = acc[j0, 1] + (bz * rx - bx * rz) + (wz * cx - wx * cz)
    out[17] = acc[j0, 2] + (bx * ry - by * rx) + (wx * cy - wy * cx)
    _point_jacobian(px + rx, py + ry, pz + rz, j0, support, joint_type, pos, waxis, jac)
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
    if not _cholesky(M, L):
        return False
    i_minv = 18 + 6 * nv
    column = np.empty(nv)
    for c in range(nv):
        for r in range(nv):
            column[r] = 1.0 if r == c else 0.0
        _cholesky_solve_vec(L, column)
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


point_terms = _compiled(point_terms)


def evaluate(q, v, applied, floats, ints, rate, modes, slip_dir, anchor, shift, limit_active):
    """
    Return the event-driven integrator's dynamics in given modes (EventDrivenIntegrator._evaluate).

    ``modes`` per contact 0 free / 1 stick / 2 slip, ``slip_dir`` +-1 of a sliding contact (along
    t1 = +x), ``anchor`` the x a sticking point contact holds, ``shift`` the touchdown offsets
    (contacts, then limit bounds), ``limit_active`` per bound. Returns the acceleration, the (nc,
    3) world contact forces and the event values in the order of EventDrivenIntegrator._keys().
    """
    nj, nc, nb, na = ints[0], ints[1], ints[2], ints[3]
    o = 7
    parent = ints[o:o + nj]
    o += nj
    joint_type = ints[o:o + nj]
    o += nj
    support = ints[o:o + nj * nj].reshape((nj, nj)) != 0
    o += nj * nj
    frame_joint = ints[o:o + nc]
    o += nc
    bound_iv = ints[o:o + nb]
    o += nb
    actuated = ints[o:o + na]
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
    h0, slope, nx, nz, friction = floats[f], floats[f + 1], floats[f + 2], floats[f + 3], \
        floats[f + 4]
    armature = floats[f + 9:f + 9 + nj]
    nv = nj
    tau = np.zeros(nv)
    for i in range(na):
        tau[actuated[i]] = applied[i]
    rot = np.empty((nv, 3, 3))
    pos = np.empty((nv, 3))
    waxis = np.empty((nv, 3))
    M = np.empty((nv, nv))
    h = np.empty(nv)
    jac = np.empty((6, nv))
    omega = np.empty((nv, 3))
    alpha = np.empty((nv, 3))
    acc = np.empty((nv, 3))
    _dynamics(q, v, parent, joint_rot, joint_pos, joint_type, axis, mass, com, inertia,
              support, gravity, rot, pos, waxis, M, h, jac, omega, alpha, acc, armature)
    L = np.empty((nv, nv))
    if not _cholesky(M, L):
        # a non-finite state: NaN out (the integrator's divergence check reports it)
        n_values = nb
        for k in range(nc):
            n_values += 1 if modes[k] == 0 else 2
        return np.full(nv, np.nan), np.zeros((nc, 3)), np.full(n_values, np.nan)
    a_free = np.empty(nv)
    for i in range(nv):
        a_free[i] = tau[i] - h[i]
    _cholesky_solve_vec(L, a_free)
    points = np.empty((nc, 3))
    _contact_points(rot, pos, frame_joint, frame_rot, frame_pos, points)
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
        _point_jacobian(points[k, 0], points[k, 1], points[k, 2], j0, support, joint_type, pos,
                        waxis, jac)
        # J-dot v: the frame origin's acceleration for zero joint accelerations
        rx, ry, rz = points[k, 0] - pos[j0, 0], points[k, 1] - pos[j0, 1], \
            points[k, 2] - pos[j0, 2]
        wx, wy, wz = omega[j0, 0], omega[j0, 1], omega[j0, 2]
        bx, by, bz = alpha[j0, 0], alpha[j0, 1], alpha[j0, 2]
        cx, cy, cz = wy * rz - wz * ry, wz * rx - wx * rz, wx * ry - wy * rx
        ax_ = acc[j0, 0] + (by * rz - bz * ry) + (wy * cz - wz * cy)
        az_ = acc[j0, 2] + (bx * ry - by * rx) + (wx * cy - wy * cx)
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
    minv_ct = np.empty((nv, m))
    column = np.empty(nv)
    for r in range(m):
        for j in range(nv):
            column[j] = C[r, j]
        _cholesky_solve_vec(L, column)
        for j in range(nv):
            minv_ct[j, r] = column[j]
    K = np.empty((m, m))
    rhs = np.empty(m)
    for r in range(m):
        acc_r = target[r]
        for j in range(nv):
            acc_r -= E[r, j] * a_free[j]
        rhs[r] = acc_r
        for c in range(m):
            acc_r = 0.0
            for j in range(nv):
                acc_r += E[r, j] * minv_ct[j, c]
            K[r, c] = acc_r
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


evaluate = _compiled(evaluate)


def rk4(q, v, h, start_accel, start_forces, applied, floats, ints, rate, modes, slip_dir,
        anchor, shift, limit_active):
    """
    One classical RK4 step of the event integrator's dynamics.

    One classical RK4 step of length h of the event integrator's dynamics in given modes
    (EventDrivenIntegrator._rk4, vector-space q): q1, v1, the evaluation at the end (acceleration,
    forces, event values) and the world contact impulses over the step.
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


rk4 = _compiled(rk4)


def warm_up() -> bool:
    """
    Compile the kernels ahead of the first step.

    Compile the step, the event evaluation and the controller's point terms now (or load them from
    numba's on-disk cache, ``__pycache__`` next to this file): the first compilation takes ~20-60 s
    of CPU, later processes load it in < 1 s. Returns False without numba.
    """
    if njit is None:
        return False
    nj, nc = 2, 1
    packed = PackedModel(
        parent=np.array([-1, 0], np.int64), joint_rot=np.tile(np.eye(3), (nj, 1, 1)),
        joint_pos=np.zeros((nj, 3)), joint_type=np.array([_PRISMATIC, _REVOLUTE], np.int64),
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
    # a controller's per-tick terms (pack_point_terms' layout: nj, frame joint, parent, type,
    # support; placements, axes, masses, coms, inertias, gravity, frame rotation and position)
    point_floats = np.concatenate([
        packed.joint_rot.ravel(), packed.joint_pos.ravel(), packed.axis.ravel(), packed.mass,
        packed.com.ravel(), packed.inertia.ravel(), packed.gravity, packed.frame_rot.ravel(),
        packed.frame_pos.ravel()])
    point_ints = np.concatenate([np.array([nj, 1], np.int64), packed.parent, packed.joint_type,
                                 packed.support.astype(np.int64).ravel()])
    point_terms(np.zeros(nj), np.zeros(nj), point_floats, point_ints, np.zeros(nj),
                np.empty(point_terms_size(nj)))
    return True


if __name__ == '__main__':
    print('compiled' if warm_up() else 'numba not installed: the generic step runs')


__all__ = ['PackedModel', 'pack_model', 'pack_buffers', 'step', 'evaluate', 'rk4', 'dynamics',
           'pack_point_terms', 'point_terms', 'point_terms_size', 'warm_up']
