# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
The driver's own state log (dodo_sim.hardware.state_log).

The in-memory ring across block boundaries, and the MCAP file it writes decoded by mcap_ros2
(Foxglove's decoder, not ours).
"""
from dodo_sim.hardware.state_log import state_log_path, StateLog, StateRing
from mcap_ros2.reader import read_ros2_messages
import numpy as np
from rclpy.serialization import serialize_message
from sensor_msgs.msg import JointState


def test_ring_keeps_every_row_in_order_across_blocks():
    ring = StateRing(2, block_rows=4)
    for k in range(11):
        ring.append(1000 * k, [k, -k], [0.5 * k, 0.0], [k + 0.25, 1.0])
    rows = list(ring.rows())
    assert ring.count == len(rows) == 11
    assert [r[0] for r in rows] == [1000 * k for k in range(11)]
    assert np.array_equal(np.array([r[1] for r in rows]), [[k, -k] for k in range(11)])
    assert np.array_equal(np.array([r[3] for r in rows])[:, 0], np.arange(11) + 0.25)


def test_state_log_is_a_ros2_mcap_stream(tmp_path):
    path = state_log_path(tmp_path / 'bag')
    assert path == tmp_path / 'bag.driver.mcap'          # beside the bag, never in it
    log = StateLog(path, '/joint_states')
    msg = JointState()
    msg.name = ['hip', 'knee']
    for k in range(1500):
        msg.header.stamp.sec, msg.header.stamp.nanosec = divmod(10**9 + 10**6 * k, 10**9)
        msg.position = [0.001 * k, -0.002 * k]
        msg.velocity = [1.0, 2.0]
        msg.effort = [float(k), 0.0]
        log.write(10**9 + 10**6 * k, serialize_message(msg))
    log.close()
    decoded = list(read_ros2_messages(str(path)))
    assert log.logged == len(decoded) == 1500
    assert {d.channel.topic for d in decoded} == {'/joint_states'}
    assert decoded[0].schema.name == 'sensor_msgs/msg/JointState'
    last = decoded[-1].ros_msg
    assert list(last.name) == ['hip', 'knee'] and last.effort[0] == 1499.0
    assert last.position[1] == -0.002 * 1499
    assert decoded[-1].log_time_ns == 10**9 + 10**6 * 1499
