# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
The hardware calibration file: zero offsets of the actuators and the boom encoders.

Written by the driver's ``~/calibrate`` service (atomically), read at the driver's start
(``DriverConfig.calibration_file``; docs/hardware.md, "Calibration"). Pure file IO: no rclpy,
no bus.
"""
from __future__ import annotations

from dataclasses import dataclass, field
import datetime
import math
import os
from pathlib import Path
from typing import Mapping

import yaml

CALIBRATION_FORMAT = 'dodo_sim_calibration/1'


@dataclass(frozen=True)
class Calibration:
    """
    Zero offsets of the actuators and the boom encoders.

    They are the actuator position at joint zero (rad, per actuated joint) and the boom encoder
    counts at angle zero ([yaw, pitch]).
    """

    zero_offsets: Mapping[str, float] = field(default_factory=dict)
    boom_zero_counts: tuple = (0, 0)


def load_calibration(path: str | os.PathLike) -> Calibration:
    """Read a calibration file (ValueError naming the file and the bad entry)."""
    path = Path(path)
    if not path.is_file():
        raise ValueError(f"calibration file not found: {path} (run the driver's ~/calibrate "
                         f'service with the robot in the calibration pose)')
    from dodo_sim.safe_yaml import read_yaml_file
    data = read_yaml_file(path, f'calibration file {path}')   # YamlInputError is a ValueError
    if not isinstance(data, dict) or data.get('format') != CALIBRATION_FORMAT:
        raise ValueError(f'calibration file {path}: expected format: {CALIBRATION_FORMAT}')
    try:
        offsets = {str(k): float(v['zero_offset_rad'])
                   for k, v in (data.get('actuators') or {}).items()}
        boom = data.get('boom') or {}
        counts = (int(boom.get('yaw_zero_counts', 0)), int(boom.get('pitch_zero_counts', 0)))
    except (TypeError, KeyError, ValueError) as exc:
        raise ValueError(f'calibration file {path}: bad entry ({exc!r}); expected '
                         f'actuators: {{joint: {{zero_offset_rad: x}}}}, boom: '
                         f'{{yaw_zero_counts: n, pitch_zero_counts: n}}') from exc
    if not all(math.isfinite(v) for v in offsets.values()):
        raise ValueError(f'calibration file {path}: non-finite zero offset')
    return Calibration(offsets, counts)


def save_calibration(path: str | os.PathLike, calibration: Calibration,
                     pose: Mapping[str, float] | None = None, can_ids: Mapping[str, int] = None
                     ) -> None:
    """Write a calibration file atomically (a crash never leaves a half-written file)."""
    path = Path(path)
    can_ids = can_ids or {}
    data = {
        'format': CALIBRATION_FORMAT,
        'written': datetime.datetime.now(datetime.timezone.utc).isoformat(timespec='seconds'),
        'pose': {k: float(v) for k, v in (pose or {}).items()},
        'actuators': {joint: dict({'zero_offset_rad': float(offset)},
                                  **({'can_id': int(can_ids[joint])} if joint in can_ids else {}))
                      for joint, offset in calibration.zero_offsets.items()},
        'boom': {'yaw_zero_counts': int(calibration.boom_zero_counts[0]),
                 'pitch_zero_counts': int(calibration.boom_zero_counts[1])},
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    from dodo_sim.safe_files import write_atomic
    write_atomic(path, '# dodo_sim hardware calibration, written by the driver (~/calibrate)\n'
                 + yaml.safe_dump(data, sort_keys=False))
