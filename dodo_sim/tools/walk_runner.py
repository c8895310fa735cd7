# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
``dodo walk``: the Kneed Walker over DDS, supervised — ``dodo hop`` with the walker's defaults.

::

    dodo walk [--params-file F] [--model XACRO] [--duration S] [--bag DIR]
              [--plots DIR | --no-plots] [--domain-id N] [--wall-timeout S]

Defaults: the package's ``config/walk.yaml`` (controller ``kneed_walker``, hence the model
``urdf/kneed_walker.urdf.xacro`` and the contact topics ``/left_foot_contact``,
``/right_foot_contact``), 10 s, a new run directory ``runs/walk-<date>-<time>/`` with ``bag/``
and ``plots/``. Everything else is :mod:`dodo_sim.tools.hop_runner`: the same checks before
start (a params-file key the walker's nodes do not have is refused, naming it), the same node
set and parameters as ``launch/walk.launch.py`` (``dodo_sim.ros.graph``), the same supervision.

The controller node's walk monitor judges the walk (``dodo_control.walker.monitor``: falls from
``walker_outcome``, steps, distance, speed); its summary line becomes the run's
``walked N steps, D m, speed S m/s`` line. **Exit code 1 if the walker fell**, with the reason
(``the robot fell: torso_pitch at t = 0.111 s``); 0 if it walked the whole duration; 2 bad
input; 130/143 interrupted/terminated.
"""
from __future__ import annotations

import sys

from dodo_sim.tools import hop_runner


def build_parser():
    return hop_runner.build_parser('walk', description=__doc__.split('\n\n')[0],
                                   failed='failed or the walker fell')


def main(argv=None) -> int:
    return hop_runner.main(argv, profile='walk', parser=build_parser())


if __name__ == '__main__':
    sys.exit(main())
