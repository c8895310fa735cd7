# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
The lean transport loop (dodo_sim/ros/lean_loop.py) keeps what the executor did.

Raw subscriptions, timers, guard conditions, the parameter services ``ros2 param`` uses, the
node's own services and clients, and the end of the spin on SIGINT/SIGTERM or a stop from another
thread; a node spun by ``runtime.run_node`` with the loop in place of the executor. Over real DDS
(own domain per test, localhost discovery); the parameter services are asked by rclpy's own
``AsyncParameterClient`` as ros2cli does, spun by rclpy's SingleThreadedExecutor.
"""
from __future__ import annotations

import signal
import subprocess
import sys
import threading
import time

from conftest import REPO, ros_domain_id, ros_env
import pytest

pytestmark = pytest.mark.ros

#: deadlines (not sleeps): what a loaded 2-core machine needs at most
DEADLINE_S = 10.0


@pytest.fixture
def context(monkeypatch):
    """Give an rclpy context of its own in a private domain, shut down after the test."""
    import rclpy
    monkeypatch.setenv('ROS_AUTOMATIC_DISCOVERY_RANGE', 'LOCALHOST')
    ctx = rclpy.Context()
    rclpy.init(args=[], context=ctx, domain_id=ros_domain_id())
    yield ctx
    rclpy.try_shutdown(context=ctx)


def _node(context, name):
    from rclpy.node import Node
    return Node(name, context=context)


def _loop(context, *nodes):
    from dodo_sim.ros.lean_loop import LeanLoop
    loop = LeanLoop(context=context)
    for node in nodes:
        loop.add_node(node)
    return loop


def test_a_raw_subscription_callback_receives_the_published_bytes(context):
    from rclpy.serialization import serialize_message
    from rclpy.task import Future
    from sensor_msgs.msg import JointState
    node = _node(context, 'lean_raw')
    data = serialize_message(JointState(name=['hip', 'knee'], effort=[1.5, -2.0]))
    got = Future()
    node.create_subscription(JointState, 'lean_raw', lambda msg: got.done() or got.set_result(msg),
                             10, raw=True)
    pub = node.create_publisher(JointState, 'lean_raw', 10)
    timer = node.create_timer(0.05, lambda: pub.publish(data))     # until it is matched
    loop = _loop(context, node)
    loop.spin_until_future_complete(got, DEADLINE_S)
    timer.cancel()
    assert got.done()
    assert bytes(got.result()) == data


def test_a_callback_taking_message_info_gets_the_publisher_id(context):
    from dodo_sim.ros.runtime import publisher_gid, with_message_info
    from rclpy.task import Future
    from std_msgs.msg import String
    node = _node(context, 'lean_info')
    got = Future()
    node.create_subscription(
        String, 'lean_info',
        with_message_info(lambda msg, info: got.done() or got.set_result((msg, info))), 10)
    pub = node.create_publisher(String, 'lean_info', 10)
    timer = node.create_timer(0.05, lambda: pub.publish(String(data='hi')))
    _loop(context, node).spin_until_future_complete(got, DEADLINE_S)
    timer.cancel()
    msg, info = got.result()
    assert msg.data == 'hi'
    assert publisher_gid(info)


def test_a_steady_timer_fires_repeatedly(context):
    from rclpy.clock import Clock, ClockType
    from rclpy.task import Future
    node = _node(context, 'lean_timer')
    ticks = []
    done = Future()

    def tick():
        ticks.append(1)
        if len(ticks) == 5:
            done.set_result(True)

    node.create_timer(0.01, tick, clock=Clock(clock_type=ClockType.STEADY_TIME))
    _loop(context, node).spin_until_future_complete(done, DEADLINE_S)
    assert len(ticks) == 5


def test_a_guard_condition_triggered_in_another_thread_wakes_the_wait(context):
    from rclpy.task import Future
    node = _node(context, 'lean_guard')
    done = Future()
    guard = node.create_guard_condition(lambda: done.set_result('woken'))
    threading.Timer(0.1, guard.trigger).start()
    # nothing else is in the wait set: only the guard condition can end this wait in time
    _loop(context, node).spin_until_future_complete(done, 60.0)
    assert done.result() == 'woken'


def test_shutdown_from_another_thread_ends_spin(context):
    node = _node(context, 'lean_stop')
    loop = _loop(context, node)
    threading.Timer(0.1, loop.shutdown).start()
    loop.spin()                     # no timeout: only the shutdown ends it
    assert loop.get_nodes() == []


def test_a_timer_created_by_a_callback_is_served(context):
    from rclpy.task import Future
    node = _node(context, 'lean_rebuild')
    done = Future()

    def first():
        first_timer.cancel()
        node.create_timer(0.01, lambda: done.done() or done.set_result(True))

    first_timer = node.create_timer(0.01, first)
    _loop(context, node).spin_until_future_complete(done, DEADLINE_S)
    assert done.done()


#: A node spun by runtime.run_node with the loop in place of the executor (what a node's opt-in
#: selects), with a parameter, its own service, a 1 kHz timer (busy) and a set-parameters check.
SERVER = """
import sys
from rcl_interfaces.msg import FloatingPointRange, ParameterDescriptor, SetParametersResult
from rclpy.node import Node
from rclpy.task import Future
from std_srvs.srv import Trigger
from dodo_sim.ros import runtime
from dodo_sim.ros.lean_loop import LeanLoop

