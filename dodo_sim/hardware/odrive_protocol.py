# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
ODrive CAN Simple wire format: command ids, error bits, models, ``odrive_can_simple.dbc``.

Protocol data only (no backend, no emulation: :mod:`dodo_sim.hardware.odrive`), so the driver's
configuration (:mod:`dodo_sim.hardware.config`) can name ODrive models and errors without
importing the backend: no import cycle config -> odrive -> backend -> config.
Sources: docs/hardware.md, "ODrive CAN Simple".

No rclpy here.
"""
from __future__ import annotations

from dataclasses import dataclass
import math
from pathlib import Path

import cantools

from .protocol import MitRanges

ODRIVE_DBC_PATH = Path(__file__).with_name('odrive_can_simple.dbc')

# cmd ids (ODrive CAN Simple)
HEARTBEAT = 0x01
SET_AXIS_STATE = 0x07
GET_ENCODER_ESTIMATES = 0x09
SET_CONTROLLER_MODE = 0x0B
SET_INPUT_TORQUE = 0x0E
GET_IQ = 0x14
GET_TEMPERATURE = 0x15
CLEAR_ERRORS = 0x18
SET_ABSOLUTE_POSITION = 0x19
GET_TORQUES = 0x1C

# AxisState, ControlMode, InputMode (ODrive enums)
AXIS_STATE_IDLE = 1
AXIS_STATE_CLOSED_LOOP_CONTROL = 8
CONTROL_MODE_TORQUE = 1
INPUT_MODE_PASSTHROUGH = 1

#: ODriveError bits (firmware 0.6.x, ODrive.Error) that the emulator raises or that the driver
#: names on /diagnostics.
ODRIVE_ERRORS = {
    0x1: 'INITIALIZING', 0x2: 'SYSTEM_LEVEL', 0x4: 'TIMING_ERROR', 0x8: 'MISSING_ESTIMATE',
    0x10: 'BAD_CONFIG', 0x20: 'DRV_FAULT', 0x40: 'MISSING_INPUT',
    0x100: 'DC_BUS_OVER_VOLTAGE', 0x200: 'DC_BUS_UNDER_VOLTAGE', 0x400: 'DC_BUS_OVER_CURRENT',
    0x800: 'DC_BUS_OVER_REGEN_CURRENT', 0x1000: 'CURRENT_LIMIT_VIOLATION',
    0x2000: 'MOTOR_OVER_TEMP', 0x4000: 'INVERTER_OVER_TEMP', 0x8000: 'VELOCITY_LIMIT_VIOLATION',
    0x10000: 'POSITION_LIMIT_VIOLATION', 0x1000000: 'WATCHDOG_TIMER_EXPIRED',
    0x2000000: 'ESTOP_REQUESTED', 0x4000000: 'SPINOUT_DETECTED',
    0x8000000: 'BRAKE_RESISTOR_DISARMED', 0x10000000: 'THERMISTOR_DISCONNECTED',
    0x40000000: 'CALIBRATION_ERROR'}
WATCHDOG_TIMER_EXPIRED = 0x1000000
MOTOR_OVER_TEMP = 0x2000

TWO_PI = 2.0 * math.pi


def odrive_error_name(code: int) -> str:
    """'WATCHDOG_TIMER_EXPIRED | MOTOR_OVER_TEMP' for a bit field; 'no error' for 0."""
    if not code:
        return 'no error'
    names = [name for bit, name in ODRIVE_ERRORS.items() if code & bit]
    rest = code & ~sum(ODRIVE_ERRORS)
    if rest:
        names.append(f'0x{rest:x}')
    return ' | '.join(names)


@dataclass(frozen=True)
class OdriveModel:
    """
    An ODrive and its motor, motor side.

    Fields:
        torque_limit: |Set_Input_Torque| the axis applies, N*m (current limit x torque
            constant).
        velocity_limit: motor speed the host-side laws are clamped to, rad/s.
    """

    torque_limit: float
    velocity_limit: float

    def ranges(self) -> MitRanges:
        """
        Return the envelope the driver core's clamps read (``ActuatorConfig.ranges``).

        The ODrive fields are float32, so only the torque and velocity ranges mean something;
        position and gains get wide bounds (the host computes the PD, nothing is quantised).
        """
        return MitRanges(-1.0e5, 1.0e5, -self.velocity_limit, self.velocity_limit,
                         0.0, 1.0e4, 0.0, 1.0e4, -self.torque_limit, self.torque_limit)


#: ODrive + motor combinations (vendor data; check yours): ODrive Pro (120 A peak phase
#: current) with the ODrive M8325s (100 KV: torque constant 8.27/100 = 0.0827 N*m/A, 48 V:
#: ~4800 rpm no load); ODrive S1 (40 A) with the D6374 (150 KV: 0.055 N*m/A, ~7000 rpm at 48 V).
ODRIVE_MODELS = {
    'ODrivePro-M8325s': OdriveModel(torque_limit=120.0 * 0.0827,
                                    velocity_limit=4800 * TWO_PI / 60),
    'ODriveS1-D6374': OdriveModel(torque_limit=40.0 * 0.055, velocity_limit=7000 * TWO_PI / 60),
}


def odrive_model(model: str) -> OdriveModel:
    try:
        return ODRIVE_MODELS[model]
    except KeyError:
        raise ValueError(f'unknown ODrive model {model!r}; known: {sorted(ODRIVE_MODELS)}') \
            from None


def arbitration_id(node_id: int, cmd_id: int) -> int:
    return (node_id << 5) | cmd_id


def split_id(arbitration: int) -> tuple:
    """(node_id, cmd_id) of an arbitration id."""
    return arbitration >> 5, arbitration & 0x1F


class OdriveWire:
    """
    Encode/decode the messages of ``odrive_can_simple.dbc``.

    It works on the data bytes; the node id goes into the arbitration id.
    """

    def __init__(self, dbc_path: str | Path = ODRIVE_DBC_PATH):
        self.database = cantools.database.load_file(str(dbc_path))
        self._by_cmd = {m.frame_id: m for m in self.database.messages}

    def encode(self, cmd_id: int, **signals) -> bytes:
        return bytes(self._by_cmd[cmd_id].encode(signals, scaling=False))

    def decode(self, cmd_id: int, data: bytes) -> dict:
        return self._by_cmd[cmd_id].decode(bytes(data), decode_choices=False, scaling=False)

    def knows(self, cmd_id: int) -> bool:
        return cmd_id in self._by_cmd


__all__ = ['ODRIVE_DBC_PATH', 'HEARTBEAT', 'SET_AXIS_STATE', 'GET_ENCODER_ESTIMATES',
           'SET_CONTROLLER_MODE', 'SET_INPUT_TORQUE', 'GET_IQ', 'GET_TEMPERATURE', 'CLEAR_ERRORS',
           'SET_ABSOLUTE_POSITION', 'GET_TORQUES', 'AXIS_STATE_IDLE',
           'AXIS_STATE_CLOSED_LOOP_CONTROL', 'CONTROL_MODE_TORQUE', 'INPUT_MODE_PASSTHROUGH',
           'ODRIVE_ERRORS', 'WATCHDOG_TIMER_EXPIRED', 'MOTOR_OVER_TEMP', 'TWO_PI',
           'odrive_error_name', 'OdriveModel', 'ODRIVE_MODELS', 'odrive_model', 'arbitration_id',
           'split_id', 'OdriveWire']
