# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
Feasible apex heights of a leg: the range an ``apex_height`` set-point must lie in.

From the SLIP apex return map of the vertical hop with the leg's touchdown impact
(``Controller.apex_height_range``; the controller checks every new ``apex_height`` against it).
"""
from __future__ import annotations

import math

import numpy as np

from .config import ControllerConfig
from .stance import support_projection
from .template import apex_return_map_single, StanceSpec

#: An apex set-point is reachable if the SLIP return map brings the apex back to within this, m.
APEX_REACH_TOLERANCE_M = 1e-3


def apex_range(dyn, cfg: ControllerConfig, rest: float, max_rest: float,
               probe: float | None = None):
    """
    Return (low, high) of the apex heights ``dyn``'s leg can hop at; with ``probe``: if inside.

    ``dyn``: the controller's model (:func:`.task_frame.load_dynamics`); ``rest`` / ``max_rest``:
    the spring's rest length and longest rest length, m.
    """
    table_q = dyn.table_q(np.array([0.0, 0.0, *dyn.crouch_joints]), rest)
    try:
        for _ in range(2):     # boom leg: the leg's plane tilts with the table's pitch
            joints = dyn.posture_for_foot(np.array([0.0, -rest]), table_q)
            table_q = dyn.table_q(np.array([0.0, 0.0, joints[0], joints[1]]), rest)
    except ValueError:
        raise ValueError(f'the leg cannot reach its rest length {rest:.3f} m below the '
                         f'SLIP point: check leg_rest_length_m against the URDF') from None
    terms = dyn.terms(table_q, np.zeros(4))
    # base height above the foot at a vertical touchdown; SLIP point above the base
    touchdown = dyn.base_height(table_q) - float(terms.foot[1])
    offset = dyn.posture_offset(terms)
    impact = dyn.impact_map(terms, support_projection(terms).N_s)

    def returns(height: float) -> bool:
        rel = height + offset                      # CoG apex above the ground
        spec = StanceSpec(stiffness=cfg.leg_stiffness, mass=dyn.mass,
                          gravity_z=float(dyn.gravity[1]), regulate=cfg.apex_regulation,
                          apex_height_rel=rel, max_rest_length=max_rest,
                          step_s=cfg.deadbeat_step_s)
        apex, _ = apex_return_map_single(0.0, rel, 0.0, rest, spec, impact_matrix=impact,
                                         precompress=cfg.impact_compensation)
        return math.isfinite(apex) and apex >= rel - APEX_REACH_TOLERANCE_M

    if probe is not None:
        return probe > touchdown and returns(probe)
    low = high = touchdown + 0.01
    if not returns(low):
        return touchdown, touchdown
    step = 0.5
    while returns(high + step) and high < 100.0:
        high += step
    for _ in range(20):                            # bisection to < 1 mm
        step *= 0.5
        if returns(high + step):
            high += step
    return touchdown, high


def check_apex_height(dyn, cfg: ControllerConfig, rest: float, max_rest: float) -> None:
    """Raise ValueError with the feasible range if ``cfg.apex_height`` is out of reach."""
    if apex_range(dyn, cfg, rest, max_rest, probe=cfg.apex_height):
        return
    low, high = apex_range(dyn, cfg, rest, max_rest)
    raise ValueError(
        f'ControllerConfig.apex_height = {cfg.apex_height!r} m is out of reach for this leg: '
        f'feasible {low:.3f} m < apex_height <= {high:.3f} m (above the base height at a '
        f'vertical touchdown with the leg at rest length {rest:.3f} m, and no higher than '
        f'the SLIP stance with spring {cfg.leg_stiffness:g} N/m and longest rest length '
        f'{max_rest:.3f} m gives back after the touchdown impact)')
