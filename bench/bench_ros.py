"""ROS benchmark: lockstep graph rate vs the raw rclpy round-trip rate, measured in one run.

    .venv/bin/python bench/bench_ros.py [--steps 3000] [--realtime-seconds 3]

Prints (all measured now, on this machine, with rclpy's EventsExecutor on both sides):

* raw round trip: one Float64MultiArray ping -> pong between this process and a second one;
* raw graph-shaped exchange: per step /clock + /foot_contact + /joint_states out, one
  Float64MultiArray back (the lockstep message pattern, no physics, no control);
* core loop: Simulator.step + Controller.update in one process, no ROS (the compute per step);
* lockstep graph: the simulator node (here) with the controller node (second process);
* ratio lockstep / raw round trip (issue goal >= 0.8) and lockstep / graph-shaped raw;
* the bound 1 / (1/round trip + 1/core loop): lockstep is strictly sequential (state -> command
  -> step), so even with zero ROS overhead the graph cannot beat it; lockstep / bound is the
  efficiency of the node adapters;
* real-time factor of lockstep (simulated s per wall s);
* realtime mode at 1 kHz: achieved rate and period jitter (p50 / p99 / max of |period - 1 ms|).

Uses a private ROS domain with localhost discovery. Nothing here is a test: no timed asserts.
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

import numpy as np

ECHO = textwrap.dedent('''
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
''')

PARAMS = '''
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
'''


def spin_until(executor, condition, timeout_s):
    deadline = time.monotonic() + timeout_s
    while not condition():
        if time.monotonic() > deadline:
            raise TimeoutError('benchmark step did not complete in time')
        executor.spin_once(timeout_sec=0.01)


def raw_rates(steps: int, env) -> tuple[float, float]:
    """(ping-pong round trips/s, graph-shaped exchanges/s) against a second process."""
    import rclpy
    from geometry_msgs.msg import WrenchStamped
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
    from dodo_sim.ros.params import config_from_file
    from dodo_sim.paths import default_urdf_path
    from dodo_sim.rollout import rollout
    from dodo_sim.simulator import SimConfig, Simulator
    sim = Simulator(default_urdf_path(), config_from_file(SimConfig, params, 'simulator'))
    ctrl = Controller(sim.leg.urdf_xml, config_from_file(ControllerConfig, params, 'controller'))
    t0 = time.perf_counter()
    rollout(sim, ctrl, steps=steps)
    return steps / (time.perf_counter() - t0)


def graph_run(params: Path, env, mode: str, steps: int = 0, seconds: float = 0.0):
    """Simulator node here, controller node in a second process. Returns the sim node."""
    import rclpy
    from rclpy.parameter import Parameter
    from dodo_sim.ros.simulator_node import SimulatorNode, make_executor

    controller = subprocess.Popen(
        [sys.executable, '-m', 'dodo_control.controller_node', '--ros-args', '--params-file',
         str(params)], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        rclpy.init(args=['--ros-args', '--params-file', str(params)])
        overrides = [Parameter('stop_after', value=steps * 0.001)] if steps else []
        sim = SimulatorNode(parameter_overrides=overrides)
        executor = make_executor()
        executor.add_node(sim)
        spin_until(executor, lambda: sim._started, 120.0)
        if steps:
            spin_until(executor, lambda: sim.steps >= 1, 120.0)   # the first answer arrived
            first = sim.steps
            t0 = time.perf_counter()
            spin_until(executor, sim.done.done, 600.0)
            sim.wall_rate = (sim.steps - first) / (time.perf_counter() - t0)
        else:
            t0 = time.perf_counter()
            spin_until(executor, lambda: time.perf_counter() - t0 > seconds, seconds + 60.0)
        sim.destroy_node()
        rclpy.shutdown()
        return sim
    finally:
        controller.terminate()
        controller.wait(10)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--steps', type=int, default=3000, help='lockstep steps to time')
    parser.add_argument('--realtime-seconds', type=float, default=3.0)
    parser.add_argument('--rounds', type=int, default=3,
                        help='interleaved measurement rounds; the best of each is reported')
    args = parser.parse_args(argv)
    domain = 1 + os.getpid() % 99
    os.environ['ROS_DOMAIN_ID'] = str(domain)
    os.environ['ROS_AUTOMATIC_DISCOVERY_RANGE'] = 'LOCALHOST'
    env = dict(os.environ)
    with tempfile.TemporaryDirectory() as tmp:
        lockstep_params = Path(tmp) / 'lockstep.yaml'
        lockstep_params.write_text(PARAMS.format(mode='lockstep'))
        realtime_params = Path(tmp) / 'realtime.yaml'
        realtime_params.write_text(PARAMS.format(mode='realtime'))

        # interleaved rounds, best of each: a shared machine only ever slows a measurement down
        pings, shapeds, cores, locks = [], [], [], []
        for _ in range(args.rounds):
            ping, shaped = raw_rates(args.steps, env)
            pings.append(ping)
            shapeds.append(shaped)
            cores.append(core_rate(lockstep_params, args.steps))
            locks.append(graph_run(lockstep_params, env, 'lockstep', steps=args.steps).wall_rate)
        ping, shaped, core, lock = max(pings), max(shapeds), max(cores), max(locks)
        rt = graph_run(realtime_params, env, 'realtime', seconds=args.realtime_seconds)

    ticks = np.array(rt.tick_times)
    periods = np.diff(ticks[len(ticks) // 10:])            # skip the first 10 %
    jitter = np.abs(periods - 1e-3)
    tick_rate = len(periods) / (ticks[-1] - ticks[len(ticks) // 10])
    achieved = rt.steps / (ticks[-1] - rt._realtime_start)
    print(f'machine: {os.cpu_count()} cpus, load {os.getloadavg()[0]:.1f}, python '
          f'{sys.version.split()[0]}, ROS domain {domain}, {args.steps} steps, best of '
          f'{args.rounds} interleaved rounds')
    print('all rounds (raw ping-pong / graph-shaped / core / lockstep, per s): ' + '; '.join(
        f'{a:.0f} / {b:.0f} / {c:.0f} / {d:.0f}' for a, b, c, d in zip(pings, shapeds, cores,
                                                                      locks)))
    print(f'raw rclpy ping-pong round trip (2 processes)      : {ping:8.0f} /s')
    print(f'raw graph-shaped exchange (3 out, 1 back)         : {shaped:8.0f} /s')
    print(f'core loop, no ROS (sim.step + ctrl.update)        : {core:8.0f} /s')
    print(f'lockstep graph (simulator node + controller node) : {lock:8.0f} steps/s')
    print(f'ratio lockstep / raw round trip                   : {lock / ping:8.2f}  (goal >= 0.8)')
    print(f'ratio lockstep / raw graph-shaped exchange        : {lock / shaped:8.2f}')
    bound = 1.0 / (1.0 / ping + 1.0 / core)
    print(f'bound: 1 / (1/round trip + 1/core loop)           : {bound:8.0f} /s  '
          f'(zero ROS overhead)')
    print(f'ratio lockstep / that bound                       : {lock / bound:8.2f}')
    print(f'real-time factor (lockstep, 1 kHz control)        : {lock * 1e-3:8.2f}')
    print(f'realtime mode: achieved {achieved:.1f} steps/s (target 1000; timer ticks '
          f'{tick_rate:.1f} /s, {rt.overruns} overruns), tick period jitter '
          f'p50 {np.percentile(jitter, 50) * 1e6:.0f} us, '
          f'p99 {np.percentile(jitter, 99) * 1e6:.0f} us, '
          f'max {jitter.max() * 1e6:.0f} us over {len(periods)} periods')
    return 0


if __name__ == '__main__':
    sys.exit(main())
