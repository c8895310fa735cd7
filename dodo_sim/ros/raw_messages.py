# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
Read the nodes' 1 kHz inputs from their serialized bytes (``raw=True`` subscriptions).

Plain little-endian CDR is read by :mod:`dodo_sim.ros.cdr` without building message objects;
anything else (:class:`~dodo_sim.ros.cdr.CdrError`) is left to rclpy's deserializer, with the
same result.
"""
from __future__ import annotations

from dodo_sim.ros.cdr import CdrError, JointStateReader, read_frame_id, read_wrench_stamped
from dodo_sim.stamps import from_sec_nanosec
from geometry_msgs.msg import WrenchStamped
from rclpy.serialization import deserialize_message
from sensor_msgs.msg import JointState


def stamp_ns(msg) -> int:
    """Return the header stamp of a message in ns."""
    stamp = msg.header.stamp
    return from_sec_nanosec(stamp.sec, stamp.nanosec)


def read_joint_state(reader: JointStateReader, data: bytes) -> tuple:
    """Return (stamp ns, names, position, velocity, effort) of a serialized JointState."""
    try:
        return reader.read(data)
    except CdrError:                            # not plain little-endian CDR: rclpy reads it
        msg = deserialize_message(data, JointState)
        return stamp_ns(msg), list(msg.name), msg.position, msg.velocity, msg.effort


def read_contact(data: bytes) -> tuple:
    """Return (stamp ns, (fx, fy, fz)) of a serialized WrenchStamped."""
    try:
        return read_wrench_stamped(data)
    except CdrError:                            # not plain little-endian CDR: rclpy reads it
        msg = deserialize_message(data, WrenchStamped)
        force = msg.wrench.force
        return stamp_ns(msg), (force.x, force.y, force.z)


def read_contact_frame_id(data: bytes) -> str:
    """Return ``header.frame_id`` of a serialized WrenchStamped."""
    try:
        return read_frame_id(data)
    except CdrError:
        return deserialize_message(data, WrenchStamped).header.frame_id
