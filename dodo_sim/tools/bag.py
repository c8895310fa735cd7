"""Bag helpers shared by the recorder, ``dodo replay``, ``dodo plot`` and the tests (no rclpy).

Bags are rosbag2 MCAP bags written/read with ``rosbags``.  Reading::

    from dodo_sim.tools.bag import read_bag, joint_states, message_counts
    bag = read_bag('/tmp/run1')                   # dict topic -> TopicData (deserialized messages)
    js = joint_states(bag['/joint_states'])       # numpy arrays t, q, v, effort (JOINT_NAMES order)
    message_counts('/tmp/run1')                   # {'/joint_states': 3001, ...} from metadata

Times: ``TopicData.log_time_ns`` is the bag time of each message; ``stamp`` arrays are the message
header stamps (sim time under simulation, s).  :func:`sim_time` maps bag times of headerless
messages (commands) to sim time through the recorded ``/clock``.
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Iterator

import numpy as np

from dodo_sim.model import JOINT_NAMES
from dodo_sim.ros import contract

#: Topics recorded by default (the ROS contract, :mod:`dodo_sim.ros.contract`).
DEFAULT_TOPICS = contract.RECORDED_TOPICS

#: Message types fixed by the ROS graph contract.
CONTRACT_TYPES = {topic: contract.topic_type(topic) for topic in DEFAULT_TOPICS}


def make_typestore():
    """A fresh rosbags typestore for ROS 2 Kilted (Jazzy if this rosbags has no Kilted store)."""
    from rosbags.typesys import Stores, get_typestore
    store = getattr(Stores, 'ROS2_KILTED', None) or Stores.ROS2_JAZZY
    return get_typestore(store)


_PRIMITIVES = {'boolean': 'bool', 'octet': 'byte', 'float': 'float32', 'double': 'float64',
               'long double': 'float64'}


def _msg_field_type(idl_type: str) -> tuple[str, list[str]]:
    """rosidl Python field type (``sequence<double, 3>``...) -> .msg type, nested type names."""
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
    """Describe a generated rosidl Python message class (and its nested types) in ``typestore``.

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


def _reader(bag_dir: str | os.PathLike):
    from rosbags.highlevel import AnyReader
    path = Path(bag_dir)
    if not (path / 'metadata.yaml').is_file():
        raise FileNotFoundError(f'{path} is not a rosbag2 bag (no metadata.yaml); was the '
                                f'recorder stopped with SIGINT/SIGTERM?')
    return AnyReader([path], default_typestore=make_typestore())


def message_counts(bag_dir: str | os.PathLike) -> dict[str, int]:
    """Messages per topic, from the bag's metadata (no deserialization)."""
    with _reader(bag_dir) as reader:
        counts: dict[str, int] = {}
        for conn in reader.connections:
            counts[conn.topic] = counts.get(conn.topic, 0) + conn.msgcount
        return counts


def iter_messages(bag_dir: str | os.PathLike, topics: Iterable[str] | None = None
                  ) -> Iterator[tuple[str, str, int, object]]:
    """Yield ``(topic, msgtype, log_time_ns, message)`` in bag-time order."""
    with _reader(bag_dir) as reader:
        for conn, timestamp, raw in reader.messages(connections=_connections(reader, topics)):
            yield conn.topic, conn.msgtype, timestamp, reader.deserialize(raw, conn.msgtype)


def iter_raw_messages(bag_dir: str | os.PathLike, topics: Iterable[str] | None = None
                      ) -> Iterator[tuple[str, str, int, bytes]]:
    """Yield ``(topic, msgtype, log_time_ns, serialized CDR bytes)`` in bag-time order."""
    with _reader(bag_dir) as reader:
        for conn, timestamp, raw in reader.messages(connections=_connections(reader, topics)):
            yield conn.topic, conn.msgtype, timestamp, bytes(raw)


