# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
The emulated MIT-mode actuator firmware and sensor board, answering from the physics.

:class:`dodo_sim.hardware.emulator.Emulator` puts them on a python-can bus with the wire format
of ``dodo_can.dbc``; their joints are the state of a :class:`dodo_sim.simulator.Simulator`.

What the emulated actuator firmware does (as the Mini Cheetah / AK firmware does):

* rest mode until the enable frame, back to rest on the disable frame or on a fault; it
  replies to every frame addressed to it (rest mode too) with position, velocity and torque
  estimate encoded by truncation, temperature and error code;
* commands are decoded into the set-point in any mode (so a stale set-point is applied at the
  next enable unless cleared - the driver sends a zero command first);
* output torque ``kp (p_des - p) + kd (v_des - v) + t_ff``, saturated at the model's torque
  range and at ``current_limit x torque constant``, held over each physics period;
* its own CAN timeout: no frame for ``motor_timeout`` in motor mode -> zero output;
* a first-order thermal model; over ``firmware_temperature_limit`` it reports error 1 and rests;
* a latched error is cleared by the next enable frame once its cause is gone (re-entering motor
  mode, the MIT-mode way to clear a fault; ``Emulator.resolve_error`` removes an injected cause).

The sensor board answers each Sync with the boom encoder counts (power-up offset, quadrature
resolution), boom rates and the foot force of the contact frame (0.5 N resolution, overload
flag beyond the field range).
"""
from __future__ import annotations

import dataclasses
import math

import numpy as np

from .config import ActuatorConfig, BoomConfig
from .protocol import (BoardSample, FIELD_BITS, firmware_float_to_counts, MitCommand,
                       POSITION_BITS, WireFormat)


def sim_contact_force(state, frame: str, frames: tuple) -> np.ndarray:
    """World [x, z] force on contact frame ``frame`` (N) of a simulator state."""
    forces = getattr(state, 'contact_forces', None)
    if forces is not None and frame in frames:
        row = np.asarray(forces[frames.index(frame)], dtype=float)
        return row[[0, 2]] if row.shape[0] == 3 else row
    return np.asarray(state.contact_force, dtype=float)


def heated(temperature: float, output: float, dt: float, ecfg) -> float:
    """
    Return an actuator's temperature after ``dt`` s at ``output`` N*m (first-order model), degC.

    ``ecfg``: the :class:`dodo_sim.hardware.emulator.EmulatorConfig` (ambient temperature,
    thermal rise per (N*m)^2, thermal time constant).
    """
    target = ecfg.ambient_temperature + ecfg.thermal_rise * output * output
    return temperature + (target - temperature) * (1.0 - math.exp(
        -dt / ecfg.thermal_time_constant))


#: What a firmware reports for a temperature that is not a number: the top of the reply's
#: signed temperature byte (protocol.py), which is over every temperature limit.
UNREADABLE_TEMPERATURE = 127


def reported_temperature(degc: float) -> int:
    """Return the temperature an actuator reply carries, degC (a NaN reading: the byte's top)."""
    return int(round(degc)) if math.isfinite(degc) else UNREADABLE_TEMPERATURE


class EmulatedActuator:
    """
    The firmware of one MIT-mode actuator (see module docs).

    ``emulator_config``: the :class:`dodo_sim.hardware.emulator.EmulatorConfig`.

    ``config.zero_offset`` is the emulated power-up offset (actuator position at joint zero).
    """

    def __init__(self, config: ActuatorConfig, emulator_config,
                 wire: WireFormat, rng: np.random.Generator):
        self.config = config
        self.ecfg = emulator_config
        self.wire = wire
        self.rng = rng
        self.motor_mode = False
        self.command = MitCommand()
        self.last_frame_time = -math.inf
        self.temperature = emulator_config.ambient_temperature
        self.error_code = 0
        #: an injected error whose cause is still there (set_error): the enable frame does not
        #: clear it; resolve_error() removes the cause, the code stays latched
        self.error_persists = False
        self.output = 0.0                    # actuator torque applied over the current period
        self.frozen_counts: tuple | None = None
        self.freeze = False
        self.drop_count = 0
        self.drop_probability = 0.0
        self.frames_received = 0
        self.enable_frames = 0
        self.disable_frames = 0
        r = config.ranges
        limit = min(r.max_torque, emulator_config.current_limit * config.torque_constant)
        self.torque_limit = limit

    def actuator_state(self, q: float, v: float) -> tuple:
        a = self.config
        return a.actuator_position(q), a.direction * a.gear_ratio * v

    def receive(self, data: bytes, now: float, q: float, v: float) -> bytes | None:
        """Handle a frame addressed to this actuator; returns the reply (None: dropped)."""
        self.frames_received += 1
        self.last_frame_time = now
        kind = self.wire.special_kind(data)
        if kind == 'enable':
            self.enable_frames += 1
            if (self.error_code and not self.error_persists
                    and self.temperature < self.ecfg.firmware_temperature_limit):
                self.error_code = 0          # entering motor mode clears a latched error
            if self.error_code == 0:
                self.motor_mode = True
        elif kind == 'disable':
            self.disable_frames += 1
            self.motor_mode = False
            self.output = 0.0                # the current loop stops at once
        elif kind == 'zero':
            p, _ = self.actuator_state(q, v)
            self.config = dataclasses.replace(self.config,
                                              zero_offset=self.config.zero_offset - p)
        else:
            self.command = self.wire.decode_command(data, self.config.ranges)
        if self.drop_count > 0:
            self.drop_count -= 1
            return None
        if self.drop_probability > 0.0 and self.rng.random() < self.drop_probability:
            return None
        return self.reply(q, v)

    def torque(self, now: float, q: float, v: float) -> float:
        """Actuator output torque for the coming period, N*m (actuator side)."""
        if (not self.motor_mode or self.error_code
                or now - self.last_frame_time > self.ecfg.motor_timeout):
            self.output = 0.0
            return 0.0
        p, pv = self.actuator_state(q, v)
        c = self.command
        tau = c.kp * (c.position - p) + c.kd * (c.velocity - pv) + c.torque
        self.output = max(-self.torque_limit, min(self.torque_limit, tau))
        return self.output

    def heat(self, dt: float) -> None:
        self.temperature = heated(self.temperature, self.output, dt, self.ecfg)
        self.check_temperature()

    def check_temperature(self) -> None:
        # a reading that is not a number (a broken thermistor) counts as too hot: the firmware
        # cannot tell it is cool, so it rests and reports error 1 (over temperature)
        if (not self.temperature < self.ecfg.firmware_temperature_limit
                and self.error_code == 0):
            self.error_code = 1
        if self.error_code:
            self.motor_mode = False
            self.output = 0.0

    def reply(self, q: float, v: float) -> bytes:
        r = self.config.ranges
        p, pv = self.actuator_state(q, v)
        if self.ecfg.velocity_noise_counts > 0.0:
            pv += self.rng.normal(0.0, self.ecfg.velocity_noise_counts) * (
                (r.v_max - r.v_min) / ((1 << FIELD_BITS) - 1))
        counts = (firmware_float_to_counts(p, r.p_min, r.p_max, POSITION_BITS),
                  firmware_float_to_counts(pv, r.v_min, r.v_max, FIELD_BITS),
                  firmware_float_to_counts(self.output, r.t_min, r.t_max, FIELD_BITS))
        if self.freeze:
            if self.frozen_counts is None:
                self.frozen_counts = counts
            counts = self.frozen_counts
        else:
            self.frozen_counts = None
        return self.wire.encode_reply_counts(self.config.can_id, *counts,
                                             temperature=reported_temperature(
                                                 self.temperature),
                                             error_code=self.error_code)


class EmulatedSensorBoard:
    """
    The sensor board: boom encoders, boom rates and the foot load cell.

    ``emulator_config``: the :class:`dodo_sim.hardware.emulator.EmulatorConfig`.
    """

    def __init__(self, boom: BoomConfig, joint_names: tuple, contact_frames: tuple,
                 emulator_config, wire: WireFormat):
        self.boom = boom
        self.wire = wire
        self.ecfg = emulator_config
        self.contact_frames = contact_frames
        self._index = [joint_names.index(j) if j else None for j in boom.joints]
        self.freeze = [False, False]
        self.encoder_error = [False, False]
        self.drop_count = 0
        self._frozen: list = [None, None]

    def sample(self, state, sequence: int) -> tuple:
        counts = [0, 0]
        rates = [0.0, 0.0]
        for axis, index in enumerate(self._index):
            if index is None:
                continue
            angle, rate = self.boom.angle_of(axis, float(state.q[index]), float(state.v[index]))
            value = (int(math.floor(self.boom.counts(axis, angle))), rate)
            if self.freeze[axis]:
                if self._frozen[axis] is None:
                    self._frozen[axis] = value
                value = self._frozen[axis]
            else:
                self._frozen[axis] = None
            counts[axis], rates[axis] = value
        force = np.zeros(2)
        if self.boom.contact_frame:
            force = sim_contact_force(state, self.boom.contact_frame, self.contact_frames)
        limit = self.wire.board_force_limit()
        sample = BoardSample(sequence, counts[0], counts[1], rates[0], rates[1],
                             float(force[0]), float(force[1]),
                             bool(force[1] > self.ecfg.foot_switch_threshold),
                             bool(abs(force[0]) > limit or abs(force[1]) > limit),
                             self.encoder_error[0], self.encoder_error[1])
        return self.wire.encode_board(sample)
