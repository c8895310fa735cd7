# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
Terrain height fields over x: flat, slope, steps, sinusoid.

These are the terrains of the Kneed Walker simulator of As & Mailhot 2018.

The ground is a cylinder surface along y: height ``h(x)`` and normal ``(nx, 0, nz)`` at any x, so a
planar robot (x-z plane) and a 3-D one (a boom leg circling) see the same terrain.

Each terrain gives ``height(x)`` (m) and the unit ``normal(x)`` (world [nx, nz]). Contact on the
smooth terrains uses the first-order signed distance ``gap = (z - height(x)) * nz``, which is
exact for flat ground and slopes. Steps are not a height field for contact: their profile is
horizontal treads joined by vertical risers, and ``StepsTerrain.signed_distance(x, z)`` gives the
exact signed distance to it with the normal of the nearest feature (a tread, a riser face, or a
corner), so a foot that runs into a riser is stopped by a vertical wall (docs/physics.md).
"""
from __future__ import annotations

import bisect
from dataclasses import dataclass, field
import math
from typing import Sequence


@dataclass(frozen=True)
class FlatTerrain:
    height_m: float = 0.0

    def height(self, x: float) -> float:
        return self.height_m

    def slope(self, x: float) -> float:
        """dh/dx."""
        return 0.0

    def normal(self, x: float) -> tuple[float, float]:
        return (0.0, 1.0)


@dataclass(frozen=True)
class SlopeTerrain:
    """Plane through (0, height_m) rising with x at ``angle_rad`` (negative: falling)."""

    angle_rad: float
    height_m: float = 0.0

    def height(self, x: float) -> float:
        return self.height_m + math.tan(self.angle_rad) * x

    def slope(self, x: float) -> float:
        return math.tan(self.angle_rad)

    def normal(self, x: float) -> tuple[float, float]:
        return (-math.sin(self.angle_rad), math.cos(self.angle_rad))


@dataclass(frozen=True)
class StepsTerrain:
    """
    Flat ground of ``height_m`` that rises by ``rises_m[i]`` at each ``edges_x_m[i]`` (increasing).

    Profile: tread i at height ``H_i = height_m + sum(rises_m[:i])`` over ``[edges_x_m[i-1],
    edges_x_m[i]]`` (unbounded at both ends), riser i the vertical segment ``x = edges_x_m[i]``
    between ``H_i`` and ``H_(i+1)``; the solid is everything under it. ``height(x)`` is the tread
    height with the upper value at an edge itself; contact uses :meth:`signed_distance`.
    """

    edges_x_m: tuple[float, ...]
    rises_m: tuple[float, ...]
    height_m: float = 0.0
    # tread heights H_0 .. H_n (derived)
    treads_m: tuple[float, ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self):
        heights = [self.height_m]
        for rise in self.rises_m:
            heights.append(heights[-1] + rise)
        object.__setattr__(self, 'treads_m', tuple(heights))

    def height(self, x: float) -> float:
        h = self.height_m
        for edge, rise in zip(self.edges_x_m, self.rises_m):
            if x >= edge:
                h += rise
        return h

    def slope(self, x: float) -> float:
        return 0.0

    def normal(self, x: float) -> tuple[float, float]:
        """
        Return the normal of the tread under x.

        It is the height field's normal; contact uses signed_distance.
        """
        return (0.0, 1.0)

    def signed_distance(self, x: float, z: float) -> tuple[float, float, float]:
        """
        Signed distance to the profile and its normal, (d, n_x, n_z).

        d is taken for the point (x, z), in m (> 0 above the profile, < 0 in the solid); the normal
        is the unit normal of its nearest feature, the gradient of d: (0, 1) over a tread,
        (-1, 0) / (+1, 0) at the face of a riser going up / down in +x, and at a corner, when the
        nearest point Q is the corner itself, the direction from Q to the point (outside) or from
        the point to Q (inside), which turns continuously from the tread's normal to the riser's
        around a convex corner. Ties go to treads (the tread under x first): a point on the
        bisector of a concave corner, or exactly at a corner, is on a tread.

        Exact: features are visited outwards from the tread under x while their horizontal
        distance alone is below the best distance found.
        """
        d, nx, nz, _ = self._nearest(x, z)
        return d, nx, nz

    def normal_curvature(self, x: float, z: float) -> float:
        """
        1 / |P - Q| (1/m) when the nearest point Q of (x, z) is a corner, else 0.

        It is the rate at which the normal turns per metre of motion across it, so the gap's second
        derivative along a velocity v (x-z components) is n . a + curvature * |v - (n . v) n|^2.
        """
        d = self._nearest(x, z)[3]
        return 1.0 / d if d > 0.0 else 0.0

    def _nearest(self, x: float, z: float):
        """(signed distance, n_x, n_z, |P - Q| if Q is a corner else 0)."""
        edges, heights = self.edges_x_m, self.treads_m
        n = len(edges)
        i = bisect.bisect_right(edges, x)           # tread under x (upper one at an edge)
        best = abs(z - heights[i])
        qx, qz, face = x, heights[i], (0.0, 1.0)
        j = i                                        # riser j and tread j + 1, to the right
        while j < n and edges[j] - x < best:
            d, px, pz, f = self._tread(j + 1, x, z)
            if d < best:
                best, qx, qz, face = d, px, pz, f
            d, px, pz, f = self._riser(j, x, z)
            if d < best:
                best, qx, qz, face = d, px, pz, f
            j += 1
        j = i - 1                                    # riser j and tread j, to the left
        while j >= 0 and x - edges[j] < best:
            d, px, pz, f = self._tread(j, x, z)
            if d < best:
                best, qx, qz, face = d, px, pz, f
            d, px, pz, f = self._riser(j, x, z)
            if d < best:
                best, qx, qz, face = d, px, pz, f
            j -= 1
        inside = z < heights[i] and best > 0.0
        corner = 0.0
        if face is None and best == 0.0:             # exactly at a corner: on its tread
            face = (0.0, 1.0)
        elif face is None:                           # the corner is nearest: along P - Q
            corner = best
            nx, nz = (x - qx) / best, (z - qz) / best
            if inside:
                nx, nz = -nx, -nz
            face = (nx, nz)
        return (-best if inside else best), face[0], face[1], corner

    def _tread(self, k: int, x: float, z: float):
        """(distance, Q, face normal or None at an end) of tread k."""
        edges = self.edges_x_m
        lo = edges[k - 1] if k > 0 else -math.inf
        hi = edges[k] if k < len(edges) else math.inf
        h = self.treads_m[k]
        if lo < x < hi:
            return abs(z - h), x, h, (0.0, 1.0)
        qx = lo if x <= lo else hi
        return math.hypot(x - qx, z - h), qx, h, None

    def _riser(self, k: int, x: float, z: float):
        """(distance, Q, face normal or None at an end) of riser k (inf if it has no height)."""
        below, above = self.treads_m[k], self.treads_m[k + 1]
        if below == above:
            return math.inf, 0.0, 0.0, None
        lo, hi = min(below, above), max(below, above)
        e = self.edges_x_m[k]
        if lo < z < hi:
            return abs(x - e), e, z, ((-1.0 if above > below else 1.0), 0.0)
        qz = lo if z <= lo else hi
        return math.hypot(x - e, z - qz), e, qz, None


@dataclass(frozen=True)
class SinusoidTerrain:
    """h(x) = height_m + amplitude_m * sin(2 pi x / wavelength_m)."""

    amplitude_m: float
    wavelength_m: float
    height_m: float = 0.0

    def height(self, x: float) -> float:
        return self.height_m + self.amplitude_m * math.sin(2.0 * math.pi * x / self.wavelength_m)

    def slope(self, x: float) -> float:
        k = 2.0 * math.pi / self.wavelength_m
        return self.amplitude_m * k * math.cos(k * x)

    def normal(self, x: float) -> tuple[float, float]:
        s = self.slope(x)
        norm = math.sqrt(1.0 + s * s)
        return (-s / norm, 1.0 / norm)


TERRAIN_KINDS = ('flat', 'slope', 'steps', 'sinusoid')


def make_terrain(kind: str, *, height_m: float = 0.0, slope_deg: float = 0.0,
                 step_edges_x_m: Sequence[float] = (), step_rises_m: Sequence[float] = (),
                 sine_amplitude_m: float = 0.0, sine_wavelength_m: float = 1.0):
    """Build a terrain from config values; raises ValueError naming the bad value."""
    if kind == 'flat':
        return FlatTerrain(height_m)
    if kind == 'slope':
        if not -60.0 < slope_deg < 60.0:
            raise ValueError(f'slope_deg must be within (-60, 60) degrees, got {slope_deg}')
        return SlopeTerrain(math.radians(slope_deg), height_m)
    if kind == 'steps':
        if len(step_edges_x_m) != len(step_rises_m):
            raise ValueError(f'step_edges_x_m ({len(step_edges_x_m)} values) and step_rises_m '
                             f'({len(step_rises_m)} values) must have the same length')
        if list(step_edges_x_m) != sorted(step_edges_x_m):
            raise ValueError(f'step_edges_x_m must be increasing, got {list(step_edges_x_m)}')
        return StepsTerrain(tuple(float(e) for e in step_edges_x_m),
                            tuple(float(r) for r in step_rises_m), height_m)
    if kind == 'sinusoid':
        if not sine_wavelength_m > 0.0:
            raise ValueError(f'sine_wavelength_m must be positive, got {sine_wavelength_m}')
        return SinusoidTerrain(sine_amplitude_m, sine_wavelength_m, height_m)
    raise ValueError(f'unknown terrain {kind!r}; choose one of {TERRAIN_KINDS}')