def _connections(reader, topics: Iterable[str] | None) -> list:
    """The reader's connections on ``topics`` (all of them for None)."""
    wanted = set(topics) if topics is not None else None
    return [c for c in reader.connections if wanted is None or c.topic in wanted]


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
    """/joint_states as arrays, columns in ``JOINT_NAMES`` order (base_x, base_z, hip, knee)."""

    t: np.ndarray            # header stamp, s
    stamp_ns: np.ndarray     # header stamp, ns (int64, exact)
    log_time_ns: np.ndarray
    q: np.ndarray            # (N, 4)
    v: np.ndarray            # (N, 4)
    effort: np.ndarray       # (N, 4); NaN where not published


def joint_states(data: TopicData, joint_names: tuple[str, ...] = JOINT_NAMES) -> JointStates:
    """Merge JointState messages by joint name (messages with a subset of the joints, e.g. from
    separate drivers, update those joints); one row per message once all joints were seen."""
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
    shape = (0, n)
    return JointStates(t=np.asarray(rows_t, dtype=float),
                       stamp_ns=np.asarray(rows_ns, dtype=np.int64),
                       log_time_ns=np.asarray(rows_log, dtype=np.int64),
                       q=np.asarray(rows_q, dtype=float).reshape(shape if not rows_q else (-1, n)),
                       v=np.asarray(rows_v, dtype=float).reshape(shape if not rows_v else (-1, n)),
                       effort=np.asarray(rows_e, dtype=float).reshape(
                           shape if not rows_e else (-1, n)))


