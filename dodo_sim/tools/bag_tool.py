# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
``dodo bag``: look at and repair bags (docs/bags.md).

::

    dodo bag info BAG              topics, types, counts, the robot and the recorded configuration
    dodo bag recover BAG [--out DIR]   rebuild a bag whose recording did not end cleanly
    dodo bag merge-driver-log BAG [--log FILE]   add the driver's logged states the bag missed
"""
from __future__ import annotations

import argparse
import sys
from typing import Sequence


#: Messages of each topic ``dodo bag info`` reads for the robot and the configuration: joint
#: names come from the first states and commands, the configuration from the parameter events
#: (the counts come from the metadata); the memory stays bounded whatever the bag holds.
INFO_MESSAGES_PER_TOPIC = 1000


def _info(args) -> int:
    from dodo_sim.physics.robot import ModelError
    from dodo_sim.ros import contract
    from dodo_sim.tools import bag as bagio
    from dodo_sim.tools import bag_parameters, bag_robot
    from rosbags.highlevel import AnyReaderError
    from rosbags.rosbag2 import ReaderError
    try:
        types = bagio.topic_types(args.bag)
        counts = bagio.message_counts(args.bag)
        wanted = [t for t in (contract.ROBOT_DESCRIPTION, contract.PARAMETER_EVENTS,
                              contract.JOINT_STATES, contract.JOINT_COMMANDS) if t in types]
        data = bagio.read_bag(args.bag, wanted, max_messages=INFO_MESSAGES_PER_TOPIC)
    except (OSError, ValueError, AnyReaderError, ReaderError) as exc:
        print(f'dodo bag: error: {exc}', file=sys.stderr)
        return 2
    width = max((len(t) for t in types), default=5)
    print(f'{args.bag}:')
    for topic in sorted(types):
        print(f'  {topic:<{width}} {counts.get(topic, 0):>8}  {types[topic]}')
    problem = None
    try:
        robot = bag_robot.robot_info(data)
    except (ModelError, ValueError) as exc:
        # the description is unusable (not XML, not a URDF pinocchio loads): say what the other
        # topics tell, then fail with the reason
        problem = f'{args.bag}: {exc}'
        data.pop(contract.ROBOT_DESCRIPTION, None)
        robot = bag_robot.robot_info(data)
    print(f'robot: joints {list(robot.joint_names)}, actuated {list(robot.actuated_joint_names)}'
          f', contact frames {list(robot.contact_frames)}'
          + ('' if robot.urdf_xml else
             ' (from the recorded topics: /robot_description unusable)' if problem else
             ' (no /robot_description recorded)'))
    nodes = bag_parameters.recorded_nodes(data)
    if not nodes:
        print('configuration: none recorded (no /parameter_events)')
    events = len(data.get(contract.PARAMETER_EVENTS, ()))
    if events < counts.get(contract.PARAMETER_EVENTS, 0):
        print(f'configuration: from the first {events} of '
              f'{counts[contract.PARAMETER_EVENTS]} /parameter_events')
    for node in nodes:
        params = bag_parameters.node_parameters(data, node)
        print(f'configuration of {node}: {len(params.initial)} parameters, '
              f'{len(params.changes)} runtime change(s)')
        if args.parameters:
            for name in sorted(params.initial):
                value = params.initial[name]
                text = repr(value)
                print(f'    {name} = {text if len(text) < 80 else text[:77] + "..."}')
        for change in params.changes:
            print(f'    t = {change.stamp_ns * 1e-9:.3f} s (bag time {change.log_time_ns}): '
                  f'{change.kind} {change.values}')
    if problem is not None:
        print(f'dodo bag: error: {problem}', file=sys.stderr)
        return 2
    return 0


def _recover(args) -> int:
    from dodo_sim.tools.bag_recover import recover
    try:
        report = recover(args.bag, args.out)
    except (ValueError, OSError) as exc:
        print(f'dodo bag recover: error: {exc}', file=sys.stderr)
        return 2
    print(report.text())
    return 0


def _merge_driver_log(args) -> int:
    from dodo_sim.hardware.state_log import state_log_path
    from dodo_sim.tools.bag_merge import merge_state_log
    log = args.log or state_log_path(args.bag)
    try:
        report = merge_state_log(args.bag, log)
    except (ValueError, OSError) as exc:
        print(f'dodo bag merge-driver-log: error: {exc}', file=sys.stderr)
        return 2
    print(report.line() + f' ({log} merged and removed)')
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog='dodo bag', description=__doc__.split('\n\n')[0])
    sub = parser.add_subparsers(dest='command', required=True)
    info = sub.add_parser('info', help='topics, counts, robot and recorded configuration')
    info.add_argument('bag', help='rosbag2 bag directory')
    info.add_argument('--parameters', action='store_true',
                      help='also list every recorded start parameter')
    info.set_defaults(run=_info)
    rec = sub.add_parser('recover', help='rebuild a bag whose recorder was killed',
                         description='Rebuild a usable bag from the complete chunks of a '
                                     'recording that did not end cleanly (SIGKILL, power '
                                     'loss) and report what was lost.')
    rec.add_argument('bag', help='bag directory with an MCAP file and no metadata.yaml')
    rec.add_argument('--out', default=None,
                     help='write the rebuilt bag to this new directory instead of in place '
                          '(in place keeps the damaged file as <name>.mcap.damaged)')
    rec.set_defaults(run=_recover)
    merge = sub.add_parser('merge-driver-log',
                           help="add the driver's logged /joint_states the recorder missed",
                           description="Merge the hardware driver's log of every state it "
                                       'published (<bag>.driver.mcap) into the closed bag: the '
                                       'states the recorder missed are added, the log removed '
                                       '(dodo hop does this at the end of a hardware run).')
    merge.add_argument('bag', help='closed rosbag2 bag directory')
    merge.add_argument('--log', default=None,
                       help="the driver's state log (default: <bag>.driver.mcap beside the bag)")
    merge.set_defaults(run=_merge_driver_log)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return args.run(args)


if __name__ == '__main__':
    sys.exit(main())
