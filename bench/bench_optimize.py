#!/usr/bin/env python3
"""Benchmark: hopper rollouts per second per core (pure cores, no ROS) and the speed-up of
``dodo optimize`` with 1 and 2 worker processes (ideal: linear). Prints numbers, asserts nothing.

    python bench/bench_optimize.py [--trials 8] [--duration 2.0]

1. Rollouts: the ``hold`` scenario of the hopper (dodo_control.scenarios.hopper: simulator core +
   SLIP controller + measurement) for ``--duration`` simulated seconds, each integrator, in this
   process: rollouts/s and the real-time factor.
2. Workers: the same study (``--trials`` trials of one such rollout each) with ``--workers 1`` and
   ``--workers 2`` on a journal file in a temporary directory; wall time from start to the last
   trial (worker process start-up included) and from the first trial's start to the last one's
   end (rollouts per wall second). Speed-up = time(1 worker) / time(2 workers); 2.0 is linear. On a shared 2-core machine other
   load lowers it: the load average is printed next to it.
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from dodo_control.scenarios import Perturbation, build_configs  # noqa: E402
from dodo_control.scenarios import hopper  # noqa: E402
from dodo_sim.tools import optimize  # noqa: E402

STUDY = """
name: bench
robot: hopper
sampler: random
seed: 1
trials: {trials}
parameters:
  controller:
    position_kp: {{low: 0.6, high: 1.2}}
scenarios:
  - {{kind: hold, duration_s: {duration}, skip_hops: 0}}
perturbations:
  simulator.integrator: [timestepping]
objectives:
  - {{metric: apex_x_error_max_m}}
"""


def rollouts_per_second(integrator: str, duration: float, repeats: int) -> tuple:
    scenario = hopper.SCENARIOS['hold']
    pert = Perturbation(integrator, {'simulator': {'integrator': integrator}})
    options = {**scenario.options, 'duration_s': duration, 'skip_hops': 0}
    start = time.perf_counter()
    for _ in range(repeats):
        scenario.run(build_configs(hopper.SECTIONS, {}, pert), options, pert)
    wall = time.perf_counter() - start
    return repeats / wall, repeats * duration / wall


def study_wall(workers: int, trials: int, duration: float) -> tuple:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / 'bench.yaml'
        path.write_text(STUDY.format(trials=trials, duration=duration))
        study = optimize.load_study(path)
        start = time.perf_counter()
        opt = optimize.run_study(study, f'journal:{Path(tmp) / "bench.journal"}', workers,
                                 trials, progress=False)
        wall = time.perf_counter() - start
        done = [t for t in opt.trials if t.state.name == 'COMPLETE']
        eval_s = sum(t.user_attrs['wall_s'] for t in done)
        span = (max(t.datetime_complete for t in done)
                - min(t.datetime_start for t in done)).total_seconds()
    return wall, len(done), eval_s, span


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--trials', type=int, default=8, help='trials per worker setting')
    parser.add_argument('--duration', type=float, default=2.0, help='simulated s per rollout')
    args = parser.parse_args(argv)
    print(f'dodo optimize bench: hopper hold scenario, {args.duration} s simulated per rollout, '
          f'{os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f}')
    for integrator in ('timestepping', 'event'):
        rate, rtf = rollouts_per_second(integrator, args.duration, 3)
        print(f'  {integrator:12s}: {rate:6.2f} rollouts/s on one core '
              f'(real-time factor {rtf:5.1f}, incl. model build and measurement)')
    walls, spans = {}, {}
    for workers in (1, 2):
        wall, done, eval_s, span = study_wall(workers, args.trials, args.duration)
        walls[workers], spans[workers] = wall, span
        print(f'  --workers {workers}: {done} trials in {wall:6.1f} s wall incl. start-up, '
              f'{span:6.1f} s first trial start to last trial end ({done / span:5.2f} '
              f'rollouts/s; {eval_s:6.1f} s spent evaluating; load average '
              f'{os.getloadavg()[0]:.1f})')
    print(f'  speed-up 2 workers vs 1: {walls[1] / walls[2]:.2f} incl. process start-up, '
          f'{spans[1] / spans[2]:.2f} trials only (linear: 2.00)')
    return 0


if __name__ == '__main__':
    sys.exit(main())
