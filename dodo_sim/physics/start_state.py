# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
Checks of a simulator's start state, with messages that say how to fix it.

:func:`check_start_sizes` refuses ``SimConfig.initial_q`` / ``initial_v`` of the wrong length for
the model (naming its coordinates); :func:`check_above_terrain` refuses a configuration with a
contact point under the terrain (naming the deepest contact frame, its depth and the
coordinate that lifts the robot); :func:`check_within_limits` refuses a joint outside its URDF
limits. :class:`dodo_sim.physics.simulator.Simulator` runs them at
construction and at every reset (``docs/physics.md``, bad-input rules of DESIGN.md §7).
"""
from __future__ import annotations

import numpy as np
import pinocchio as pin

#: A contact point at most this deep under the terrain in an initial state is accepted (a foot
#: resting on the ground, up to rounding of hand-written poses), m.
INITIAL_PENETRATION_TOLERANCE_M = 1e-6
#: A joint at most this far outside its URDF limits in an initial state is accepted (a joint
#: resting on its stop, up to rounding), m or rad.
INITIAL_LIMIT_TOLERANCE = 1e-6


def check_start_sizes(robot, config) -> None:
    """Raise ValueError when ``config.initial_q`` / ``initial_v`` do not fit the model (nq, nv)."""
    if config.initial_q and len(config.initial_q) != robot.nq:
        raise ValueError(f'SimConfig.initial_q has {len(config.initial_q)} values; the model '
                         f'needs nq = {robot.nq}: {robot.coordinate_names()} (or () for the '
                         f'model default)')
    if config.initial_v and len(config.initial_v) != robot.nv:
        raise ValueError(f'SimConfig.initial_v has {len(config.initial_v)} values; the model '
                         f'needs nv = {robot.nv} for joints {list(robot.joint_names)} '
                         f'(or () for zero)')


def check_above_terrain(robot, geometry, positions, q, terrain: str, data) -> None:
    """
    Refuse a configuration with a contact point under the terrain.

    ``positions``: the contact frames' world positions at ``q`` (m); ``geometry`` the
    integrator's terrain geometry (``gap_and_basis``); ``data`` a pinocchio Data of the robot's
    model (a workspace). A contact deeper than INITIAL_PENETRATION_TOLERANCE_M raises ValueError
    naming the deepest contact frame, its depth and how far to raise the robot.
    """
    below = []
    for k, p in enumerate(positions):
        gap = geometry.gap_and_basis(k, float(p[0]), float(p[2]))[0]
        if gap < -INITIAL_PENETRATION_TOLERANCE_M:
            below.append((gap, k))
    if not below:
        return
    gap, k = min(below)
    depth = -gap
    others = [robot.contact_frames[j] for _, j in sorted(below)[1:]]
    message = (f"initial state puts contact frame '{robot.contact_frames[k]}' "
               f'{depth:.6g} m below the {terrain} terrain (gap {gap:.3e} m; '
               f'a contact at most {INITIAL_PENETRATION_TOLERANCE_M:g} m deep is accepted)')
    if others:
        message += f'; also below: {others}'
    message += f'; raise the robot by at least {depth:.6g} m'
    lift = vertical_coordinate(robot, data, q)
    if lift is not None:
        name, index = lift
        message += f' ({name} >= {float(q[index]) + depth:.6g} m)'
    raise ValueError(message + ' or change the joint angles')


def check_within_limits(robot, q) -> None:
    """
    Refuse a configuration with a joint outside its URDF position limits.

    A joint more than ``INITIAL_LIMIT_TOLERANCE`` (m or rad) outside [lower, upper] raises
    ValueError naming it, its value and its limits. Without the check a published arm started at
    its URDF zero, outside its limits (the Kinova arm of ANYmal-with-arm: joints 2 and 3), hits
    its stops at once: the event integrator's drift control pulled a 0.8 rad violation back at
    200^2 rad/s^2 per rad and the arm left the speed bound in 0.09 s.
    """
    values = np.asarray(q, float)
    for limit in robot.limits:
        value = float(values[limit.idx_q])
        if limit.lower - INITIAL_LIMIT_TOLERANCE <= value <= limit.upper + INITIAL_LIMIT_TOLERANCE:
            continue
        raise ValueError(f"initial state puts joint '{limit.name}' at {value:.6g}, outside its "
                         f'URDF limits [{limit.lower:.6g}, {limit.upper:.6g}] (m or rad); move it '
                         f'inside them, or set joint_limits: false')


def vertical_coordinate(robot, data, q):
    """
    Return the coordinate that moves every contact frame straight up, or None.

    As (name, q index): a floating base's world z, or a planar base's z slider.
    """
    if robot.floating_base:  # the free flyer's world z moves every frame straight up
        return robot.coordinate_names()[2], 2
    if not robot.vector_space or not robot.contact_frame_ids:
        return None
    model = robot.model
    pin.computeJointJacobians(model, data, np.asarray(q, float))
    pin.updateFramePlacements(model, data)
    rows = [pin.getFrameJacobian(model, data, f, pin.LOCAL_WORLD_ALIGNED).reshape(
        6, robot.nv)[:3]
        for f in robot.contact_frame_ids]
    names = robot.coordinate_names()
    for i in range(robot.nv):
        if all(abs(r[2, i] - 1.0) < 1e-12 and abs(r[0, i]) < 1e-12 and abs(r[1, i]) < 1e-12
               for r in rows):
            return names[i], i
    return None


__all__ = ['INITIAL_PENETRATION_TOLERANCE_M', 'INITIAL_LIMIT_TOLERANCE', 'check_above_terrain',
           'check_start_sizes', 'check_within_limits', 'vertical_coordinate']
