# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
``dodo sim``: any robot description over ROS, supervised, with a bag and plots — one command.

::

    dodo sim URDF|XACRO [--controller hold|external|NAME] [--contact-frames A B ...]
             [--initial-q Q ...] [every option of dodo hop but --params-file and --model]

It builds the params file of the run in memory from the robot and hands over to
:mod:`dodo_sim.tools.hop_runner` (the same node set, dodo_sim.ros.graph; the same checks,
supervision, bag and plots). Defaults (docs/robots.md, "Run any robot over ROS"):

* **Contact frames**: the leaf links of the URDF tree (links that are no joint's parent) whose
  name says foot (``foot``, ``feet``, ``sole``, ``toe``, any case); if none does, the leaf links
  with a collision shape. Their origins are the point contacts; only they touch the terrain
  (``collisions: feet``).
* **Start pose**: the URDF's zero (neutral) configuration, each joint whose zero is outside its
  URDF limits clipped to the nearer limit. A floating base is lifted so that the
  lowest contact frame rests on the flat terrain at 0 m; a fixed base stays where the URDF bolts
  it, and the terrain is lowered to its lowest contact frame when that is below 0 m.
* **Controller** ``hold``: the registered ``joint_hold`` (docs/joint.md) holding the start pose.

One log line says which frames and which height. Bad input (a missing file, a URDF that does not
load, a frame the URDF lacks) is one ``dodo sim: error: ...`` line and exit code 2.
"""
from __future__ import annotations

import argparse
from dataclasses import dataclass
from pathlib import Path
import sys
import tempfile
import xml.etree.ElementTree as ET

from dodo_sim.ros.runtime import EXIT_CONFIG
from dodo_sim.tools import hop_runner
from dodo_sim.tools.run_checks import one_line, UsageError

PROG = 'dodo sim'
#: Substrings of a leaf link's name (lower case) that make it a foot by default.
FOOT_WORDS = ('foot', 'feet', 'sole', 'toe')
#: ``--controller hold`` is this registered controller (dodo_control.joint).
HOLD_CONTROLLER = 'joint_hold'


@dataclass(frozen=True)
class SimSetup:
    """What ``dodo sim`` derives from a robot: contact frames, start q, terrain height, why."""

    contact_frames: tuple
    initial_q: tuple
    terrain_height_m: float
    floating_base: bool
    summary: str


def leaf_links(urdf_xml: str) -> list:
    """Links that are no joint's parent, in URDF order, as (name, has a collision shape)."""
    root = ET.fromstring(urdf_xml.encode() if urdf_xml.lstrip().startswith('<?xml')
                         else urdf_xml)
    parents = {j.find('parent').get('link') for j in root.iter('joint')
               if j.find('parent') is not None}
    return [(link.get('name'), link.find('collision') is not None)
            for link in root.findall('link') if link.get('name') not in parents]


def default_contact_frames(urdf_xml: str) -> tuple:
    """Leaf links named like feet (:data:`FOOT_WORDS`), else leaf links with a collision shape."""
    leaves = leaf_links(urdf_xml)
    feet = tuple(name for name, _ in leaves if any(w in name.lower() for w in FOOT_WORDS))
    if feet:
        return feet
    return tuple(name for name, collision in leaves if collision)


def sim_setup(robot_path, contact_frames=(), initial_q=()) -> SimSetup:
    """
    Contact frames, start configuration and terrain height of ``dodo sim`` (module docs).

    Raises UsageError naming the problem (a file that does not load, a frame the URDF lacks,
    no default contact frame, an ``initial_q`` of the wrong length).
    """
    import numpy as np
    import pinocchio as pin
    from dodo_sim.physics.robot import load_robot, ModelError, robot_description_xml
    path = Path(robot_path)
    if not path.is_file():
        raise UsageError(f'robot description {str(path)!r}: no such file')
    try:
        xml = robot_description_xml(path)
        frames = tuple(contact_frames) or default_contact_frames(xml)
        rule = 'given' if contact_frames else 'default: leaf links named like feet, else ' \
                                              'leaf links with a collision shape'
        if not frames:
            raise UsageError(f'{path.name}: no leaf link is named like a foot {FOOT_WORDS} or '
                             f'has a collision shape; name the contact frames with '
                             f'--contact-frames')
        robot = load_robot(xml, contact_frames=frames)
    except (ModelError, ET.ParseError, OSError) as exc:
        raise UsageError(f'{path.name}: {one_line(exc)}') from None
    clipped = []
    if initial_q:
        if len(initial_q) != robot.nq:
            raise UsageError(f'--initial-q has {len(initial_q)} values; {path.name} needs '
                             f'nq = {robot.nq}: {robot.coordinate_names()}')
        q = np.asarray(initial_q, float)
    else:
        q = robot.default_q.copy()
        clipped = [lim.name for lim in robot.limits if not lim.lower <= q[lim.idx_q] <= lim.upper]
        for lim in robot.limits:      # a zero outside the limits (Go2's knees) goes to the stop
            q[lim.idx_q] = min(max(q[lim.idx_q], lim.lower), lim.upper)
    data = robot.create_data()
    pin.framesForwardKinematics(robot.model, data, q)
    heights = [float(data.oMf[i].translation[2]) for i in robot.contact_frame_ids]
    lowest = frames[int(np.argmin(heights))]
    terrain = 0.0
    if initial_q:
        pose = 'start pose as given'
    elif robot.floating_base:
        q[2] -= min(heights)
        pose = (f'start pose: the URDF zero configuration{_clipped(clipped)}, floating base '
                f'lifted to '
                f'z = {q[2]:.4f} m so that {lowest} rests on the flat terrain at 0 m')
    else:
        terrain = min(0.0, min(heights))
        pose = (f'start pose: the URDF zero configuration{_clipped(clipped)}, fixed base as '
                f'the URDF bolts it, '
                f'terrain at {terrain:.4f} m (under {lowest})')
    summary = f'contact frames {list(frames)} ({rule}); {pose}'
    return SimSetup(frames, tuple(float(x) for x in q), terrain, robot.floating_base, summary)


def _clipped(names) -> str:
    return f' ({len(names)} joints clipped into their URDF limits)' if names else ''


def params_yaml(setup: SimSetup, hold: bool) -> str:
    """Return the run's params file (YAML) for hop_runner; ``hold``: the joint_hold section."""
    import yaml
    simulator = {'contact_frames': list(setup.contact_frames), 'collisions': 'feet',
                 'initial_q': list(setup.initial_q)}
    if setup.terrain_height_m != 0.0:
        simulator['terrain_height_m'] = setup.terrain_height_m
    params = {'/**': {'ros__parameters': {'use_sim_time': True}},
              'simulator': {'ros__parameters': simulator}}
    if hold:
        params['controller'] = {'ros__parameters': {
            'controller': HOLD_CONTROLLER, 'contact_frames': list(setup.contact_frames)}}
    return yaml.safe_dump(params, sort_keys=False)


def build_parser() -> argparse.ArgumentParser:
    """``dodo hop``'s options (hop_runner.build_parser) plus the robot and its defaults."""
    parser = hop_runner.build_parser('hop', description=__doc__.split('\n\n')[0])
    parser.prog = PROG
    parser.epilog = ('--controller hold (default) is the registered joint_hold holding the start '
                     'pose (docs/joint.md). '
                     'Example: dodo sim go2.urdf --duration 2 --bag runs/go2. The robot is the '
                     'positional argument and its params are derived from it (dodo hop runs a '
                     'params file). Exit codes: 0 completed, 1 failed, 2 bad input '
                     '(docs/robots.md, "Run any robot over ROS").')
    # dodo hop's --params-file and --model stay parsed (to refuse them in one line) but unlisted
    for action in parser._actions:
        if action.dest in ('params_file', 'model'):
            action.help = argparse.SUPPRESS
    parser.add_argument('robot', type=Path, help='robot description, .urdf or .xacro')
    parser.add_argument('--contact-frames', nargs='+', default=(), metavar='FRAME',
                        help='point-contact frames (default: leaf links named like feet, else '
                             'leaf links with a collision shape)')
    parser.add_argument('--initial-q', nargs='+', type=float, default=(), metavar='Q',
                        help='start configuration, one value per q entry (m, rad; a floating '
                             'base: x y z qx qy qz qw first); default: the URDF zero, lifted')
    return parser


def main(argv=None) -> int:
    """``dodo sim``: derive the params, then run as ``dodo hop`` does."""
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
        for option, value in (('--params-file', args.params_file), ('--model', args.model)):
            if value is not None:
                raise UsageError(f'{option} is not an option of dodo sim: the robot is the '
                                 f'positional argument and its params are derived from it '
                                 f'(dodo hop runs a params file)')
        setup = sim_setup(args.robot, args.contact_frames, args.initial_q)
    except UsageError as exc:
        print(f'{PROG}: error: {one_line(exc)}', file=sys.stderr)
        return EXIT_CONFIG
    print(f'{PROG}: {setup.summary}', flush=True)
    controller = (HOLD_CONTROLLER if args.controller in (None, 'hold')
                  else args.controller)
    with tempfile.TemporaryDirectory(prefix='dodo-sim-') as tmp:
        params_file = Path(tmp) / 'params.yaml'
        params_file.write_text(params_yaml(setup, controller == HOLD_CONTROLLER))
        return hop_runner.main(argv + ['--params-file', str(params_file), '--model',
                                       str(args.robot), '--controller', controller],
                               profile='sim', parser=parser)


if __name__ == '__main__':
    sys.exit(main())
