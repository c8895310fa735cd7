#!/usr/bin/env python3
# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
What sensor noise the SLIP hopper tolerates: its scenario numbers under sensor models.

Prints the table of docs/control.md, "Sensor noise"; asserts nothing.

    python bench/hopper_sensor_noise.py [--seeds 3] [--markdown]

Each row is a sensor model (``SimConfig`` sensor fields, :mod:`dodo_sim.physics.sensors`): ideal;
the rig's (config/hop_sensors.yaml: a 14-bit magnetic encoder's noise and resolution on all
four joints, the velocity resolution of what the devices send, a six-axis F/T sensor's noise on
the foot, each with its source in the file); the rig's with one quantity changed: more position
or force noise, white velocity noise (sigma on base_x and base_z in m/s, on hip and knee that
divided by the boom radius, rad/s), latency of the joint states and the foot force in control
periods. Each runs two hopper scenarios of ``dodo_control.scenarios.hopper`` (their metrics
measured on the simulator's ground truth): ``hold`` (hop in place 10 s: apex height error and
apex CoG x error, max from the 4th apex, and hop count) and ``velocity`` (run at 1 m/s for 6 s:
speed error at the apexes, max from the 4th). Noise is random: each row runs ``--seeds`` seeds
(``sensor_seed`` 0, 1, ...) and shows the worst of them ("failed" when a seed made the hopper
fall or its knee pass through the stretched-leg singularity; the reason is printed below).
"""
from __future__ import annotations

import argparse
import os
from pathlib import Path
import sys
import time

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

# These imports must follow the sys.path change above (E402), so they cannot take their
# place in the sorted import block (I100).
from dodo_control.scenarios import (build_configs, hopper, Perturbation,  # noqa: E402, I100
                                    ScenarioFailed)
from dodo_sim.physics.sim_config import SENSOR_PARAMETERS  # noqa: E402
from dodo_sim.ros.params import node_parameters  # noqa: E402

RIG_FILE = REPO / 'config' / 'hop_sensors.yaml'
#: the boom radius of config/hardware.yaml, m: base joint values per joint angle
BOOM_RADIUS_M = 2.5


def rig_sensors() -> dict:
    """Return the sensor parameters of config/hop_sensors.yaml."""
    values = node_parameters(RIG_FILE, 'simulator')
    return {k: v for k, v in values.items() if k in SENSOR_PARAMETERS}


def scaled(values, factor: float) -> list:
    return [factor * x for x in values]


def models() -> list:
    """Return (label, sensor parameters) of each row."""
    rig = rig_sensors()
    rows = [('ideal sensors', {}), ('rig (config/hop_sensors.yaml)', rig)]
    for factor in (2, 4, 10):
        rows.append((f'rig, position noise x{factor}',
                     {**rig, 'joint_position_noise': scaled(rig['joint_position_noise'],
                                                            factor)}))
    for force in (1.0, 2.5, 3.0):
        rows.append((f'rig, force noise {force:g} N', {**rig, 'contact_force_noise': force}))
    for sigma in (0.001, 0.003, 0.01, 0.03, 0.1):
        joint = sigma / BOOM_RADIUS_M
        rows.append((f'rig + velocity noise {sigma:g} m/s', {
            **rig, 'joint_velocity_noise': [sigma, sigma, joint, joint]}))
    for periods in (1, 2, 5, 10):
        rows.append((f'rig + latency {periods} ms', {
            **rig, 'joint_state_latency': periods, 'contact_force_latency': periods}))
    return rows


def worst(kind: str, sensors: dict, seeds: int, metrics: tuple, failures: list):
    """Return the worst value of each metric over the seeds, or None if a seed failed."""
    spec = hopper.SCENARIOS[kind]
    out = {}
    for seed in range(seeds):
        configs = build_configs(hopper.SECTIONS, {'simulator': {**sensors, 'sensor_seed': seed}})
        try:
            result = spec.run(configs, dict(spec.options), Perturbation())
        except ScenarioFailed as failure:
            failures.append(f'{kind}, seed {seed}: {failure}')
            return None
        for name in metrics:
            pick = min if name == 'hops' else max
            out[name] = pick(out.get(name, result[name]), result[name])
    return out


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[1])
    parser.add_argument('--seeds', type=int, default=3, help='seeds per row (worst shown)')
    args = parser.parse_args(argv)
    started = time.perf_counter()
    print(f'load average {os.getloadavg()[0]:.1f}; {args.seeds} seed(s) per row, worst shown')
    print('| sensors | apex height error, mm | apex x error, mm | hops (10 s) | '
          'speed error at 1 m/s, mm/s |')
    print('|---|---|---|---|---|')
    failures = []
    for label, sensors in models():
        failed = len(failures)
        hold = worst('hold', sensors, args.seeds,
                     ('apex_height_error_max_m', 'apex_x_error_max_m', 'hops'), failures)
        run = worst('velocity', sensors, args.seeds, ('velocity_error_max_mps',), failures)
        cells = (['failed'] * 3 if hold is None else
                 [f"{1e3 * hold['apex_height_error_max_m']:.1f}",
                  f"{1e3 * hold['apex_x_error_max_m']:.1f}", f"{hold['hops']:.0f}"])
        cells.append('failed' if run is None else
                     f"{1e3 * run['velocity_error_max_mps']:.1f}")
        print(f"| {label} | {' | '.join(cells)} |", flush=True)
        failures[failed:] = [f'{label}: {why}' for why in failures[failed:]]
    for why in failures:
        print(f'failed: {why}')
    print(f'({time.perf_counter() - started:.0f} s)')
    return 0


if __name__ == '__main__':
    sys.exit(main())
