# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
Bag helpers shared by the recorder, ``dodo replay``, ``dodo plot``, ``dodo bag`` and the tests.

(no rclpy).

Bags are rosbag2 MCAP bags written/read with ``rosbags``; what a dodo_sim bag contains is
described in ``docs/bags.md``. Reading::

    from dodo_sim.tools.bag import read_bag, joint_states, robot_info, node_parameters
    bag = read_bag('/tmp/run1')                   # dict topic -> TopicData (deserialized messages)
    robot = robot_info(bag)                       # joints, actuated joints, contact frames, URDF
    js = joint_states(bag['joint_states'], robot.joint_names)   # arrays t, q, v, effort
    node_parameters(bag, 'controller')            # start configuration + runtime changes
    message_counts('/tmp/run1')                   # {'joint_states': 3001, ...} (contract names)

Times: ``TopicData.log_time_ns`` is the bag time of each message; ``stamp`` arrays are the message
header stamps (sim time under simulation, s).  :func:`sim_time` maps bag times of headerless
messages (commands) to sim time through the recorded ``/clock``.
"""
from __future__ import annotations

from dataclasses import dataclass, field
import os
from pathlib import Path
import re
from typing import Any, Iterable, Iterator, Sequence

from dodo_sim.ros import contract
import numpy as np

#: Joint names of the hopper: the default of :class:`OfflineBagWriter` (readers take the names
#: from the bag).
HOPPER_JOINT_NAMES = ('base_x', 'base_z', 'hip', 'knee')

#: Topics recorded by default (the ROS contract, :mod:`dodo_sim.ros.contract`).
DEFAULT_TOPICS = contract.RECORDED_TOPICS

#: Message types fixed by the ROS graph contract.
CONTRACT_TYPES = {topic: contract.topic_type(topic) for topic in DEFAULT_TOPICS}


def make_typestore():
    """
    Return a fresh rosbags typestore for ROS 2 Kilted.

    (Jazzy if this rosbags has no Kilted store).
    """
    from rosbags.typesys import get_typestore, Stores
    store = getattr(Stores, 'ROS2_KILTED', None) or Stores.ROS2_JAZZY
    return get_typestore(store)


_PRIMITIVES = {'boolean': 'bool', 'octet': 'byte', 'float': 'float32', 'double': 'float64',
               'long double': 'float64'}


def _msg_field_type(idl_type: str) -> tuple[str, list[str]]:
    """Rosidl Python field type (``sequence<double, 3>``...) -> .msg type, nested type names."""
    match = re.fullmatch(r'sequence<(.+?)(?:,\s*(\d+))?>', idl_type)
    if match:
        inner, nested = _msg_field_type(match.group(1))
        return (f'{inner}[<={match.group(2)}]' if match.group(2) else f'{inner}[]'), nested
    match = re.fullmatch(r'(.+)\[(\d+)\]', idl_type)
    if match:
        inner, nested = _msg_field_type(match.group(1))
        return f'{inner}[{match.group(2)}]', nested
    if '/' in idl_type:
        return idl_type, [idl_type]
    return _PRIMITIVES.get(idl_type, idl_type), []


def _full_type_name(name: str) -> str:
    parts = name.split('/')
    return f'{parts[0]}/msg/{parts[1]}' if len(parts) == 2 else name


def register_msg_class(typestore, type_name: str, msg_class) -> None:
    """
    Describe a generated rosidl Python message class (and its nested types) in ``typestore``.

    Used for message types the rosbags store does not ship (constants are not reproduced).
    """
    import importlib

    from rosbags.typesys import get_types_from_msg

    lines, nested = [], []
    for name, idl_type in msg_class.get_fields_and_field_types().items():
        msg_type, sub = _msg_field_type(idl_type)
        lines.append(f'{msg_type} {name}')
        nested += sub
    for sub in nested:
        full = _full_type_name(sub)
        if full not in typestore.fielddefs:
            pkg, _, cls = full.split('/')
            register_msg_class(typestore, full,
                               getattr(importlib.import_module(f'{pkg}.msg'), cls))
    typestore.register(get_types_from_msg('\n'.join(lines) + '\n', type_name))


@dataclass
class TopicData:
    """All messages of one topic: bag times (ns) and deserialized messages, in bag order."""

    topic: str
    msgtype: str
    log_time_ns: np.ndarray
    messages: list = field(repr=False)

    def __len__(self) -> int:
        return len(self.messages)


#: the MCAP magic bytes, at the start of a file and after its footer (MCAP specification)
MCAP_MAGIC = b'\x89MCAP0\r\n'


def mcap_problem(path: Path) -> str | None:
    """
    Explain why an MCAP file cannot be read as a closed bag file, or None.

    Why an MCAP file cannot be read as a closed bag file (empty, not MCAP, or truncated: no footer
    and closing magic, as a killed recorder or a cut copy leaves it), or None. Only the first and
    last 8 bytes are read.
    """
    size = path.stat().st_size
    if size == 0:
        return f'{path} is empty (0 bytes)'
    with path.open('rb') as fh:
        head = fh.read(len(MCAP_MAGIC))
        if head != MCAP_MAGIC:
            return f'{path} is not an MCAP file'
        fh.seek(max(size - len(MCAP_MAGIC), 0))
        if size < 2 * len(MCAP_MAGIC) or fh.read(len(MCAP_MAGIC)) != MCAP_MAGIC:
            return (f'{path} is truncated ({size} bytes, no MCAP footer): the recording did '
                    f'not end cleanly')
    return None


def _reader(bag_dir: str | os.PathLike):
    from rosbags.highlevel import AnyReader
    path = Path(bag_dir)
    if not (path / 'metadata.yaml').is_file():
        if any(path.glob('*.mcap')):
            raise FileNotFoundError(f'{path} has no metadata.yaml: the recording did not end '
                                    f'cleanly; rebuild it with: dodo bag recover {path}')
        raise FileNotFoundError(f'{path} is not a rosbag2 bag (no metadata.yaml)')
    for mcap_file in sorted(path.glob('*.mcap')):
        # metadata.yaml alone does not make a bag whole: its counts are what was recorded,
        # not what the file still holds
        problem = mcap_problem(mcap_file)
        if problem is not None:
            hint = (f'; rebuild it with: dodo bag recover {path}'
                    if 'truncated' in problem else '')
            raise FileNotFoundError(problem + hint)
    return AnyReader([path], default_typestore=make_typestore())


def message_counts(bag_dir: str | os.PathLike) -> dict[str, int]:
    """Messages per topic, from the bag's metadata (no deserialization)."""
    with _reader(bag_dir) as reader:
        counts: dict[str, int] = {}
        keys = _topic_keys(reader)
        for conn in reader.connections:
            counts[keys[conn.topic]] = counts.get(keys[conn.topic], 0) + conn.msgcount
        return counts


