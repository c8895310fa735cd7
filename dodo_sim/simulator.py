# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""Public simulator API (kept stable): re-exports :mod:`dodo_sim.physics.simulator`."""
from .physics.robot import ModelError
from .physics.simulator import INTEGRATORS, MODES, SimConfig, SimulationDiverged, Simulator, State

__all__ = ['Simulator', 'SimConfig', 'State', 'SimulationDiverged', 'ModelError', 'INTEGRATORS',
           'MODES']
