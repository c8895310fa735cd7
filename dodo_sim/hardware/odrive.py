# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
ODrive CAN Simple: the driver-side backend and the emulated ODrive axis answering from the physics.

The wire format (ids, error bits, models, ``odrive_can_simple.dbc``) is in
:mod:`dodo_sim.hardware.odrive_protocol`; its names are importable from here too.

Protocol (ODrive CAN Simple, firmware 0.6.x; docs.odriverobotics.com/v/latest/manual/
can-protocol.html and the DBC published in odriverobotics/ODrive ``tools/odrive-cansimple.dbc``):
11-bit frames, arbitration id ``node_id << 5 | cmd_id``, little-endian fields, IEEE float32.
The axis is run in torque control (Set_Controller_Mode: TORQUE_CONTROL = 1, PASSTHROUGH = 1)
and armed with Set_Axis_State(CLOSED_LOOP_CONTROL = 8), disarmed with Set_Axis_State(IDLE = 1).
The ODrive sends cyclic messages at configured rates: Heartbeat (axis error, axis state,
procedure result, trajectory done), Get_Encoder_Estimates (position rev, velocity rev/s, motor
side), Get_Torques (target, estimate N*m), Get_Temperature; a Get_ message is also answered
on an RTR. The backend polls the encoder estimate by RTR every cycle (cyclic 1 ms estimates
beat against the driver's unsynchronised 1 kHz loop: cycles without one, docs/hardware.md);
heartbeat and temperature 100 ms, torques 10 ms cyclic. The axis watchdog
(``axis.config.enable_watchdog``,
``watchdog_timeout``) is fed by the frames the host sends the axis; when it expires the axis
reports WATCHDOG_TIMER_EXPIRED and falls to IDLE (motor off) until Clear_Errors.

How the driver core's frames map (:class:`OdriveBackend`): a command ``MitCommand(p, v, kp,
kd, t)`` becomes Set_Input_Torque with ``t + kp (p - p_meas) + kd (v - v_meas)`` evaluated on
the newest encoder estimate (the ODrive has no MIT mode: the driver's damping and landing laws
are computed on the host; one period older than the MIT firmware's own PD); 'enable' becomes
Set_Controller_Mode + Set_Axis_State(CLOSED_LOOP_CONTROL); 'disable' Set_Axis_State(IDLE);
'zero' Set_Absolute_Position(0). A reply (the :class:`MitReply` the driver core reads) is
assembled from this cycle's Encoder_Estimates (the RTR's answer), the newest Get_Torques,
Get_Temperature
and the Heartbeat's axis error (``error_code``: the ODriveError bit field; a nonzero one is a
fault of the driver).

