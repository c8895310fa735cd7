# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
Node parameters in a bag: /parameter_events as records, each node's start configuration (no rclpy).

It also builds the ParameterValue messages the offline bag writer stores
(:func:`parameter_value_msg`).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from dodo_sim.ros import contract
from dodo_sim.tools.bag import TopicData
from dodo_sim.tools.bag_arrays import stamp_ns
import numpy as np

#: rcl_interfaces/msg/ParameterType -> the ParameterValue field holding the value
_PARAMETER_FIELDS = {1: 'bool_value', 2: 'integer_value', 3: 'double_value', 4: 'string_value',
                     5: 'byte_array_value', 6: 'bool_array_value', 7: 'integer_array_value',
                     8: 'double_array_value', 9: 'string_array_value'}


def parameter_value(value) -> Any:
    """
    rcl_interfaces/msg/ParameterValue (rosbags or rclpy object) -> Python value.

    Arrays become tuples; PARAMETER_NOT_SET becomes None.
    """
    field_name = _PARAMETER_FIELDS.get(int(value.type))
    if field_name is None:
        return None
    raw = getattr(value, field_name)
    if int(value.type) >= 5:
        return tuple(x.item() if hasattr(x, 'item') else x for x in raw)
    if int(value.type) == 1:
        return bool(raw)
    if int(value.type) == 2:
        return int(raw)
    if int(value.type) == 3:
        return float(raw)
    return str(raw)


def _parameter_type(value: Any) -> int:
    if isinstance(value, bool):
        return 1
    if isinstance(value, (int, np.integer)):
        return 2
    if isinstance(value, (float, np.floating)):
        return 3
    if isinstance(value, str):
        return 4
    if isinstance(value, (tuple, list, np.ndarray)):
        items = list(value)
        if items and all(isinstance(x, bool) for x in items):
            return 6
        if items and all(isinstance(x, (int, np.integer)) and not isinstance(x, bool)
                         for x in items):
            return 7
        if items and all(isinstance(x, str) for x in items):
            return 9
        return 8
    raise TypeError(f'no ROS parameter type for {value!r}')


def parameter_value_msg(cls, value: Any):
    """
    Build a ParameterValue of message class ``cls`` holding ``value``.

    Return a ParameterValue of message class ``cls`` (rosbags type or rclpy class) holding
    ``value``.
    """
    kind = _parameter_type(value)
    fields = {'type': kind}
    if kind == 1:
        fields['bool_value'] = bool(value)
    elif kind == 2:
        fields['integer_value'] = int(value)
    elif kind == 3:
        fields['double_value'] = float(value)
    elif kind == 4:
        fields['string_value'] = value
    elif kind == 6:
        fields['bool_array_value'] = np.asarray(value, dtype=bool)
    elif kind == 7:
        fields['integer_array_value'] = np.asarray(value, dtype=np.int64)
    elif kind == 8:
        fields['double_array_value'] = np.asarray(value, dtype=float)
    else:
        fields['string_array_value'] = list(value)
    if hasattr(cls, '__dataclass_fields__'):          # rosbags: every field is required
        defaults = {'type': 0, 'bool_value': False, 'integer_value': 0, 'double_value': 0.0,
                    'string_value': '', 'byte_array_value': np.zeros(0, dtype=np.uint8),
                    'bool_array_value': np.zeros(0, dtype=bool),
                    'integer_array_value': np.zeros(0, dtype=np.int64),
                    'double_array_value': np.zeros(0), 'string_array_value': []}
        return cls(**{**defaults, **fields})
    for name in ('bool_array_value', 'integer_array_value', 'double_array_value'):
        if name in fields:
            fields[name] = fields[name].tolist()
    return cls(**fields)


@dataclass(frozen=True)
class ParameterRecord:
    """
    Parameters of one node in one /parameter_events message.

    ``kind``: 'declared' (``new_parameters``: the node's declaration event, or the recorder's
    snapshot of a node's parameters, see docs/bags.md), 'changed' or 'deleted'.
    """

    log_time_ns: int
    stamp_ns: int
    node: str
    kind: str
    values: dict


def parameter_records(data: TopicData) -> list[ParameterRecord]:
    """Every /parameter_events message as up to three records (declared, changed, deleted)."""
    out = []
    for log_ns, msg in zip(data.log_time_ns, data.messages):
        for kind, params in (('declared', msg.new_parameters), ('changed', msg.changed_parameters),
                             ('deleted', msg.deleted_parameters)):
            if len(params):
                out.append(ParameterRecord(
                    int(log_ns), stamp_ns(msg.stamp), msg.node, kind,
                    {p.name: parameter_value(p.value) for p in params}))
    return out


def node_fqn(node: str) -> str:
    """Return the fully qualified node name (``controller`` -> ``/controller``)."""
    return node if node.startswith('/') else '/' + node


@dataclass
class NodeParameters:
    """
    What a bag knows about one node's parameters.

    Fields:
        node: fully qualified node name (``/controller``).
        initial: the configuration at start: for each parameter the value of its first
            declaration (the node's declaration event or the recorder's snapshot).
        changes: runtime changes after the first declaration, in bag order.
        declared_log_time_ns: bag time of the first declaration.
        changed_before_declared: names of parameters changed before any declaration was
            recorded (their start value is unknown: the snapshot was taken after the change).
    """

    node: str
    initial: dict
    changes: list
    declared_log_time_ns: int | None
    changed_before_declared: tuple


def node_parameters(bag: dict[str, TopicData], node: str) -> NodeParameters | None:
    """
    Return the recorded parameters of ``node`` (``controller`` or ``/controller``).

    None if the bag has none of them.
    """
    data = bag.get(contract.PARAMETER_EVENTS)
    if data is None or not len(data):
        return None
    fqn = node_fqn(node)
    records = [r for r in parameter_records(data) if r.node == fqn]
    if not records:
        return None
    initial: dict = {}
    changes: list = []
    first_declared = None
    early: list = []
    for record in records:
        if record.kind == 'declared':
            if first_declared is None:
                first_declared = record.log_time_ns
            for name, value in record.values.items():
                initial.setdefault(name, value)
        elif first_declared is None:
            early += list(record.values)
        else:
            changes.append(record)
    return NodeParameters(fqn, initial, changes, first_declared, tuple(early))


def recorded_nodes(bag: dict[str, TopicData]) -> list[str]:
    """Nodes whose parameters the bag holds."""
    data = bag.get(contract.PARAMETER_EVENTS)
    if data is None:
        return []
    return sorted({m.node for m in data.messages})
