# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
Rebuild a usable rosbag2 bag from the MCAP file of a recording that did not end cleanly.

A recorder killed with SIGKILL (or a power loss) leaves ``<bag>/<name>.mcap`` without its summary
section and no ``metadata.yaml``: rosbags, ``ros2 bag`` and Foxglove refuse it. Everything up to
the last complete record is still there: the recorder writes an MCAP chunk at least every
``flush_period_s`` (0.25 s) and MCAP records are length-prefixed, so the file is read record by
record (the ``mcap`` library's stream reader) until the first incomplete one; the schemas,
channels and messages of every complete chunk (and of loose records) are written to a new bag
with rosbags, which adds the summary, the index and ``metadata.yaml``.

In place (default): the damaged file is kept as ``<name>.mcap.damaged`` beside the rebuilt
``<bag name>.mcap`` — recovery never deletes data. ``out_dir``: the rebuilt bag goes there and
the original is left untouched.

What cannot be recovered is reported: the bytes after the last complete record (the chunk being
written when the process died, or a torn write), chunks whose data is corrupt (with the message
counts of their index, when it was written) and the messages that are gone. When the bag still
has its ``metadata.yaml`` (a file truncated after the recording closed: a cut copy, a full disk)
the loss is measured per topic against it, in messages and seconds; without it the number of
messages the recorder had not written is unknown and is said to be.

A bag whose MCAP file lacks its footer is truncated even when ``metadata.yaml`` exists
(:func:`dodo_sim.tools.bag.mcap_problem`); an empty or foreign file is refused with one line.
"""
from __future__ import annotations

from dataclasses import dataclass, field
import os
from pathlib import Path
import shutil
import struct

#: suffix of the damaged original kept beside an in-place recovery
DAMAGED_SUFFIX = '.damaged'


@dataclass
class TopicSummary:
    """Recovered messages of one topic."""

    topic: str
    msgtype: str
    count: int = 0
    first_ns: int | None = None
    last_ns: int | None = None

    def add(self, log_ns: int) -> None:
        self.count += 1
        self.first_ns = log_ns if self.first_ns is None else min(self.first_ns, log_ns)
        self.last_ns = log_ns if self.last_ns is None else max(self.last_ns, log_ns)


@dataclass
class LostChunk:
    """A chunk whose messages could not be read."""

    file: str
    offset: int
    reason: str
    start_ns: int
    end_ns: int
    counts: dict = field(default_factory=dict)   # topic -> messages (from its message index)


@dataclass
class RecoveryReport:
    """What :func:`recover` found and wrote."""

    source: Path
    output: Path
    files: list = field(default_factory=list)
    topics: dict = field(default_factory=dict)    # topic -> TopicSummary
    chunks: int = 0
    lost_chunks: list = field(default_factory=list)
    truncated_bytes: int = 0                        # bytes after the last complete record
    complete: bool = False                          # a footer was found: nothing was lost
    messages_without_channel: int = 0
    kept_original: list = field(default_factory=list)
    #: from the bag's metadata.yaml when it had one: topic -> recorded messages, bag end (ns)
    recorded_counts: dict | None = None
    recorded_end_ns: int | None = None

    @property
    def messages(self) -> int:
        return sum(t.count for t in self.topics.values())

    @property
    def end_ns(self) -> int | None:
        ends = [t.last_ns for t in self.topics.values() if t.last_ns is not None]
        return max(ends) if ends else None

    def text(self) -> str:
        lines = [f'recovered {self.messages} messages on {len(self.topics)} topics from '
                 f'{self.chunks} complete chunk(s) of {", ".join(map(str, self.files))}',
                 f'written to {self.output}']
        if self.kept_original:
            lines.append('damaged original kept as ' + ', '.join(map(str, self.kept_original)))
        width = max((len(t) for t in self.topics), default=5)
        for name in sorted(self.topics):
            t = self.topics[name]
            span = (f'{(t.last_ns - t.first_ns) * 1e-9:8.3f} s ending at bag time {t.last_ns}'
                    if t.count else '')
            lines.append(f'  {name:<{width}} {t.count:>8}  {t.msgtype}  {span}')
        if self.complete:
            lines.append('lost: nothing (the file had its footer: it was closed cleanly)')
            return '\n'.join(lines)
        lines.append('lost:')
        end = self.end_ns
        if self.recorded_counts is not None:
            lines.extend(self._measured_loss())
        else:
            lines.append(f'  everything the recorder had not written to disk when it stopped: '
                         f'the messages after bag time {end} (no metadata.yaml to count them '
                         f'against: how many is unknown)')
        if self.truncated_bytes:
            lines.append(f'  {self.truncated_bytes} bytes after the last complete record '
                         f'(an incomplete record) were not readable')
        for chunk in self.lost_chunks:
            counts = ', '.join(f'{k}={v}' for k, v in sorted(chunk.counts.items())) or \
                'message counts unknown'
            lines.append(f'  chunk at offset {chunk.offset} of {chunk.file} ({chunk.reason}): '
                         f'bag time {chunk.start_ns}..{chunk.end_ns}: {counts}')
        if self.messages_without_channel:
            lines.append(f'  {self.messages_without_channel} messages whose channel definition '
                         f'was lost')
        return '\n'.join(lines)

    def _measured_loss(self) -> list:
        """
        Describe the messages lost per topic and the time lost at the end.

        Per topic: recorded (metadata.yaml) minus recovered messages and the seconds from the last
        recovered message to the end of the recording.
        """
        recorded, total = self.recorded_counts, sum(self.recorded_counts.values())
        lost_total = sum(max(n - self._count(t), 0) for t, n in recorded.items())
        lines = [f'  {lost_total} of {total} recorded messages '
                 f'({100.0 * lost_total / max(total, 1):.1f} %), measured against metadata.yaml:']
        width = max((len(t) for t in recorded), default=5)
        for topic in sorted(recorded):
            lost = recorded[topic] - self._count(topic)
            if lost <= 0:
                continue
            last = self.topics[topic].last_ns if topic in self.topics else None
            seconds = ('' if self.recorded_end_ns is None or last is None
                       else f', the last {(self.recorded_end_ns - last) * 1e-9:.3f} s')
            lines.append(f'    {topic:<{width}} {lost:>8} of {recorded[topic]}{seconds}')
        return lines

    def _count(self, topic: str) -> int:
        return self.topics[topic].count if topic in self.topics else 0


def recorded_metadata(bag: Path) -> tuple[dict, int | None] | None:
    """
    (topic -> message count, end of the recording in ns) from ``metadata.yaml``, or None.

    None when there is none or it cannot be read.
    """
    from dodo_sim.safe_yaml import read_yaml_file
    try:   # the bag's file: read at a bounded cost (dodo_sim.safe_yaml)
        info = read_yaml_file(bag / 'metadata.yaml')['rosbag2_bagfile_information']
        counts = {t['topic_metadata']['name']: int(t['message_count'])
                  for t in info['topics_with_message_count']}
    except (OSError, KeyError, TypeError, ValueError):
        return None
    try:
        end = int(info['starting_time']['nanoseconds_since_epoch']) + int(
            info['duration']['nanoseconds'])
    except (KeyError, TypeError, ValueError):
        end = None
    return counts, end


def mcap_files(bag_dir: Path) -> list[Path]:
    return sorted(p for p in bag_dir.glob('*.mcap') if p.is_file())


def _hash_and_def(schema) -> tuple[str, str]:
    """(message definition text, RIHS01 hash) of an MCAP schema record."""
    from rosbags.typesys import get_types_from_msg, get_typestore, Stores
    text = schema.data.decode() if isinstance(schema.data, (bytes, bytearray, memoryview)) \
        else str(schema.data)
    if schema.encoding != 'ros2msg':
        raise ValueError(f'schema {schema.name!r} has encoding {schema.encoding!r}; only ros2msg '
                         f'bags (rosbags, rosbag2) are recovered')
    store = get_typestore(Stores.EMPTY)
    store.register(get_types_from_msg(text, schema.name))
    return text, store.hash_rihs01(schema.name)


def _qos(channel) -> list:
    from rosbags.rosbag2.metadata import parse_qos
    text = channel.metadata.get('offered_qos_profiles', '') if channel.metadata else ''
    if not text:
        return []
    try:
        return parse_qos(text)
    except (ValueError, KeyError, TypeError):
        return []


class _Rebuild:
    """The new bag, fed record by record."""

    def __init__(self, out_dir: Path, report: RecoveryReport):
        from rosbags.rosbag2 import StoragePlugin, Writer
        self.writer = Writer(out_dir, version=9, storage_plugin=StoragePlugin.MCAP)
        self.writer.open()
        self.report = report
        self.schemas: dict = {}
        self.channels: dict = {}       # (file, channel id) -> Channel record
        self.connections: dict = {}    # (file, channel id) -> rosbags connection

    def record(self, key: str, record) -> None:
        from mcap.records import Channel, Message, Schema
        if isinstance(record, Schema):
            self.schemas[(key, record.id)] = record
        elif isinstance(record, Channel):
            self.channels[(key, record.id)] = record
        elif isinstance(record, Message):
            conn = self._connection(key, record.channel_id)
            if conn is None:
                self.report.messages_without_channel += 1
                return
            self.writer.write(conn, int(record.log_time), bytes(record.data))
            self.report.topics[conn.topic].add(int(record.log_time))

    def _connection(self, key: str, channel_id: int):
        conn = self.connections.get((key, channel_id))
        if conn is not None:
            return conn
        channel = self.channels.get((key, channel_id))
        if channel is None:
            return None
        schema = self.schemas.get((key, channel.schema_id))
        if schema is None:
            return None
        msgdef, rihs01 = _hash_and_def(schema)
        conn = self.writer.add_connection(channel.topic, schema.name, msgdef=msgdef,
                                          rihs01=rihs01, offered_qos_profiles=_qos(channel))
        self.connections[(key, channel_id)] = conn
        self.report.topics.setdefault(channel.topic, TopicSummary(channel.topic, schema.name))
        return conn

    def close(self) -> None:
        self.writer.close()


def decompress_chunk(chunk) -> bytes:
    """
    Return the records of an MCAP chunk, decompressed within its declared size.

    The size is checked first (:func:`dodo_sim.tools.bag.check_chunk_size`): a zstd frame of
    65 kB can stand for gigabytes (the ``mcap`` library decompresses to whatever the frame
    says). CRC checked. ValueError on a bad chunk.
    """
    import zlib

    from dodo_sim.tools.bag import check_chunk_size
    declared = chunk.uncompressed_size
    data = bytes(chunk.data)
    check_chunk_size(chunk.compression, declared, data[:18], 'chunk')
    if chunk.compression == 'zstd':
        import zstandard
        try:
            data = zstandard.ZstdDecompressor().decompress(data, max_output_size=declared)
        except zstandard.ZstdError as exc:
            raise ValueError(f'chunk: zstd: {exc}') from None
    elif chunk.compression == 'lz4':
        import lz4.frame
        decompressor = lz4.frame.LZ4FrameDecompressor()
        try:
            data = decompressor.decompress(data, max_length=declared)
        except RuntimeError as exc:
            raise ValueError(f'chunk: lz4: {exc}') from None
        if not decompressor.eof:
            raise ValueError(f'chunk: lz4 data longer than the {declared} bytes declared')
    elif chunk.compression:
        raise ValueError(f'chunk: unknown compression {chunk.compression!r}')
    if len(data) != declared:
        raise ValueError(f'chunk holds {len(data)} of {declared} bytes')
    if chunk.uncompressed_crc and zlib.crc32(data) != chunk.uncompressed_crc:
        raise ValueError('chunk CRC mismatch')
    return data


def chunk_records(chunk) -> list:
    """
    Yield the Schema, Channel and Message records of an MCAP chunk.

    Every record is checked against the chunk's bounds (the mcap library's ``breakup_chunk`` reads
    a record whose length runs past the chunk as a message holding the rest). Raises ValueError on
    a damaged chunk.
    """
    from io import BytesIO

    from mcap.data_stream import ReadDataStream
    from mcap.opcode import Opcode
    from mcap.records import Channel, Message, Schema

    data = decompress_chunk(chunk)
    length = len(data)
    records, pos = [], 0
    while pos < length:
        if pos + 9 > length:
            raise ValueError(f'record header cut at byte {pos} of {length}')
        opcode = data[pos]
        size = int.from_bytes(data[pos + 1:pos + 9], 'little')
        start, end = pos + 9, pos + 9 + size
        if end > length:
            raise ValueError(f'record of {size} bytes at byte {pos} runs past the chunk '
                             f'({length} bytes)')
        body = ReadDataStream(BytesIO(data[start:end]))
        if opcode == Opcode.MESSAGE:
            records.append(Message.read(body, size))
        elif opcode == Opcode.SCHEMA:
            records.append(Schema.read(body))
        elif opcode == Opcode.CHANNEL:
            records.append(Channel.read(body))
        pos = end
    return records


def _read_file(path: Path, rebuild: _Rebuild, report: RecoveryReport) -> None:
    """Feed every complete record of one MCAP file to ``rebuild``."""
    from mcap.exceptions import McapError
    from mcap.records import Chunk, Footer, MessageIndex
    from mcap.stream_reader import StreamReader

    key = path.name
    size = path.stat().st_size
    good_end = 0
    pending_lost: LostChunk | None = None
    with path.open('rb') as stream:
        reader = StreamReader(stream, emit_chunks=True, record_size_limit=size)
        records = reader.records
        while True:
            try:
                record = next(records)
            except StopIteration:
                break
            except (McapError, EOFError, struct.error, ValueError, UnicodeDecodeError):
                break           # an incomplete record: the end of what can be read
            good_end = stream.tell()
            if isinstance(record, Chunk):
                pending_lost = None
                try:
                    inner = chunk_records(record)
                except (McapError, ValueError, struct.error, EOFError, UnicodeDecodeError
                        ) as exc:
                    pending_lost = LostChunk(key, good_end, f'unreadable: {exc}',
                                             record.message_start_time,
                                             record.message_end_time)
                    report.lost_chunks.append(pending_lost)
                    continue
                report.chunks += 1
                for item in inner:
                    rebuild.record(key, item)
            elif isinstance(record, MessageIndex):
                if pending_lost is not None:
                    channel = rebuild.channels.get((key, record.channel_id))
                    topic = (channel.topic if channel is not None
                             else f'channel {record.channel_id}')
                    pending_lost.counts[topic] = len(record.records)
            elif isinstance(record, Footer):
                report.complete = True
            else:
                rebuild.record(key, record)
    report.truncated_bytes += size - good_end if not report.complete else 0


def recover(bag_dir: str | os.PathLike, out_dir: str | os.PathLike | None = None
            ) -> RecoveryReport:
    """Rebuild the bag in ``bag_dir`` (in place, or into the new directory ``out_dir``)."""
    bag = Path(bag_dir)
    if not bag.is_dir():
        raise FileNotFoundError(f'{bag} is not a directory')
    files = mcap_files(bag)
    if not files:
        raise ValueError(f'{bag} holds no .mcap file to recover')
    from dodo_sim.tools.bag import mcap_problem
    problems = {path: mcap_problem(path) for path in files}
    for path, problem in problems.items():
        if problem is not None and 'truncated' not in problem:
            raise ValueError(f'{problem}: nothing to recover')
    truncated = any(problems.values())
    has_metadata = (bag / 'metadata.yaml').is_file()
    if out_dir is None and has_metadata and not truncated:
        raise ValueError(f'{bag} has a metadata.yaml and its MCAP file(s) their footer: it was '
                         f'closed cleanly, nothing to recover (use --out DIR to rewrite it '
                         f'anyway)')
    in_place = out_dir is None
    if in_place:
        staging = bag.parent / f'.{bag.name}.recovering'
        if staging.exists():
            shutil.rmtree(staging)
        staging.mkdir()
        target = staging / bag.name
    else:
        target = Path(out_dir)
        if target.exists():
            raise ValueError(f'{target} exists already; choose a new directory')
    report = RecoveryReport(source=bag, output=bag if in_place else target, files=files)
    metadata = recorded_metadata(bag) if has_metadata else None
    if metadata is not None:
        report.recorded_counts, report.recorded_end_ns = metadata
    rebuild = _Rebuild(target, report)
    try:
        for path in files:
            _read_file(path, rebuild, report)
    finally:
        rebuild.close()
    if in_place:
        originals = files + ([bag / 'metadata.yaml'] if has_metadata else [])
        for path in originals:
            kept = path.with_name(path.name + DAMAGED_SUFFIX)
            path.rename(kept)
            report.kept_original.append(kept)
        for item in target.iterdir():
            item.rename(bag / item.name)
        shutil.rmtree(staging)
    return report


__all__ = ['recover', 'RecoveryReport', 'TopicSummary', 'LostChunk', 'DAMAGED_SUFFIX']
