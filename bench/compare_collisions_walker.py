# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
Check whether link collision changes the Kneed Walker's walk.

The walk of test/control/test_walker_walks.py (config/walk.yaml, flat ground) with
SimConfig.collisions 'feet' and 'links', both integrators: prints the steps walked and the
largest |q_links - q_feet| over the run.

    .venv/bin/python bench/compare_collisions_walker.py [max_steps]
"""
import dataclasses
from pathlib import Path
import sys

from dodo_control.walker.controller import WalkerConfig, WalkerController
from dodo_control.walker.outcome import config_on_terrain
from dodo_sim.rollout import rollout
from dodo_sim.ros.params import config_from_file
from dodo_sim.simulator import SimConfig, Simulator
import numpy as np

REPO = Path(__file__).resolve().parents[1]
WALKER = REPO / 'urdf' / 'kneed_walker.urdf.xacro'
PARAMS = REPO / 'config' / 'walk.yaml'


def run(integrator, collisions, seconds):
    base = config_from_file(SimConfig, PARAMS, 'simulator')
    controller = WalkerController(config_from_file(WalkerConfig, PARAMS, 'controller'))
    config = dataclasses.replace(base, integrator=integrator, collisions=collisions)
    sim = Simulator(WALKER, config_on_terrain(WALKER, config,
                                              controller.config.initial_stance_frame))
    links = []
    result = rollout(sim, controller, steps=int(round(seconds / config.control_period)),
                     on_tick=lambda k, state, tau: links.append(len(state.link_contacts)))
    return result.q, sum(n > 0 for n in links), len(sim.robot.collision_points)


def main():
    seconds = float(sys.argv[1]) if len(sys.argv) > 1 else 5.0
    for integrator in ('timestepping', 'event'):
        q_feet, _, _ = run(integrator, 'feet', seconds)
        q_links, ticks, points = run(integrator, 'links', seconds)
        n = min(len(q_feet), len(q_links))
        print(f'{integrator:12s} {seconds:g} s, {points} support points: max|dq| = '
              f'{np.max(np.abs(q_feet[:n] - q_links[:n])):.3g}, ticks with a link touching: '
              f'{ticks}', flush=True)


if __name__ == '__main__':
    main()
