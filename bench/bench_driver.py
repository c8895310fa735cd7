# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
Timing of the driver's 1 kHz loop on the emulated hardware (realtime emulator, in process).

Three measurements, side by side in one run:

0. transport: one CAN frame through python-can's ``virtual`` bus and through the emulator's
   in-process channel (``dodo_sim.hardware.emulated_bus``), and their ratio.

1. core: :class:`DriverCore` + emulator, paced at 1 kHz by this script (no ROS): encode +
   send, frames -> all replies (includes the emulated physics step), whole cycle, and the
   period jitter of the cycle starts.
2. node: the ``driver`` node (EventsExecutor, steady 1 kHz timer) over real DDS with a PD
   controller stand-in in its own process answering every /joint_states on /joint_commands:
   period jitter of the timer, command received -> its frame on the bus, frames -> replies,
   replies -> /joint_states published, the sum (command received -> /joint_states out), and
   state stamp -> command received (the DDS round trip through the controller process).

Run: ``.venv/bin/python bench/bench_driver.py [--seconds 10]``. The numbers include whatever
else runs on the machine (``load`` is printed); the emulated actuator answers from the driver's
own thread, so "frames -> replies" is the emulator's work, not a CAN round trip (a real AK
actuator answers in ~0.1-0.2 ms; a 1 Mbit/s bus carries an 8-byte frame in ~0.13 ms).
"""
from __future__ import annotations

import argparse
import os
from pathlib import Path
import subprocess
import sys
import tempfile
import threading
import time

import numpy as np

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / 'test'))


def row(name, values_s):
    v = np.asarray([x for x in values_s if np.isfinite(x)]) * 1e6
    if v.size == 0:
        return f'{name:<44} {"-":>8} {"-":>8} {"-":>8}   n=0'
    p50, p99, top = np.percentile(v, [50, 99, 100])
    return f'{name:<44} {p50:8.0f} {p99:8.0f} {top:8.0f}   n={v.size}'


def header(title):
    return f'\n{title}\n{"":<44} {"p50 us":>8} {"p99 us":>8} {"max us":>8}'


def bench_core(seconds: float) -> list:
    from dodo_sim.hardware.config import DriverConfig
    from dodo_sim.model import robot_description_xml
    from dodo_sim.paths import default_urdf_path
    from dodo_sim.rollout import JointHold
    from dodo_sim.hardware.build import build_driver

    core, emulator = build_driver(DriverConfig(hardware='emulated', emulator_mode='realtime'),
                                  robot_description_xml(default_urdf_path()))
    hold = JointHold([2, 3], (0.0, 1.2, 0.3, -0.6))
    start = time.monotonic()
    core.cycle(start)
    core.enable(start)
    period = core.config.control_period
    starts, send, bus, total = [], [], [], []
    next_tick = time.monotonic()
    n = int(seconds / period)
    for _ in range(n):
        next_tick += period
        now = time.monotonic()
        core.set_command(now, hold.update(now, core.q, core.v, None))
        t0 = time.perf_counter()
        core.cycle(now)
        t1 = time.perf_counter()
        timing = core.timing
        starts.append(t0)
        send.append(timing.sent - t0)
        bus.append(timing.received - timing.sent)
        total.append(t1 - t0)
        time.sleep(max(0.0, next_tick - time.monotonic()))      # bench pacing only
    missed = sum(s.missed for s in core.status)
    core.shutdown()
    emulator.close()
    lines = [header(f'core (no ROS), {n} cycles, {missed} missed replies'),
             row('period jitter |start interval - 1 ms|', np.abs(np.diff(starts) - period)),
             row('encode + send (Sync + 2 commands)', send),
             row('frames -> all replies (emulator)', bus),
             row('whole cycle', total)]
    return lines


HOLD_PROCESS = """
import rclpy
from rclpy.executors import SingleThreadedExecutor
from sensor_msgs.msg import JointState
from dodo_sim.ros import contract
rclpy.init()
node = rclpy.create_node('hold')
qos = contract.stream_qos()
pub = node.create_publisher(JointState, contract.JOINT_COMMANDS, qos)
ref = {'hip': 0.3, 'knee': -0.6}
def on_state(msg):
    q = dict(zip(msg.name, msg.position)); v = dict(zip(msg.name, msg.velocity))
    out = JointState(name=['hip', 'knee'],
                     effort=[-300.0 * (q[j] - ref[j]) - 20.0 * v[j] for j in ('hip', 'knee')])
    out.header.stamp = msg.header.stamp
    pub.publish(out)
