#!/usr/bin/env python3
"""Benchmark: Controller.update per phase next to Simulator.step, and the closed-loop real-time
factor of sim + controller without ROS. Prints numbers, asserts nothing.

    python bench/bench_controller.py [--duration 5] [--policy cascade|raibert|deadbeat]

For each integrator it runs the controller hopping in place (or at a velocity with --velocity)
and reports, in microseconds, the median / 99th percentile / max time of ``Controller.update``
in flight and in stance ticks, of the event ticks (touchdown and apex: the apex tick runs the
once-per-hop flight-policy solve), and of ``Simulator.step`` measured in the same loop; then the
ratio controller/simulator and the real-time factor (simulated s per wall-clock s; > 1 is faster
than real time) of the closed loop.
"""
from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from dodo_control.controller import Controller, ControllerConfig  # noqa: E402
from dodo_sim.simulator import SimConfig, Simulator  # noqa: E402

URDF = REPO / 'urdf' / 'hopper.urdf.xacro'


def stats(samples_s) -> str:
    if not samples_s:
        return '        -'
    us = np.asarray(samples_s) * 1e6
    return (f'{np.median(us):8.1f} {np.percentile(us, 99):8.1f} {us.max():9.1f} '
            f'(n={us.size})')


def run(integrator: str, duration: float, ctrl_cfg: ControllerConfig) -> dict:
    sim = Simulator(URDF, SimConfig(integrator=integrator, initial_q=(0.0, 1.2, 0.3, -0.6)))
    ctrl = Controller(URDF, ctrl_cfg)
    state = sim.state
    times = {'flight': [], 'stance': [], 'touchdown': [], 'apex': [], 'sim': []}
    n = int(round(duration / sim.config.control_period))
    clock = time.perf_counter
    start = clock()
    for _ in range(n):
        t0 = clock()
        tau = ctrl.update(state.t, state.q, state.v, state.contact_force)
        t1 = clock()
        state = sim.step(tau)
        t2 = clock()
        tel = ctrl.telemetry
        if 'apex' in tel.events:
            times['apex'].append(t1 - t0)
        elif 'touchdown' in tel.events:
            times['touchdown'].append(t1 - t0)
        else:
            times[tel.phase].append(t1 - t0)
        times['sim'].append(t2 - t1)
    wall = clock() - start
    times['rtf'] = state.t / wall
    times['hops'] = ctrl.telemetry.hops
    return times


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--duration', type=float, default=5.0, help='simulated seconds per run')
    parser.add_argument('--policy', default='cascade', choices=('cascade', 'raibert', 'deadbeat'))
    parser.add_argument('--velocity', type=float, default=math.nan,
                        help='run at this velocity set-point instead of hopping in place')
    args = parser.parse_args(argv)
    if math.isnan(args.velocity):
        cfg = ControllerConfig(target_velocity=0.0, flight_policy=args.policy)
        what = 'hopping in place (velocity mode, 0 m/s)'
    else:
        cfg = ControllerConfig(target_velocity=args.velocity, flight_policy=args.policy)
        what = f'running at {args.velocity} m/s'
    print(f'dodo_control bench: {what}, policy {args.policy}, {args.duration} s simulated per '
          f'integrator, control period 1 ms')
    print(f'{"":24s} {"median":>8s} {"p99":>8s} {"max":>9s}   [us]')
    for integrator in ('timestepping', 'event'):
        times = run(integrator, args.duration, cfg)
        print(f'-- integrator {integrator} ({times["hops"]} hops)')
        for key, label in (('flight', 'update, flight tick'), ('stance', 'update, stance tick'),
                           ('touchdown', 'update, touchdown tick'),
                           ('apex', 'update, apex tick'), ('sim', 'Simulator.step')):
            print(f'{label:24s} {stats(times[key])}')
        ctrl_all = np.concatenate([times[k] for k in ('flight', 'stance', 'touchdown', 'apex')])
        ratio = float(np.mean(ctrl_all) / np.mean(times['sim']))
        print(f'controller / simulator mean time per tick: {ratio:.2f}')
        print(f'closed-loop real-time factor (sim + controller, no ROS): {times["rtf"]:.2f}')
    return 0


if __name__ == '__main__':
    sys.exit(main())
