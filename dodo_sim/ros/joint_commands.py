# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
Check a ``/joint_commands`` JointState against the actuated joints (no rclpy).

The simulator node applies a command only when it names every actuated joint once, in any
order, with one finite effort each (docs/ros_contract.md); what it rejects, it counts and
reports with the reason returned here.
"""
from __future__ import annotations

import math
from typing import Mapping, Sequence


def actuated_efforts(names: Sequence[str], effort: Sequence[float], actuated: list,
                     index: Mapping[str, int]) -> tuple[tuple | None, str]:
    """
    Return the torques in ``actuated`` order (N*m) and '', or ``(None, why)``.

    ``index``: the position of each actuated joint in ``actuated``.
    """
    if len(effort) != len(names):
        return None, f'{len(names)} names but {len(effort)} efforts'
    if names == actuated:
        torques = tuple(effort)
    elif sorted(names) == sorted(actuated):
        ordered = [0.0] * len(names)
        for name, value in zip(names, effort):
            ordered[index[name]] = value
        torques = tuple(ordered)
    else:
        return None, f'joint names {list(names)}, need the actuated joints {actuated}'
    for value in torques:
        if not math.isfinite(value):
            return None, f'non-finite effort {list(torques)} N*m'
    return torques, ''
