"""``dodo hop``: run the dodo_sim graph as separate processes over real DDS (no ROS install).

::

    dodo hop [--params-file F] [--duration S] [--bag DIR] [--plots DIR | --no-plots]

Defaults: the package's ``config/hop.yaml``, 10 s, and a new run directory
``runs/hop-<date>-<time>/`` (``--runs-dir``) holding ``bag/`` (rosbag2 MCAP) and ``plots/``.

Starts the nodes of :func:`dodo_sim.ros.graph.hop_nodes` — the same node set, executables and
parameters as ``launch/hop.launch.py`` minus what needs a ROS install (robot_state_publisher,
rviz2; the simulator publishes /robot_description itself) — each as
``python -m <module> --ros-args -r __node:=<name> --params-file F -p ...``.
Order: recorder (waits for its ``ready`` line), controller, simulator. The simulator runs
``S`` seconds of *simulated* time (parameter ``stop_after``) and exits; then the controller and
the recorder get SIGINT (then SIGTERM, then SIGKILL after deadlines). Exit code 0 only if every
process ended cleanly and on time; a process that dies early is reported and the run goes on
(e.g. without the controller the simulator keeps stepping with zero torque) but the exit code is 1.

Child output is prefixed with ``[name]``. ``ROS_AUTOMATIC_DISCOVERY_RANGE`` defaults to
``LOCALHOST`` (set it to override); ``ROS_DOMAIN_ID`` is passed through.
"""
from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from dodo_sim.ros import graph
from dodo_sim.ros.params import ParamsFileError, check_params_file, node_parameters
from dodo_sim.paths import default_params_path

RECORDER_READY = 'dodo recorder: ready'
EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_INTERRUPTED = 0, 1, 2, 130


def ros_arg_value(value: Any) -> str:
    """A parameter value as ``-p name:=value`` text (YAML, like ros2 run)."""
    if isinstance(value, bool):
        return 'true' if value else 'false'
    if isinstance(value, (list, tuple)):
        return '[' + ', '.join(_yaml_item(v) for v in value) + ']'
    if isinstance(value, float):
        return repr(value)
    return str(value)


def _yaml_item(value: Any) -> str:
    if isinstance(value, str):
        return "'" + value.replace("'", "''") + "'"
    return ros_arg_value(value)


def node_command(spec: graph.NodeSpec, params_file: Path, parameters: dict) -> list:
    """The command line of one node."""
    cmd = [sys.executable, '-m', spec.module, '--ros-args', '-r', f'__node:={spec.name}']
    if spec.params_file:
        cmd += ['--params-file', str(params_file)]
    for key, value in parameters.items():
        cmd += ['-p', f'{key}:={ros_arg_value(value)}']
    return cmd


@dataclass
class Child:
    """One started node process and the thread that forwards its output."""

    name: str
    proc: subprocess.Popen
    ready: threading.Event = field(default_factory=threading.Event)
    lines: list = field(default_factory=list)
    thread: threading.Thread | None = None
    expected_exit: bool = False


