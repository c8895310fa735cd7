# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
Bags of real runs over DDS describe themselves (docs/bags.md).

The recorder's parameter snapshots with either executor, and a ``dodo hop`` bag with a params file
other than the default and a set-point changed at run time, from which the run is replayed exactly
and which Foxglove can show (/robot_description + /tf + /tf_static, read with the ``mcap`` reader).
"""
from __future__ import annotations

import signal

from bags_support import hop_cmd, HOP_PARAMS, node_cmd, Procs, recorder_cmd, set_parameter
from conftest import ros_env
from dodo_sim.tools import bag as bagio
from dodo_sim.tools import bag_arrays, bag_parameters, bag_robot
from dodo_sim.tools.replay import main as replay_main
from dodo_sim.tools.replay_check import compare_with_controller
import numpy as np
import pytest
from test_bags_tf import mcap_tf_check

DURATION_S = 6.0
CHANGED_APEX_M = 1.25


def _params_file(path):
    text = HOP_PARAMS.read_text()
    text = text.replace('apex_height: 1.2 ', 'apex_height: 1.1 ')
    text = text.replace('target_x: 1.5 ', 'target_x: 0.8 ')
    assert 'apex_height: 1.1 ' in text and 'target_x: 0.8 ' in text
    path.write_text(text)
    return path


@pytest.fixture
def procs():
    p = Procs()
    yield p
    p.cleanup()


@pytest.mark.ros
@pytest.mark.parametrize('executor', ['events', 'single'])
def test_recorder_snapshot_holds_params_file_and_overrides(tmp_path, procs, executor):
    """
    A node's declaration events are published before the recorder matches them.

    The snapshot holds what the node resolved from its params file and -p overrides.
    """
    env = ros_env()
    params = _params_file(tmp_path / 'other.yaml')
    bag = tmp_path / 'bag'
    rec = procs.start(recorder_cmd(bag, executor=executor, topics=['parameter_events']), env)
    procs.wait_line(rec, 'dodo recorder: ready', 60)
    ctrl = procs.start(node_cmd('dodo_sim.ros.controller_node', 'controller', params,
                                leg_stiffness=6500.0), env)
    procs.wait_line(rec, 'parameters of /controller recorded', 60)
    set_parameter(env, '/controller', 'apex_height', 1.15)
    procs.wait_line(ctrl, 'set-points changed', 30)
    ctrl.send_signal(signal.SIGINT)
    ctrl.wait(timeout=30)
    rec.send_signal(signal.SIGINT)
    assert rec.wait(timeout=60) == 0, procs.output(rec)
    data = bagio.read_bag(bag)
    recorded = bag_parameters.node_parameters(data, 'controller')
    assert recorded.initial['leg_stiffness'] == 6500.0      # -p override
    assert recorded.initial['apex_height'] == 1.1           # params file
    assert recorded.initial['target_x'] == 0.8              # params file
    assert recorded.initial['posture_kp'] == 900.0          # dataclass default
    assert [c.values for c in recorded.changes] == [{'apex_height': 1.15}]
    assert recorded.changes[0].log_time_ns > recorded.declared_log_time_ns


@pytest.fixture(scope='module')
def hop_bag(tmp_path_factory):
    """``dodo hop`` with another params file; apex_height set at run time (ros2 param set)."""
    tmp = tmp_path_factory.mktemp('hop')
    params = _params_file(tmp / 'other.yaml')
    bag = tmp / 'bag'
    env = ros_env()
    procs = Procs()
    try:
        hop = procs.start(hop_cmd(bag, DURATION_S, params), env)
        procs.wait_line(hop, 'simulation starts', 180)
        # a change before the recorder's snapshot of the controller would be its start value
        procs.wait_line(hop, 'parameters of /controller recorded', 60)
        set_parameter(env, '/controller', 'apex_height', CHANGED_APEX_M)
        assert hop.wait(timeout=600) == 0, procs.output(hop)[-4000:]
    finally:
        procs.cleanup()
    return bag, params


@pytest.mark.ros
@pytest.mark.slow
def test_hop_bag_describes_itself(hop_bag):
    bag, params = hop_bag
    types = bagio.topic_types(bag)
    for topic, msgtype in (('parameter_events', 'rcl_interfaces/msg/ParameterEvent'),
                           ('tf', 'tf2_msgs/msg/TFMessage'),
                           ('tf_static', 'tf2_msgs/msg/TFMessage'),
                           ('robot_description', 'std_msgs/msg/String'),
                           ('joint_states', 'sensor_msgs/msg/JointState'),
                           ('joint_commands', 'sensor_msgs/msg/JointState'),
                           ('effort_controller/commands', 'std_msgs/msg/Float64MultiArray'),
                           ('controller/state', 'sensor_msgs/msg/JointState'),
                           ('foot_contact', 'geometry_msgs/msg/WrenchStamped'),
                           ('odom', 'nav_msgs/msg/Odometry')):
        assert types.get(topic) == msgtype, (topic, types)
    data = bagio.read_bag(bag, ['parameter_events', 'robot_description', 'joint_states'])
    controller = bag_parameters.node_parameters(data, 'controller')
    assert controller.initial['apex_height'] == 1.1 and controller.initial['target_x'] == 0.8
    changes = [c for c in controller.changes if 'apex_height' in c.values]
    assert [c.values['apex_height'] for c in changes] == [CHANGED_APEX_M]
    assert 0.0 < changes[0].stamp_ns * 1e-9 < DURATION_S
    simulator = bag_parameters.node_parameters(data, 'simulator')
    assert simulator.initial['contact_frames'] == ('foot',)
    assert simulator.initial['initial_q'] == (0.0, 1.3, 0.3, -0.6)
    robot = bag_robot.robot_info(data)
    assert robot.joint_names == ('base_x', 'base_z', 'hip', 'knee')
    assert robot.actuated_joint_names == ('hip', 'knee') and robot.contact_frames == ('foot',)


@pytest.mark.ros
@pytest.mark.slow
def test_replay_from_the_bag_alone_reproduces_the_run(hop_bag, capsys):
    bag, _ = hop_bag
    result = compare_with_controller(bag)
    assert result.changes_applied == 1, result.summary()
    assert 'recorded' in result.config_source
    assert result.compared >= DURATION_S / 0.001
    assert result.max_abs_nm == 0.0, result.summary()
    # the stamped exchange: commands paired by stamp, the change placed by config_revision
    assert result.source == 'joint_commands', result.summary()
    assert result.unmatched_states == 0, result.summary()
    assert not any('approximate' in w for w in result.warnings), result.warnings
    print('dodo replay:', result.summary())
    assert replay_main([str(bag), '--through-controller']) == 0
    assert 'max |dtau| = 0.000e+00' in capsys.readouterr().out


@pytest.mark.ros
@pytest.mark.slow
def test_hop_bag_tf_opens_in_mcap_like_foxglove(hop_bag):
    bag, _ = hop_bag
    xml = bag_robot.robot_description(bagio.read_bag(bag, ['robot_description']))
    counts = mcap_tf_check(bag, xml, 'foot')
    # one /tf per 10 ms of joint-state stamps (tf_period_s default 0.01)
    assert counts['tf_static'] == 1
    assert abs(counts['tf'] - DURATION_S / 0.01) <= 2, counts
    assert counts['contact_frames'] == 1        # foot -> foot_contact, checked at every stamp


PUBLISH_CONTACTS = """
import sys, time
import rclpy
from geometry_msgs.msg import WrenchStamped
from rclpy.duration import Duration
rclpy.init()
node = rclpy.create_node('walker_contacts')
pubs = [node.create_publisher(WrenchStamped, f'/{frame}_contact', 100)
        for frame in ('left_foot', 'right_foot')]
