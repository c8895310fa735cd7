# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""Compatibility import path: the integrator lives in :mod:`dodo_sim.physics.event`."""
from .physics.event import EventDrivenIntegrator, EventParams, FREE, impact_map, SLIP, STICK

__all__ = ['EventDrivenIntegrator', 'EventParams', 'impact_map', 'FREE', 'STICK', 'SLIP']
