#!/usr/bin/env python3
# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
Benchmark: Controller.update per phase next to Simulator.step.

It also gives the closed-loop real-time factor of sim + controller without ROS. Prints numbers,
asserts nothing.

    python bench/bench_controller.py [--duration 5] [--policy cascade|raibert|deadbeat]
                                     [--repeats 5]

For each integrator it runs the controller hopping in place (or at a velocity with --velocity)
and reports, in microseconds, the median / 99th percentile / max time of ``Controller.update``
in flight and in stance ticks, of the event ticks (touchdown and apex: the apex tick runs the
once-per-hop flight-policy solve), and of ``Simulator.step`` measured in the same loop; then the
ratio controller/simulator and the real-time factor (simulated s per wall-clock s; > 1 is faster
than real time) of the closed loop.

Then the closed loop as users run it (plain ``rollout``, no timing wrappers), side by side in
the same run: the controller's tick terms from the compiled kernel
(``dodo_sim.physics.kernels.point_terms``, the default) and from the seven pinocchio calls
(``RobotDynamics.use_compiled(False)``), runs interleaved, median over ``--repeats``; wall-clock
RTF and CPU-time RTF (simulated s per s of this thread's CPU time: what the loop costs, less
sensitive to other processes on a loaded machine). The load average is printed with it.

