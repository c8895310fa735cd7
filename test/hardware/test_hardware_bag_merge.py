# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
The driver's state log merged into the run's bag (dodo_sim.tools.bag_merge).

A bag whose recorder missed states (every third one, and the whole tail) plus the driver's log of
every state: after the merge the one bag holds each state once, in time order, read by rosbags'
AnyReader, by the mcap library's readers (mcap_ros2, as Foxglove decodes) and by our bag tools.
"""
from dodo_sim.hardware.state_log import state_log_path, StateLog
from dodo_sim.ros import contract
from dodo_sim.tools.bag import message_counts, read_bag
from dodo_sim.tools.bag_arrays import joint_states
from dodo_sim.tools.bag_merge import header_stamp_ns, merge_state_log
from dodo_sim.tools.bag_writer import OfflineBagWriter
from mcap_ros2.reader import read_ros2_messages
import numpy as np
import pytest
from rclpy.serialization import serialize_message
from rosbags.highlevel import AnyReader
from sensor_msgs.msg import JointState

N_STATES = 1200
T0_NS = 1_700_000_000 * 10**9
NAMES = ['base_x', 'base_z', 'hip', 'knee']


def state_bytes(k: int) -> bytes:
    msg = JointState()
    msg.name = NAMES
    msg.header.stamp.sec, msg.header.stamp.nanosec = divmod(T0_NS + 10**6 * k, 10**9)
    msg.position = [0.001 * k, 1.0, 0.5, -float(k)]
    msg.velocity = [0.0, 0.0, 0.0, 0.0]
    msg.effort = [0.0, 0.0, 1.0, 2.0]
    return serialize_message(msg)


def make_run(tmp_path, recorded_ks):
    """Write a closed bag with the states ``recorded_ks`` and commands; the driver's log of all."""
    bag = tmp_path / 'bag'
    with OfflineBagWriter(bag, log_offset_ns=T0_NS) as w:
        for k in range(N_STATES):
            t = 1e-3 * k
            if k in recorded_ks:
                # the recorder's bag time: when it took the message, a few ms late
                w.write_raw(contract.JOINT_STATES, 'sensor_msgs/msg/JointState',
                            state_bytes(k), T0_NS + 10**6 * k + 3_000_000)
            w.command(t, [float(k), 0.0])
    log = StateLog(state_log_path(bag), '/joint_states')
    for k in range(N_STATES):
        log.write(T0_NS + 10**6 * k, state_bytes(k))
    log.close()
    return bag, state_log_path(bag)


def test_merged_bag_holds_every_logged_state_once_in_time_order(tmp_path):
    recorded = {k for k in range(900) if k % 3}         # missed every third, and the tail
    bag, log = make_run(tmp_path, recorded)
    assert message_counts(bag)[contract.JOINT_STATES] == len(recorded)
    report = merge_state_log(bag, log)
    assert (report.recorded, report.added, report.logged) == (len(recorded), N_STATES - 600,
                                                              N_STATES)
    assert report.total == N_STATES and report.unmatched == 0 and not log.exists()
    counts = message_counts(bag)
    assert counts[contract.JOINT_STATES] == N_STATES
    assert counts[contract.EFFORT_COMMANDS] == N_STATES          # the rest is kept
    js = joint_states(read_bag(bag, [contract.JOINT_STATES])[contract.JOINT_STATES])
    assert np.array_equal(js.stamp_ns, T0_NS + 10**6 * np.arange(N_STATES))   # no gap, no dup
    assert np.array_equal(js.q[:, 3], -np.arange(N_STATES))
    assert list(bag.glob('*.mcap')) == [bag / 'bag.mcap'] and not list(tmp_path.glob('.*'))


def test_merged_bag_reads_with_rosbags_and_mcap_readers_in_time_order(tmp_path):
    bag, log = make_run(tmp_path, set(range(0, N_STATES, 2)))
    merge_state_log(bag, log)
    with AnyReader([bag]) as reader:
        times = [t for _, t, _ in reader.messages()]
        assert times == sorted(times)
        conns = [c for c in reader.connections if c.topic == '/joint_states']
        assert len(conns) == 1 and conns[0].msgcount == N_STATES
        assert reader.duration >= (N_STATES - 1) * 10**6
    # the storage file alone, as Foxglove / mcap_ros2 decode it
    decoded = [m for m in read_ros2_messages(str(bag / 'bag.mcap'))
               if m.channel.topic == '/joint_states']
    stamps = [m.ros_msg.header.stamp.sec * 10**9 + m.ros_msg.header.stamp.nanosec
              for m in decoded]
    assert stamps == [T0_NS + 10**6 * k for k in range(N_STATES)]


def test_a_bag_that_holds_every_state_is_left_as_it_is(tmp_path):
    bag, log = make_run(tmp_path, set(range(N_STATES)))
    before = (bag / 'bag.mcap').read_bytes()
    report = merge_state_log(bag, log, remove_log=False)
    assert report.added == 0 and not report.rewritten and log.exists()
    assert (bag / 'bag.mcap').read_bytes() == before


def test_a_bag_without_any_recorded_state_gets_them_all_from_the_log(tmp_path):
    bag, log = make_run(tmp_path, set())
    report = merge_state_log(bag, log)
    assert report.added == N_STATES
    js = joint_states(read_bag(bag, [contract.JOINT_STATES])[contract.JOINT_STATES])
    assert len(js.stamp_ns) == N_STATES


def test_a_truncated_log_is_refused_and_the_bag_unchanged(tmp_path):
    bag, log = make_run(tmp_path, set(range(0, N_STATES, 2)))
    log.write_bytes(log.read_bytes()[:-100])
    before = (bag / 'bag.mcap').read_bytes()
    with pytest.raises(ValueError, match='truncated'):
        merge_state_log(bag, log)
    assert (bag / 'bag.mcap').read_bytes() == before and log.exists()


def test_header_stamp_is_read_from_the_cdr_bytes():
    assert header_stamp_ns(state_bytes(7)) == T0_NS + 7 * 10**6


def test_dodo_bag_merge_driver_log_command(tmp_path, capsys):
    from dodo_sim.tools.bag_tool import main
    bag, log = make_run(tmp_path, set(range(0, N_STATES, 4)))
    assert main(['merge-driver-log', str(bag)]) == 0
    assert f'bag: {N_STATES} joint_states: 300 recorded live + 900' in capsys.readouterr().out
    assert message_counts(bag)[contract.JOINT_STATES] == N_STATES and not log.exists()
    assert main(['merge-driver-log', str(bag)]) == 2          # the log is gone: said, exit 2
