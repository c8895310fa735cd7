# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
The emulated hardware's in-process CAN bus (dodo_sim/hardware/emulated_bus.py).

It stands in for python-can's ``virtual`` interface, so it is checked against that interface:
the same frames sent through both reach the other participants the same way.
"""
from __future__ import annotations

import itertools

import can
from dodo_sim.hardware.backend import bus_off_frame
from dodo_sim.hardware.emulated_bus import EmulatedChannel
import pytest

FRAMES = [can.Message(arbitration_id=0x80, data=b'\x07', is_extended_id=False),
          can.Message(arbitration_id=0x01, data=bytes(range(8)), is_extended_id=False),
          can.Message(arbitration_id=0x1FFFFFFF, data=b'\xff\x00', is_extended_id=True),
          bus_off_frame()]


def _fields(msg: can.Message) -> tuple:
    return (msg.arbitration_id, bytes(msg.data), msg.dlc, msg.is_extended_id,
            msg.is_error_frame, msg.is_remote_frame, msg.is_rx)


def _received(bus) -> list:
    out = []
    while (msg := bus.recv(0.0)) is not None:
        out.append(_fields(msg))
    return out


def test_frames_arrive_as_through_python_can_virtual():
    name = f'dodo-test-{id(FRAMES)}'
    virtual = [can.Bus(interface='virtual', channel=name) for _ in range(3)]
    channel = EmulatedChannel(name)
    emulated = [channel.end() for _ in range(3)]
    try:
        for sender, frame in zip(itertools.cycle((0, 1)), FRAMES):
            virtual[sender].send(frame)
            emulated[sender].send(frame)
        for v, e in zip(virtual, emulated):
            assert _received(e) == _received(v)
    finally:
        for bus in virtual:
            bus.shutdown()


def test_an_end_does_not_receive_its_own_frames():
    channel = EmulatedChannel('own')
    a, b = channel.end(), channel.end()
    a.send(FRAMES[0])
    assert a.recv(0.0) is None
    assert _fields(b.recv(0.0)) == _fields(FRAMES[0])[:-1] + (True,)


def test_a_frame_changed_after_sending_arrives_as_sent():
    channel = EmulatedChannel('copy')
    a, b = channel.end(), channel.end()
    frame = can.Message(arbitration_id=0x10, data=bytearray(b'\x01\x02'), is_extended_id=False)
    a.send(frame)
    frame.data[0] = 0xEE                # a backend refilling its frame for the next cycle
    assert bytes(b.recv(0.0).data) == b'\x01\x02'


def test_frames_keep_their_order():
    channel = EmulatedChannel('order')
    a, b = channel.end(), channel.end()
    for k in range(50):
        a.send(can.Message(arbitration_id=k, data=b'', is_extended_id=False))
    assert [b.recv(0.0).arbitration_id for _ in range(50)] == list(range(50))
    assert b.recv(0.0) is None


def test_a_closed_end_refuses_to_send_and_receives_nothing_more():
    channel = EmulatedChannel('closed')
    a, b = channel.end(), channel.end()
    b.shutdown()
    a.send(FRAMES[0])                  # nobody else on the bus: nothing to deliver, no error
    with pytest.raises(can.CanOperationError):
        b.send(FRAMES[0])
    with pytest.raises(can.CanOperationError):
        b.recv(0.0)
