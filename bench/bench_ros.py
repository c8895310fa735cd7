# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
ROS benchmark: the lockstep graph and ``dodo hop`` as ratios to the floor, measured in one run.

    .venv/bin/python bench/bench_ros.py [--steps 3000] [--minutes 1] [--no-hog]

Prints (all measured now, on this machine, in interleaved rounds; the best of each):

* the floor of a two-process Python exchange, every variant of ``bench/bench_floor.py``
  (SingleThreadedExecutor / EventsExecutor with message objects, the EventsExecutor with raw CDR,
  a wait-set loop with raw CDR in and pre-serialised CDR out — reliable and BEST_EFFORT —, the
  lean loop on a node with parameters) in its three shapes: ping-pong, graph-shaped (per step
  /foot_contact + /joint_states + /clock out, /joint_commands + /effort_controller/commands
  back) and graph-shaped with a third process reading all five topics; the reference of the
  ratios is the graph-shaped reliable wait-set floor (``--floor-variants`` restricts the
  references, ``waitset`` must stay);
* core loop: Simulator.step + Controller.update in one process, no ROS (the compute per step);
* lockstep graph: the simulator node (here) with the controller node (second process), the
  stamped exchange (/joint_commands), no recorder;
* its ratios: to the graph-shaped floor and to the floor plus compute,
  1 / (1/floor + 1/core loop) (lockstep is strictly sequential: state -> command -> step, so
  no implementation can beat it; goal >= 0.8, issue 29);
* real-time factor of lockstep (simulated s per wall s);
* with ``--lean-graph`` the same graph with both nodes, unchanged, spun by the lean loop
  (``dodo_sim/ros/lean_loop.py``) instead of the EventsExecutor;
* realtime mode at 1 kHz for ``--minutes``, simulator and controller in their own processes
  beside a one-core CPU hog (a busy loop; ``--no-hog`` without): the simulator's ``dodo
  exchange:`` summary (applied command age p50/p99/max — goal p99 <= 3 ms —, round trip, stale
  and zero-torque steps, overruns, tick lateness), the controller's skipped states, whether it
  diverged, and the simulator's resident memory over the run (goal: flat).

* the path users run: ``dodo hop`` (simulator, controller and recorder processes, bag written),
  in every round (the median round reported), and ``dodo walk`` once, each for two durations
  (``--hop-durations``, 2 and 12 s: on a loaded machine start-up varies by seconds); the
  difference of the two runs removes start-up: marginal wall s and CPU s (all processes of the
  run) per simulated step, the real-time factor from them, and for ``dodo hop`` the ratio of its
  lockstep rate to the floor with a third reader plus compute, 1 / (1/floor + 1/core loop)
  (goal >= 0.6, moonshot 0.8, issue 29).

Uses a private ROS domain with localhost discovery (``DODO_TEST_DOMAINS=lo:hi`` picks it from
that range; ``dodo hop`` runs take theirs from ``DODO_HOP_DOMAINS``). The load average is
printed with every figure (a shared machine). Nothing here is a test: no timed asserts.
Profile a side with ``--profile DIR`` (cProfile of the simulator node in the lockstep runs).
"""
from __future__ import annotations

import argparse
import os
from pathlib import Path
import signal
import subprocess
import sys
import tempfile
import textwrap
import time

from bench_floor import (best, FLOOR, measure, pick_domain, print_table, process_cpu_s, SHAPES,
                         VARIANTS)
import numpy as np

#: The controller node under cProfile (CPU time), written at its exit (SIGTERM ends it cleanly).
PROFILED_CONTROLLER = textwrap.dedent("""
    import cProfile, sys, time
    from dodo_sim.ros.controller_node import main
    out = sys.argv.pop(1)
    profiler = cProfile.Profile(time.process_time)
    try:
        profiler.runcall(main, sys.argv)
    finally:
        profiler.dump_stats(out)
""")

#: The controller node spun by the lean loop in place of the runtime's executor (the node as is).
LEAN_CONTROLLER = textwrap.dedent("""
    import sys
    from dodo_sim.ros import runtime
    from dodo_sim.ros.lean_loop import LeanLoop
    runtime.make_executor = LeanLoop
    from dodo_sim.ros.controller_node import main
    sys.exit(main(sys.argv))
