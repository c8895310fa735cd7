# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
Touchdown posture quantities as functions of the angle of attack α.

The controller builds the table once (spread over its first ticks, one grid point per tick) from
the knee branch of the measured posture, and reads the touchdown impact map and the CoG-minus-base
height from it at every apex and touchdown.
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

from .flight import foot_target
from .stance import support_projection


class PostureTable(NamedTuple):
    """Flight postures on a grid of α: impact maps of the CoG velocity and CoG heights."""

    alphas: np.ndarray      # the grid points that have a posture, rad
    impacts: np.ndarray     # (n, 2, 2) CoG velocity maps of a touchdown (N_s, resting joints)
    offsets: np.ndarray     # CoG height minus base height, m

    def impact_matrix(self, alpha: float) -> np.ndarray:
        """Return the 2x2 CoG velocity impact map at ``alpha``, interpolated."""
        out = np.empty((2, 2))
        for i in range(2):
            for j in range(2):
                out[i, j] = np.interp(alpha, self.alphas, self.impacts[:, i, j])
        return out

    def posture_offset(self, alpha: float) -> float:
        """Return the CoG-minus-base height at ``alpha``, interpolated, m."""
        return float(np.interp(alpha, self.alphas, self.offsets))


def posture_table_steps(dyn, q, max_angle: float, rest_length: float, ground_guess: float):
    """
    IK of the flight posture on a grid of α (knee branch of the measured q).

    The impact map of the CoG velocity (2x2, from N_s with resting joints) and the
    CoG-minus-base height. A step generator: yields before each grid point, returns the
    :class:`PostureTable`.
    """
    alphas = np.linspace(-max_angle, max_angle, 21)
    impacts = np.full((alphas.size, 2, 2), np.nan)
    offsets = np.full(alphas.size, np.nan)
    middle = alphas.size // 2
    for order in (range(middle, alphas.size), range(middle, -1, -1)):
        guess = dyn.table_q(q, ground_guess + rest_length)
        for i in order:
            yield
            try:
                joints = dyn.posture_for_foot(foot_target(alphas[i], rest_length), guess)
            except ValueError:
                continue
            guess = np.array([guess[0], guess[1], joints[0], joints[1]])
            terms = dyn.terms(guess, np.zeros(4))
            impacts[i] = dyn.impact_map(terms, support_projection(terms).N_s)
            offsets[i] = dyn.posture_offset(terms)
    ok = np.isfinite(offsets)
    if not ok.any():
        raise ValueError('no flight posture reaches the SLIP touchdown point: check '
                         'leg_rest_length_m against the URDF leg lengths')
    return PostureTable(alphas[ok], impacts[ok], offsets[ok])