runtime.make_executor = LeanLoop


class Server(Node):
    def __init__(self):
        super().__init__('lean_server')
        self.done = Future()
        self.exit_code = 0
        self.gain = self.declare_parameter('gain', 1.0, ParameterDescriptor(
            description='a gain', floating_point_range=[FloatingPointRange(
                from_value=0.0, to_value=10.0)])).value
        self.ticks = 0
        self.add_on_set_parameters_callback(self.on_set)
        self.create_timer(0.001, self.tick)
        self.create_service(Trigger, 'lean_server/report', self.report)
        print('ready', flush=True)

    def on_set(self, params):
        for p in params:
            if p.name == 'gain' and p.value == 7.0:
                return SetParametersResult(successful=False, reason='7 is refused')
        for p in params:
            if p.name == 'gain':
                self.gain = p.value
        return SetParametersResult(successful=True)

    def tick(self):
        self.ticks += 1

    def report(self, request, response):
        response.success = self.ticks > 0
        response.message = f'gain {self.gain}'
        return response

    def destroy_node(self):
        print('destroyed', flush=True)
        return super().destroy_node()


sys.exit(runtime.run_node(Server, 'lean_server'))
"""


def _start(script: str, env: dict, first_line: str) -> subprocess.Popen:
    proc = subprocess.Popen([sys.executable, '-c', script], env=env, cwd=REPO,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    line = proc.stdout.readline().strip()
    if line != first_line:
        proc.kill()
        raise AssertionError(f'{line!r}: {proc.communicate(timeout=10)[1][-2000:]}')
    return proc


def _end(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        proc.kill()
    proc.communicate(timeout=10)


@pytest.fixture(scope='module')
def server():
    """Start the lean-spun server process; give it and the environment (domain) to reach it."""
    env = ros_env()
    proc = _start(SERVER, env, 'ready')
    yield proc, env
    _end(proc)


@pytest.fixture
def client_node(server, monkeypatch):
    """Give an rclpy node and its SingleThreadedExecutor in the server's domain."""
    import rclpy
    from rclpy.executors import SingleThreadedExecutor
    _, env = server
    monkeypatch.setenv('ROS_AUTOMATIC_DISCOVERY_RANGE', 'LOCALHOST')
    ctx = rclpy.Context()
    rclpy.init(args=[], context=ctx, domain_id=int(env['ROS_DOMAIN_ID']))
    node = _node(ctx, 'lean_client')
    executor = SingleThreadedExecutor(context=ctx)
    executor.add_node(node)
    yield node, executor
    node.destroy_node()
    rclpy.try_shutdown(context=ctx)


def _call(executor, future):
    executor.spin_until_future_complete(future, DEADLINE_S)
    assert future.done(), 'no answer from the lean-spun node'
    return future.result()


def _parameters(node, executor):
    from rclpy.parameter_client import AsyncParameterClient
    client = AsyncParameterClient(node, 'lean_server')
    deadline = time.monotonic() + DEADLINE_S
    while not client.services_are_ready():
        assert time.monotonic() < deadline, 'parameter services of the lean-spun node not found'
        executor.spin_once(0.05)
    return client


