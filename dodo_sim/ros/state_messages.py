# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
The state messages the simulator and the driver publish, built once and refilled (no rclpy).

Contact wrenches (geometry_msgs/WrenchStamped, world axes at the link: ``frame_id``
``<frame>_contact``, docs/ros_contract.md "Frames") and the base's odometry (nav_msgs/Odometry,
:mod:`dodo_sim.ros.odometry`). At 1 kHz only the stamp and the numbers change: the messages are
made once and refilled in place.
"""
from __future__ import annotations

from dodo_sim.ros import contract
from geometry_msgs.msg import WrenchStamped
from nav_msgs.msg import Odometry


def contact_wrench_message(frame: str) -> WrenchStamped:
    """Return an empty contact wrench of ``frame`` (world axes, at the link)."""
    msg = WrenchStamped()
    msg.header.frame_id = contract.contact_frame_id(frame)
    return msg


def fill_wrench(msg: WrenchStamped, sec: int, nanosec: int, force, moment=None) -> None:
    """Set the stamp, the force [x, y, z] (N) and, when given, the moment (N*m) of ``msg``."""
    stamp = msg.header.stamp
    stamp.sec, stamp.nanosec = sec, nanosec
    f = msg.wrench.force
    f.x, f.y, f.z = float(force[0]), float(force[1]), float(force[2])
    if moment is not None:
        m = msg.wrench.torque
        m.x, m.y, m.z = float(moment[0]), float(moment[1]), float(moment[2])


def odometry_message(frame_id: str, child_frame_id: str) -> Odometry:
    """Return an empty odometry message between these frames."""
    msg = Odometry()
    msg.header.frame_id = frame_id
    msg.child_frame_id = child_frame_id
    return msg


def fill_odometry(msg: Odometry, sec: int, nanosec: int, odom) -> None:
    """Set the stamp, pose and twist of ``msg`` from a :mod:`dodo_sim.ros.odometry` sample."""
    msg.header.stamp.sec, msg.header.stamp.nanosec = sec, nanosec
    pose, twist = msg.pose.pose, msg.twist.twist
    p, o = pose.position, pose.orientation
    p.x, p.y, p.z = (float(c) for c in odom.position)
    o.x, o.y, o.z, o.w = (float(c) for c in odom.orientation_xyzw)
    lin, ang = twist.linear, twist.angular
    lin.x, lin.y, lin.z = (float(c) for c in odom.linear)
    ang.x, ang.y, ang.z = (float(c) for c in odom.angular)
