# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
ROS benchmark: lockstep graph rate vs the raw rclpy round-trip rate, measured in one run.

    .venv/bin/python bench/bench_ros.py [--steps 3000] [--minutes 1] [--no-hog]

Prints (all measured now, on this machine, with rclpy's EventsExecutor on both sides):

* raw round trip: one Float64MultiArray ping -> pong between this process and a second one;
* raw graph-shaped exchange: per step /clock + /foot_contact + /joint_states out, one
  Float64MultiArray back (the lockstep message pattern, no physics, no control);
* core loop: Simulator.step + Controller.update in one process, no ROS (the compute per step);
* lockstep graph: the simulator node (here) with the controller node (second process), the
  stamped exchange (/joint_commands);
* the bound 1 / (1/round trip + 1/core loop): lockstep is strictly sequential (state -> command
  -> step), so even with zero ROS overhead the graph cannot beat it; lockstep / bound is the
  efficiency of the node adapters (goal >= 0.8);
* ratio lockstep / raw round trip and lockstep / graph-shaped raw;
* real-time factor of lockstep (simulated s per wall s);
* realtime mode at 1 kHz for ``--minutes``, simulator and controller in their own processes
  beside a one-core CPU hog (a busy loop; ``--no-hog`` without): the simulator's ``dodo
  exchange:`` summary (applied command age p50/p99/max — goal p99 <= 3 ms —, round trip, stale
  and zero-torque steps, overruns, tick lateness), the controller's skipped states, whether it
  diverged, and the simulator's resident memory over the run (goal: flat).

* the path users run: ``dodo hop`` (simulator, controller and recorder processes, bag written)
  and ``dodo walk``, each for two durations (``--hop-durations``); the difference of the two
  runs removes start-up: marginal wall s and CPU s (all processes of the run) per simulated
  step, and the real-time factor from them.

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

import numpy as np

ECHO = textwrap.dedent("""
    import sys, rclpy
    from rclpy.experimental import EventsExecutor
    from std_msgs.msg import Float64MultiArray
    from sensor_msgs.msg import JointState
    rclpy.init()
    node = rclpy.create_node('bench_echo')
    pong = node.create_publisher(Float64MultiArray, '/bench/pong', 100)
    reply = Float64MultiArray(data=[0.0, 0.0])
    node.create_subscription(Float64MultiArray, '/bench/ping', lambda m: pong.publish(reply), 100)
    node.create_subscription(JointState, '/bench/joint_states', lambda m: pong.publish(reply), 100)
    ex = EventsExecutor(); ex.add_node(node)
    print('ready', flush=True)
    try:
        ex.spin_until_future_complete(rclpy.task.Future(), timeout_sec=float(sys.argv[1]))
    except (KeyboardInterrupt, rclpy.executors.ExternalShutdownException):
        pass
""")

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


def raw_rates(steps: int, env) -> tuple[float, float]:
    """(ping-pong round trips/s, graph-shaped exchanges/s) against a second process."""
    from geometry_msgs.msg import WrenchStamped
    import rclpy
    from rclpy.experimental import EventsExecutor
    from rosgraph_msgs.msg import Clock
    from sensor_msgs.msg import JointState
    from std_msgs.msg import Float64MultiArray

    echo = subprocess.Popen([sys.executable, '-c', ECHO, '300'], env=env, stdout=subprocess.PIPE,
                            text=True)
    try:
        assert echo.stdout.readline().strip() == 'ready'
        rclpy.init()
        node = rclpy.create_node('bench_raw')
        ping = node.create_publisher(Float64MultiArray, '/bench/ping', 100)
        clock = node.create_publisher(Clock, '/bench/clock', 100)
        foot = node.create_publisher(WrenchStamped, '/bench/foot_contact', 100)
        joints = node.create_publisher(JointState, '/bench/joint_states', 100)
        state = {'n': 0, 'mode': 'ping', 'limit': 0}
        msg_ping = Float64MultiArray(data=[0.0, 0.0])
        msg_js = JointState(name=['base_x', 'base_z', 'hip', 'knee'],
                            position=[0.0] * 4, velocity=[0.0] * 4, effort=[0.0] * 4)

        def send():
            if state['mode'] == 'ping':
                ping.publish(msg_ping)
            else:
                clock.publish(Clock())
                foot.publish(WrenchStamped())
                joints.publish(msg_js)

        def on_pong(_msg):
            state['n'] += 1
            if state['n'] < state['limit']:
                send()

        node.create_subscription(Float64MultiArray, '/bench/pong', on_pong, 100)
        executor = EventsExecutor()
        executor.add_node(node)
        spin_until(executor, lambda: ping.get_subscription_count() > 0
                   and joints.get_subscription_count() > 0, 60.0)
        rates = []
        for mode in ('ping', 'graph'):
            state.update(n=0, mode=mode, limit=200)          # warm-up
            send()
            spin_until(executor, lambda: state['n'] >= 200, 60.0)
            state.update(n=0, limit=steps)
            t0 = time.perf_counter()
            send()
            spin_until(executor, lambda: state['n'] >= steps, 120.0)
            rates.append(steps / (time.perf_counter() - t0))
        node.destroy_node()
        rclpy.shutdown()
        return rates[0], rates[1]
    finally:
        echo.terminate()
        echo.wait(10)


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


def graph_run(params: Path, env, steps: int, profile: Path | None = None) -> tuple:
    """
    Lockstep: simulator node here, controller node in a second process.

    Returns (steps per second, simulator CPU s per step, controller CPU s per step).
    """
    from dodo_sim.ros.runtime import make_executor
    from dodo_sim.ros.simulator_node import SimulatorNode
    import rclpy
    from rclpy.parameter import Parameter

    command = ['-m', 'dodo_sim.ros.controller_node']
    if profile is not None:
        command = ['-c', PROFILED_CONTROLLER, str(profile / 'controller_lockstep.prof')]
    controller = subprocess.Popen(
        [sys.executable, *command, '--ros-args', '--params-file', str(params)], env=env,
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        rclpy.init(args=['--ros-args', '--params-file', str(params)])
        sim = SimulatorNode(parameter_overrides=[Parameter('stop_after', value=steps * 0.001)])
        executor = make_executor()
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
        spin_until(executor, sim.done.done, 600.0)
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


def process_cpu_s(pid: int) -> float:
    """User + system CPU time of a process so far, s."""
    fields = Path(f'/proc/{pid}/stat').read_text().rsplit(')', 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf('SC_CLK_TCK')


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


def report_dodo_runs(durations: tuple[float, float], env) -> None:
    """
    Marginal wall and CPU time per simulated step of ``dodo hop`` / ``dodo walk``.

    It is the difference of a short and a long run, in which start-up cancels.
    """
    short, long_ = durations
    steps = (long_ - short) / 0.001
    for command in ('hop', 'walk'):
        (w0, c0), (w1, c1) = dodo_run(command, short, env), dodo_run(command, long_, env)
        wall, cpu = (w1 - w0) / steps, (c1 - c0) / steps
        print(f'dodo {command} (recorder on), {short:g} s and {long_:g} s runs: marginal '
              f'{wall * 1e6:.0f} us wall and {cpu * 1e6:.0f} us CPU (all processes) per step; '
              f'real-time factor {1e-3 / wall:.2f} (wall {w0:.1f} s / {w1:.1f} s); load '
              f'{os.getloadavg()[0]:.1f}')
        sys.stdout.flush()


def pick_domain() -> int:
    """Return a ROS domain for the bench: from ``DODO_TEST_DOMAINS=lo:hi`` when set."""
    text = os.environ.get('DODO_TEST_DOMAINS')
    if text:
        low, high = (int(x) for x in text.split(':'))
        return low + os.getpid() % (high - low + 1)
    return 1 + os.getpid() % 99


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--steps', type=int, default=3000, help='lockstep steps to time')
    parser.add_argument('--rounds', type=int, default=3,
                        help='interleaved measurement rounds; the best of each is reported')
    parser.add_argument('--minutes', type=float, default=1.0,
                        help='length of the realtime run (0: skip it)')
    parser.add_argument('--no-hog', action='store_true',
                        help='realtime run without the one-core busy loop beside it')
    parser.add_argument('--hop-durations', type=float, nargs=2, default=(2.0, 6.0),
                        metavar=('SHORT', 'LONG'),
                        help='simulated s of the two dodo hop / dodo walk runs (0 0: skip)')
    parser.add_argument('--profile', type=Path, default=None,
                        help='write a cProfile of the simulator node (last lockstep round) here')
    args = parser.parse_args(argv)
    if args.profile is not None:
        args.profile.mkdir(parents=True, exist_ok=True)     # before minutes of measuring
    domain = pick_domain()
    os.environ['ROS_DOMAIN_ID'] = str(domain)
    os.environ['ROS_AUTOMATIC_DISCOVERY_RANGE'] = 'LOCALHOST'
    env = dict(os.environ)
    with tempfile.TemporaryDirectory() as tmp:
        lockstep_params = Path(tmp) / 'lockstep.yaml'
        lockstep_params.write_text(PARAMS.format(mode='lockstep'))
        realtime_params = Path(tmp) / 'realtime.yaml'
        realtime_params.write_text(PARAMS.format(mode='realtime'))

        # interleaved rounds, best of each: a shared machine only ever slows a measurement down
        pings, shapeds, cores, locks, cpus = [], [], [], [], []
        for round_ in range(args.rounds):
            ping, shaped = raw_rates(args.steps, env)
            pings.append(ping)
            shapeds.append(shaped)
            cores.append(core_rate(lockstep_params, args.steps))
            profile = args.profile if round_ == args.rounds - 1 else None
            rate, sim_cpu, ctrl_cpu = graph_run(lockstep_params, env, args.steps, profile)
            locks.append(rate)
            cpus.append((sim_cpu, ctrl_cpu))
        ping, shaped, core, lock = max(pings), max(shapeds), max(cores), max(locks)
        print(f'machine: {os.cpu_count()} cpus, load {os.getloadavg()[0]:.1f} (1 min), python '
              f'{sys.version.split()[0]}, ROS domain {domain}, {args.steps} steps, best of '
              f'{args.rounds} interleaved rounds')
        print('all rounds (raw ping-pong / graph-shaped / core / lockstep, per s): ' + '; '.join(
            f'{a:.0f} / {b:.0f} / {c:.0f} / {d:.0f}' for a, b, c, d in zip(pings, shapeds, cores,
                                                                           locks)))
        bound = 1.0 / (1.0 / ping + 1.0 / core)
        print(f'raw rclpy ping-pong round trip (2 processes)      : {ping:8.0f} /s')
        print(f'raw graph-shaped exchange (3 out, 1 back)         : {shaped:8.0f} /s')
        print(f'core loop, no ROS (sim.step + ctrl.update)        : {core:8.0f} /s')
        print(f'lockstep graph (simulator node + controller node) : {lock:8.0f} steps/s')
        print(f'bound: 1 / (1/round trip + 1/core loop)           : {bound:8.0f} /s  '
              f'(zero ROS overhead)')
        print(f'ratio lockstep / that bound                       : {lock / bound:8.2f}  '
              f'(goal >= 0.8)')
        print(f'ratio lockstep / raw round trip                   : {lock / ping:8.2f}')
        print(f'ratio lockstep / raw graph-shaped exchange        : {lock / shaped:8.2f}')
        print(f'real-time factor (lockstep, 1 kHz control)        : {lock * 1e-3:8.2f}')
        sim_cpu, ctrl_cpu = min(c[0] for c in cpus), min(c[1] for c in cpus)
        print(f'CPU per lockstep step (least of the rounds)       : simulator process '
              f'{sim_cpu * 1e6:.0f} us, controller process {ctrl_cpu * 1e6:.0f} us')
        sys.stdout.flush()
        if args.hop_durations[1] > args.hop_durations[0]:
            report_dodo_runs(tuple(args.hop_durations), env)
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
