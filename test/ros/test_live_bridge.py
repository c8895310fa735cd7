# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
The live view's ROS side (dodo_sim.ros.live_bridge) against a real rclpy node, in one process.

A node ``/t/controller`` with parameters declared as the dodo_sim nodes declare theirs (a range,
a read-only one), a std_srvs/Trigger service and a push subscription stands for the run; the
bridge finds it on the graph and gets, sets, calls and publishes through DDS. The answers are
rclpy's own (its range check, its read-only refusal), not ours.
"""
import threading
import time

from conftest import ros_domain_id
from dodo_sim.ros import contract
from dodo_sim.tools import live_actions as la
import pytest

pytestmark = [pytest.mark.ros]


class Actions:
    """What the bridge reports to the live view's side."""

    def __init__(self):
        self.services = []
        self.values = []

    def set_services(self, services):
        self.services = list(services)

    def parameter_values(self, node, values):
        self.values.append((node, values))

    def not_encodable(self, name, type_name, why):
        raise AssertionError(f'{name} ({type_name}): {why}')


def _until(condition, timeout_s=20.0):
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.02)
    return False


@pytest.fixture
def run():
    import rclpy
    from geometry_msgs.msg import Vector3
    from rcl_interfaces.msg import FloatingPointRange, ParameterDescriptor
    from rclpy.executors import SingleThreadedExecutor
    from std_srvs.srv import Trigger
    from dodo_sim.ros.live_bridge import LiveBridge
    context = rclpy.Context()
    rclpy.init(context=context, domain_id=ros_domain_id())
    # in its namespace as dodo hop starts a node there (its parameter events remapped into it)
    node = rclpy.create_node('controller', context=context,
                             cli_args=['--ros-args', *contract.remap_arguments('/t')])
    node.declare_parameter('apex_height', 1.2, ParameterDescriptor(floating_point_range=[
        FloatingPointRange(from_value=0.0, to_value=5.0)]))
    node.declare_parameter('integrator', 'timestepping', ParameterDescriptor(read_only=True))
    node.declare_parameter('gains', [1.0, 2.0])
    resets, pushes = [], []

    def reset(request, response):
        resets.append(request)
        response.success, response.message = True, 'reset'
        return response
    node.create_service(Trigger, 'simulator/reset', reset)
    steps = []
    try:       # a service of the simulation standard (built at install: docs/interfaces.md)
        from simulation_interfaces.srv import StepSimulation

        def step(request, response):
            steps.append(request.steps)
            response.result.result = 1          # RESULT_OK
            return response
        node.create_service(StepSimulation, 'step_simulation', step)
        services = ['/t/simulator/reset', '/t/step_simulation']
    except ImportError:
        services = ['/t/simulator/reset']
    node.create_subscription(Vector3, 'simulator/push', pushes.append, 10)
    executor = SingleThreadedExecutor(context=context)
    executor.add_node(node)
    spinning = threading.Thread(target=executor.spin, daemon=True)
    spinning.start()
    bridge = LiveBridge('/t', '/t/recorder', context=context)
    actions = Actions()
    bridge.start(actions)
    try:
        assert _until(lambda: sorted(s.name for s in actions.services) == services
                      and bridge.nodes() == ['/t/controller']), (actions.services, bridge.nodes())
        yield bridge, actions, node, resets, pushes, steps
    finally:
        bridge.stop()
        executor.shutdown()
        node.destroy_node()
        rclpy.shutdown(context=context)


def test_parameters_are_got_and_set_through_the_nodes_services_with_its_answers(run):
    bridge, actions, node, _, _, _ = run
    got = bridge.get_parameters('/t/controller', None, 5.0)
    assert got['apex_height'] == (la.DOUBLE, 1.2)
    assert got['gains'] == (la.DOUBLE_ARRAY, [1.0, 2.0])
    assert got['integrator'] == (la.STRING, 'timestepping')
    assert bridge.get_parameters('/t/controller', ['gains', 'nope'], 5.0) == {
        'gains': (la.DOUBLE_ARRAY, [1.0, 2.0])}
    results = bridge.set_parameters('/t/controller', {'apex_height': (la.DOUBLE, 1.1),
                                                      'gains': (la.DOUBLE_ARRAY, [3.0])}, 5.0)
    assert results == {'apex_height': '', 'gains': ''}
    assert node.get_parameter('apex_height').value == 1.1
    assert list(node.get_parameter('gains').value) == [3.0]
    refused = bridge.set_parameters('/t/controller', {'apex_height': (la.DOUBLE, -1.0),
                                                      'integrator': (la.STRING, 'event')}, 5.0)
    assert 'out of range' in refused['apex_height']
    assert refused['integrator'] == 'Trying to set a read-only parameter: integrator.'
    assert node.get_parameter('apex_height').value == 1.1
    # the node's parameter events reach the live view's side
    # (set_parameters sets them one by one: one event each)
    assert _until(lambda: actions.values == [
        ('/t/controller', [('apex_height', (la.DOUBLE, 1.1))]),
        ('/t/controller', [('gains', (la.DOUBLE_ARRAY, [3.0]))])]), actions.values
    with pytest.raises(la.LiveActionError):
        bridge.get_parameters('/t/recorder', None, 5.0)      # the host's are not offered


def test_services_are_proxied_with_their_schemas_and_malformed_requests_never_reach_them(run):
    from rclpy.serialization import deserialize_message, serialize_message
    from std_srvs.srv import Trigger
    bridge, actions, _, resets, _, _ = run
    reset = next(s for s in actions.services if s.name == '/t/simulator/reset')
    assert reset.type_name == 'std_srvs/srv/Trigger'
    assert reset.response_msgdef == 'bool success\nstring message\n'
    request = bytes(serialize_message(Trigger.Request()))
    answer = deserialize_message(bridge.call_service('/t/simulator/reset', request, 5.0),
                                 Trigger.Response)
    assert answer.success and answer.message == 'reset' and len(resets) == 1
    for bad in (b'', b'\x09\x09\x09\x09\x00', request + bytes(100)):
        with pytest.raises(la.LiveActionError):
            bridge.call_service('/t/simulator/reset', bad, 5.0)
    assert len(resets) == 1


def test_client_messages_are_published_on_the_runs_topics(run):
    bridge, _, _, _, pushes, _ = run
    push = next(t for t in la.CLIENT_TOPICS if t.name == 'simulator/push')
    assert _until(lambda: bridge.node.count_subscribers('simulator/push') > 0)
    bridge.publish(push, (1.0, 0.0, -2.0))
    assert _until(lambda: pushes), 'no push received'
    assert (pushes[0].x, pushes[0].y, pushes[0].z) == (1.0, 0.0, -2.0)


def test_a_service_of_the_simulation_standard_is_proxied_without_a_change_here(run):
    """simulation_interfaces/srv/StepSimulation: found on the graph, nested types in its schema."""
    pytest.importorskip('simulation_interfaces')
    from rclpy.serialization import deserialize_message, serialize_message
    from simulation_interfaces.srv import StepSimulation
    bridge, actions, _, _, _, steps = run
    info = next(s for s in actions.services if s.name == '/t/step_simulation')
    assert info.type_name == 'simulation_interfaces/srv/StepSimulation'
    assert info.request_msgdef == 'uint64 steps\n'
    assert 'MSG: simulation_interfaces/Result' in info.response_msgdef
    answer = deserialize_message(bridge.call_service(
        '/t/step_simulation', bytes(serialize_message(StepSimulation.Request(steps=100))), 5.0),
        StepSimulation.Response)
    assert steps == [100] and answer.result.result == 1
