# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""What the emulated-rig tests check the same way on MIT actuators and ODrive axes."""
from __future__ import annotations

import numpy as np


def assert_steady_apexes(run, apex_height: float) -> None:
    """
    Check the flight apexes of a hopper rollout: 8 or more, steady within 2 % after the second.

    An apex is where the vertical speed turns from + to - in flight, after the first touchdown;
    their mean after the second must be within 2 cm of ``apex_height``.
    """
    vz = run.v[:, 1]
    touched = np.cumsum(run.in_contact) > 0
    idx = np.flatnonzero((vz[:-1] > 0) & (vz[1:] <= 0) & ~run.in_contact[1:] & touched[1:]) + 1
    apex = run.q[idx, 1]
    assert len(apex) >= 8, apex
    late = apex[2:]
    assert (late.max() - late.min()) / late.mean() < 0.02, apex
    assert abs(late.mean() - apex_height) < 0.02, apex
