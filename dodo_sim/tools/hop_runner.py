# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
``dodo hop``: run the dodo_sim graph as supervised processes over real DDS (no ROS install).

::

    dodo hop [--params-file F] [--model XACRO] [--duration S] [--bag DIR]
             [--plots DIR | --no-plots] [--domain-id N] [--wall-timeout S]
             [--hardware emulated|can] [--realtime-priority N]

Defaults: the package's ``config/hop.yaml``, 10 s, and a new run directory
``runs/hop-<date>-<time>/`` (``--runs-dir``) holding ``bag/`` (rosbag2 MCAP) and ``plots/``.
The params file selects the controller (``controller``: ``slip_hopper``, ``kneed_walker``) and
with it the default robot description (``--model`` overrides it; dodo_sim.ros.graph.
robot_from_params). ``dodo walk`` (:mod:`dodo_sim.tools.walk_runner`) is this runner with the
walker's defaults.

Before anything starts, every input is checked (params file, node configurations, the URDF,
the controller's set-points against what the leg can reach, ``--duration``, the bag and plot
directories, the ROS domain); a bad one is one ``dodo hop: error: ...`` line and exit code 2.

Then the nodes of :func:`dodo_sim.ros.graph.hop_nodes` — the node set and parameters of
``launch/hop.launch.py`` minus what needs a ROS install — run as
``python -m <module> --ros-args -r __node:=<name> --params-file F --params-file G``, where G is a
generated params file with the graph's parameters (typed YAML, never text spliced into a
command line). Order: recorder (waits for its ``ready`` line), controller, simulator; the
simulator runs ``S`` seconds of simulated time (``stop_after``) and exits, then the controller
and the recorder are stopped. The run gets a private ROS domain (:mod:`dodo_sim.ros.domains`).

``--hardware emulated|can``: the hardware ``driver`` in the simulator's place (the
``use_sim:=false`` graph; docs/hardware.md): every node on wall time, the recorder records
/diagnostics. Emulated hardware enables itself once the controller and the recorder are up; the
run is ``S`` s of driver time from that enable, then the driver disables the motors and exits.
A fault, e-stop or motors-off and a watchdog trip during the run fail it (exit 1, naming why);
at the end the driver's log of every state it published is merged into the closed bag
(:mod:`dodo_sim.tools.bag_merge`).
A real bus (``can``) needs an explicit ``--params-file`` whose ``driver:`` section names the bus
and the calibration file, and stays disabled until someone calls ``/driver/enable``.

