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


#: what fails a build of the simulator or the controller: exception type -> reason
BUILD_FAILURES = ((ValueError, 'configuration refused'),)
#: what fails a rollout, checked in this order: exception type -> reason
RUN_FAILURES = ((SimulationDiverged, 'simulation diverged'),
                (ValueError, 'controller failed'),
                (np.linalg.LinAlgError, 'controller failed'))


@contextlib.contextmanager
def _failing_as(failures):
    """Raise ScenarioFailed('<reason>: <exception>') for the first matching entry."""
    try:
        yield
    except tuple(kind for kind, _ in failures) as exc:
        reason = next(reason for kind, reason in failures if isinstance(exc, kind))
        raise ScenarioFailed(f'{reason}: {exc}') from exc


def configuration_refused():
    """Turn a ValueError of a config or model build into ScenarioFailed."""
    return _failing_as(BUILD_FAILURES)


def run_failures():
    """Turn a diverged simulation or a failing controller into ScenarioFailed."""
    return _failing_as(RUN_FAILURES)


__all__ = ['BUILD_FAILURES', 'RUN_FAILURES', 'configuration_refused', 'run_failures']