def _report(node, executor) -> str:
    from std_srvs.srv import Trigger
    client = node.create_client(Trigger, 'lean_server/report')
    assert client.wait_for_service(DEADLINE_S)
    response = _call(executor, client.call_async(Trigger.Request()))
    node.destroy_client(client)
    assert response.success, 'the 1 kHz timer of the lean-spun node never fired'
    return response.message


def test_ros2_param_set_takes_effect_in_the_node(client_node):
    from rclpy.parameter import Parameter
    node, executor = client_node
    client = _parameters(node, executor)
    result = _call(executor, client.set_parameters([Parameter('gain', value=2.5)]))
    assert result.results[0].successful
    assert _report(node, executor) == 'gain 2.5'
    got = _call(executor, client.get_parameters(['gain']))
    assert got.values[0].double_value == 2.5


def test_ros2_param_set_is_refused_by_the_nodes_check_and_its_range(client_node):
    from rclpy.parameter import Parameter
    node, executor = client_node
    client = _parameters(node, executor)
    refused = _call(executor, client.set_parameters([Parameter('gain', value=7.0)]))
    assert not refused.results[0].successful
    assert '7 is refused' in refused.results[0].reason
    out_of_range = _call(executor, client.set_parameters([Parameter('gain', value=11.0)]))
    assert not out_of_range.results[0].successful


def test_ros2_param_describe_gives_the_descriptor(client_node):
    node, executor = client_node
    client = _parameters(node, executor)
    described = _call(executor, client.describe_parameters(['gain'])).descriptors[0]
    assert described.description == 'a gain'
    assert described.floating_point_range[0].to_value == 10.0


def test_a_client_of_a_lean_spun_node_gets_its_answer(server, monkeypatch):
    import rclpy
    from rclpy.parameter_client import AsyncParameterClient
    _, env = server
    monkeypatch.setenv('ROS_AUTOMATIC_DISCOVERY_RANGE', 'LOCALHOST')
    ctx = rclpy.Context()
    rclpy.init(args=[], context=ctx, domain_id=int(env['ROS_DOMAIN_ID']))
    try:
        node = _node(ctx, 'lean_asker')
        loop = _loop(ctx, node)
        client = AsyncParameterClient(node, 'lean_server')
        assert client.wait_for_services(DEADLINE_S)
        future = client.list_parameters()
        loop.spin_until_future_complete(future, DEADLINE_S)
        assert 'gain' in future.result().result.names
        node.destroy_node()
    finally:
        rclpy.try_shutdown(context=ctx)


def test_sigint_ends_run_node_with_the_loop_and_destroys_the_node():
    proc = _start(SERVER, ros_env(), 'ready')
    try:
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=DEADLINE_S)
    finally:
        _end(proc)
    assert proc.returncode == 0, err[-2000:]
    assert 'destroyed' in out


#: init_ros's SIGINT/SIGTERM handlers complete 'stop'; the loop waits with no timeout at all
WAITER = """
from dodo_sim.ros import runtime
from dodo_sim.ros.lean_loop import LeanLoop
from rclpy.node import Node
stop = runtime.init_ros([])
node = Node('lean_waiter')


def spinning():
    once.cancel()                   # nothing else wakes the wait after this
    print('spinning', flush=True)


once = node.create_timer(0.05, spinning)
loop = LeanLoop(service_period_s=0.0)   # every wait is the full one: no timeout at all
loop.add_node(node)
loop.spin_until_future_complete(stop, timeout_sec=None)
print('stopped by', stop.result(), flush=True)
"""


@pytest.mark.parametrize('signum', [signal.SIGINT, signal.SIGTERM])
def test_a_signal_wakes_a_wait_without_timeout(signum):
    proc = _start(WAITER, ros_env(), 'spinning')     # printed by a callback of the spin
    try:
        proc.send_signal(signum)
        out, err = proc.communicate(timeout=DEADLINE_S)
    finally:
        _end(proc)
    assert f'stopped by {int(signum)}' in out, err[-2000:]
    assert proc.returncode == 0
