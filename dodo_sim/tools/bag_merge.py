# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
Merge the driver's own state log into the run's bag: one bag holding every 1 kHz driver state.

On hardware nothing waits for the recorder: on a loaded machine its reader falls behind and the
bag misses /joint_states (docs/hardware.md). The driver keeps every state it published in its own
MCAP file (:mod:`dodo_sim.hardware.state_log`). :func:`merge_state_log` rewrites the closed bag
with the states the recorder missed added, so the bag itself is complete:

* the recorder's own messages are kept as recorded (bag times, connections, QoS, definitions);
* a logged state whose header stamp the bag already holds is not written again (no duplicates);
  the missing ones are written on the bag's /joint_states connection with the bag time = their
  header stamp (the driver's wall-clock publish time), or the bag time of the recorded state
  just before them when that is later (the recorder's bag time is when it took the message, a
  few ms after the stamp), so /joint_states stay in stamp order in bag order;
* the result is one MCAP storage file in time order with a fresh ``metadata.yaml`` (counts,
  duration) written by rosbags, so rosbags' AnyReader, the ``mcap`` readers, ``dodo replay``,
  the plots and ``dodo bag info`` read it unchanged;
* the new bag is built beside the old one and swapped in only when complete and checked; the
  driver's log is then removed (``remove_log``): the bag holds everything it held.

``/tf`` computed by the recorder from /joint_states is not extended to the merged states (tf
consumers interpolate; ``tf_period_s`` thins it anyway).
"""
from __future__ import annotations

from dataclasses import dataclass
import heapq
import os
from pathlib import Path
import shutil

#: CDR little-endian encapsulation header (ROS 2 on x86/ARM): the header stamp follows it
CDR_LE = b'\x00\x01'


@dataclass
class MergeReport:
    """What :func:`merge_state_log` found and did."""

    topic: str
    recorded: int           # the bag's /joint_states before the merge
    logged: int             # states in the driver's log
    added: int              # logged states the bag did not hold, now in it
    unmatched: int          # recorded states the log does not hold (another publisher)
    rewritten: bool         # the bag was rewritten (False: it already held every state)

    @property
    def total(self) -> int:
        return self.recorded + self.added

    def line(self) -> str:
        """Return one line for the run's summary."""
        if not self.added:
            return (f'bag: all {self.total} {self.topic.lstrip("/")} the driver logged were '
                    f'recorded')
        return (f'bag: {self.total} {self.topic.lstrip("/")}: {self.recorded} recorded live + '
                f"{self.added} the recorder missed, merged from the driver's log")


def header_stamp_ns(data: bytes) -> int:
    """
    Header stamp (ns) of a CDR-serialized message that starts with a std_msgs/Header.

    The stamp is the first field: int32 sec, uint32 nanosec after the 4-byte encapsulation.
    """
    import struct
    if bytes(data[:2]) != CDR_LE:
        raise ValueError(f'not little-endian CDR (encapsulation {bytes(data[:4]).hex()})')
    sec, nanosec = struct.unpack_from('<iI', data, 4)
    return sec * 1_000_000_000 + nanosec


def _log_messages(log_path: Path) -> tuple[str, object, list]:
    """(topic, schema, [(stamp ns, data)] in stamp order) of the driver's one-channel log."""
    from mcap.reader import make_reader
    topic, schema, rows = None, None, []
    with log_path.open('rb') as fh:
        for sch, channel, message in make_reader(fh).iter_messages(log_time_order=False):
            if topic is None:
                topic, schema = channel.topic, sch
            elif channel.topic != topic:
                raise ValueError(f'{log_path}: more than one topic ({topic}, {channel.topic})')
            rows.append((header_stamp_ns(message.data), bytes(message.data)))
    if topic is None:
        raise ValueError(f'{log_path} holds no message')
    rows.sort(key=lambda row: row[0])
    return topic, schema, rows


def _bag_times(missing: list, taken: list) -> list:
    """
    Return (bag time, data) of the missing states: their stamp, kept in stamp order.

    The recorder's bag time of a state is when it took it (later than the stamp); a missing
    state gets ``max(stamp, bag time of the recorded state just before it)``, so in bag order
    the merged /joint_states stay in stamp order.
    """
    import bisect
    stamps = [stamp for stamp, _ in taken]
    out = []
    for stamp, data in missing:
        before = bisect.bisect_left(stamps, stamp) - 1
        out.append((max(stamp, taken[before][1]) if before >= 0 else stamp, data))
    return out


def _check_complete(bag: Path, log_path: Path) -> None:
    from dodo_sim.tools.bag import check_chunks, mcap_problem
    if not (bag / 'metadata.yaml').is_file():
        raise ValueError(f'{bag} has no metadata.yaml: close or recover the bag first '
                         f'(dodo bag recover {bag})')
    for path in sorted(bag.glob('*.mcap')) + [log_path]:
        problem = mcap_problem(path)
        if problem is not None:
            raise ValueError(problem)
        check_chunks(path)       # the mcap reader decompresses a chunk to whatever it says


def merge_state_log(bag_dir: str | os.PathLike, log_path: str | os.PathLike,
                    remove_log: bool = True) -> MergeReport:
    """
    Add the states of the driver's log that the bag ``bag_dir`` misses (see module docs).

    Raises ValueError (the bag or the log is not complete, not CDR) or OSError; the bag is then
    unchanged.
    """
    from rosbags.highlevel import AnyReader
    from rosbags.rosbag2 import StoragePlugin, Writer

    from dodo_sim.tools.bag import make_typestore
    from dodo_sim.tools.bag_recover import _hash_and_def

    bag, log_path = Path(bag_dir), Path(log_path)
    _check_complete(bag, log_path)
    topic, schema, logged = _log_messages(log_path)
    with AnyReader([bag], default_typestore=make_typestore()) as reader:
        states = [c for c in reader.connections if c.topic == topic]
        # (header stamp, bag time) of the recorded states, in stamp order
        taken = sorted((header_stamp_ns(raw), t)
                       for _, t, raw in reader.messages(connections=states))
        recorded = {stamp for stamp, _ in taken}
        recorded_count = sum(c.msgcount for c in states)
        logged_stamps = {stamp for stamp, _ in logged}
        missing = _bag_times([(stamp, data) for stamp, data in logged if stamp not in recorded],
                             taken)
        report = MergeReport(topic=topic, recorded=recorded_count, logged=len(logged),
                             added=len(missing), unmatched=len(recorded - logged_stamps),
                             rewritten=bool(missing))
        if missing:
            staging = bag.parent / f'.{bag.name}.merging'
            if staging.exists():
                shutil.rmtree(staging)
            staging.mkdir()
            try:
                target = staging / bag.name
                writer = Writer(target, version=9, storage_plugin=StoragePlugin.MCAP)
                writer.open()
                try:
                    out = {}
                    for conn in reader.connections:
                        out[conn.id] = writer.add_connection(
                            conn.topic, conn.msgtype, msgdef=conn.msgdef.data or None,
                            rihs01=conn.digest or None,
                            serialization_format=conn.ext.serialization_format,
                            offered_qos_profiles=conn.ext.offered_qos_profiles)
                    if states:
                        into = out[states[0].id]
                    else:       # the recorder kept none: the log's schema makes the connection
                        msgdef, rihs01 = _hash_and_def(schema)
                        into = writer.add_connection(topic, schema.name, msgdef=msgdef,
                                                     rihs01=rihs01)
                    recorded_stream = ((t, out[c.id], raw) for c, t, raw in reader.messages())
                    added_stream = ((t, into, data) for t, data in missing)
                    for log_ns, conn, data in heapq.merge(recorded_stream, added_stream,
                                                          key=lambda m: m[0]):
                        writer.write(conn, log_ns, data)
                finally:
                    writer.close()
                _swap_in(bag, target, staging, recorded_count + len(missing), topic)
            finally:
                shutil.rmtree(staging, ignore_errors=True)
    if remove_log:
        log_path.unlink()
    return report


def _swap_in(bag: Path, target: Path, staging: Path, expected: int, topic: str) -> None:
    """Check the rebuilt bag's count, then replace ``bag`` by it (the old one removed last)."""
    from rosbags.highlevel import AnyReader
    with AnyReader([target]) as reader:
        got = sum(c.msgcount for c in reader.connections if c.topic == topic)
    if got != expected:
        raise ValueError(f'merged bag holds {got} {topic}, expected {expected}: bag unchanged')
    old = staging / (bag.name + '.before_merge')
    bag.rename(old)
    target.rename(bag)


__all__ = ['merge_state_log', 'MergeReport', 'header_stamp_ns']
