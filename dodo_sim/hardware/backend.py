# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
Actuator backends: how one control cycle reaches the hardware.

:class:`ActuatorBackend` is the interface the driver core uses: one :meth:`exchange` per cycle
sends a frame to every actuator (a command or a special frame) and returns what came back.
:class:`CanBackend` implements it for MIT-mode actuators and the sensor board on one python-can
bus (any interface: socketcan, pcan, slcan, kvaser, virtual). A backend for another protocol
(mjbots moteus over CAN-FD, ODrive CAN Simple) implements the same method with its own frames.

Per cycle, :class:`CanBackend` (1) drains frames left from the previous cycle (late replies
still update the state and are counted), (2) sends the Sync frame and one frame per actuator,
(3) receives until every actuator that got a frame and the sensor board have answered or
``reply_timeout`` has passed. A send that fails (``ENOBUFS``: the transmit queue is full, e.g.
no node acknowledges or the controller is bus-off) is counted per errno and the cycle goes on;
error frames (socketcan) update the bus state (error-active, warning, error-passive, bus-off,
restarted).
"""
from __future__ import annotations

import abc
from dataclasses import dataclass, field
import errno
import time
from typing import NamedTuple, Sequence

import can

from .config import ActuatorConfig
from .protocol import BoardSample, MitCommand, WireFormat

#: socketcan error-frame classes (linux/can/error.h) and controller status bits (data[1]).
CAN_ERR_CRTL = 0x004
CAN_ERR_BUSOFF = 0x040
CAN_ERR_RESTARTED = 0x100
CAN_ERR_CRTL_WARNING = 0x04 | 0x08
CAN_ERR_CRTL_PASSIVE = 0x10 | 0x20
CAN_ERR_CRTL_ACTIVE = 0x40

BUS_STATES = ('error-active', 'error-warning', 'error-passive', 'bus-off')


class ActuatorFrame(NamedTuple):
    """
    One actuator's frame of a cycle.

    ``kind`` is 'command' (with ``command``, actuator side), 'enable', 'disable' or 'zero'.
    """

    can_id: int
    kind: str
    command: MitCommand | None = None


@dataclass
class Exchange:
    """
    Result of one cycle on the bus.

    Fields:
        replies: CAN id -> the newest reply received in this cycle.
        board: the sensor board sample answering this cycle's Sync (None if missing).
        sent: CAN ids whose frame was sent.
        tx_errors: failed sends this cycle.
        late: frames of earlier cycles found when draining.
        t_sent / t_received: perf_counter s after the last send / the last expected reply (or
            the deadline).
    """

    replies: dict = field(default_factory=dict)
    board: BoardSample | None = None
    sent: tuple = ()
    tx_errors: int = 0
    late: int = 0
    t_start: float = 0.0
    t_sent: float = 0.0
    t_received: float = 0.0


class ActuatorBackend(abc.ABC):
    """One control cycle against the hardware (see module docs)."""

    @abc.abstractmethod
    def exchange(self, frames: Sequence[ActuatorFrame], sequence: int,
                 reply_timeout: float) -> Exchange:
        """Send ``frames`` (and the sensor board's Sync with ``sequence``), collect replies."""

    @abc.abstractmethod
    def close(self) -> None:
        """Release the bus."""

    #: diagnostics counters (name -> number) and the bus state
    counters: dict
    bus_state: str


def open_bus(interface: str, channel: str, bitrate: int | None = None) -> can.BusABC:
    """Return a python-can bus (ValueError naming interface and channel if it cannot be opened)."""
    kwargs = {}
    if bitrate and interface not in ('socketcan', 'virtual'):
        kwargs['bitrate'] = bitrate
    try:
        return can.Bus(interface=interface, channel=channel, **kwargs)
    except (can.CanError, OSError, ValueError, ImportError) as exc:
        raise ValueError(f'cannot open CAN bus interface={interface!r} channel={channel!r}: '
                         f'{exc} (socketcan: ip link set {channel} up type can bitrate '
                         f'{bitrate or 1000000})') from exc


class CanBackend(ActuatorBackend):
    """MIT-mode actuators and the sensor board on one python-can bus."""

    def __init__(self, bus: can.BusABC, actuators: Sequence[ActuatorConfig],
                 board: bool = True, wire: WireFormat | None = None,
                 clock=time.perf_counter):
        self.bus = bus
        self.wire = wire or WireFormat()
        self.actuators = tuple(actuators)
        self.ranges = {a.can_id: a.ranges for a in self.actuators}
        self.board = board
        self.clock = clock
        self.bus_state = 'error-active'
        self.counters = {'tx_frames': 0, 'tx_errors': 0, 'tx_enobufs': 0, 'rx_frames': 0,
                         'error_frames': 0, 'bus_off_events': 0, 'late_frames': 0,
                         'unknown_frames': 0, 'board_sequence_mismatch': 0}
        self._board_angles: dict | None = None
        self._board_rates: dict | None = None

    def close(self) -> None:
        self.bus.shutdown()

    # -- one cycle ------------------------------------------------------------------------------

    def _take_queued(self, result: Exchange) -> None:
        """Handle the frames queued since the last cycle (late ones counted in ``result``)."""
        while True:
            msg = self.bus.recv(0.0)
            if msg is None:
                break
            result.late += self._handle(msg, result, sequence=None)
        self._board_angles = self._board_rates = None

    def exchange(self, frames: Sequence[ActuatorFrame], sequence: int,
                 reply_timeout: float) -> Exchange:
        clock = self.clock
        result = Exchange(t_start=clock())
        # 1. frames of earlier cycles
        self._take_queued(result)
        result.replies.clear()
        result.board = None
        # 2. send
        sent = []
        if self.board:
            self._send(self.wire.sync_id, self.wire.encode_sync(sequence), result)
        for frame in frames:
            ranges = self.ranges[frame.can_id]
            if frame.kind == 'command':
                data = self.wire.encode_command(frame.command, ranges)
            else:
                data = self.wire.special_frame(frame.kind)
            if self._send(frame.can_id, data, result):
                sent.append(frame.can_id)
        result.sent = tuple(sent)
        result.t_sent = clock()
        # 3. receive
        return self._collect(result, sent, sequence, reply_timeout)

    def _collect(self, result: Exchange, sent: list, sequence: int,
                 reply_timeout: float) -> Exchange:
        """
        Receive the replies of one cycle into ``result``.

        It waits until every actuator in ``sent`` (and the sensor board) answered or
        ``reply_timeout`` passed since ``result.t_sent``; the late frames are counted.
        """
        clock = self.clock
        expected = set(sent)
        deadline = result.t_sent + reply_timeout
        board_pending = self.board
        while expected or board_pending:
            # past the deadline, frames already queued are still taken (poll without waiting)
            msg = self.bus.recv(max(0.0, deadline - clock()))
            if msg is None:
                break
            self._handle(msg, result, sequence)
            expected.difference_update(result.replies)
            board_pending = self.board and result.board is None
        result.t_received = clock()
        self.counters['late_frames'] += result.late
        return result

    def _send(self, arbitration_id: int, data: bytes, result: Exchange) -> bool:
        msg = can.Message(arbitration_id=arbitration_id, data=data, is_extended_id=False)
        try:
            self.bus.send(msg, timeout=0.0)
        except can.CanError as exc:
            result.tx_errors += 1
            self.counters['tx_errors'] += 1
            code = getattr(exc, 'error_code', None)
            if code == errno.ENOBUFS or 'No buffer space' in str(exc):
                self.counters['tx_enobufs'] += 1
            return False
        self.counters['tx_frames'] += 1
        return True

    def _handle(self, msg: can.Message, result: Exchange, sequence: int | None) -> int:
        """Use one received frame; returns 1 if it belongs to the current cycle's data."""
        if msg.is_error_frame:
            self._error_frame(msg)
            return 0
        self.counters['rx_frames'] += 1
        wire = self.wire
        arbitration_id = msg.arbitration_id
        if arbitration_id == wire.reply_id and len(msg.data) >= 6:
            data = bytes(msg.data) + bytes(8 - len(msg.data))   # 6-byte firmware: no temp/error
            reply = wire.decode_reply(data, self.ranges)
            if reply is None:
                self.counters['unknown_frames'] += 1
                return 0
            result.replies[reply.motor_id] = reply
            return 1
        if arbitration_id == wire.boom_angles_id:
            self._board_angles = wire.decode_boom_angles(msg.data)
        elif arbitration_id == wire.boom_rates_id:
            self._board_rates = wire.decode_boom_rates(msg.data)
        else:
            self.counters['unknown_frames'] += 1
            return 0
        if self._board_angles is not None and self._board_rates is not None:
            if sequence is None or self._board_angles['sequence'] == sequence & 0xFF:
                result.board = wire.board_sample(self._board_angles, self._board_rates)
            else:
                self.counters['board_sequence_mismatch'] += 1
            self._board_angles = self._board_rates = None
        return 1

    def _error_frame(self, msg: can.Message) -> None:
        self.counters['error_frames'] += 1
        classes = msg.arbitration_id
        if classes & CAN_ERR_BUSOFF:
            if self.bus_state != 'bus-off':
                self.counters['bus_off_events'] += 1
            self.bus_state = 'bus-off'
        elif classes & CAN_ERR_RESTARTED:
            self.bus_state = 'error-active'
        elif classes & CAN_ERR_CRTL and len(msg.data) > 1:
            status = msg.data[1]
            if status & CAN_ERR_CRTL_PASSIVE:
                self.bus_state = 'error-passive'
            elif status & CAN_ERR_CRTL_WARNING:
                self.bus_state = 'error-warning'
            elif status & CAN_ERR_CRTL_ACTIVE:
                self.bus_state = 'error-active'

    def note_traffic(self) -> None:
        """
        Note that replies are arriving: a bus that was off has recovered.

        This serves interfaces without the 'restarted' error frame.
        """
        if self.bus_state == 'bus-off':
            self.bus_state = 'error-active'


def bus_off_frame() -> can.Message:
    """Return the socketcan error frame announcing bus-off."""
    return can.Message(arbitration_id=CAN_ERR_BUSOFF, is_error_frame=True, data=bytes(8),
                       is_extended_id=False)


def restarted_frame() -> can.Message:
    """Return the socketcan error frame announcing the controller restarted after bus-off."""
    return can.Message(arbitration_id=CAN_ERR_RESTARTED, is_error_frame=True, data=bytes(8),
                       is_extended_id=False)


def enobufs_error() -> can.CanOperationError:
    """Return the error python-can's socketcan raises when the transmit queue is full."""
    return can.CanOperationError(f'Failed to transmit: [Errno {errno.ENOBUFS}] '
                                 f'No buffer space available', error_code=errno.ENOBUFS)


__all__ = ['ActuatorBackend', 'ActuatorFrame', 'CanBackend', 'Exchange', 'open_bus',
           'bus_off_frame', 'restarted_frame', 'enobufs_error', 'BUS_STATES']
