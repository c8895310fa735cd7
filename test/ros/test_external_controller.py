# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
Any ROS 2 node as the controller: ``dodo hop --controller external`` (issue 28 item 1).

The controller below is written from docs/ros_contract.md's checklist alone — plain rclpy, no
dodo_sim import: it reads ``/joint_states`` (reliable, depth 10), answers each state with a PD
hold of hip and knee on ``/joint_commands`` stamped with that state's stamp, runs on the wall
clock (no ``/clock`` subscription) and never reads the foot force. The start gate does not wait
for those topics; the run completes (exit 0, bag, figures) with every command answering its own
state (age 0); the bag records the controller as external, so ``dodo replay
--through-controller`` refuses it in one line (exit 2).
"""
import json
import os
import signal
import subprocess
import sys
import textwrap

from conftest import REPO, ros_domain_id, ros_env
import numpy as np
import pytest

pytestmark = [pytest.mark.ros, pytest.mark.slow]

#: A controller from the contract document alone (no dodo_sim import).
CONTRACT_ONLY_CONTROLLER = textwrap.dedent("""
    import rclpy
    from rclpy.qos import QoSProfile, ReliabilityPolicy
    from sensor_msgs.msg import JointState

    Q_HOLD = {'hip': 0.3, 'knee': -0.6}          # the start pose of config/hop.yaml, rad

    rclpy.init()
    node = rclpy.create_node('my_pd')
    reliable = QoSProfile(depth=10, reliability=ReliabilityPolicy.RELIABLE)
    commands = node.create_publisher(JointState, 'joint_commands', reliable)

    def on_state(state):
        position = dict(zip(state.name, state.position))
        velocity = dict(zip(state.name, state.velocity))
        answer = JointState()
        answer.header.stamp = state.header.stamp           # the state it answers
        answer.name = list(Q_HOLD)
        answer.effort = [400.0 * (Q_HOLD[j] - position[j]) - 20.0 * velocity[j] for j in Q_HOLD]
        commands.publish(answer)

    node.create_subscription(JointState, 'joint_states', on_state, reliable)
    try:
        rclpy.spin(node)
    except KeyboardInterrupt:
        pass
