# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
Recorder over real DDS: every message published at 1 kHz is in the bag after SIGINT / SIGTERM.

Each test runs on its own ROS_DOMAIN_ID with ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST, starts a
recorder process and a publisher process (this file run as a script), waits on deadlines and stops
only the processes it started.
"""
from __future__ import annotations

from pathlib import Path
import signal
import subprocess
import sys
import time

from conftest import ros_env
import numpy as np
import pytest

REPO = Path(__file__).resolve().parents[2]


def _wait_for_line(proc: subprocess.Popen, prefix: str, timeout_s: float) -> str:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        if line.startswith(prefix):
            return line
        if not line and proc.poll() is not None:
            break
    raise AssertionError(f'no line starting with {prefix!r} within {timeout_s} s '
                         f'(process exit code {proc.poll()})')


class _Procs:
    """The processes a test started; all are ended (by pid) at teardown."""

    def __init__(self):
        self.procs: list[subprocess.Popen] = []

    def start(self, args, env) -> subprocess.Popen:
        proc = subprocess.Popen(args, env=env, cwd=REPO, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)
        self.procs.append(proc)
        return proc

    def cleanup(self):
        for proc in self.procs:
            if proc.poll() is None:
                proc.kill()
                proc.wait(timeout=10)


@pytest.fixture
def procs():
    p = _Procs()
    yield p
    p.cleanup()


def _start_recorder(procs, bag: Path, topics: list[str], env: dict, executor='events'):
    topic_list = '[' + ', '.join(f"'{t}'" for t in topics) + ']'
    rec = procs.start([sys.executable, '-m', 'dodo_sim.ros.recorder', '--ros-args',
                       '-p', f'bag:={bag}', '-p', f'topics:={topic_list}',
                       '-p', f'executor:={executor}'], env)
    _wait_for_line(rec, 'dodo recorder: ready', 30.0)
    return rec


def _run_publisher(procs, n: int, env: dict, with_clock: bool, best_effort=False) -> str:
    pub = procs.start([sys.executable, __file__, 'publish', str(n), str(int(with_clock)),
                       str(int(best_effort))], env)
    out, err = pub.communicate(timeout=60)
    assert pub.returncode == 0, f'publisher failed:\n{out}\n{err}'
    return out


def _stop(rec: subprocess.Popen, sig: int) -> tuple[str, str]:
    rec.send_signal(sig)
    out, err = rec.communicate(timeout=30)
    assert rec.returncode == 0, f'recorder exit {rec.returncode}:\n{out}\n{err}'
    return out, err


def _check_bag(bag: Path, n: int, with_clock: bool):
    from dodo_sim.tools.bag import message_counts, read_bag
    from dodo_sim.tools.bag_arrays import joint_states, multiarray
    from dodo_sim.tools.bag_robot import robot_description
    assert (bag / 'metadata.yaml').is_file()
    counts = message_counts(bag)
    assert counts['joint_states'] == n
    assert counts['effort_controller/commands'] == n
    assert counts['robot_description'] == 1
    if with_clock:
        assert counts['clock'] == n
    data = read_bag(bag)
    js = joint_states(data['joint_states'])
    # every message once, in publishing order
    np.testing.assert_array_equal(js.q[:, 0], np.arange(n, dtype=float))
    np.testing.assert_allclose(js.t, np.arange(n) * 1e-3, atol=1e-9)
    cmd = multiarray(data['effort_controller/commands'])
    np.testing.assert_array_equal(cmd[:, 0], np.arange(n, dtype=float))
    assert robot_description(data) == '<robot name="test"/>'
    assert np.all(np.diff(data['joint_states'].log_time_ns) >= 0)


def _record_publisher_run(tmp_path, procs, topics: list, n: int) -> tuple:
    """Record ``topics`` while ``n`` messages are published (no /clock), stop with SIGINT."""
    env = ros_env()
    bag = tmp_path / 'bag'
    rec = _start_recorder(procs, bag, topics, env)
    out = _run_publisher(procs, n, env, with_clock=False)
    assert f'published {n}' in out
    rec_out, rec_err = _stop(rec, signal.SIGINT)
    return bag, rec_err


@pytest.mark.ros
def test_records_every_message_at_1khz_and_closes_on_sigint(tmp_path, procs):
    n = 2000
    bag, rec_err = _record_publisher_run(tmp_path, procs, [
        'joint_states', 'effort_controller/commands', 'robot_description', 'clock'], n)
    assert 'differs' not in rec_err  # typestore hashes equal the publishers' type hashes
    _check_bag(bag, n, with_clock=False)


@pytest.mark.ros
def test_a_topic_listed_twice_is_recorded_once_without_an_error(tmp_path, procs):
    """
    One subscription and one bag connection per topic, even if the list repeats it.

    The hardware list once named /diagnostics twice: the second subscription failed to add its
    connection and logged an error.
    """
    n = 500
    bag, rec_err = _record_publisher_run(tmp_path, procs, [
        'joint_states', 'effort_controller/commands', 'robot_description', 'joint_states'], n)
    assert 'not recording' not in rec_err and 'cannot describe' not in rec_err, rec_err
    _check_bag(bag, n, with_clock=False)


@pytest.mark.ros
def test_sigterm_with_single_threaded_executor_keeps_send_order(tmp_path, procs):
    n = 1000
    env = ros_env()
    bag = tmp_path / 'bag'
    rec = _start_recorder(procs, bag, ['joint_states', 'effort_controller/commands',
                                       'robot_description', 'clock'], env, executor='single')
    _run_publisher(procs, n, env, with_clock=True)
    _stop(rec, signal.SIGTERM)
    _check_bag(bag, n, with_clock=True)
    # bag time = publisher send time: each command follows its state, before the next state
    from dodo_sim.tools.bag import read_bag
    data = read_bag(bag, ['joint_states', 'effort_controller/commands'])
    t_js = data['joint_states'].log_time_ns
    t_cmd = data['effort_controller/commands'].log_time_ns
    assert np.all(t_cmd >= t_js)
    assert np.all(t_cmd[:-1] <= t_js[1:])


@pytest.mark.ros
def test_best_effort_publisher_gets_a_matching_subscription(tmp_path, procs):
    """
    /joint_states is subscribed RELIABLE at start; a BEST_EFFORT publisher is incompatible.

    The recorder therefore subscribes again with matching QoS and records it.
    """
    n = 500
    env = ros_env()
    bag = tmp_path / 'bag'
    rec = _start_recorder(procs, bag, ['joint_states', 'effort_controller/commands',
                                       'robot_description'], env)
    _run_publisher(procs, n, env, with_clock=False, best_effort=True)
    _, err = _stop(rec, signal.SIGINT)
    assert 'subscribing again' in err
    from dodo_sim.tools.bag import message_counts
    counts = message_counts(bag)
    # best effort may drop messages by design; on localhost nearly all arrive
    assert counts['joint_states'] >= n // 2
    assert counts['effort_controller/commands'] >= n // 2


@pytest.mark.ros
def test_contract_topic_with_another_type_is_recorded_with_that_type(tmp_path, procs):
    """
    /controller/state is subscribed as JointState at start.

    Published as Float64MultiArray it is subscribed again with the type found on the graph.
    """
    n = 300
    env = ros_env()
    bag = tmp_path / 'bag'
    rec = _start_recorder(procs, bag, ['controller/state'], env)
    pub = procs.start([sys.executable, __file__, 'retyped', str(n)], env)
    out, err = pub.communicate(timeout=60)
    assert pub.returncode == 0, f'{out}\n{err}'
    _, rec_err = _stop(rec, signal.SIGINT)
    assert 'subscribing again with std_msgs/msg/Float64MultiArray' in rec_err
    from dodo_sim.tools.bag import read_bag
    from dodo_sim.tools.bag_arrays import multiarray
    data = read_bag(bag)['controller/state']
    assert data.msgtype == 'std_msgs/msg/Float64MultiArray'
    np.testing.assert_array_equal(multiarray(data)[:, 0], np.arange(n, dtype=float))


@pytest.mark.ros
def test_stop_while_streaming_sigint_then_sigterm_leaves_a_gapless_bag(tmp_path, procs):
    """
    The publisher keeps going; SIGINT starts the drain, SIGTERM ends it at once.

    Launch sends that SIGTERM after its SIGINT timeout. The bag is valid and holds a gapless prefix
    of the stream.
    """
    env = ros_env()
    bag = tmp_path / 'bag'
    rec = _start_recorder(procs, bag, ['joint_states', 'effort_controller/commands',
                                       'robot_description'], env)
    pub = procs.start([sys.executable, __file__, 'publish', '100000', '0', '0'], env)
    # stop 200 messages (>= 0.2 s) after the 300th was sent, so the recorder has surely taken
    # those 300 however the stop races the stream (stopping right at 'sent 300' gave 299 once)
    _wait_for_line(pub, 'sent 500', 60.0)
    rec.send_signal(signal.SIGINT)
    rec.send_signal(signal.SIGTERM)
    _, err = rec.communicate(timeout=20)
    assert rec.returncode == 0, err
    from dodo_sim.tools.bag import read_bag
    from dodo_sim.tools.bag_arrays import joint_states
    data = read_bag(bag)
    js = joint_states(data['joint_states'])
    assert len(js.q) >= 300
    np.testing.assert_array_equal(js.q[:, 0], np.arange(len(js.q), dtype=float))


def test_existing_bag_directory_is_a_clear_error(tmp_path):
    bag = tmp_path / 'exists'
    bag.mkdir()
    result = subprocess.run([sys.executable, '-m', 'dodo_sim.ros.recorder', '--ros-args',
                             '-p', f'bag:={bag}'], env=ros_env(), cwd=REPO,
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 2
    assert 'exists' in result.stderr and str(bag) in result.stderr


def test_missing_bag_parameter_is_a_clear_error():
    result = subprocess.run([sys.executable, '-m', 'dodo_sim.ros.recorder'],
                            env=ros_env(), cwd=REPO, capture_output=True, text=True,
                            timeout=60)
    assert result.returncode == 2
    assert "'bag'" in result.stderr


@pytest.mark.parametrize('type_name', ['sensor_msgs/msg/JointState',
                                       'visualization_msgs/msg/MarkerArray',
                                       'geometry_msgs/msg/WrenchStamped',
                                       'std_msgs/msg/Float64MultiArray'])
def test_message_definition_from_python_class_matches_typestore(type_name):
    """The fallback for types rosbags does not ship gives the same RIHS01 hash."""
    from dodo_sim.ros.recorder_subscriptions import message_class
    from dodo_sim.tools.bag import make_typestore, register_msg_class
    from rosbags.typesys import get_typestore, Stores
    empty = get_typestore(Stores.EMPTY)
    register_msg_class(empty, type_name, message_class(type_name))
    assert empty.hash_rihs01(type_name) == make_typestore().hash_rihs01(type_name)


def test_message_class_rejects_unknown_types():
    from dodo_sim.ros.recorder_subscriptions import message_class
    with pytest.raises(ValueError, match='no_such_pkg'):
        message_class('no_such_pkg/msg/Nothing')
    with pytest.raises(ValueError, match='not a ROS message type'):
        message_class('justaname')


# ---- publisher process -------------------------------------------------
def _publish(n: int, with_clock: bool, best_effort: bool = False) -> int:
    """
    Publish /robot_description (latched) once.

    Then publish n JointState + n commands (+ /clock) at 1 kHz from a wall-clock timer, and wait
    until every subscriber acknowledged them.
    """
    import rclpy
    from rclpy.duration import Duration
    from rclpy.experimental import EventsExecutor
    from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
    from rosgraph_msgs.msg import Clock
    from sensor_msgs.msg import JointState
    from std_msgs.msg import Float64MultiArray, String

    rclpy.init()
    node = rclpy.create_node('test_publisher')
    qos = QoSProfile(depth=1000, reliability=(ReliabilityPolicy.BEST_EFFORT if best_effort
                                              else ReliabilityPolicy.RELIABLE))
    latched = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE,
                         durability=DurabilityPolicy.TRANSIENT_LOCAL)
    pubs = [node.create_publisher(JointState, 'joint_states', qos),
            node.create_publisher(Float64MultiArray, 'effort_controller/commands', qos)]
    if with_clock:
        pubs.append(node.create_publisher(Clock, 'clock', qos))
    description = node.create_publisher(String, 'robot_description', latched)
    description.publish(String(data='<robot name="test"/>'))
    deadline = time.monotonic() + 20.0
    while any(p.get_subscription_count() < 1 for p in pubs + [description]):
        if time.monotonic() > deadline:
            print('no subscriber matched', file=sys.stderr)
            return 1
        rclpy.spin_once(node, timeout_sec=0.02)
    sent = [0]

    def tick():
        i = sent[0]
        if i >= n:
            return
        stamp = divmod(i, 1000)
        msg = JointState(name=['base_x', 'base_z', 'hip', 'knee'],
                         position=[float(i), 1.0, 0.1, -0.2], velocity=[0.0] * 4,
                         effort=[0.0] * 4)
        msg.header.stamp.sec, msg.header.stamp.nanosec = stamp[0], stamp[1] * 1_000_000
        if with_clock:
            clock = Clock()
            clock.clock = msg.header.stamp
            pubs[2].publish(clock)
        pubs[0].publish(msg)
        pubs[1].publish(Float64MultiArray(data=[float(i), 0.5]))
        sent[0] += 1
        if sent[0] in (300, 500):
            print(f'sent {sent[0]}', flush=True)

    node.create_timer(0.001, tick)
    executor = EventsExecutor()
    executor.add_node(node)
    deadline = time.monotonic() + 10.0 + n * 0.005
    while sent[0] < n and time.monotonic() < deadline:
        executor.spin_once(timeout_sec=0.1)
    acked = best_effort or all(p.wait_for_all_acked(Duration(seconds=10.0)) for p in pubs)
    print(f'published {sent[0]} acked {acked}', flush=True)
    executor.shutdown()
    node.destroy_node()
    rclpy.shutdown()
    return 0 if sent[0] == n and acked else 1


def _publish_retyped(n: int) -> int:
    """
    Publish n Float64MultiArray messages on /controller/state at 1 kHz.

    Publishing starts once a reader matched.
    """
    import rclpy
    from rclpy.duration import Duration
    from rclpy.qos import QoSProfile, ReliabilityPolicy
    from std_msgs.msg import Float64MultiArray

    rclpy.init()
    node = rclpy.create_node('test_retyped')
    pub = node.create_publisher(Float64MultiArray, 'controller/state',
                                QoSProfile(depth=1000, reliability=ReliabilityPolicy.RELIABLE))
    deadline = time.monotonic() + 20.0
    while pub.get_subscription_count() < 1:
        if time.monotonic() > deadline:
            return 1
        rclpy.spin_once(node, timeout_sec=0.02)
    sent = [0]

    def tick():
        if sent[0] < n:
            pub.publish(Float64MultiArray(data=[float(sent[0])]))
            sent[0] += 1

    node.create_timer(0.001, tick)
    while sent[0] < n:
        rclpy.spin_once(node, timeout_sec=0.1)
    acked = pub.wait_for_all_acked(Duration(seconds=10.0))
    node.destroy_node()
    rclpy.shutdown()
    return 0 if acked else 1


if __name__ == '__main__' and len(sys.argv) == 3 and sys.argv[1] == 'retyped':
    sys.exit(_publish_retyped(int(sys.argv[2])))
if __name__ == '__main__' and len(sys.argv) == 5 and sys.argv[1] == 'publish':
    sys.exit(_publish(int(sys.argv[2]), bool(int(sys.argv[3])), bool(int(sys.argv[4]))))