def iter_messages(bag_dir: str | os.PathLike, topics: Iterable[str] | None = None
                  ) -> Iterator[tuple[str, str, int, object]]:
    """Yield ``(topic, msgtype, log_time_ns, message)`` in bag-time order."""
    with _reader(bag_dir) as reader:
        keys = _topic_keys(reader)
        for conn, timestamp, raw in reader.messages(connections=_connections(reader, topics)):
            yield keys[conn.topic], conn.msgtype, timestamp, reader.deserialize(raw, conn.msgtype)


def iter_raw_messages(bag_dir: str | os.PathLike, topics: Iterable[str] | None = None
                      ) -> Iterator[tuple[str, str, int, bytes]]:
    """Yield ``(topic, msgtype, log_time_ns, serialized CDR bytes)`` in bag-time order."""
    with _reader(bag_dir) as reader:
        keys = _topic_keys(reader)
        for conn, timestamp, raw in reader.messages(connections=_connections(reader, topics)):
            yield keys[conn.topic], conn.msgtype, timestamp, bytes(raw)


def _topic_keys(reader) -> dict[str, str]:
    """
    Record topic -> the key the readers use.

    Its contract (relative) name, the robot's namespace stripped (``/left/joint_states`` ->
    ``joint_states``; docs/ros_contract.md).
    """
    names = {c.topic for c in reader.connections}
    namespace = contract.bag_namespace(names)
    return {name: contract.relative_name(name, namespace) for name in names}


def _connections(reader, topics: Iterable[str] | None) -> list:
    """
    Return the reader's connections on ``topics``.

    (all of them for None; relative contract names or the recorded names).
    """
    if topics is None:
        return list(reader.connections)
    keys = _topic_keys(reader)
    namespace = contract.bag_namespace(keys)
    wanted = {contract.relative_name(t, namespace) for t in topics}
    return [c for c in reader.connections if keys[c.topic] in wanted]


