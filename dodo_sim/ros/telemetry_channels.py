# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
A controller's ``telemetry`` as named float channels (``/controller/state``; no rclpy).

The ``controller`` node (:mod:`dodo_sim.ros.controller_node`, module docs: the channels) sends
them on ``/controller/state``: ``phase`` as a code, every numeric field under its own name,
2-vectors split into ``<name>_x`` / ``<name>_z``, fields the controller labels in
``telemetry_labels`` as ``<name>_<label>`` per entry or, for a text field, the index of its value
among the labels.
"""
from __future__ import annotations

from collections.abc import Mapping
import dataclasses
import enum

import numpy as np


PHASE_CODES = {'flight': 0.0, 'stance': 1.0}


def _items(telemetry) -> list:
    if dataclasses.is_dataclass(telemetry):
        return [(f.name, getattr(telemetry, f.name)) for f in dataclasses.fields(telemetry)]
    if isinstance(telemetry, Mapping):
        return list(telemetry.items())
    return [(k, v) for k, v in vars(telemetry).items() if not k.startswith('_')]


def _phase_code(value) -> float:
    text = getattr(value, 'value', value)
    if isinstance(text, (int, float)) and not isinstance(text, bool):
        return float(text)
    return PHASE_CODES.get(str(text).lower(), -1.0)


def _is_number(value) -> bool:
    return isinstance(value, (bool, int, float, np.floating, np.integer, np.bool_))


class TelemetryChannels:
    """
    Flattens ``ctrl.telemetry`` into named floats (see module docs).

    The layout is worked out once from the first snapshot and reused (a 1 kHz path). ``labels``:
    the controller's ``telemetry_labels`` (field -> labels of its entries, or None to leave the
    field out).
    """

    def __init__(self, labels: Mapping | None = None):
        self._plan = None      # [(attribute, kind, labels)] kind: phase|scalar|vec2|vector|choice
        self._labels = dict(labels or {})
        self.names: list = []

    def _make_plan(self, telemetry) -> None:
        plan, names = [], []
        for name, value in _items(telemetry):
            if name in self._labels:
                labels = self._labels[name]
                if labels is None:
                    continue
                labels = tuple(str(x) for x in labels)
                if isinstance(value, (str, enum.Enum)):
                    plan.append((name, 'choice', labels))
                    names.append(name)
                elif (isinstance(value, (tuple, list, np.ndarray)) and len(value) == len(labels)
                      and all(_is_number(x) for x in value)):
                    plan.append((name, 'vector', labels))
                    names.extend(f'{name}_{label}' for label in labels)
            elif name == 'phase':
                plan.append((name, 'phase', None))
                names.append('phase')
            elif isinstance(value, (str, enum.Enum)):
                continue
            elif _is_number(value):
                plan.append((name, 'scalar', None))
                names.append(name)
            elif (isinstance(value, (tuple, list, np.ndarray)) and len(value) == 2
                  and all(_is_number(x) for x in value)):
                plan.append((name, 'vec2', None))
                names.extend((name + '_x', name + '_z'))
        self._plan, self.names = plan, names

    def values(self, telemetry) -> list:
        if telemetry is None:
            return []
        if self._plan is None:
            self._make_plan(telemetry)
        get = (telemetry.get if isinstance(telemetry, Mapping)
               else lambda n: getattr(telemetry, n))
        out = []
        for name, kind, labels in self._plan:
            value = get(name)
            if kind == 'scalar':
                out.append(float(value))
            elif kind == 'vec2':
                out.append(float(value[0]))
                out.append(float(value[1]))
            elif kind == 'vector':
                out.extend(float(x) for x in value)
            elif kind == 'choice':
                text = str(getattr(value, 'value', value))
                out.append(float(labels.index(text)) if text in labels else -1.0)
            else:
                out.append(_phase_code(value))
        return out


def telemetry_channels(telemetry, labels: Mapping | None = None) -> list:
    """``[(name, value)]`` of the numeric content of ``ctrl.telemetry`` (see module docs)."""
    channels = TelemetryChannels(labels)
    values = channels.values(telemetry)
    return list(zip(channels.names, values))
