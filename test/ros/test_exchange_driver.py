# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
The controller against a hardware-driver-like source (``use_sim:=false``).

Joint states and the foot force are stamped by their own wall clocks (never equal); there is no
simulator and no /clock.

Default ``contact_pairing: auto`` notices within three states that the stamps never match and
answers every state with the newest foot force; ``contact_pairing: stamp`` (and a driver that
never publishes the foot force) makes the controller say, within about a second, exactly what it
waits for.
"""
import time

import numpy as np
import pytest

pytest.importorskip('rclpy')

# These imports must follow the importorskip above (E402), so they cannot take their
# place in the sorted import block (I100).
from conftest import ros_domain_id  # noqa: E402, I100
from dodo_control.controller import Controller, ControllerConfig  # noqa: E402
from dodo_sim.paths import default_urdf_path  # noqa: E402
from dodo_sim.ros import contract  # noqa: E402
from dodo_sim.simulator import Simulator  # noqa: E402
from geometry_msgs.msg import WrenchStamped  # noqa: E402
import rclpy  # noqa: E402
from rclpy.parameter import Parameter  # noqa: E402
from sensor_msgs.msg import JointState  # noqa: E402

pytestmark = pytest.mark.ros

Q = [0.0, 1.3, 0.3, -0.6]
V = [0.0, -0.2, 0.0, 0.0]
FOOT_FORCE = (0.0, 0.0, 0.0)
CONTACT_LAG_NS = 370_000          # the force sensor's clock runs 0.37 ms behind the encoders'


class DriverGraph:
    """The controller node and a driver stand-in publishing at 200 Hz, in one process."""

    def __init__(self, monkeypatch, contact=True, **controller_parameters):
        monkeypatch.setenv('ROS_AUTOMATIC_DISCOVERY_RANGE', 'LOCALHOST')
        self.context = rclpy.Context()
        rclpy.init(context=self.context, domain_id=ros_domain_id())
        from dodo_sim.ros.controller_node import ControllerNode
        from rclpy.experimental import EventsExecutor
        self.executor = EventsExecutor(context=self.context)
        urdf = Simulator(default_urdf_path()).leg.urdf_xml
        parameters = {'robot_description': urdf, 'min_subscribers': 1, 'discovery_settle': 0.0}
        parameters.update(controller_parameters)
        self.started = time.monotonic()
        self.controller = ControllerNode(context=self.context, parameter_overrides=[
            Parameter(k, value=v) for k, v in parameters.items()])
        self.driver = rclpy.create_node('driver', context=self.context)
        self.joints = self.driver.create_publisher(JointState, contract.JOINT_STATES, 10)
        self.foot = self.driver.create_publisher(WrenchStamped, contract.FOOT_CONTACT, 10)
        self.published = []
        self.commands = []
        self.driver.create_subscription(JointState, contract.JOINT_COMMANDS,
                                        self.commands.append, 100)
        self.contact = contact
        self.driver.create_timer(0.005, self._publish)
        for node in (self.controller, self.driver):
            self.executor.add_node(node)

    def _publish(self):
        now = time.time_ns()                     # the driver's own clock, not sim time
        if self.contact:
            wrench = WrenchStamped()
            wrench.header.stamp = rclpy.time.Time(nanoseconds=now - CONTACT_LAG_NS).to_msg()
            wrench.wrench.force.x, wrench.wrench.force.y, wrench.wrench.force.z = FOOT_FORCE
            self.foot.publish(wrench)
        msg = JointState(name=['base_x', 'base_z', 'hip', 'knee'], position=Q, velocity=V,
                         effort=[0.0] * 4)
        msg.header.stamp = rclpy.time.Time(nanoseconds=now).to_msg()
        self.published.append(now)
        self.joints.publish(msg)

    def spin_until(self, condition, timeout_s):
        deadline = time.monotonic() + timeout_s
        while not condition():
            if time.monotonic() > deadline:
                return False
            self.executor.spin_once(timeout_sec=0.005)
        return True

    def close(self):
        self.controller.destroy_node()
        self.driver.destroy_node()
        rclpy.try_shutdown(context=self.context)


@pytest.fixture
def driver_graph(monkeypatch):
    graphs = []

    def make(**kwargs):
        graphs.append(DriverGraph(monkeypatch, **kwargs))
        return graphs[-1]

    yield make
    for graph in graphs:
        graph.close()


def test_controller_answers_a_driver_whose_sensors_have_their_own_clocks(driver_graph, capfd):
    graph = driver_graph()
    assert graph.spin_until(lambda: len(graph.commands) >= 50, 20.0), capfd.readouterr().err
    # answers the driver's states (their stamps), from the third one on, with the newest force
    published = set(graph.published)
    stamps = [c.header.stamp.sec * 1_000_000_000 + c.header.stamp.nanosec
              for c in graph.commands]
    assert set(stamps) <= published and stamps == sorted(stamps)
    assert graph.controller.summary()['contact_pairing'] == 'latest'
    log = LogWatch(capfd)
    assert log.contains('carry other stamps than joint_states'), log.text[-2000:]
    # the torque is the core's for the driver's state and force
    reference = Controller(default_urdf_path(), ControllerConfig())
    expected = reference.update(stamps[0] * 1e-9, np.array(Q), np.array(V),
                                np.array((FOOT_FORCE[0], FOOT_FORCE[2])))
    np.testing.assert_allclose(list(graph.commands[0].effort), expected, rtol=0, atol=1e-9)


class LogWatch:
    """What the nodes of this process logged so far (rclpy logs to stderr)."""

    def __init__(self, capfd):
        self._capfd = capfd
        self.text = ''

    def contains(self, words: str) -> bool:
        self.text += self._capfd.readouterr().err
        return words in self.text


def test_stamp_pairing_with_an_own_clock_driver_says_what_it_waits_for(driver_graph, capfd):
    graph = driver_graph(contact_pairing='stamp')
    log = LogWatch(capfd)
    assert graph.spin_until(lambda: len(graph.published) >= 10, 20.0)
    first_state = time.monotonic()
    assert graph.spin_until(lambda: log.contains('waiting for contact messages stamped'), 3.0)
    assert time.monotonic() - first_state < 1.5, log.text[-2000:]
    assert graph.commands == []
    key, reason = graph.controller.waiting_for()
    assert key == 'contact' and 'foot_contact' in reason and 'contact_pairing = stamp' in reason


def test_a_driver_without_the_foot_sensor_is_named_within_a_second(driver_graph, capfd):
    graph = driver_graph(contact=False)
    log = LogWatch(capfd)
    assert graph.spin_until(lambda: len(graph.published) >= 10, 20.0)
    first_state = time.monotonic()
    assert graph.spin_until(lambda: log.contains('foot_contact: nothing received'), 3.0)
    assert time.monotonic() - first_state < 1.5, log.text[-2000:]
    assert graph.commands == []
