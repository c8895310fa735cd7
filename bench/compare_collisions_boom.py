# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
Check whether link collision changes the boom rig's hopping.

The 'hold' scenario of test/control/test_boom_hopping.py (config/boom.yaml, motors on) with
SimConfig.collisions 'feet' and 'links': prints both metric sets and whether they are identical.

    .venv/bin/python bench/compare_collisions_boom.py [seconds]
"""
import dataclasses
from pathlib import Path
import sys

from dodo_control.scenarios import boom as scenarios
from dodo_control.scenarios import Perturbation
from dodo_control.slip.config import ControllerConfig
from dodo_sim.ros.params import config_from_file
from dodo_sim.simulator import SimConfig

BOOM_YAML = Path(__file__).resolve().parents[1] / 'config' / 'boom.yaml'


def run(collisions, seconds):
    configs = {'simulator': dataclasses.replace(
        config_from_file(SimConfig, BOOM_YAML, 'simulator'), collisions=collisions),
        'controller': config_from_file(ControllerConfig, BOOM_YAML, 'controller')}
    scenario = scenarios.SCENARIOS['hold']
    return scenario.run(configs, {**scenario.options, 'duration_s': seconds, 'skip_hops': 3},
                        Perturbation())


def main():
    seconds = float(sys.argv[1]) if len(sys.argv) > 1 else 5.0
    feet, links = run('feet', seconds), run('links', seconds)
    print('feet ', feet)
    print('links', links)
    print('identical' if feet == links else 'DIFFERENT')


if __name__ == '__main__':
    main()
