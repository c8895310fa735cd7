# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
The recorder beside foreign nodes, over real DDS (issue 28).

* Only the command consumer is believed: a stray node that publishes a forged announcement on
  ``/simulator/controller`` (its own commands as "applied", ``kind: external``) is counted,
  named and left out of the bag; the announcement of the node named ``simulator`` decides.
* A foreign node without parameter services (an external controller built with
  ``start_parameter_services=False``) is listed on ``/recorder/configurations`` after a few
  discovery periods, with an empty snapshot in the bag, so the simulator's start gate does not
  wait for its configuration in vain.

The recorder runs as a process; the foreign nodes are this test's rclpy nodes on its domain.
"""
import json
import signal
import subprocess
import sys
import threading
import time

from conftest import REPO, ros_env
from dodo_sim.ros import contract
import pytest

pytestmark = pytest.mark.ros


class Graph:
    """This test's nodes on a private domain, spun in a thread."""

    def __init__(self, domain: int):
        import rclpy
        from rclpy.executors import SingleThreadedExecutor
        self.rclpy = rclpy
        self.context = rclpy.Context()
        rclpy.init(context=self.context, domain_id=domain)
        self.executor = SingleThreadedExecutor(context=self.context)
        self.nodes = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._spin, daemon=True)
        self._thread.start()

    def node(self, name: str, **kwargs):
        node = self.rclpy.create_node(name, context=self.context, **kwargs)
        self.nodes.append(node)
        self.executor.add_node(node)
        return node

    def _spin(self):
        while not self._stop.is_set() and self.context.ok():
            self.executor.spin_once(timeout_sec=0.02)

    def close(self):
        self._stop.set()
        self._thread.join(timeout=5)
        for node in self.nodes:
            node.destroy_node()
        self.rclpy.try_shutdown(context=self.context)


def until(condition, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while not condition() and time.monotonic() < deadline:
        time.sleep(0.05)
    return condition()


@pytest.fixture
def recorder(tmp_path):
    """Start a recorder of the commands and the announcement; yield (process, bag, domain)."""
    env = ros_env()
    bag = tmp_path / 'bag'
    topics = [contract.JOINT_COMMANDS, contract.APPLIED_CONTROLLER, contract.PARAMETER_EVENTS]
    proc = subprocess.Popen(
        [sys.executable, '-m', 'dodo_sim.ros.recorder', '--ros-args', '-p', f'bag:={bag}',
         '-p', 'topics:=[' + ', '.join(f"'{t}'" for t in topics) + ']'],
        env=env, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    lines = []
    reader = threading.Thread(target=lambda: lines.extend(proc.stdout), daemon=True)
    reader.start()
    try:
        assert until(lambda: any(line.startswith('dodo recorder: ready') for line in lines),
                     60.0), lines
        yield proc, bag, int(env['ROS_DOMAIN_ID']), lines
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=10)


def stop(proc, lines):
    proc.send_signal(signal.SIGINT)
    assert proc.wait(timeout=30) == 0, ''.join(lines)
    time.sleep(0.2)
    return ''.join(lines)


def command(stamp_ns: int):
    from sensor_msgs.msg import JointState
    msg = JointState(name=['hip', 'knee'], effort=[1.0, 2.0])
    msg.header.stamp.sec, msg.header.stamp.nanosec = divmod(stamp_ns, 1_000_000_000)
    return msg


def test_a_strays_forged_announcement_is_ignored_and_the_simulators_decides(recorder):
    from dodo_sim.ros.runtime import endpoint_gid, endpoint_node
    from dodo_sim.tools.bag import message_counts, read_bag
    from sensor_msgs.msg import JointState
    from std_msgs.msg import String
    proc, bag, domain, lines = recorder
    graph = Graph(domain)
    try:
        controller, stray, simulator = (graph.node(n) for n in ('my_ctrl', 'stray', 'simulator'))
        commands = {n: n.create_publisher(JointState, contract.JOINT_COMMANDS,
                                          contract.stream_qos()) for n in (controller, stray)}
        announcers = {n: n.create_publisher(String, contract.APPLIED_CONTROLLER,
                                            contract.latched_qos()) for n in (stray, simulator)}

        def gids():
            return {endpoint_node(e): endpoint_gid(e).hex() for e in
                    simulator.get_publishers_info_by_topic(contract.JOINT_COMMANDS)}
        assert until(lambda: len(gids()) == 2 and commands[controller].get_subscription_count()
                     and announcers[simulator].get_subscription_count()
                     and announcers[stray].get_subscription_count(), 30.0), gids()
        # the stray claims its own commands are the applied ones, and that they are external
        announcers[stray].publish(String(data=json.dumps(
            {'node': '/stray', 'gid': gids()['/stray'], 'since_ns': 0, 'kind': 'external'})))
        time.sleep(0.5)
        announcers[simulator].publish(String(data=json.dumps(
            {'node': '/my_ctrl', 'gid': gids()['/my_ctrl'], 'since_ns': 0, 'kind': 'external'})))
        commands[stray].publish(command(0))
        commands[controller].publish(command(0))
        time.sleep(1.0)
    finally:
        graph.close()
    output = stop(proc, lines)
    assert f'ignored 1 announcement(s) on {contract.APPLIED_CONTROLLER} from /stray' in output
    counts = message_counts(bag)
    assert counts[contract.APPLIED_CONTROLLER] == 1, counts           # the simulator's only
    assert counts[contract.JOINT_COMMANDS] == 1 and counts[contract.IGNORED_COMMANDS] == 1
    announced = read_bag(bag, [contract.APPLIED_CONTROLLER])[contract.APPLIED_CONTROLLER]
    assert json.loads(announced.messages[0].data)['node'] == '/my_ctrl'


def test_a_node_without_parameter_services_is_listed_as_recorded(recorder):
    from std_msgs.msg import String
    proc, bag, domain, lines = recorder
    graph = Graph(domain)
    listed = []
    try:
        graph.node('bare_ctrl', start_parameter_services=False)
        probe = graph.node('probe')
        probe.create_subscription(String, contract.RECORDED_CONFIGURATIONS,
                                  lambda msg: listed.append(json.loads(msg.data)),
                                  contract.latched_qos())
        assert until(lambda: listed and '/bare_ctrl' in listed[-1], 20.0), (listed, lines)
        assert '/probe' in listed[-1]                      # an rclpy node answers as before
    finally:
        graph.close()
    output = stop(proc, lines)
    assert '/bare_ctrl offers no parameter services' in output