def read_bag(bag_dir: str | os.PathLike, topics: Iterable[str] | None = None
             ) -> dict[str, TopicData]:
    """Read (all or the given) topics into :class:`TopicData`, one per topic."""
    times: dict[str, list[int]] = {}
    msgs: dict[str, list] = {}
    types: dict[str, str] = {}
    for topic, msgtype, timestamp, msg in iter_messages(bag_dir, topics):
        times.setdefault(topic, []).append(timestamp)
        msgs.setdefault(topic, []).append(msg)
        types[topic] = msgtype
    return {topic: TopicData(topic, types[topic], np.asarray(times[topic], dtype=np.int64),
                             msgs[topic]) for topic in msgs}


def stamp_seconds(stamp) -> float:
    """builtin_interfaces/Time -> s."""
    return stamp.sec + 1e-9 * stamp.nanosec


def stamp_ns(stamp) -> int:
    """builtin_interfaces/Time -> ns (exact)."""
    return int(stamp.sec) * 1_000_000_000 + int(stamp.nanosec)


@dataclass
class JointStates:
    """/joint_states as arrays, one column per joint of ``names``."""

    names: tuple             # joint names, column order
    t: np.ndarray            # header stamp, s
    stamp_ns: np.ndarray     # header stamp, ns (int64, exact)
    log_time_ns: np.ndarray
    q: np.ndarray            # (N, len(names))
    v: np.ndarray            # (N, len(names))
    effort: np.ndarray       # (N, len(names)); NaN where not published


def message_joint_names(data: TopicData) -> tuple:
    """Joint names of JointState messages in order of first appearance."""
    names: list = []
    seen: set = set()
    for msg in data.messages:
        for name in msg.name:
            if name not in seen:
                seen.add(name)
                names.append(name)
    return tuple(names)


def joint_states(data: TopicData, joint_names: Sequence[str] | None = None) -> JointStates:
    """
    Merge JointState messages by joint name.

    Merge JointState messages by joint name (messages with a subset of the joints, e.g. from
    separate drivers, update those joints); one row per message once all joints were seen.

    ``joint_names``: columns (default: every name in the messages, first appearance order;
    :func:`robot_info` gives the URDF's order).
    """
    joint_names = tuple(joint_names) if joint_names is not None else message_joint_names(data)
    n = len(joint_names)
    index = {name: i for i, name in enumerate(joint_names)}
    q, v, e = np.full(n, np.nan), np.full(n, np.nan), np.full(n, np.nan)
    rows_t, rows_ns, rows_log, rows_q, rows_v, rows_e = [], [], [], [], [], []
    for log_ns, msg in zip(data.log_time_ns, data.messages):
        for k, name in enumerate(msg.name):
            i = index.get(name)
            if i is None:
                continue
            if len(msg.position) > k:
                q[i] = msg.position[k]
            if len(msg.velocity) > k:
                v[i] = msg.velocity[k]
            if len(msg.effort) > k:
                e[i] = msg.effort[k]
        if np.all(np.isfinite(q)):
            rows_t.append(stamp_seconds(msg.header.stamp))
            rows_ns.append(stamp_ns(msg.header.stamp))
            rows_log.append(log_ns)
            rows_q.append(q.copy())
            rows_v.append(v.copy())
            rows_e.append(e.copy())

    def table(rows):
        return np.asarray(rows, dtype=float).reshape(-1, n) if rows else np.zeros((0, n))

    return JointStates(names=joint_names, t=np.asarray(rows_t, dtype=float),
                       stamp_ns=np.asarray(rows_ns, dtype=np.int64),
                       log_time_ns=np.asarray(rows_log, dtype=np.int64),
                       q=table(rows_q), v=table(rows_v), effort=table(rows_e))


@dataclass
class JointCommands:
    """Stamped commands (``/joint_commands``, sensor_msgs/JointState ``effort`` by name)."""

    names: tuple             # actuated joints, column order
    stamp_ns: np.ndarray     # stamp of the answered state, ns
    log_time_ns: np.ndarray
    effort: np.ndarray       # (N, len(names)), N*m (or N); NaN where a name was missing


