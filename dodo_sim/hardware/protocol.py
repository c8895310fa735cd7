# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
Wire formats of the hardware path: the MIT-mode actuator protocol and the sensor board.

The bit layout of every frame is described once, in ``dodo_can.dbc`` next to this module, and
encoded/decoded with cantools; this module adds what a DBC cannot hold: the per-model linear
scaling of the MIT fields and the special frames. No rclpy, no python-can bus here (pure
bytes in, bytes out), so the driver backend and the emulator share it.

MIT-mode scaling (Ben Katz's Mini Cheetah firmware, T-Motor/CubeMars AK series): a field of
``bits`` bits carries ``x`` in ``[x_min, x_max]`` as ``counts = (x - x_min) * (2^bits - 1) /
(x_max - x_min)``; decoding is ``x = x_min + counts * (x_max - x_min) / (2^bits - 1)`` on both
sides. The firmware encodes its replies by *truncation* (``(int)`` of a non-negative float, see
:func:`firmware_float_to_counts`); the driver encodes its commands by rounding to the nearest
count (:func:`float_to_counts`, half a count of error instead of up to one). Values outside the
range are clamped first. Zero is never exactly representable (the midpoint of ``2^bits`` levels
falls between two counts): a zero torque command is ``±(x_max - x_min) / (2 (2^bits - 1))``
(AK80-9: ±4.4 mN*m); true zero torque is the disable frame.
"""
from __future__ import annotations

from dataclasses import dataclass
import math
from pathlib import Path
from typing import NamedTuple

import cantools

#: The DBC file holding every frame layout (installed as package data).
DBC_PATH = Path(__file__).with_name('dodo_can.dbc')

POSITION_BITS = 16
FIELD_BITS = 12          # velocity, kp, kd, torque (and the reply's velocity and torque)
MAX_POSITION_COUNTS = (1 << POSITION_BITS) - 1
MAX_FIELD_COUNTS = (1 << FIELD_BITS) - 1
#: Largest position count a *command* may carry: 0xFFFF together with all-ones fields is the
#: special-frame prefix, so commands stop one count short of it.
MAX_COMMAND_POSITION_COUNTS = MAX_POSITION_COUNTS - 1

#: Torque-field counts of the special frames (every other field all ones).
SPECIAL_TORQUE_COUNTS = {'enable': 0xFFC, 'disable': 0xFFD, 'zero': 0xFFE}

#: Error codes of the AK-series MIT reply (byte 7).
ERROR_CODES = {0: 'no error', 1: 'over temperature', 2: 'over current', 3: 'over voltage',
               4: 'under voltage', 5: 'encoder fault', 6: 'phase current unbalance'}


def error_name(code: int) -> str:
    return ERROR_CODES.get(code, f'unknown error {code}')


@dataclass(frozen=True)
class MitRanges:
    """
    Ranges of the MIT-mode fields of one actuator model (actuator output side).

    Fields:
        p_min / p_max: position, rad.
        v_min / v_max: velocity, rad/s.
        kp_min / kp_max: position gain, N*m/rad.
        kd_min / kd_max: velocity gain, N*m*s/rad.
        t_min / t_max: torque, N*m.
    """

    p_min: float
    p_max: float
    v_min: float
    v_max: float
    kp_min: float
    kp_max: float
    kd_min: float
    kd_max: float
    t_min: float
    t_max: float

    def __post_init__(self):
        for lo, hi in (('p_min', 'p_max'), ('v_min', 'v_max'), ('kp_min', 'kp_max'),
                       ('kd_min', 'kd_max'), ('t_min', 't_max')):
            a, b = getattr(self, lo), getattr(self, hi)
            if not (math.isfinite(a) and math.isfinite(b) and a < b):
                raise ValueError(f'MitRanges.{lo} = {a} must be finite and below {hi} = {b}')

    @property
    def max_torque(self) -> float:
        """Largest |torque| both directions can carry, N*m."""
        return min(-self.t_min, self.t_max)


#: MIT-mode ranges of common actuators (firmware defaults of the published drivers: CubeMars
#: manuals, mini-cheetah-tmotor-python-can, TMotorCANControl). Check your firmware's.
MODELS = {
    'AK80-9': MitRanges(-12.5, 12.5, -25.64, 25.64, 0.0, 500.0, 0.0, 5.0, -18.0, 18.0),
    'AK80-6': MitRanges(-12.5, 12.5, -76.0, 76.0, 0.0, 500.0, 0.0, 5.0, -12.0, 12.0),
    'AK80-64': MitRanges(-12.5, 12.5, -8.0, 8.0, 0.0, 500.0, 0.0, 5.0, -144.0, 144.0),
    'AK10-9': MitRanges(-12.5, 12.5, -50.0, 50.0, 0.0, 500.0, 0.0, 5.0, -65.0, 65.0),
    'AK70-10': MitRanges(-12.5, 12.5, -50.0, 50.0, 0.0, 500.0, 0.0, 5.0, -25.0, 25.0),
    'AK60-6': MitRanges(-12.5, 12.5, -45.0, 45.0, 0.0, 500.0, 0.0, 5.0, -15.0, 15.0),
    # Ben Katz's Mini Cheetah actuator firmware defaults
    'MiniCheetah': MitRanges(-12.5, 12.5, -65.0, 65.0, 0.0, 500.0, 0.0, 5.0, -18.0, 18.0),
}


def model_ranges(model: str) -> MitRanges:
    try:
        return MODELS[model]
    except KeyError:
        raise ValueError(f'unknown actuator model {model!r}; known: {sorted(MODELS)}') from None


# -- float <-> counts ---------------------------------------------------------------------------

def float_to_counts(x: float, x_min: float, x_max: float, bits: int) -> int:
    """
    Return the counts of ``x``, rounded to the nearest count (half up).

    ``x`` is clamped to the range first.
    """
    top = (1 << bits) - 1
    if not x > x_min:          # also NaN -> x_min (callers reject NaN before)
        return 0
    if x >= x_max:
        return top
    return min(top, int(math.floor((x - x_min) * top / (x_max - x_min) + 0.5)))


def firmware_float_to_counts(x: float, x_min: float, x_max: float, bits: int) -> int:
    """Return the counts as the actuator firmware encodes them: clamp, then truncate."""
    top = (1 << bits) - 1
    if not x > x_min:
        return 0
    if x >= x_max:
        return top
    return min(top, int((x - x_min) * top / (x_max - x_min)))


def counts_to_float(counts: int, x_min: float, x_max: float, bits: int) -> float:
    """Value of ``counts`` (the decoding both sides use)."""
    return x_min + counts * (x_max - x_min) / ((1 << bits) - 1)


def lsb(x_min: float, x_max: float, bits: int) -> float:
    """Value of one count."""
    return (x_max - x_min) / ((1 << bits) - 1)


# -- frames --------------------------------------------------------------------------------------

class MitCommand(NamedTuple):
    """
    An MIT-mode command in physical units, actuator output side.

    Units: rad, rad/s, N*m/rad, N*m*s/rad, N*m.
    """

    position: float = 0.0
    velocity: float = 0.0
    kp: float = 0.0
    kd: float = 0.0
    torque: float = 0.0


class MitReply(NamedTuple):
    """An MIT-mode reply in physical units, actuator output side."""

    motor_id: int
    position: float        # rad
    velocity: float        # rad/s
    torque: float          # N*m (q-axis current x torque constant)
    temperature: int       # degC
    error_code: int
    counts: tuple          # raw (position, velocity, torque) counts, for frozen-reading checks


class BoardSample(NamedTuple):
    """One sample of the sensor board (raw encoder counts, rates and forces in SI units)."""

    sequence: int
    yaw_counts: int
    pitch_counts: int
    yaw_rate: float        # rad/s
    pitch_rate: float      # rad/s
    foot_force_x: float    # N
    foot_force_z: float    # N
    foot_switch: bool
    force_overload: bool
    yaw_encoder_error: bool
    pitch_encoder_error: bool


class WireFormat:
    """
    The frames of ``dodo_can.dbc``.

    Use one instance per user: cantools objects are not shared between threads.
    """

    def __init__(self, dbc_path: str | Path = DBC_PATH):
        self.database = cantools.database.load_file(str(dbc_path))
        get = self.database.get_message_by_name
        self._command = get('MitCommand')
        self._reply = get('MitReply')
        self._sync = get('Sync')
        self._angles = get('BoomAngles')
        self._rates = get('BoomRatesFoot')
        self.reply_id = self._reply.frame_id
        self.sync_id = self._sync.frame_id
        self.boom_angles_id = self._angles.frame_id
        self.boom_rates_id = self._rates.frame_id
        self._special = {kind: self.encode_command_counts(
            MAX_POSITION_COUNTS, MAX_FIELD_COUNTS, MAX_FIELD_COUNTS, MAX_FIELD_COUNTS, counts)
            for kind, counts in SPECIAL_TORQUE_COUNTS.items()}
        self._special_kind = {data: kind for kind, data in self._special.items()}

    # -- MIT command --------------------------------------------------------------------------

    def encode_command_counts(self, position: int, velocity: int, kp: int, kd: int,
                              torque: int) -> bytes:
        return bytes(self._command.encode(
            {'position': position, 'velocity': velocity, 'kp': kp, 'kd': kd, 'torque': torque},
            scaling=False, strict=False))     # counts are in range by construction

    def command_counts(self, command: MitCommand, ranges: MitRanges) -> tuple:
        """(position, velocity, kp, kd, torque) counts the driver sends for ``command``."""
        r = ranges
        return (min(MAX_COMMAND_POSITION_COUNTS,
                    float_to_counts(command.position, r.p_min, r.p_max, POSITION_BITS)),
                float_to_counts(command.velocity, r.v_min, r.v_max, FIELD_BITS),
                float_to_counts(command.kp, r.kp_min, r.kp_max, FIELD_BITS),
                float_to_counts(command.kd, r.kd_min, r.kd_max, FIELD_BITS),
                float_to_counts(command.torque, r.t_min, r.t_max, FIELD_BITS))

    def encode_command(self, command: MitCommand, ranges: MitRanges) -> bytes:
        return self.encode_command_counts(*self.command_counts(command, ranges))

    def special_frame(self, kind: str) -> bytes:
        """
        Return the data of an 'enable', 'disable' or 'zero' frame.

        'enable' enters motor mode, 'disable' exits motor mode, 'zero' sets the current position as
        zero.
        """
        return self._special[kind]

    def special_kind(self, data: bytes) -> str | None:
        return self._special_kind.get(bytes(data))

    def decode_command_counts(self, data: bytes) -> tuple:
        d = self._command.decode(bytes(data), scaling=False, decode_choices=False)
        return d['position'], d['velocity'], d['kp'], d['kd'], d['torque']

    def decode_command(self, data: bytes, ranges: MitRanges) -> MitCommand:
        p, v, kp, kd, t = self.decode_command_counts(data)
        r = ranges
        return MitCommand(counts_to_float(p, r.p_min, r.p_max, POSITION_BITS),
                          counts_to_float(v, r.v_min, r.v_max, FIELD_BITS),
                          counts_to_float(kp, r.kp_min, r.kp_max, FIELD_BITS),
                          counts_to_float(kd, r.kd_min, r.kd_max, FIELD_BITS),
                          counts_to_float(t, r.t_min, r.t_max, FIELD_BITS))

    # -- MIT reply ----------------------------------------------------------------------------

    def encode_reply_counts(self, motor_id: int, position: int, velocity: int, torque: int,
                            temperature: int = 25, error_code: int = 0) -> bytes:
        return bytes(self._reply.encode(
            {'motor_id': motor_id, 'position': position, 'velocity': velocity, 'torque': torque,
             'temperature': max(-128, min(127, int(temperature))), 'error_code': error_code},
            scaling=False, strict=False))

    def decode_reply(self, data: bytes, ranges_by_id) -> MitReply | None:
        """
        Decode a reply; ``ranges_by_id`` maps CAN id -> MitRanges.

        None for an unknown id.
        """
        d = self._reply.decode(bytes(data), scaling=False, decode_choices=False)
        ranges = ranges_by_id.get(d['motor_id'])
        if ranges is None:
            return None
        p, v, t = d['position'], d['velocity'], d['torque']
        r = ranges
        return MitReply(d['motor_id'],
                        counts_to_float(p, r.p_min, r.p_max, POSITION_BITS),
                        counts_to_float(v, r.v_min, r.v_max, FIELD_BITS),
                        counts_to_float(t, r.t_min, r.t_max, FIELD_BITS),
                        d['temperature'], d['error_code'], (p, v, t))

    # -- sensor board -------------------------------------------------------------------------

    def encode_sync(self, sequence: int) -> bytes:
        return bytes(self._sync.encode({'sequence': sequence & 0xFF},
                                       strict=False))     # in range by construction

    def decode_sync(self, data: bytes) -> int:
        return self._sync.decode(bytes(data))['sequence']

    def encode_board(self, sample: BoardSample) -> tuple:
        """((BoomAngles id, data), (BoomRatesFoot id, data)); out-of-range values saturate."""
        def sat(x, lo, hi):
            return max(lo, min(hi, x))

        angles = self._angles.encode({
            'yaw_counts': sat(int(sample.yaw_counts), -(1 << 23), (1 << 23) - 1),
            'pitch_counts': sat(int(sample.pitch_counts), -(1 << 23), (1 << 23) - 1),
            'sequence': sample.sequence & 0xFF, 'foot_switch': int(sample.foot_switch),
            'force_overload': int(sample.force_overload),
            'yaw_encoder_error': int(sample.yaw_encoder_error),
            'pitch_encoder_error': int(sample.pitch_encoder_error)},
            strict=False)       # saturated above; the range check doubles the encode time
        rate_max = 32767 * 0.0002
        force_max = 32767 * 0.5
        rates = self._rates.encode({
            'yaw_rate': sat(sample.yaw_rate, -rate_max, rate_max),
            'pitch_rate': sat(sample.pitch_rate, -rate_max, rate_max),
            'foot_force_x': sat(sample.foot_force_x, -force_max, force_max),
            'foot_force_z': sat(sample.foot_force_z, -force_max, force_max)}, strict=False)
        return (self.boom_angles_id, bytes(angles)), (self.boom_rates_id, bytes(rates))

    @staticmethod
    def board_force_limit() -> float:
        """Largest |force| the foot fields carry, N."""
        return 32767 * 0.5

    def decode_boom_angles(self, data: bytes) -> dict:
        return self._angles.decode(bytes(data), decode_choices=False)

    def decode_boom_rates(self, data: bytes) -> dict:
        return self._rates.decode(bytes(data), decode_choices=False)

    @staticmethod
    def board_sample(angles: dict, rates: dict) -> BoardSample:
        return BoardSample(angles['sequence'], angles['yaw_counts'], angles['pitch_counts'],
                           float(rates['yaw_rate']), float(rates['pitch_rate']),
                           float(rates['foot_force_x']), float(rates['foot_force_z']),
                           bool(angles['foot_switch']), bool(angles['force_overload']),
                           bool(angles['yaw_encoder_error']), bool(angles['pitch_encoder_error']))


__all__ = ['DBC_PATH', 'MODELS', 'ERROR_CODES', 'SPECIAL_TORQUE_COUNTS', 'MitRanges', 'MitCommand',
           'MitReply', 'BoardSample', 'WireFormat', 'model_ranges', 'error_name',
           'float_to_counts', 'firmware_float_to_counts', 'counts_to_float', 'lsb',
           'POSITION_BITS', 'FIELD_BITS']
