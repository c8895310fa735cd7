"""Terrain height fields over x: flat, slope, steps, sinusoid (the terrains of the Kneed Walker
simulator of As & Mailhot 2018).

The ground is a cylinder surface along y: height ``h(x)`` and normal ``(nx, 0, nz)`` at any x, so a
planar robot (x-z plane) and a 3-D one (a boom leg circling) see the same terrain.

Each terrain gives ``height(x)`` (m) and the unit ``normal(x)`` (world [nx, nz]). Contact uses
the first-order signed distance ``gap = (z - height(x)) * nz``, which is exact for flat ground and
slopes. Steps are height fields too: a foot that runs into a riser is pushed up, not back (no
vertical walls are modelled).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
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
    """Flat ground of ``height_m`` that rises by ``rises_m[i]`` at each ``edges_x_m[i]``."""

    edges_x_m: tuple[float, ...]
    rises_m: tuple[float, ...]
    height_m: float = 0.0

    def height(self, x: float) -> float:
        h = self.height_m
        for edge, rise in zip(self.edges_x_m, self.rises_m):
            if x >= edge:
                h += rise
        return h

    def slope(self, x: float) -> float:
        return 0.0

    def normal(self, x: float) -> tuple[float, float]:
        return (0.0, 1.0)


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
