#!/usr/bin/env python3
# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
Benchmark: rollouts per second per core (pure cores, no ROS) of the hopper and the Kneed Walker.

It also gives the speed-up of ``dodo optimize`` with 1 and 2 worker processes (ideal: linear).
Prints a table with the robots side by side; asserts nothing.

    python bench/bench_optimize.py [--trials 8] [--duration 2.0] [--robots hopper walker]

1. Rollouts: one scenario of each robot's scenario module (dodo_control.scenarios: the hopper's
   ``hold`` — simulator core + SLIP controller + measurement; the walker's ``walk`` — simulator
   core + pulse controller + fall judge + step count) for ``--duration`` simulated seconds, each
   integrator, in this process: the first rollout (a fresh process loads the compiled physics,
   builds the model) timed alone, then rollouts/s on one core over ``--repeats`` rollouts (model
   build and measurement included) and the real-time factor (simulated s per wall s); also per
   CPU second of this process, which other load on a shared machine changes much less.
2. Workers: a study of ``--trials`` trials of one such rollout each (timestepping), run as
   ``dodo optimize --workers 1`` and ``--workers 2`` in a fresh process each (as a user runs it) on
   a journal file in a temporary directory: the command's wall time (process start-up included),
   and the steady rate: trials after each worker's first one per second, from the end of the last
   worker's first trial to the end of the last trial. Speed-up = wall(1) / wall(2) and
   rate(2) / rate(1); 2.00 is linear. On a shared 2-core machine other load lowers it: the load
   average is printed with each number.
"""
from __future__ import annotations

import argparse
import os
from pathlib import Path
import subprocess
import sys
import tempfile
import time

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from dodo_control.scenarios import build_configs, Perturbation, robot_module  # noqa: E402
from dodo_sim.tools.optimize_run import open_study  # noqa: E402
from dodo_sim.tools.optimize_study import load_study  # noqa: E402

#: robot -> (scenario kind, its options for the bench, a tuned parameter: 'name: {low, high}',
#: the objective metric)
ROBOTS = {
    'hopper': ('hold', {'skip_hops': 0}, 'position_kp: {low: 0.6, high: 1.2}',
               'apex_x_error_max_m'),
    'walker': ('walk', {'settle_steps': 0}, 'pulse_amplitude_nm[2]: {low: -1.5, high: -0.5}',
               'cost_of_transport'),
}

STUDY = """
name: bench_{robot}
robot: {robot}
sampler: random
seed: 1
trials: {trials}
parameters:
  controller:
    {parameter}
scenarios:
  - {{kind: {kind}, duration_s: {duration}, {options}}}
perturbations:
  simulator.integrator: [timestepping]
objectives:
  - {{metric: {metric}}}
