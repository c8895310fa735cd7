# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
Topics of a bag as numpy arrays: joint states and commands, wrenches, /clock, telemetry (no rclpy).

Each function takes the :class:`dodo_sim.tools.bag.TopicData` of one topic (or the bag dict)
that :func:`dodo_sim.tools.bag.read_bag` returns.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from dodo_sim.ros import contract
from dodo_sim.tools.bag import TopicData
import numpy as np


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

    Messages with a subset of the joints (e.g. from separate drivers) update those joints; one row
    per message once all joints were seen.

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


@dataclass
class ImuReadings:
    """sensor_msgs/Imu messages (``/imu`` or ``/ground_truth/imu``) as arrays."""

    frame_id: str                  # the IMU's link (of the first message)
    t: np.ndarray                  # header stamp, s
    stamp_ns: np.ndarray           # header stamp, ns (int64, exact)
    orientation_xyzw: np.ndarray   # (N, 4)
    angular_velocity: np.ndarray   # (N, 3), rad/s, IMU axes
    linear_acceleration: np.ndarray  # (N, 3), m/s^2, IMU axes (specific force: +g at rest)


def imu(data: TopicData) -> ImuReadings:
    """Return an Imu topic as arrays, one row per message."""
    msgs = data.messages

    def rows(get, width: int = 3) -> np.ndarray:
        return np.array([get(m) for m in msgs], dtype=float).reshape(len(msgs), width)
    return ImuReadings(
        frame_id=msgs[0].header.frame_id if msgs else '',
        t=np.array([stamp_seconds(m.header.stamp) for m in msgs], dtype=float),
        stamp_ns=np.array([stamp_ns(m.header.stamp) for m in msgs], dtype=np.int64),
        orientation_xyzw=rows(lambda m: (m.orientation.x, m.orientation.y, m.orientation.z,
                                         m.orientation.w), 4),
        angular_velocity=rows(lambda m: (m.angular_velocity.x, m.angular_velocity.y,
                                         m.angular_velocity.z)),
        linear_acceleration=rows(lambda m: (m.linear_acceleration.x, m.linear_acceleration.y,
                                            m.linear_acceleration.z)))


def check_world_axes(data: TopicData, frame: str) -> None:
    """
    Raise ValueError unless every contact wrench of link ``frame`` has world axes.

    A wrench has world axes when its ``frame_id`` is the link's contact frame or a fixed frame
    (:func:`dodo_sim.ros.contract.world_aligned_frame`).
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

    It comes from the latest /clock (or /joint_states stamp) at or before each; bag time relative
    to the first message when neither is recorded.
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
