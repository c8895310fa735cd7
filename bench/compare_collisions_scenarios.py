# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
Check whether link collisions change normal running.

Runs the hopper scenarios of test/control/test_scenarios_hopping.py (default model) with
SimConfig.collisions = 'feet' and 'links' and prints, per scenario and integrator, the largest
|q_links - q_feet| over the run and the number of control ticks in which a link (not a foot)
carried a force.

    .venv/bin/python bench/compare_collisions_scenarios.py [seconds] [scenario,scenario...]
"""
from pathlib import Path
import sys

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / 'test'))
import test_scenarios_hopping as scen  # noqa: E402  (the scenario definitions)


def run(kind, integrator, duration, collisions):
    x0 = scen.start_com_x('default')
    ctrl = {'target_x': x0, 'apex_height': 1.2}
    sim = {'collisions': collisions}
    if kind == 'push_at_start':
        sim['initial_v'] = (1.5, 0.0, 0.0, 0.0)
        ctrl = {'target_x': x0}
    elif kind == 'step':
        sim.update(terrain='steps', step_edges_x_m=(x0 + 0.5,), step_rises_m=(0.05,))
        ctrl = {'target_x': x0 + 1.0}
    elif kind == 'slope':
        sim.update(terrain='slope', slope_deg=5.0)
        ctrl = {'target_x': x0}
    elif kind == 'velocity':
        ctrl = {'target_velocity': 1.5, 'flight_policy': 'deadbeat'}
    return scen.simulate('default', integrator, duration, ctrl, sim)


def main():
    duration = float(sys.argv[1]) if len(sys.argv) > 1 else 4.0
    print(f'{"scenario":14s} {"integrator":12s} {"max|dq|":>10s} ticks')
    kinds = (sys.argv[2].split(',') if len(sys.argv) > 2
             else ('in_place', 'velocity', 'push_at_start', 'step', 'slope'))
    for kind in kinds:
        for integrator in scen.INTEGRATORS:
            feet = run(kind, integrator, duration, 'feet')
            links = run(kind, integrator, duration, 'links')
            n = min(len(feet.q), len(links.q))
            dq = float(np.max(np.abs(feet.q[:n] - links.q[:n])))
            print(f'{kind:14s} {integrator:12s} {dq:10.3g} {n}', flush=True)


if __name__ == '__main__':
    main()
