# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
Where a lockstep step goes: py-spy profiles of every process of the graph, per simulated step.

    .venv/bin/pip install py-spy        # not in requirements.txt: only this script uses it
    .venv/bin/python bench/profile_exchange.py [--what graph|hop|both] [--steps 2000 12000]

``graph``: the simulator and the controller node, each its own process (lockstep, no recorder),
as ``bench_ros.py`` measures them; ``hop``: ``dodo hop`` (simulator, controller, recorder: the
path users run). Each process runs under ``py-spy record`` (sampling its Python threads,
``--rate`` per second), once for a short and once for a long run; the samples of each process
are sorted into categories (publishing, reading inputs, physics, control law, telemetry, the
recorder's bag and live view, the executor, ...) by the innermost frame that names one, and the
difference of the two runs (start-up and the start gates cancel, as in bench_ros.py's marginal
step) is printed as microseconds per simulated step. py-spy leaves out idle Python threads but
counts a thread waiting inside native code (the EventsExecutor's wait, a lock inside the rmw's
publish) as busy, so the figures are the time a step spends in each frame, not CPU; the rmw's
own threads are not sampled (bench_ros.py prints each process's whole CPU per step). The
numbers are the baseline the lean-loop wiring of issue 29 is measured against
(docs/ros_contract.md, "Per-step message work"). Uses ``DODO_TEST_DOMAINS`` /
``DODO_HOP_DOMAINS`` like the other benches; nothing here is a test.
"""
from __future__ import annotations

import argparse
import collections
import os
from pathlib import Path
import shutil
import signal
import subprocess
import sys
import tempfile
import time

from bench_floor import bench_env
from bench_ros import PARAMS

REPO = Path(__file__).resolve().parent.parent

#: (category, substrings of a frame "function (file:line)"): the innermost frame of a sample
#: that contains one of them decides its category; the first match in this order wins
CATEGORIES = (
    ('publish (rclpy + rmw, incl. its locks)', ('Publisher.publish', 'publisher.py')),
    ('read inputs (cdr, raw_messages)', ('dodo_sim/ros/cdr.py', 'raw_messages.py')),
    ('physics step / robot model', ('dodo_sim/physics/', 'Simulator.step', 'simulator.py')),
    ('control law (update)', ('dodo_control/',)),
    ('telemetry / markers / state messages', ('telemetry_channels.py', 'controller_markers.py',
                                              'state_messages.py', 'odometry.py',
                                              'link_contacts.py', '_publish_state',
                                              '_publish_markers')),
    ('recorder: bag write', ('recorder_bag.py', 'rosbags/', 'mcap/')),
    ('recorder: live view / tf / progress', ('live_view', 'recorder_tf.py', 'tqdm',
                                             'print_progress', 'foxglove')),
    ('node callbacks (exchange bookkeeping)', ('simulator_node.py', 'controller_node.py',
                                               'recorder.py', 'recorder_subscriptions.py')),
    ('rclpy executor in Python (take, dispatch)', ('rclpy/',)),
    ('EventsExecutor native (wait, take, dispatch)', ('spin_until', 'spin_once')),
)


#: frames of a node that spins (its start-up before is left out; the difference of the two
#: runs removes the start gates)
SPINNING = ('spin', 'Recorder.run', 'main (dodo_sim/ros/recorder.py')
#: leaf frames that are a native executor call seen from its caller (the recorder spins in
#: ``Recorder.run``; py-spy shows the EventsExecutor's native spin_once as that frame)
NATIVE_LEAVES = ('Recorder.run (', 'main (dodo_sim/ros/recorder.py')


def categorize(stack: list) -> str:
    if stack and any(key in stack[-1] for key in NATIVE_LEAVES):
        return CATEGORIES[-1][0]
    for frame in reversed(stack):
        for name, keys in CATEGORIES:
            if any(key in frame for key in keys):
                return name
    return 'other'


def short_process(name: str) -> str:
    for key in ('simulator_node', 'controller_node', 'recorder', 'tools.cli'):
        if key in name:
            return key
    return name[:60]


def read_raw(path: Path) -> tuple:
    """py-spy raw output -> ({process: Counter(category)}, {process: Counter(leaf frame)})."""
    per = collections.defaultdict(collections.Counter)
    leaves = collections.defaultdict(collections.Counter)
    for line in path.read_text().splitlines():
        stack_text, _, count = line.rpartition(' ')
        if not stack_text:
            continue
        frames = stack_text.split(';')
        process = 'process'
        while frames and frames[0].startswith('process '):
            process, frames = short_process(frames[0]), frames[1:]   # the innermost process
        frames = [f for f in frames if not f.startswith('thread ')]
        if not any(key in f for f in frames for key in SPINNING):
            continue                # start-up (imports, models), the run's supervisor
        per[process][categorize(frames)] += int(count)
        leaves[process][frames[-1] if frames else '?'] += int(count)
    return per, leaves


def report(title: str, short: Path, long_: Path, rate: int, steps: int) -> None:
    """Print the marginal samples (long run minus short run) per step, by process and category."""
    (per0, leaves0), (per1, leaves1) = read_raw(short), read_raw(long_)
    print(f'\n{title}: {steps} more steps in the long run, py-spy at {rate}/s; marginal us per '
          f'step sampled in each frame (Python threads; native waits inside a frame count)')
    for process in sorted(per1, key=lambda p: -sum(per1[p].values())):
        diff = per1[process] - per0[process]            # Counter subtraction keeps > 0
        total = sum(diff.values())
        if total <= 0:
            continue
        print(f'  {process}: {total / rate / steps * 1e6:.0f} us a step sampled')
        for name, count in diff.most_common():
            print(f'    {name:46s} {count / rate / steps * 1e6:7.1f} us '
                  f'({count / total * 100:4.1f} %)')
        top = (leaves1[process] - leaves0[process]).most_common(6)
        print('    top leaf frames: ' + '; '.join(
            f'{leaf} {count / rate / steps * 1e6:.1f}' for leaf, count in top))


def py_spy() -> str:
    found = shutil.which('py-spy') or str(Path(sys.executable).parent / 'py-spy')
    if not Path(found).exists():
        sys.exit('profile_exchange.py: error: py-spy not found (.venv/bin/pip install py-spy)')
    return found


def run_graph(steps: int, rate: int, out: Path, tag: str) -> None:
    """Run the simulator and the controller process (lockstep), each under py-spy."""
    env = bench_env()
    params = out / 'lockstep.yaml'
    params.write_text(PARAMS.format(mode='lockstep'))
    procs = {}
    logs = {}
    for name, extra in (('controller', []), ('simulator', ['-p', f'stop_after:={steps * 1e-3}'])):
        logs[name] = open(out / f'{name}_{tag}.log', 'w')
        procs[name] = subprocess.Popen(
            [py_spy(), 'record', '-r', str(rate), '-f', 'raw', '-o',
             str(out / f'{name}_{tag}.txt'), '--', sys.executable, '-m',
             f'dodo_sim.ros.{name}_node', '--ros-args', '--params-file', str(params), *extra],
            env=env, stdout=logs[name], stderr=subprocess.STDOUT, cwd=REPO)
    t0 = time.perf_counter()
    procs['simulator'].wait(900)
    wall = time.perf_counter() - t0
    procs['controller'].send_signal(signal.SIGINT)
    procs['controller'].wait(60)
    for handle in logs.values():
        handle.close()
    print(f'lockstep graph under py-spy, {steps} steps: {wall:.1f} s wall including start-up; '
          f'load {os.getloadavg()[0]:.1f}')


def profile_graph(steps: tuple, rate: int, out: Path) -> None:
    """Profile the lockstep graph without recorder: the marginal of a short and a long run."""
    for tag, n in zip(('short', 'long'), steps):
        run_graph(n, rate, out, tag)
    for name in ('simulator', 'controller'):
        report(f'{name} process (lockstep, no recorder)', out / f'{name}_short.txt',
               out / f'{name}_long.txt', rate, steps[1] - steps[0])


def run_hop(steps: int, rate: int, out: Path, tag: str) -> None:
    """Run ``dodo hop`` with its recorder, every process under one py-spy (--subprocesses)."""
    env = {k: v for k, v in bench_env().items() if k != 'ROS_DOMAIN_ID'}   # dodo picks its own
    t0 = time.perf_counter()
    proc = subprocess.run(
        [py_spy(), 'record', '--subprocesses', '-r', str(rate), '-f', 'raw', '-o',
         str(out / f'hop_{tag}.txt'), '--', sys.executable, '-m', 'dodo_sim.tools.cli', 'hop',
         '--duration', str(steps * 1e-3), '--bag', str(out / f'bag_{tag}'), '--no-plots',
         '--wall-timeout', '900'], env=env, capture_output=True, text=True, cwd=REPO)
    wall = time.perf_counter() - t0
    if proc.returncode != 0:
        sys.exit(f'dodo hop under py-spy exited {proc.returncode}: {proc.stderr[-2000:]}')
    print(f'dodo hop under py-spy, {steps} steps: {wall:.1f} s wall including start-up; load '
          f'{os.getloadavg()[0]:.1f}')


def profile_hop(steps: tuple, rate: int, out: Path) -> None:
    """Profile ``dodo hop`` (recorder on): the marginal of a short and a long run."""
    for tag, n in zip(('short', 'long'), steps):
        run_hop(n, rate, out, tag)
    report('dodo hop (recorder on)', out / 'hop_short.txt', out / 'hop_long.txt', rate,
           steps[1] - steps[0])


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--what', choices=('graph', 'hop', 'both'), default='both')
    parser.add_argument('--steps', type=int, nargs=2, default=(2000, 12000),
                        metavar=('SHORT', 'LONG'),
                        help='simulated steps (1 ms each) of the short and the long run')
    parser.add_argument('--rate', type=int, default=250, help='py-spy samples per second')
    parser.add_argument('--keep', type=Path, default=None, help='keep the raw profiles here')
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        out = args.keep or Path(tmp)
        out.mkdir(parents=True, exist_ok=True)
        if args.what in ('graph', 'both'):
            profile_graph(tuple(args.steps), args.rate, out)
        if args.what in ('hop', 'both'):
            profile_hop(tuple(args.steps), args.rate, out)
    return 0


if __name__ == '__main__':
    sys.exit(main())
