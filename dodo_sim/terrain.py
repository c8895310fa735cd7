# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""Compatibility import path: terrains live in :mod:`dodo_sim.physics.terrain`."""
from .physics.terrain import (TERRAIN_KINDS, FlatTerrain, SinusoidTerrain, SlopeTerrain,
                              StepsTerrain, make_terrain)

__all__ = ['TERRAIN_KINDS', 'FlatTerrain', 'SlopeTerrain', 'StepsTerrain', 'SinusoidTerrain',
           'make_terrain']
