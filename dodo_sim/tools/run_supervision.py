# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
The supervision of a ``dodo hop`` / ``dodo walk`` run: check, start, watch and stop its nodes.

:class:`HopRun` takes the ROS domain once every input passed (:mod:`dodo_sim.tools.run_checks`),
writes the generated params file and the nodes' command lines, starts the nodes in order
(recorder first, waiting for its ``ready`` line; the simulator or driver last) as children of
:class:`dodo_sim.tools.supervisor.ProcessGroup`, forwards their lines and reads their summaries,
ends the run when the simulator (or driver) exits, a process fails, a signal arrives or the
wall-clock limit passes, and stops the rest in order with escalating signals (docs/running.md).
What the run did is a :class:`dodo_sim.tools.run_report.RunResult`.

A little over 500 lines: one class, since its checks, start, watching and stop share the run's
state (domain, children, failures, the nodes' summaries) and tests drive each step alone.
"""
from __future__ import annotations

import math
import os
from pathlib import Path
import re
import shutil
import signal
import sys
import tempfile
import time
from typing import Any, TextIO

from dodo_sim.hardware.driver import MOTORS_OFF_PREFIX, WATCHDOG_PREFIX
from dodo_sim.hardware.state_log import state_log_path
from dodo_sim.parameter import config_defaults
from dodo_sim.ros import contract, domains, graph
from dodo_sim.ros.dds_profile import loopback_only
from dodo_sim.ros.params import config_from_parameters, node_parameters
from dodo_sim.ros.runtime import EXIT_FAILED, EXIT_OK, parse_summary
from dodo_sim.tools.run_checks import (check_models, check_new_dir, check_real_bus, one_line,
                                       UsageError)
from dodo_sim.tools.run_report import (bag_clock, bag_tail_problem, exit_name, RunResult,
                                       stream_ends, summary_failures)
from dodo_sim.tools.supervisor import Child, fifo_permitted, ProcessGroup, SignalLatch
from dodo_sim.tools.write_failures import incomplete_bag, RECORDER_WRITE_FAILED
import yaml

RECORDER_READY = 'dodo recorder: ready'
#: The simulator's final line (docs/ros_contract.md): ``dodo exchange: sim_time_s=... steps=...
#: stop_reason=... age_ms_p50=... ...`` (:func:`dodo_sim.ros.runtime.parse_summary` reads it).
SIMULATOR_SUMMARY = 'exchange'
#: The simulator's stop_after log line (read when no summary line comes).
_STOP_AFTER_RE = re.compile(r'stop_after = ([\d.eE+-]+) s of simulated time reached after '
                            r'(\d+) steps')
#: The driver's final line: ``dodo driver: hardware=... run_time_s=... cycles=... ...``.
DRIVER_SUMMARY = 'driver'
#: Simulator (or driver) first, recorder last: the recorder must see everything the others send.
STOP_ORDER = {'simulator': 0, 'driver': 0, 'controller': 1, 'recorder': 2}
#: Signals that ask a child to stop (any other, e.g. SIGSTOP/SIGCONT, does not).
STOP_SIGNALS = {'SIGINT', 'SIGTERM', 'SIGKILL'}
#: Wall-clock s a child gets to exit after SIGINT, then after SIGTERM (then SIGKILL).
STOP_GRACE_S, TERM_GRACE_S = 15.0, 5.0


def write_params_file(path: Path, parameters: dict[str, dict[str, Any]]) -> Path:
    """
    Write ``{node: {name: value}}`` as a ROS params file.

    The YAML is typed: strings are quoted where YAML would read them as something else, e.g.
    ``'123'``, ``'true'``, ``'run #1'``.
    """
    data = {node: {'ros__parameters': {k: (list(v) if isinstance(v, tuple) else v)
                                       for k, v in params.items()}}
            for node, params in parameters.items()}
    path.write_text(yaml.safe_dump(data, default_flow_style=False, sort_keys=False))
    return path


def node_command(spec: graph.NodeSpec, params_file: Path, generated: Path,
                 namespace: str = '') -> list:
    """
    Return the command line of one node: the user's params file, then the generated one (wins).

    In ``namespace`` with /clock, /tf, /tf_static, /parameter_events remapped into it.
    """
    cmd = [sys.executable, '-m', spec.module, '--ros-args', '-r', f'__node:={spec.name}',
           *contract.remap_arguments(namespace)]
    if spec.params_file:
        cmd += ['--params-file', str(params_file)]
    return cmd + ['--params-file', str(generated)]


class HopRun:
    """
    Check, start, watch and stop the graph processes (usable from tests).

    ``check()`` validates everything and takes the ROS domain; ``start()`` starts the nodes;
    ``wait()`` pumps their output until the simulator ends; ``stop()`` stops the rest in order;
    ``result()`` tells what happened. ``run()`` does all of it with signal handling (the CLI).
    Call ``pump()`` while doing other things between ``start()`` and ``wait()``.
    """

    def __init__(self, params_file, duration: float, bag=None, env=None,
                 out: TextIO | None = None, err: TextIO | None = None,
                 keep_lines: bool = False, domain_id: int | None = None,
                 model=None, prog: str = 'dodo hop', hardware: str | None = None,
                 realtime_priority: int = graph.DEFAULT_REALTIME_PRIORITY,
                 live: str = '', console=None, namespace: str = '',
                 controller: str | None = None):
        try:
            #: the robot's namespace ('' or '/left'): DESIGN.md section 3
            self.namespace = contract.normalize_namespace(namespace)
        except ValueError as exc:
            raise UsageError(f'--namespace: {exc}') from None
        if hardware is not None and hardware not in graph.HARDWARE_KINDS:
            raise UsageError(f'--hardware {hardware!r}: choose one of {graph.HARDWARE_KINDS}')
        self.hardware = hardware
        #: SCHED_FIFO priority of the hardware loop's nodes (graph.REALTIME_NODES), 0: normal
        self.realtime_priority = int(realtime_priority)
        self.params_file = Path(params_file)
        self.model = str(model) if model else None
        #: the controller chosen on the command line (None: the params file's; 'external')
        self.controller = controller
        self.prog = prog
        self._robot: graph.Robot | None = None
        self.controller_summary: dict | None = None
        self.duration = float(duration)
        self.bag = Path(bag) if bag is not None else None
        self.env = dict(os.environ if env is None else env)
        self.env.setdefault('ROS_AUTOMATIC_DISCOVERY_RANGE', 'LOCALHOST')
        #: the discovery range a user's tools watch the run with (printed by dodo hop)
        self.discovery_range = self.env['ROS_AUTOMATIC_DISCOVERY_RANGE']
        #: the nodes bind 127.0.0.1 only (dodo_sim.ros.dds_profile; docs/running.md)
        self.loopback_only = loopback_only(self.env)
        self.env.setdefault('PYTHONUNBUFFERED', '1')
        self.env.setdefault('RCUTILS_LOGGING_BUFFERED_STREAM', '1')
        self.env.setdefault('RCUTILS_COLORIZED_OUTPUT', '0')
        self.out = out if out is not None else sys.stdout
        self.err = err if err is not None else self.out
        self.keep_lines = keep_lines
        self.explicit_domain = domain_id
        self.domain: domains.DomainLease | None = None
        #: the node that owns the run's time: simulator, or driver on hardware
        self.clock = graph.clock_node(graph.hop_nodes(record=False, hardware=hardware)).name
        self.group = ProcessGroup(self.env)
        self.failures: list[str] = []
        self.sim_summary: dict | None = None
        self.driver_summary: dict | None = None
        #: what stopped the motors during the run (the driver's MOTORS_OFF_PREFIX lines)
        self.motors_off_events: list[str] = []
        #: the driver's watchdog trips during the run (its WATCHDOG_PREFIX lines)
        self.watchdog_events: list[str] = []
        self._stop_after_line: tuple[float, int] | None = None
        self._tmp: Path | None = None
        self._started_at: float | None = None
        self._recorder_ready = False
        self._reported: set[str] = set()    # children whose exit is reported already
        #: a file of the run that could not be written (the recorder's bag, the node log): the
        #: run ends and says so (docs/running.md, "A full disk")
        self.write_failure: str | None = None
        #: the recorder's live view ('' off, 'PORT' or 'HOST:PORT'; dodo_sim.tools.live_view)
        self.live = live
        #: dodo_sim.tools.run_console.RunConsole: progress line and node logs (None: stream
        #: every child line to ``out``)
        self.console = console

    @property
    def children(self) -> dict[str, Child]:
        return self.group.children

    @property
    def robot(self) -> graph.Robot:
        """Return the robot of the run: controller, model, contact frames (params file)."""
        if self._robot is None:
            self._robot = graph.robot_from_params(self.params_file, self.model, self.controller)
        return self._robot

    @property
    def nodes(self) -> tuple:
        """Return the nodes of the run (graph.hop_nodes; no controller node when external)."""
        return graph.hop_nodes(record=self.bag is not None, hardware=self.hardware,
                               hosted=not self.robot.external)

    # -- checks (nothing runs before they pass) -------------------------------------------------

    def check(self) -> None:
        """Raise :class:`UsageError` (one line) on any bad input; then take the ROS domain."""
        if not (math.isfinite(self.duration) and self.duration > 0.0):
            raise UsageError(f'--duration must be a finite number of simulated seconds > 0, '
                             f'got {self.duration}')
        try:
            graph.check_params_file(self.params_file, self.controller)
            if self.hardware is not None:
                graph.check_hardware(self.params_file, self.robot, self.hardware)
            if self.hardware == 'can':
                check_real_bus(self.params_file)
            running = {spec.name for spec in self.nodes}
            configs = {name: self._node_configs(name) for name in graph.NODE_CONFIGS
                       if name in running}
            check_models(configs, self.robot)
        except ValueError as exc:          # ParamsFileError, ModelError, config errors
            raise UsageError(one_line(exc)) from None
        if self.bag is not None:
            check_new_dir(self.bag, 'bag directory')
        if self.hardware is not None and self.realtime_priority:
            if not 1 <= self.realtime_priority <= 99:
                raise UsageError(f'--realtime-priority {self.realtime_priority}: expected 0 '
                                 f'(off) or 1..99')
            why = fifo_permitted(self.realtime_priority)
            if why is not None:
                self.err.write(f'{self.prog}: note: no real-time scheduling for the driver and '
                               f'the controller ({why}); under load they may not hold their '
                               f'rate (docs/hardware.md, "Timing")\n')
                self.realtime_priority = 0
        explicit = self.explicit_domain
        try:
            if explicit is None and self.env.get('ROS_DOMAIN_ID', '').strip():
                explicit = domains.parse_domain_id(self.env['ROS_DOMAIN_ID'], 'ROS_DOMAIN_ID')
            self.domain = domains.reserve(explicit, self.env, self.namespace)
        except domains.DomainUnavailable as exc:
            raise UsageError(str(exc)) from None
        self.env['ROS_DOMAIN_ID'] = str(self.domain.domain_id)

    def _node_configs(self, name: str) -> dict:
        """Return the node's config dataclasses: the params file plus what dodo hop sets."""
        values = node_parameters(self.params_file, name)
        values.update(self.graph_parameters().get(name, {}))
        out = {}
        for cls in graph.config_classes(name, self.robot.controller):
            fields = set(config_defaults(cls))
            out[cls.__name__] = config_from_parameters(
                cls, {k: v for k, v in values.items() if k in fields})
        return out

    # -- commands --------------------------------------------------------------------------

    def graph_parameters(self) -> dict[str, dict[str, Any]]:
        """Node name -> the parameters dodo hop gives it on top of the params file."""
        args = {'bag': str(self.bag) if self.bag is not None else '',
                'stop_after': self.duration}
        if self.hardware is not None:
            args['hardware'] = self.hardware
        params = {spec.name: graph.hop_parameters(spec, self.nodes, args, self.robot)
                  for spec in self.nodes}
        if self.hardware is not None and self.bag is not None and graph.DRIVER_NODE in params:
            # the driver's own lossless log of its states, beside the bag (hardware/state_log)
            params[graph.DRIVER_NODE]['state_log'] = str(state_log_path(self.bag))
        if 'recorder' in params:       # live view and progress line: docs/viewing.md
            if self.live:
                params['recorder']['live'] = self.live
            if self.console is not None:
                from dodo_sim.tools.run_console import PROGRESS_PERIOD_S
                params['recorder']['progress_period_s'] = PROGRESS_PERIOD_S
        return params

    def commands(self, directory: Path) -> dict[str, list]:
        """
        Node name -> command line; writes the generated params file into ``directory``.

        In a namespace it also writes the params file with its sections moved into it.
        """
        generated = write_params_file(
            Path(directory) / 'dodo_hop.params.yaml',
            graph.namespaced_sections(self.graph_parameters(), self.namespace))
        params_file = self.params_file
        if self.namespace:
            params_file = Path(directory) / 'params.namespaced.yaml'
            sections = yaml.safe_load(self.params_file.read_text()) or {}
            params_file.write_text(yaml.safe_dump(
                graph.namespaced_sections(sections, self.namespace), sort_keys=False))
        return {spec.name: node_command(spec, params_file, generated, self.namespace)
                for spec in self.nodes}

    # -- running ---------------------------------------------------------------------------

    def _on_line(self, child: Child, text: str) -> None:
        if self.keep_lines:
            child.lines.append(text)
        if child.name == 'simulator':
            self._parse_simulator_line(text)
        elif child.name == graph.DRIVER_NODE:
            summary = parse_summary(text, DRIVER_SUMMARY)
            if summary is not None:
                self.driver_summary = summary
            if MOTORS_OFF_PREFIX in text:
                event = text[text.index(MOTORS_OFF_PREFIX) + len(MOTORS_OFF_PREFIX):].strip()
                if event not in self.motors_off_events:
                    self.motors_off_events.append(event)
            if WATCHDOG_PREFIX in text:
                event = text[text.index(WATCHDOG_PREFIX) + len(WATCHDOG_PREFIX):].strip()
                if event not in self.watchdog_events:
                    self.watchdog_events.append(event)
        elif child.name == 'recorder' and text.startswith(RECORDER_READY):
            self._recorder_ready = True
        elif child.name == 'recorder' and text.startswith(RECORDER_WRITE_FAILED):
            self._reported.add(child.name)     # its exit code 1 is this, said once
            self._write_failed(text[len(RECORDER_WRITE_FAILED):].split('; recording stopped')[0])
        elif child.name == 'controller':
            summary = parse_summary(text, 'controller')
            if summary is not None:
                self.controller_summary = summary
        if self.console is not None:
            self.console.child_line(child.name, text)
            return
        try:
            self.out.write(f'[{child.name}] {text}\n')
            self.out.flush()
        except (BrokenPipeError, ValueError):   # e.g. `dodo hop | head` ended: keep running
            self.out = open(os.devnull, 'w')

    def _write_failed(self, failure: str) -> None:
        """Note that a file of the run cannot be written (a full disk): said once; the run ends."""
        if self.write_failure is None:
            self.write_failure = failure
            self.err.write(f'{self.prog}: {failure}: stopping the run\n')
            self.err.flush()

    def _check_writes(self) -> bool:
        """Return True once a file of the run could not be written (the bag or the node log)."""
        failure = getattr(self.console, 'write_failure', None)
        if failure is not None:
            self._write_failed(failure)
        return self.write_failure is not None

    def _parse_simulator_line(self, text: str) -> None:
        summary = parse_summary(text, SIMULATOR_SUMMARY)
        if summary is not None:
            self.sim_summary = summary
            return
        match = _STOP_AFTER_RE.search(text)
        if match:
            self._stop_after_line = (float(match.group(1)), int(match.group(2)))

    def pump(self, timeout: float = 0.05) -> None:
        """Forward the children's output (waits at most ``timeout`` s for some)."""
        self.group.pump(timeout)

    def start(self, ready_timeout: float = 60.0, latch: SignalLatch | None = None) -> bool:
        """
        Start every node: recorder first (waits for its ready line), simulator last.

        False if a signal arrived meanwhile (the caller stops); RuntimeError if the recorder
        does not get ready.
        """
        if self.domain is None:
            self.check()
        self._started_at = time.monotonic()
        self._tmp = Path(tempfile.mkdtemp(prefix='dodo_hop-'))
        commands = self.commands(self._tmp)
        for name in sorted(commands, key=lambda n: {'recorder': 0, 'simulator': 2,
                                                    'driver': 2}.get(n, 1)):
            fifo = graph.realtime_priority(graph.node(name), self.hardware is None,
                                           self.realtime_priority)
            child = self.group.start(name, commands[name], self._on_line, fifo_priority=fifo)
            if name != 'recorder':
                continue
            deadline = time.monotonic() + ready_timeout
            while not self._recorder_ready:
                if latch is not None and latch.received:
                    return False
                if child.proc.poll() is not None or time.monotonic() > deadline:
                    self.group.drain(child)
                    self._reported.add(name)
                    if self.write_failure is not None:
                        raise RuntimeError(f'the recorder could not create the bag: '
                                           f'{self.write_failure}')
                    raise RuntimeError(f'recorder did not get ready (exit code '
                                       f'{child.proc.poll()})')
                self.group.pump(0.05)
        return True

    def wait(self, timeout: float, latch: SignalLatch | None = None) -> bool:
        """
        Pump output until the simulator (or driver) exits, a signal arrives or a timeout passes.

        Returns True when the simulator (or driver) exited, False when a signal arrived or
        ``timeout`` s of wall time passed. A process that ends early is reported; the run goes on
        (without the controller the simulator steps with zero torque, the driver damps the joints).
        """
        deadline = time.monotonic() + timeout
        sim = self.children[self.clock]
        while True:
            self.group.pump(0.05)
            if sim.proc.poll() is not None:
                self.group.drain(sim)
                sim.stop_requested = True
                code = sim.proc.returncode
                if code != 0:
                    self._reported.add(self.clock)
                    self._fail(f'{self.clock} exited with code {code} '
                               f'({exit_name(code, self.clock)})')
                return True
            if latch is not None and latch.received:
                return False
            if self._check_writes():
                return False
            for name, child in self.children.items():
                if (child is not sim and name not in self._reported
                        and child.proc.poll() is not None):
                    self._reported.add(name)
                    self.group.drain(child)
                    if self._check_writes():     # the recorder stopped on a full disk
                        return False
                    code = child.proc.returncode
                    if name == 'controller' and self.hardware is None:
                        # lockstep would wait for its answer for ever (simulated time pauses):
                        # its supervisor knows it is gone, so the run ends here
                        self._fail(f'controller lost: the controller process exited early with '
                                   f'code {code} ({exit_name(code, name)}); the run ends')
                        return False
                    self._fail(f'{name} exited early with code {code} '
                               f'({exit_name(code, name)})')
            if time.monotonic() > deadline:
                what = ('simulated time' if self.hardware is None
                        else 'driver time (from its first enable)')
                self._fail(f'{self.clock} did not finish {self.duration:g} s of {what} '
                           f'within {timeout:.0f} s of wall time')
                return False

    def stop(self, latch: SignalLatch | None = None, fast: bool = False) -> None:
        """
        Stop every running child: SIGINT one after the other (simulator first, recorder last).

        It escalates to SIGTERM and SIGKILL after deadlines; ``fast``: SIGTERM all at once. Each
        further signal in ``latch`` escalates one step for all (2nd: SIGTERM, 3rd: SIGKILL).
        """
        seen = latch.count() if latch is not None else 0
        level = 1 if fast else 0           # 0 SIGINT in order, 1 SIGTERM all, 2 SIGKILL all
        escalations = (signal.SIGINT, signal.SIGTERM, signal.SIGKILL)
        order = sorted(self.children.values(), key=lambda c: STOP_ORDER.get(c.name, 1))
        if level:
            for child in order:
                child.stop_requested = True
                child.send(signal.SIGTERM)
        for child in order:
            # (SIGSTOP/SIGCONT sent by a test to stall a node are not a stop request)
            if child.proc.poll() is None and not set(child.signals_sent) & STOP_SIGNALS:
                child.stop_requested = True
                child.send(signal.SIGINT)
            sent_at = time.monotonic()
            child_level = 1 if child.signals_sent[-1:] == ['SIGTERM'] else 0
            while child.proc.poll() is None:
                self.group.pump(0.05)
                if latch is not None and latch.count() > seen:
                    seen = latch.count()
                    level = min(level + 1, 2)
                    for other in order:
                        other.stop_requested = True
                        other.send(escalations[level])
                    child_level = level
                    sent_at = time.monotonic()
                    continue
                grace = STOP_GRACE_S if child_level == 0 else TERM_GRACE_S
                if time.monotonic() - sent_at > grace and child_level < 2:
                    self._fail(f'{child.name} ignored {escalations[child_level].name} for '
                               f'{grace:g} s')
                    child_level += 1
                    child.send(escalations[child_level])
                    sent_at = time.monotonic()
            self.group.drain(child, timeout=1.0)
        for child in order:
            code = child.proc.returncode
            if code != 0 and child.name not in self._reported:
                self._reported.add(child.name)
                after = f' after {", ".join(child.signals_sent)}' if child.signals_sent else ''
                self._fail(f'{child.name} ended with exit code {code} '
                           f'({exit_name(code, child.name)}){after}')
        self.release()

    def release(self) -> None:
        """Free the domain and the temporary files (after the children are gone)."""
        if self.domain is not None:
            self.domain.release()
        if self._tmp is not None:
            shutil.rmtree(self._tmp, ignore_errors=True)
            self._tmp = None

    def _fail(self, message: str) -> None:
        if message not in self.failures:
            self.failures.append(message)
            self.err.write(f'{self.prog}: {message}\n')
            self.err.flush()

    # -- results ---------------------------------------------------------------------------

    def simulated_time(self) -> tuple[float | None, int | None, str | None]:
        """
        Return (simulated s reached, steps, stop reason) of the run.

        They come from the simulator's summary line, else the last /clock in the bag, else its
        stop_after line. On hardware: (driver s since the first enable, cycles, stop reason) from
        the driver's summary line.
        """
        if self.hardware is not None:
            x = self.driver_summary or {}
            t = x.get('run_time_s')
            cycles = x.get('cycles')
            return (float(t) if isinstance(t, (int, float)) else None,
                    cycles if isinstance(cycles, int) else None, x.get('stop_reason'))
        last = None
        if self.bag is not None and (self.bag / 'metadata.yaml').is_file():
            last, problem = bag_clock(self.bag, self.env.get('ROS_DOMAIN_ID', '?'))
            if problem:
                self._fail(problem)
        summary = self.sim_summary
        if summary and isinstance(summary.get('sim_time_s'), (int, float)):
            steps = summary.get('steps')
            return (float(summary['sim_time_s']), steps if isinstance(steps, int) else None,
                    summary.get('stop_reason'))
        line = self._stop_after_line
        if last is not None:
            if line is not None and abs(line[0] - last) < 1e-9:
                return last, line[1], 'stop_after'
            return last, None, None
        if line is not None:
            return line[0], line[1], 'stop_after'
        return None, None, None

    def _bag_whole(self, closed: bool) -> bool:
        """Return whether the bag is closed and every MCAP file of it ends with its footer."""
        from dodo_sim.tools.bag import mcap_problem
        try:
            return closed and not any(mcap_problem(f) for f in self.bag.glob('*.mcap'))
        except OSError:
            return False

    def _check_bag_end(self, end_s: float) -> None:
        """Fail the run if a recorded stream stops before the simulated end (docs/running.md)."""
        try:
            problem = bag_tail_problem(stream_ends(self.bag), end_s)
        except (OSError, ValueError) as exc:
            problem = f'cannot read the bag {self.bag}: {one_line(exc)}'
        if problem:
            self._fail(problem)

    def result(self, outcome: str, signal_name: str | None = None) -> RunResult:
        t, steps, reason = self.simulated_time()
        closed = None
        self._check_writes()
        if self.bag is not None:
            closed = (self.bag / 'metadata.yaml').is_file()
            if self.write_failure is not None:
                self._fail(f'{self.write_failure}: ' + (
                    'the run was stopped there; the bag is closed' if self._bag_whole(closed)
                    else incomplete_bag(self.bag)))
            elif not closed and self.bag.exists():
                self._fail(f'bag {self.bag} was not closed (no metadata.yaml)')
            elif closed and self.hardware is None and t is not None:
                self._check_bag_end(t)
        elif self.write_failure is not None:
            self._fail(f'{self.write_failure}: the run was stopped there')
        codes = {name: c.proc.returncode for name, c in self.children.items()}
        for message in summary_failures(
                outcome, t, duration=self.duration, clock=self.clock, hardware=self.hardware,
                sim_summary=self.sim_summary, driver_summary=self.driver_summary,
                controller_summary=self.controller_summary,
                watchdog_events=self.watchdog_events, motors_off_events=self.motors_off_events):
            self._fail(message)
        if outcome == 'completed' and self.failures:
            outcome = 'failed'
        exit_code = {'completed': EXIT_OK, 'failed': EXIT_FAILED}.get(outcome)
        if exit_code is None:
            exit_code = 128 + signal.Signals[signal_name].value
        wall = time.monotonic() - self._started_at if self._started_at is not None else 0.0
        return RunResult(outcome=outcome, exit_code=exit_code, duration_s=self.duration,
                         sim_time_s=t, steps=steps, stop_reason=reason, wall_s=wall,
                         signal_name=signal_name, failures=list(self.failures),
                         exit_codes=codes, bag=self.bag, bag_closed=closed,
                         exchange=self.sim_summary, hardware=self.hardware,
                         driver=self.driver_summary, outcome_monitor=self.controller_summary)

    def run(self, wall_timeout: float) -> RunResult:
        """
        check() must have passed.

        Start, wait, stop, with SIGINT/SIGTERM/SIGHUP handled.
        """
        with SignalLatch() as latch:
            outcome = 'failed'
            try:
                if self.start(latch=latch) and self.wait(wall_timeout, latch):
                    outcome = 'completed'
            except RuntimeError as exc:
                self._fail(str(exc))
            except BaseException:            # a bug or our own output gone: stop them first
                try:
                    self.stop(latch, fast=True)
                finally:
                    self.group.close()
                    self.release()
                raise
            first = latch.received[0] if latch.received else None
            if first is not None:
                outcome = 'interrupted' if first == signal.SIGINT else 'terminated'
            try:
                self.stop(latch, fast=first in (signal.SIGTERM, signal.SIGHUP))
            finally:
                self.group.close()
                self.release()
            return self.result(outcome, signal.Signals(first).name if first else None)