""")

PARAMS = """
/**:
  ros__parameters:
    use_sim_time: true
simulator:
  ros__parameters:
    mode: {mode}
    initial_q: [0.0, 1.3, 0.3, -0.6]
    command_timeout: 2.0
    min_subscribers: 1
controller:
  ros__parameters:
    apex_height: 1.2
    target_x: .nan
    min_subscribers: 1
"""


def spin_until(executor, condition, timeout_s):
    deadline = time.monotonic() + timeout_s
    while not condition():
        if time.monotonic() > deadline:
            raise TimeoutError('benchmark step did not complete in time')
        executor.spin_once(timeout_sec=0.01)


def core_rate(params: Path, steps: int) -> float:
    from dodo_control.controller import Controller, ControllerConfig
    from dodo_sim.paths import default_urdf_path
    from dodo_sim.rollout import rollout
    from dodo_sim.ros.params import config_from_file
    from dodo_sim.simulator import SimConfig, Simulator
    sim = Simulator(default_urdf_path(), config_from_file(SimConfig, params, 'simulator'))
    ctrl = Controller(sim.leg.urdf_xml, config_from_file(ControllerConfig, params, 'controller'))
    t0 = time.perf_counter()
    rollout(sim, ctrl, steps=steps)
    return steps / (time.perf_counter() - t0)


def graph_run(params: Path, env, steps: int, profile: Path | None = None,
              lean: bool = False) -> tuple:
    """
    Lockstep: simulator node here, controller node in a second process.

    ``lean``: both nodes, unchanged, spun by dodo_sim.ros.lean_loop.LeanLoop instead of the
    runtime's executor. Returns (steps per second, simulator CPU s per step, controller CPU s
    per step).
    """
    from dodo_sim.ros.lean_loop import LeanLoop
    from dodo_sim.ros.runtime import make_executor
    from dodo_sim.ros.simulator_node import SimulatorNode
    import rclpy
    from rclpy.parameter import Parameter

    command = ['-m', 'dodo_sim.ros.controller_node']
    if lean:
        command = ['-c', LEAN_CONTROLLER]
    if profile is not None:
        command = ['-c', PROFILED_CONTROLLER, str(profile / 'controller_lockstep.prof')]
    controller = subprocess.Popen(
        [sys.executable, *command, '--ros-args', '--params-file', str(params)], env=env,
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        rclpy.init(args=['--ros-args', '--params-file', str(params)])
        sim = SimulatorNode(parameter_overrides=[Parameter('stop_after', value=steps * 0.001)])
        executor = LeanLoop() if lean else make_executor()
        executor.add_node(sim)
        spin_until(executor, lambda: sim.exchange.started, 120.0)
        spin_until(executor, lambda: sim.steps >= 1, 120.0)   # the first answer arrived
        first = sim.steps
        profiler = None
        if profile is not None:
            import cProfile
            profiler = cProfile.Profile(time.process_time)
            profiler.enable()
        t0 = time.perf_counter()
        cpu0, ctrl_cpu0 = time.process_time(), process_cpu_s(controller.pid)
        executor.spin_until_future_complete(sim.done, 600.0)   # as runtime.run_node spins
        rate = (sim.steps - first) / (time.perf_counter() - t0)
        done = sim.steps - first
        cpu = ((time.process_time() - cpu0) / done, (process_cpu_s(controller.pid) - ctrl_cpu0)
               / done)
        if profiler is not None:
            profiler.disable()
            profiler.dump_stats(str(profile / 'simulator_lockstep.prof'))
        sim.destroy_node()
        rclpy.shutdown()
        return (rate,) + cpu
    finally:
        controller.terminate()
        controller.wait(30)


def resident_kib(pid: int) -> int:
    for line in Path(f'/proc/{pid}/status').read_text().splitlines():
        if line.startswith('VmRSS:'):
            return int(line.split()[1])
    return 0


def realtime_run(params: Path, env, minutes: float, hog: bool) -> dict:
    """Realtime for ``minutes``: simulator and controller processes (and a busy loop)."""
    from dodo_sim.ros.runtime import parse_summary
    seconds = minutes * 60.0
    procs = {}
    logs = {}
    with tempfile.TemporaryDirectory() as tmp:
        try:
            if hog:
                procs['hog'] = subprocess.Popen([sys.executable, '-c', 'while True: pass'])
            for name, module, extra in (
                    ('controller', 'dodo_sim.ros.controller_node', []),
                    ('simulator', 'dodo_sim.ros.simulator_node',
                     ['-p', f'stop_after:={seconds}'])):
                logs[name] = open(Path(tmp) / f'{name}.log', 'w+')
                procs[name] = subprocess.Popen(
                    [sys.executable, '-m', module, '--ros-args', '--params-file', str(params),
                     *extra], env=env, stdout=logs[name], stderr=subprocess.STDOUT)
            sim = procs['simulator']
            memory = []                                   # (wall s, RSS KiB)
            t0 = time.monotonic()
            while sim.poll() is None and time.monotonic() - t0 < seconds + 120.0:
                memory.append((time.monotonic() - t0, resident_kib(sim.pid)))
                try:
                    sim.wait(timeout=min(5.0, max(1.0, seconds / 60.0)))
                except subprocess.TimeoutExpired:
                    pass
            code = sim.wait(10)
        finally:
            for name in ('controller', 'hog', 'simulator'):
                proc = procs.get(name)
                if proc is not None and proc.poll() is None:
                    proc.send_signal(signal.SIGKILL if name == 'hog' else signal.SIGINT)
                    try:
                        proc.wait(20)
                    except subprocess.TimeoutExpired:
                        proc.kill()
        texts = {}
        for name, handle in logs.items():
            handle.seek(0)
            texts[name] = handle.read()
            handle.close()
    summary = parse_summary(texts['simulator'], 'exchange') or {}
    controller = parse_summary(texts['controller'], 'controller') or {}
    return {'exit_code': code, 'summary': summary, 'controller': controller, 'memory': memory,
            'log_tail': texts['simulator'][-2000:]}


def dodo_run(command: str, duration: float, env) -> tuple[float, float]:
    """
    Measure wall and CPU s of ``dodo <command> --duration D``.

    Returns (wall s, CPU s of the whole process tree). The run writes its bag (the recorder runs)
    and no plots.
    """
    import resource
    with tempfile.TemporaryDirectory() as tmp:
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        t0 = time.perf_counter()
        env = {k: v for k, v in env.items() if k != 'ROS_DOMAIN_ID'}   # dodo picks its own
        proc = subprocess.run(
            [sys.executable, '-m', 'dodo_sim.tools.cli', command, '--duration', str(duration),
             '--bag', str(Path(tmp) / 'bag'), '--no-plots', '--wall-timeout', '900'],
            env=env, capture_output=True, text=True)
        wall = time.perf_counter() - t0
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        raise RuntimeError(f'dodo {command} exited {proc.returncode}: {proc.stdout[-2000:]}'
                           f'{proc.stderr[-2000:]}')
    cpu = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
    return wall, cpu


def dodo_marginal(command: str, durations: tuple[float, float], env) -> dict:
    """
    Marginal wall and CPU time per simulated step of ``dodo <command>`` (the recorder on).

    It is the difference of a short and a long run, in which start-up cancels: {'wall', 'cpu'}
    s per step, the runs' wall s ('walls') and the load average.
    """
    short, long_ = durations
    steps = (long_ - short) / 0.001
    (w0, c0), (w1, c1) = dodo_run(command, short, env), dodo_run(command, long_, env)
    return {'wall': (w1 - w0) / steps, 'cpu': (c1 - c0) / steps, 'walls': (w0, w1),
            'load': os.getloadavg()[0]}


def report_dodo(command: str, durations, run: dict, floor=None) -> None:
    """Print a marginal ``dodo`` run; with ``floor`` (steps/s) its ratio to it."""
    short, long_ = durations
    rate = 1.0 / run['wall']
    ratio = f'; ratio to {floor[0]} {rate / floor[1]:.2f}' if floor else ''
    print(f'dodo {command} (recorder on), {short:g} s and {long_:g} s runs: marginal '
          f'{run["wall"] * 1e6:.0f} us wall ({rate:.0f} steps/s) and {run["cpu"] * 1e6:.0f} us '
          f'CPU (all processes) per step; real-time factor {1e-3 / run["wall"]:.2f} (wall '
          f'{run["walls"][0]:.1f} s / {run["walls"][1]:.1f} s){ratio}; load {run["load"]:.1f}')


def floor_round(variants, round_trips: int, env) -> dict:
    """Measure one round of the floor references (bench_floor.measure) in this process."""
    import rclpy
    rclpy.init(args=[])
    try:
        return {(v, s): measure(v, s, round_trips, env) for v in variants for s in SHAPES}
    finally:
        rclpy.try_shutdown()


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--steps', type=int, default=3000,
                        help='lockstep steps and floor round trips to time')
    parser.add_argument('--rounds', type=int, default=3,
                        help='interleaved measurement rounds; the best of each is reported')
    parser.add_argument('--floor-variants', nargs='+', choices=list(VARIANTS),
                        default=list(VARIANTS), help='bench_floor references measured per round')
    parser.add_argument('--minutes', type=float, default=1.0,
                        help='length of the realtime run (0: skip it)')
    parser.add_argument('--no-hog', action='store_true',
                        help='realtime run without the one-core busy loop beside it')
    parser.add_argument('--hop-durations', type=float, nargs=2, default=(2.0, 12.0),
                        metavar=('SHORT', 'LONG'),
                        help='simulated s of the two dodo hop / dodo walk runs (0 0: skip)')
    parser.add_argument('--no-walk', action='store_true', help='skip the dodo walk runs')
    parser.add_argument('--lean-graph', action='store_true',
                        help='also the lockstep graph with both nodes spun by the lean loop')
    parser.add_argument('--profile', type=Path, default=None,
                        help='write a cProfile of the simulator node (last lockstep round) here')
    args = parser.parse_args(argv)
    if FLOOR not in args.floor_variants:
        parser.error(f'--floor-variants must include {FLOOR} (the reference of the ratios)')
    if args.profile is not None:
        args.profile.mkdir(parents=True, exist_ok=True)     # before minutes of measuring
    domain = pick_domain()
    os.environ['ROS_DOMAIN_ID'] = str(domain)
    os.environ['ROS_AUTOMATIC_DISCOVERY_RANGE'] = 'LOCALHOST'
    env = dict(os.environ)
    hop = args.hop_durations[1] > args.hop_durations[0]
    with tempfile.TemporaryDirectory() as tmp:
        lockstep_params = Path(tmp) / 'lockstep.yaml'
        lockstep_params.write_text(PARAMS.format(mode='lockstep'))
        realtime_params = Path(tmp) / 'realtime.yaml'
        realtime_params.write_text(PARAMS.format(mode='realtime'))

        # interleaved rounds, best of each: a shared machine only ever slows a measurement down
        floors = {(v, s): [] for v in args.floor_variants for s in SHAPES}
        cores, locks, cpus, hops, leans = [], [], [], [], []
        for round_ in range(args.rounds):
            for key, m in floor_round(args.floor_variants, args.steps, env).items():
                floors[key].append(m)
            cores.append((core_rate(lockstep_params, args.steps), os.getloadavg()[0]))
            profile = args.profile if round_ == args.rounds - 1 else None
            rate, sim_cpu, ctrl_cpu = graph_run(lockstep_params, env, args.steps, profile)
            locks.append((rate, os.getloadavg()[0]))
            cpus.append((sim_cpu, ctrl_cpu))
            if args.lean_graph:
                leans.append(graph_run(lockstep_params, env, args.steps, lean=True)
                             + (os.getloadavg()[0],))
            if hop:
                hops.append(dodo_marginal('hop', tuple(args.hop_durations), env))
        print(f'machine: {os.cpu_count()} cpus, load {os.getloadavg()[0]:.1f} (1 min), python '
              f'{sys.version.split()[0]}, ROS domain {domain}, {args.steps} steps / round '
              f'trips, best of {args.rounds} interleaved rounds; "l" = 1-min load average at '
              f'the measurement')
        print(f'the floor (bench/bench_floor.py), round trips/s and ratio to the graph-shaped '
              f'floor ({VARIANTS[FLOOR]}):')
        floor = print_table(floors, args.floor_variants, SHAPES)
        floor_reader = best(floors[(FLOOR, 'graph+reader')])['rate']
        core, core_load = max(cores)
        lock, lock_load = max(locks)
        bound = 1.0 / (1.0 / floor + 1.0 / core)
        print('all rounds (core / lockstep, per s): ' + '; '.join(
            f'{c:.0f} / {k:.0f}' for (c, _), (k, _) in zip(cores, locks)))
        print(f'core loop, no ROS (sim.step + ctrl.update)         : {core:8.0f} /s  '
              f'({1e6 / core:.0f} us a step; l {core_load:.1f})')
        print(f'lockstep graph, no recorder (sim node + ctrl node) : {lock:8.0f} steps/s  '
              f'(l {lock_load:.1f})')
        print(f'ratio lockstep / graph-shaped floor                : {lock / floor:8.2f}')
        print(f'floor + compute: 1 / (1/floor + 1/core loop)       : {bound:8.0f} /s')
        print(f'ratio lockstep / (floor + compute)                 : {lock / bound:8.2f}  '
              f'(goal >= 0.8)')
        print(f'real-time factor (lockstep, 1 kHz control)         : {lock * 1e-3:8.2f}')
        if leans:
            lean = max(leans)
            print(f'lockstep graph, both nodes spun by LeanLoop        : {lean[0]:8.0f} steps/s  '
                  f'(l {lean[3]:.1f}); ratio to the floor {lean[0] / floor:.2f}, to floor + '
                  f'compute {lean[0] / bound:.2f}; CPU per step: simulator process '
                  f'{min(x[1] for x in leans) * 1e6:.0f} us, controller process '
                  f'{min(x[2] for x in leans) * 1e6:.0f} us; rounds: '
                  + ' '.join(f'{x[0]:.0f}' for x in leans))
        sim_cpu, ctrl_cpu = min(c[0] for c in cpus), min(c[1] for c in cpus)
        print(f'CPU per lockstep step (least of the rounds)        : simulator process '
              f'{sim_cpu * 1e6:.0f} us, controller process {ctrl_cpu * 1e6:.0f} us')
        if hop:
            reader_bound = 1.0 / (1.0 / floor_reader + 1.0 / core)
            # a run's start-up varies by seconds on a loaded machine: a pair whose long run was
            # not the longer one measured nothing (reported, never picked); the difference of two
            # noisy runs errs both ways, so the median pair, not the fastest
            valid = sorted((h for h in hops if h['wall'] > 0), key=lambda h: h['wall'])
            fastest = valid[(len(valid) - 1) // 2] if valid else None
            print(f'floor with a third reader + compute: 1 / (1/{floor_reader:.0f} + '
                  f'1/{core:.0f}) = {reader_bound:.0f} /s')
            print('dodo hop rounds, steps/s: ' + ' '.join(
                f'{1 / h["wall"]:.0f}' if h['wall'] > 0 else
                f'none (walls {h["walls"][0]:.1f} / {h["walls"][1]:.1f} s)' for h in hops))
            if fastest is None:
                print('dodo hop: no round measured a marginal step (start-up noise larger than '
                      'the difference of the runs: longer --hop-durations)')
            else:
                report_dodo('hop', args.hop_durations, fastest,
                            ('the floor with a third reader + compute (goal >= 0.6)',
                             reader_bound))
                print(f'ratio dodo hop / graph-shaped floor + compute       : '
                      f'{1 / fastest["wall"] / bound:8.2f}')
        sys.stdout.flush()
        if hop and not args.no_walk:
            report_dodo('walk', args.hop_durations,
                        dodo_marginal('walk', tuple(args.hop_durations), env))
            sys.stdout.flush()
        if args.minutes > 0:
            rt = realtime_run(realtime_params, env, args.minutes, hog=not args.no_hog)
            report_realtime(rt, args.minutes, hog=not args.no_hog)
    return 0


def report_realtime(rt: dict, minutes: float, hog: bool) -> None:
    s = rt['summary']
    beside = 'beside a one-core CPU hog' if hog else 'no hog'
    outcome = ('diverged' if rt['exit_code'] == 3
               else 'no divergence' if rt['exit_code'] == 0 else 'failed')
    print(f'realtime 1 kHz, {minutes:g} min, {beside}, load {os.getloadavg()[0]:.1f}: exit '
          f'code {rt["exit_code"]} '
          f'({outcome})')
    if not s:
        print('  no summary line from the simulator; its log ends with:\n' + rt['log_tail'])
        return
    print(f'  steps {s["steps"]}, zero-torque steps {s["zero_torque_steps"]}, timeouts '
          f'{s["timeouts"]}, overruns {s["overruns"]}')
    print(f'  applied command age ms: p50 {s["age_ms_p50"]}, p99 {s["age_ms_p99"]} '
          f'(goal <= 3), max {s["age_ms_max"]}; stale steps (> {s["max_command_age_ms"]} ms) '
          f'{s["stale_steps"]}')
    print(f'  round trip state -> command ms: p50 {s["round_trip_ms_p50"]}, p99 '
          f'{s["round_trip_ms_p99"]}, max {s["round_trip_ms_max"]}; timer tick lateness ms: '
          f'p99 {s["tick_late_ms_p99"]}, max {s["tick_late_ms_max"]}')
    c = rt['controller']
    if c:
        print(f'  controller: {c.get("updates")} updates, {c.get("skipped_states")} states '
              f'skipped (newest first)')
    memory = rt['memory']
    if len(memory) >= 4:
        half = [m for m in memory if m[0] >= memory[-1][0] / 2]
        times = np.array([m[0] for m in half])
        kib = np.array([m[1] for m in half], dtype=float)
        slope = np.polyfit(times, kib, 1)[0] if len(half) >= 2 and np.ptp(times) > 0 else 0.0
        print(f'  simulator RSS: {memory[0][1]} KiB at {memory[0][0]:.0f} s, {memory[-1][1]} KiB '
              f'at {memory[-1][0]:.0f} s; slope over the second half {slope:+.2f} KiB/s')


if __name__ == '__main__':
    sys.exit(main())