Supervision (:mod:`dodo_sim.tools.supervisor`, docs/running.md): children die with ``dodo hop``
(SIGINT, SIGTERM, SIGHUP, even SIGKILL), the bag is closed whenever the recorder gets a chance,
and the last line says what happened. Exit codes: 0 completed, 1 failed (a process failed or
ended early, the simulation diverged, the wall-clock limit, the bag not closed), 2 bad input,
130 interrupted (Ctrl-C), 143 / 129 terminated (SIGTERM / SIGHUP).
"""
from __future__ import annotations

import argparse
from dataclasses import dataclass, field
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

from dodo_sim.hardware.driver import (EXIT_MOTORS_STOPPED, EXIT_WATCHDOG_TRIPPED,
                                      MOTORS_OFF_PREFIX, WATCHDOG_PREFIX)
from dodo_sim.hardware.state_log import state_log_path
from dodo_sim.paths import default_params_path, default_urdf_path, share_dir  # noqa: F401
from dodo_sim.ros import contract, domains, graph
from dodo_sim.ros.params import config_defaults, config_from_parameters, node_parameters
from dodo_sim.ros.runtime import parse_summary
from dodo_sim.tools.live_view import DEFAULT_PORT as LIVE_DEFAULT_PORT
from dodo_sim.tools.supervisor import Child, fifo_permitted, ProcessGroup, SignalLatch
import yaml

RECORDER_READY = 'dodo recorder: ready'
#: The simulator's final line (docs/ros_contract.md): ``dodo exchange: sim_time_s=... steps=...
#: stop_reason=... age_ms_p50=... ...`` (:func:`dodo_sim.ros.runtime.parse_summary` reads it).
SIMULATOR_SUMMARY = 'exchange'
#: The simulator's stop_after log line (read when no summary line comes).
_STOP_AFTER_RE = re.compile(r'stop_after = ([\d.eE+-]+) s of simulated time reached after '
                            r'(\d+) steps')
EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2
EXIT_INTERRUPTED = 128 + signal.SIGINT
#: Node exit codes (dodo_sim.ros.runtime) by name, for the summary.
NODE_EXIT_NAMES = {0: 'ok', 1: 'failed', 2: 'bad configuration', 3: 'simulation diverged'}
#: The driver's exit code 3: its emulated hardware's physics diverged.
DRIVER_EXIT_NAMES = {**NODE_EXIT_NAMES, 3: 'emulated physics diverged',
                     EXIT_MOTORS_STOPPED: 'motors stopped by a fault, e-stop or ~/disable',
                     EXIT_WATCHDOG_TRIPPED: 'watchdog tripped: the controller was silent'}
#: The driver's final line: ``dodo driver: hardware=... run_time_s=... cycles=... ...``.
DRIVER_SUMMARY = 'driver'
#: Driver parameters a real-bus params file must set itself (nothing taken from defaults).
CAN_REQUIRED = ('bus_interface', 'bus_channel', 'calibration_file')
#: Simulator (or driver) first, recorder last: the recorder must see everything the others send.
STOP_ORDER = {'simulator': 0, 'driver': 0, 'controller': 1, 'recorder': 2}
#: Signals that ask a child to stop (any other, e.g. SIGSTOP/SIGCONT, does not).
STOP_SIGNALS = {'SIGINT', 'SIGTERM', 'SIGKILL'}
#: Wall-clock s a child gets to exit after SIGINT, then after SIGTERM (then SIGKILL).
STOP_GRACE_S, TERM_GRACE_S = 15.0, 5.0


def exit_name(code: int | None, node: str = '') -> str:
    """Return What a node's exit code means."""
    if code is not None and code < 0:
        return f'killed by {signal.Signals(-code).name}'
    return (DRIVER_EXIT_NAMES if node == 'driver' else NODE_EXIT_NAMES).get(code, 'failed')


class UsageError(ValueError):
    """Bad user input, found before anything started; the message is one line."""


def one_line(text: str) -> str:
    """Return a message on one line (YAML errors and the like span several)."""
    return re.sub(r'\s*\n\s*', ' ', str(text)).strip()


