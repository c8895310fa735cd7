# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
Ground-truth odometry of a robot's base, REP-105 / nav_msgs conventions (no rclpy).

``docs/ros_contract.md``, "Frames": the simulator publishes ``nav_msgs/Odometry`` on ``odom``
from its state. The pose is the base link's placement in the fixed frame (``header.frame_id``),
the twist its velocity *in the base link's own axes* (``child_frame_id``), as nav_msgs/Odometry
defines it ("The twist in this message should be specified in the coordinate frame given by the
child_frame_id"). Which frames:

* a floating base (a free flyer joins the URDF's root link to the world): ``odom`` -> the root
  link; the simulator's world is REP-105's ``odom`` (ground truth: it never drifts), and the
  ``odom`` -> root link transform goes on /tf
  (:meth:`dodo_sim.ros.tf_frames.TfTree.base_transform`);
* a robot attached to ``world`` by its URDF joints (the hopper's base_x, base_z; the boom leg):
  ``world`` -> the base link (the heaviest link, on which pushes act: the hopper's ``body``);
  robot_state_publisher already gives that chain on /tf, so no second transform is published.
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np


class BaseOdometry(NamedTuple):
    """One odometry sample: pose in ``frame_id``, twist in ``child_frame_id``."""

    frame_id: str
    child_frame_id: str
    position: np.ndarray        # (3,) m, in frame_id
    orientation_xyzw: np.ndarray    # (4,) unit quaternion x, y, z, w
    linear: np.ndarray          # (3,) m/s, in child_frame_id
    angular: np.ndarray         # (3,) rad/s, in child_frame_id


class BaseOdometer:
    """The base odometry of one robot model (:class:`dodo_sim.physics.robot.RobotModel`)."""

    def __init__(self, robot):
        import pinocchio as pin
        from dodo_sim.ros.contract import ODOM_FRAME, WORLD_FRAME
        self._pin = pin
        self.model = robot.model
        self.data = self.model.createData()
        if robot.floating_base:
            self.frame_id = ODOM_FRAME
            self.base_frame = self.model.getFrameId(robot.root_link, pin.FrameType.BODY)
        else:
            self.frame_id = WORLD_FRAME
            self.base_frame = robot.push_frame_id
        #: the base link
        self.child_frame_id = self.model.frames[self.base_frame].name

    def __call__(self, q, v) -> BaseOdometry:
        """Odometry at state (q, v) of the model."""
        pin = self._pin
        pin.forwardKinematics(self.model, self.data, q, v)
        placement = pin.updateFramePlacement(self.model, self.data, self.base_frame)
        twist = pin.getFrameVelocity(self.model, self.data, self.base_frame, pin.LOCAL)
        return BaseOdometry(self.frame_id, self.child_frame_id, np.array(placement.translation),
                            np.array(pin.Quaternion(placement.rotation).coeffs()),
                            np.array(twist.linear), np.array(twist.angular))


__all__ = ['BaseOdometry', 'BaseOdometer']
