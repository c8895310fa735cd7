# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
What makes a scenario run unusable, raised as ``ScenarioFailed`` with its reason.

Shared by every robot's scenario module, whatever its controller: a config or model the cores
refuse, a simulation that diverges, a controller that raises.
"""
from __future__ import annotations

import contextlib

from dodo_control.scenarios import ScenarioFailed
from dodo_sim.simulator import SimulationDiverged
import numpy as np


@contextlib.contextmanager
def configuration_refused():
    """Turn a ValueError of a config or model build into ScenarioFailed."""
    try:
        yield
    except ValueError as exc:
        raise ScenarioFailed(f'configuration refused: {exc}') from exc


@contextlib.contextmanager
def run_failures():
    """Turn a diverged simulation or a failing controller into ScenarioFailed."""
    try:
        yield
    except SimulationDiverged as exc:
        raise ScenarioFailed(f'simulation diverged: {exc}') from exc
    except (ValueError, np.linalg.LinAlgError) as exc:
        raise ScenarioFailed(f'controller failed: {exc}') from exc


__all__ = ['configuration_refused', 'run_failures']