class HopRun:
    """Start, watch and stop the graph processes (usable from tests)."""

    def __init__(self, params_file, duration: float, bag=None, env=None,
                 out: TextIO | None = None, keep_lines: bool = False):
        self.params_file = Path(params_file)
        self.duration = float(duration)
        self.bag = Path(bag) if bag is not None else None
        self.env = dict(os.environ if env is None else env)
        self.env.setdefault('ROS_AUTOMATIC_DISCOVERY_RANGE', 'LOCALHOST')
        self.env.setdefault('PYTHONUNBUFFERED', '1')
        self.env.setdefault('RCUTILS_LOGGING_BUFFERED_STREAM', '1')
        self.env.setdefault('RCUTILS_COLORIZED_OUTPUT', '0')
        self.out = out if out is not None else sys.stdout
        self.keep_lines = keep_lines
        self.children: dict[str, Child] = {}
        self.failures: list[str] = []
        self._out_lock = threading.Lock()
        self.nodes = graph.hop_nodes(record=self.bag is not None)

    # -- checks --------------------------------------------------------------------------------

    def check(self) -> None:
        """Raise ValueError / ParamsFileError before anything starts."""
        if not self.duration > 0.0:
            raise ValueError(f'--duration must be > 0 s of simulated time, got {self.duration}')
        check_params_file(self.params_file, graph.known_parameters())
        for spec in self.nodes:
            if spec.name in graph.NODE_CONFIGS:
                self._check_node_config(spec.name)
        if self.bag is not None and self.bag.exists():
            raise ValueError(f'bag directory {self.bag} exists already; choose a new one')

    def _check_node_config(self, name: str) -> None:
        from dodo_sim.ros.params import config_from_parameters, config_defaults
        values = node_parameters(self.params_file, name)
        for cls in graph.config_classes(name):
            fields = set(config_defaults(cls))
            config_from_parameters(cls, {k: v for k, v in values.items() if k in fields})

    # -- processes -----------------------------------------------------------------------------

    def commands(self) -> dict[str, list]:
        args = {'bag': str(self.bag) if self.bag is not None else '',
                'stop_after': self.duration}
        return {spec.name: node_command(spec, self.params_file,
                                        graph.hop_parameters(spec, self.nodes, args))
                for spec in self.nodes}

    def _forward(self, child: Child) -> None:
        for line in child.proc.stdout:
            text = line.rstrip('\n')
            if self.keep_lines:
                child.lines.append(text)
            if text.startswith(RECORDER_READY):
                child.ready.set()
            with self._out_lock:
                self.out.write(f'[{child.name}] {text}\n')
                self.out.flush()

    def _start(self, name: str, cmd: list) -> Child:
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                text=True, env=self.env, bufsize=1)
        child = Child(name, proc)
        child.thread = threading.Thread(target=self._forward, args=(child,), daemon=True)
        child.thread.start()
        self.children[name] = child
        return child

    def start(self, ready_timeout: float = 60.0) -> None:
        """Start every node: recorder first (waits for its ready line), simulator last."""
        commands = self.commands()
        order = sorted(commands, key=lambda n: {'recorder': 0, 'simulator': 2}.get(n, 1))
        for name in order:
            child = self._start(name, commands[name])
            if name == 'recorder':
                deadline = time.monotonic() + ready_timeout
                while not child.ready.wait(0.05):
                    if child.proc.poll() is not None or time.monotonic() > deadline:
                        raise RuntimeError(
                            f'recorder did not get ready (exit code {child.proc.poll()})')

    def wait(self, timeout: float) -> bool:
        """Wait for the simulator to finish; note early deaths. False on timeout."""
        deadline = time.monotonic() + timeout
        sim = self.children['simulator']
        reported = set()
        while time.monotonic() < deadline:
            try:
                sim.proc.wait(timeout=0.1)
                sim.expected_exit = True
                return True
            except subprocess.TimeoutExpired:
                pass
            for name, child in self.children.items():
                if name not in reported and child.proc.poll() is not None:
                    reported.add(name)
                    self._fail(f'{name} exited early with code {child.proc.returncode}')
        self._fail(f'simulator did not finish {self.duration} s of simulated time within '
                   f'{timeout:.0f} s of wall time')
        return False

    def stop(self, grace: float = 15.0) -> None:
        """SIGINT the others (controller first, recorder last), escalate after deadlines."""
        order = sorted(self.children, key=lambda n: {'simulator': 0, 'recorder': 2}.get(n, 1))
        for name in order:
            child = self.children[name]
            proc = child.proc
            if proc.poll() is None:
                child.expected_exit = True
                for sig, wait_s in ((signal.SIGINT, grace), (signal.SIGTERM, 5.0),
                                    (signal.SIGKILL, 5.0)):
                    proc.send_signal(sig)
                    try:
                        proc.wait(timeout=wait_s)
                        break
                    except subprocess.TimeoutExpired:
                        self._fail(f'{name} ignored {signal.Signals(sig).name} for {wait_s} s')
            if child.thread is not None:
                child.thread.join(timeout=5.0)
            if proc.returncode not in (0, None) and child.expected_exit:
                self._fail(f'{name} ended with exit code {proc.returncode}')

    def _fail(self, message: str) -> None:
        if message not in self.failures:
            self.failures.append(message)
            with self._out_lock:
                self.out.write(f'dodo hop: {message}\n')
                self.out.flush()


