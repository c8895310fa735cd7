# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
Unit, bounds and allowed values of config-dataclass fields: one way to define a parameter.

Kept on the field itself (``dataclasses.field`` metadata) and read by everything that needs them:
the config's validation (:func:`check_fields`, called from its ``__post_init__``/``validate``),
the ROS parameter descriptors (``ros2 param describe``: FloatingPointRange / IntegerRange, allowed
values in ``additional_constraints``; :func:`dodo_sim.ros.params.declare_config_parameters`), and
the docs::

    dt: float = bounded(0.001, low=0.0, low_open=True, unit='s')      # > 0
    friction: float = bounded(0.8, low=0.0, unit='-')                 # >= 0
    target_x: float = bounded(math.nan, unit='m', allow_nan=True)     # NaN: no target
    mode: str = one_of('lockstep', MODES)
    gains: tuple = bounded((), low=0.0, unit='N*m/rad')               # every element >= 0

A bounded number must be finite (unless ``finite=False``: e.g. ``inf`` meaning "never") and not
NaN (unless ``allow_nan``); tuple fields are checked element by element. A ROS range is closed, so
an open bound (``low_open``) shows as its closed value there and the validation rejects the bound
itself. Cross-field rules (lengths that must match, multiples) stay in the config's own
validation. Pure Python.
"""
from __future__ import annotations

import dataclasses
import math
from typing import Any, Mapping, Sequence

#: metadata keys
RANGE = 'range'
CHOICES = 'choices'
UNIT = 'unit'
OPEN = 'open'
ALLOW_NAN = 'allow_nan'
FINITE = 'finite'


def bounded(default: Any, low: float | None = None, high: float | None = None, *,
            unit: str = '', low_open: bool = False, high_open: bool = False,
            allow_nan: bool = False, finite: bool = True):
    """
    Return a field with ``default`` whose values lie within ``low``..``high``.

    None: unbounded that side; ``low_open``/``high_open``: the bound itself is excluded. ``unit``:
    the SI unit ('-' for a ratio), shown in error messages.
    """
    return dataclasses.field(default=default, metadata={
        RANGE: (low, high), UNIT: unit, OPEN: (low_open, high_open), ALLOW_NAN: allow_nan,
        FINITE: finite})


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


def field_unit(cls, name: str) -> str:
    """Return the unit of field ``name`` of dataclass ``cls`` ('' if it has none)."""
    return _metadata(cls, name).get(UNIT, '')


def describe_range(metadata) -> str:
    """Return the allowed interval of a bounded field, e.g. ``(0, 1]`` or ``>= 0``."""
    low, high = metadata[RANGE]
    low_open, high_open = metadata.get(OPEN, (False, False))
    if low is not None and high is not None:
        return f"{'(' if low_open else '['}{low:g}, {high:g}{')' if high_open else ']'}"
    if low is not None:
        return f"{'>' if low_open else '>='} {low:g}"
    if high is not None:
        return f"{'<' if high_open else '<='} {high:g}"
    return 'finite'


def _bad_number(value, metadata) -> bool:
    low, high = metadata[RANGE]
    low_open, high_open = metadata.get(OPEN, (False, False))
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return True
    if math.isnan(value):
        return not metadata.get(ALLOW_NAN, False)
    if metadata.get(FINITE, True) and not math.isfinite(value):
        return True
    if low is not None and (value < low or (low_open and value == low)):
        return True
    return high is not None and (value > high or (high_open and value == high))


def field_error(config, name: str) -> str | None:
    """
    Return why field ``name`` of dataclass instance ``config`` breaks its metadata, or None.

    The message names the class, the field, the value, the unit and the allowed range or values.
    """
    metadata = _metadata(type(config), name)
    value = getattr(config, name)
    where = f'{type(config).__name__}.{name} = {value!r}'
    choices = metadata.get(CHOICES)
    if choices is not None and value not in choices:
        return f'{where}: choose one of {choices}'
    if RANGE not in metadata:
        return None
    unit = metadata.get(UNIT, '')
    unit = f' {unit}' if unit and unit != '-' else ''
    nan = ' or NaN' if metadata.get(ALLOW_NAN) else ''
    values = value if isinstance(value, tuple) else (value,)
    if any(_bad_number(v, metadata) for v in values):
        subject = 'every value must be' if isinstance(value, tuple) else 'must be'
        finite = ' (finite)' if metadata.get(FINITE, True) and metadata[RANGE] != (None, None) \
            else ''
        return f'{where}{unit}: {subject} {describe_range(metadata)}{finite}{nan}'
    return None


def check_fields(config) -> None:
    """Raise ValueError naming the first field of ``config`` that breaks its metadata."""
    for f in dataclasses.fields(config):
        error = field_error(config, f.name)
        if error is not None:
            raise ValueError(error)


def config_from_dict(cls, values: Mapping[str, object], kind: str):
    """
    Build config dataclass ``cls`` from a parameter mapping.

    Unknown keys raise ValueError naming them, the ``kind`` of parameters (e.g. 'controller')
    and the known ones.
    """
    known = {f.name for f in dataclasses.fields(cls)}
    unknown = sorted(set(values) - known)
    if unknown:
        raise ValueError(f'unknown {kind} parameter(s) {unknown}; known: {sorted(known)}')
    return cls(**values)


def _metadata(cls, name: str):
    for f in dataclasses.fields(cls):
        if f.name == name:
            return f.metadata
    raise KeyError(f'{cls.__name__} has no field {name!r}')


def parameter_kind(default: Any) -> str:
    """
    Return the parameter kind of a field from its default value.

    TypeError for a default no ROS parameter can hold.
    """
    if isinstance(default, bool):
        return 'bool'
    if isinstance(default, int):
        return 'int'
    if isinstance(default, float):
        return 'float'
    if isinstance(default, str):
        return 'str'
    if isinstance(default, (tuple, list)):
        if default and all(isinstance(x, bool) for x in default):
            return 'bool_array'
        if default and all(isinstance(x, str) for x in default):
            return 'str_array'
        if default and all(isinstance(x, int) and not isinstance(x, bool) for x in default):
            return 'int_array'
        return 'float_array'
    raise TypeError(f'unsupported parameter default {default!r}')


def config_defaults(cls) -> dict[str, Any]:
    """Field name -> default value of a frozen config dataclass."""
    out = {}
    for f in dataclasses.fields(cls):
        if f.default is not dataclasses.MISSING:
            out[f.name] = f.default
        elif f.default_factory is not dataclasses.MISSING:  # type: ignore[misc]
            out[f.name] = f.default_factory()  # type: ignore[misc]
        else:
            raise TypeError(f'{cls.__name__}.{f.name} has no default; parameters need one')
    return out


__all__ = ['ALLOW_NAN', 'CHOICES', 'FINITE', 'RANGE', 'UNIT', 'bounded', 'one_of', 'field_range',
           'field_choices', 'field_unit', 'describe_range',
           'field_error', 'check_fields', 'config_from_dict', 'parameter_kind', 'config_defaults']
