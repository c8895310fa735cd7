"""Lockstep rate of ``dodo hop`` with and without a connected Foxglove client (docs/viewing.md).

Runs pairs of the same hop, alternating: one without ``--live``, one with ``--live`` and a
protocol client (test/foxglove_client.py) subscribed to every channel the server advertises.
The lockstep rate of a run is its simulator steps per wall-clock second, measured from the bag
(bag times are the recorder's wall clock: (N - 1) / (last - first) over /joint_states), so
process start-up does not count. Only the ratio within one bench run means anything; the load
average is printed beside it.

    nice python bench/bench_liveview.py [--pairs 3] [--duration 3]
"""
from __future__ import annotations

import argparse
import os
import socket
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / 'test'))


def lockstep_rate(bag: Path) -> float:
    from rosbags.rosbag2 import Reader
    from dodo_sim.ros import contract
    with Reader(bag) as reader:
        conns = [c for c in reader.connections if c.topic == contract.JOINT_STATES]
        times = [t for _, t, _ in reader.messages(connections=conns)]
    return (len(times) - 1) / ((times[-1] - times[0]) * 1e-9)


def run(bag: Path, duration: float, live_port: int | None) -> tuple[float | None, int]:
    """One run; (lockstep rate Hz or None if the run failed, messages the client received or
    -1)."""
    from foxglove_client import watch
    cmd = [sys.executable, '-m', 'dodo_sim.tools.cli', 'hop', '--duration', str(duration),
           '--bag', str(bag), '--no-plots']
    got = {}
    thread = None
    if live_port is not None:
        cmd += ['--live', str(live_port)]

        def client():
            got['r'] = watch(f'ws://127.0.0.1:{live_port}', _AllTopics(), seconds=600.0,
                             connect_timeout=120.0)
        thread = threading.Thread(target=client)
        thread.start()
    env = dict(os.environ, ROS_AUTOMATIC_DISCOVERY_RANGE='LOCALHOST')
    proc = subprocess.run(cmd, stdin=subprocess.DEVNULL, capture_output=True, text=True, env=env)
    received = -1
    if thread is not None:
        thread.join(timeout=60)
        received = sum(map(len, got['r'].messages.values())) if 'r' in got else -1
    if proc.returncode != 0:       # e.g. a command timeout on an overloaded machine
        last = (proc.stdout.strip().splitlines() or ['?'])[-3]
        print(f'  run failed (exit {proc.returncode}; load {os.getloadavg()[0]:.1f}): {last}',
              flush=True)
        return None, received
    return lockstep_rate(bag), received


class _AllTopics:
    def __contains__(self, topic):
        return True


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--pairs', type=int, default=3)
    parser.add_argument('--duration', type=float, default=3.0)
    args = parser.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix='bench_liveview-'))
    without, with_client = [], []
    attempts = 0
    while len(without) < args.pairs and attempts < 2 * args.pairs:
        i, attempts = attempts, attempts + 1
        with socket.socket() as s:
            s.bind(('127.0.0.1', 0))
            port = s.getsockname()[1]
        rate_a, _ = run(tmp / f'plain{i}', args.duration, None)
        rate_b, received = run(tmp / f'live{i}', args.duration, port)
        if rate_a is None or rate_b is None:      # a pair counts only when both completed
            continue
        without.append(rate_a)
        with_client.append(rate_b)
        print(f'pair {i}: without client {rate_a:.0f} steps/s, with client {rate_b:.0f} '
              f'steps/s ({received} messages to the client), load {os.getloadavg()[0]:.1f}',
              flush=True)
    if not without:
        print('no pair completed')
        return 1
    a, b = sum(without) / len(without), sum(with_client) / len(with_client)
    print(f'mean lockstep rate: without client {a:.0f} steps/s, with client {b:.0f} steps/s, '
          f'ratio {b / a:.3f} ({len(without)} pairs of {args.duration:g} s; load average '
          f'{os.getloadavg()[0]:.1f})')
    return 0


if __name__ == '__main__':
    sys.exit(main())
