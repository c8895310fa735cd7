# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
Reading the two 1 kHz inputs of the controller straight from their serialized form.

rclpy turns every received message into Python objects through the generated message classes:
for a ``sensor_msgs/JointState`` or a ``geometry_msgs/WrenchStamped`` that is a dozen nested
constructor calls (each nested type built twice: once as a default, once from the data), which
profiling showed to be a large share of the controller's CPU per step. A subscription created
with ``raw=True`` hands over the serialized bytes instead; these functions read the few fields
the controller uses with ``struct``.

Format: OMG CDR (XCDR1) with the 4-byte encapsulation header ROS 2's rmw layers write
(``00 01 00 00``: plain CDR, little endian); alignment of each primitive to its size, counted
from the end of that header; strings as uint32 length (with the terminating NUL) + bytes;
sequences as uint32 count + elements. Anything else (a big-endian writer, a malformed message)
raises :class:`CdrError`; the caller then falls back to rclpy's own deserialization. Validated
against ``rclpy.serialization.serialize_message`` (test/ros/test_cdr.py). No rclpy import here.
"""
from __future__ import annotations

import struct

#: encapsulation header of little-endian plain CDR (what the rmw layers of ROS 2 write)
CDR_LE = b'\x00\x01'
_HEADER = 4
_U32 = struct.Struct('<I')
_STAMP = struct.Struct('<iI')
_XYZ = struct.Struct('<3d')


class CdrError(ValueError):
    """The bytes are not a little-endian CDR message of the expected type."""


def _align(offset: int, size: int) -> int:
    rel = offset - _HEADER
    return offset + (-rel % size)


def _header(data: bytes) -> tuple[int, int]:
    """(stamp in ns, offset after std_msgs/Header)."""
    if len(data) < 16 or data[:2] != CDR_LE:
        raise CdrError(f'not little-endian CDR (encapsulation {bytes(data[:4]).hex()})')
    sec, nanosec = _STAMP.unpack_from(data, _HEADER)
    (length,) = _U32.unpack_from(data, _HEADER + 8)          # frame_id
    return sec * 1_000_000_000 + nanosec, _HEADER + 12 + length


def _doubles(data: bytes, offset: int) -> tuple[tuple, int]:
    offset = _align(offset, 4)
    (count,) = _U32.unpack_from(data, offset)
    offset += 4
    if count == 0:
        return (), offset
    offset = _align(offset, 8)
    end = offset + 8 * count
    if end > len(data):
        raise CdrError('float64 sequence runs past the end of the message')
    return struct.unpack_from(f'<{count}d', data, offset), end


class _Stamp:
    __slots__ = ('sec', 'nanosec')

    def __init__(self, sec: int, nanosec: int):
        self.sec, self.nanosec = sec, nanosec


class _Header:
    __slots__ = ('stamp',)

    def __init__(self, stamp: _Stamp):
        self.stamp = stamp


class JointStateView:
    """
    What a read JointState holds.

    With the attribute names of ``sensor_msgs/JointState`` (``header.stamp.sec`` / ``.nanosec``,
    ``name``, ``position``, ``velocity``, ``effort``), for code written against the message class;
    ``stamp_ns`` the stamp in ns.
    """

    __slots__ = ('stamp_ns', 'header', 'name', 'position', 'velocity', 'effort')

    def __init__(self, stamp_ns: int, sec: int, nanosec: int, name, position, velocity,
                 effort):
        self.stamp_ns = stamp_ns
        self.header = _Header(_Stamp(sec, nanosec))
        self.name, self.position, self.velocity, self.effort = name, position, velocity, effort


class JointStateReader:
    """
    Reads ``sensor_msgs/JointState`` bytes: ``(stamp ns, names, position, velocity, effort)``.

    The names come as a list of str, the rest as tuples of float. The names section of the last
    message is kept with its decoded list, so a steady stream of one sender decodes its names once.
    """

    def __init__(self):
        self._names_raw = b''
        self._names: list = []

    def read(self, data: bytes) -> tuple:
        try:
            return self._read(data)
        except struct.error as exc:
            raise CdrError(f'truncated JointState: {exc}') from None

    def _read(self, data: bytes) -> tuple:
        stamp_ns, offset = _header(data)
        offset = _align(offset, 4)
        (count,) = _U32.unpack_from(data, offset)
        start = offset
        offset += 4
        ends = []
        for _ in range(count):
            offset = _align(offset, 4)
            (length,) = _U32.unpack_from(data, offset)
            ends.append((offset + 4, offset + 3 + length))   # without the NUL
            offset += 4 + length
        if offset > len(data):
            raise CdrError('joint names run past the end of the message')
        raw = bytes(data[start:offset])
        if raw != self._names_raw:
            self._names = [bytes(data[a:b]).decode() for a, b in ends]
            self._names_raw = raw
        position, offset = _doubles(data, offset)
        velocity, offset = _doubles(data, offset)
        effort, offset = _doubles(data, offset)
        return stamp_ns, self._names, position, velocity, effort


def read_frame_id(data: bytes) -> str:
    """``header.frame_id`` of a message that starts with a std_msgs/Header."""
    _header(data)
    (length,) = _U32.unpack_from(data, _HEADER + 8)
    if _HEADER + 12 + length > len(data) or length == 0:
        raise CdrError('frame_id runs past the end of the message')
    return bytes(data[_HEADER + 12:_HEADER + 11 + length]).decode()     # without its NUL


def read_wrench_stamped(data: bytes) -> tuple:
    """``geometry_msgs/WrenchStamped`` bytes: ``(stamp ns, (fx, fy, fz))``, N."""
    stamp_ns, offset = _header(data)
    offset = _align(offset, 8)
    if offset + 48 > len(data):
        raise CdrError('wrench runs past the end of the message')
    return stamp_ns, _XYZ.unpack_from(data, offset)


class JointStateWriter:
    """
    Fast writer of ``sensor_msgs/JointState`` bytes of one fixed layout.

    The fixed parts are the frame id, the joint names and ``sizes`` (the lengths of position,
    velocity, effort). It writes into one buffer refilled per message, for
    ``Publisher.publish(bytes)``: rclpy's conversion of a message object walks every field (the
    names too) on each publish. The layout is taken from ``template`` (an rclpy serialization of
    such a message), so the bytes are what the rmw would write.
    """

    def __init__(self, template: bytes, sizes: tuple[int, int, int]):
        self._buffer = bytearray(template)
        offsets = []
        _, offset = _header(template)
        offset = _align(offset, 4)
        (count,) = _U32.unpack_from(template, offset)
        offset += 4
        for _ in range(count):
            offset = _align(offset, 4)
            (length,) = _U32.unpack_from(template, offset)
            offset += 4 + length
        for size in sizes:
            offset = _align(offset, 4)
            (found,) = _U32.unpack_from(template, offset)
            if found != size:
                raise CdrError(f'template has a sequence of {found} values, expected {size}')
            offset += 4
            if size:
                offset = _align(offset, 8)
            offsets.append((offset, struct.Struct(f'<{size}d')))
            offset += 8 * size
        if offset > len(template):
            raise CdrError('template is not a JointState of that layout')
        # serialize_message hands over its whole buffer (uninitialised bytes after the data);
        # what is published ends with the last field, as readers (rosbags) require
        del self._buffer[offset:]
        self._fields = offsets

    def write(self, stamp_ns: int, position=(), velocity=(), effort=()) -> bytes:
        buffer = self._buffer
        _STAMP.pack_into(buffer, _HEADER, *divmod(stamp_ns, 1_000_000_000))
        for (offset, packer), values in zip(self._fields, (position, velocity, effort)):
            if packer.size:
                packer.pack_into(buffer, offset, *values)
        return bytes(buffer)
