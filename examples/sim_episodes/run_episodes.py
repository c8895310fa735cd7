# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
Run episodes against any ROS 2 simulator that serves simulation_interfaces.

reset -> step N -> read the robot's state -> repeat. Only rclpy, simulation_interfaces and
standard messages: no simulator's own package. See README.md beside this file.
"""
from __future__ import annotations

import argparse
import json
import math
import sys

import rclpy
from simulation_interfaces.msg import (EntityCategory, EntityFilters, Result, SimulationState,
                                       SimulatorFeatures)
from simulation_interfaces.srv import (GetEntities, GetEntityState, GetSimulatorFeatures,
                                       ResetSimulation, SetSimulationState, StepSimulation)

#: What the episodes need from the simulator (SimulatorFeatures values).
NEEDED = {SimulatorFeatures.SIMULATION_RESET: 'SIMULATION_RESET',
          SimulatorFeatures.SIMULATION_STATE_SETTING: 'SIMULATION_STATE_SETTING',
          SimulatorFeatures.SIMULATION_STATE_PAUSE: 'SIMULATION_STATE_PAUSE',
          SimulatorFeatures.ENTITY_STATE_GETTING: 'ENTITY_STATE_GETTING'}


class EpisodeError(RuntimeError):
    """The simulator cannot run the episodes; the message says why."""


class Simulator:
    """The simulation_interfaces services of one simulator, called synchronously."""

    def __init__(self, node, prefix: str, timeout_s: float):
        self.node = node
        self.timeout_s = timeout_s
        self.prefix = prefix.rstrip('/')

    def call(self, srv_type, name: str, **fields):
        """Return the response of service ``<prefix>/<name>``; EpisodeError on a timeout."""
        client = self.node.create_client(srv_type, f'{self.prefix}/{name}')
        try:
            if not client.wait_for_service(timeout_sec=self.timeout_s):
                raise EpisodeError(f'no service {self.prefix}/{name} within '
                                   f'{self.timeout_s:g} s (is the simulator running, in this '
                                   f'ROS_DOMAIN_ID?)')
            future = client.call_async(srv_type.Request(**fields))
            rclpy.spin_until_future_complete(self.node, future, timeout_sec=self.timeout_s)
            if not future.done():
                raise EpisodeError(f'{self.prefix}/{name} did not answer within '
                                   f'{self.timeout_s:g} s')
            return future.result()
        finally:
            self.node.destroy_client(client)

    def check(self, response, name: str, accept=()) -> None:
        """Raise EpisodeError unless the response's result is OK (or one of ``accept``)."""
        code = response.result.result
        if code != Result.RESULT_OK and code not in accept:
            raise EpisodeError(f'{self.prefix}/{name}: result {code}: '
                               f'{response.result.error_message}')


def stamp_s(header) -> float:
    return header.stamp.sec + header.stamp.nanosec * 1e-9


def pose_text(state) -> dict:
    p, t = state.pose.position, state.twist.linear
    return {'x': p.x, 'y': p.y, 'z': p.z, 'vx': t.x, 'vy': t.y, 'vz': t.z,
            'stamp_s': stamp_s(state.header)}


def run(sim: Simulator, entity: str, episodes: int, steps: int, out) -> list:
    """Run the episodes; print one JSON line per episode to ``out``; return them."""
    features = set(sim.call(GetSimulatorFeatures, 'get_simulator_features').features.features)
    missing = [name for value, name in NEEDED.items() if value not in features]
    stepping = (SimulatorFeatures.STEP_SIMULATION_MULTIPLE if steps > 1
                else SimulatorFeatures.STEP_SIMULATION_SINGLE)
    if stepping not in features:
        missing.append('STEP_SIMULATION_MULTIPLE' if steps > 1 else 'STEP_SIMULATION_SINGLE')
    if missing:
        raise EpisodeError(f'the simulator lacks {missing} (GetSimulatorFeatures)')
    if not entity:
        categories = ([EntityCategory(category=EntityCategory.CATEGORY_ROBOT)]
                      if SimulatorFeatures.ENTITY_CATEGORIES in features else [])
        found = sim.call(GetEntities, 'get_entities',
                         filters=EntityFilters(categories=categories))
        sim.check(found, 'get_entities')
        if not found.entities:
            raise EpisodeError('the simulator lists no entity to watch: pass --entity')
        entity = found.entities[0]
    paused = sim.call(SetSimulationState, 'set_simulation_state',
                      state=SimulationState(state=SimulationState.STATE_PAUSED))
    sim.check(paused, 'set_simulation_state',
              accept=(SetSimulationState.Response.ALREADY_IN_TARGET_STATE,))
    results = []
    for episode in range(episodes):
        sim.check(sim.call(ResetSimulation, 'reset_simulation',
                           scope=ResetSimulation.Request.SCOPE_DEFAULT), 'reset_simulation')
        start = sim.call(GetEntityState, 'get_entity_state', entity=entity)
        sim.check(start, 'get_entity_state')
        sim.check(sim.call(StepSimulation, 'step_simulation', steps=steps), 'step_simulation')
        end = sim.call(GetEntityState, 'get_entity_state', entity=entity)
        sim.check(end, 'get_entity_state')
        a, b = pose_text(start.state), pose_text(end.state)
        line = {'episode': episode, 'entity': entity, 'steps': steps, 'start': a, 'end': b,
                'distance_m': math.dist((a['x'], a['y'], a['z']), (b['x'], b['y'], b['z'])),
                'sim_time_s': b['stamp_s'] - a['stamp_s']}
        print(json.dumps(line), file=out, flush=True)
        results.append(line)
    return results


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--prefix', default='/simulator',
                        help="the simulator's service prefix: /simulator (dodo_sim), "
                             '/gzserver (Gazebo ros_gz); default %(default)s')
    parser.add_argument('--entity', default='',
                        help='the entity to watch; default: the first robot GetEntities lists')
    parser.add_argument('--episodes', type=int, default=3)
    parser.add_argument('--steps', type=int, default=500, help='steps per episode')
    parser.add_argument('--timeout', type=float, default=60.0,
                        help='longest wait for a service or its answer, s')
    parser.add_argument('--quit', action='store_true',
                        help='set the simulation quitting at the end (the simulator exits)')
    args = parser.parse_args(argv)
    if args.episodes < 1 or args.steps < 1:
        parser.error('--episodes and --steps must be at least 1')
    rclpy.init()
    node = rclpy.create_node('sim_episodes')
    sim = Simulator(node, args.prefix, args.timeout)
    try:
        run(sim, args.entity, args.episodes, args.steps, sys.stdout)
        if args.quit:
            sim.check(sim.call(SetSimulationState, 'set_simulation_state',
                               state=SimulationState(state=SimulationState.STATE_QUITTING)),
                      'set_simulation_state')
    except EpisodeError as exc:
        print(f'run_episodes: error: {exc}', file=sys.stderr)
        return 1
    finally:
        node.destroy_node()
        rclpy.try_shutdown()
    return 0


if __name__ == '__main__':
    sys.exit(main())