def write_params_file(path: Path, parameters: dict[str, dict[str, Any]]) -> Path:
    """
    Write ``{node: {name: value}}`` as a ROS params file.

    (typed YAML: strings quoted where YAML would read them as something else, e.g. ``'123'``,
    ``'true'``, ``'run #1'``).
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


def _check_new_dir(path: Path, what: str) -> None:
    """
    ``path`` can be created.

    It does not exist and its nearest existing parent is a writable directory (probed by creating
    and removing a directory there).
    """
    if path.exists():
        raise UsageError(f'{what} {path} exists already; choose a new one')
    ancestor = path.absolute().parent
    while not ancestor.exists():
        ancestor = ancestor.parent
    if not ancestor.is_dir():
        raise UsageError(f'{what} {path}: {ancestor} is not a directory')
    try:
        os.rmdir(tempfile.mkdtemp(prefix='.dodo-probe-', dir=ancestor))
    except OSError as exc:
        raise UsageError(f'{what} {path}: cannot write in {ancestor} '
                         f'({exc.strerror or exc})') from None


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

        Steps, distance, speed and the fall, from the controller's summary line.
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

    def exchange_summary(self) -> str | None:
        """
        One line on the simulator <-> controller exchange.

        Command ages (p50/p99/max, ms), overruns, timeouts, stale, rejected and foreign (ignored)
        commands.
        """
        x = self.exchange
        if not x:
            return None

        def ms(key):
            value = x.get(key)
            return '-' if value is None else f'{value:.2f}'

        return (f"exchange ({x.get('mode', '?')}): command age p50/p99/max = "
                f"{ms('age_ms_p50')}/{ms('age_ms_p99')}/{ms('age_ms_max')} ms, "
                f"{x.get('stale_steps', 0)} stale step(s), {x.get('timeouts', 0)} timeout(s), "
                f"{x.get('overruns', 0)} overrun(s), {x.get('zero_torque_steps', 0)} zero-torque "
                f"step(s), {x.get('rejected', 0)} rejected and {x.get('foreign', 0)} foreign "
                f'command(s) ignored' + (
                    f", {x['waits']} wait(s) past command_timeout (longest "
                    f"{x.get('wait_s_max', 0):.2f} s, simulated time paused)"
                    if x.get('waits') else ''))

    def driver_summary(self) -> str | None:
        """
        One line on the driver's loop.

        Cycles and rate, cycle period and state-to-command age (p50/p99/max, ms), watchdog trips,
        missed replies, skipped emulator steps.
        """
        x = self.driver
        if not x:
            return None

        def ms(key):
            value = x.get(key)
            return '-' if value is None else f'{value:.2f}'

        rate = x.get('rate_hz')
        return (f"driver ({x.get('hardware', '?')}"
                + (f", {x['emulator_mode']}" if x.get('emulator_mode') else '') + '): '
                f"{x.get('cycles', '?')} cycles at "
                + ('?' if rate is None else f'{rate:.0f}') + ' Hz, period p50/p99/max = '
                f"{ms('period_ms_p50')}/{ms('period_ms_p99')}/{ms('period_ms_max')} ms "
                f"({x.get('missed_deadlines', '?')} missed deadline(s)), "
                f"state-to-command age p50/p99/max = {ms('age_ms_p50')}/{ms('age_ms_p99')}/"
                f"{ms('age_ms_max')} ms, {x.get('watchdog_trips', 0)} watchdog trip(s)"
                + (f" (longest {x['watchdog_s_max']:.3f} s)" if x.get('watchdog_trips')
                   and isinstance(x.get('watchdog_s_max'), float) else '') + ', '
                f"{x.get('estops', 0)} e-stop(s), "
                f"{x.get('missed_replies', 0)} missed repl(ies), {x.get('rejected', 0)} "
                f'rejected command(s)'
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
                 live: str = '', console=None, namespace: str = ''):
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
        self.prog = prog
        self._robot: graph.Robot | None = None
        self.controller_summary: dict | None = None
        self.duration = float(duration)
        self.bag = Path(bag) if bag is not None else None
        self.env = dict(os.environ if env is None else env)
        self.env.setdefault('ROS_AUTOMATIC_DISCOVERY_RANGE', 'LOCALHOST')
        self.env.setdefault('PYTHONUNBUFFERED', '1')
        self.env.setdefault('RCUTILS_LOGGING_BUFFERED_STREAM', '1')
        self.env.setdefault('RCUTILS_COLORIZED_OUTPUT', '0')
        self.out = out if out is not None else sys.stdout
        self.err = err if err is not None else self.out
        self.keep_lines = keep_lines
        self.explicit_domain = domain_id
        self.domain: domains.DomainLease | None = None
        self.nodes = graph.hop_nodes(record=self.bag is not None, hardware=hardware)
        #: the node that owns the run's time: simulator, or driver on hardware
        self.clock = graph.clock_node(self.nodes).name
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
            self._robot = graph.robot_from_params(self.params_file, self.model)
        return self._robot

    # -- checks (nothing runs before they pass) -------------------------------------------------

    def check(self) -> None:
        """Raise :class:`UsageError` (one line) on any bad input; then take the ROS domain."""
        if not (math.isfinite(self.duration) and self.duration > 0.0):
            raise UsageError(f'--duration must be a finite number of simulated seconds > 0, '
                             f'got {self.duration}')
        try:
            graph.check_params_file(self.params_file)
            if self.hardware is not None:
                graph.check_hardware(self.params_file, self.robot, self.hardware)
            if self.hardware == 'can':
                self._check_real_bus()
            running = {spec.name for spec in self.nodes}
            configs = {name: self._node_configs(name) for name in graph.NODE_CONFIGS
                       if name in running}
            self._check_models(configs, self.robot)
        except ValueError as exc:          # ParamsFileError, ModelError, config errors
            raise UsageError(one_line(exc)) from None
        if self.bag is not None:
            _check_new_dir(self.bag, 'bag directory')
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

    def _check_real_bus(self) -> None:
        """
        Check that a real bus is driven only from a complete params file.

        A real bus is driven only from a params file that names it and its calibration.
        """
        section = node_parameters(self.params_file, graph.DRIVER_NODE)
        missing = [k for k in CAN_REQUIRED if not section.get(k)]
        if missing:
            raise UsageError(
                f'--hardware can drives real motors: the driver: section of {self.params_file} '
                f'must name {", ".join(CAN_REQUIRED)} (missing: {", ".join(missing)}); start '
                f'from config/hardware.yaml and docs/hardware.md (wiring, calibration, the '
                f'checklist before powering the motors)')

    @staticmethod
    def _check_models(configs: dict, robot: graph.Robot) -> None:
        """
        Wait until the simulator or emulated hardware has built its model.

        The simulator (or the driver's emulated hardware) builds its model and the driver its
        actuators on it; the controller (and its outcome monitor) accepts its configuration on that
        robot (the hopper: its set-points on that leg).

        What the URDF parser (C++) prints on stderr is kept out of the terminal and added to
        the one error line.
        """
        from dodo_control.registry import controller_entry
        from dodo_sim.simulator import Simulator
        ctrl = configs['controller']
        entry = controller_entry(robot.controller)
        with tempfile.TemporaryFile(mode='w+b') as native:
            sys.stderr.flush()
            saved = os.dup(2)
            os.dup2(native.fileno(), 2)
            try:
                if 'simulator' in configs:
                    sim = configs['simulator']
                    urdf = (sim['SimulatorNodeConfig'].robot_description
                            or str(default_urdf_path()))
                    leg_xml = Simulator(urdf, sim['SimConfig']).leg.urdf_xml
                else:
                    leg_xml = check_driver(configs[graph.DRIVER_NODE]['DriverConfig'])
                xml = ctrl['ControllerNodeConfig'].robot_description or leg_xml
                built = entry.build(xml, ctrl[entry.config_class().__name__])
                monitor = entry.monitor_class()
                if monitor is not None:
                    monitor(xml, built.joint_names, *(
                        ctrl[cls.__name__] for cls in entry.monitor_config_classes()))
            except ValueError as exc:
                native.seek(0)
                said = ' '.join(native.read().decode(errors='replace').split())
                raise ValueError(f'{exc} ({said})' if said else str(exc)) from None
            finally:
                os.dup2(saved, 2)
                os.close(saved)
            native.seek(0)
            warnings = native.read().decode(errors='replace')
            if warnings:                     # a usable model: pass on what the parser said
                sys.stderr.write(warnings)

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

        (and, in a namespace, the params file with its sections moved into it).
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
                    raise RuntimeError(f'recorder did not get ready (exit code '
                                       f'{child.proc.poll()})')
                self.group.pump(0.05)
        return True

    def wait(self, timeout: float, latch: SignalLatch | None = None) -> bool:
        """
        Pump output until the simulator (or driver) exits (True).

        A signal arrives or ``timeout`` s of wall time pass (False). A process that ends early is
        reported; the run goes on (without the controller the simulator steps with zero torque, the
        driver damps the joints).
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
            for name, child in self.children.items():
                if (child is not sim and name not in self._reported
                        and child.proc.poll() is not None):
                    self._reported.add(name)
                    self.group.drain(child)
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

        Escalating to SIGTERM and SIGKILL after deadlines; ``fast``: SIGTERM all at once. Each
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
        (Simulate s reached, steps, stop reason).

        The simulator's summary line, else the last /clock in the bag, else its stop_after line. On
        hardware: (driver s since the first enable, cycles, stop reason) from the driver's summary
        line.
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

    def result(self, outcome: str, signal_name: str | None = None) -> RunResult:
        t, steps, reason = self.simulated_time()
        closed = None
        if self.bag is not None:
            closed = (self.bag / 'metadata.yaml').is_file()
            if not closed and self.bag.exists():
                self._fail(f'bag {self.bag} was not closed (no metadata.yaml)')
        codes = {name: c.proc.returncode for name, c in self.children.items()}
        if outcome == 'completed' and t is not None and t + 1e-6 < self.duration:
            self._fail(f'the {self.clock} stopped at t = {t:.3f} s, before {self.duration:g} s')
        if (outcome == 'completed' and self.hardware is not None
                and (self.driver_summary or {}).get('stop_reason') != 'stop_after'):
            self._fail(f'the driver did not report reaching stop_after '
                       f'(summary: {self.driver_summary})')
        for event in self.watchdog_events:
            # the controller was silent: the run does not show it (DESIGN.md section 7)
            self._fail(f"the driver's watchdog tripped {event}")
        for event in self.motors_off_events:
            # a fault, e-stop or ~/disable stopped the motors: the run failed (issue 16 item 0)
            self._fail(f'the driver stopped the motors: {event}')
        if (self.sim_summary or {}).get('stop_reason') == 'controller_lost':
            x = self.sim_summary
            self._fail(f"controller lost: the simulator waited {x.get('wait_s_max', 0):.1f} s "
                       f"for {x.get('controller') or 'a controller'} to answer a state and "
                       f'ended the run (its log says why)')
        timeouts = (self.sim_summary or {}).get('timeouts') or 0
        if timeouts:
            # zero torque replaced the controller's answer: the run does not show the controller
            zero = (self.sim_summary or {}).get('zero_torque_steps', '?')
            self._fail(f'{timeouts} command timeout(s): the controller did not answer within '
                       f'command_timeout and the simulator applied zero torque on {zero} '
                       f"step(s), so this run does not show the controller's behaviour (a "
                       f'stalled controller or an overloaded machine)')
        foreign = (self.sim_summary or {}).get('foreign') or 0
        if foreign:
            # the run itself is the controller's (never shifted), but the graph was not clean
            x = self.sim_summary
            who = (f"a second node named {x.get('controller')}"
                   if x.get('duplicate_controller') else 'a second publisher')
            self._fail(f'{foreign} command(s) from {who} answered states and were ignored: '
                       f"two controllers on the graph (the applied ones are the bag's "
                       f'{contract.JOINT_COMMANDS}, the others {contract.IGNORED_COMMANDS})')
        fall = (self.controller_summary or {}).get('fall_reason')
        if fall:
            when = self.controller_summary.get('fall_time_s')
            when = f'{when:.3f}' if isinstance(when, (int, float)) else '?'
            self._fail(f'the robot fell: {fall} at t = {when} s (controller)')
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


def bag_clock(bag: Path, domain: str = '?') -> tuple[float | None, str | None]:
    """
    (time of the last /clock in a closed bag, s; a problem found).

    /clock must rise strictly in bag order — a step back means the bag holds a second graph's
    messages.
    """
    from dodo_sim.ros import contract
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


def check_driver(config) -> str:
    """
    Return the driver's configuration on its robot description, without opening a bus.

    Actuators and boom joints exist with limits (the checks of :class:`DriverCore`), the
    calibration file reads, and on emulated hardware the physics builds at ``emulator_initial_q``.
    Returns the URDF XML (ValueError naming the bad value).
    """
    from dodo_sim.hardware.config import urdf_joints
    from dodo_sim.hardware.driver import DriverCore
    from dodo_sim.model import robot_description_xml
    urdf = robot_description_xml(config.robot_description or default_urdf_path())
    names, limits = urdf_joints(urdf)
    DriverCore(config, names, limits, backend=None)
    if config.hardware == 'emulated':
        from dodo_sim.simulator import SimConfig, Simulator
        Simulator(urdf, SimConfig(initial_q=config.emulator_initial_q,
                                  integrator=config.emulator_integrator, dt=config.emulator_dt,
                                  control_period=config.emulator_dt))
    elif not config.calibration_file:
        raise ValueError('DriverConfig.calibration_file is empty: a real bus needs the zero '
                         'offsets of its actuators (docs/hardware.md, "Calibration")')
    return urdf


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


def default_wall_timeout(duration: float) -> float:
    """Wall-clock limit of a run: generous (lockstep runs several times faster than real time)."""
    return 60.0 + 20.0 * duration


def run(params_file, duration: float, bag=None, plots=None, wall_timeout=None,
        out: TextIO | None = None, err: TextIO | None = None,
        domain_id: int | None = None, env=None, model=None, prog: str = 'dodo hop',
        plotter: str = 'dodo_sim.tools.plot', hardware: str | None = None,
        realtime_priority: int = graph.DEFAULT_REALTIME_PRIORITY, live: str = '',
        verbose: bool = True, log_path=None, namespace: str = '') -> int:
    """
    Check, run, report; the exit code (see module docs).

    ``plotter``: the module whose ``main([bag, '--out', plots])`` writes the figures
    (:data:`PLOTTERS`). ``live``: the recorder's live view (PORT or HOST:PORT; docs/viewing.md).
    ``verbose``: stream every node line; else a progress line, the node lines in ``log_path`` and
    only their warnings and errors on the terminal (dodo_sim.tools.run_console).
    """
    from dodo_sim.tools.live_view import check_port_free, LiveViewError, parse_address
    from dodo_sim.tools.run_console import RunConsole
    out = out if out is not None else sys.stdout
    err = err if err is not None else sys.stderr
    console = RunConsole(prog, duration, log_path, out, err, verbose=verbose,
                         unit='steps' if hardware is None else 'cycles')
    try:
        hop = HopRun(params_file, duration, bag, out=console.stream(out),
                     err=console.stream(err), domain_id=domain_id, env=env,
                     model=model, prog=prog, hardware=hardware,
                     realtime_priority=realtime_priority, live=live, console=console,
                     namespace=namespace)
    except UsageError as exc:
        err.write(f'{prog}: error: {one_line(exc)}\n')
        err.flush()
        return EXIT_USAGE
    try:
        hop.check()
        if wall_timeout is not None and not (math.isfinite(wall_timeout) and wall_timeout > 0):
            raise UsageError(f'--wall-timeout must be a finite number of seconds > 0, '
                             f'got {wall_timeout}')
        if plots is not None:
            _check_new_dir(Path(plots), 'plots directory')
        if live:
            if bag is None:
                raise UsageError('--live streams what the recorder records: it needs a bag')
            check_port_free(*parse_address(live))
        if bag is not None:
            Path(bag).absolute().parent.mkdir(parents=True, exist_ok=True)
    except (UsageError, OSError, LiveViewError) as exc:
        hop.release()
        err.write(f'{prog}: error: {one_line(exc)}\n')
        err.flush()
        return EXIT_USAGE
    domain = hop.domain.domain_id
    out.write(f'{prog}: ROS domain {domain} (private to this run); watch it with '
              f'ROS_DOMAIN_ID={domain} ROS_AUTOMATIC_DISCOVERY_RANGE='
              f'{hop.env["ROS_AUTOMATIC_DISCOVERY_RANGE"]} ros2 topic echo '
              f'{contract.resolve(contract.JOINT_STATES, hop.namespace)}\n')
    if hop.domain.foreign_sockets:
        out.write(f'{prog}: note: domain {domain} already has DDS participants on this '
                  f'machine (ROS_DOMAIN_ID was given); they will see this run\n')
    if hardware == 'can':
        out.write(f'{prog}: the driver stays DISABLED until you enable it (after the '
                  f'checklist of docs/hardware.md): ROS_DOMAIN_ID={domain} '
                  f'ROS_AUTOMATIC_DISCOVERY_RANGE={hop.env["ROS_AUTOMATIC_DISCOVERY_RANGE"]} '
                  f'ros2 service call {contract.DRIVER_ENABLE} std_srvs/srv/Trigger; '
                  f'the run lasts '
                  f'{duration:g} s from then; e-stop: ros2 service call {contract.DRIVER_ESTOP} '
                  f'std_srvs/srv/Trigger or publish true on {contract.ESTOP}\n')
    out.flush()
    try:
        result = hop.run(wall_timeout if wall_timeout is not None
                         else default_wall_timeout(duration))
    finally:
        console.close()
    if log_path is not None and not verbose and Path(log_path).exists():
        out.write(f'{prog}: node logs: {Path(log_path).resolve()}\n')
    out.write(f'{prog}: {result.summary()}\n')
    for line in (result.walk_summary(), result.exchange_summary(), result.driver_summary()):
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


#: Profile (``dodo hop``, ``dodo walk``) -> module writing the figures of its bag.
PLOTTERS = {'hop': 'dodo_sim.tools.plot', 'walk': 'dodo_sim.tools.plot'}


def make_plots(bag, plots, out: TextIO, prog: str = 'dodo hop',
               plotter: str = 'dodo_sim.tools.plot') -> int:
    import importlib
    try:
        plot = importlib.import_module(plotter)
    except ImportError as exc:
        out.write(f'{prog}: no plots ({exc})\n')
        return EXIT_FAILED
    code = plot.main([str(bag), '--out', str(plots)])
    if code:
        out.write(f'{prog}: plotting failed (exit code {code})\n')
        return EXIT_FAILED
    out.write(f'{prog}: plots: {Path(plots).resolve()}\n')
    return EXIT_OK


class _Parser(argparse.ArgumentParser):
    """Argparse with one-line errors (``dodo hop: error: ...``) raised, not printed."""

    def error(self, message):
        raise UsageError(message)


def build_parser(profile: str = 'hop', description: str | None = None,
                 failed: str = 'failed') -> argparse.ArgumentParser:
    """Return the options of ``dodo <profile>`` (graph.PROFILES: the default params file)."""
    params = '/'.join(graph.profile(profile).params_file)
    parser = _Parser(
        prog=f'dodo {profile}', description=description or __doc__.split('\n\n')[0],
        epilog=f'Example: dodo {profile} --duration 10 --bag runs/{profile}1 --plots '
               f'runs/{profile}1_plots. Exit codes: 0 completed, 1 {failed}, 2 bad input, '
               f'130 interrupted, 143 terminated (docs/running.md).')
    parser.add_argument('--params-file', type=Path, default=None,
                        help=f'params file (default: the package {params})')
    parser.add_argument('--model', type=Path, default=None,
                        help='robot description xacro/URDF (default: the default model of the '
                             'controller the params file selects)')
    parser.add_argument('--duration', type=float, default=10.0,
                        help='simulated time to run, s (default 10); with --hardware: driver '
                             'time from its first enable')
    parser.add_argument('--hardware', choices=graph.HARDWARE_KINDS, default=None,
                        help='the hardware driver instead of the simulator: emulated (physics '
                             'behind an in-process virtual CAN bus, enabled once the controller '
                             'is up) or can (a real bus: needs --params-file naming the bus and '
                             'calibration; stays disabled until /driver/enable); '
                             'docs/hardware.md')
    parser.add_argument('--realtime-priority', type=int, default=graph.DEFAULT_REALTIME_PRIORITY,
                        help='with --hardware: SCHED_FIFO priority of the driver and the '
                             'controller, as on a real robot (default '
                             f'{graph.DEFAULT_REALTIME_PRIORITY}; 0: normal scheduling; where it '
                             'is refused they run with normal scheduling)')
    parser.add_argument('--runs-dir', type=Path, default=Path('runs'),
                        help=f'parent of the default run directory {profile}-<date>-<time> '
                             '(default ./runs)')
    parser.add_argument('--bag', type=Path, default=None,
                        help='record an MCAP bag to this new directory '
                             '(default <run directory>/bag)')
    parser.add_argument('--plots', type=Path, default=None,
                        help='write figures of the bag here (default <run directory>/plots, '
                             'or <bag>_plots with --bag)')
    parser.add_argument('--no-plots', action='store_true', help='do not plot the bag')
    parser.add_argument('--domain-id', type=int, default=None,
                        help='ROS domain of the run (default: ROS_DOMAIN_ID if set, else a free '
                             'one); refused if another dodo hop holds it')
    parser.add_argument('--live', nargs='?', const=str(LIVE_DEFAULT_PORT), default='',
                        metavar='[HOST:]PORT',
                        help='serve the run live to the Foxglove app (WebSocket, cdr + ros2msg; '
                             f'default port {LIVE_DEFAULT_PORT} on 127.0.0.1 only; HOST:PORT '
                             'to listen elsewhere; 0: any free port); docs/viewing.md')
    parser.add_argument('--verbose', action=argparse.BooleanOptionalAction, default=None,
                        help="stream every node's log lines (default: only when the output is "
                             'not a terminal; on a terminal a progress line, the node logs in '
                             'nodes.log of the run directory, their warnings and errors still '
                             'shown); the node logs go to nodes.log either way')
    parser.add_argument('--namespace', default='',
                        help='ROS namespace of the robot (e.g. left): every topic and service '
                             'under it, /clock and /tf too; runs with different namespaces may '
                             'share an explicit --domain-id (docs/ros_contract.md)')
    parser.add_argument('--wall-timeout', type=float, default=None,
                        help='give up after this many wall-clock seconds '
                             '(default 60 + 20 x duration)')
    return parser


def main(argv=None, profile: str = 'hop', parser: argparse.ArgumentParser | None = None) -> int:
    """``dodo <profile>``: parse, check, run, report (``dodo walk``: profile 'walk')."""
    prog = f'dodo {profile}'
    parser = parser if parser is not None else build_parser(profile)
    try:
        args = parser.parse_args(argv)
        if args.plots is not None and args.no_plots:
            raise UsageError('--plots and --no-plots exclude each other')
        if args.domain_id is not None:
            domains.parse_domain_id(args.domain_id, '--domain-id')
        if args.hardware == 'can' and args.params_file is None:
            raise UsageError('--hardware can drives real motors and needs an explicit '
                             '--params-file whose driver: section names the bus (bus_interface, '
                             'bus_channel) and the calibration_file; start from '
                             'config/hardware.yaml and docs/hardware.md')
    except (UsageError, domains.DomainUnavailable) as exc:
        print(f'{prog}: error: {one_line(exc)}', file=sys.stderr)
        return EXIT_USAGE
    bag, plots = args.bag, args.plots
    if bag is None:
        run_dir = args.runs_dir / time.strftime(f'{profile}-%Y%m%d-%H%M%S')
        bag = run_dir / 'bag'
        default_plots = run_dir / 'plots'
        log_path = run_dir / 'nodes.log'
    else:
        default_plots = bag.parent / (bag.name + '_plots')
        log_path = bag.parent / (bag.name + '_nodes.log')
    if plots is None and not args.no_plots:
        plots = default_plots
    params_file = (args.params_file if args.params_file is not None
                   else share_dir().joinpath(*graph.profile(profile).params_file))
    try:
        return run(params_file, args.duration, bag, plots, args.wall_timeout,
                   domain_id=args.domain_id, model=args.model, prog=prog,
                   plotter=PLOTTERS[profile], hardware=args.hardware,
                   realtime_priority=args.realtime_priority, live=args.live,
                   verbose=(args.verbose if args.verbose is not None
                            else not sys.stdout.isatty()), log_path=log_path,
                   namespace=args.namespace)
    except KeyboardInterrupt:        # Ctrl-C during the checks or the plots (no child runs)
        print(f'{prog}: interrupted (SIGINT)', file=sys.stderr)
        return EXIT_INTERRUPTED


if __name__ == '__main__':
    sys.exit(main())
