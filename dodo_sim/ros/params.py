# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
Parameters: params-file loading and ROS parameters declared from the frozen config dataclasses.

Every parameter is defined once, as a field of a frozen dataclass (``SimConfig``,
``ControllerConfig``, and the node-adapter configs in :mod:`dodo_sim.ros.graph`) whose docstring
``Attributes:`` section documents it with units. A node declares exactly those fields as ROS
parameters (:func:`declare_config_parameters`); a params file only overrides them.

Params-file layout (the standard ``ros2 launch`` / ``--params-file`` format)::

    /**:                      # shared by every node
      ros__parameters:
        use_sim_time: true
    simulator:
      ros__parameters:
        integrator: timestepping
    controller:
      ros__parameters:
        apex_height: 1.1

:func:`load_params_file` merges ``/**`` and a node's own section (the node section wins), like
rcl does; :func:`check_params_file` names unknown sections/keys before any process starts.

This module imports no rclpy at module level (only :func:`declare_config_parameters` uses it).
"""
from __future__ import annotations

import dataclasses
import math
import os
from pathlib import Path
import re
from typing import Any, Iterable, Mapping

from dodo_sim.parameter import config_defaults, parameter_kind
from dodo_sim.safe_yaml import read_yaml_file, YamlInputError

#: Parameters every rclpy node has (not part of any config dataclass).
BUILTIN_PARAMETERS = frozenset({'use_sim_time', 'start_type_description_service'})

#: Section names that apply to every node.
WILDCARD_SECTIONS = ('/**', '**')


class ParamsFileError(ValueError):
    """The params file cannot be used; the message names the file and the bad entry."""


# -- params files -----------------------------------------------------------------------------

def read_params_file(path: str | os.PathLike) -> dict[str, dict[str, Any]]:
    """Return ``{section: ros__parameters}`` of a params file (sections as written)."""
    path = Path(path)
    if not path.is_file():
        raise ParamsFileError(f'params file not found: {path}')
    try:
        data = read_yaml_file(path, f'params file {path}')
    except YamlInputError as exc:    # invalid YAML, an alias bomb, a key given twice
        raise ParamsFileError(str(exc)) from None
    except OSError as exc:
        raise ParamsFileError(f'params file {path}: cannot read it '
                              f'({exc.strerror or exc})') from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ParamsFileError(f'params file {path}: top level must be a mapping of node names')
    sections = {}
    for section, body in data.items():
        if not isinstance(body, dict) or set(body) != {'ros__parameters'}:
            raise ParamsFileError(
                f"params file {path}: section '{section}' must contain exactly 'ros__parameters:'")
        params = body['ros__parameters'] or {}
        if not isinstance(params, dict):
            raise ParamsFileError(
                f"params file {path}: '{section}.ros__parameters' must be a mapping")
        sections[str(section)] = params
    return sections


def _section_node_name(section: str) -> str:
    return section.lstrip('/')


def node_parameters(path: str | os.PathLike, node_name: str) -> dict[str, Any]:
    """Parameters the node ``node_name`` gets from the file: ``/**`` merged with its section."""
    sections = read_params_file(path)
    merged: dict[str, Any] = {}
    for section in WILDCARD_SECTIONS:
        merged.update(sections.get(section, {}))
    for section, params in sections.items():
        if section not in WILDCARD_SECTIONS and _section_node_name(section) == node_name:
            merged.update(params)
    return merged


def check_params_file(path: str | os.PathLike,
                      known: Mapping[str, Iterable[str]]) -> None:
    """
    Raise :class:`ParamsFileError` naming unknown sections or parameters.

    ``known`` maps node name -> its parameter names (builtins like ``use_sim_time`` are always
    allowed). Shared keys (``/**``) must be known to at least one node.
    """
    sections = read_params_file(path)
    known = {name: set(keys) | BUILTIN_PARAMETERS for name, keys in known.items()}
    everything = set().union(*known.values()) if known else set(BUILTIN_PARAMETERS)
    for section, params in sections.items():
        if section in WILDCARD_SECTIONS:
            allowed = everything
        else:
            node = _section_node_name(section)
            if node not in known:
                raise ParamsFileError(f"params file {path}: unknown node section '{section}'; "
                                      f'known: {sorted(known)} and /**')
            allowed = known[node]
        unknown = sorted(set(params) - allowed)
        if unknown:
            raise ParamsFileError(f'params file {path}: unknown parameter(s) {unknown} in '
                                  f"section '{section}'")


# -- config dataclasses <-> parameter values --------------------------------------------------

def field_docs(cls) -> dict[str, str]:
    """
    Field name -> its description, parsed from the class docstring.

    Understands ``name: text`` entries (``Attributes:`` style), ``a / b: text`` (shared text) and
    several entries on one line (``kp: 1/s.   ki: 1/s^2.``); indented lines continue an entry.
    """
    fields = {f.name for f in dataclasses.fields(cls)}
    names_re = r'(\w+(?:\s*/\s*\w+)*):\s'
    docs: dict[str, str] = {}
    current: list[str] = []
    current_indent = 0
    for line in (cls.__doc__ or '').splitlines():
        stripped = line.strip()
        indent = len(line) - len(line.lstrip())
        if not stripped:
            current = []
            continue
        matches = [m for m in re.finditer(names_re, stripped)
                   if all(n.strip() in fields for n in m.group(1).split('/'))
                   and (m.start() == 0 or stripped[m.start() - 1] == ' ')]
        if not matches or matches[0].start() != 0:
            if current and indent > current_indent:
                for name in current:
                    docs[name] = (docs[name] + ' ' + stripped).strip()
            else:
                current = []
            continue
        current_indent = indent
        for k, m in enumerate(matches):
            end = matches[k + 1].start() if k + 1 < len(matches) else len(stripped)
            text = stripped[m.end():end].strip()
            current = [n.strip() for n in m.group(1).split('/')]
            for name in current:
                docs[name] = text
    return docs