node.create_subscription(JointState, contract.JOINT_STATES, on_state, qos)
executor = SingleThreadedExecutor(); executor.add_node(node); executor.spin()
"""


def bench_node(seconds: float) -> list:
    from conftest import ros_env
    from dodo_sim.ros.driver_node import DriverNode
    from dodo_sim.ros.runtime import make_executor
    import rclpy

    env = ros_env()
    os.environ['ROS_DOMAIN_ID'] = env['ROS_DOMAIN_ID']
    os.environ['ROS_AUTOMATIC_DISCOVERY_RANGE'] = 'LOCALHOST'
    rclpy.init(args=['bench', '--ros-args', '-p', 'hardware:=emulated'])
    node = DriverNode()
    executor = make_executor()
    executor.add_node(node)
    stop = threading.Event()

    def spin():
        while not stop.is_set():
            executor.spin_once(timeout_sec=0.05)

    thread = threading.Thread(target=spin, daemon=True)
    thread.start()
    with tempfile.NamedTemporaryFile('w', suffix='.py', delete=False) as f:
        f.write(HOLD_PROCESS)
    hold = subprocess.Popen([sys.executable, f.name], env=env)
    try:
        deadline = time.monotonic() + 30.0
        while node._pub_joints.get_subscription_count() < 1 and time.monotonic() < deadline:
            time.sleep(0.05)
        time.sleep(1.0)
        node.core.enable(time.monotonic())
        time.sleep(0.5)
        node.cycle_timing.clear()
        node.state_to_command.clear()
        time.sleep(seconds)
        timing = np.array(node.cycle_timing)
        age = np.array(node.state_to_command)
        missed = sum(s.missed for s in node.core.status)
        state = node.core.safety.state.value
    finally:
        hold.terminate()
        hold.wait(10)
        os.unlink(f.name)
        stop.set()
        thread.join(5)
        node.destroy_node()
        rclpy.try_shutdown()
    ticks = timing[:, 0]
    e2e = timing[:, 1] + timing[:, 2] + timing[:, 3]
    return [header(f'driver node over DDS, {len(ticks)} cycles in {seconds:.0f} s '
                   f'({(len(ticks) - 1) / (ticks[-1] - ticks[0]):.0f} Hz), {missed} missed '
                   f'replies, safety {state}'),
            row('period jitter |tick interval - 1 ms|', np.abs(np.diff(ticks) - 0.001)),
            row('command received -> frame on the bus', timing[:, 1]),
            row('frames -> all replies (emulator)', timing[:, 2]),
            row('replies -> /joint_states published', timing[:, 3]),
            row('command received -> /joint_states out', e2e),
            row('state stamp -> command received (DDS+ctrl)', age)]


def bench_transport(frames: int = 20000) -> list:
    """
    One frame sent and received: python-can's virtual bus against the emulator's channel.

    The emulated hardware's bus (dodo_sim/hardware/emulated_bus.py) replaced python-can's
    ``virtual`` interface in the driver loop; the ratio is measured here in the same run.
    """
    import can
    from dodo_sim.hardware.emulated_bus import EmulatedChannel
    msg = can.Message(arbitration_id=0x01, data=bytes(8), is_extended_id=False)

    def per_frame_s(a, b) -> float:
        start = time.perf_counter()
        for _ in range(frames):
            a.send(msg)
            b.recv(0.0)
        return (time.perf_counter() - start) / frames

    virtual = [can.Bus(interface='virtual', channel='bench-transport') for _ in range(2)]
    channel = EmulatedChannel('bench-transport')
    emulated = (channel.end(), channel.end())
    try:
        v = min(per_frame_s(*virtual) for _ in range(3))
        e = min(per_frame_s(*emulated) for _ in range(3))
    finally:
        for bus in virtual:
            bus.shutdown()
    return [f'\nCAN transport, one frame sent + received, best of 3 x {frames}',
            f'  python-can virtual {v * 1e6:6.1f} us, emulated channel {e * 1e6:6.1f} us, '
            f'ratio {e / v:.2f}']


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--seconds', type=float, default=10.0)
    args = parser.parse_args()
    lines = bench_transport() + bench_core(args.seconds) + bench_node(args.seconds)
    print('\n'.join(lines))
    print(f'\nload average: {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores')
    return 0


if __name__ == '__main__':
    sys.exit(main())
