# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
``dodo hop``: run the dodo_sim graph as supervised processes over real DDS (no ROS install).

::

    dodo hop [--params-file F] [--model XACRO] [--duration S] [--bag DIR]
             [--plots DIR | --no-plots] [--domain-id N] [--wall-timeout S]
             [--hardware emulated|can] [--realtime-priority N] [--controller NAME|external]

Defaults: the package's ``config/hop.yaml``, 10 s, and a new run directory
``runs/hop-<date>-<time>/`` (``--runs-dir``) holding ``bag/`` (rosbag2 MCAP) and ``plots/``.
The params file selects the controller (``controller``: ``slip_hopper``, ``kneed_walker``) and
with it the default robot description (``--model`` overrides it; dodo_sim.ros.graph.
robot_from_params); ``--controller NAME`` hosts another one, ``--controller external`` (or
``none``) starts no controller node: the run waits for the user's own node on its ROS domain
(docs/ros_contract.md, "Any controller"; so does a params file with ``command_convention:
ros2_control``, answered by a controller_manager). ``dodo walk``
(:mod:`dodo_sim.tools.walk_runner`) is this runner with the walker's defaults.

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

Supervision (:mod:`dodo_sim.tools.run_supervision` on :mod:`dodo_sim.tools.supervisor`,
docs/running.md): children die with ``dodo hop``
(SIGINT, SIGTERM, SIGHUP, even SIGKILL), the bag is closed whenever the recorder gets a chance,
and the last line says what happened. Exit codes: 0 completed, 1 failed (a process failed or
ended early, the simulation diverged, the wall-clock limit, the bag not closed or short of the
simulated end, the hosted controller's task failed — the walker fell, the SLIP leg did not hop —,
a full disk), 2 bad input, 130 interrupted (Ctrl-C), 143 / 129 terminated (SIGTERM / SIGHUP).
The nodes listen on 127.0.0.1 only (:mod:`dodo_sim.ros.dds_profile`).
"""
from __future__ import annotations

import argparse
import math
from pathlib import Path
import sys
import time
from typing import TextIO

from dodo_sim.paths import share_dir
from dodo_sim.ros import contract, domains, graph
from dodo_sim.ros.runtime import EXIT_CONFIG, EXIT_INTERRUPTED
from dodo_sim.tools.live_view import DEFAULT_PORT as LIVE_DEFAULT_PORT
from dodo_sim.tools.run_checks import check_new_dir, MAX_DURATION_S, one_line, UsageError
from dodo_sim.tools.run_report import write_report
from dodo_sim.tools.run_supervision import HopRun

#: Profile (``dodo hop``, ``dodo walk``, ``dodo sim``) -> module writing the figures of its bag.
PLOTTERS = {'hop': 'dodo_sim.tools.plot', 'walk': 'dodo_sim.tools.plot',
            'sim': 'dodo_sim.tools.plot'}


def default_wall_timeout(duration: float) -> float:
    """Wall-clock limit of a run: generous (lockstep runs several times faster than real time)."""
    return 60.0 + 20.0 * duration


def run(params_file, duration: float, bag=None, plots=None, wall_timeout=None,
        out: TextIO | None = None, err: TextIO | None = None,
        domain_id: int | None = None, env=None, model=None, prog: str = 'dodo hop',
        plotter: str = 'dodo_sim.tools.plot', hardware: str | None = None,
        realtime_priority: int = graph.DEFAULT_REALTIME_PRIORITY, live: str = '',
        verbose: bool = True, log_path=None, namespace: str = '',
        controller: str | None = None, viewer_dir=None, profile: str = 'hop') -> int:
    """
    Check, run, report; the exit code (see module docs).

    ``plotter``: the module whose ``main([bag, '--out', plots])`` writes the figures
    (:data:`PLOTTERS`). ``live``: the recorder's live view (PORT or HOST:PORT; docs/viewing.md).
    ``verbose``: stream every node line; else a progress line, the node lines in ``log_path`` and
    only their warnings and errors on the terminal (dodo_sim.tools.run_console).
    ``viewer_dir``: in a namespace, the viewer configurations of ``profile`` for it are written
    there (dodo_sim.tools.layouts.write_viewer_files; docs/viewing.md).
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
                     namespace=namespace, controller=controller)
    except UsageError as exc:
        err.write(f'{prog}: error: {one_line(exc)}\n')
        err.flush()
        return EXIT_CONFIG
    try:
        hop.check()
        if wall_timeout is not None and not (math.isfinite(wall_timeout) and wall_timeout > 0):
            raise UsageError(f'--wall-timeout must be a finite number of seconds > 0, '
                             f'got {wall_timeout}')
        if plots is not None:
            check_new_dir(Path(plots), 'plots directory')
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
        return EXIT_CONFIG
    domain = hop.domain.domain_id
    out.write(f'{prog}: ROS domain {domain} (private to this run); watch it with '
              f'ROS_DOMAIN_ID={domain} ROS_AUTOMATIC_DISCOVERY_RANGE='
              f'{hop.discovery_range} ros2 topic echo '
              f'{contract.resolve(contract.JOINT_STATES, hop.namespace)}\n')
    if hop.robot.external:
        env = (f'ROS_DOMAIN_ID={domain} ROS_AUTOMATIC_DISCOVERY_RANGE='
               f'{hop.env["ROS_AUTOMATIC_DISCOVERY_RANGE"]}')
        out.write(f'{prog}: the controller is your own node: start it with {env}'
                  + (f' in namespace {hop.namespace}' if hop.namespace else '')
                  + '; the simulator waits for it (it names what is missing) and its bag '
                  'records it as external (docs/ros_contract.md, "Any controller")\n')
    if hop.namespace and viewer_dir is not None:
        from dodo_sim.tools.layouts import write_viewer_files
        try:
            written = write_viewer_files(viewer_dir, profile, hop.namespace)
            out.write(f'{prog}: viewer configurations for namespace {hop.namespace}: '
                      f'{viewer_dir} ({", ".join(p.name for p in written)})\n')
        except OSError as exc:       # the run does not need them
            out.write(f'{prog}: note: viewer configurations not written: {one_line(exc)}\n')
    if hop.domain.foreign_sockets:
        out.write(f'{prog}: note: domain {domain} already has DDS participants on this '
                  f'machine (ROS_DOMAIN_ID was given); they will see this run\n')
    if hardware == 'can':
        out.write(f'{prog}: the driver stays DISABLED until you enable it (after the '
                  f'checklist of docs/hardware.md): ROS_DOMAIN_ID={domain} '
                  f'ROS_AUTOMATIC_DISCOVERY_RANGE={hop.discovery_range} '
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
    return write_report(result, bag, plots, out, prog, plotter, log_path, verbose)


class _Parser(argparse.ArgumentParser):
    """Argument parser with one-line errors (``dodo hop: error: ...``) raised, not printed."""

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
    parser.add_argument('--controller', default=None, metavar='NAME|external',
                        help="the controller (default: the params file's controller section): "
                             'a controller name hosted by the controller node (e.g. '
                             'slip_hopper, kneed_walker, joint_hold), or external (none): no '
                             'controller node, your own ROS 2 node answers each state '
                             '(docs/ros_contract.md, "Any controller")')
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
        if args.duration > MAX_DURATION_S and math.isfinite(args.duration):
            raise UsageError(f'--duration {args.duration:g} s is longer than the '
                             f'{MAX_DURATION_S:.4g} s (104 days) a run can stamp exactly')
        if args.hardware == 'can' and args.params_file is None:
            raise UsageError('--hardware can drives real motors and needs an explicit '
                             '--params-file whose driver: section names the bus (bus_interface, '
                             'bus_channel) and the calibration_file; start from '
                             'config/hardware.yaml and docs/hardware.md')
    except (UsageError, domains.DomainUnavailable) as exc:
        print(f'{prog}: error: {one_line(exc)}', file=sys.stderr)
        return EXIT_CONFIG
    bag, plots = args.bag, args.plots
    if bag is None:
        run_dir = args.runs_dir / time.strftime(f'{profile}-%Y%m%d-%H%M%S')
        bag = run_dir / 'bag'
        default_plots = run_dir / 'plots'
        log_path = run_dir / 'nodes.log'
        viewer_dir = run_dir / 'viewer'
    else:
        default_plots = bag.parent / (bag.name + '_plots')
        log_path = bag.parent / (bag.name + '_nodes.log')
        viewer_dir = bag.parent / (bag.name + '_viewer')
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
                   namespace=args.namespace, controller=args.controller,
                   viewer_dir=viewer_dir, profile=profile)
    except KeyboardInterrupt:        # Ctrl-C during the checks or the plots (no child runs)
        print(f'{prog}: interrupted (SIGINT)', file=sys.stderr)
        return EXIT_INTERRUPTED


if __name__ == '__main__':
    sys.exit(main())