def joint_commands(data: TopicData, names: Sequence[str] | None = None) -> JointCommands:
    """``/joint_commands`` as arrays (columns ``names``, default: first appearance order)."""
    names = tuple(names) if names is not None else message_joint_names(data)
    index = {name: i for i, name in enumerate(names)}
    effort = np.full((len(data.messages), len(names)), np.nan)
    for row, msg in enumerate(data.messages):
        for k, name in enumerate(msg.name):
            i = index.get(name)
            if i is not None and len(msg.effort) > k:
                effort[row, i] = msg.effort[k]
    return JointCommands(names=names,
                         stamp_ns=np.array([stamp_ns(m.header.stamp) for m in data.messages],
                                           dtype=np.int64),
                         log_time_ns=np.asarray(data.log_time_ns, dtype=np.int64),
                         effort=effort)


def check_world_axes(data: TopicData, frame: str) -> None:
    """
    Raise ValueError unless every contact wrench of link ``frame`` has world axes.

    (``frame_id`` = the link's contact frame or a fixed frame,
    :func:`dodo_sim.ros.contract.world_aligned_frame`).
    """
    for m in data.messages:
        if not contract.world_aligned_frame(m.header.frame_id, frame):
            raise ValueError(f'{contract.contact_topic(frame)} has frame_id '
                             f'{m.header.frame_id!r}: contact forces are read with world axes '
                             f'only ({contract.contact_frame_id(frame)!r}, '
                             f'{contract.WORLD_FRAME!r} or {contract.ODOM_FRAME!r})')


def wrenches(data: TopicData, frame: str | None = None) -> tuple[np.ndarray, np.ndarray]:
    """
    Return WrenchStamped messages as (t header stamps s, force (N, 3) N).

    ``frame``: the contact link; its forces are checked to have world axes.
    """
    if frame is not None:
        check_world_axes(data, frame)
    t = np.array([stamp_seconds(m.header.stamp) for m in data.messages], dtype=float)
    f = np.array([[m.wrench.force.x, m.wrench.force.y, m.wrench.force.z]
                  for m in data.messages], dtype=float).reshape(-1, 3)
    return t, f


def multiarray(data: TopicData) -> np.ndarray:
    """Float64MultiArray messages -> (N, k) array (NaN-padded if lengths differ)."""
    width = max((len(m.data) for m in data.messages), default=0)
    out = np.full((len(data.messages), width), np.nan)
    for i, m in enumerate(data.messages):
        out[i, :len(m.data)] = m.data
    return out


def clock(data: TopicData) -> np.ndarray:
    """/clock messages -> sim time, s."""
    return np.array([stamp_seconds(m.clock) for m in data.messages], dtype=float)


def sim_time(bag: dict[str, TopicData], log_time_ns: np.ndarray) -> np.ndarray:
    """
    Sim time (s) at the given bag times.

    From the latest /clock (or /joint_states stamp) at or before each; bag time relative to the
    first message when neither is recorded.
    """
    log_time_ns = np.asarray(log_time_ns, dtype=np.int64)
    ref_log = ref_t = None
    if contract.CLOCK in bag and len(bag[contract.CLOCK]):
        ref_log, ref_t = bag[contract.CLOCK].log_time_ns, clock(bag[contract.CLOCK])
    elif contract.JOINT_STATES in bag and len(bag[contract.JOINT_STATES]):
        ref_log = bag[contract.JOINT_STATES].log_time_ns
        ref_t = np.array([stamp_seconds(m.header.stamp)
                          for m in bag[contract.JOINT_STATES].messages])
    if ref_log is None:
        if log_time_ns.size == 0:
            return np.zeros(0)
        return (log_time_ns - log_time_ns.min()) * 1e-9
    order = np.argsort(ref_log, kind='stable')
    ref_log, ref_t = ref_log[order], ref_t[order]
    i = np.searchsorted(ref_log, log_time_ns, side='right') - 1
    return ref_t[np.clip(i, 0, len(ref_t) - 1)]


def _flatten(msg, prefix: str = '') -> dict[str, float]:
    out: dict[str, float] = {}
    for name in getattr(msg, '__dataclass_fields__', {}):
        value = getattr(msg, name)
        key = f'{prefix}{name}'
        if isinstance(value, (bool, int, float, np.integer, np.floating)):
            out[key] = float(value)
        elif isinstance(value, np.ndarray) and value.dtype.kind in 'biuf':
            for i, x in enumerate(value.ravel()):
                out[f'{key}[{i}]'] = float(x)
        elif hasattr(value, '__dataclass_fields__'):
            out.update(_flatten(value, key + '.'))
    return out


