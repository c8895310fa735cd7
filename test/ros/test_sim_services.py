# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
simulation_interfaces served by the simulator node, over DDS in one process.

The simulator and controller nodes and a client node in one executor (test_ros_graph.py's set-up):
the services and the action answer as docs/simulation_interfaces.md says, a step of N is N
answered periods, a reset starts a new episode the controller restarts at, the runtime
parameters are set and the others say why not. The multi-process run with a bag is
test_sim_interfaces_run.py.
"""
from __future__ import annotations

import json
import time

import numpy as np
from process_support import hop_params
import pytest
from ros_support import in_process_ros

rclpy = pytest.importorskip('rclpy')

# These imports must follow the importorskip above (E402), so they cannot take their
# place in the sorted import block (I100).
from dodo_sim.ros import contract  # noqa: E402, I100
from dodo_sim.ros import sim_control as sc, sim_values as sv  # noqa: E402
from rcl_interfaces.msg import ParameterType  # noqa: E402
from rcl_interfaces.srv import DescribeParameters, SetParametersAtomically  # noqa: E402
from rclpy.action import ActionClient  # noqa: E402
from rclpy.parameter import Parameter  # noqa: E402
from sensor_msgs.msg import JointState  # noqa: E402
from simulation_interfaces import srv  # noqa: E402
from simulation_interfaces.action import SimulateSteps  # noqa: E402
from simulation_interfaces.msg import SimulationState  # noqa: E402
from std_msgs.msg import String  # noqa: E402

pytestmark = pytest.mark.ros

START_Q = [0.0, 1.3, 0.3, -0.6]


@pytest.fixture(params=['lockstep'])
def graph(request, monkeypatch, tmp_path):
    """
    Yield (ros, simulator node, controller node, client node) answering in lockstep.

    Param 'realtime': the simulator in realtime; 'lean': lockstep, every node spun by the lean
    wait-set loop (dodo_sim.ros.lean_loop: services, actions and tasks at low priority).
    """
    monkeypatch.setenv('ROS_AUTOMATIC_DISCOVERY_RANGE', 'LOCALHOST')
    params = tmp_path / 'params.yaml'
    mode = 'realtime' if request.param == 'realtime' else 'lockstep'
    params.write_text(hop_params(simulator={'command_timeout': 2.0, 'mode': mode},
                                 controller={'reliable_states': mode == 'lockstep'}))
    with in_process_ros(['--ros-args', '--params-file', str(params)]) as ros:
        if request.param == 'lean':
            from dodo_sim.ros.lean_loop import LeanLoop
            ros.executor = LeanLoop(context=ros.context)
        from dodo_sim.ros.controller_node import ControllerNode
        from dodo_sim.ros.simulator_node import SimulatorNode
        sim = ros.add(SimulatorNode(context=ros.context))
        ctrl = ros.add(ControllerNode(context=ros.context))
        client = ros.add(rclpy.create_node('client', context=ros.context))
        client.states = []
        client.events = []
        client.create_subscription(JointState, contract.JOINT_STATES, client.states.append,
                                   10000)
        client.create_subscription(String, contract.SIM_EVENTS, client.events.append,
                                   contract.events_qos())
        assert ros.spin_until(lambda: sim.steps > 50, 60.0)
        yield ros, sim, ctrl, client


def call(ros, client, srv_type, name, timeout=30.0, **fields):
    cli = client.create_client(srv_type, name)
    assert ros.spin_until(cli.service_is_ready, 10.0), name
    future = cli.call_async(srv_type.Request(**fields))
    assert ros.spin_until(future.done, timeout), name
    return future.result()


def stamp_ns(msg):
    return msg.header.stamp.sec * 1_000_000_000 + msg.header.stamp.nanosec


def test_features_entities_and_their_states(graph):
    ros, sim, _, client = graph
    features = call(ros, client, srv.GetSimulatorFeatures,
                    contract.sim_service('get_simulator_features')).features
    assert sorted(features.features) == sorted(sc.FEATURES)
    entities = call(ros, client, srv.GetEntities, contract.sim_service('get_entities'))
    assert list(entities.entities) == ['hopper', 'terrain']
    state = call(ros, client, srv.GetEntityState, contract.sim_service('get_entity_state'),
                 entity='hopper')
    assert state.result.result == sv.RESULT_OK and state.state.header.frame_id == 'world'
    assert state.state.pose.position.z > 0.3          # the body above the ground
    info = call(ros, client, srv.GetEntityInfo, contract.sim_service('get_entity_info'),
                entity='terrain')
    assert info.info.category.category == 5 and 'terrain' in info.info.description
    missing = call(ros, client, srv.GetEntityState, contract.sim_service('get_entity_state'),
                   entity='nope')
    assert missing.result.result == sv.RESULT_NOT_FOUND
    got = call(ros, client, srv.GetSimulationState, contract.sim_service('get_simulation_state'))
    assert got.state.state == SimulationState.STATE_PLAYING


@pytest.mark.parametrize('graph', ['lockstep', 'lean'], indirect=True)
def test_pause_step_action_and_resume_are_answered_periods(graph):
    ros, sim, ctrl, client = graph
    set_state = contract.sim_service('set_simulation_state')
    paused = call(ros, client, srv.SetSimulationState, set_state,
                  state=SimulationState(state=SimulationState.STATE_PAUSED))
    assert paused.result.result == sv.RESULT_OK
    assert ros.spin_until(lambda: sim.control.held is not None, 10.0)
    steps, updates = sim.steps, ctrl.updates
    ros.spin_until(lambda: False, 0.3)                  # paused: nothing moves
    assert sim.steps == steps and ctrl.updates == updates
    first = len(client.states)
    stepped = call(ros, client, srv.StepSimulation, contract.sim_service('step_simulation'),
                   steps=100)
    assert stepped.result.result == sv.RESULT_OK
    assert sim.steps == steps + 100 and ctrl.updates == updates + 100
    ros.spin_until(lambda: len(client.states) >= first + 100, 10.0)
    stamps = [stamp_ns(m) for m in client.states[first - 1:]]
    assert np.all(np.diff(stamps) == 1_000_000) and len(stamps) == 101
    action = ActionClient(client, SimulateSteps, contract.SIMULATE_STEPS)
    assert ros.spin_until(action.server_is_ready, 10.0)
    # the server's feedback as published (a client's feedback callback may miss the last one
    # when its executor takes the result first: rclpy's ActionClient then drops it)
    feedback = []
    client.create_subscription(
        SimulateSteps.Impl.FeedbackMessage, contract.SIMULATE_STEPS + '/_action/feedback',
        lambda m: feedback.append((m.feedback.completed_steps, m.feedback.remaining_steps)), 100)
    ros.spin_until(lambda: False, 0.5)                  # the new subscription matched
    sent = action.send_goal_async(SimulateSteps.Goal(steps=5))
    assert ros.spin_until(sent.done, 10.0) and sent.result().accepted
    done = sent.result().get_result_async()
    assert ros.spin_until(done.done, 30.0)
    assert done.result().result.result.result == sv.RESULT_OK
    assert ros.spin_until(lambda: len(feedback) == 5, 5.0)
    assert feedback == [(k, 5 - k) for k in range(1, 6)]
    assert sim.steps == steps + 105
    playing = call(ros, client, srv.SetSimulationState, set_state,
                   state=SimulationState(state=SimulationState.STATE_PLAYING))
    assert playing.result.result == sv.RESULT_OK
    assert ros.spin_until(lambda: sim.steps > steps + 150, 10.0)
    events = [json.loads(m.data)['event'] for m in client.events]
    assert events == ['paused', 'stepping', 'stepping', 'playing']


def test_a_reset_starts_an_episode_the_controller_restarts_at(graph):
    ros, sim, ctrl, client = graph
    assert ros.spin_until(lambda: sim.steps > 300, 30.0)      # mid-hop: a memory to forget
    reset = call(ros, client, srv.ResetSimulation, contract.sim_service('reset_simulation'),
                 scope=srv.ResetSimulation.Request.SCOPE_DEFAULT)
    assert reset.result.result == sv.RESULT_OK
    assert ctrl.episodes.episode == 1 and sim.control.episode == 1
    record = json.loads(client.events[-1].data)
    assert record['event'] == 'reset' and record['episode'] == 1
    first = next(m for m in client.states if stamp_ns(m) == record['stamp_ns'])
    assert list(first.position) == START_Q and not any(first.velocity)


def test_set_entity_and_joint_state(graph):
    ros, sim, _, client = graph
    got = call(ros, client, srv.GetEntityState, contract.sim_service('get_entity_state'),
               entity='hopper').state
    got.pose.position.x += 0.25
    got.pose.position.z = 1.5
    got.twist.linear.x, got.twist.linear.z = 0.3, 0.0
    done = call(ros, client, srv.SetEntityState, contract.sim_service('set_entity_state'),
                entity='hopper', state=got)
    assert done.result.result == sv.RESULT_OK, done.result.error_message
    value = rclpy.parameter.Parameter('hip', value=[0.35, -1.0]).to_parameter_msg()
    joints = call(ros, client, SetParametersAtomically, contract.SET_JOINT_STATE,
                  parameters=[value])
    assert joints.result.successful, joints.result.reason
    bad = rclpy.parameter.Parameter('elbow', value=0.1).to_parameter_msg()
    refused = call(ros, client, SetParametersAtomically, contract.SET_JOINT_STATE,
                   parameters=[bad])
    assert not refused.result.successful and 'elbow' in refused.result.reason
    assert sim.control.episode == 2
    assert value.value.type == ParameterType.PARAMETER_DOUBLE_ARRAY


def test_runtime_parameters_are_set_checked_and_described(graph):
    ros, sim, _, client = graph
    results = sim.set_parameters([Parameter('friction', value=0.4),
                                  Parameter('terrain_height_m', value=5.0)])
    assert results[0].successful and sim.sim.config.friction == 0.4
    assert not results[1].successful and 'below the flat terrain' in results[1].reason
    assert not sim.set_parameters([Parameter('restitution', value=1.5)])[0].successful
    fixed = sim.set_parameters([Parameter('control_period', value=0.002)])[0]
    assert not fixed.successful
    described = call(ros, client, DescribeParameters, '/simulator/describe_parameters',
                     names=['control_period', 'friction', 'stop_after'])
    period, friction, stop_after = described.descriptors
    assert period.read_only and 'Read-only while running: the exchange' in period.description
    assert not friction.read_only
    assert stop_after.read_only and 'simulator node' in stop_after.description


@pytest.mark.parametrize('graph', ['realtime'], indirect=True)
def test_realtime_pause_steps_and_resume_follow_the_wall_clock(graph):
    ros, sim, _, client = graph
    set_state = contract.sim_service('set_simulation_state')
    call(ros, client, srv.SetSimulationState, set_state,
         state=SimulationState(state=SimulationState.STATE_PAUSED))
    steps = sim.steps
    ros.spin_until(lambda: False, 0.3)
    assert sim.steps == steps                          # paused: no ticks taken
    stepped = call(ros, client, srv.StepSimulation, contract.sim_service('step_simulation'),
                   steps=50)
    assert stepped.result.result == sv.RESULT_OK and sim.steps == steps + 50
    reset = call(ros, client, srv.ResetSimulation, contract.sim_service('reset_simulation'))
    assert reset.result.result == sv.RESULT_OK and sim.steps == steps + 51
    assert sim.sim.time == 0.0
    resumed = time.monotonic()
    call(ros, client, srv.SetSimulationState, set_state,
         state=SimulationState(state=SimulationState.STATE_PLAYING))
    assert ros.spin_until(lambda: sim.steps > steps + 200, 10.0)
    # the wall clock the steps follow restarted on resume: no steps owed for the pause
    assert sim.exchange.start_s >= resumed
