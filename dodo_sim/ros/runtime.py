# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
The runtime every dodo_sim node shares.

It has rclpy init with our own signal handling, the executor, spinning until done, throttled
warnings, stamps and exit codes.

A node module's ``main`` is::

    def main(args=None) -> int:
        return runtime.run_node(SimulatorNode, 'simulator', args)

``run_node`` turns a configuration error raised by the node's constructor (``ValueError``, incl.
``ModelError``/``ParamsFileError``) into one fatal log line and :data:`EXIT_CONFIG`, spins until
SIGINT/SIGTERM or until the node's ``done`` future (if it has one) completes, waits (at most
:data:`ACK_WAIT_S`) until its reliable subscribers have acknowledged what it published
(:func:`wait_for_acks`), destroys the node and shuts rclpy down; the exit code is the node's
``exit_code`` attribute (default :data:`EXIT_OK`).

Also here, for every node that takes part in the state/command exchange (simulator, controller,
hardware driver): :class:`Histogram` (fixed memory, exact percentiles of integer samples),
:func:`format_summary` / :func:`parse_summary` (the one-line run summaries a node logs at its
end, which ``dodo hop`` and the tests read), :func:`with_message_info` and :func:`drain` (take
what a subscription has queued, newest last, with the publisher of each message).
"""
from __future__ import annotations

import gc
import inspect
import math
import signal
import sys
import time

from dodo_sim.stamps import NS_PER_S

#: Process exit codes of the nodes and the dodo commands, their one table (``dodo hop`` reports a
#: node's by name). EXIT_CONFIG: a bad configuration or command line; 128 + signal: stopped by it.
EXIT_OK, EXIT_FAILED, EXIT_CONFIG, EXIT_DIVERGED = 0, 1, 2, 3
EXIT_INTERRUPTED, EXIT_TERMINATED = 128 + signal.SIGINT, 128 + signal.SIGTERM
EXIT_NAMES = {EXIT_OK: 'ok', EXIT_FAILED: 'failed', EXIT_CONFIG: 'bad configuration',
              EXIT_DIVERGED: 'simulation diverged'}


class WarnThrottle:
    """Per-key throttling of repeated log messages (steady wall clock)."""

    def __init__(self, logger, period_s: float):
        self._logger = logger
        self._period = period_s
        self._last: dict[str, float] = {}

    def warn(self, key: str, message: str) -> None:
        if self._due(key):
            self._logger.warning(message)

    def info(self, key: str, message: str) -> None:
        if self._due(key):
            self._logger.info(message)

    def _due(self, key: str) -> bool:
        now = time.monotonic()
        if now - self._last.get(key, -math.inf) >= self._period:
            self._last[key] = now
            return True
        return False


def stamp_from_ns(ns: int):
    """builtin_interfaces/Time of an integer time in ns."""
    from builtin_interfaces.msg import Time
    return Time(sec=ns // NS_PER_S, nanosec=ns % NS_PER_S)


def stamp_to_ns(stamp) -> int:
    """Integer ns of a builtin_interfaces/Time (or anything with sec / nanosec)."""
    return stamp.sec * NS_PER_S + stamp.nanosec


class Histogram:
    """
    Counts of integer samples (e.g. ns) in ``bins`` bins of ``bin_width``.

    It takes fixed memory however long the run and gives the exact count, max and min, and
    nearest-rank percentiles to one bin width.

    A sample ``x`` goes to bin ``ceil(x / bin_width)`` (samples above the last bin to an overflow
    bin whose percentiles report the exact max), so a sample that is a multiple of the width — a
    command age in control periods — is reported exactly.
    """

    def __init__(self, bin_width: int, bins: int):
        if bin_width <= 0 or bins <= 0:
            raise ValueError(f'Histogram needs bin_width > 0 and bins > 0, got {bin_width}, '
                             f'{bins}')
        self.bin_width = int(bin_width)
        self.counts = [0] * (int(bins) + 1)          # the last one: overflow
        self.count = 0
        self.max = None
        self.min = None

    def add(self, value: int) -> None:
        value = int(value)
        index = -(-value // self.bin_width) if value > 0 else 0
        last = len(self.counts) - 1
        self.counts[index if index < last else last] += 1
        self.count += 1
        if self.max is None or value > self.max:
            self.max = value
        if self.min is None or value < self.min:
            self.min = value

    def percentile(self, p: float):
        """
        Smallest bin value v with at least p % of the samples <= v (None when empty).

        For the overflow bin it is the max.
        """
        if self.count == 0:
            return None
        rank = max(1, math.ceil(p / 100.0 * self.count))
        seen = 0
        for index, n in enumerate(self.counts):
            seen += n
            if seen >= rank:
                if index == len(self.counts) - 1:
                    return self.max
                return min(index * self.bin_width, self.max)
        return self.max


def nearest_rank(values, p: float):
    """
    Return the nearest-rank percentile of a list of numbers.

    It is what :meth:`Histogram.percentile` reports for samples that are multiples of its bin
    width; None when the list is empty.
    """
    ordered = sorted(values)
    if not ordered:
        return None
    return ordered[max(1, math.ceil(p / 100.0 * len(ordered))) - 1]


#: First words of the one-line run summaries the nodes log at their end (``dodo hop`` prints
#: them; :func:`parse_summary` reads them back). The simulator writes ``dodo exchange: ...``,
#: the controller ``dodo controller: ...``.
SUMMARY_PREFIX = 'dodo '


def value_text(value) -> str:
    """Return a summary or /diagnostics value as text: floats with 3 decimals, None as ``-``."""
    if value is None:
        return '-'
    if isinstance(value, bool):
        return 'true' if value else 'false'
    if isinstance(value, float):
        return f'{value:.3f}'
    return str(value)


def format_summary(kind: str, fields: dict) -> str:
    """``dodo <kind>: key=value key=value ...`` (floats with 3 decimals, None as ``-``)."""
    return (f'{SUMMARY_PREFIX}{kind}: '
            + ' '.join(f'{k}={value_text(v)}' for k, v in fields.items()))


#: Summary values written as words (:func:`value_text`) and what they read back as.
_WORDS = {'-': None, 'true': True, 'false': False}


def parse_summary(text: str, kind: str) -> dict | None:
    """
    Return the fields of the last ``dodo <kind>:`` summary in ``text``.

    The inverse of :func:`value_text`: numbers come as int or float, ``true`` / ``false`` as
    bool, ``-`` as None, anything else as str; None if there is no summary.
    """
    head = f'{SUMMARY_PREFIX}{kind}: '
    lines = [line[line.index(head) + len(head):] for line in text.splitlines() if head in line]
    if not lines:
        return None
    fields = {}
    for item in lines[-1].split():
        key, _, value = item.partition('=')
        if value in _WORDS:
            fields[key] = _WORDS[value]
            continue
        for kind_ in (int, float):
            try:
                fields[key] = kind_(value)
                break
            except ValueError:
                continue
        else:
            fields[key] = value
    return fields


class _WithMessageInfo:
    """
    A subscription callback that gets ``(msg, info)``.

    The EventsExecutor of rclpy 9.1 passes them as one tuple, the other executors as two arguments;
    this accepts both.
    """

    __signature__ = inspect.Signature([
        inspect.Parameter('msg', inspect.Parameter.POSITIONAL_ONLY),
        inspect.Parameter('info', inspect.Parameter.POSITIONAL_ONLY)])

    def __init__(self, function):
        self._function = function

    def __call__(self, *args):
        if len(args) == 1:
            args = args[0]
        return self._function(args[0], args[1])


def with_message_info(function):
    """
    Wrap ``function(msg, info)`` for ``create_subscription``.

    The wrapped function gets the message info (``info['publisher_gid']['data']`` names the
    publisher) under every executor.
    """
    return _WithMessageInfo(function)


def drain(subscription, limit: int = 100_000):
    """
    Yield ``(msg, info)`` for every message the subscription has queued (oldest first).

    A callback that must act on the newest input only (the controller, realtime) takes the
    backlog itself; the executor's later take for those messages finds nothing and calls no
    callback (all rclpy executors skip an empty take).
    """
    handle = subscription.handle
    msg_type, raw = subscription.msg_type, subscription.raw     # raw: serialized bytes
    with handle:
        for _ in range(limit):
            taken = handle.take_message(msg_type, raw)
            if taken is None:
                return
            yield taken


def publisher_gid(info) -> bytes:
    """Return the publisher id of a message (from its message info); b'' if the rmw gives none."""
    gid = info.get('publisher_gid') if info else None
    return bytes(gid['data']) if gid else b''


def endpoint_gid(endpoint) -> bytes:
    """
    Return the id of a graph endpoint (``get_publishers_info_by_topic``).

    It is comparable with :func:`publisher_gid` (the rmw may pad it).
    """
    return bytes(endpoint.endpoint_gid)


#: The node name rmw gives an endpoint whose node the graph does not know yet (Fast DDS learns
#: a participant's endpoints before its list of nodes; rmw_dds_common's placeholder).
UNKNOWN_NODE_NAME = '_NODE_NAME_UNKNOWN_'


def endpoint_node(endpoint) -> str:
    """
    Return the full name of a graph endpoint's node (``/namespace/name``).

    '' while the graph does not know the node yet (:data:`UNKNOWN_NODE_NAME`): a later look
    names it.
    """
    if endpoint.node_name == UNKNOWN_NODE_NAME:
        return ''
    return f'{endpoint.node_namespace.rstrip("/")}/{endpoint.node_name}'


def endpoint_facts(endpoint):
    """
    Return a graph endpoint as the start gate reads it (:class:`dodo_sim.ros.start_gate.Endpoint`).

    Its node, type and the reliability and durability it offers or asks for.
    """
    from dodo_sim.ros.start_gate import Endpoint
    from rclpy.qos import DurabilityPolicy, ReliabilityPolicy
    qos = endpoint.qos_profile
    return Endpoint(endpoint_node(endpoint), endpoint.topic_type,
                    reliable=qos.reliability == ReliabilityPolicy.RELIABLE,
                    transient_local=qos.durability == DurabilityPolicy.TRANSIENT_LOCAL)


def publisher_nodes(node, topic: str) -> list:
    """Return the full names of the nodes publishing on ``topic``, sorted, once per publisher."""
    return sorted(endpoint_node(e) for e in node.get_publishers_info_by_topic(topic))


def make_executor():
    """Return the fastest executor on rclpy Kilted for a 1 kHz exchange (bench/bench_ros.py)."""
    from rclpy.experimental import EventsExecutor
    return EventsExecutor()


def init_ros(args=None):
    """
    ``rclpy.init`` with our own SIGINT/SIGTERM handling; returns the 'stop' future.

    rclpy's handlers do not wake the EventsExecutor (rclpy 9.1), so the signals complete a
    future instead and :func:`spin_until` returns within ``poll_s``.
    """
    import rclpy
    from rclpy.signals import SignalHandlerOptions
    from rclpy.task import Future
    rclpy.init(args=args if args is not None else sys.argv,
               signal_handler_options=SignalHandlerOptions.NO)
    stop = Future()

    def on_signal(signum, frame):
        if not stop.done():
            stop.set_result(signum)

    signal.signal(signal.SIGINT, on_signal)
    signal.signal(signal.SIGTERM, on_signal)
    return stop


def spin_until(executor, *futures, poll_s: float = 0.2) -> None:
    """Spin until one of ``futures`` is done (checks every ``poll_s`` for signals)."""
    from rclpy.task import Future
    either = Future()
    for future in futures:
        future.add_done_callback(lambda f: either.done() or either.set_result(True))
    while not either.done():
        executor.spin_until_future_complete(either, timeout_sec=poll_s)


#: Wall s a node that ends waits, at most, for its reliable subscribers to acknowledge what it
#: published. Fast DDS drops a deleted writer's unacknowledged samples, so a recorder that fell
#: behind (a loaded machine) lost the tail of the run when the simulator exited at once (issue 27
#: item 8: /clock and odom ended at 1.256 s of a 2 s run). ``dodo hop`` checks the bag's end too.
ACK_WAIT_S = 5.0


def wait_for_acks(node, timeout_s: float = ACK_WAIT_S, slice_s: float = 0.05) -> list:
    """
    Wait until every reliable subscriber acknowledged what ``node`` published; a bounded wait.

    Returns the topics still unacknowledged after ``timeout_s`` (logged as a warning). A SIGINT
    or SIGTERM during the wait ends it at once (a further stop request must not wait).
    """
    from rclpy.duration import Duration
    interrupted = []
    saved = {signum: signal.signal(signum, lambda *_: interrupted.append(signum))
             for signum in (signal.SIGINT, signal.SIGTERM)}
    deadline = time.monotonic() + timeout_s
    late = []
    try:
        for publisher in list(node.publishers):
            while not interrupted:
                try:
                    acked = publisher.wait_for_all_acked(Duration(seconds=slice_s))
                except RuntimeError:         # the middleware cannot tell: do not wait
                    acked = True
                if acked:
                    break
                if time.monotonic() > deadline:
                    late.append(publisher.topic_name)
                    break
    finally:
        for signum, handler in saved.items():
            signal.signal(signum, handler)
    if late:
        node.get_logger().warning(
            f'{len(late)} topic(s) not acknowledged by all subscribers within {timeout_s:g} s '
            f'(a stalled subscriber, e.g. the recorder): {late}; what they have not received is '
            f'lost for them')
    return late


def run_node(factory, name: str, args=None) -> int:
    """Create the node with ``factory()``, spin it, clean up; return the process exit code."""
    import rclpy
    from rclpy.executors import ExternalShutdownException
    stop = init_ros(args)
    node = None
    code = EXIT_OK
    try:
        try:
            node = factory()
        except ValueError as exc:   # ModelError, ParamsFileError and config errors
            rclpy.logging.get_logger(name).fatal(f'bad configuration: {exc}')
            return EXIT_CONFIG
        executor = make_executor()
        executor.add_node(node)
        # what the node built (models, kernels, rclpy objects: ~10^5-10^6 objects) never dies:
        # frozen out of the collector, a full collection in the loop no longer walks it (stalls
        # of 10-45 ms in the 1 kHz driver before, under 5 ms after; docs/hardware.md "Timing")
        gc.collect()
        gc.freeze()
        done = getattr(node, 'done', None)
        spin_until(executor, *([done] if done is not None else []), stop)
        code = getattr(node, 'exit_code', EXIT_OK)
        wait_for_acks(node)
    except (KeyboardInterrupt, ExternalShutdownException):
        code = getattr(node, 'exit_code', EXIT_OK) if node is not None else EXIT_OK
    finally:
        if node is not None:
            node.destroy_node()
        rclpy.try_shutdown()
    return code


__all__ = ['EXIT_OK', 'EXIT_FAILED', 'EXIT_CONFIG', 'EXIT_DIVERGED', 'EXIT_INTERRUPTED',
           'EXIT_TERMINATED', 'EXIT_NAMES', 'WarnThrottle',
           'stamp_from_ns', 'stamp_to_ns', 'Histogram', 'nearest_rank', 'SUMMARY_PREFIX',
           'format_summary', 'parse_summary', 'with_message_info', 'drain', 'publisher_gid',
           'endpoint_gid', 'endpoint_facts', 'UNKNOWN_NODE_NAME', 'make_executor', 'init_ros',
           'spin_until',
           'run_node', 'ACK_WAIT_S', 'wait_for_acks']
