# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
Check ``ros2 param describe`` shows the config dataclasses' bounds.

``ros2 param describe`` shows the ranges and allowed values of the config dataclasses (field
metadata, dodo_sim/parameter.py), asked through the node's describe_parameters service as ros2cli
asks it.
"""
from __future__ import annotations

import time

import pytest

pytest.importorskip('rclpy')

# These imports must follow the importorskip above (E402), so they cannot take their
# place in the sorted import block (I100).
from conftest import ros_domain_id  # noqa: E402, I100
from rcl_interfaces.srv import DescribeParameters  # noqa: E402
import rclpy  # noqa: E402

pytestmark = [pytest.mark.ros]


@pytest.fixture
def simulator():
    context = rclpy.Context()
    rclpy.init(context=context, domain_id=ros_domain_id())
    from dodo_sim.ros.simulator_node import SimulatorNode
    from rclpy.executors import SingleThreadedExecutor
    sim = SimulatorNode(context=context)
    client_node = rclpy.create_node('param_client', context=context)
    executor = SingleThreadedExecutor(context=context)
    executor.add_node(sim)
    executor.add_node(client_node)

    def call(srv_type, name, request):
        client = client_node.create_client(srv_type, f'/simulator/{name}')
        deadline = time.monotonic() + 30.0
        while not client.service_is_ready():
            assert time.monotonic() < deadline, name
            executor.spin_once(timeout_sec=0.05)
        future = client.call_async(request)
        while not future.done():
            assert time.monotonic() < deadline, name
            executor.spin_once(timeout_sec=0.05)
        return future.result()

    try:
        yield call
    finally:
        client_node.destroy_node()
        sim.destroy_node()
        rclpy.try_shutdown(context=context)


def _describe(call, *names):
    response = call(DescribeParameters, 'describe_parameters',
                    DescribeParameters.Request(names=list(names)))
    return {d.name: d for d in response.descriptors}


def test_ranges_and_choices_are_described(simulator):
    d = _describe(simulator, 'restitution', 'solver_max_iterations', 'mode', 'integrator',
                  'command_convention', 'dt')
    (r,) = d['restitution'].floating_point_range
    assert (r.from_value, r.to_value) == (0.0, 1.0)
    (i,) = d['solver_max_iterations'].integer_range
    assert i.from_value == 1 and i.to_value == 2 ** 63 - 1
    assert d['mode'].additional_constraints == 'one of: lockstep, realtime'
    assert d['integrator'].additional_constraints == 'one of: timestepping, event'
    assert d['command_convention'].additional_constraints == 'one of: stamped, ros2_control'
    (dt,) = d['dt'].floating_point_range
    assert dt.from_value == 0.0 and dt.to_value > 1e300
    assert 's' in d['dt'].description               # the field's documented unit stays
