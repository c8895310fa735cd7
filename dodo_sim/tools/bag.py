# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
Open and read dodo_sim bags: the messages of each topic, deserialized, in bag order (no rclpy).

Bags are rosbag2 MCAP bags written/read with ``rosbags``; what a dodo_sim bag contains is
described in ``docs/bags.md``. Reading::

    from dodo_sim.tools.bag import message_counts, read_bag
    from dodo_sim.tools.bag_arrays import joint_states
    from dodo_sim.tools.bag_parameters import node_parameters
    from dodo_sim.tools.bag_robot import robot_info
    bag = read_bag('/tmp/run1')                   # dict topic -> TopicData (deserialized messages)
    robot = robot_info(bag)                       # joints, actuated joints, contact frames, URDF
    js = joint_states(bag['joint_states'], robot.joint_names)   # arrays t, q, v, effort
    node_parameters(bag, 'controller')            # start configuration + runtime changes
    message_counts('/tmp/run1')                   # {'joint_states': 3001, ...} (contract names)

Times: ``TopicData.log_time_ns`` is the bag time of each message; ``stamp`` arrays are the message
header stamps (sim time under simulation, s).  :func:`dodo_sim.tools.bag_arrays.sim_time` maps
bag times of headerless messages (commands) to sim time through the recorded ``/clock``.

Also here: the typestore the bags are read and written with (:func:`make_typestore`,
:func:`register_msg_class`). Writing a bag offline: :mod:`dodo_sim.tools.bag_writer`.
"""
from __future__ import annotations

from contextlib import contextmanager
from dataclasses import dataclass, field
import os
from pathlib import Path
import re
from typing import Iterable, Iterator

from dodo_sim.ros import contract
import numpy as np


def make_typestore():
    """
    Return a fresh rosbags typestore for ROS 2 Kilted.

    It is for Jazzy if this rosbags has no Kilted store.
    """
    from rosbags.typesys import get_typestore, Stores
    store = getattr(Stores, 'ROS2_KILTED', None) or Stores.ROS2_JAZZY
    return get_typestore(store)


_PRIMITIVES = {'boolean': 'bool', 'octet': 'byte', 'float': 'float32', 'double': 'float64',
               'long double': 'float64'}


def _msg_field_type(idl_type: str) -> tuple[str, list[str]]:
    """
    Return the .msg type and nested type names of a rosidl Python field type.

    Field types look like ``sequence<double, 3>``.
    """
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
#: Largest chunk read, bytes once decompressed. Recorders write ~1 MiB chunks (rosbags,
#: rosbag2's 768 KiB); a chunk holding one large message is as large as it. A 65 kB zstd frame
#: can declare gigabytes: every reader checks a chunk's sizes against this before decompressing.
MAX_CHUNK_BYTES = 256 * 2**20
# offset of a chunk's compressed records from its start: opcode 1, length 8, start and end time
# 16, uncompressed size 8, CRC 4, compression string 4 + n, records length 8 (MCAP spec)
_CHUNK_DATA_OFFSET = 1 + 8 + 16 + 8 + 4 + 4 + 8


def check_chunk_size(compression: str, declared: int, head: bytes, where: str) -> None:
    """
    Refuse a chunk that would decompress to more than it declares or :data:`MAX_CHUNK_BYTES`.

    ``head``: the first bytes of its compressed data (a zstd frame header states the size the
    decompressor allocates, whatever the chunk declares). ValueError names ``where``.
    """
    if declared > MAX_CHUNK_BYTES:
        raise ValueError(f'{where}: a chunk declares {declared} bytes once decompressed, more '
                         f'than the {MAX_CHUNK_BYTES} read (a damaged or hostile file)')
    if compression == 'zstd':
        import zstandard
        try:
            content = zstandard.frame_content_size(head)
        except zstandard.ZstdError:
            raise ValueError(f'{where}: a chunk is not a zstd frame') from None
        if content > declared:
            raise ValueError(f'{where}: a zstd chunk holds {content} bytes but declares '
                             f'{declared} (a damaged or hostile file)')


def check_chunks(path: Path) -> None:
    """
    Check every chunk of a closed MCAP file against :func:`check_chunk_size` (ValueError).

    From its summary's chunk index and the first bytes of each chunk's data; nothing is
    decompressed.
    """
    from mcap.exceptions import McapError
    from mcap.reader import make_reader
    with path.open('rb') as fh:
        try:
            summary = make_reader(fh).get_summary()
        except (McapError, ValueError, EOFError) as exc:
            raise ValueError(f'{path}: unreadable MCAP summary ({exc})') from None
        for chunk in (summary.chunk_indexes if summary is not None else ()):
            fh.seek(chunk.chunk_start_offset + _CHUNK_DATA_OFFSET + len(chunk.compression))
            check_chunk_size(chunk.compression, chunk.uncompressed_size, fh.read(18),
                             f'{path} (chunk at byte {chunk.chunk_start_offset})')


def mcap_problem(path: Path) -> str | None:
    """
    Explain why an MCAP file cannot be read as a closed bag file, or None.

    It may be empty, not MCAP, or truncated (no footer and closing magic, as a killed recorder or a
    cut copy leaves it). Only the first and last 8 bytes are read.
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


