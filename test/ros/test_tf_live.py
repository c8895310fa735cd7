# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
Live ``/tf`` and ``/tf_static`` on a plain machine (issue 31 item 3; docs/bags.md).

``dodo hop`` starts no robot_state_publisher (it needs a ROS install), so its recorder computes
the transforms (``tf: compute``, :data:`dodo_sim.ros.graph.TF_PUBLISHER`) and publishes them
live as robot_state_publisher would; the real ``ros2 topic echo`` (ros2cli of
``../shared/ros2_launch``) receives them. ``dodo replay`` republishes the recorded ones (it
skipped them while no tf2_msgs package existed here).
"""
import subprocess
import sys
import time

from bags_support import Procs
from conftest import REPO, ros_domain_id, ros_env
from dodo_sim.paths import default_urdf_path
from dodo_sim.physics.robot import robot_description_xml
from dodo_sim.ros.tf_frames import TfTree, Transform
import numpy as np
import pytest
from test_launch_real import ros2_cli_env
import yaml

pytestmark = pytest.mark.ros


def _echo(env, topic: str, *qos) -> subprocess.Popen:
    """``ros2 topic echo TOPIC tf2_msgs/msg/TFMessage --once``: the first message as YAML."""
    return subprocess.Popen(['ros2', 'topic', 'echo', topic, 'tf2_msgs/msg/TFMessage', '--once',
                             '--no-daemon', *qos], env=env, cwd=REPO, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def _edges(output: str) -> set:
    message = next(doc for doc in yaml.safe_load_all(output) if doc)
    return {(t['header']['frame_id'], t['child_frame_id']) for t in message['transforms']}


@pytest.mark.slow
def test_ros2_topic_echo_receives_tf_from_a_plain_dodo_hop(tmp_path):
    env = ros2_cli_env()
    env.update(ROS_DOMAIN_ID=str(ros_domain_id()), ROS_AUTOMATIC_DISCOVERY_RANGE='LOCALHOST',
               ROS_LOG_DIR=str(tmp_path / 'log'), PYTHONUNBUFFERED='1')
    tree = TfTree(robot_description_xml(default_urdf_path()))
    procs = Procs()
    echoes = []
    try:
        echoes = [_echo(env, '/tf'),
                  _echo(env, '/tf_static', '--qos-durability', 'transient_local',
                        '--qos-reliability', 'reliable')]
        hop = procs.start([sys.executable, '-m', 'dodo_sim.tools.cli', 'hop', '--duration', '2',
                           '--bag', str(tmp_path / 'bag'), '--no-plots', '--wall-timeout',
                           '150'], env)
        assert hop.wait(timeout=170) == 0, procs.output(hop)
        # the run is over: what the echoes were to receive was published
        outputs = [echo.communicate(timeout=20) for echo in echoes]
    finally:
        for echo in echoes:
            if echo.poll() is None:
                echo.kill()
                echo.wait(timeout=10)
        procs.cleanup()
    for echo, (out, err) in zip(echoes, outputs):
        assert echo.returncode == 0, err
    moving = {(j.parent, j.child) for j in tree.moving_joints}
    static = {(j.parent, j.child) for j in tree.static_joints}
    assert moving and moving <= _edges(outputs[0][0]), outputs[0][0]
    assert static and _edges(outputs[1][0]) == static, outputs[1][0]


def test_dodo_replay_republishes_tf_and_tf_static(tmp_path):
    import rclpy
    from rclpy.executors import SingleThreadedExecutor
    from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
    from tf2_msgs.msg import TFMessage
    from dodo_sim.tools.bag_writer import OfflineBagWriter

    n = 50
    bag = tmp_path / 'bag'
    with OfflineBagWriter(bag) as writer:
        writer.tf_static([Transform('shank', 'foot', np.array([0.0, 0.0, -0.5]),
                                    np.array([0.0, 0.0, 0.0, 1.0]))])
        for k in range(n):
            writer.tf(k * 0.01, [Transform('world', 'body', np.array([0.0, 0.0, 1.0 + k]),
                                           np.array([0.0, 0.0, 0.0, 1.0]))])
    env = ros_env()
    context = rclpy.Context()
    rclpy.init(context=context, domain_id=int(env['ROS_DOMAIN_ID']))
    replay = None
    try:
        node = rclpy.create_node('tf_listener', context=context)
        received = {'/tf': [], '/tf_static': []}
        node.create_subscription(TFMessage, '/tf', received['/tf'].append, 100)
        node.create_subscription(TFMessage, '/tf_static', received['/tf_static'].append,
                                 QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE,
                                            durability=DurabilityPolicy.TRANSIENT_LOCAL))
        executor = SingleThreadedExecutor(context=context)
        executor.add_node(node)
        replay = subprocess.Popen([sys.executable, '-m', 'dodo_sim.tools.cli', 'replay',
                                   str(bag), '--min-subscribers', '1', '--start-delay', '0.5',
                                   '--no-progress'], env=env, cwd=REPO,
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 60
        while replay.poll() is None and time.monotonic() < deadline:
            executor.spin_once(timeout_sec=0.05)
        deadline = time.monotonic() + 2         # acknowledged before replay exited: taken now
        while len(received['/tf']) < n and time.monotonic() < deadline:
            executor.spin_once(timeout_sec=0.05)
        out, err = replay.communicate(timeout=30)
    finally:
        rclpy.try_shutdown(context=context)
        if replay is not None and replay.poll() is None:
            replay.kill()
            replay.wait(timeout=10)
    assert replay.returncode == 0, err
    assert 'not replaying' not in err, err
    assert f'published {n + 1} messages' in out, out
    heights = [m.transforms[0].transform.translation.z for m in received['/tf']]
    assert heights == [1.0 + k for k in range(n)]
    assert [(t.header.frame_id, t.child_frame_id) for t in received['/tf_static'][0].transforms] \
        == [('shank', 'foot')]
