# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
Check that dodo_sim.ros.cdr reads what rclpy serializes.

The writer is rclpy.serialization.serialize_message (the rmw's own CDR writer); dodo_sim.ros.cdr
must read its output field for field and refuse what it cannot read.
"""
from __future__ import annotations

from dodo_sim.ros.cdr import CdrError, JointStateReader, read_wrench_stamped
from geometry_msgs.msg import WrenchStamped
import pytest
from rclpy.serialization import serialize_message
from sensor_msgs.msg import JointState


@pytest.mark.parametrize('frame_id, names', [
    ('', ['base_x', 'base_z', 'hip', 'knee']),
    ('world', ['a']),                           # odd string lengths: padding before the doubles
    ('abc', ['left_hip', 'right_knee', 'x']),
    ('', []),
])
def test_joint_state_fields_equal_rclpy_serialization(frame_id, names):
    n = len(names)
    msg = JointState(name=names, position=[0.1 * (i + 1) for i in range(n)],
                     velocity=[-1.5 * i for i in range(n)], effort=[3.25] * (n // 2))
    msg.header.frame_id = frame_id
    msg.header.stamp.sec, msg.header.stamp.nanosec = 1234, 987_654_321
    stamp, got_names, position, velocity, effort = JointStateReader().read(
        serialize_message(msg))
    assert stamp == 1234 * 1_000_000_000 + 987_654_321
    assert got_names == names
    assert list(position) == list(msg.position)
    assert list(velocity) == list(msg.velocity)
    assert list(effort) == list(msg.effort)


def test_joint_state_reader_follows_changing_names():
    reader = JointStateReader()
    first = JointState(name=['a', 'b'], position=[1.0, 2.0], velocity=[0.0, 0.0])
    second = JointState(name=['c'], position=[3.0], velocity=[4.0])
    assert reader.read(serialize_message(first))[1] == ['a', 'b']
    assert reader.read(serialize_message(second))[1:4] == (['c'], (3.0,), (4.0,))
    assert reader.read(serialize_message(first))[1] == ['a', 'b']


@pytest.mark.parametrize('frame_id', ['', 'world', 'foot'])
def test_wrench_stamped_equals_rclpy_serialization(frame_id):
    msg = WrenchStamped()
    msg.header.frame_id = frame_id
    msg.header.stamp.sec, msg.header.stamp.nanosec = 7, 1_000
    msg.wrench.force.x, msg.wrench.force.y, msg.wrench.force.z = 1.5, -2.25, 981.0
    msg.wrench.torque.z = 9.0
    assert read_wrench_stamped(serialize_message(msg)) == (7_000_001_000, (1.5, -2.25, 981.0))


def test_big_endian_or_truncated_bytes_are_refused():
    data = serialize_message(JointState(name=['a'], position=[1.0], velocity=[2.0]))
    with pytest.raises(CdrError):
        JointStateReader().read(b'\x00\x00' + data[2:])          # big-endian encapsulation
    with pytest.raises(CdrError):
        JointStateReader().read(data[:-8])
    with pytest.raises(CdrError):
        read_wrench_stamped(serialize_message(WrenchStamped())[:30])


@pytest.mark.parametrize('names, sizes', [
    (['base_x', 'base_z', 'hip', 'knee'], (4, 4, 4)),      # the simulator's /joint_states
    (['hip', 'knee'], (0, 0, 2)),                          # the controller's /joint_commands
    (['left_hip', 'x'], (2, 2, 2)),
])
def test_joint_state_writer_bytes_read_back_by_rclpy(names, sizes):
    from dodo_sim.ros.cdr import JointStateWriter
    from rclpy.serialization import deserialize_message
    template = JointState(name=names, position=[0.0] * sizes[0], velocity=[0.0] * sizes[1],
                          effort=[0.0] * sizes[2])
    template.header.frame_id = 'world'
    writer = JointStateWriter(serialize_message(template), sizes)
    values = [[0.5 * (i + 1) + k for i in range(n)] for k, n in enumerate(sizes)]
    data = writer.write(3_000_000_123, *values)
    msg = deserialize_message(data, JointState)
    assert (msg.header.stamp.sec, msg.header.stamp.nanosec) == (3, 123)
    assert msg.header.frame_id == 'world' and list(msg.name) == names
    assert [list(msg.position), list(msg.velocity), list(msg.effort)] == values
    # no bytes after the last field (bag readers check the size)
    from rosbags.typesys import get_typestore, Stores
    typestore = get_typestore(Stores.ROS2_HUMBLE)
    assert typestore.deserialize_cdr(data, 'sensor_msgs/msg/JointState').name == names
    again = writer.write(5, *values)                    # the buffer is refilled, not grown
    assert len(again) == len(data) and deserialize_message(
        again, JointState).header.stamp.nanosec == 5
