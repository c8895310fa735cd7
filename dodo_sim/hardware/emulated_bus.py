# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
The emulated hardware's CAN bus: an in-process channel with python-can's bus interface.

:class:`EmulatedChannel` is what python-can's ``virtual`` interface is (every end of a channel
receives, in order, a copy of every frame another end sends; none receives its own), made for
one process at 1 kHz: no module-level channel registry, no ``deepcopy`` of each frame and no
locked ``queue.Queue`` per receiver. Those cost about 20 us a frame sent and received, 14 frames
a driver cycle counting both sides; a copy through ``can.Message`` and a ``collections.deque``
cost 2-3 us (bench/bench_driver.py, "CAN transport"). Appends and pops of a deque are atomic in
CPython, so a fault injected from another thread may send too. The backends see a python-can bus:
:class:`ChannelEnd` has ``send``, ``recv`` and ``shutdown`` with python-can's meaning and errors.

:class:`DriverSideBus` is the driver's end as the emulator hands it out
(:meth:`dodo_sim.hardware.emulator.Emulator.driver_bus`): sends fail while an injected bus fault
lasts, and every receive first lets the emulator answer what waits for it.
"""
from __future__ import annotations

from collections import deque
import time

import can

from .backend import enobufs_error


class EmulatedChannel:
    """One CAN bus in this process; :meth:`end` attaches a participant."""

    def __init__(self, name: str):
        self.name = name
        self._inboxes: list = []

    def end(self) -> 'ChannelEnd':
        """Return a new participant's end of the bus (it receives frames sent from now on)."""
        return ChannelEnd(self)


class ChannelEnd:
    """
    One participant's end of an :class:`EmulatedChannel`, duck-typing ``can.BusABC``.

    ``recv`` never blocks: the emulator answers synchronously before the driver receives, so a
    frame is either waiting or will not come within the call.
    """

    def __init__(self, channel: EmulatedChannel):
        self.channel = channel
        self.channel_info = f'emulated channel {channel.name}'
        self._inbox: deque = deque()
        self._open = True
        channel._inboxes.append(self._inbox)

    def send(self, msg: can.Message, timeout: float | None = None) -> None:
        """Put a copy of ``msg`` (stamped now, received) in every other end's inbox."""
        if not self._open:
            raise can.CanOperationError('Cannot operate on a closed bus')
        stamp = time.time()
        data = bytes(msg.data)
        for inbox in self.channel._inboxes:
            if inbox is not self._inbox:
                inbox.append(can.Message(
                    timestamp=stamp, arbitration_id=msg.arbitration_id,
                    is_extended_id=msg.is_extended_id, is_remote_frame=msg.is_remote_frame,
                    is_error_frame=msg.is_error_frame, dlc=msg.dlc, data=data,
                    channel=self.channel.name, is_rx=True, check=False))

    def recv(self, timeout: float | None = None) -> can.Message | None:
        """Return the oldest frame waiting, or None."""
        if not self._open:
            raise can.CanOperationError('Cannot operate on a closed bus')
        try:
            return self._inbox.popleft()
        except IndexError:
            return None

    def shutdown(self) -> None:
        """Leave the channel (frames sent later are not kept for this end)."""
        if self._open:
            self._open = False
            self.channel._inboxes.remove(self._inbox)


class DriverSideBus:
    """
    The driver's end of the emulator's bus, with the emulator's driver-side faults.

    It duck-types the python-can bus methods the backends use.
    """

    def __init__(self, emulator, end: ChannelEnd):
        self.emulator = emulator
        self.inner = end
        self.channel_info = f'emulated ({emulator.channel}, {emulator.config.mode})'

    def send(self, msg: can.Message, timeout: float | None = None) -> None:
        emulator = self.emulator
        if emulator._driver_send_fails():
            if emulator.config.mode == 'lockstep' and msg.arbitration_id == emulator.wire.sync_id:
                emulator._step_physics(emulator.now())   # the world goes on while the bus is off
            raise enobufs_error()
        self.inner.send(msg, timeout)

    def recv(self, timeout: float | None = None) -> can.Message | None:
        self.emulator.service()
        return self.inner.recv(0.0)

    def shutdown(self) -> None:
        self.inner.shutdown()


__all__ = ['ChannelEnd', 'DriverSideBus', 'EmulatedChannel']