""")


def test_a_contract_only_node_is_the_controller_of_dodo_hop_and_its_bag_is_not_replayed(
        tmp_path):
    from dodo_sim.ros import contract
    from dodo_sim.ros.runtime import parse_summary
    from dodo_sim.tools.bag import message_counts, read_bag
    from dodo_sim.tools.bag_arrays import joint_commands, joint_states
    script = tmp_path / 'my_pd.py'
    script.write_text(CONTRACT_ONLY_CONTROLLER)
    domain = ros_domain_id()
    env = ros_env(domain)
    bag = tmp_path / 'bag'
    hop = subprocess.Popen(
        [sys.executable, '-m', 'dodo_sim.tools.cli', 'hop', '--controller', 'external',
         '--domain-id', str(domain), '--duration', '1', '--bag', str(bag)],
        cwd=REPO, env=env, text=True, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    node = subprocess.Popen([sys.executable, str(script)], cwd=tmp_path,
                            env=dict(env, PYTHONPATH=''), text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    try:
        output, _ = hop.communicate(timeout=600)
    finally:
        for proc in (hop, node):
            if proc.poll() is None:
                os.kill(proc.pid, signal.SIGINT)
                proc.wait(timeout=30)
    assert hop.returncode == 0, output[-4000:] + node.stdout.read()[-2000:]
    assert 'dodo hop: completed: t = 1.000 s (1000 steps)' in output, output[-3000:]
    assert '[controller]' not in output                       # no dodo controller node ran
    exchange = parse_summary(output, 'exchange')
    assert exchange['controller'] == '/my_pd' and exchange['age_ms_max'] == 0.0
    assert list(bag.parent.glob('bag_plots/*.png')), output[-2000:]
    counts = message_counts(bag)
    assert counts[contract.JOINT_STATES] == counts[contract.JOINT_COMMANDS] == 1001, counts
    data = read_bag(bag, [contract.JOINT_STATES, contract.JOINT_COMMANDS,
                          contract.APPLIED_CONTROLLER])
    js = joint_states(data[contract.JOINT_STATES], ('base_x', 'base_z', 'hip', 'knee'))
    commands = joint_commands(data[contract.JOINT_COMMANDS], ('hip', 'knee'))
    assert np.array_equal(commands.stamp_ns, js.stamp_ns)     # each answers its own state
    # it stands on its leg: a PD of 400 N*m/rad sags under the body's weight by a few 0.01 rad
    np.testing.assert_allclose(js.q[-1, 2:], [0.3, -0.6], atol=0.1)
    assert js.q[:, 1].min() > 0.8                              # never collapsed
    (announced,) = [json.loads(m.data) for m in data[contract.APPLIED_CONTROLLER].messages]
    assert announced['node'] == '/my_pd' and announced['kind'] == 'external'
    replay = subprocess.run([sys.executable, '-m', 'dodo_sim.tools.cli', 'replay', str(bag),
                             '--through-controller'], cwd=REPO, env=env, text=True,
                            capture_output=True, timeout=300)
    assert replay.returncode == 2, replay.stdout + replay.stderr
    assert replay.stderr.strip().splitlines() == [
        "dodo replay: error: the bag's controller was an external node, /my_pd; it cannot be "
        'replayed through a controller (dodo replay BAG without --through-controller '
        'republishes the bag for your node)']


#: A stand-in of ros2_control's topic-based system as the contract describes it (no dodo import):
#: every joint named, efforts of the actuated ones, stamped with the controller_manager's clock,
#: which under use_sim_time reads the awaited state's time (docs/ros2_control.md).
TOPIC_BASED_STAND_IN = textwrap.dedent("""
    import rclpy
    from rclpy.qos import QoSProfile, ReliabilityPolicy
    from sensor_msgs.msg import JointState

    rclpy.init()
    node = rclpy.create_node('topic_based_ros2_control')
    commands = node.create_publisher(JointState, 'topic_based_joint_commands',
                                     QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE))

    def on_state(state):
        position = dict(zip(state.name, state.position))
        answer = JointState(name=list(state.name))
        answer.header.stamp = state.header.stamp
        answer.effort = [400.0 * (0.3 - position['hip']), 400.0 * (-0.6 - position['knee'])]
        commands.publish(answer)

    node.create_subscription(JointState, 'topic_based_joint_states', on_state,
                             QoSProfile(depth=10, reliability=ReliabilityPolicy.RELIABLE))
    try:
        rclpy.spin(node)
    except KeyboardInterrupt:
        pass
""")


def test_the_ros2_control_convention_records_its_states_and_commands(tmp_path):
    """Issue 27 item 9: no dodo controller; a completed run's bag holds the convention's topics."""
    from dodo_sim.ros import contract
    from dodo_sim.tools.bag import message_counts
    params = tmp_path / 'ros2_control.yaml'
    params.write_text('simulator:\n  ros__parameters: {command_convention: ros2_control}\n')
    script = tmp_path / 'stand_in.py'
    script.write_text(TOPIC_BASED_STAND_IN)
    domain = ros_domain_id()
    env = ros_env(domain)
    bag = tmp_path / 'bag'
    hop = subprocess.Popen(
        [sys.executable, '-m', 'dodo_sim.tools.cli', 'hop', '--params-file', str(params),
         '--domain-id', str(domain), '--duration', '0.5', '--bag', str(bag), '--no-plots'],
        cwd=REPO, env=env, text=True, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    node = subprocess.Popen([sys.executable, str(script)], cwd=tmp_path,
                            env=dict(env, PYTHONPATH=''), text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    try:
        output, _ = hop.communicate(timeout=600)
    finally:
        for proc in (hop, node):
            if proc.poll() is None:
                os.kill(proc.pid, signal.SIGINT)
                proc.wait(timeout=30)
    assert hop.returncode == 0, output[-4000:]
    assert '[controller]' not in output
    counts = message_counts(bag)
    # the convention's first state is stamped one period (a started clock: docs/ros2_control.md,
    # the lockstep rule 1), so 0.5 s holds the states 0.001 ... 0.500 s, each answered once
    assert counts[contract.ROS2_CONTROL_STATES] == counts[contract.ROS2_CONTROL_COMMANDS] == 500