def named_values(data: TopicData) -> tuple[np.ndarray | None, dict[str, np.ndarray]]:
    """
    Return a telemetry topic (e.g. /controller/state) as ``(stamps s or None, {name: values})``.

    Understands sensor_msgs/JointState (``name`` -> ``position``), std_msgs/Float64MultiArray
    (names = ``layout.dim[0].label`` split at commas, else ``data[i]``) and any other message
    (numeric fields flattened: ``a.b``, ``c[i]``).  Missing values are NaN.
    """
    rows: list[dict[str, float]] = []
    stamps: list[float] = []
    for msg in data.messages:
        header = getattr(msg, 'header', None)
        if header is not None:
            stamps.append(stamp_seconds(header.stamp))
        if data.msgtype == 'sensor_msgs/msg/JointState':
            rows.append({n: float(x) for n, x in zip(msg.name, msg.position)})
        elif data.msgtype == 'std_msgs/msg/Float64MultiArray':
            labels = msg.layout.dim[0].label.split(',') if msg.layout.dim else []
            labels = [s.strip() for s in labels]
            if len(labels) != len(msg.data):
                labels = [f'data[{i}]' for i in range(len(msg.data))]
            rows.append(dict(zip(labels, map(float, msg.data))))
        else:
            rows.append(_flatten(msg))
    names: list[str] = []
    for row in rows:
        names += [n for n in row if n not in names]
    values = {n: np.array([row.get(n, np.nan) for row in rows], dtype=float) for n in names}
    t = np.asarray(stamps, dtype=float) if len(stamps) == len(rows) and rows else None
    return t, values


def robot_description(bag: dict[str, TopicData]) -> str | None:
    """Return the last recorded /robot_description URDF, or None."""
    data = bag.get(contract.ROBOT_DESCRIPTION)
    if data is None or not len(data):
        return None
    return data.messages[-1].data


def topic_types(bag_dir: str | os.PathLike) -> dict[str, str]:
    """Topic -> message type of a bag (from its metadata, nothing deserialized)."""
    with _reader(bag_dir) as reader:
        keys = _topic_keys(reader)
        return {keys[conn.topic]: conn.msgtype for conn in reader.connections}


def contact_topics(topics: Iterable[str] | dict) -> dict[str, str]:
    """
    Contact frame -> topic for the ``/<frame>_contact`` topics among ``topics``.

    (a bag dict or names; :func:`dodo_sim.ros.contract.contact_topic` naming).
    """
    out = {}
    for topic in topics:
        if contract.topic_type(topic) == contract.CONTACT_TYPE and topic.endswith('_contact'):
            frame = topic.lstrip('/')[:-len('_contact')]
            if frame and contract.contact_topic(frame) == topic:
                out[frame] = topic
    return out


# -- parameters ---------------------------------------------------------------------------------

#: rcl_interfaces/msg/ParameterType -> the ParameterValue field holding the value
_PARAMETER_FIELDS = {1: 'bool_value', 2: 'integer_value', 3: 'double_value', 4: 'string_value',
                     5: 'byte_array_value', 6: 'bool_array_value', 7: 'integer_array_value',
                     8: 'double_array_value', 9: 'string_array_value'}


