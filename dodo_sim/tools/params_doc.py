# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
The params-file reference (``docs/parameters.md``), made from the config dataclasses.

::

    .venv/bin/python -m dodo_sim.tools.params_doc > docs/parameters.md
    .venv/bin/python -m dodo_sim.tools.params_doc --check docs/parameters.md   # exit 1: stale

Every parameter is defined once, as a field of a frozen config dataclass with its unit, bounds
and allowed values as field metadata (:mod:`dodo_sim.parameter`); the same definition validates
a config, becomes the ROS parameter's descriptor (:mod:`dodo_sim.ros.params`) and the
optimiser's default search space (:mod:`dodo_sim.tools.optimize_study`). This prints it per
params-file section (the node set of :mod:`dodo_sim.ros.graph`): name, default, unit, allowed
values and the field's description from its class docstring.
"""
from __future__ import annotations

import argparse
import dataclasses
import math
from pathlib import Path
import sys
from typing import Sequence

from dodo_sim.parameter import ALLOW_NAN, CHOICES, describe_range, RANGE, UNIT
from dodo_sim.ros import graph
from dodo_sim.ros.contract import DRIVER_NODE
from dodo_sim.ros.node_config import ClientConfig
from dodo_sim.ros.params import field_docs

#: (heading, params-file section, hosted controller) of each table
SECTIONS = (('simulator', 'simulator', 'slip_hopper'),
            ('controller (controller: slip_hopper, the default)', 'controller', 'slip_hopper'),
            ('controller (controller: kneed_walker)', 'controller', 'kneed_walker'),
            ('controller (controller: joint_hold)', 'controller', 'joint_hold'),
            (f'{DRIVER_NODE} (hardware)', DRIVER_NODE, 'slip_hopper'))


def _value_text(value) -> str:
    if isinstance(value, float) and math.isnan(value):
        return '.nan'
    if isinstance(value, (tuple, list)):
        return '[' + ', '.join(_value_text(v) for v in value) + ']'
    if isinstance(value, bool):
        return 'true' if value else 'false'
    if isinstance(value, str):
        return f"'{value}'" if value == '' else value
    return repr(value)


def _allowed_text(metadata) -> str:
    if metadata.get(CHOICES):
        return ' \\| '.join(metadata[CHOICES])
    if metadata.get(RANGE) is not None:
        return describe_range(metadata) + (' or NaN' if metadata.get(ALLOW_NAN) else '')
    return ''


def _cell(text: str) -> str:
    return ' '.join(text.split()).replace('|', '\\|')


def class_table(cls) -> list[str]:
    """Return the markdown table rows of one config dataclass's fields."""
    docs = field_docs(cls)
    rows = ['| parameter | default | unit | allowed | meaning |', '|---|---|---|---|---|']
    for field in dataclasses.fields(cls):
        default = (field.default if field.default is not dataclasses.MISSING
                   else field.default_factory())
        unit = field.metadata.get(UNIT, '')
        rows.append(f'| `{field.name}` | `{_value_text(default)}` | {_cell(unit)} | '
                    f'{_allowed_text(field.metadata)} | {_cell(docs.get(field.name, ""))} |')
    return rows


def reference_text() -> str:
    """Return the whole reference page (docs/parameters.md)."""
    lines = ['# Parameters (made by `python -m dodo_sim.tools.params_doc`; do not edit)', '',
             'Every key a params file may set under `<node>: ros__parameters:`, per node, from',
             'the config dataclasses that define them (unit, bounds and allowed values are the',
             "fields' metadata; the nodes and `dodo hop` refuse a value outside them).",
             'Running nodes show the same as ROS parameter descriptors',
             '(`ros2 param describe /simulator dt`).', '']
    for heading, node, controller in SECTIONS:
        lines += [f'## {heading}', '']
        for cls in graph.config_classes(node, controller):
            lines += [f'`{cls.__module__}.{cls.__name__}`', '']
            lines += class_table(cls) + ['']
    lines += ['## client (your own controller node on `dodo_sim.client`)', '',
              'Not a node of the graph: the parameters of a node built on',
              '`dodo_sim.client.ControllerClient` (docs/ros_contract.md, "Any controller").', '',
              f'`{ClientConfig.__module__}.{ClientConfig.__name__}`', '']
    lines += class_table(ClientConfig) + ['']
    return '\n'.join(lines).rstrip() + '\n'


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--check', type=Path, default=None,
                        help='compare with this file instead of printing; exit 1 if it differs')
    args = parser.parse_args(argv)
    text = reference_text()
    if args.check is None:
        sys.stdout.write(text)
        return 0
    if args.check.read_text() != text:
        print(f'{args.check} is stale: run python -m dodo_sim.tools.params_doc > {args.check}',
              file=sys.stderr)
        return 1
    return 0


if __name__ == '__main__':
    sys.exit(main())
