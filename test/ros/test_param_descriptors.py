# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
Check that ``ros2 param describe`` shows the config dataclasses' bounds.

It shows their ranges and allowed values (field metadata, dodo_sim/parameter.py), asked through the
node's describe_parameters service as ros2cli asks it.
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


def _node_services(make_node, node_name):
    """Yield ``call(srv_type, service, request)`` for the parameter services of a node."""
    context = rclpy.Context()
    rclpy.init(context=context, domain_id=ros_domain_id())
    from rclpy.executors import SingleThreadedExecutor
    sim = make_node(context)
    client_node = rclpy.create_node('param_client', context=context)
    executor = SingleThreadedExecutor(context=context)
    executor.add_node(sim)
    executor.add_node(client_node)

    def call(srv_type, name, request):
        client = client_node.create_client(srv_type, f'/{node_name}/{name}')
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


@pytest.fixture
def simulator():
    from dodo_sim.ros.simulator_node import SimulatorNode
    yield from _node_services(lambda context: SimulatorNode(context=context), 'simulator')


@pytest.fixture
def controller():
    from dodo_sim.ros.controller_node import ControllerNode
    yield from _node_services(lambda context: ControllerNode(context=context), 'controller')


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
    assert i.from_value == 1 and i.to_value == 100_000     # a step's cost stays bounded
    assert d['mode'].additional_constraints == 'one of: lockstep, realtime'
    assert d['integrator'].additional_constraints == 'one of: timestepping, event'
    assert d['command_convention'].additional_constraints == 'one of: stamped, ros2_control'
    (dt,) = d['dt'].floating_point_range
    assert dt.from_value == 0.0 and dt.to_value > 1e300
    assert 's' in d['dt'].description               # the field's documented unit stays
    assert d['dt'].additional_constraints == '> 0 s'          # open bound: the exact rule


def test_every_numeric_controller_parameter_has_a_range(controller):
    """
    The SLIP controller's parameters, as ``ros2 param describe /controller`` shows them.

    Every number has a range or (NaN meaning "unset") its rule in additional_constraints, read
    from the same field metadata that ControllerConfig's validation uses.
    """
    import dataclasses

    from dodo_control.slip.config import ControllerConfig
    names = [f.name for f in dataclasses.fields(ControllerConfig)]
    d = _describe(controller, *names)
    (k,) = d['leg_stiffness'].floating_point_range
    assert k.from_value == 0.0 and d['leg_stiffness'].additional_constraints == '> 0 N/m'
    (gain,) = d['velocity_bias_gain'].floating_point_range
    assert (gain.from_value, gain.to_value) == (0.0, 1.0)
    (aoa,) = d['max_angle_of_attack'].floating_point_range
    assert aoa.to_value == 1.2 and d['max_angle_of_attack'].additional_constraints == \
        '(0, 1.2) rad'
    (samples,) = d['liftoff_samples'].integer_range
    assert samples.from_value == 1
    assert d['flight_policy'].additional_constraints == 'one of: cascade, raibert, deadbeat'
    assert not d['target_x'].floating_point_range     # NaN (no target) is outside any range
    assert d['target_x'].additional_constraints == 'finite m or NaN'
    assert d['joint_armature_kgm2'].additional_constraints == 'each >= 0 kg*m^2'
    for f in dataclasses.fields(ControllerConfig):
        if f.type in ('float', 'int', 'tuple'):
            assert d[f.name].floating_point_range or d[f.name].integer_range or \
                d[f.name].additional_constraints, f.name
        elif f.type == 'str':
            assert d[f.name].additional_constraints.startswith('one of: '), f.name


def test_config_errors_name_value_unit_and_range():
    """One validation reads the metadata: the message says field, value, unit and range."""
    from dodo_control.slip.config import ControllerConfig
    from dodo_control.walker import WalkerConfig
    from dodo_sim.hardware.config import DriverConfig
    from dodo_sim.simulator import SimConfig
    with pytest.raises(ValueError, match=r'ControllerConfig.max_angle_of_attack = 1.3 rad: '
                                         r'must be \(0, 1.2\)'):
        ControllerConfig(max_angle_of_attack=1.3)
    with pytest.raises(ValueError, match=r'SimConfig.contact_radii = \(-0.01,\) m: every value '
                                         r'must be >= 0'):
        SimConfig(contact_radii=(-0.01,))
    with pytest.raises(ValueError, match=r'WalkerConfig.step_frequency_hz = 0.5 1/s: must be '
                                         r'\(0.5, 5\]'):
        WalkerConfig(step_frequency_hz=0.5)
    with pytest.raises(ValueError, match=r"DriverConfig.estop_mode = 'off': choose one of"):
        DriverConfig(estop_mode='off')
