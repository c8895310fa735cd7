# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
The floor of a two-process Python exchange on this machine, and the lean loop against it.

    .venv/bin/python bench/bench_floor.py [--round-trips 3000] [--rounds 3] [--variants ...]

Two processes exchange messages the way the lockstep graph does, with nothing else to do: this
process plays the simulator (publishes a state, waits for its answer, publishes the next), a
second one the controller (answers). Every variant is one way of moving the bytes:

* ``executor``: rclpy's SingleThreadedExecutor, message objects;
* ``events``: rclpy's EventsExecutor, message objects;
* ``events_raw``: the EventsExecutor, raw CDR in (``raw=True``) and pre-serialised CDR out;
* ``waitset``: no executor, a wait-set loop taking raw CDR and publishing pre-serialised CDR
  (reliable QoS, as the nodes): **the floor** every other figure is a ratio to;
* ``waitset_be``: the same with BEST_EFFORT readers and writers;
* ``lean``: :class:`dodo_sim.ros.lean_loop.LeanLoop` spinning a real node (parameters declared,
  parameter and type-description services, a diagnostics-like 0.2 s timer, a service of its
  own) with raw CDR in and pre-serialised CDR out (goal: >= 0.9 of the floor).

Each in three shapes: ``ping`` (one JointState out, one back), ``graph`` (per step
``/foot_contact`` + ``/joint_states`` + ``/clock`` out; the answer, sent once a state and a
contact came, ``/joint_commands`` + ``/effort_controller/commands``; the state side reads only
``/joint_commands``, as the simulator in lockstep) and ``graph+reader`` (the same with a third
process reading all five topics with a raw wait-set loop, as a recorder would). Round trips per
second (the best of the interleaved rounds: a shared machine only slows a measurement down), the
ratio to the graph-shaped floor, and the CPU per round trip of both processes (this process's
CPU time, the peer's from /proc) with the load average.

``bench/bench_ros.py`` runs the same variants (this module's :func:`measure`) beside the
dodo_sim graph and reports the graph's rates as ratios to these floors. Uses a private ROS
domain with localhost discovery (``DODO_TEST_DOMAINS=lo:hi``). Nothing here is a test.
"""
from __future__ import annotations

import argparse
from contextlib import ExitStack
import os
from pathlib import Path
import subprocess
import sys
import time

VARIANTS = {
    'executor': 'SingleThreadedExecutor, message objects',
    'events': 'EventsExecutor, message objects',
    'events_raw': 'EventsExecutor, raw CDR in and out',
    'waitset': 'no executor: wait-set loop, raw CDR in, pre-serialised out',
    'waitset_be': 'the same, BEST_EFFORT',
    'lean': 'LeanLoop on a node with parameters, raw CDR in and out',
}
SHAPES = ('ping', 'graph', 'graph+reader')
#: the reference of every ratio: the graph-shaped wait-set floor (reliable, as the nodes)
FLOOR = 'waitset'
PREFIX = '/bench_floor/'
WARM_UP = 200
#: wall s to wait for the peers to start and match (a loaded machine)
DISCOVERY_TIMEOUT_S = 120.0

# (topic, type) of what each side sends per shape, in the simulator's order
STATE_OUT = {'ping': (('joint_states', 'JointState'),),
             'graph': (('foot_contact', 'WrenchStamped'), ('joint_states', 'JointState'),
                       ('clock', 'Clock'))}
ANSWER_OUT = {'ping': (('joint_commands', 'JointState'),),
              'graph': (('joint_commands', 'JointState'),
                        ('effort_controller/commands', 'Float64MultiArray'))}


def _types() -> dict:
    from geometry_msgs.msg import WrenchStamped
    from rosgraph_msgs.msg import Clock
    from sensor_msgs.msg import JointState
    from std_msgs.msg import Float64MultiArray
    return {'JointState': JointState, 'WrenchStamped': WrenchStamped, 'Clock': Clock,
            'Float64MultiArray': Float64MultiArray}


def _sample(topic: str, cls):
    """Return a message as the graph sends it on ``topic`` (the hopper's sizes)."""
    msg = cls()
    if topic == 'joint_states':
        msg.name = ['base_x', 'base_z', 'hip', 'knee']
        msg.position = msg.velocity = msg.effort = [0.1, 1.2, 0.3, -0.6]
    elif topic == 'joint_commands':
        msg.name = ['hip', 'knee']
        msg.effort = [1.5, -2.0]
    elif topic == 'effort_controller/commands':
        msg.data = [1.5, -2.0]
    elif topic == 'foot_contact':
        msg.header.frame_id = 'foot_contact'
        msg.wrench.force.z = 250.0
    return msg


def _qos(variant: str, publisher: bool):
    from rclpy.qos import QoSProfile, ReliabilityPolicy
    if variant == 'waitset_be':
        return QoSProfile(depth=10, reliability=ReliabilityPolicy.BEST_EFFORT)
    # the nodes' writers keep 5000 (contract.stream_qos), their lockstep readers 10
    return QoSProfile(depth=5000 if publisher else 10, reliability=ReliabilityPolicy.RELIABLE)


def _node(variant: str, name: str):
    """Return a plain node, or for ``lean`` one shaped like the nodes (parameters, services)."""
    from rclpy.node import Node
    node = Node(name)
    if variant == 'lean':
        from rcl_interfaces.msg import FloatingPointRange, ParameterDescriptor
        from std_srvs.srv import Trigger
        for i in range(40):
            node.declare_parameter(f'p{i}', float(i), ParameterDescriptor(
                floating_point_range=[FloatingPointRange(from_value=0.0, to_value=100.0)]))
        from rclpy.clock import Clock, ClockType
        # /diagnostics-like; steady, as every timer of the dodo_sim nodes (a ROS-time timer
        # stays in the loop's wait set: dodo_sim/ros/lean_loop.py)
        node.create_timer(0.2, lambda: None, clock=Clock(clock_type=ClockType.STEADY_TIME))
        node.create_service(Trigger, name + '/reset', lambda req, res: res)
    return node


class Side:
    """
    One side of the exchange: ``state`` (simulator-like) or ``answer`` (controller-like).

    Spins with the variant's machinery; counts the answers (state side).
    """

    def __init__(self, variant: str, role: str, shape: str):
        from rclpy.serialization import serialize_message
        self.variant, self.role, self.shape = variant, role, shape
        types = _types()
        raw = variant not in ('executor', 'events')
        self.node = _node(variant, f'bench_floor_{role}')
        outs = (STATE_OUT if role == 'state' else ANSWER_OUT)[shape]
        ins = (ANSWER_OUT if role == 'state' else STATE_OUT)[shape]
        if role == 'state':
            ins = ins[:1]                 # the simulator reads only /joint_commands
        self.publishers = []
        for topic, type_name in outs:
            msg = _sample(topic, types[type_name])
            pub = self.node.create_publisher(types[type_name], PREFIX + topic,
                                             _qos(variant, True))
            self.publishers.append((pub, serialize_message(msg) if raw else msg))
        # readers of each publisher besides the third process: the simulator does not read
        # /effort_controller/commands in lockstep
        self._peers = [0 if topic == 'effort_controller/commands' else 1 for topic, _ in outs]
        self.subscriptions = []
        for topic, type_name in ins:
            callback = self._on_contact if topic == 'foot_contact' else self._on_input
            self.subscriptions.append(self.node.create_subscription(
                types[type_name], PREFIX + topic, callback, _qos(variant, False), raw=raw))
        self.count = 0
        self.limit = 0
        self.done = None
        self._need_contact = role == 'answer' and shape == 'graph'
        self._got_state = self._got_contact = False
        self._spinner = None

    # -- the exchange ------------------------------------------------------------------------

    def send(self) -> None:
        for pub, payload in self.publishers:
            pub.publish(payload)

    def _on_input(self, _msg) -> None:
        if self.role == 'state':
            self.count += 1
            if self.count < self.limit:
                self.send()
            elif self.done is not None and not self.done.done():
                self.done.set_result(True)
            return
        self._got_state = True
        self._answer()

    def _on_contact(self, _msg) -> None:
        self._got_contact = True
        self._answer()

    def _answer(self) -> None:
        if self._got_state and (self._got_contact or not self._need_contact):
            self._got_state = self._got_contact = False
            self.send()

    # -- spinning ------------------------------------------------------------------------------

    def spin_until_done(self, timeout_s: float) -> None:
        """Spin until the state side has its ``limit`` answers."""
        from rclpy.task import Future
        self.done = Future()
        if self.variant in ('waitset', 'waitset_be'):
            self._wait_set_loop(self.done.done, timeout_s)
        else:
            self._spinner_for().spin_until_future_complete(self.done, timeout_s)
        if not self.done.done():
            raise TimeoutError(f'{self.variant} {self.shape}: {self.count} of {self.limit} '
                               f'answers in {timeout_s} s')

    def serve(self) -> None:
        """Answer until the process is ended (peer side)."""
        if self.variant in ('waitset', 'waitset_be'):
            self._wait_set_loop(lambda: False, None)
        else:
            self._spinner_for().spin()

    def _spinner_for(self):
        if self._spinner is None:
            if self.variant == 'executor':
                from rclpy.executors import SingleThreadedExecutor
                self._spinner = SingleThreadedExecutor()
            elif self.variant == 'lean':
                from dodo_sim.ros.lean_loop import LeanLoop
                self._spinner = LeanLoop()
            else:
                from rclpy.experimental import EventsExecutor
                self._spinner = EventsExecutor()
            self._spinner.add_node(self.node)
        return self._spinner

    def _wait_set_loop(self, stop, timeout_s) -> None:
        """Spin the floor: one wait set, one message taken per ready subscription."""
        wait_loop(self.node.context, [(s, s.callback) for s in self.subscriptions], stop,
                  timeout_s)

    def matched(self, readers: int) -> bool:
        """Every publisher is read by its peer (and the reader), every subscription fed."""
        third = readers - 1
        return (all(p.get_subscription_count() >= peer + third
                    for (p, _), peer in zip(self.publishers, self._peers))
                and all(s.get_publisher_count() >= 1 for s in self.subscriptions))

    def wait_matched(self, readers: int) -> None:
        deadline = time.monotonic() + DISCOVERY_TIMEOUT_S
        while not self.matched(readers):
            if time.monotonic() > deadline:
                raise TimeoutError(f'{self.variant} {self.role}: discovery did not complete')
            time.sleep(0.01)           # discovery runs in the rmw's threads: nothing to spin

    def close(self) -> None:
        if self._spinner is not None:
            self._spinner.shutdown()
        self.node.destroy_node()


def wait_loop(context, entries, stop, timeout_s) -> None:
    """
    Run the wait-set floor: ``entries`` = (subscription, callback of the taken message).

    Waits on the subscriptions only, takes one message per ready one (raw or not, as it was
    created) and calls its callback, until ``stop()`` or ``timeout_s`` (None: no limit).
    """
    from rclpy.impl.implementation_singleton import rclpy_implementation as _rclpy
    deadline = None if timeout_s is None else time.monotonic() + timeout_s
    with ExitStack() as stack:
        stack.enter_context(context.handle)
        handles = [stack.enter_context(s.handle) or s.handle for s, _ in entries]
        takes = [(s.handle.take_message, s.msg_type, s.raw, cb) for s, cb in entries]
        wait_set = _rclpy.WaitSet(len(handles), 0, 0, 0, 0, 0, context.handle)
        while not stop():
            wait_set.clear_entities()
            for handle in handles:
                wait_set.add_subscription(handle)
            wait_set.wait(100_000_000)
            for i, (take, msg_type, raw, callback) in enumerate(takes):
                if wait_set.is_ready('subscription', i):
                    taken = take(msg_type, raw)
                    if taken is not None:
                        callback(taken[0])
            if deadline is not None and time.monotonic() > deadline:
                return


# -- the processes -----------------------------------------------------------------------------

def _peer_main(role: str, variant: str, shape: str, readers: int) -> int:
    """Run a peer process: 'answer' (the controller side) or 'reader' (reads every topic)."""
    import rclpy
    from rclpy.signals import SignalHandlerOptions
    rclpy.init(args=[], signal_handler_options=SignalHandlerOptions.NO)   # SIGTERM ends it
    if role == 'reader':
        return _reader(variant)
    side = Side(variant, 'answer', shape)
    side.wait_matched(readers)
    print('ready', flush=True)
    side.serve()
    return 0


def _reader(variant: str) -> int:
    """Read all five topics as raw bytes with the wait-set floor (a recorder at its floor)."""
    from rclpy.node import Node
    types = _types()
    node = Node('bench_floor_reader')
    topics = dict(STATE_OUT['graph'] + ANSWER_OUT['graph'])
    subs = [node.create_subscription(types[t], PREFIX + topic, lambda _m: None,
                                     _qos(variant, False), raw=True)
            for topic, t in topics.items()]
    print('ready', flush=True)      # the writers wait until they see it (two readers each)
    wait_loop(node.context, [(s, s.callback) for s in subs], lambda: False, None)
    return 0


def _start_peer(role: str, variant: str, shape: str, readers: int, env) -> subprocess.Popen:
    proc = subprocess.Popen(
        [sys.executable, str(Path(__file__).resolve()), '--peer', role, '--variants', variant,
         '--shape', shape, '--readers', str(readers)],
        env=env, stdout=subprocess.PIPE, text=True)
    line = proc.stdout.readline().strip()
    if line != 'ready':
        proc.kill()
        proc.wait(10)
        raise RuntimeError(f'bench_floor peer {role} {variant} {shape} did not start ({line!r})')
    return proc


def _stop(proc: subprocess.Popen) -> None:
    proc.terminate()
    try:
        proc.wait(10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(10)


def process_cpu_s(pid: int) -> float:
    """User + system CPU time of a process so far, s."""
    fields = Path(f'/proc/{pid}/stat').read_text().rsplit(')', 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf('SC_CLK_TCK')


def measure(variant: str, shape: str, round_trips: int, env) -> dict:
    """
    One measurement: ``round_trips`` exchanges of ``variant`` in ``shape`` against fresh peers.

    Returns {'rate': round trips/s, 'cpu_us': (this process, the answering peer) CPU per round
    trip, 'load': 1-min load average}. rclpy must be initialised in this process.
    """
    base = 'graph' if shape == 'graph+reader' else shape
    readers = 2 if shape == 'graph+reader' else 1
    procs = []
    side = Side(variant, 'state', base)
    try:
        if readers == 2:
            procs.append(_start_peer('reader', variant, base, readers, env))
        peer = _start_peer('answer', variant, base, readers, env)
        procs.append(peer)
        side.wait_matched(readers)
        side.limit = WARM_UP
        side.send()
        side.spin_until_done(60.0)
        side.count, side.limit = 0, round_trips
        cpu0, peer0 = time.process_time(), process_cpu_s(peer.pid)
        t0 = time.perf_counter()
        side.send()
        side.spin_until_done(300.0)
        wall = time.perf_counter() - t0
        cpu = ((time.process_time() - cpu0) / round_trips * 1e6,
               (process_cpu_s(peer.pid) - peer0) / round_trips * 1e6)
        return {'rate': round_trips / wall, 'cpu_us': cpu, 'load': os.getloadavg()[0]}
    finally:
        side.close()
        for proc in procs:
            _stop(proc)


def run_rounds(variants, shapes, round_trips: int, rounds: int, env, extra=None) -> dict:
    """
    Interleaved rounds: every (variant, shape) once per round, plus ``extra(round)`` if given.

    Returns {(variant, shape): [measurement per round]}.
    """
    results = {(v, s): [] for v in variants for s in shapes}
    for round_ in range(rounds):
        for variant in variants:
            for shape in shapes:
                results[(variant, shape)].append(measure(variant, shape, round_trips, env))
        if extra is not None:
            extra(round_)
    return results


def best(measurements: list) -> dict:
    """Return the fastest round (a shared machine only ever slows a measurement down)."""
    return max(measurements, key=lambda m: m['rate'])


def print_table(results: dict, variants, shapes) -> float:
    """Print rates, ratios to the graph-shaped floor and CPU; return the floor (round trips/s)."""
    floor = best(results[(FLOOR, 'graph')])['rate'] if (FLOOR, 'graph') in results else None
    print(f'{"variant":58s} ' + ' '.join(f'{s:>24s}' for s in shapes))
    for variant in variants:
        cells = []
        for shape in shapes:
            m = best(results[(variant, shape)])
            ratio = f' {m["rate"] / floor:4.2f}' if floor else ''
            cells.append(f'{m["rate"]:7.0f}/s{ratio} (l {m["load"]:3.1f})')
        print(f'{VARIANTS[variant]:58s} ' + ' '.join(f'{c:>24s}' for c in cells))
    print('CPU per round trip, us (this process / the answering peer), best round:')
    for variant in variants:
        print(f'  {VARIANTS[variant]:56s} ' + '  '.join(
            '{:>5.0f} / {:<5.0f}'.format(*best(results[(variant, s)])['cpu_us']) for s in shapes))
    print('all rounds, /s: ' + '; '.join(
        f'{v} {s}: ' + ' '.join(f'{m["rate"]:.0f}' for m in ms)
        for (v, s), ms in results.items()))
    return floor


def pick_domain() -> int:
    """Return a ROS domain for the bench: from ``DODO_TEST_DOMAINS=lo:hi`` when set."""
    text = os.environ.get('DODO_TEST_DOMAINS')
    if text:
        low, high = (int(x) for x in text.split(':'))
        return low + os.getpid() % (high - low + 1)
    return 1 + os.getpid() % 99


def bench_env() -> dict:
    """Environment of the bench's processes: a private domain, localhost discovery."""
    os.environ.setdefault('ROS_DOMAIN_ID', str(pick_domain()))
    os.environ['ROS_AUTOMATIC_DISCOVERY_RANGE'] = 'LOCALHOST'
    return dict(os.environ)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--round-trips', type=int, default=3000)
    parser.add_argument('--rounds', type=int, default=3)
    parser.add_argument('--variants', nargs='+', choices=list(VARIANTS), default=list(VARIANTS))
    parser.add_argument('--shapes', nargs='+', choices=SHAPES, default=list(SHAPES))
    parser.add_argument('--peer', choices=('answer', 'reader'), help=argparse.SUPPRESS)
    parser.add_argument('--shape', default='graph', help=argparse.SUPPRESS)
    parser.add_argument('--readers', type=int, default=1, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.peer:
        return _peer_main(args.peer, args.variants[0], args.shape, args.readers)
    env = bench_env()
    import rclpy
    rclpy.init(args=[])
    try:
        results = run_rounds(args.variants, args.shapes, args.round_trips, args.rounds, env)
    finally:
        rclpy.try_shutdown()
    print(f'machine: {os.cpu_count()} cpus, load {os.getloadavg()[0]:.1f} (1 min), python '
          f'{sys.version.split()[0]}, ROS domain {env["ROS_DOMAIN_ID"]}, {args.round_trips} '
          f'round trips, best of {args.rounds} interleaved rounds; ratio = to the graph-shaped '
          f'floor ({VARIANTS[FLOOR]})')
    print_table(results, args.variants, args.shapes)
    return 0


if __name__ == '__main__':
    sys.exit(main())