class BagDamaged(ValueError):
    """A bag rosbags cannot read (a corrupt chunk, record, index or message): one line."""


@contextmanager
def _damage_reported(bag_dir):
    """Turn rosbags' read errors (a damaged file) into :class:`BagDamaged` naming the bag."""
    from rosbags.highlevel import AnyReaderError
    from rosbags.rosbag2.errors import ReaderError
    from rosbags.serde import SerdeError
    try:
        yield
    except (AnyReaderError, ReaderError, SerdeError) as exc:
        raise BagDamaged(f'{bag_dir}: the bag file is damaged and cannot be read ({exc}); '
                         f'dodo bag recover {bag_dir} --out NEW_BAG rebuilds what it can read '
                         f'record by record') from None


def open_reader(bag_dir: str | os.PathLike):
    """
    Return a rosbags AnyReader on a closed bag (FileNotFoundError naming what is wrong).

    That includes a chunk too large to decompress (:func:`check_chunks`).
    """
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
        try:
            check_chunks(mcap_file)      # the readers decompress without a bound: check first
        except ValueError as exc:
            raise FileNotFoundError(str(exc)) from None
    return AnyReader([path], default_typestore=make_typestore())


def message_counts(bag_dir: str | os.PathLike) -> dict[str, int]:
    """Messages per topic, from the bag's metadata (no deserialization)."""
    with open_reader(bag_dir) as reader:
        counts: dict[str, int] = {}
        keys = _topic_keys(reader)
        for conn in reader.connections:
            counts[keys[conn.topic]] = counts.get(keys[conn.topic], 0) + conn.msgcount
        return counts


def iter_messages(bag_dir: str | os.PathLike, topics: Iterable[str] | None = None
                  ) -> Iterator[tuple[str, str, int, object]]:
    """
    Yield ``(topic, msgtype, log_time_ns, message)`` in bag-time order.

    A damaged file raises :class:`BagDamaged` when the reader reaches the damage.
    """
    with _damage_reported(bag_dir), open_reader(bag_dir) as reader:
        keys = _topic_keys(reader)
        for conn, timestamp, raw in reader.messages(connections=_connections(reader, topics)):
            yield keys[conn.topic], conn.msgtype, timestamp, reader.deserialize(raw, conn.msgtype)


def iter_raw_messages(bag_dir: str | os.PathLike, topics: Iterable[str] | None = None
                      ) -> Iterator[tuple[str, str, int, bytes]]:
    """Yield ``(topic, msgtype, log_time_ns, serialized CDR bytes)`` in bag-time order."""
    with _damage_reported(bag_dir), open_reader(bag_dir) as reader:
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

    ``topics`` None means all of them; topics are relative contract names or the recorded names.
    """
    if topics is None:
        return list(reader.connections)
    keys = _topic_keys(reader)
    namespace = contract.bag_namespace(keys)
    wanted = {contract.relative_name(t, namespace) for t in topics}
    return [c for c in reader.connections if keys[c.topic] in wanted]


def read_bag(bag_dir: str | os.PathLike, topics: Iterable[str] | None = None,
             max_messages: int | None = None) -> dict[str, TopicData]:
    """
    Read (all or the given) topics into :class:`TopicData`, one per topic.

    ``max_messages``: keep only the first that many messages of each topic, read topic by topic
    (a topic's reading stops there, the others' messages are not visited), so memory and time
    are bounded whatever the bag holds.
    """
    times: dict[str, list[int]] = {}
    msgs: dict[str, list] = {}
    types: dict[str, str] = {}
    with _damage_reported(bag_dir), open_reader(bag_dir) as reader:
        keys = _topic_keys(reader)
        connections = _connections(reader, topics)
        if max_messages is None:
            groups = [connections]
        else:
            by_topic: dict[str, list] = {}
            for conn in connections:
                by_topic.setdefault(keys[conn.topic], []).append(conn)
            groups = list(by_topic.values())
        for group in groups:
            for conn, timestamp, raw in reader.messages(connections=group):
                topic = keys[conn.topic]
                kept = msgs.setdefault(topic, [])
                if max_messages is not None and len(kept) >= max_messages:
                    break
                times.setdefault(topic, []).append(timestamp)
                kept.append(reader.deserialize(raw, conn.msgtype))
                types[topic] = conn.msgtype
    return {topic: TopicData(topic, types[topic], np.asarray(times[topic], dtype=np.int64),
                             msgs[topic]) for topic in msgs}


def topic_types(bag_dir: str | os.PathLike) -> dict[str, str]:
    """Topic -> message type of a bag (from its metadata, nothing deserialized)."""
    with open_reader(bag_dir) as reader:
        keys = _topic_keys(reader)
        return {keys[conn.topic]: conn.msgtype for conn in reader.connections}
