"""Constraint geometry shared by both integrators: point contacts against the terrain and joint
position limits, as rows of the constraint jacobian W and gaps (see ``docs/physics.md``).

Point contact k (frame origin p, sphere radius r, terrain normal n under p): the gap is the
signed distance ``(p_z - h(p_x)) n_z - r`` (exact on flat ground and slopes), the rows are the
velocities of the sphere's lowest point along ``n``, ``t1 = (n_z, 0, -n_x)`` (along +x on flat
ground) and, for a 3-D model, ``t2 = (0, 1, 0)``. A limit of a 1-DoF joint gives one row,
``+e_j`` at its lower bound (gap q - lower) and ``-e_j`` at its upper bound (gap upper - q).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
import pinocchio as pin

from .solver import Block

_LWA = pin.LOCAL_WORLD_ALIGNED


@dataclass(frozen=True)
class ContactParams:
    """Contact law constants.

    Attributes:
        friction: Coulomb coefficient mu (-).
        restitution: Newton normal restitution e in [0, 1] (0: plastic impact).
    """

    friction: float = 0.8
    restitution: float = 0.0


class Constraint(NamedTuple):
    """One candidate constraint at a configuration.

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
    nx, nz = terrain.normal(x)
    gap = (z - terrain.height(x)) * nz - radius
    basis = np.array(((nx, 0.0, nz), (nz, 0.0, -nx), (0.0, 1.0, 0.0)))
    return gap, basis


class ConstraintGeometry:
    """Gaps and jacobian rows of a robot's contacts and limits on a caller's Data.

    The Data must hold the frame placements and joint jacobians of the configuration (e.g.
    after ``pinocchio.aba(..., Convention.WORLD)`` or ``computeJointJacobians``).
    """

    def __init__(self, robot, terrain, joint_limits: bool):
        self.robot = robot
        self.model = robot.model
        self.terrain = terrain
        self.dim = robot.contact_dim
        self.frame_ids = robot.contact_frame_ids
        self.radii = tuple(float(r) for r in robot.contact_radii)
        self.limits = robot.limits if joint_limits else ()
        self.nv = robot.model.nv

    # contacts ----------------------------------------------------------------------------
    def contact_position(self, data, k: int) -> np.ndarray:
        return pin.updateFramePlacement(self.model, data, self.frame_ids[k]).translation

    def contact_gap(self, data, k: int):
        """(gap, basis, position) of contact k; updates the frame placement."""
        p = self.contact_position(data, k)
        gap, basis = contact_basis(self.terrain, p[0], p[2], self.radii[k])
        return gap, basis, p

    def contact_rows(self, data, k: int, basis: np.ndarray) -> np.ndarray:
        jac = pin.getFrameJacobian(self.model, data, self.frame_ids[k], _LWA)
        rows = basis[:self.dim] @ jac[:3]
        radius = self.radii[k]
        if radius > 0.0:
            # velocity of the sphere's lowest point: v_p + omega x (-r n) = v_p + r n x omega
            n = basis[0]
            rows[1:] += radius * (np.cross(basis[1:self.dim], n) @ jac[3:])
        return rows

    def contact_jdot_v(self, data, k: int, basis: np.ndarray) -> np.ndarray:
        """Rows times the classical acceleration of the frame origin for a = 0 (J-dot v);
        needs forwardKinematics with (q, v, 0). Sphere radius terms of second order omitted."""
        acc = pin.getFrameClassicalAcceleration(self.model, data, self.frame_ids[k], _LWA)
        return basis[:self.dim] @ acc.linear

    # limits ------------------------------------------------------------------------------
    def limit_gaps(self, q: np.ndarray):
        """[(limit index, side, gap)] for every finite bound."""
        out = []
        for i, lim in enumerate(self.limits):
            value = q[lim.idx_q]
            if lim.lower > -np.inf:
                out.append((i, 1, value - lim.lower))
            if lim.upper < np.inf:
                out.append((i, -1, lim.upper - value))
        return out

    def limit_row(self, i: int, side: int) -> np.ndarray:
        row = np.zeros((1, self.nv))
        row[0, self.limits[i].idx_v] = float(side)
        return row


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
