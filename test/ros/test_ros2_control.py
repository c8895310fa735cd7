# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
ros2_control's topic-based system drives the simulator (docs/ros2_control.md).

No controller_manager is installable here (C++ ROS packages), so the test stands in for it with a
node that sends exactly what ``joint_state_topic_hardware_interface/JointStateTopicSystem``
sends (ros-controls/topic_based_hardware_interfaces @ d115f23,
joint_state_topic_hardware_interface/src/joint_state_topic_hardware_interface.cpp):

* ``on_init``: commands published with ``rclcpp::QoS(1)`` on ``joint_commands_topic``, states
  read with ``rclcpp::SensorDataQoS()`` from ``joint_states_topic``;
* ``write()``: ``name`` = every joint of the <ros2_control> block (hopper: base_x, base_z, hip,
  knee), ``effort`` = one value per effort command interface (hip, knee), ``position`` and
  ``velocity`` empty, ``header.stamp = get_node()->now()`` (sim time: use_sim_time);
* here the writer runs on the wall clock at 1 kHz, whether or not a new state came in
  (``trigger_joint_command_threshold: -1``: every update publishes, as the shipped xacro
  configures it): realtime mode holds the newest command whatever the writer's loop.

The command effort encodes the controller_manager's clock (hip = k * t, knee = -k * t), so the
state after each step tells which command was applied to it. Lockstep with the loop a
controller_manager really runs on sim time (one write per period of /clock):
test/ros/test_ros2_control_lockstep.py.
"""
from __future__ import annotations

import math
import os
import time

import pytest

pytest.importorskip('rclpy')

# These imports must follow the importorskip above (E402), so they cannot take their
# place in the sorted import block (I100).
from conftest import ros_domain_id  # noqa: E402, I100
from dodo_sim.ros import contract  # noqa: E402
import rclpy  # noqa: E402
from rclpy.parameter import Parameter  # noqa: E402

pytestmark = [pytest.mark.ros]

#: The joints of the hopper's <ros2_control> block, in its order (urdf/hopper.urdf.xacro).
ROS2_CONTROL_JOINTS = ('base_x', 'base_z', 'hip', 'knee')
EFFORT_JOINTS = ('hip', 'knee')
#: N*m per simulated s: command effort = (K * t, -K * t), t the controller_manager's now()
K = 0.5


def effort_of(t_s: float) -> tuple:
    return (K * t_s, -K * t_s)


class TopicBasedSystem:
    """The controller_manager side: read the newest state, write a command, every 1 ms (wall)."""

    def __init__(self, context):
        from rclpy.clock import Clock, ClockType
        from rclpy.qos import qos_profile_sensor_data, QoSProfile, ReliabilityPolicy
        from sensor_msgs.msg import JointState
        self.JointState = JointState
        self.node = rclpy.create_node('controller_manager', context=context,
                                      parameter_overrides=[Parameter('use_sim_time', value=True)])
        self.pub = self.node.create_publisher(
            JointState, contract.ROS2_CONTROL_COMMANDS,
            QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE))
        self.states = []
        self.node.create_subscription(JointState, contract.ROS2_CONTROL_STATES,
                                      self.states.append, qos_profile_sensor_data)
        self.sent = 0
        self.node.create_timer(0.001, self.update, clock=Clock(clock_type=ClockType.STEADY_TIME))

    def update(self):
        now = self.node.get_clock().now()
        if not self.states:
            return
        msg = self.JointState()
        for name in ROS2_CONTROL_JOINTS:          # JointStateTopicSystem::write()
            msg.name.append(name)
            msg.header.stamp = now.to_msg()
            if name in EFFORT_JOINTS:
                msg.effort.append(effort_of(now.nanoseconds * 1e-9)[EFFORT_JOINTS.index(name)])
        self.pub.publish(msg)
        self.sent += 1


class Graph:

    def __init__(self, mode: str, stop_after: float):
        self.context = rclpy.Context()
        rclpy.init(context=self.context, domain_id=ros_domain_id(),
                   args=['--ros-args', '-p', 'use_sim_time:=true'])
        os.environ.setdefault('ROS_AUTOMATIC_DISCOVERY_RANGE', 'LOCALHOST')
        from dodo_sim.ros.simulator_node import SimulatorNode
        from rclpy.experimental import EventsExecutor
        self.sim = SimulatorNode(context=self.context, parameter_overrides=[
            Parameter('mode', value=mode), Parameter('command_convention', value='ros2_control'),
            Parameter('stop_after', value=stop_after), Parameter('min_subscribers', value=0),
            Parameter('initial_q', value=[0.0, 1.3, 0.3, -0.6]),
            Parameter('command_timeout', value=2.0)])
        self.cm = TopicBasedSystem(self.context)
        self.executor = EventsExecutor(context=self.context)
        self.executor.add_node(self.sim)
        self.executor.add_node(self.cm.node)

    def run(self, timeout_s: float):
        deadline = time.monotonic() + timeout_s
        while not self.sim.done.done():
            assert time.monotonic() < deadline, f'run did not finish: {self.sim.steps} steps'
            self.executor.spin_once(timeout_sec=0.005)

    def close(self):
        self.cm.node.destroy_node()
        self.sim.destroy_node()
        rclpy.try_shutdown(context=self.context)


def _stamp_s(msg) -> float:
    return msg.header.stamp.sec + msg.header.stamp.nanosec * 1e-9


def test_realtime_holds_the_newest_command():
    graph = Graph('realtime', stop_after=0.5)
    try:
        graph.run(60.0)
        sim, states = graph.sim, graph.cm.states
        assert sim.exchange.counts.rejected == 0 and sim.steps >= 450
        names = list(states[0].name)
        hip, knee = names.index('hip'), names.index('knee')
        applied = [(s.effort[hip], s.effort[knee]) for s in states]
        commanded = [a for a in applied if a != (0.0, 0.0)]
        # torques come from the commands (hip = -knee = K * t of a recent stamp)
        assert len(commanded) >= 0.8 * len(applied), (len(commanded), len(applied))
        for (tau_hip, tau_knee), state in zip(applied, states):
            if (tau_hip, tau_knee) == (0.0, 0.0):
                continue
            assert tau_hip == pytest.approx(-tau_knee, abs=1e-12)
            # computed from a clock at most 50 ms behind the state
            assert _stamp_s(state) - 0.05 <= tau_hip / K <= _stamp_s(state) + 1e-9
    finally:
        graph.close()


@pytest.mark.parametrize('names, effort, position, why', [
    (('base_x', 'base_z', 'hip'), (1.0,), (), 'knee missing'),
    (('base_x', 'base_z', 'hip', 'knee'), (1.0, 2.0, 3.0), (), 'an effort too many'),
    (('base_x', 'ankle', 'hip', 'knee'), (1.0, 2.0), (), 'unknown joint'),
    (('hip', 'knee'), (), (0.1, 0.2), 'position command interfaces'),
    (('base_x', 'base_z', 'hip', 'knee'), (math.nan, 0.0), (), 'non-finite'),
])
def test_malformed_topic_based_commands_are_rejected(names, effort, position, why):
    from dodo_sim.ros.ros2_control import topic_based_efforts
    from rclpy.serialization import serialize_message
    from sensor_msgs.msg import JointState
    context = rclpy.Context()
    rclpy.init(context=context, domain_id=ros_domain_id())
    from dodo_sim.ros.simulator_node import SimulatorNode
    sim = SimulatorNode(context=context, parameter_overrides=[
        Parameter('command_convention', value='ros2_control')])
    try:
        info = {'publisher_gid': {'data': b'\x01' * 16}}
        msg = JointState(name=list(names), effort=list(effort), position=list(position))
        sim._on_joint_command(serialize_message(msg), info)       # as the subscription does
        assert sim.exchange.counts.rejected == 1, why
        good = JointState(name=['knee', 'base_x', 'base_z', 'hip'], effort=[-2.0, 1.0])
        sim._on_joint_command(serialize_message(good), info)
        assert sim.exchange.counts.rejected == 1       # valid: before the first state, early
        assert sim.exchange.counts.early == 1
        # efforts follow the order the actuated joints are named in (knee first here); the
        # result is in actuated-joint order (hip, knee)
        assert topic_based_efforts(good.name, good.effort, (), (), sim.joint_names,
                                   list(sim.sim.actuated_joint_names)) == ((1.0, -2.0), '')
    finally:
        sim.destroy_node()
        rclpy.try_shutdown(context=context)


#: The controller_manager side against the hardware driver, as its own process: the plugin's
#: message every 1 ms of wall time (the driver runs on wall time: now() is wall time).
CM_FOR_DRIVER = """
import sys
import rclpy
from rclpy.qos import QoSProfile, ReliabilityPolicy
from sensor_msgs.msg import JointState
from dodo_sim.ros import contract
tau = {'hip': float(sys.argv[1]), 'knee': float(sys.argv[2])}
rclpy.init()
node = rclpy.create_node('controller_manager')
pub = node.create_publisher(JointState, contract.ROS2_CONTROL_COMMANDS,
                            QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE))