deadline = time.monotonic() + 60.0
while any(p.get_subscription_count() < 1 for p in pubs):
    if time.monotonic() > deadline:
        sys.exit('no subscriber')
    rclpy.spin_once(node, timeout_sec=0.05)
for k in range(int(sys.argv[1])):
    for i, pub in enumerate(pubs):
        msg = WrenchStamped()
        msg.header.stamp.nanosec = k * 1_000_000
        msg.wrench.force.z = float(100 * i + k)
        pub.publish(msg)
    time.sleep(0.001)
print('acked', all(p.wait_for_all_acked(Duration(seconds=10.0)) for p in pubs), flush=True)
"""


@pytest.mark.ros
def test_contact_topics_of_any_robot_are_recorded(tmp_path, procs):
    """
    The default topic list names the hopper's /foot_contact.

    A biped's /left_foot_contact and /right_foot_contact are recorded all the same (found on the
    graph by their name and type).
    """
    import sys
    env = ros_env()
    bag = tmp_path / 'bag'
    rec = procs.start(recorder_cmd(bag), env)
    procs.wait_line(rec, 'dodo recorder: ready', 60)
    pub = procs.start([sys.executable, '-c', PUBLISH_CONTACTS, '200'], env)
    procs.wait_line(pub, 'acked True', 120)
    rec.send_signal(signal.SIGINT)
    assert rec.wait(timeout=60) == 0, procs.output(rec)
    counts = bagio.message_counts(bag)
    assert counts['left_foot_contact'] == counts['right_foot_contact'] == 200
    data = bagio.read_bag(bag, ['right_foot_contact'])
    _, forces = bag_arrays.wrenches(data['right_foot_contact'])
    np.testing.assert_array_equal(forces[:, 2], 100.0 + np.arange(200))
