"""The runtime every dodo_sim node shares: rclpy init with our own signal handling, the executor,
spinning until done, throttled warnings, stamps and exit codes.

A node module's ``main`` is::

    def main(args=None) -> int:
        return runtime.run_node(SimulatorNode, 'simulator', args)

``run_node`` turns a configuration error raised by the node's constructor (``ValueError``, incl.
``ModelError``/``ParamsFileError``) into one fatal log line and :data:`EXIT_CONFIG`, spins until
SIGINT/SIGTERM or until the node's ``done`` future (if it has one) completes, destroys the node
and shuts rclpy down; the exit code is the node's ``exit_code`` attribute (default
:data:`EXIT_OK`).
"""
from __future__ import annotations

import math
import signal
import sys
import time

#: Process exit codes of the nodes (``dodo hop`` reports them by name).
EXIT_OK, EXIT_FAILED, EXIT_CONFIG, EXIT_DIVERGED = 0, 1, 2, 3
EXIT_NAMES = {EXIT_OK: 'ok', EXIT_FAILED: 'failed', EXIT_CONFIG: 'bad configuration',
              EXIT_DIVERGED: 'simulation diverged'}

NS_PER_S = 1_000_000_000


class WarnThrottle:
    """Per-key throttling of repeated log messages (steady wall clock)."""

    def __init__(self, logger, period_s: float):
        self._logger = logger
        self._period = period_s
        self._last: dict[str, float] = {}

    def warn(self, key: str, message: str) -> None:
        now = time.monotonic()
        if now - self._last.get(key, -math.inf) >= self._period:
            self._last[key] = now
            self._logger.warning(message)


def stamp_from_ns(ns: int):
    """builtin_interfaces/Time of an integer time in ns."""
    from builtin_interfaces.msg import Time
    return Time(sec=ns // NS_PER_S, nanosec=ns % NS_PER_S)


def stamp_to_ns(stamp) -> int:
    """Integer ns of a builtin_interfaces/Time (or anything with sec / nanosec)."""
    return stamp.sec * NS_PER_S + stamp.nanosec


def make_executor():
    """The fastest executor on rclpy Kilted for a 1 kHz exchange (bench/bench_ros.py)."""
    from rclpy.experimental import EventsExecutor
    return EventsExecutor()


def init_ros(args=None):
    """``rclpy.init`` with our own SIGINT/SIGTERM handling; returns the 'stop' future.

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
        done = getattr(node, 'done', None)
        spin_until(executor, *([done] if done is not None else []), stop)
        code = getattr(node, 'exit_code', EXIT_OK)
    except (KeyboardInterrupt, ExternalShutdownException):
        code = getattr(node, 'exit_code', EXIT_OK) if node is not None else EXIT_OK
    finally:
        if node is not None:
            node.destroy_node()
        rclpy.try_shutdown()
    return code


__all__ = ['EXIT_OK', 'EXIT_FAILED', 'EXIT_CONFIG', 'EXIT_DIVERGED', 'EXIT_NAMES', 'WarnThrottle',
           'stamp_from_ns', 'stamp_to_ns', 'make_executor', 'init_ros', 'spin_until', 'run_node']