def update():
    msg = JointState()
    for name in ('base_x', 'base_z', 'hip', 'knee'):
        msg.name.append(name)
        msg.header.stamp = node.get_clock().now().to_msg()
        if name in tau:
            msg.effort.append(tau[name])
    pub.publish(msg)

node.create_timer(0.001, update)
rclpy.spin(node)
"""


def test_hardware_driver_applies_topic_based_commands(graph, tmp_path):
    """
    Check the emulated hardware measures the commanded torques.

    The emulated hardware (the CAN protocol answered by the physics) measures the torques the
    topic-based system commands, once enabled.
    """
    import signal
    import subprocess
    import sys

    from conftest import ros_env
    from driver_support import commands_flow, TORQUE, torque_applied
    probe, start_driver, _, log = graph
    script = tmp_path / 'cm.py'
    script.write_text(CM_FOR_DRIVER)
    env = ros_env(probe.context.get_domain_id())       # the driver's domain
    start_driver()
    cm = subprocess.Popen([sys.executable, str(script), str(TORQUE[0]), str(TORQUE[1])],
                          env=env)
    try:
        probe.spin_until(lambda: commands_flow(probe), 60.0, 'commands from the plugin', log)
        response, _ = probe.call('enable')
        assert response.success, response.message
        probe.spin_until(lambda: torque_applied(probe), 60.0, 'the commanded torques', log)
        assert 'rejected' not in log.read_text()
    finally:
        cm.send_signal(signal.SIGINT)
        try:
            cm.wait(timeout=10)
        except subprocess.TimeoutExpired:
            cm.kill()
            cm.wait()


@pytest.mark.parametrize('plugin, published', [('mock', False), ('topic_based', True)])
def test_the_simulator_publishes_only_a_topic_based_robot_description(plugin, published):
    """
    No race with robot_state_publisher's URDF: a controller_manager keeps the first one.

    Under command_convention: ros2_control the simulator's default URDF (the mock plugin) is
    not published; a URDF with the topic-based system is (it commands this simulator).
    """
    import xacro
    from conftest import REPO
    urdf = xacro.process_file(str(REPO / 'urdf' / 'hopper.urdf.xacro'),
                              mappings={'hardware_plugin': plugin}).toxml()
    context = rclpy.Context()
    rclpy.init(context=context, domain_id=ros_domain_id())
    from dodo_sim.ros.simulator_node import SimulatorNode
    sim = SimulatorNode(context=context, parameter_overrides=[
        Parameter('command_convention', value='ros2_control'),
        Parameter('robot_description', value=urdf)])
    try:
        own = [e for e in sim.get_publishers_info_by_topic('/' + contract.ROBOT_DESCRIPTION)
               if e.node_name == 'simulator']
        assert bool(own) is published
    finally:
        sim.destroy_node()
        rclpy.try_shutdown(context=context)
