# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""The controller node's markers of any robot (dodo_sim/ros/controller_markers.py), in process."""
import numpy as np
import pinocchio as pin
from public_robots import robots_dir, solo12, SOLO_FEET, SOLO_STAND_LEGS
import pytest

pytestmark = pytest.mark.skipif(robots_dir() is None, reason='example-robot-data not installed')


def test_floating_base_markers_come_from_the_joint_states_joints_only():
    """
    A floating base's free flyer is not in /joint_states; the markers still build.

    The CoM is the model's at the initial base pose with the measured leg angles (on main the
    lookup of the free flyer among the controller's joints raised ValueError at the first
    markers, stopping the controller node of any floating-base robot).
    """
    from dodo_sim.physics.robot import load_robot
    from dodo_sim.ros.controller_markers import ControllerMarkers
    robot = load_robot(solo12(), contact_frames=SOLO_FEET)
    assert robot.floating_base
    joints = [n for n, nq in zip(robot.joint_names, robot.joint_nq) if nq == 1]
    markers = ControllerMarkers(robot, joints, weight=25.0, cog_path_points=10)
    legs = SOLO_STAND_LEGS[::-1].copy()         # not the model's order: the controller's
    array = markers.build(1_000_000, legs, {}, None, np.zeros((len(SOLO_FEET), 3)))
    q_model = np.array(robot.default_q, dtype=float)
    for name, value in zip(joints, legs):
        q_model[robot.joint_idx_q[robot.joint_names.index(name)]] = value
    com = pin.centerOfMass(robot.model, robot.model.createData(), q_model)
    sphere = array.markers[0]
    assert (sphere.pose.position.x, sphere.pose.position.y, sphere.pose.position.z) == \
        pytest.approx(tuple(com), abs=1e-12)