def wrenches(data: TopicData) -> tuple[np.ndarray, np.ndarray]:
    """WrenchStamped -> (t header stamps s, force (N, 3) N)."""
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
    """Sim time (s) at the given bag times, from the latest /clock (or /joint_states stamp) at or
    before each; bag time relative to the first message when neither is recorded."""
    log_time_ns = np.asarray(log_time_ns, dtype=np.int64)
    ref_log = ref_t = None
    if '/clock' in bag and len(bag['/clock']):
        ref_log, ref_t = bag['/clock'].log_time_ns, clock(bag['/clock'])
    elif '/joint_states' in bag and len(bag['/joint_states']):
        ref_log = bag['/joint_states'].log_time_ns
        ref_t = np.array([stamp_seconds(m.header.stamp) for m in bag['/joint_states'].messages])
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
    """A telemetry topic (e.g. /controller/state) as ``(stamps s or None, {name: values})``.

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
    """The last recorded /robot_description URDF, or None."""
    data = bag.get('/robot_description')
    if data is None or not len(data):
        return None
    return data.messages[-1].data


def _time_msg(typestore, t_s: float):
    ns = int(round(t_s * 1e9))
    return typestore.types['builtin_interfaces/msg/Time'](sec=ns // 1_000_000_000,
                                                          nanosec=ns % 1_000_000_000)


class OfflineBagWriter:
    """Write the dodo topics of an offline (no-DDS) run to a rosbag2 MCAP bag.

    Bag times are ``log_offset_ns + t * 1e9`` (sim time on a wall-clock-like base) unless given.
    Used by tests (synthetic bags) and anything that logs a core-only run::

        with OfflineBagWriter(path) as w:
            w.robot_description(xml)
            w.step(t, q, v, effort, force_xz)       # /foot_contact, /joint_states, /clock
            w.command(t, tau)                        # /effort_controller/commands
            w.controller_state(t, names, values)     # /controller/state (JointState channels)
    """

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

    def write(self, topic: str, msgtype: str, msg, log_ns: int) -> None:
        """Serialize a rosbags message object and write it."""
        conn = self.connections.get(topic)
        if conn is None:
            from rosbags.interfaces import (Qos, QosDurability, QosHistory, QosLiveliness,
                                            QosReliability, QosTime)
            latched = topic == '/robot_description'
            zero = QosTime(0, 0)
            qos = Qos(QosHistory.KEEP_LAST, 1 if latched else 10, QosReliability.RELIABLE,
                      QosDurability.TRANSIENT_LOCAL if latched else QosDurability.VOLATILE,
                      zero, zero, QosLiveliness.AUTOMATIC, zero, False)
            conn = self.writer.add_connection(topic, msgtype, typestore=self.typestore,
                                              offered_qos_profiles=[qos])
            self.connections[topic] = conn
        self.writer.write(conn, log_ns, self.typestore.serialize_cdr(msg, msgtype))

    def _header(self, t_s: float, frame_id: str = ''):
        return self.typestore.types['std_msgs/msg/Header'](stamp=_time_msg(self.typestore, t_s),
                                                           frame_id=frame_id)

    def robot_description(self, urdf_xml: str, log_ns: int | None = None) -> None:
        msg = self.typestore.types['std_msgs/msg/String'](data=urdf_xml)
        self.write('/robot_description', 'std_msgs/msg/String', msg, self._log_ns(0.0, log_ns))

    def clock(self, t: float, log_ns: int | None = None) -> None:
        msg = self.typestore.types['rosgraph_msgs/msg/Clock'](clock=_time_msg(self.typestore, t))
        self.write('/clock', 'rosgraph_msgs/msg/Clock', msg, self._log_ns(t, log_ns))

    def joint_state(self, t: float, q, v, effort=None, names=JOINT_NAMES,
                    log_ns: int | None = None) -> None:
        effort = np.zeros(len(names)) if effort is None else effort
        msg = self.typestore.types['sensor_msgs/msg/JointState'](
            header=self._header(t), name=list(names), position=np.asarray(q, dtype=float),
            velocity=np.asarray(v, dtype=float), effort=np.asarray(effort, dtype=float))
        self.write('/joint_states', 'sensor_msgs/msg/JointState', msg, self._log_ns(t, log_ns))

    def foot_contact(self, t: float, force_xz, log_ns: int | None = None) -> None:
        types = self.typestore.types
        vec = types['geometry_msgs/msg/Vector3']
        wrench = types['geometry_msgs/msg/Wrench'](
            force=vec(x=float(force_xz[0]), y=0.0, z=float(force_xz[1])),
            torque=vec(x=0.0, y=0.0, z=0.0))
        msg = types['geometry_msgs/msg/WrenchStamped'](header=self._header(t, 'foot'),
                                                       wrench=wrench)
        self.write('/foot_contact', 'geometry_msgs/msg/WrenchStamped', msg,
                   self._log_ns(t, log_ns))

    def step(self, t: float, q, v, effort, force_xz, log_ns: int | None = None) -> None:
        """One simulator step in the simulator node's order: /foot_contact, /joint_states,
        /clock (same stamp)."""
        base = self._log_ns(t, log_ns)
        self.foot_contact(t, force_xz, base)
        self.joint_state(t, q, v, effort, log_ns=base + 1)
        self.clock(t, base + 2)

    def command(self, t: float, tau, log_ns: int | None = None) -> None:
        """/effort_controller/commands answering the state at ``t`` (bag time just after it)."""
        types = self.typestore.types
        layout = types['std_msgs/msg/MultiArrayLayout'](dim=[], data_offset=0)
        msg = types['std_msgs/msg/Float64MultiArray'](layout=layout,
                                                      data=np.asarray(tau, dtype=float))
        self.write('/effort_controller/commands', 'std_msgs/msg/Float64MultiArray', msg,
                   self._log_ns(t, log_ns) + (500_000 if log_ns is None else 0))

    def controller_state(self, t: float, names, values, log_ns: int | None = None) -> None:
        """/controller/state as the controller node publishes it (JointState channels)."""
        msg = self.typestore.types['sensor_msgs/msg/JointState'](
            header=self._header(t), name=list(names),
            position=np.asarray(values, dtype=float), velocity=np.zeros(0),
            effort=np.zeros(0))
        self.write('/controller/state', 'sensor_msgs/msg/JointState', msg,
                   self._log_ns(t, log_ns) + (500_001 if log_ns is None else 0))