def coerce_value(cls, name: str, value: Any, default: Any = None) -> Any:
    """
    Convert a ROS/YAML parameter value to the type of ``cls.name``'s default.

    Integers are accepted for floats (``dt: 1``); an empty/unset value is an empty tuple for
    array fields. Raises ValueError naming ``cls.name`` otherwise.
    """
    if default is None:
        default = config_defaults(cls)[name]
    kind = parameter_kind(default)

    def bad():
        return ValueError(f'{cls.__name__}.{name}: expected {kind.replace("_", " ")}, '
                          f'got {value!r}')

    if kind == 'bool':
        if isinstance(value, bool):
            return value
        raise bad()
    if kind == 'int':
        if isinstance(value, int) and not isinstance(value, bool):
            return value
        if isinstance(value, float) and value.is_integer():
            return int(value)
        raise bad()
    if kind == 'float':
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return float(value)
        if isinstance(value, str) and value.strip().lower() in ('nan', '.nan'):
            return math.nan
        raise bad()
    if kind == 'str':
        if isinstance(value, str):
            return value
        raise bad()
    # arrays
    if value is None:
        return ()
    if isinstance(value, (str, bytes)) or not isinstance(value, Iterable):
        raise bad()
    items = list(value)
    element = {'bool_array': 'bool', 'int_array': 'int', 'float_array': 'float',
               'str_array': 'str'}[kind]
    sample = {'bool': False, 'int': 0, 'float': 0.0, 'str': ''}[element]
    try:
        return tuple(coerce_value(cls, name, x, sample) for x in items)
    except ValueError:
        raise bad() from None


def config_from_parameters(cls, values: Mapping[str, Any]):
    """Build ``cls`` from parameter values (coerced; unknown keys raise ValueError naming them)."""
    defaults = config_defaults(cls)
    unknown = sorted(set(values) - set(defaults))
    if unknown:
        raise ValueError(f'unknown {cls.__name__} parameter(s) {unknown}')
    kwargs = {k: coerce_value(cls, k, v, defaults[k]) for k, v in values.items()}
    if hasattr(cls, 'from_dict'):
        return cls.from_dict(kwargs)
    return cls(**kwargs)


def config_from_file(cls, path: str | os.PathLike, node_name: str):
    """
    ``cls`` built from the fields of ``cls`` that node ``node_name`` gets from a params file.

    E.g. ``config_from_file(ControllerConfig, 'config/hop.yaml', 'controller')`` gives the
    controller configuration the controller node runs with (other keys are ignored here).
    """
    fields = set(config_defaults(cls))
    values = {k: v for k, v in node_parameters(path, node_name).items() if k in fields}
    return config_from_parameters(cls, values)


def config_to_parameters(config) -> dict[str, Any]:
    """Field name -> plain value (tuples as lists) of a config instance."""
    return {f.name: (list(v) if isinstance(v, tuple) else v)
            for f in dataclasses.fields(config)
            for v in (getattr(config, f.name),)}


