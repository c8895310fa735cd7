# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
Robot descriptions of the ``example-robot-data`` package.

They are published descriptions, installed from the package registry by requirements.txt and never
copied here. This module gives their paths and the poses the physics validation uses
(test_physics_public_robots.py, docs/physics.md "Robots nobody here wrote").
"""
from __future__ import annotations

from importlib.metadata import distribution, PackageNotFoundError

import numpy as np
import pinocchio as pin

SOLO_FEET = ('FL_FOOT', 'FR_FOOT', 'HL_FOOT', 'HR_FOOT')
BOLT_FEET = ('FL_FOOT', 'FR_FOOT')
#: Solo-12 leg angles [HAA, HFE, KFE] x 4 of a crouched stand, rad.
SOLO_STAND_LEGS = np.array([0.0, 0.8, -1.6] * 4)


def robots_dir():
    """Return the package's robots/ folder, or None when example-robot-data is not installed."""
    try:
        dist = distribution('example-robot-data')
    except PackageNotFoundError:
        return None
    path = dist.locate_file('cmeel.prefix/share/example-robot-data/robots')
    return path if path.is_dir() else None


def solo12() -> str:
    return str(robots_dir() / 'solo_description/robots/solo12.urdf')


def solo12_mass_kg() -> float:
    from dodo_sim.physics.robot import load_robot
    return load_robot(solo12(), contact_frames=SOLO_FEET).total_mass


def bolt() -> str:
    return str(robots_dir() / 'bolt_description/robots/bolt.urdf')


def static_torques(robot, q):
    """
    Foot forces and joint torques that hold ``q`` still on flat ground.

    The base rows of g(q) = S^T tau + J^T f give the minimum-norm foot forces f (6 equations, 3 per
    foot), the joint rows then give tau. Returns (f (n_feet, 3) world N, tau N*m).
    """
    model, data = robot.model, robot.create_data()
    gravity = pin.computeGeneralizedGravity(model, data, q)
    pin.computeJointJacobians(model, data, q)
    pin.updateFramePlacements(model, data)
    jac = np.vstack([pin.getFrameJacobian(model, data, f, pin.LOCAL_WORLD_ALIGNED)[:3]
                     for f in robot.contact_frame_ids])
    forces = np.linalg.lstsq(jac[:, :6].T, gravity[:6], rcond=None)[0]
    tau = gravity[6:] - jac[:, 6:].T @ forces
    return forces.reshape(-1, 3), tau


def standing_pose(sim, legs, gap_m=0.0):
    """
    Return a standing q with ``legs`` and the lowest foot ``gap_m`` above ground.

    The base keeps the model's default orientation; the ground is flat at z = 0.
    """
    q = sim.robot.default_q.copy()
    q[7:] = legs
    q[2] += gap_m - sim.contact_positions(q)[:, 2].min()
    return q
