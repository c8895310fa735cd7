#!/usr/bin/env python3
# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
Benchmark: the closed loop without ROS, per step and per rollout, against a reference checkout.

    python bench/bench_closed_loop.py [--reference PATH] [--rounds 2] [--duration 2.0]

Measures, in a fresh process per tree and round (rounds alternate the trees, so load hits both
alike), on CPU time of the measuring process (what the loop costs; the wall clock of a shared
machine is stretched by other processes):

* ``Controller.update`` of the SLIP hopper per tick: the median of the ticks without a hop event
  or spread apex work, and the mean over all ticks (events, the apex solves and the start-up
  work included), replaying a recorded run's inputs into a fresh controller; the walker's
  ``WalkerController.update`` the same way;
* the ``rollout`` loop's own bookkeeping per step: a recorded run replayed through ``rollout``
  with a simulator that returns the recorded states and a policy that returns a constant torque;
* the closed loop (``rollout`` of the simulator and the controller) per step and its real-time
  factor: hopper time-stepping, hopper event-driven, walker;
* rollouts per second on one core of a 2 s scenario (``dodo_control.scenarios``: the hopper's
  ``hold``, the walker's ``walk``; model build and measurement included, as ``dodo optimize``
  runs a trial), both integrators.

With ``--reference`` (another checkout of dodo_sim, e.g. main) the same measurements run on its
code and the table shows the ratios reference / this. Prints numbers, asserts nothing.
"""
from __future__ import annotations

import argparse
import json
import os
from pathlib import Path
import statistics
import subprocess
import sys
import time

REPO = Path(__file__).resolve().parent.parent
START_Q = (0.0, 1.2, 0.3, -0.6)


def _clock() -> float:
    return time.process_time()


def _hopper(integrator: str):
    from dodo_control.controller import Controller, ControllerConfig
    from dodo_sim.paths import default_urdf_path
    from dodo_sim.simulator import SimConfig, Simulator
    urdf = default_urdf_path().parent / 'hopper.urdf.xacro'
    return (Simulator(urdf, SimConfig(integrator=integrator, initial_q=START_Q)),
            Controller(urdf, ControllerConfig(target_velocity=0.0)))


def _walker(integrator: str):
    from dodo_control.scenarios import build_configs, Perturbation
    from dodo_control.scenarios import walker as scenario
    from dodo_control.walker.controller import WalkerController
    from dodo_control.walker.outcome import config_on_terrain
    from dodo_sim.model import robot_description_xml
    from dodo_sim.simulator import Simulator
    pert = Perturbation(integrator, {'simulator': {'integrator': integrator}})
    configs = build_configs(scenario.SECTIONS, {}, pert)
    xml = robot_description_xml(scenario.URDF, None)
    ctrl = WalkerController(configs['controller'])
    sim = Simulator(xml, config_on_terrain(xml, scenario.simulator_config(configs['simulator']),
                                           ctrl.config.initial_stance_frame))
    return sim, ctrl


def _update_costs(make, duration: float) -> dict:
    """Time update in us: median of plain ticks, mean of all (a recorded run's inputs)."""
    from dodo_sim.rollout import rollout
    sim, ctrl = make()
    run = rollout(sim, ctrl, duration_s=duration)
    sim, ctrl = make()
    frames = tuple(sim.contact_frames)
    rows = [frames.index(f) for f in ctrl.contact_frames]
    forces = run.contact_forces[:, rows].copy()
    stamps = [int(round(t * 1e9)) * 1e-9 for t in run.t]
    q, v = run.q.copy(), run.v.copy()
    plain, total = [], 0.0
    busy = getattr(ctrl, 'busy', None) is not None
    for k in range(run.ticks):
        was_busy = ctrl.busy if busy else False
        start = time.thread_time_ns()
        ctrl.update(stamps[k], q[k], v[k], forces[k])
        spent = time.thread_time_ns() - start
        total += spent
        events = getattr(ctrl.telemetry, 'events', ())
        if not events and not was_busy and not (busy and ctrl.busy):
            plain.append(spent)
    return {'plain': statistics.median(plain) / 1e3, 'mean': total / run.ticks / 1e3}


class _Replay:
    """A simulator that replays recorded states (the rollout loop's own cost, nothing else)."""

    def __init__(self, states, config, contact_frames):
        self._states, self.config, self.contact_frames = states, config, contact_frames
        self.state, self._next = states[0], 1

    def step(self, tau):
        state = self.state = self._states[self._next]
        self._next += 1
        return state


class _Constant:
    """A policy that returns one torque."""

    def __init__(self, tau, contact_frames):
        self._tau, self.contact_frames = tau, contact_frames

    def update(self, t, q, v, force):
        return self._tau


def _loop_cost(make, duration: float) -> float:
    """Time rollout's own bookkeeping in us per step (a replayed run, a constant policy)."""
    from dodo_sim.rollout import rollout
    sim, ctrl = make()
    run = rollout(sim, ctrl, duration_s=duration, keep_states=True)
    best = float('inf')
    for _ in range(5):
        replay = _Replay(run.states, sim.config, sim.contact_frames)
        policy = _Constant(run.tau[0].copy(), ctrl.contact_frames)
        start = _clock()
        rollout(replay, policy, steps=run.ticks)
        best = min(best, (_clock() - start) / run.ticks * 1e6)
    return best


def _closed_loop(make, duration: float) -> dict:
    from dodo_sim.rollout import rollout
    sim, ctrl = make()
    start, wall = _clock(), time.perf_counter()
    run = rollout(sim, ctrl, duration_s=duration)
    cpu, wall = _clock() - start, time.perf_counter() - wall
    return {'us': cpu / run.ticks * 1e6, 'rtf': run.t[-1] / cpu, 'rtf_wall': run.t[-1] / wall}


def _rollouts_per_second(robot: str, integrator: str, duration: float, repeats: int) -> float:
    from dodo_control.scenarios import build_configs, Perturbation, robot_module
    module = robot_module(robot)
    kind, options = {'hopper': ('hold', {'skip_hops': 0}),
                     'walker': ('walk', {'settle_steps': 0})}[robot]
    scenario = module.SCENARIOS[kind]
    pert = Perturbation(integrator, {'simulator': {'integrator': integrator}})
    options = {**scenario.options, **options, 'duration_s': duration}
    scenario.run(build_configs(module.SECTIONS, {}, pert), options, pert)   # loads, builds
    start = _clock()
    for _ in range(repeats):
        scenario.run(build_configs(module.SECTIONS, {}, pert), options, pert)
    return repeats / (_clock() - start)


def measure(duration: float, repeats: int) -> dict:
    """Every number of the table, in this process (the tree on sys.path)."""
    out = {}
    cases = (('hopper time-stepping', lambda: _hopper('timestepping')),
             ('hopper event', lambda: _hopper('event')),
             ('walker time-stepping', lambda: _walker('timestepping')))
    for label, make in cases:
        if label != 'hopper event':
            costs = _update_costs(make, duration)
            out[f'update, plain tick (us), {label}'] = costs['plain']
            out[f'update, mean of all ticks (us), {label}'] = costs['mean']
            out[f'rollout loop bookkeeping (us/step), {label}'] = _loop_cost(make, duration)
        loop = _closed_loop(make, duration)
        out[f'closed loop (us/step, CPU), {label}'] = loop['us']
        out[f'real-time factor (CPU), {label}'] = loop['rtf']
        out[f'real-time factor (wall), {label}'] = loop['rtf_wall']
    for robot in ('hopper', 'walker'):
        for integrator in ('timestepping', 'event'):
            out[f'{robot} {duration:g} s rollouts/s per core, {integrator}'] = \
                _rollouts_per_second(robot, integrator, duration, repeats)
    out['load average (1 min)'] = os.getloadavg()[0]
    return out


def _child(tree: Path, duration: float, repeats: int) -> dict:
    env = {**os.environ, 'PYTHONPATH': str(tree)}
    proc = subprocess.run([sys.executable, str(Path(__file__).resolve()), '--child',
                           '--duration', str(duration), '--repeats', str(repeats)],
                          env=env, cwd=tree, capture_output=True, text=True, check=True)
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--reference', type=Path, default=None,
                        help='another checkout of dodo_sim to measure side by side')
    parser.add_argument('--rounds', type=int, default=2, help='alternating rounds per tree')
    parser.add_argument('--duration', type=float, default=2.0, help='simulated s per run')
    parser.add_argument('--repeats', type=int, default=3, help='rollouts per rate')
    parser.add_argument('--child', action='store_true', help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        print(json.dumps(measure(args.duration, args.repeats)))
        return 0
    trees = [('this', REPO)] + ([('reference', args.reference.resolve())]
                                if args.reference else [])
    runs: dict = {name: [] for name, _ in trees}
    print(f'closed-loop bench: {args.duration} s per run, {args.rounds} round(s), '
          f'{os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f}', flush=True)
    for round_ in range(args.rounds):
        for name, tree in (trees if round_ % 2 == 0 else trees[::-1]):
            runs[name].append(_child(tree, args.duration, args.repeats))
            print(f'  round {round_ + 1}: {name} ({tree}) done, load '
                  f'{os.getloadavg()[0]:.1f}', flush=True)
    keys = list(runs['this'][0])
    median = {name: {k: statistics.median(r[k] for r in rs) for k in keys}
              for name, rs in runs.items()}
    header = f'| {"median over rounds":60s} | {"this":>9s} |'
    if args.reference:
        header += f' {"reference":>9s} | {"speed-up":>8s} |'
    print('\n' + header)
    print('|' + '-' * 62 + '|' + '-' * 11 + '|' + ('-' * 11 + '|' + '-' * 10 + '|'
                                                   if args.reference else ''))
    for key in keys:
        this = median['this'][key]
        row = f'| {key:60s} | {this:9.2f} |'
        if args.reference:
            ref = median['reference'][key]
            if key.startswith('load'):
                speedup = '-'
            elif '(us' in key:                      # a time: less is faster
                speedup = f'{ref / this:.2f}'
            else:                                   # a rate
                speedup = f'{this / ref:.2f}'
            row += f' {ref:9.2f} | {speedup:>8s} |'
        print(row)
    if args.reference:
        print('(speed-up of this tree over the reference: reference / this for times, this / '
              'reference for real-time factors and rates)')
    return 0


if __name__ == '__main__':
    sys.exit(main())