def parameter_value(value) -> Any:
    """
    rcl_interfaces/msg/ParameterValue (rosbags or rclpy object) -> Python value.

    (arrays as tuples; None for PARAMETER_NOT_SET).
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


def _node_fqn(node: str) -> str:
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
    fqn = _node_fqn(node)
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


# -- the robot ----------------------------------------------------------------------------------

@dataclass(frozen=True)
class RobotInfo:
    """
    What the bag says about the robot.

    Fields:
        urdf_xml: the recorded ``/robot_description`` (or the given URDF), None if neither.
        joint_names: movable joints (URDF/pinocchio order; without a URDF: as in /joint_states).
        actuated_joint_names: joints that take a command: the names of ``/joint_commands``, else
            the URDF joints with an effort limit > 0.
        contact_frames: the simulator's ``contact_frames`` parameter when recorded, else the
            frames of the recorded ``/<frame>_contact`` topics (URDF link order).
    """

    urdf_xml: str | None
    joint_names: tuple
    actuated_joint_names: tuple
    contact_frames: tuple

    @property
    def contact_topics(self) -> tuple:
        return tuple(contract.contact_topic(f) for f in self.contact_frames)


def robot_info(bag: dict[str, TopicData], urdf: str | os.PathLike | None = None) -> RobotInfo:
    """
    Joints, actuated joints and contact frames of the recorded robot.

    (see :class:`RobotInfo`).
    """
    xml = None
    model = None
    if urdf is not None:
        from dodo_sim.physics.robot import robot_description_xml
        xml = robot_description_xml(urdf)
    else:
        xml = robot_description(bag)
    if xml is not None:
        from dodo_sim.physics.robot import load_robot
        model = load_robot(xml, contact_frames=())
    if model is not None:
        joints = tuple(model.joint_names)
    elif contract.JOINT_STATES in bag:
        joints = message_joint_names(bag[contract.JOINT_STATES])
    else:
        joints = ()
    if contract.JOINT_COMMANDS in bag and len(bag[contract.JOINT_COMMANDS]):
        actuated = message_joint_names(bag[contract.JOINT_COMMANDS])
    elif model is not None:
        actuated = tuple(model.actuated_joint_names)
    else:
        actuated = ()
    frames: tuple = ()
    simulator = node_parameters(bag, 'simulator')
    if simulator is not None and simulator.initial.get('contact_frames'):
        frames = tuple(simulator.initial['contact_frames'])
    if not frames:
        found = contact_topics(bag)
        order = {}
        if xml is not None:
            from dodo_sim.ros.tf_frames import urdf_links
            order = {name: i for i, name in enumerate(urdf_links(xml))}
        frames = tuple(sorted(found, key=lambda f: (order.get(f, len(order)), f)))
    return RobotInfo(xml, joints, actuated, frames)


def _time_msg(typestore, t_s: float):
    ns = int(round(t_s * 1e9))
    return typestore.types['builtin_interfaces/msg/Time'](sec=ns // 1_000_000_000,
                                                          nanosec=ns % 1_000_000_000)


def flush_chunk(writer) -> bool:
    """
    Close the open chunk of a rosbags MCAP ``Writer`` and hand it to the OS.

    So that a process killed afterwards leaves it readable on disk (``dodo bag recover``). Uses the
    rosbags MCAP storage's ``close_chunk`` (rosbags 0.11; test_bags_recover checks it). False if
    this rosbags cannot (then chunks are written every 1 MiB only).
    """
    storage = getattr(writer, 'storage', None)
    chunk = getattr(storage, 'chunk', None)
    if storage is None or chunk is None or not hasattr(storage, 'close_chunk') \
            or not hasattr(storage, 'bio'):
        return False
    if chunk.bio.tell():
        storage.close_chunk()
        storage.bio.flush()
    return True


class OfflineBagWriter:
    """
    Write the dodo topics of an offline (no-DDS) run to a rosbag2 MCAP bag.

    In the layout the ROS nodes and the recorder produce (docs/bags.md).

    Bag times are ``log_offset_ns + t * 1e9`` (sim time on a wall-clock-like base) unless given.
    Used by tests (synthetic bags) and anything that logs a core-only run::

        with OfflineBagWriter(path) as w:
            w.robot_description(xml)
            w.parameters('controller', {'apex_height': 1.1, ...})   # start configuration
            w.step(t, q, v, effort, force_xz)       # /foot_contact, /joint_states, /clock
            w.joint_command(t, ['hip', 'knee'], tau)  # /joint_commands (stamped)
            w.command(t, tau)                        # /effort_controller/commands
            w.controller_state(t, names, values)     # /controller/state (JointState channels)
            w.parameter_change('controller', {'apex_height': 1.2}, t)   # ros2 param set
    """

    #: topics written with a transient-local (latched) offered QoS
    LATCHED = (contract.ROBOT_DESCRIPTION, contract.TF_STATIC)

    def __init__(self, bag_dir: str | os.PathLike, log_offset_ns: int = 1_700_000_000 * 10**9):
        from rosbags.rosbag2 import StoragePlugin, Writer
        self.typestore = make_typestore()
        self.log_offset_ns = int(log_offset_ns)
        self.writer = Writer(Path(bag_dir), version=9, storage_plugin=StoragePlugin.MCAP)
        self.connections: dict[str, object] = {}

    def __enter__(self):
        self.writer.open()
        return self

    def __exit__(self, *exc):
        self.writer.close()
        return False

    def _log_ns(self, t_s: float, log_ns: int | None) -> int:
        return self.log_offset_ns + int(round(t_s * 1e9)) if log_ns is None else int(log_ns)

    def flush(self) -> bool:
        """Write the open chunk to disk now (as the recorder does every flush_period_s)."""
        return flush_chunk(self.writer)

    def write(self, topic: str, msgtype: str, msg, log_ns: int) -> None:
        """Serialize a rosbags message object and write it."""
        self.write_raw(topic, msgtype, self.typestore.serialize_cdr(msg, msgtype), log_ns)

    def write_raw(self, topic: str, msgtype: str, data: bytes, log_ns: int) -> None:
        """Write serialized CDR bytes."""
        conn = self.connections.get(topic)
        if conn is None:
            # stored under the resolved name in the root namespace, as the recorder stores it
            from rosbags.interfaces import (Qos, QosDurability, QosHistory, QosLiveliness,
                                            QosReliability, QosTime)
            latched = contract.relative_name(topic) in self.LATCHED
            zero = QosTime(0, 0)
            qos = Qos(QosHistory.KEEP_LAST, 1 if latched else 10, QosReliability.RELIABLE,
                      QosDurability.TRANSIENT_LOCAL if latched else QosDurability.VOLATILE,
                      zero, zero, QosLiveliness.AUTOMATIC, zero, False)
            conn = self.writer.add_connection(contract.resolve(topic), msgtype,
                                              typestore=self.typestore,
                                              offered_qos_profiles=[qos])
            self.connections[topic] = conn
        self.writer.write(conn, int(log_ns), data)

    def _header(self, t_s: float, frame_id: str = ''):
        return self.typestore.types['std_msgs/msg/Header'](stamp=_time_msg(self.typestore, t_s),
                                                           frame_id=frame_id)

    def robot_description(self, urdf_xml: str, log_ns: int | None = None) -> None:
        msg = self.typestore.types['std_msgs/msg/String'](data=urdf_xml)
        self.write(contract.ROBOT_DESCRIPTION, 'std_msgs/msg/String', msg,
                   self._log_ns(0.0, log_ns))

    def clock(self, t: float, log_ns: int | None = None) -> None:
        msg = self.typestore.types['rosgraph_msgs/msg/Clock'](clock=_time_msg(self.typestore, t))
        self.write(contract.CLOCK, 'rosgraph_msgs/msg/Clock', msg, self._log_ns(t, log_ns))

    def joint_state(self, t: float, q, v, effort=None, names=HOPPER_JOINT_NAMES,
                    log_ns: int | None = None) -> None:
        effort = np.zeros(len(names)) if effort is None else effort
        msg = self.typestore.types['sensor_msgs/msg/JointState'](
            header=self._header(t), name=list(names), position=np.asarray(q, dtype=float),
            velocity=np.asarray(v, dtype=float), effort=np.asarray(effort, dtype=float))
        self.write(contract.JOINT_STATES, 'sensor_msgs/msg/JointState', msg,
                   self._log_ns(t, log_ns))

    def contact(self, frame: str, t: float, force, log_ns: int | None = None) -> None:
        """
        Write ``/<frame>_contact``: ``force`` is [x, z] (planar) or [x, y, z], world axes, N.

        ``frame_id`` = the link's contact frame, as the simulator writes it.
        """
        types = self.typestore.types
        force = np.asarray(force, dtype=float)
        fx, fy, fz = (force[0], 0.0, force[1]) if len(force) == 2 else force[:3]
        vec = types['geometry_msgs/msg/Vector3']
        wrench = types['geometry_msgs/msg/Wrench'](
            force=vec(x=float(fx), y=float(fy), z=float(fz)), torque=vec(x=0.0, y=0.0, z=0.0))
        msg = types['geometry_msgs/msg/WrenchStamped'](header=self._header(
            t, contract.contact_frame_id(frame)),
                                                       wrench=wrench)
        self.write(contract.contact_topic(frame), contract.CONTACT_TYPE, msg,
                   self._log_ns(t, log_ns))

    def foot_contact(self, t: float, force_xz, log_ns: int | None = None) -> None:
        self.contact('foot', t, force_xz, log_ns)

    def step(self, t: float, q, v, effort, forces, log_ns: int | None = None,
             names=HOPPER_JOINT_NAMES, contact_frames=('foot',)) -> None:
        """
        One simulator step in the simulator node's order.

        The contact topics, /joint_states, /clock (same stamp). ``forces``: one force per contact
        frame ([x, z] or [x, y, z]; a single 1-D force for one frame).
        """
        base = self._log_ns(t, log_ns)
        forces = np.asarray(forces, dtype=float)
        rows = forces.reshape(1, -1) if forces.ndim == 1 else forces
        if len(rows) != len(contact_frames):
            raise ValueError(f'{len(rows)} contact forces for contact frames {contact_frames}')
        for frame, force in zip(contact_frames, rows):
            self.contact(frame, t, force, base)
        self.joint_state(t, q, v, effort, names=names, log_ns=base + 1)
        self.clock(t, base + 2)

    def joint_command(self, t: float, names, effort, log_ns: int | None = None) -> None:
        """
        ``/joint_commands`` answering the state at ``t``.

        (stamp ``t``; bag time just after the state).
        """
        msg = self.typestore.types['sensor_msgs/msg/JointState'](
            header=self._header(t), name=list(names), position=np.zeros(0),
            velocity=np.zeros(0), effort=np.asarray(effort, dtype=float))
        self.write(contract.JOINT_COMMANDS, 'sensor_msgs/msg/JointState', msg,
                   self._log_ns(t, log_ns) + (400_000 if log_ns is None else 0))

    def command(self, t: float, tau, log_ns: int | None = None) -> None:
        """/effort_controller/commands answering the state at ``t`` (bag time just after it)."""
        types = self.typestore.types
        layout = types['std_msgs/msg/MultiArrayLayout'](dim=[], data_offset=0)
        msg = types['std_msgs/msg/Float64MultiArray'](layout=layout,
                                                      data=np.asarray(tau, dtype=float))
        self.write(contract.EFFORT_COMMANDS, 'std_msgs/msg/Float64MultiArray', msg,
                   self._log_ns(t, log_ns) + (500_000 if log_ns is None else 0))

    def controller_state(self, t: float, names, values, log_ns: int | None = None) -> None:
        """/controller/state as the controller node publishes it (JointState channels)."""
        msg = self.typestore.types['sensor_msgs/msg/JointState'](
            header=self._header(t), name=list(names),
            position=np.asarray(values, dtype=float), velocity=np.zeros(0),
            effort=np.zeros(0))
        self.write(contract.CONTROLLER_STATE, 'sensor_msgs/msg/JointState', msg,
                   self._log_ns(t, log_ns) + (500_001 if log_ns is None else 0))

    def _parameter_event(self, node: str, t: float, log_ns: int, new=None, changed=None):
        types = self.typestore.types
        value_cls, param_cls = types['rcl_interfaces/msg/ParameterValue'], \
            types['rcl_interfaces/msg/Parameter']

        def params(values):
            return [param_cls(name=k, value=parameter_value_msg(value_cls, v))
                    for k, v in (values or {}).items()]

        msg = types['rcl_interfaces/msg/ParameterEvent'](
            stamp=_time_msg(self.typestore, t), node=_node_fqn(node),
            new_parameters=params(new), changed_parameters=params(changed),
            deleted_parameters=[])
        self.write(contract.PARAMETER_EVENTS, 'rcl_interfaces/msg/ParameterEvent', msg, log_ns)

    def parameters(self, node: str, values: dict, t: float = 0.0,
                   log_ns: int | None = None) -> None:
        """
        Record a node's parameters at start.

        A node's parameters at start (``new_parameters``: its declaration event, or what the
        recorder's snapshot writes).
        """
        self._parameter_event(node, t, self._log_ns(t, log_ns), new=values)

    def parameter_change(self, node: str, values: dict, t: float,
                         log_ns: int | None = None) -> None:
        """
        Record a runtime parameter change.

        A runtime change (``changed_parameters``, as after ``ros2 param set``).
        """
        self._parameter_event(node, t, self._log_ns(t, log_ns), changed=values)

    def tf_static(self, transforms, log_ns: int | None = None) -> None:
        from dodo_sim.ros.tf_frames import tf_message
        self.write(contract.TF_STATIC, 'tf2_msgs/msg/TFMessage',
                   tf_message(self.typestore, 0, transforms), self._log_ns(0.0, log_ns))

    def tf(self, t: float, transforms, log_ns: int | None = None) -> None:
        from dodo_sim.ros.tf_frames import tf_message
        self.write(contract.TF, 'tf2_msgs/msg/TFMessage',
                   tf_message(self.typestore, int(round(t * 1e9)), transforms),
                   self._log_ns(t, log_ns) + (3 if log_ns is None else 0))
