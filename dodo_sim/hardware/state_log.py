# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
The driver's own log of every state it publishes.

It exists so that nothing depends on a recorder keeping up (issue 16 item 3): a ring of
preallocated blocks in memory during the run (:class:`StateRing`, a few microseconds per cycle:
copies of the stamp, q, v and effort), written as one MCAP file (ROS 2 profile, CDR) when the
driver stops (:class:`StateLog`).

On hardware nothing waits for the recorder: on a loaded machine its reliable reader falls more
than the writer's history behind and misses /joint_states (10432 of 11297, down to half, in
earlier runs). Serializing and appending each message to an MCAP writer in the loop was measured
at 90 + 70 us per message on the loaded 2-core machine (load 15): too much for a 1 ms cycle, so
the file is written after the run (about 0.15 ms per state: 1.5 s for 10 s at 1 kHz); a driver
killed with SIGKILL loses it (SIGINT/SIGTERM and stop_after write it). Memory: 8 (3n + 1) bytes a
cycle, 104 B for the hopper's 4 joints (0.4 MB a minute at 1 kHz). The file is a ROS 2 MCAP
stream as rosbag2 writes it (schema encoding ``ros2msg``, message encoding ``cdr``):
``ros2 bag info <file>``, Foxglove and ``mcap_ros2`` read it. It is written beside the bag
(the recorder still owns the bag's files while the run lasts); at the end ``dodo hop`` merges
the states the recorder missed into the closed bag (:mod:`dodo_sim.tools.bag_merge`) and removes
it.

No rclpy here: the node passes bytes it serialized (``rclpy.serialization``).
"""
from __future__ import annotations

from pathlib import Path

#: Bytes buffered per MCAP chunk before it is written out (uncompressed: no compression spike in
#: the 1 kHz loop; ~130 B per two-joint JointState, so a chunk every ~2 s).
CHUNK_BYTES = 256 * 1024

#: sensor_msgs/msg/JointState with its dependencies, as rosbag2 stores ``ros2msg`` schemas.
JOINT_STATE_DEFINITION = """std_msgs/Header header
string[] name
float64[] position
float64[] velocity
float64[] effort
================================================================================
MSG: std_msgs/Header
builtin_interfaces/Time stamp
string frame_id
================================================================================
MSG: builtin_interfaces/Time
int32 sec
uint32 nanosec
"""


def state_log_path(bag: str | Path) -> Path:
    """Where the driver's log of a run with bag directory ``bag`` goes: ``<bag>.driver.mcap``."""
    bag = Path(bag)
    return bag.with_name(bag.name + '.driver.mcap')


class StateLog:
    """
    Append serialized sensor_msgs/JointState messages to an MCAP file.

    :meth:`close` writes the summary (message counts). ``logged`` counts what was appended.
    """

    def __init__(self, path: str | Path, topic: str):
        from mcap.writer import CompressionType, Writer
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._file = open(self.path, 'wb')
        self._writer = Writer(self._file, chunk_size=CHUNK_BYTES,
                              compression=CompressionType.NONE)
        self._writer.start(profile='ros2', library='dodo_sim driver')
        schema = self._writer.register_schema('sensor_msgs/msg/JointState', 'ros2msg',
                                              JOINT_STATE_DEFINITION.encode())
        self._channel = self._writer.register_channel(topic, 'cdr', schema)
        self.logged = 0
        self._closed = False

    def write(self, stamp_ns: int, data: bytes) -> None:
        """
        One message: ``data`` its CDR bytes, ``stamp_ns`` its header stamp.

        The stamp is also the message's log and publish time.
        """
        self._writer.add_message(self._channel, stamp_ns, data, stamp_ns, self.logged)
        self.logged += 1

    def close(self) -> None:
        if not self._closed:
            self._closed = True
            try:
                self._writer.finish()
            finally:
                self._file.close()


class StateRing:
    """
    Per-cycle rows (stamp ns, q, v, effort) in preallocated blocks of ``block_rows``.

    Grows by whole blocks (no copy of what is kept).
    """

    def __init__(self, n_joints: int, block_rows: int = 65536):
        import numpy as np
        self._np = np
        self.n = int(n_joints)
        self.block_rows = int(block_rows)
        self._blocks: list = []
        self._stamps: list = []
        self._row = self.block_rows          # the next free row of the last block
        self.count = 0

    def append(self, stamp_ns: int, q, v, effort) -> None:
        if self._row == self.block_rows:
            self._blocks.append(self._np.empty((self.block_rows, 3 * self.n)))
            self._stamps.append(self._np.empty(self.block_rows, dtype=self._np.int64))
            self._row = 0
        block, n, r = self._blocks[-1], self.n, self._row
        block[r, :n] = q
        block[r, n:2 * n] = v
        block[r, 2 * n:] = effort
        self._stamps[-1][r] = stamp_ns
        self._row += 1
        self.count += 1

    def rows(self):
        """(stamp ns, q, v, effort) of every row, oldest first."""
        n = self.n
        for k, (block, stamps) in enumerate(zip(self._blocks, self._stamps)):
            used = self._row if k == len(self._blocks) - 1 else self.block_rows
            for r in range(used):
                yield int(stamps[r]), block[r, :n], block[r, n:2 * n], block[r, 2 * n:]


__all__ = ['StateRing', 'StateLog', 'state_log_path', 'JOINT_STATE_DEFINITION', 'CHUNK_BYTES']
