# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
Lockstep rate of ``dodo hop`` with and without a connected Foxglove client (docs/viewing.md).

Runs pairs of the same hop, alternating: one without ``--live``, one with ``--live`` and a
protocol client (test/foxglove_client.py) subscribed to every channel the server advertises.
The lockstep rate of a run is its simulator steps per wall-clock second, measured from the bag
(bag times are the recorder's wall clock: (N - 1) / (last - first) over /joint_states), so
process start-up does not count. Only the ratio within one bench run means anything; the load
average is printed beside it. Both runs of a pair use config/hop.yaml with a simulator
``command_timeout`` of 60 s, so that a controller starved by other processes on a loaded machine
makes the run slower, not a different (timed-out) run; each run takes a free ROS domain of
``DODO_HOP_DOMAINS``.

    nice python bench/bench_liveview.py [--pairs 3] [--duration 3] [--simultaneous]

``--simultaneous``: the two runs of a pair at the same time (each in its own ROS domain), so that
they share whatever else the machine does at that moment; for a machine whose load swings more
between consecutive runs than the effect measured. They also compete with each other, equally.

``--recorder-cost``: no DDS; the recorder's per-message work alone, in one process: rosbags
MCAP writes of real /joint_states CDR messages, without and with the live view handing each
to the foxglove-sdk server while a protocol client receives them (blocks interleaved). On a
machine too loaded to run the graph at a steady rate this still tells what a client costs
the recorder, the only process of the run that does more work when a viewer connects.
"""
from __future__ import annotations

import argparse
from dataclasses import dataclass
import os
from pathlib import Path
import re
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / 'test'))


def lockstep_rate(bag: Path) -> float:
    from dodo_sim.ros import contract
    from rosbags.rosbag2 import Reader
    with Reader(bag) as reader:
        conns = [c for c in reader.connections if c.topic == contract.JOINT_STATES]
        times = [t for _, t, _ in reader.messages(connections=conns)]
    return (len(times) - 1) / ((times[-1] - times[0]) * 1e-9)


def strict_lockstep_params(directory: Path) -> Path:
    """config/hop.yaml with a simulator command_timeout of 60 s (see module docs)."""
    import yaml
    params = yaml.safe_load((REPO / 'config' / 'hop.yaml').read_text())
    params['simulator']['ros__parameters']['command_timeout'] = 60.0
    path = directory / 'hop_strict_lockstep.yaml'
    path.write_text(yaml.safe_dump(params))
    return path


#: runs a command and prints the CPU time of it and every descendant it waited for (dodo hop
#: waits for its nodes): per run, also when two runs go at once
CPU_WRAPPER = """
import resource, subprocess, sys
code = subprocess.run(sys.argv[1:]).returncode
usage = resource.getrusage(resource.RUSAGE_CHILDREN)
print(f'bench_liveview: cpu_s={usage.ru_utime + usage.ru_stime}', file=sys.stderr)
sys.exit(code)
"""


@dataclass
class Run:
    """One ``dodo hop`` run of the bench."""

    rate_hz: float | None       # lockstep rate, steps per wall s (None: the run failed)
    run_cpu_s: float            # CPU time of dodo hop and its nodes (the whole run), s
    client_cpu_s: float         # CPU time of the client's thread in this process, s
    received: int               # messages the client received (-1: no client)


def run(bag: Path, duration: float, live_port: int | None) -> Run:
    """One run, with a client subscribed to every channel when ``live_port`` is given."""
    from foxglove_client import watch
    cmd = [sys.executable, '-m', 'dodo_sim.tools.cli', 'hop', '--duration', str(duration),
           '--bag', str(bag), '--no-plots', '--params-file',
           str(strict_lockstep_params(bag.parent))]
    got = {}
    thread = None
    if live_port is not None:
        cmd += ['--live', str(live_port)]

        def client():
            start = time.thread_time()
            got['r'] = watch(f'ws://127.0.0.1:{live_port}', _AllTopics(), seconds=600.0,
                             connect_timeout=120.0)
            got['cpu_s'] = time.thread_time() - start
        thread = threading.Thread(target=client)
        thread.start()
    env = dict(os.environ, ROS_AUTOMATIC_DISCOVERY_RANGE='LOCALHOST')
    env.pop('ROS_DOMAIN_ID', None)         # a free domain of DODO_HOP_DOMAINS
    proc = subprocess.run([sys.executable, '-c', CPU_WRAPPER, *cmd], stdin=subprocess.DEVNULL,
                          capture_output=True, text=True, env=env)
    cpu = re.findall(r'^bench_liveview: cpu_s=(\S+)$', proc.stderr, re.M)
    run_cpu_s = float(cpu[-1]) if cpu else float('nan')
    received = -1
    if thread is not None:
        thread.join(timeout=60)
        received = sum(map(len, got['r'].messages.values())) if 'r' in got else -1
    if proc.returncode != 0:       # e.g. the wall-clock limit on an overloaded machine
        last = ' / '.join((proc.stdout + proc.stderr).strip().splitlines()[-3:])
        print(f'  run failed (exit {proc.returncode}; load {os.getloadavg()[0]:.1f}): {last}',
              flush=True)
        return Run(None, run_cpu_s, got.get('cpu_s', 0.0), received)
    return Run(lockstep_rate(bag), run_cpu_s, got.get('cpu_s', 0.0), received)


class _AllTopics:

    def __contains__(self, topic):
        return True


def recorder_cost(rate_hz: float, blocks: int = 6, messages: int = 3000) -> None:
    """
    Μs per recorded /joint_states message, bag only vs bag + live view with a client; ``rate_hz``.

    The live view's limit on the channel (0: every message to the client).
    """
    from dodo_sim.ros import contract
    from dodo_sim.tools.live_view import LiveView
    from foxglove_client import watch
    from rosbags.rosbag2 import StoragePlugin, Writer
    from rosbags.typesys import get_typestore, Stores
    store = get_typestore(Stores.ROS2_KILTED)
    types = store.types
    type_name = 'sensor_msgs/msg/JointState'
    msgdef = store.generate_msgdef(type_name, ros_version=2)[0]

    def state(i):
        stamp = types['builtin_interfaces/msg/Time'](sec=i // 1000, nanosec=(i % 1000) * 10**6)
        header = types['std_msgs/msg/Header'](stamp=stamp, frame_id='')
        import numpy as np
        return bytes(store.serialize_cdr(types[type_name](
            header=header, name=['base_x', 'base_z', 'hip', 'knee'],
            position=np.full(4, 0.1 * i), velocity=np.zeros(4), effort=np.zeros(4)), type_name))

    data = [state(i) for i in range(messages)]
    tmp = Path(tempfile.mkdtemp(prefix='bench_liveview_cost-'))
    view = LiveView(port=0, max_rate_hz=rate_hz)
    view.start()
    view.add_topic(contract.JOINT_STATES, type_name, msgdef)
    got = {}
    client = threading.Thread(target=lambda: got.update(r=watch(
        view.address, {contract.JOINT_STATES}, seconds=600.0, leave_after=10**9)))
    client.daemon = True
    client.start()
    while not view._streams[contract.JOINT_STATES].channel.has_sinks():
        time.sleep(0.01)
    costs = {False: [], True: []}
    for block in range(blocks):
        for live in (False, True):
            writer = Writer(tmp / f'b{block}{int(live)}', version=9,
                            storage_plugin=StoragePlugin.MCAP)
            writer.open()
            conn = writer.add_connection(contract.JOINT_STATES, type_name, msgdef=msgdef,
                                         rihs01=store.hash_rihs01(type_name))
            start = time.perf_counter()
            for i, raw in enumerate(data):
                writer.write(conn, i * 10**6, raw)
                if live:
                    view.log(contract.JOINT_STATES, raw, i * 10**6)
            costs[live].append((time.perf_counter() - start) / messages * 1e6)
            writer.close()
    view.stop()
    a, b = min(costs[False]), min(costs[True])
    sent, skipped = view.counts()[contract.JOINT_STATES]
    print(f'recorder work per /joint_states message (best of {blocks} blocks of {messages}): '
          f'bag only {a:.1f} us, bag + live view with a client {b:.1f} us (+{b - a:.1f} us, '
          f'{100 * (b - a) / a:.0f} %); {sent} handed to the server, {skipped} skipped by '
          f'the {rate_hz:g} Hz limit (0: none); load average {os.getloadavg()[0]:.1f}')


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--pairs', type=int, default=3)
    parser.add_argument('--duration', type=float, default=3.0)
    parser.add_argument('--recorder-cost', action='store_true')
    parser.add_argument('--simultaneous', action='store_true')
    args = parser.parse_args()
    if args.recorder_cost:
        recorder_cost(60.0)
        recorder_cost(0.0)
        return 0
    tmp = Path(tempfile.mkdtemp(prefix='bench_liveview-'))
    pairs: list[tuple[Run, Run]] = []
    attempts = 0
    while len(pairs) < args.pairs and attempts < 2 * args.pairs:
        i, attempts = attempts, attempts + 1
        with socket.socket() as s:
            s.bind(('127.0.0.1', 0))
            port = s.getsockname()[1]
        # ABBA: every other pair starts with the run with a client (a drift of the machine's
        # load over the bench then favours neither)
        if args.simultaneous:
            runs = {}
            threads = [threading.Thread(target=lambda k=k, port=port: runs.update(
                {k: run(tmp / f'{k}{i}', args.duration, port)}))
                for k, port in (('plain', None), ('live', port))]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join()
            plain, live = runs['plain'], runs['live']
        elif i % 2 == 0:
            plain = run(tmp / f'plain{i}', args.duration, None)
            live = run(tmp / f'live{i}', args.duration, port)
        else:
            live = run(tmp / f'live{i}', args.duration, port)
            plain = run(tmp / f'plain{i}', args.duration, None)
        if plain.rate_hz is None or live.rate_hz is None:   # a pair counts when both completed
            continue
        pairs.append((plain, live))
        print(f'pair {i}: without client {plain.rate_hz:.0f} steps/s ({plain.run_cpu_s:.1f} '
              f'CPU s), with client {live.rate_hz:.0f} steps/s ({live.run_cpu_s:.1f} CPU s; '
              f'{live.received} messages to the client, {live.client_cpu_s:.2f} CPU s in it), '
              f'load {os.getloadavg()[0]:.1f}', flush=True)
    if not pairs:
        print('no pair completed')
        return 1
    ratios = sorted(live.rate_hz / plain.rate_hz for plain, live in pairs)
    a = statistics.mean(plain.rate_hz for plain, _ in pairs)
    b = statistics.mean(live.rate_hz for _, live in pairs)
    cpu_a = statistics.mean(plain.run_cpu_s for plain, _ in pairs)
    cpu_b = statistics.mean(live.run_cpu_s for _, live in pairs)
    print(f'lockstep rate: without client {a:.0f} steps/s, with client {b:.0f} steps/s (means); '
          f'per-pair ratio with/without: median {statistics.median(ratios):.3f}, range '
          f'{ratios[0]:.3f}..{ratios[-1]:.3f}; CPU of the processes of the run: {cpu_a:.1f} s '
          f'without, {cpu_b:.1f} s with a client ({len(pairs)} pairs of {args.duration:g} s; '
          f'load average {os.getloadavg()[0]:.1f})')
    return 0


if __name__ == '__main__':
    sys.exit(main())