Side by side in the same run, on the same states: the torque law's cost on the controller's fast
path (``RobotDynamics.tick_terms`` + the scalar ``slip_torque_tick`` / ``flight_foot_torque_tick``)
and on the matrix forms it replaced (``RobotDynamics.terms`` + ``slip_torque`` /
``flight_foot_torque``, numpy), with their ratio.
"""
from __future__ import annotations

import argparse
import math
import os
from pathlib import Path
import sys
import time

import numpy as np

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

# These imports must follow the sys.path change above (E402), so they cannot take their
# place in the sorted import block (I100).
from dodo_control.controller import Controller, ControllerConfig  # noqa: E402, I100
from dodo_control.slip.stance import (flight_foot_torque, flight_foot_torque_tick,  # noqa: E402
                                      slip_torque, slip_torque_tick)
from dodo_sim.rollout import rollout  # noqa: E402
from dodo_sim.simulator import SimConfig, Simulator  # noqa: E402

URDF = REPO / 'urdf' / 'hopper.urdf.xacro'


def stats(samples_s) -> str:
    if len(samples_s) == 0:
        return '        -'
    us = np.asarray(samples_s) * 1e6
    return (f'{np.median(us):8.1f} {np.percentile(us, 99):8.1f} {us.max():9.1f} '
            f'(n={us.size})')


class _Timed:
    """Wraps the controller and the simulator for :func:`rollout`, timing each call."""

    def __init__(self, sim, ctrl):
        self.sim, self.ctrl = sim, ctrl
        self.times = {'first': [], 'flight': [], 'stance': [], 'touchdown': [], 'apex': [],
                      'apex_solve': [], 'sim': [], 'law_tick': [], 'law_matrix': []}
        self.cpu = {key: [] for key in self.times}    # thread CPU time of the same calls, s

    # the policy side
    def update(self, t, q, v, force):
        first = not any(self.times[k] for k in ('first', 'flight', 'stance'))
        solving = getattr(self.ctrl, '_apex_job', None) is not None   # the spread apex solve
        c0, t0 = time.thread_time(), time.perf_counter()
        tau = self.ctrl.update(t, q, v, force)
        elapsed, cpu = time.perf_counter() - t0, time.thread_time() - c0
        tel = self.ctrl.telemetry
        key = ('first' if first else 'apex' if 'apex' in tel.events
               else 'touchdown' if 'touchdown' in tel.events
               else 'apex_solve' if solving else tel.phase)
        self.times[key].append(elapsed)
        self.cpu[key].append(cpu)
        self._time_laws(q, v, tel)
        return tau

    def _time_laws(self, q, v, tel):
        """
        Evaluate the torque law of this tick on both paths.

        The two paths are the fast path and the matrix forms; both get the same state.
        """
        dyn, accel = self.ctrl.dyn, (1.0, -2.0)
        stance = tel.phase == 'stance'
        t0 = time.perf_counter()
        tt = dyn.tick_terms(q, v)
        (slip_torque_tick if stance else flight_foot_torque_tick)(tt.values, *accel)
        t1 = time.perf_counter()
        terms = dyn.terms(q, v)
        (slip_torque if stance else flight_foot_torque)(terms, np.array(accel))
        t2 = time.perf_counter()
        self.times['law_tick'].append(t1 - t0)
        self.times['law_matrix'].append(t2 - t1)

    # the simulator side
    @property
    def state(self):
        return self.sim.state

    @property
    def config(self):
        return self.sim.config

    @property
    def contact_frames(self):
        return self.sim.contact_frames

    def step(self, tau):
        t0 = time.perf_counter()
        state = self.sim.step(tau)
        self.times['sim'].append(time.perf_counter() - t0)
        return state


def run(integrator: str, duration: float, ctrl_cfg: ControllerConfig) -> dict:
    sim = Simulator(URDF, SimConfig(integrator=integrator, initial_q=(0.0, 1.2, 0.3, -0.6)))
    ctrl = Controller(URDF, ctrl_cfg)
    timed = _Timed(sim, ctrl)
    start = time.perf_counter()
    result = rollout(timed, timed, duration_s=duration)
    wall = time.perf_counter() - start
    times = timed.times
    times['cpu'] = timed.cpu
    # the side-by-side law timing is not part of the closed loop
    times['rtf'] = result.t[-1] / (wall - sum(times['law_tick']) - sum(times['law_matrix']))
    times['hops'] = ctrl.telemetry.hops
    return times


def closed_loop_rtf(integrator: str, duration: float, ctrl_cfg: ControllerConfig,
                    compiled_terms: bool) -> tuple[float, float]:
    """(wall-clock RTF, CPU-time RTF) of one plain rollout (no timing wrappers)."""
    sim = Simulator(URDF, SimConfig(integrator=integrator, initial_q=(0.0, 1.2, 0.3, -0.6)))
    ctrl = Controller(URDF, ctrl_cfg)
    if ctrl.dyn.use_compiled(compiled_terms) != compiled_terms:
        raise RuntimeError('the compiled controller terms are not available (numba?)')
    wall0, cpu0 = time.perf_counter(), time.thread_time()
    result = rollout(sim, ctrl, duration_s=duration)
    wall, cpu = time.perf_counter() - wall0, time.thread_time() - cpu0
    return result.t[-1] / wall, result.t[-1] / cpu


def side_by_side(integrator: str, duration: float, ctrl_cfg: ControllerConfig,
                 repeats: int) -> None:
    runs = {False: [], True: []}
    for _ in range(repeats):
        for compiled in (False, True):
            runs[compiled].append(closed_loop_rtf(integrator, duration, ctrl_cfg, compiled))
    medians = {}
    for compiled, label in ((False, 'pinocchio terms'), (True, 'compiled terms')):
        wall = float(np.median([r[0] for r in runs[compiled]]))
        cpu = float(np.median([r[1] for r in runs[compiled]]))
        medians[compiled] = (wall, cpu)
        print(f'  {label:16s} RTF wall {wall:6.2f}   CPU {cpu:6.2f}   '
              f'(best wall {max(r[0] for r in runs[compiled]):.2f}, {repeats} runs)')
    print(f'  compiled / pinocchio: wall {medians[True][0] / medians[False][0]:.2f}, '
          f'CPU {medians[True][1] / medians[False][1]:.2f}')


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--duration', type=float, default=5.0, help='simulated seconds per run')
    parser.add_argument('--policy', default='cascade', choices=('cascade', 'raibert', 'deadbeat'))
    parser.add_argument('--velocity', type=float, default=math.nan,
                        help='run at this velocity set-point instead of hopping in place')
    parser.add_argument('--repeats', type=int, default=5,
                        help='interleaved plain-rollout runs per variant (side-by-side RTF)')
    args = parser.parse_args(argv)
    if math.isnan(args.velocity):
        cfg = ControllerConfig(target_velocity=0.0, flight_policy=args.policy)
        what = 'hopping in place (velocity mode, 0 m/s)'
    else:
        cfg = ControllerConfig(target_velocity=args.velocity, flight_policy=args.policy)
        what = f'running at {args.velocity} m/s'
    print(f'dodo_control bench: {what}, policy {args.policy}, {args.duration} s simulated per '
          f'integrator, control period 1 ms')
    print(f'{"":24s} {"median":>8s} {"p99":>8s} {"max":>9s}   [us]   wall clock, then thread '
          f'CPU time (what the tick costs: not stretched by other processes)')
    for integrator in ('timestepping', 'event'):
        times = run(integrator, args.duration, cfg)
        print(f'-- integrator {integrator} ({times["hops"]} hops)')
        for key, label in (('first', 'update, first tick'),
                           ('flight', 'update, flight tick'), ('stance', 'update, stance tick'),
                           ('touchdown', 'update, touchdown tick'),
                           ('apex', 'update, apex tick'), ('apex_solve', 'update, apex solve'),
                           ('sim', 'Simulator.step')):
            print(f'{label:24s} {stats(times[key])}  CPU {stats(times["cpu"][key])}')
        ticks = ['flight', 'stance', 'touchdown', 'apex', 'apex_solve']
        every = np.concatenate([times['cpu'][k] for k in ticks if times['cpu'][k]])
        print(f'every tick after the first, CPU: {stats(every)}; ticks above 0.5 ms: '
              f'{int(np.sum(every > 0.5e-3))}')
        for key, label in (('law_tick', 'law, tick path'), ('law_matrix', 'law, matrix forms')):
            print(f'{label:24s} {stats(times[key])}')
        print(f'torque law matrix forms / tick path (median): '
              f'{np.median(times["law_matrix"]) / np.median(times["law_tick"]):.2f}')
        ctrl_all = np.concatenate([times[k] for k in ('flight', 'stance', 'touchdown', 'apex',
                                                      'apex_solve') if times[k]])
        ratio = float(np.mean(ctrl_all) / np.mean(times['sim']))
        print(f'controller / simulator mean time per tick: {ratio:.2f} '
              f'(controller mean {1e6 * np.mean(ctrl_all):.1f} us incl. apex ticks)')
        print(f'closed-loop real-time factor (sim + controller, no ROS): {times["rtf"]:.2f}')
    for integrator in ('timestepping', 'event'):
        print(f'-- plain rollout, integrator {integrator}, load average '
              f'{os.getloadavg()[0]:.2f} (1 min), {os.cpu_count()} CPUs')
        side_by_side(integrator, args.duration, cfg, args.repeats)
    print(f'load average at the end: {os.getloadavg()[0]:.2f} (1 min)')
    return 0


if __name__ == '__main__':
    sys.exit(main())
