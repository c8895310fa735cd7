# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
The checks of ``dodo hop`` / ``dodo walk`` before anything starts: every bad input in one line.

:class:`UsageError` is a bad input (``dodo hop: error: ...``, exit code 2). Checked here: the
new bag and plot directories, a real bus's params file, and the models the nodes will build
(the simulator's or the emulated hardware's physics, the driver's actuators, the controller and
its outcome monitor on that robot). :meth:`dodo_sim.tools.run_supervision.HopRun.check` runs
them with the params-file and domain checks.
"""
from __future__ import annotations

import os
from pathlib import Path
import re
import sys
import tempfile

from dodo_sim.paths import default_urdf_path
from dodo_sim.ros import graph
from dodo_sim.ros.params import node_parameters

#: Longest ``--duration``, s: 2^53 ns (104 days). Simulated time is stamped in ns and carried
#: as float64 seconds, exact up to 2^53 ns; past it stamps stop pairing exactly.
MAX_DURATION_S = 2**53 * 1e-9
#: Driver parameters a real-bus params file must set itself (nothing taken from defaults).
CAN_REQUIRED = ('bus_interface', 'bus_channel', 'calibration_file')


class UsageError(ValueError):
    """Bad user input, found before anything started; the message is one line."""


def one_line(text: str) -> str:
    """Return a message on one line (YAML errors and the like span several)."""
    return re.sub(r'\s*\n\s*', ' ', str(text)).strip()


def check_new_dir(path: Path, what: str) -> None:
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


def check_real_bus(params_file: Path) -> None:
    """
    Check that a real bus is driven only from a complete params file.

    Complete means that the params file names the bus and its calibration.
    """
    section = node_parameters(params_file, graph.DRIVER_NODE)
    missing = [k for k in CAN_REQUIRED if not section.get(k)]
    if missing:
        raise UsageError(
            f'--hardware can drives real motors: the driver: section of {params_file} '
            f'must name {", ".join(CAN_REQUIRED)} (missing: {", ".join(missing)}); start '
            f'from config/hardware.yaml and docs/hardware.md (wiring, calibration, the '
            f'checklist before powering the motors)')


def check_models(configs: dict, robot: graph.Robot) -> None:
    """
    Build the models the nodes will build, as they will.

    The simulator (or the driver's emulated hardware) builds its model and the driver its
    actuators on it; the controller (and its outcome monitor) accepts its configuration on that
    robot (the hopper: its set-points on that leg) — when the graph hosts it (``configs`` has a
    controller: not for an external one).

    What the URDF parser (C++) prints on stderr is kept out of the terminal and added to
    the one error line.
    """
    from dodo_control.registry import controller_entry
    from dodo_sim.simulator import Simulator
    ctrl = configs.get('controller')
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
            if ctrl is not None:        # none for an external controller (the user's node)
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


def check_driver(config) -> str:
    """
    Check the driver's configuration on its robot description, without opening a bus.

    Actuators and boom joints must exist with limits (the checks of :class:`DriverCore`), the
    calibration file must read, and on emulated hardware the physics must build at
    ``emulator_initial_q``. Returns the URDF XML (ValueError naming the bad value).
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
