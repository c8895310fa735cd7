# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
The ``dodo`` command line.

Subcommands::

    dodo demo   [...]   simulator-only drop demo (no ROS)                 -> dodo_sim.tools.demo
    dodo hop    [...]   simulator + controller (+ recorder) over DDS      ->
    dodo_sim.tools.hop_runner
    dodo walk   [...]   the same with the Kneed Walker (exit 1 if it falls) ->
    dodo_sim.tools.walk_runner
    dodo sim    URDF [...]  any robot description over DDS (joint_hold by default) ->
    dodo_sim.tools.sim_runner
    dodo replay BAG [...]  republish a bag / replay it through the controller ->
    dodo_sim.tools.replay
    dodo plot   BAG --out DIR   figures and an animation from a bag         -> dodo_sim.tools.plot
    dodo bag    info|recover BAG  look at a bag, rebuild a crashed one   -> dodo_sim.tools.bag_tool

``dodo <subcommand> -h`` shows the options of each.
"""
from __future__ import annotations

import importlib
import sys

#: subcommand -> (module, one-line help); each module has ``main(argv) -> int``.
SUBCOMMANDS = {
    'demo': ('dodo_sim.tools.demo', 'simulator-only drop demo of both integrators (no ROS)'),
    'hop': ('dodo_sim.tools.hop_runner',
            'run simulator, controller and recorder as ROS 2 processes'),
    'walk': ('dodo_sim.tools.walk_runner', 'the same with the Kneed Walker (exit 1 if it falls)'),
    'sim': ('dodo_sim.tools.sim_runner',
            'any URDF/xacro over ROS: derived contacts and start pose, joint_hold by default'),
    'replay': ('dodo_sim.tools.replay',
               'replay a bag (original timing, or through the controller)'),
    'plot': ('dodo_sim.tools.plot', 'PNG figures and a robot animation from a bag'),
    'optimize': ('dodo_sim.tools.optimize', 'tune controller parameters over scenarios (Optuna)'),
    'bag': ('dodo_sim.tools.bag_tool', 'bag info, and recover a bag whose recorder was killed'),
}


def usage() -> str:
    lines = ['usage: dodo <subcommand> [options]', '', 'subcommands:']
    width = max(map(len, SUBCOMMANDS)) + 2
    lines += [f'  {name:<{width}}{text}' for name, (_, text) in SUBCOMMANDS.items()]
    lines += ['', "'dodo <subcommand> -h' for the options of a subcommand"]
    return '\n'.join(lines)


def main(argv=None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] in ('-h', '--help'):
        print(usage())
        return 0 if argv else 2
    name, rest = argv[0], argv[1:]
    if name not in SUBCOMMANDS:
        print(f"dodo: unknown subcommand '{name}'\n\n{usage()}", file=sys.stderr)
        return 2
    module = importlib.import_module(SUBCOMMANDS[name][0])
    code = module.main(rest)
    return int(code or 0)


if __name__ == '__main__':
    sys.exit(main())