No rclpy here.
"""
from __future__ import annotations

from dataclasses import dataclass
import math
import struct
import time
from typing import Sequence

import can

from .backend import ActuatorFrame, CanBackend, Exchange
from .emulated_devices import heated
from .odrive_protocol import (arbitration_id, AXIS_STATE_CLOSED_LOOP_CONTROL, AXIS_STATE_IDLE,
                              CLEAR_ERRORS, CONTROL_MODE_TORQUE, GET_ENCODER_ESTIMATES,
                              GET_TEMPERATURE, GET_TORQUES, HEARTBEAT, INPUT_MODE_PASSTHROUGH,
                              MOTOR_OVER_TEMP, ODRIVE_DBC_PATH, odrive_error_name, ODRIVE_ERRORS,
                              odrive_model, ODRIVE_MODELS, OdriveModel, OdriveWire,
                              SET_ABSOLUTE_POSITION, SET_AXIS_STATE, SET_CONTROLLER_MODE,
                              SET_INPUT_TORQUE, split_id, TWO_PI, WATCHDOG_TIMER_EXPIRED)
from .protocol import MitCommand, MitReply, WireFormat


@dataclass
class AxisView:
    """What the host knows of one ODrive axis (newest cyclic messages)."""

    position: float = 0.0          # motor rad
    velocity: float = 0.0          # motor rad/s
    torque: float = 0.0            # N*m estimate
    temperature: float = math.nan  # motor degC
    axis_error: int = 0
    axis_state: int = 0
    procedure_result: int = 0
    heartbeats: int = 0
    raw: tuple = (0, 0, 0)         # float32 bit patterns (frozen-reading check)


class OdriveBackend(CanBackend):
    """
    ODrive axes (CAN Simple) and the sensor board on one python-can bus (module docs).

    ``actuators[k].can_id`` is the axis node id (0..63).
    """

    def __init__(self, bus: can.BusABC, actuators: Sequence, board: bool = True,
                 wire: WireFormat | None = None, clock=time.perf_counter):
        super().__init__(bus, actuators, board=board, wire=wire, clock=clock)
        self.odrive = OdriveWire()
        self.axes = {a.can_id: AxisView() for a in self.actuators}
        self.counters.update({'odrive_heartbeats': 0, 'odrive_clear_errors': 0})
        self._clear_pending = False

    def request_clear_errors(self) -> None:
        """
        Send Clear_Errors to every axis with the next cycle's frames.

        That is what an ODrive user does after fixing the cause of an axis error.
        """
        self._clear_pending = True

    def axis_error_name(self, node_id: int) -> str:
        return odrive_error_name(self.axes[node_id].axis_error)

    def _frames_for(self, frame: ActuatorFrame) -> list:
        node = frame.can_id
        enc = self.odrive.encode
        if frame.kind == 'command':
            c = frame.command or MitCommand()
            axis = self.axes[node]
            torque = c.torque
            if c.kp:
                torque += c.kp * (c.position - axis.position)
            if c.kd:
                torque += c.kd * (c.velocity - axis.velocity)
            return [(SET_INPUT_TORQUE, enc(SET_INPUT_TORQUE, Input_Torque=float(torque)))]
        if frame.kind == 'enable':
            return [(SET_CONTROLLER_MODE, enc(SET_CONTROLLER_MODE,
                                              Control_Mode=CONTROL_MODE_TORQUE,
                                              Input_Mode=INPUT_MODE_PASSTHROUGH)),
                    (SET_AXIS_STATE, enc(SET_AXIS_STATE,
                                         Axis_Requested_State=AXIS_STATE_CLOSED_LOOP_CONTROL))]
        if frame.kind == 'disable':
            return [(SET_AXIS_STATE, enc(SET_AXIS_STATE, Axis_Requested_State=AXIS_STATE_IDLE))]
        if frame.kind == 'zero':
            return [(SET_ABSOLUTE_POSITION, enc(SET_ABSOLUTE_POSITION, Position=0.0))]
        if frame.kind == 'clear_errors':        # the driver's ~/clear_errors (DriverCore)
            self.counters['odrive_clear_errors'] += 1
            return [(CLEAR_ERRORS, enc(CLEAR_ERRORS, Identify=0))]
        raise ValueError(f'unknown frame kind {frame.kind!r}')

    def exchange(self, frames: Sequence[ActuatorFrame], sequence: int,
                 reply_timeout: float) -> Exchange:
        clock = self.clock
        result = Exchange(t_start=clock())
        # frames queued since the last cycle (late answers; heartbeats and cyclic messages
        # update the axis view)
        self._take_queued(result)
        result.board = None
        if self.board:
            self._send(self.wire.sync_id, self.wire.encode_sync(sequence), result)
        sent = []
        clear = self._clear_pending
        self._clear_pending = False
        for frame in frames:
            ok = True
            if clear:
                ok = self._send(arbitration_id(frame.can_id, CLEAR_ERRORS),
                                self.odrive.encode(CLEAR_ERRORS, Identify=0), result)
                self.counters['odrive_clear_errors'] += ok
            for cmd_id, data in self._frames_for(frame):
                ok = self._send(arbitration_id(frame.can_id, cmd_id), data, result) and ok
            # poll the estimate by RTR: it answers this cycle (cyclic 1 ms messages beat
            # against an unsynchronised 1 kHz host loop and miss cycles)
            ok = self._send(arbitration_id(frame.can_id, GET_ENCODER_ESTIMATES), b'', result,
                            remote=True) and ok
            if ok:
                sent.append(frame.can_id)
        result.sent = tuple(sent)
        result.t_sent = clock()
        # an axis has answered this cycle once its Encoder_Estimates came
        result.replies.clear()
        return self._collect(result, sent, sequence, reply_timeout)

    def _send(self, arbitration: int, data: bytes, result: Exchange,
              remote: bool = False) -> bool:
        if not remote:
            return super()._send(arbitration, data, result)
        msg = can.Message(arbitration_id=arbitration, is_remote_frame=True, dlc=8,
                          is_extended_id=False)
        try:
            self.bus.send(msg, timeout=0.0)
        except can.CanError:
            result.tx_errors += 1
            self.counters['tx_errors'] += 1
            return False
        self.counters['tx_frames'] += 1
        return True

    def _handle(self, msg: can.Message, result: Exchange, sequence: int | None) -> int:
        if msg.is_error_frame or msg.arbitration_id in (
                self.wire.boom_angles_id, self.wire.boom_rates_id):
            return super()._handle(msg, result, sequence)
        if msg.is_remote_frame:
            return 0
        node, cmd = split_id(msg.arbitration_id)
        axis = self.axes.get(node)
        if axis is None or not self.odrive.knows(cmd):
            return super()._handle(msg, result, sequence)     # counted as unknown there
        self.counters['rx_frames'] += 1
        d = self.odrive.decode(cmd, msg.data)
        if cmd == HEARTBEAT:
            axis.axis_error = d['Axis_Error']
            axis.axis_state = d['Axis_State']
            axis.procedure_result = d['Procedure_Result']
            axis.heartbeats += 1
            self.counters['odrive_heartbeats'] += 1
            return 0
        if cmd == GET_TORQUES:
            axis.torque = float(d['Torque_Estimate'])
            return 0
        if cmd == GET_TEMPERATURE:
            axis.temperature = float(d['Motor_Temperature'])
            return 0
        if cmd != GET_ENCODER_ESTIMATES:
            return 0
        axis.position = TWO_PI * float(d['Pos_Estimate'])
        axis.velocity = TWO_PI * float(d['Vel_Estimate'])
        raw = bytes(msg.data)
        axis.raw = (struct.unpack_from('<I', raw, 0)[0], struct.unpack_from('<I', raw, 4)[0],
                    struct.pack('<f', axis.torque))
        temperature = axis.temperature if math.isfinite(axis.temperature) else 25.0
        result.replies[node] = MitReply(node, axis.position, axis.velocity, axis.torque,
                                        int(round(temperature)), axis.axis_error, axis.raw)
        return 1


# -- the emulated axis -------------------------------------------------------------------------

@dataclass(frozen=True)
class OdriveEmulation:
    """
    Configuration of an emulated ODrive axis (what ``odrivetool`` would have set).

    Fields:
        heartbeat_period: axis.config.can.heartbeat_msg_rate_ms, s.
        encoder_period: encoder_msg_rate_ms, s; 0: off (the driver polls the estimate by RTR
            every cycle).
        torques_period: torques_msg_rate_ms, s (the effort on /joint_states updates at it).
        temperature_period: temperature_msg_rate_ms, s.
        watchdog_timeout: axis.config.watchdog_timeout, s (enable_watchdog = True).
        velocity_noise: standard deviation of the velocity estimate, rev/s.
    """

    heartbeat_period: float = 0.1
    encoder_period: float = 0.0
    torques_period: float = 0.01
    temperature_period: float = 0.1
    watchdog_timeout: float = 0.25
    velocity_noise: float = 0.002


class EmulatedOdriveAxis:
    """
    One ODrive axis in torque control, answering from the physics.

    The axis state machine (IDLE -> CLOSED_LOOP_CONTROL on Set_Axis_State, back to IDLE on request,
    on an error or on a watchdog expiry), the cyclic messages at their rates and the errors of a
    heartbeat.

    ``config`` is the driver's :class:`ActuatorConfig` of the joint (node id = ``can_id``,
    gear, direction, zero offset = the emulated encoder's position at joint zero, motor rad).
    """

    def __init__(self, config, emulation: OdriveEmulation, emulator_config, rng):
        self.config = config
        self.emu = emulation
        self.ecfg = emulator_config
        self.rng = rng
        self.wire = OdriveWire()
        self.node_id = config.can_id
        self.axis_state = AXIS_STATE_IDLE
        self.axis_error = 0
        self.procedure_result = 0
        self.control_mode = 0          # set by Set_Controller_Mode (TORQUE_CONTROL expected)
        self.input_mode = 0
        self.input_torque = 0.0
        self.output = 0.0              # motor torque applied over the current period, N*m
        self.last_feed = -math.inf
        self.temperature = emulator_config.ambient_temperature
        self.torque_limit = odrive_model(config.model).torque_limit
        self.frames_received = 0
        self.arm_requests = 0
        self.position_offset = 0.0     # Set_Absolute_Position shifts the estimate, motor rad
        self._next = {HEARTBEAT: 0.0, GET_ENCODER_ESTIMATES: 0.0, GET_TORQUES: 0.0,
                      GET_TEMPERATURE: 0.0}

    # the emulator's interface shared with the MIT actuator
    @property
    def motor_mode(self) -> bool:
        return self.axis_state == AXIS_STATE_CLOSED_LOOP_CONTROL

    @property
    def error_code(self) -> int:
        return self.axis_error

    def motor_state(self, q: float, v: float) -> tuple:
        a = self.config
        return (a.actuator_position(q) + self.position_offset,
                a.direction * a.gear_ratio * v)

    def receive(self, cmd_id: int, data: bytes, now: float, q: float, v: float,
                remote: bool = False) -> bytes | None:
        """
        Return a host frame addressed to this axis.

        Returns the answer to an RTR (Get_Encoder_ Estimates), None otherwise (the rest goes out
        cyclically).
        """
        self.frames_received += 1
        self.last_feed = now                       # any host frame feeds the watchdog
        if remote:
            return self.encoder_estimates(q, v) if cmd_id == GET_ENCODER_ESTIMATES else None
        if not self.wire.knows(cmd_id):
            return None
        d = self.wire.decode(cmd_id, data)
        if cmd_id == SET_AXIS_STATE:
            requested = d['Axis_Requested_State']
            if requested == AXIS_STATE_CLOSED_LOOP_CONTROL:
                self.arm_requests += 1
                if self.axis_error:
                    self.axis_state = AXIS_STATE_IDLE    # refuses to arm with an error
                    self.procedure_result = 3            # DISARMED
                else:
                    self.axis_state = AXIS_STATE_CLOSED_LOOP_CONTROL
                    self.procedure_result = 0
                    self.last_feed = now
            elif requested == AXIS_STATE_IDLE:
                self.disarm()
        elif cmd_id == SET_CONTROLLER_MODE:
            self.control_mode = d['Control_Mode']
            self.input_mode = d['Input_Mode']
        elif cmd_id == SET_INPUT_TORQUE:
            self.input_torque = float(d['Input_Torque'])
        elif cmd_id == CLEAR_ERRORS:
            self.axis_error = 0
        elif cmd_id == SET_ABSOLUTE_POSITION:
            p, _ = self.motor_state(q, v)
            self.position_offset += TWO_PI * float(d['Position']) - p

    def disarm(self) -> None:
        self.axis_state = AXIS_STATE_IDLE
        self.output = 0.0

    def set_error(self, bits: int) -> None:
        self.axis_error |= int(bits)
        if bits:
            self.disarm()

    def torque(self, now: float, q: float, v: float) -> float:
        """Motor torque for the coming period, N*m; checks the watchdog first."""
        if (self.motor_mode and self.emu.watchdog_timeout > 0.0
                and now - self.last_feed > self.emu.watchdog_timeout):
            self.set_error(WATCHDOG_TIMER_EXPIRED)
        if not self.motor_mode or self.control_mode != CONTROL_MODE_TORQUE:
            self.output = 0.0
            return 0.0
        self.output = max(-self.torque_limit, min(self.torque_limit, self.input_torque))
        return self.output

    def heat(self, dt: float) -> None:
        self.temperature = heated(self.temperature, self.output, dt, self.ecfg)
        self.check_temperature()

    def check_temperature(self) -> None:
        # not a number (a broken thermistor) counts as too hot, as on the MIT-mode firmware
        if not self.temperature < self.ecfg.firmware_temperature_limit:
            self.set_error(MOTOR_OVER_TEMP)

    def encoder_estimates(self, q: float, v: float) -> bytes:
        """Get_Encoder_Estimates data (cyclic, or the answer to an RTR)."""
        p, pv = self.motor_state(q, v)
        vel = pv / TWO_PI
        if self.emu.velocity_noise > 0.0:
            vel += self.rng.normal(0.0, self.emu.velocity_noise)
        return self.wire.encode(GET_ENCODER_ESTIMATES, Pos_Estimate=p / TWO_PI, Vel_Estimate=vel)

    def cyclic(self, now: float, q: float, v: float) -> list:
        """Return the cyclic messages due at ``now``: [(arbitration id, data)]."""
        out = []
        enc = self.wire.encode
        periods = {HEARTBEAT: self.emu.heartbeat_period,
                   GET_ENCODER_ESTIMATES: self.emu.encoder_period,
                   GET_TORQUES: self.emu.torques_period,
                   GET_TEMPERATURE: self.emu.temperature_period}
        for cmd_id, period in periods.items():
            if period <= 0.0 or now + 1e-9 < self._next[cmd_id]:
                continue
            self._next[cmd_id] = now + period
            if cmd_id == HEARTBEAT:
                data = enc(HEARTBEAT, Axis_Error=self.axis_error, Axis_State=self.axis_state,
                           Procedure_Result=self.procedure_result, Trajectory_Done_Flag=1)
            elif cmd_id == GET_ENCODER_ESTIMATES:
                data = self.encoder_estimates(q, v)
            elif cmd_id == GET_TORQUES:
                data = enc(GET_TORQUES, Torque_Target=self.input_torque,
                           Torque_Estimate=self.output)
            else:
                data = enc(GET_TEMPERATURE, FET_Temperature=self.temperature,
                           Motor_Temperature=self.temperature)
            out.append((arbitration_id(self.node_id, cmd_id), data))
        return out


__all__ = ['OdriveBackend', 'OdriveWire', 'EmulatedOdriveAxis', 'OdriveEmulation',
           'OdriveModel', 'ODRIVE_MODELS', 'ODRIVE_ERRORS', 'ODRIVE_DBC_PATH',
           'odrive_model', 'odrive_error_name', 'arbitration_id', 'split_id']