"""


def rollouts_per_second(robot: str, integrator: str, duration: float, repeats: int) -> tuple:
    """
    Time ``repeats`` rollouts in this process after a first one.

    Returns (first rollout s, rollouts/s, real-time factor, rollouts per CPU s); the rates are of
    the ``repeats`` rollouts after the first.
    """
    module = robot_module(robot)
    kind, options, _, _ = ROBOTS[robot]
    scenario = module.SCENARIOS[kind]
    pert = Perturbation(integrator, {'simulator': {'integrator': integrator}})
    options = {**scenario.options, **options, 'duration_s': duration}
    start = time.perf_counter()
    scenario.run(build_configs(module.SECTIONS, {}, pert), options, pert)
    first = time.perf_counter() - start
    start, cpu = time.perf_counter(), time.process_time()
    for _ in range(repeats):
        scenario.run(build_configs(module.SECTIONS, {}, pert), options, pert)
    wall, cpu = time.perf_counter() - start, time.process_time() - cpu
    return first, repeats / wall, repeats * duration / wall, repeats / cpu


def study_wall(robot: str, workers: int, trials: int, duration: float) -> tuple:
    """
    Measure ``dodo optimize --workers N`` in a fresh process.

    Returns (command wall s incl. start-up, complete trials, steady rate trials/s, distinct
    parameter sets among the complete trials).
    """
    kind, options, parameter, metric = ROBOTS[robot]
    text = STUDY.format(robot=robot, trials=trials, parameter=parameter, kind=kind,
                        duration=duration, metric=metric,
                        options=', '.join(f'{k}: {v}' for k, v in options.items()))
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / 'bench.yaml'
        path.write_text(text)
        storage = f'journal:{Path(tmp) / "bench.journal"}'
        start = time.perf_counter()
        subprocess.run([sys.executable, '-m', 'dodo_sim.tools.cli', 'optimize', str(path),
                        '--workers', str(workers), '--storage', storage, '--out',
                        str(Path(tmp) / 'out'), '--no-progress'], check=True, cwd=tmp,
                       stdout=subprocess.DEVNULL)
        wall = time.perf_counter() - start
        opt = open_study(load_study(path), storage, create=False)
        done = sorted((t for t in opt.trials if t.state.name == 'COMPLETE'),
                      key=lambda t: t.datetime_start)
        first: dict = {}
        for t in done:
            first.setdefault(t.user_attrs['worker'], t)
        steady = [t for t in done if t not in first.values()]
        begin = max(t.datetime_complete for t in first.values())
        span = (max(t.datetime_complete for t in done) - begin).total_seconds()
        rate = sum(t.datetime_start >= begin for t in steady) / span if span > 0 else float('nan')
        distinct = len({tuple(sorted(t.params.items())) for t in done})
    return wall, len(done), rate, distinct


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--trials', type=int, default=24, help='trials per worker setting')
    parser.add_argument('--duration', type=float, default=2.0, help='simulated s per rollout')
    parser.add_argument('--repeats', type=int, default=3, help='rollouts per integrator')
    parser.add_argument('--robots', nargs='+', default=list(ROBOTS), choices=list(ROBOTS))
    args = parser.parse_args(argv)
    print(f'dodo optimize bench: {args.duration} s simulated per rollout, {os.cpu_count()} '
          f'cores, load average {os.getloadavg()[0]:.1f}')
    rows: dict = {}

    def put(label, robot, text):
        rows.setdefault(label, {})[robot] = text

    def measured(robot, line, cells):
        """Print ``line`` with the load average; put ``cells(load)`` (label: text) in the table."""
        load = f'{os.getloadavg()[0]:.1f}'
        print(f'  {robot} {line} (load {load})', flush=True)
        for label, text in cells(load).items():
            put(label, robot, text)

    for robot in args.robots:
        kind = ROBOTS[robot][0]
        for integrator in ('timestepping', 'event'):
            first, rate, rtf, per_cpu = rollouts_per_second(robot, integrator, args.duration,
                                                            args.repeats)
            measured(robot, f'{kind} {integrator}: first rollout {first:.2f} s, then {rate:.3f} '
                     f'rollouts/s on one core ({per_cpu:.3f} per CPU s), real-time factor '
                     f'{rtf:.2f}', lambda load: {
                         f'first rollout in this process (s), {integrator}': f'{first:.2f}',
                         f'rollouts/s per core, {integrator}': f'{rate:.3f}',
                         f'real-time factor, {integrator}': f'{rtf:.2f}',
                         f'rollouts per CPU s, {integrator}': f'{per_cpu:.3f}',
                         f'load average (1 min), {integrator}': load})
        walls, rates = {}, {}
        for workers in (1, 2):
            wall, done, rate, distinct = study_wall(robot, workers, args.trials, args.duration)
            walls[workers], rates[workers] = wall, rate
            measured(robot, f'dodo optimize --workers {workers}: {done} trials ({distinct} '
                     f'distinct parameter sets) in {wall:.1f} s wall incl. start-up; steady '
                     f'{rate:.2f} rollouts/s', lambda load: {
                         f'--workers {workers}: distinct points / trials': f'{distinct}/{done}',
                         f'--workers {workers}: load average (1 min)': load,
                         f'--workers {workers}: wall s incl. start-up': f'{wall:.1f}',
                         f'--workers {workers}: steady rollouts/s': f'{rate:.2f}'})
        put('speed-up 2 vs 1 workers, wall incl. start-up', robot, f'{walls[1] / walls[2]:.2f}')
        put('speed-up 2 vs 1 workers, steady rate', robot, f'{rates[2] / rates[1]:.2f}')
        put('scenario', robot, kind)
    print(f'\n| {"":48s} | ' + ' | '.join(f'{r:>10s}' for r in args.robots) + ' |')
    print(f'|{"-" * 50}|' + '|'.join('-' * 12 for _ in args.robots) + '|')
    order = ['scenario'] + [k for k in rows if k != 'scenario']
    for label in order:
        print(f'| {label:48s} | ' + ' | '.join(f'{rows[label].get(r, ""):>10s}'
                                               for r in args.robots) + ' |')
    print(f'(linear speed-up: 2.00; load average at the end {os.getloadavg()[0]:.1f})')
    return 0


if __name__ == '__main__':
    sys.exit(main())
