# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
The controller node hosting the Kneed Walker (``controller: kneed_walker``).

It runs in-process on a private ROS domain: it declares exactly the walker's parameters, answers
states on /joint_states + /left_foot_contact + /right_foot_contact with the core's torques,
publishes named channels and markers, takes runtime changes through ``reconfigure`` and reports a
fall (channel and one log line) while it keeps answering.
"""
import math

from conftest import REPO
import numpy as np
import pytest
from ros_support import in_process_ros

rclpy = pytest.importorskip('rclpy')

# These imports must follow the importorskip above (E402), so they cannot take their
# place in the sorted import block (I100).
from dodo_control import registry  # noqa: E402, I100
from dodo_control.walker.controller import WalkerConfig, WalkerController  # noqa: E402
from dodo_control.walker.outcome import FALL_REASONS  # noqa: E402
from dodo_sim.model import robot_description_xml  # noqa: E402
from dodo_sim.ros import contract, graph, node_config  # noqa: E402
from dodo_sim.ros.params import config_from_file  # noqa: E402
from dodo_sim.simulator import SimConfig  # noqa: E402
from geometry_msgs.msg import WrenchStamped  # noqa: E402
from rclpy.parameter import Parameter  # noqa: E402
from sensor_msgs.msg import JointState  # noqa: E402
from visualization_msgs.msg import MarkerArray  # noqa: E402

pytestmark = pytest.mark.ros

WALKER_URDF = REPO / 'urdf' / 'kneed_walker.urdf.xacro'
WALK_YAML = REPO / 'config' / 'walk.yaml'
JOINTS = list(WalkerConfig().joint_names)


@pytest.fixture
def ros(monkeypatch):
    monkeypatch.setenv('ROS_AUTOMATIC_DISCOVERY_RANGE', 'LOCALHOST')
    with in_process_ros() as ros:
        yield ros


def walker_node(ros, **overrides):
    from dodo_sim.ros.controller_node import ControllerNode

    # state_period 0: one /controller/state per answered state (the Driver checks each)
    params = {'controller': 'kneed_walker', 'min_subscribers': 0, 'state_period': 0.0,
              'robot_description': robot_description_xml(WALKER_URDF), **overrides}
    return ros.add(ControllerNode(context=ros.context, parameter_overrides=[
        Parameter(k, value=v) for k, v in params.items()]))


class Driver:
    """
    A test node standing in for the simulator: publishes stamped states and both feet's forces.

    It also records the commands, controller state and markers.
    """

    def __init__(self, ros):
        self.ros = ros
        node = self.node = ros.add(rclpy.create_node('driver', context=ros.context))
        self.commands, self.states, self.markers = [], [], []
        node.create_subscription(JointState, contract.JOINT_COMMANDS, self.commands.append, 1000)
        node.create_subscription(JointState, contract.CONTROLLER_STATE, self.states.append, 1000)
        node.create_subscription(MarkerArray, contract.CONTROLLER_MARKERS, self.markers.append,
                                 100)
        self.joints = node.create_publisher(JointState, contract.JOINT_STATES, 100)
        self.feet = [node.create_publisher(WrenchStamped, contract.contact_topic(f), 100)
                     for f in ('left_foot', 'right_foot')]
        assert ros.spin_until(lambda: self.joints.get_subscription_count() >= 1
                              and all(f.get_subscription_count() >= 1 for f in self.feet), 20.0)

    def send(self, k, q, v, forces):
        stamp = rclpy.time.Time(nanoseconds=k * 1_000_000).to_msg()
        for pub, force in zip(self.feet, forces):
            msg = WrenchStamped()
            msg.header.stamp = stamp
            msg.wrench.force.x, msg.wrench.force.y, msg.wrench.force.z = (float(x) for x in force)
            pub.publish(msg)
        msg = JointState(name=JOINTS, position=[float(x) for x in q],
                         velocity=[float(x) for x in v], effort=[0.0] * len(JOINTS))
        msg.header.stamp = stamp
        n = len(self.commands)
        self.joints.publish(msg)
        assert self.ros.spin_until(lambda: len(self.commands) == n + 1
                                   and len(self.states) == n + 1, 10.0), k
        return self.commands[-1], self.states[-1]


def walk_start():
    sim = config_from_file(SimConfig, WALK_YAML, 'simulator')
    return np.array(sim.initial_q), np.array(sim.initial_v)


def test_node_declares_exactly_the_walker_parameters(ros):
    node = walker_node(ros)
    declared = set(node._parameters) - {'use_sim_time', 'start_type_description_service'}
    assert declared == graph.known_parameters('kneed_walker')['controller']
    assert 'apex_height' not in declared and 'step_frequency_hz' in declared
    assert node.get_parameter('controller').value == 'kneed_walker'


def test_node_answers_with_the_walker_core_and_names_its_channels(ros):
    node = walker_node(ros)
    driver = Driver(ros)
    reference = WalkerController(WalkerConfig())
    q, v = walk_start()
    weight = 6.2 * 9.81
    forces = [(0.0, 0.0, weight), (0.0, 0.0, 0.0)]
    for k in range(5):
        command, state = driver.send(k, q, v, forces)
        expected = reference.update(k * 1e-3, q, v, np.array(forces))
        assert list(command.name) == ['left_hip', 'left_knee', 'right_hip', 'right_knee']
        np.testing.assert_array_equal(command.effort, expected)
        q = q + 1e-3 * v
    names = list(state.name)
    values = dict(zip(names, state.position))
    for channel in ('phase', 'step_count', 'torso_pitch_rad', 'foot_loaded_left_foot',
                    'foot_loaded_right_foot', 'role_torque_nm_stance_hip', 'pulses_on_swing_hip_1',
                    'stance_frame', 'fallen', 'fall_reason', 'steps', 'distance_m', 'speed_m_s'):
        assert channel in names, channel
    assert names[-5:] == ['tau_left_hip', 'tau_left_knee', 'tau_right_hip', 'tau_right_knee',
                          'config_revision']
    assert values['stance_frame'] == 0.0 and values['foot_loaded_left_foot'] == 1.0
    assert values['foot_loaded_right_foot'] == 0.0
    assert values['fallen'] == 0.0 and values['fall_reason'] == -1.0
    assert 'tau' not in names and 'tau_x' not in names
    np.testing.assert_array_equal([values[f'tau_{j}'] for j in command.name], command.effort)
    assert node.updates == 5


def test_model_markers_show_the_com_and_the_stance_foot(ros):
    walker_node(ros, marker_period=0.0)
    driver = Driver(ros)
    q, v = walk_start()
    driver.send(0, q, v, [(0.0, 0.0, 60.0), (0.0, 0.0, 0.0)])
    assert ros.spin_until(lambda: driver.markers, 10.0)
    markers = {m.ns: m for m in driver.markers[-1].markers}
    assert {'com', 'cog_path', 'stance_foot', 'grf'} <= set(markers)
    from dodo_sim.simulator import Simulator
    sim = Simulator(WALKER_URDF, SimConfig(contact_frames=('left_foot', 'right_foot')))
    left = sim.contact_positions(q)[0]
    foot = markers['stance_foot'].pose.position
    np.testing.assert_allclose([foot.x, foot.y, foot.z], left, atol=1e-12)


def test_runtime_changes_go_through_reconfigure_and_names_are_fixed(ros):
    node = walker_node(ros)
    Driver(ros)
    pulses = [0.0] * 8
    ok = node.set_parameters([Parameter('pulse_amplitude_nm', value=pulses)])[0]
    assert ok.successful and node.ctrl.config.pulse_amplitude_nm == tuple(pulses)
    bad = node.set_parameters([Parameter('step_frequency_hz', value=50.0)])[0]
    assert not bad.successful and 'step_frequency_hz' in bad.reason
    assert node.ctrl.config.step_frequency_hz == WalkerConfig().step_frequency_hz
    fixed = node.set_parameters([Parameter('joint_names', value=['a'])])[0]
    assert not fixed.successful
    monitor = node.set_parameters([Parameter('min_hip_height_m', value=0.1)])[0]
    assert not monitor.successful               # the fall criteria are fixed while running
    assert node.config_revision == 1


def test_a_fall_is_a_channel_and_one_log_line_and_the_node_keeps_answering(ros, caplog):
    node = walker_node(ros)
    driver = Driver(ros)
    q, v = walk_start()
    forces = [(0.0, 0.0, 60.0), (0.0, 0.0, 0.0)]
    _, state = driver.send(0, q, v, forces)
    assert dict(zip(state.name, state.position))['fallen'] == 0.0
    tipped = q.copy()
    tipped[2] = 1.2                                    # torso pitched beyond 0.8 rad
    messages = []
    original = node.get_logger().warning
    node.get_logger().warning = lambda text, **kw: messages.append(text) or original(text)
    for k in (1, 2, 3):
        command, state = driver.send(k, tipped, v, forces)
        assert np.isfinite(command.effort).all()
    values = dict(zip(state.name, state.position))
    assert values['fallen'] == 1.0
    assert values['fall_reason'] == FALL_REASONS.index('torso_pitch')
    falls = [m for m in messages if 'the robot fell' in m]
    assert len(falls) == 1 and 'torso_pitch at t = 0.001 s' in falls[0], messages
    summary = node.summary()
    assert summary['fall_reason'] == 'torso_pitch' and summary['fall_time_s'] == 0.001
    assert node.updates == 4


def test_monitor_judges_the_terrain_it_is_given(ros):
    """
    The monitor judges the terrain it is given.

    On a slope falling 3 deg in +x, a walker 10 m down the slope with its hip 0.45 m above z = 0
    (0.97 m above the ground there) is upright; on flat ground it has fallen.
    """
    q, v = walk_start()
    q[0], q[1] = 10.0, 0.45
    states = {}
    for terrain in ('flat', 'slope'):
        node = walker_node(ros, terrain=terrain, slope_deg=-3.0 if terrain == 'slope' else 0.0)
        node.monitor.update(0.0, q, np.zeros((2, 3)))
        states[terrain] = node.monitor.fall_reason
        ros.executor.remove_node(node)
    assert states == {'flat': 'hip_height', 'slope': None}
    assert registry.controller_entry('kneed_walker').monitor


def test_hopper_node_is_unchanged_by_the_registry(ros, urdf_xml):
    from dodo_control.slip.config import ControllerConfig
    from dodo_control.slip.outcome import HopMonitor
    from dodo_sim.ros.controller_node import ControllerNode
    node = ros.add(ControllerNode(context=ros.context, parameter_overrides=[
        Parameter('robot_description', value=urdf_xml)]))
    declared = set(node._parameters) - {'use_sim_time', 'start_type_description_service'}
    assert declared == graph.known_parameters('slip_hopper')['controller']
    # the hop judge (docs/control.md, "Outcome") is the SLIP controller's outcome monitor
    assert isinstance(node.monitor, HopMonitor) and isinstance(node.config, ControllerConfig)
    assert node.node_config == node_config.ControllerNodeConfig(robot_description=urdf_xml)
    assert not math.isnan(node._weight)
