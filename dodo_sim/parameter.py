# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
Bounds and allowed values of config-dataclass fields.

Kept on the field itself (``dataclasses.field`` metadata), so that the ROS parameter descriptors
can show them (``ros2 param describe``: FloatingPointRange / IntegerRange, allowed values in
``additional_constraints``; :func:`dodo_sim.ros.params.declare_config_parameters`).

    dt: float = bounded(0.001, low=0.0)                     # > 0 is checked by validate()
    mode: str = one_of('lockstep', MODES)

The ranges describe; the config's own validation (``__post_init__``/``validate``) stays the
check, including open bounds (``> 0``) that a closed ROS range cannot express. Pure Python.
"""
from __future__ import annotations

import dataclasses
from typing import Any, Sequence

#: metadata keys
RANGE = 'range'
CHOICES = 'choices'


def bounded(default: Any, low: float | None = None, high: float | None = None):
    """
    Return a field with ``default`` whose values lie in [low, high].

    (None: unbounded that side).
    """
    return dataclasses.field(default=default, metadata={RANGE: (low, high)})


def one_of(default: str, choices: Sequence[str]):
    """Return a string field whose value is one of ``choices``."""
    choices = tuple(choices)
    if default not in choices:
        raise ValueError(f'default {default!r} is not one of {choices}')
    return dataclasses.field(default=default, metadata={CHOICES: choices})


def field_range(cls, name: str) -> tuple | None:
    """(low, high) of field ``name`` of dataclass ``cls`` (either may be None), or None."""
    return _metadata(cls, name).get(RANGE)


def field_choices(cls, name: str) -> tuple | None:
    """Allow values of field ``name`` of dataclass ``cls``, or None."""
    return _metadata(cls, name).get(CHOICES)


def _metadata(cls, name: str):
    for f in dataclasses.fields(cls):
        if f.name == name:
            return f.metadata
    raise KeyError(f'{cls.__name__} has no field {name!r}')


__all__ = ['bounded', 'one_of', 'field_range', 'field_choices']
