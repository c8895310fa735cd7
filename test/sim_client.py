# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
A client process of issue 31's test: it drives a running simulator through simulation_interfaces.

GetSimulatorFeatures, SetSimulationState(PAUSED), StepSimulation(100) (the entity state's stamp
before and after), PLAYING, a runtime parameter (friction), ResetSimulation, SetEntityState
(the robot lifted and moved), each after the run went on a little; prints one JSON line with
what it got. Run by test/ros/test_sim_interfaces_run.py: ``python sim_client.py PREFIX``.
"""
from __future__ import annotations

import json
import sys

from rcl_interfaces.srv import SetParameters
import rclpy
from rclpy.parameter import Parameter
from simulation_interfaces.msg import SimulationState
from simulation_interfaces.srv import (GetEntityState, GetSimulatorFeatures, ResetSimulation,
                                       SetEntityState, SetSimulationState, StepSimulation)

TIMEOUT_S = 60.0


def main(prefix: str) -> int:
    rclpy.init()
    node = rclpy.create_node('sim_client')
    out = {}

    def call(srv_type, name, **fields):
        client = node.create_client(srv_type, f'{prefix}/{name}')
        assert client.wait_for_service(timeout_sec=TIMEOUT_S), name
        future = client.call_async(srv_type.Request(**fields))
        rclpy.spin_until_future_complete(node, future, timeout_sec=TIMEOUT_S)
        assert future.done(), name
        return future.result()

    def stamp_ns():
        state = call(GetEntityState, 'get_entity_state', entity='hopper').state
        return state.header.stamp.sec * 1_000_000_000 + state.header.stamp.nanosec, state

    def run_on(seconds):
        start, _ = stamp_ns()
        while stamp_ns()[0] < start + int(seconds * 1e9):
            rclpy.spin_once(node, timeout_sec=0.05)

    def set_state(state):
        return call(SetSimulationState, 'set_simulation_state',
                    state=SimulationState(state=state)).result.result

    out['features'] = list(call(GetSimulatorFeatures,
                                'get_simulator_features').features.features)
    out['paused'] = set_state(SimulationState.STATE_PAUSED)
    before, _ = stamp_ns()
    out['stepped'] = call(StepSimulation, 'step_simulation', steps=100).result.result
    after, _ = stamp_ns()
    out['step_ns'] = after - before
    out['playing'] = set_state(SimulationState.STATE_PLAYING)
    run_on(0.3)
    parameters = call(SetParameters, 'set_parameters',
                      parameters=[Parameter('friction', value=0.5).to_parameter_msg()])
    out['friction'] = parameters.results[0].successful
    run_on(0.3)
    out['reset'] = call(ResetSimulation, 'reset_simulation',
                        scope=ResetSimulation.Request.SCOPE_DEFAULT).result.result
    run_on(0.3)
    _, state = stamp_ns()
    state.pose.position.x += 0.1
    state.pose.position.z += 0.2
    done = call(SetEntityState, 'set_entity_state', entity='hopper', state=state)
    out['set_entity_state'] = [done.result.result, done.result.error_message]
    run_on(0.3)
    print(json.dumps(out), flush=True)
    node.destroy_node()
    rclpy.try_shutdown()
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1]))
