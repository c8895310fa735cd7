# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
Check a command against the actuated joints (no rclpy).

The simulator and the driver apply a ``/joint_commands`` JointState only when it names every
actuated joint once, in any order, with one finite effort each, and an
``/effort_controller/commands`` array only with one finite value per actuated joint
(docs/ros_contract.md); what they reject, they count and report with the reason returned here.
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


def unstamped_efforts(data: Sequence[float], actuated: list) -> tuple[tuple | None, str]:
    """
    Return the torques of a ``/effort_controller/commands`` command and '', or ``(None, why)``.

    One finite value per actuated joint, in ``actuated`` order (N*m).
    """
    if len(data) != len(actuated) or not all(map(math.isfinite, data)):
        return None, f'{list(data)!r}, need {len(actuated)} finite values {actuated} N*m'
    return tuple(data), ''
