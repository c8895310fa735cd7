# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
Constraint geometry shared by both integrators.

It covers point contacts against the terrain and joint position limits, as rows of the constraint
jacobian W and gaps (see ``docs/physics.md``).

Point contact k (frame origin p, sphere radius r, terrain normal n under p): the gap is the
signed distance ``(p_z - h(p_x)) n_z - r`` (exact on flat ground and slopes; on steps the exact
signed distance to the tread-and-riser profile minus r, with n the normal of the nearest feature,
``StepsTerrain.signed_distance``), the rows are the
velocities of the sphere's lowest point along ``n``, ``t1 = (n_z, 0, -n_x)`` (along +x on flat
ground) and, for a 3-D model, ``t2 = (0, 1, 0)``. A limit of a 1-DoF joint gives one row,
``+e_j`` at its lower bound (gap q - lower) and ``-e_j`` at its upper bound (gap upper - q).
"""
from __future__ import annotations

from dataclasses import dataclass
import math
from typing import NamedTuple

import numpy as np
import pinocchio as pin

from .solver import Block

_LWA = pin.LOCAL_WORLD_ALIGNED


@dataclass(frozen=True)
class ContactParams:
    """
    Contact law constants.

    Fields:
        friction: Coulomb coefficient mu (-).
        restitution: Newton normal restitution e in [0, 1] (0: plastic impact).
    """

    friction: float = 0.8
    restitution: float = 0.0


class Constraint(NamedTuple):
    """
    One candidate constraint at a configuration.

    kind: 'contact' or 'limit'; index: contact frame index or limit index; side: +1 lower bound /
    -1 upper bound (limits); gap: m or rad; basis: world [n, t1, t2] rows (contacts) or None;
    rows: (size x nv) jacobian rows (normal first).
    """

    kind: str
    index: int
    side: int
    gap: float
    basis: np.ndarray | None
    rows: np.ndarray


def contact_basis(terrain, x: float, z: float, radius: float = 0.0):
    """Gap (m, > 0 above ground) and world [n, t1, t2] of a point (x, ., z) with a sphere."""
    profile = getattr(terrain, 'signed_distance', None)
    if profile is not None:
        distance, nx, nz = profile(x, z)
        gap = distance - radius
    else:
        nx, nz = terrain.normal(x)
        gap = (z - terrain.height(x)) * nz - radius
    basis = np.array(((nx, 0.0, nz), (nz, 0.0, -nx), (0.0, 1.0, 0.0)))
    return gap, basis


class ConstraintGeometry:
    """
    Gaps and jacobian rows of a robot's contacts and limits on a caller's Data.

    The Data must hold the frame placements and joint jacobians of the configuration (e.g.
    after ``pinocchio.aba(..., Convention.WORLD)`` or ``computeJointJacobians``).

    Written for small models, where the per-call cost of numpy and of pinocchio's bindings is
    the cost: a flat terrain has one constant basis, the limit rows are built once, gaps are
    Python floats.
    """

    def __init__(self, robot, terrain, joint_limits: bool):
        from .terrain import FlatTerrain
        self.robot = robot
        self.model = robot.model
        self.terrain = terrain
        self.dim = robot.contact_dim
        # the feet, then the support points of the links' collision shapes (collision.py)
        points = getattr(robot, 'collision_points', ())
        self.frame_ids = tuple(robot.contact_frame_ids) + tuple(p.frame_id for p in points)
        self.radii = tuple(float(r) for r in robot.contact_radii) + tuple(
            float(p.radius) for p in points)
        self.limits = robot.limits if joint_limits else ()
        self.nv = robot.model.nv
        self.flat_height = terrain.height_m if isinstance(terrain, FlatTerrain) else None
        # a plane (flat ground or a slope): (height at x = 0, dh/dx, n_x, n_z) for fast.py
        from .terrain import SlopeTerrain
        if isinstance(terrain, (FlatTerrain, SlopeTerrain)):
            nx, nz = terrain.normal(0.0)
            self.plane = (float(terrain.height(0.0)), float(terrain.slope(0.0)), float(nx),
                          float(nz))
        else:
            self.plane = None
        # terrains with corners (steps): the normal turns as a point passes a corner
        self.normal_curvature = getattr(terrain, 'normal_curvature', None)
        self._flat_basis = contact_basis(FlatTerrain(0.0), 0.0, 0.0)[1]
        self._flat_rows_basis = self._flat_basis[:self.dim].copy()
        # (limit index, side, idx_q, idx_v, bound, row) of every finite bound
        bounds = []
        for i, lim in enumerate(self.limits):
            for side, bound in ((1, lim.lower), (-1, lim.upper)):
                if math.isfinite(bound):
                    row = np.zeros((1, self.nv))
                    row[0, lim.idx_v] = float(side)
                    bounds.append((i, side, lim.idx_q, lim.idx_v, float(bound), row))
        self.bounds = tuple(bounds)
        self._rows = {(b[0], b[1]): b[5] for b in bounds}

    # contacts ----------------------------------------------------------------------------
    def contact_position(self, data, k: int) -> np.ndarray:
        return pin.updateFramePlacement(self.model, data, self.frame_ids[k]).translation

    def gap_and_basis(self, k: int, x: float, z: float):
        """Gap (m) and world basis [n, t1, t2] of contact k with its frame origin at (x, ., z)."""
        if self.flat_height is not None:
            return z - self.flat_height - self.radii[k], self._flat_basis
        return contact_basis(self.terrain, x, z, self.radii[k])

    def contact_gap(self, data, k: int):
        """(gap, basis, position) of contact k; updates the frame placement."""
        p = self.contact_position(data, k)
        gap, basis = self.gap_and_basis(k, p[0], p[2])
        return gap, basis, p

    def contact_rows(self, data, k: int, basis: np.ndarray) -> np.ndarray:
        # (6, nv) even for nv = 1 (pinocchio returns a 1-D array for a single column)
        jac = pin.getFrameJacobian(self.model, data, self.frame_ids[k], _LWA).reshape(
            6, self.model.nv)
        radius = self.radii[k]
        if basis is self._flat_basis:
            rows = self._flat_rows_basis.dot(jac[:3])
        else:
            rows = basis[:self.dim].dot(jac[:3])
        if radius > 0.0:
            # velocity of the sphere's lowest point: v_p + omega x (-r n) = v_p + r n x omega;
            # along t_i that is r (t_i x n) . omega, with t1 x n = (0, -1, 0) and
            # t2 x n = (n_z, 0, -n_x) for n = (n_x, 0, n_z)
            rows[1] -= radius * jac[4]
            if self.dim == 3:
                nx, nz = float(basis[0, 0]), float(basis[0, 2])
                rows[2] += radius * (nz * jac[3] - nx * jac[5])
        return rows

    def contact_jdot_v(self, data, k: int, basis: np.ndarray) -> np.ndarray:
        """
        Rows times the classical acceleration of the frame origin for a = 0 (J-dot v).

        Needs forwardKinematics with (q, v, 0). Near a corner of the terrain the normal turns with
        the motion: the gap's second derivative gains curvature * |v_perp|^2 (v_perp: the frame
        velocity in the x-z plane across n). Sphere radius terms of second order of the tangential
        rows omitted.
        """
        frame = self.frame_ids[k]
        acc = pin.getFrameClassicalAcceleration(self.model, data, frame, _LWA)
        jdv = basis[:self.dim].dot(acc.linear)
        if self.normal_curvature is not None:
            p = data.oMf[frame].translation
            curvature = self.normal_curvature(p[0], p[2])
            if curvature > 0.0:
                vel = pin.getFrameVelocity(self.model, data, frame, _LWA).linear
                across = float(basis[0, 2] * vel[0] - basis[0, 0] * vel[2])
                jdv[0] += curvature * across * across
        return jdv

    # limits ------------------------------------------------------------------------------
    def limit_gaps(self, q: np.ndarray):
        """[(limit index, side, gap)] for every finite bound."""
        values = q.tolist()
        return [(i, side, side * (values[iq] - bound))
                for i, side, iq, _, bound, _ in self.bounds]

    def limit_row(self, i: int, side: int) -> np.ndarray:
        """Return the (1 x nv) row of a bound (shared: do not modify)."""
        return self._rows[(i, side)]


def blocks_for(constraints, friction: float, slip_dirs=None) -> tuple[np.ndarray, list]:
    """Stack the rows of ``constraints`` into W and the solver's blocks."""
    blocks = []
    rows = []
    start = 0
    for j, c in enumerate(constraints):
        size = c.rows.shape[0]
        direction = None if slip_dirs is None else slip_dirs[j]
        blocks.append(Block(start, size, friction if c.kind == 'contact' else 0.0, direction))
        rows.append(c.rows)
        start += size
    return np.vstack(rows), blocks


def world_impulse(constraint: Constraint, lam: np.ndarray) -> np.ndarray:
    """World [x, y, z] force (or impulse) of a contact's multipliers."""
    return lam @ constraint.basis[:len(lam)]


__all__ = ['ContactParams', 'Constraint', 'ConstraintGeometry', 'contact_basis', 'blocks_for',
           'world_impulse']
