# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""Compatibility import path: terrains live in :mod:`dodo_sim.physics.terrain`."""
from .physics.terrain import (FlatTerrain, make_terrain, SinusoidTerrain, SlopeTerrain,
                              StepsTerrain, TERRAIN_KINDS)

__all__ = ['TERRAIN_KINDS', 'FlatTerrain', 'SlopeTerrain', 'StepsTerrain', 'SinusoidTerrain',
           'make_terrain']
