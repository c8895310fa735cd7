# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
The simulation_interfaces 1.6.1 values the simulator answers with (states, results, scopes).

Their one home: :mod:`dodo_sim.ros.sim_control` (the rules), :mod:`dodo_sim.ros.sim_entities`
(the entities' refusals) and :mod:`dodo_sim.ros.sim_services` (the node's answers) read them here
(docs/simulation_interfaces.md).
"""
from __future__ import annotations

#: msg/SimulationState
STATE_STOPPED, STATE_PLAYING, STATE_PAUSED, STATE_QUITTING = 0, 1, 2, 3
STATE_NAMES = {STATE_STOPPED: 'stopped', STATE_PLAYING: 'playing', STATE_PAUSED: 'paused',
               STATE_QUITTING: 'quitting'}
#: msg/Result
RESULT_FEATURE_UNSUPPORTED, RESULT_OK, RESULT_NOT_FOUND = 0, 1, 2
RESULT_INCORRECT_STATE, RESULT_OPERATION_FAILED = 3, 4
#: srv/SetSimulationState results
ALREADY_IN_TARGET_STATE, STATE_TRANSITION_ERROR, INCORRECT_TRANSITION = 101, 102, 103
#: srv/SetEntityState result
INVALID_POSE = 101
#: srv/ResetSimulation scopes
SCOPE_DEFAULT, SCOPE_TIME, SCOPE_STATE, SCOPE_SPAWNED, SCOPE_ALL = 0, 1, 2, 4, 255
SCOPE_NAMES = ((SCOPE_TIME, 'time'), (SCOPE_STATE, 'state'), (SCOPE_SPAWNED, 'spawned'))


def scope_names(scope: int) -> list:
    """Return the names of a ResetSimulation scope's parts (DEFAULT and ALL: every part)."""
    bits = SCOPE_ALL if scope in (SCOPE_DEFAULT, SCOPE_ALL) else scope
    return [name for bit, name in SCOPE_NAMES if bits & bit]


__all__ = ['STATE_STOPPED', 'STATE_PLAYING', 'STATE_PAUSED', 'STATE_QUITTING', 'STATE_NAMES',
           'RESULT_FEATURE_UNSUPPORTED', 'RESULT_OK', 'RESULT_NOT_FOUND', 'RESULT_INCORRECT_STATE',
           'RESULT_OPERATION_FAILED', 'ALREADY_IN_TARGET_STATE', 'STATE_TRANSITION_ERROR',
           'INCORRECT_TRANSITION', 'INVALID_POSE', 'SCOPE_DEFAULT', 'SCOPE_TIME', 'SCOPE_STATE',
           'SCOPE_SPAWNED', 'SCOPE_ALL', 'SCOPE_NAMES', 'scope_names']
