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


def published_urdfs() -> list:
    """Every URDF file of the package, as paths relative to :func:`robots_dir`, sorted."""
    root = robots_dir()
    return sorted(str(p.relative_to(root)) for p in root.rglob('*.urdf'))


def support_gaps(sim, q) -> np.ndarray:
    """
    Gap of every contact of ``sim`` at ``q``: its feet, then its links' support points, m.

    The integrator's own gap (terrain distance minus the sphere radius); < 0 is under the terrain.
    """
    geometry = sim.integrator.geometry
    model = sim.robot.model
    data = model.createData()
    pin.framesForwardKinematics(model, data, np.asarray(q, float))
    gaps = np.empty(len(geometry.frame_ids))
    for k in range(len(gaps)):
        p = geometry.contact_position(data, k)
        gaps[k] = geometry.gap_and_basis(k, float(p[0]), float(p[2]))[0]
    return gaps


#: Start pose of the Universal Robots arms (UR3/5/10, fixed base), rad: issue 30's UR5 pose, the
#: upper arm raised 1 rad, the forearm lowered 1 rad. At the URDF zero the arm stretches
#: horizontally at shoulder height with its wrist 3.5-4.8 cm under the floor (UR5, UR10).
UR_START = (0.0, -1.0, 1.0, 0.0, 0.0, 0.0)


def ur5() -> str:
    return str(robots_dir() / 'ur_description/urdf/ur5_robot.urdf')


def start_joints(urdf: str):
    """Joint angles of a robot's start pose where the URDF zero does not do (else None)."""
    return UR_START if 'ur_description/' in str(urdf) else None


def resting_start(sim, joints=None) -> np.ndarray:
    """
    Return the model's default pose (``joints``: its joint coordinates), resting on the ground.

    Joints outside their URDF limits are put on the nearest limit. A floating base is lifted until
    its lowest contact (feet and link support points) touches the flat ground at z = 0; a fixed
    base stays where the URDF puts it.
    """
    q = sim.robot.default_q.copy()
    if joints is not None:
        q[7 if sim.robot.floating_base else 0:] = joints
    for limit in sim.robot.limits:      # some URDF zeros lie outside the limits (Kinova arm)
        q[limit.idx_q] = min(max(q[limit.idx_q], limit.lower), limit.upper)
    if sim.robot.floating_base and len(sim.integrator.geometry.frame_ids):
        q[2] -= support_gaps(sim, q).min()
    return q


class PdHold:
    """
    A plain joint PD holding ``q_ref`` on every actuated joint (no gravity compensation).

    Gains from each joint's apparent inertia at ``q_ref``, I_j = 1 / (M^-1)_jj (the inertia it
    moves with every other coordinate free): kp = (2 pi f)^2 I_j, kd = 2 (2 pi f) I_j, critically
    damped at ``frequency_hz`` for a joint alone. Explicit at dt = 1 ms: kd dt / I_j = 0.13 at
    10 Hz, which leaves room for the coupling of 30-odd joints through a floating base (gains
    scaled by the diagonal of M instead diverged on the Alex humanoid in 0.02 s). Without gravity
    compensation it holds an arm or a light quadruped; a 90 kg humanoid sits down under it.
    """

    def __init__(self, sim, q_ref, frequency_hz=10.0):
        robot = sim.robot
        self.iq = np.array([robot.joint_idx_q[robot.joint_names.index(n)]
                            for n in robot.actuated_joint_names], int)
        self.iv = np.array(robot.actuated_idx_v, int)
        inverse = pin.computeMinverse(robot.model, robot.create_data(), np.asarray(q_ref, float))
        diagonal = 1.0 / np.diag(inverse)[self.iv]
        omega = 2.0 * np.pi * frequency_hz
        self.kp, self.kd = omega * omega * diagonal, 2.0 * omega * diagonal
        self.target = np.asarray(q_ref, float)[self.iq]

    def __call__(self, state) -> np.ndarray:
        return self.kp * (self.target - state.q[self.iq]) - self.kd * state.v[self.iv]