def default_wall_timeout(duration: float) -> float:
    """Wall-clock limit of a run: generous (lockstep runs several times faster than real time)."""
    return 60.0 + 20.0 * duration


def run(params_file, duration: float, bag=None, plots=None, wall_timeout=None,
        out: TextIO | None = None) -> int:
    out = out if out is not None else sys.stdout
    hop = HopRun(params_file, duration, bag, out=out)
    try:
        hop.check()
    except (ValueError, ParamsFileError) as exc:
        out.write(f'dodo hop: {exc}\n')
        return EXIT_USAGE
    interrupted = False
    t0 = time.monotonic()
    try:
        hop.start()
        hop.wait(wall_timeout if wall_timeout is not None else default_wall_timeout(duration))
    except KeyboardInterrupt:
        interrupted = True
    except RuntimeError as exc:
        hop._fail(str(exc))
    finally:
        hop.stop()
    wall = time.monotonic() - t0
    code = EXIT_INTERRUPTED if interrupted else (EXIT_FAILED if hop.failures else EXIT_OK)
    out.write(f'dodo hop: {duration} s simulated in {wall:.1f} s wall time; '
              f'{"ok" if code == 0 else "FAILED: " + "; ".join(hop.failures)}\n')
    if bag is not None:
        out.write(f'dodo hop: bag: {Path(bag).resolve()}\n')
        if plots is not None and Path(bag).is_dir():
            code = max(code, make_plots(bag, plots, out))
    out.flush()
    return code


def make_plots(bag, plots, out: TextIO) -> int:
    try:
        from dodo_sim.tools import plot
    except ImportError as exc:
        out.write(f'dodo hop: no plots ({exc})\n')
        return EXIT_FAILED
    code = plot.main([str(bag), '--out', str(plots)])
    if code:
        out.write(f'dodo hop: plotting failed (exit code {code})\n')
        return EXIT_FAILED
    out.write(f'dodo hop: plots: {Path(plots).resolve()}\n')
    return EXIT_OK


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(
        prog='dodo hop', description=__doc__.split('\n\n')[0],
        epilog='Example: dodo hop --duration 10 --bag runs/hop1 --plots runs/hop1_plots')
    parser.add_argument('--params-file', type=Path, default=None,
                        help='params file (default: the package config/hop.yaml)')
    parser.add_argument('--duration', type=float, default=10.0,
                        help='simulated time to run, s (default 10)')
    parser.add_argument('--runs-dir', type=Path, default=Path('runs'),
                        help='parent of the default run directory hop-<date>-<time> '
                             '(default ./runs)')
    parser.add_argument('--bag', type=Path, default=None,
                        help='record an MCAP bag to this new directory '
                             '(default <run directory>/bag)')
    parser.add_argument('--plots', type=Path, default=None,
                        help='write figures of the bag here (default <run directory>/plots, '
                             'or <bag>_plots with --bag)')
    parser.add_argument('--no-plots', action='store_true', help='do not plot the bag')
    parser.add_argument('--wall-timeout', type=float, default=None,
                        help='give up after this many wall-clock seconds '
                             '(default 60 + 20 x duration)')
    args = parser.parse_args(argv)
    if args.plots is not None and args.no_plots:
        parser.error('--plots and --no-plots exclude each other')
    bag, plots = args.bag, args.plots
    if bag is None:
        run_dir = args.runs_dir / time.strftime('hop-%Y%m%d-%H%M%S')
        bag = run_dir / 'bag'
        default_plots = run_dir / 'plots'
    else:
        default_plots = bag.parent / (bag.name + '_plots')
    if plots is None and not args.no_plots:
        plots = default_plots
    bag.parent.mkdir(parents=True, exist_ok=True)
    params_file = args.params_file if args.params_file is not None else default_params_path()
    return run(params_file, args.duration, bag, plots, args.wall_timeout)


if __name__ == '__main__':
    sys.exit(main())