# -- ROS side (rclpy imported lazily) ---------------------------------------------------------

#: the widest range a double parameter can state (ROS ranges are closed and finite)
_DOUBLE_MAX = 1.7976931348623157e308
_INT64 = (-2 ** 63, 2 ** 63 - 1)


def _constrain(descriptor, field: dataclasses.Field, default: Any) -> None:
    """
    Put a field's bounds and allowed values into its parameter descriptor.

    The bounds go in as FloatingPointRange / IntegerRange (scalar fields), the allowed values as
    ``additional_constraints``; the descriptor is the field's ROS parameter descriptor
    (:mod:`dodo_sim.parameter`).
    """
    from dodo_sim.parameter import ALLOW_NAN, CHOICES, describe_range, FINITE, RANGE, UNIT
    from rcl_interfaces.msg import FloatingPointRange, IntegerRange
    bounds = field.metadata.get(RANGE)
    if bounds == (None, None) or field.metadata.get(ALLOW_NAN) or \
            not field.metadata.get(FINITE, True):
        # no ROS range: an unbounded one says nothing, and rclpy's range check refuses NaN
        # (a field's "unset" value) and inf ("never"); the core's validation checks the field
        bounds = None
    kind = parameter_kind(default)
    if bounds is not None and kind == 'float':
        low, high = bounds
        descriptor.floating_point_range = [FloatingPointRange(
            from_value=-_DOUBLE_MAX if low is None else float(low),
            to_value=_DOUBLE_MAX if high is None else float(high), step=0.0)]
    elif bounds is not None and kind == 'int':
        low, high = bounds
        descriptor.integer_range = [IntegerRange(
            from_value=_INT64[0] if low is None else int(low),
            to_value=_INT64[1] if high is None else int(high), step=0)]
    choices = field.metadata.get(CHOICES)
    if choices:
        descriptor.additional_constraints = 'one of: ' + ', '.join(choices)
    elif field.metadata.get(RANGE) is not None:
        # the exact rule (open bounds, NaN, element-wise for lists) and the unit, which the
        # closed ROS ranges cannot say
        unit = field.metadata.get(UNIT, '')
        descriptor.additional_constraints = (
            ('each ' if kind not in ('float', 'int') else '') + describe_range(field.metadata)
            + (f' {unit}' if unit and unit != '-' else '')
            + (' or NaN' if field.metadata.get(ALLOW_NAN) else ''))


def declare_config_parameters(node, cls, read_only: Iterable[str] = (),
                              reasons: Mapping[str, str] | None = None,
                              defaults: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """
    Declare every field of ``cls`` as a ROS parameter of ``node``; return their values.

    ``defaults`` (field -> value) replaces the class defaults as the parameters' defaults (a
    params file or ``--ros-args -p`` still override them).

    The descriptor carries the field's docstring (with units), its range and allowed values
    (field metadata, :mod:`dodo_sim.parameter`) and, for a ``read_only`` field with an entry in
    ``reasons``, why it cannot change while running. Parameters are dynamically typed
    so that ``dt: 1`` in YAML works; :func:`coerce_value` checks the type instead. A field the
    node declared already (a name shared by two config classes of one node, e.g. the walker's
    ``pitch_joint`` in its controller and fall-criteria configs) is one parameter: its value is
    reused.
    """
    from rcl_interfaces.msg import ParameterDescriptor
    docs = field_docs(cls)
    descriptor_for = {f.name: f for f in dataclasses.fields(cls)}
    read_only = set(read_only)
    values = {}
    for name, default in config_defaults(cls).items():
        default = (defaults or {}).get(name, default)
        if node.has_parameter(name):
            values[name] = node.get_parameter(name).value
            continue
        description = docs.get(name, '')
        if name in read_only and reasons and name in reasons:
            description += f' Read-only while running: {reasons[name]}.'
        descriptor = ParameterDescriptor(description=description, dynamic_typing=True,
                                         read_only=name in read_only)
        _constrain(descriptor, descriptor_for[name], default)
        param = node.declare_parameter(
            name, list(default) if isinstance(default, tuple) else default, descriptor)
        values[name] = param.value
    return values


__all__ = ['ParamsFileError', 'read_params_file', 'node_parameters', 'check_params_file',
           'field_docs', 'coerce_value',
           'config_from_parameters', 'config_to_parameters', 'config_from_file',
           'declare_config_parameters', 'BUILTIN_PARAMETERS']
