# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
What a ``dodo hop`` / ``dodo walk`` run did: its result, its verdict, its last lines.

:class:`RunResult` and its summary lines (the outcome, the walk, the simulator <-> controller
exchange, the driver's loop), the exit codes and what a node's exit code means, the failures
the nodes' summary lines show (:func:`summary_failures`), the bag's /clock, the driver's log
merged into the bag, and the plots (:func:`write_report`: every line after the run).
"""
from __future__ import annotations

from dataclasses import dataclass, field
import math
import os
from pathlib import Path
import signal
import struct
from typing import TextIO

from dodo_sim.hardware.driver import EXIT_MOTORS_STOPPED, EXIT_WATCHDOG_TRIPPED
from dodo_sim.hardware.state_log import state_log_path
from dodo_sim.ros import contract
from dodo_sim.ros.runtime import EXIT_DIVERGED, EXIT_FAILED, EXIT_NAMES, EXIT_OK
from dodo_sim.tools.run_checks import one_line

#: The driver's exit code 3: its emulated hardware's physics diverged.
DRIVER_EXIT_NAMES = {**EXIT_NAMES, EXIT_DIVERGED: 'emulated physics diverged',
                     EXIT_MOTORS_STOPPED: 'motors stopped by a fault, e-stop or ~/disable',
                     EXIT_WATCHDOG_TRIPPED: 'watchdog tripped: the controller was silent'}


def exit_name(code: int | None, node: str = '') -> str:
    """Return what a node's exit code means."""
    if code is not None and code < 0:
        return f'killed by {signal.Signals(-code).name}'
    return (DRIVER_EXIT_NAMES if node == 'driver' else EXIT_NAMES).get(code, 'failed')


def _ms(summary: dict, key: str) -> str:
    """Return a summary's milliseconds with two decimals ('-' if it has none)."""
    value = summary.get(key)
    return '-' if value is None else f'{value:.2f}'


@dataclass
class RunResult:
    """What a run did (``dodo hop`` prints :meth:`summary`)."""

    outcome: str                   # completed | interrupted | terminated | failed
    exit_code: int
    duration_s: float
    sim_time_s: float | None = None
    steps: int | None = None
    stop_reason: str | None = None
    wall_s: float = 0.0
    signal_name: str | None = None
    failures: list = field(default_factory=list)
    exit_codes: dict = field(default_factory=dict)
    bag: Path | None = None
    bag_closed: bool | None = None
    exchange: dict | None = None   # the simulator's ``dodo exchange:`` counters
    hardware: str | None = None    # 'emulated' | 'can': the driver ran instead of the simulator
    driver: dict | None = None     # the driver's ``dodo driver:`` summary
    outcome_monitor: dict | None = None   # the controller's monitor (walker: steps, fall)

    def walk_summary(self) -> str | None:
        """
        One line on the walk (controllers with an outcome monitor).

        It gives the steps, distance, speed and the fall, from the controller's summary line.
        """
        m = self.outcome_monitor
        if not m or 'steps' not in m:
            return None

        def num(key, fmt):
            value = m.get(key)
            ok = isinstance(value, (int, float)) and math.isfinite(value)
            return format(value, fmt) if ok else '-'

        text = (f"walked {m['steps']} steps, {num('distance_m', '.3f')} m, speed "
                f"{num('speed_m_s', '.3f')} m/s (from the fifth step on)")
        if m.get('fall_reason'):
            text += (f"; FELL: {m['fall_reason']} at t = {num('fall_time_s', '.3f')} s")
        return text

    def hop_summary(self) -> str | None:
        """
        One line on the hopping (the SLIP leg's outcome monitor, dodo_control.slip.outcome).

        Liftoffs and the longest ground contact, from the controller's summary line.
        """
        m = self.outcome_monitor
        if not m or 'liftoffs' not in m:
            return None
        longest = m.get('longest_stance_s')
        longest = f'{longest:.3f}' if isinstance(longest, (int, float)) else '?'
        return f"hopped: {m['liftoffs']} liftoff(s), longest ground contact {longest} s"

    def exchange_summary(self) -> str | None:
        """
        One line on the simulator <-> controller exchange.

        It gives the command ages (p50/p99/max, ms), overruns, timeouts, stale, rejected and
        foreign (ignored) commands.
        """
        x = self.exchange
        if not x:
            return None
        return (f"exchange ({x.get('mode', '?')}): command age p50/p99/max = "
                f"{_ms(x, 'age_ms_p50')}/{_ms(x, 'age_ms_p99')}/{_ms(x, 'age_ms_max')} ms, "
                f"{x.get('stale_steps', 0)} stale step(s), {x.get('timeouts', 0)} timeout(s), "
                f"{x.get('overruns', 0)} overrun(s), {x.get('zero_torque_steps', 0)} zero-torque "
                f"step(s), {x.get('rejected', 0)} rejected, {x.get('foreign', 0)} foreign and "
                f"{x.get('future', 0)} future command(s) refused" + (
                    f", {x['waits']} wait(s) past command_timeout (longest "
                    f"{x.get('wait_s_max', 0):.2f} s, simulated time paused)"
                    if x.get('waits') else ''))

    def driver_summary(self) -> str | None:
        """
        One line on the driver's loop.

        It gives the cycles and rate, cycle period and state-to-command age (p50/p99/max, ms),
        watchdog trips, missed replies, skipped emulator steps.
        """
        x = self.driver
        if not x:
            return None
        rate = x.get('rate_hz')
        return (f"driver ({x.get('hardware', '?')}"
                + (f", {x['emulator_mode']}" if x.get('emulator_mode') else '') + '): '
                f"{x.get('cycles', '?')} cycles at "
                + ('?' if rate is None else f'{rate:.0f}') + ' Hz, period p50/p99/max = '
                f"{_ms(x, 'period_ms_p50')}/{_ms(x, 'period_ms_p99')}/"
                f"{_ms(x, 'period_ms_max')} ms ({x.get('missed_deadlines', '?')} missed "
                f"deadline(s)), state-to-command age p50/p99/max = {_ms(x, 'age_ms_p50')}/"
                f"{_ms(x, 'age_ms_p99')}/{_ms(x, 'age_ms_max')} ms, "
                f"{x.get('watchdog_trips', 0)} watchdog trip(s)"
                + (f" (longest {x['watchdog_s_max']:.3f} s)" if x.get('watchdog_trips')
                   and isinstance(x.get('watchdog_s_max'), float) else '') + ', '
                f"{x.get('estops', 0)} e-stop(s), "
                f"{x.get('missed_replies', 0)} missed repl(ies), {x.get('rejected', 0)} "
                f"rejected, {x.get('foreign', 0)} foreign and {x.get('future', 0)} future "
                f'command(s) refused'
                + (f", {x['skipped_steps']} skipped emulator step(s)"
                   if x.get('skipped_steps') is not None else ''))

    def summary(self) -> str:
        t = ('t = ?' if self.sim_time_s is None else f't = {self.sim_time_s:.3f} s')
        kind = 'simulated' if self.hardware is None else 'of driver time'
        of = f'of {self.duration_s:g} s {kind}'
        if self.outcome == 'completed':
            unit = 'steps' if self.hardware is None else 'cycles'
            steps = f' ({self.steps} {unit})' if self.steps is not None else ''
            head = f'completed: {t}{steps} {kind} in {self.wall_s:.1f} s wall time'
        elif self.outcome == 'interrupted':
            head = f'interrupted ({self.signal_name}) at {t} {of}, after {self.wall_s:.1f} s'
        elif self.outcome == 'terminated':
            head = f'terminated ({self.signal_name}) at {t} {of}, after {self.wall_s:.1f} s'
        else:
            head = f'FAILED at {t} {of}: ' + '; '.join(self.failures)
        if self.stop_reason:
            head += (f' (simulator: {self.stop_reason})' if self.hardware is None
                     else f' (driver: {self.stop_reason})')
        if self.outcome != 'failed':
            if self.failures:
                head += '; but: ' + '; '.join(self.failures)
            else:
                head += ('; every process exited cleanly' if self.outcome == 'completed'
                         else '; every process stopped cleanly')
        return head


def summary_failures(outcome: str, sim_time: float | None, *, duration: float, clock: str,
                     hardware: str | None, sim_summary: dict | None,
                     driver_summary: dict | None, controller_summary: dict | None,
                     watchdog_events: list, motors_off_events: list) -> list[str]:
    """
    Return the failures the nodes' summary lines and events show, in the order they are told.

    Short of the duration, the driver not at stop_after, watchdog trips and stopped motors,
    the controller lost, command timeouts, foreign commands, a fall, the hosted controller's
    task failure (its outcome monitor's ``task_failure``).
    """
    failures = []
    x = sim_summary or {}
    # a client that set the simulation quitting (SetSimulationState) ended it: not short
    if (outcome == 'completed' and sim_time is not None and sim_time + 1e-6 < duration
            and x.get('stop_reason') != 'quit'):
        failures.append(f'the {clock} stopped at t = {sim_time:.3f} s, before {duration:g} s')
    if (outcome == 'completed' and hardware is not None
            and (driver_summary or {}).get('stop_reason') != 'stop_after'):
        reason = (driver_summary or {}).get('stop_reason')
        failures.append('the driver did not report reaching stop_after ('
                        + (f'it stopped for {reason}' if isinstance(reason, str) and reason
                           else 'no summary line from it') + ')')
    for event in watchdog_events:
        # the controller was silent: the run does not show it (DESIGN.md section 7)
        failures.append(f"the driver's watchdog tripped {event}")
    for event in motors_off_events:
        # a fault, e-stop or ~/disable stopped the motors: the run failed (issue 16 item 0)
        failures.append(f'the driver stopped the motors: {event}')
    if x.get('stop_reason') == 'controller_lost':
        wait = x.get('wait_s_max')
        wait = f'{wait:.1f}' if isinstance(wait, (int, float)) else '?'
        who = _node_name(x.get('controller')) or 'a controller'
        failures.append(f'controller lost: the simulator waited {wait} s for {who} to answer a '
                        f'state and ended the run (its log says why)')
    timeouts = _count(x.get('timeouts'))
    if timeouts:
        # zero torque replaced the controller's answer: the run does not show the controller
        zero = x.get('zero_torque_steps', '?')
        controller = _node_name(x.get('controller'))
        failures.append(f'{timeouts} command timeout(s): the controller'
                        + (f' {controller}' if controller else '') + ' did not answer within '
                        f'command_timeout and the simulator applied zero torque on {zero} '
                        f"step(s), so this run does not show the controller's behaviour (a "
                        f'stalled controller or an overloaded machine)')
    for consumer, summary in (('simulator', x), ('driver', driver_summary or {})):
        if _count(summary.get('foreign')):
            failures.append(foreign_failure(consumer, summary))
    fall = (controller_summary or {}).get('fall_reason')
    if isinstance(fall, str) and fall:
        when = controller_summary.get('fall_time_s')
        when = f'{when:.3f}' if isinstance(when, (int, float)) else '?'
        failures.append(f'the robot fell: {fall} at t = {when} s (controller)')
    task = task_failure(controller_summary)
    if task:
        failures.append(task)
    return failures


def foreign_failure(consumer: str, x: dict) -> str:
    """
    Say that a command consumer refused another publisher's commands, naming both nodes.

    The bound controller is the first publisher whose command answered a state (a stray that
    answered first is it); ``foreign_nodes`` are the refused ones (docs/ros_contract.md).
    """
    # the run itself is the bound controller's (never shifted), but the graph was not clean
    controller = _node_name(x.get('controller')) or 'a controller'
    if summary_flag(x.get('duplicate_controller')) and _node_name(x.get('controller')):
        who = f'a second node named {controller}'
    else:
        nodes = x.get('foreign_nodes')
        who = nodes if isinstance(nodes, str) and nodes else 'a second publisher'
    return (f"{_count(x.get('foreign'))} command(s) from {who} refused: the {consumer} applied "
            f'only the commands of {controller} (the first whose command answered a state); two '
            f"controllers on the graph (the applied commands are the bag's "
            f'{contract.JOINT_COMMANDS}, the others {contract.IGNORED_COMMANDS})')


def summary_flag(value) -> bool:
    """
    Read a true/false field of a node's summary line, whatever type its parser gave it.

    True for ``True``, ``1`` and the text ``true``; everything else (``False``, ``'false'``,
    ``0``, ``None``, a missing field) is false: the report never turns a ``false`` into a cause.
    """
    if isinstance(value, str):
        return value.strip().lower() == 'true'
    return value is True or (isinstance(value, int) and value == 1)


def _count(value) -> int:
    """Return a summary's count (0 for anything that is not a whole number >= 0)."""
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


def _node_name(value) -> str:
    """Return a summary's node name ('' unless it is a ROS node name)."""
    return value if isinstance(value, str) and value.startswith('/') else ''


def task_failure(controller_summary: dict | None) -> str | None:
    """
    Return the line saying why the hosted controller's task failed, or None.

    The controller's outcome monitor (``dodo_control.registry``) puts ``task_failure`` (a reason)
    into the controller's summary line; its class words it (``failure_text``), e.g. the SLIP
    leg's ``the leg did not hop: on the ground from t = 0.606 s for more than 1 s ...``.
    """
    m = controller_summary or {}
    reason = m.get('task_failure')
    if not isinstance(reason, str) or not reason:
        return None
    text = None
    try:
        from dodo_control.registry import controller_entry
        monitor = controller_entry(str(m.get('controller'))).monitor_class()
        if monitor is not None and hasattr(monitor, 'failure_text'):
            text = monitor.failure_text(m)
    except (ValueError, ImportError):       # a controller this install does not know
        text = None
    when = m.get('task_failure_time_s')
    when = f'{when:.3f}' if isinstance(when, (int, float)) else '?'
    return (text or f'the task failed: {reason} at t = {when} s') + ' (controller)'


def bag_clock(bag: Path, domain: str = '?') -> tuple[float | None, str | None]:
    """
    (time of the last /clock in a closed bag, s; a problem found).

    /clock must rise strictly in bag order — a step back means the bag holds a second graph's
    messages.
    """
    from dodo_sim.tools.bag import read_bag
    from dodo_sim.tools.bag_arrays import clock
    import numpy as np
    try:
        data = read_bag(bag, [contract.CLOCK])
    except (OSError, ValueError) as exc:
        return None, f'cannot read the bag {bag}: {one_line(exc)}'
    if contract.CLOCK not in data:
        return None, None
    times = clock(data[contract.CLOCK])
    back = np.nonzero(np.diff(times) <= 0.0)[0]
    problem = None
    if back.size:
        i = int(back[0])
        problem = (f'the bag mixes messages of another graph: /clock goes from '
                   f'{times[i]:.3f} s back to {times[i + 1]:.3f} s (another simulator in ROS '
                   f'domain {domain}?)')
    return float(times.max()), problem


#: Recorded streams whose messages carry their stamp first (a std_msgs/Header, or the Clock's
#: time): the simulator's and the controller's streams, judged by :func:`bag_tail_problem`.
STAMPED_STREAM_TYPES = ('rosgraph_msgs/msg/Clock', 'sensor_msgs/msg/JointState',
                        'geometry_msgs/msg/WrenchStamped', 'nav_msgs/msg/Odometry')


def _first_stamp_ns(cdr: bytes) -> int:
    """
    Return the time a CDR message starts with, ns.

    int32 sec and uint32 nanosec after the 4-byte encapsulation header.
    """
    sec, nanosec = struct.unpack_from('<iI' if cdr[1] == 1 else '>iI', cdr, 4)
    return sec * 1_000_000_000 + nanosec


def stream_ends(bag) -> dict[str, tuple[float, float]]:
    """
    Return topic -> (newest stamp, period) of every stamped stream of a closed bag, in s.

    Streams: the topics of :data:`STAMPED_STREAM_TYPES` with at least 3 messages, except the
    ignored commands of a second controller; the period is the median step between their sorted
    distinct stamps. Stamps are read from the serialized bytes (nothing is deserialized).
    """
    import numpy as np

    from dodo_sim.tools.bag import iter_raw_messages, topic_types
    topics = [t for t, kind in topic_types(bag).items()
              if kind in STAMPED_STREAM_TYPES and t != contract.IGNORED_COMMANDS]
    stamps: dict[str, list] = {}
    for topic, _, _, data in iter_raw_messages(bag, topics):
        if len(data) >= 12:
            stamps.setdefault(topic, []).append(_first_stamp_ns(data))
    ends = {}
    for topic, values in stamps.items():
        distinct = np.unique(np.asarray(values, dtype=np.int64))
        if len(distinct) >= 3:
            ends[topic] = (distinct[-1] * 1e-9, float(np.median(np.diff(distinct))) * 1e-9)
    return ends


def bag_tail_problem(ends: dict[str, tuple[float, float]], end_s: float) -> str | None:
    """
    Say which streams of the bag stop before the simulated end ``end_s``, and by how much.

    A stream may end up to 1.5 of its periods before the end (odom every 10 ms, the last command
    answering the state before the last); anything shorter lost its tail, e.g. a recorder whose
    DDS readers had not received the last samples when the simulator exited (issue 27 item 8).
    None when every stream reaches the end.
    """
    short = sorted((last, topic, period) for topic, (last, period) in ends.items()
                   if end_s - last > 1.5 * period + 1e-6)
    if not short:
        return None
    first = short[0][0]
    ended = ', '.join(f'/{topic} at {last:.3f} s' for last, topic, _ in short)
    complete = sorted(set(ends) - {topic for _, topic, _ in short})
    return (f'the bag lost the end of the run: {ended} instead of {end_s:.3f} s (up to '
            f'{end_s - first:.3f} s missing'
            + (f'; {", ".join("/" + t for t in complete)} complete)' if complete else ')'))


def recorded_states_note(bag, driver: dict) -> str:
    """
    How many of the driver's published /joint_states the bag holds.

    On hardware nothing waits for the recorder: a loaded machine can make it miss states (its
    reliable reader falls more than the writer's history behind), and that is said, not hidden.
    """
    from dodo_sim.tools.bag import message_counts
    recorded = message_counts(bag).get(contract.JOINT_STATES, 0)
    published = driver.get('published')
    if published is None:
        return f'bag: {recorded} {contract.JOINT_STATES} (driver count unknown)'
    missed = int(published) - recorded
    if missed <= 0:
        return f'bag: all {recorded} {contract.JOINT_STATES} the driver published'
    return (f'bag: WARNING: {recorded} of the {int(published)} {contract.JOINT_STATES} the '
            f'driver published ({missed} missed by the recorder: machine load '
            f'{os.getloadavg()[0]:.1f})')


def merge_driver_log(bag, driver: dict, bag_closed: bool) -> str:
    """
    Merge the driver's log of every state it published (state_log) into the closed bag.

    The states the recorder missed are added to the bag (dodo_sim.tools.bag_merge) and the log
    beside the bag removed; returns the line that says what was done (or why not: the log then
    stays beside the bag).
    """
    from dodo_sim.tools.bag_merge import merge_state_log
    path = state_log_path(bag)
    logged, published = driver.get('logged'), driver.get('published')
    if logged is None:
        return f'driver log: WARNING: not written ({path})'
    short = ('' if logged == published else
             f'; WARNING: the driver logged {logged} of the {published} '
             f'{contract.JOINT_STATES} it published')
    if not bag_closed:
        return f'driver log: not merged (the bag was not closed): {path}{short}'
    try:
        report = merge_state_log(bag, path)
    except (ValueError, OSError) as exc:
        return f'driver log: WARNING: not merged into the bag ({one_line(exc)}): {path}{short}'
    load = f' (machine load {os.getloadavg()[0]:.1f})' if report.added else ''
    return report.line() + load + short


def write_report(result: RunResult, bag, plots, out: TextIO, prog: str = 'dodo hop',
                 plotter: str = 'dodo_sim.tools.plot', log_path=None,
                 verbose: bool = True) -> int:
    """
    Write every line after the run and make the plots; return the exit code.

    The node log's path, the summary lines, the bag (closed or not, the driver's log merged into
    it, the states it holds) and the plots of a completed run with a closed bag.
    """
    if log_path is not None and not verbose and Path(log_path).exists():
        out.write(f'{prog}: node logs: {Path(log_path).resolve()}\n')
    out.write(f'{prog}: {result.summary()}\n')
    for line in (result.walk_summary(), result.hop_summary(), result.exchange_summary(),
                 result.driver_summary()):
        if line:
            out.write(f'{prog}: {line}\n')
    code = result.exit_code
    if bag is not None:
        state = 'closed' if result.bag_closed else 'NOT closed (no metadata.yaml)'
        out.write(f'{prog}: bag: {Path(bag).resolve()} ({state})\n')
        if result.driver and result.hardware is not None:
            # the driver's log of every state it published goes into the bag (issue 16)
            out.write(f'{prog}: {merge_driver_log(bag, result.driver, result.bag_closed)}\n')
        if result.bag_closed and result.driver:
            out.write(f'{prog}: {recorded_states_note(bag, result.driver)}\n')
        if plots is not None and result.outcome == 'completed' and result.bag_closed:
            code = max(code, make_plots(bag, plots, out, prog, plotter))
    out.flush()
    return code


def make_plots(bag, plots, out: TextIO, prog: str = 'dodo hop',
               plotter: str = 'dodo_sim.tools.plot') -> int:
    import importlib
    try:
        plot = importlib.import_module(plotter)
    except ImportError as exc:
        out.write(f'{prog}: no plots ({exc})\n')
        return EXIT_FAILED
    try:
        code = plot.main([str(bag), '--out', str(plots)])
    except OSError as exc:            # a full disk while writing a figure
        from dodo_sim.tools.write_failures import write_failure
        what = exc.filename or f'the figures in {Path(plots).resolve()}'
        out.write(f'{prog}: plots: {write_failure(what, exc)}: not every figure was written\n')
        return EXIT_FAILED
    if code:
        out.write(f'{prog}: plotting failed (exit code {code})\n')
        return EXIT_FAILED
    out.write(f'{prog}: plots: {Path(plots).resolve()}\n')
    return EXIT_OK
