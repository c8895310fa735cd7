# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
Emulated hardware driven by the physics.

MIT-mode actuators and the sensor board answering on a python-can bus with the wire format of
``dodo_can.dbc``, their joints being the state of a :class:`dodo_sim.simulator.Simulator`.

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

Timing: the emulator has no thread; the driver's side of the bus (:meth:`Emulator.driver_bus`)
lets it answer the frames waiting for it whenever the driver receives. ``mode='lockstep'``
advances the physics by one control period at each Sync (then replies), so a driver cycle is
one period of simulated time (deterministic). ``mode='realtime'`` first advances the physics to
the wall clock in whole periods (zero-order hold of the commands in force, the firmware
timeout checked at each period), then replies: a stalled driver finds the robot where the
held commands took it. (An emulator thread was tried first: Python's GIL hand-offs between
two threads cost 0.4-5 ms per exchange on a loaded 2-core machine, more than the period.)

Faults (any time, any thread): :meth:`Emulator.drop_replies`, :meth:`Emulator.set_error`,
:meth:`Emulator.set_temperature`, :meth:`Emulator.freeze_encoder`,
:meth:`Emulator.boom_encoder_error`, :meth:`Emulator.bus_off`,
:meth:`Emulator.transmit_queue_full`.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass
import math
import time
from types import SimpleNamespace
from typing import NamedTuple
import uuid

import can
import numpy as np

from .backend import bus_off_frame, enobufs_error, restarted_frame
from .backends import make_backend
from .config import (actuator_configs, ActuatorConfig, boom_config, BoomConfig, Calibration,
                     DriverConfig, urdf_joints)
from .driver import DriverCore
from .odrive import EmulatedOdriveAxis, OdriveEmulation, split_id
from .protocol import (BoardSample, FIELD_BITS, firmware_float_to_counts,
                       MitCommand, POSITION_BITS, WireFormat)

#: The hopper's joints, for a simulator core without ``joint_names`` (before the
#: robot-agnostic engine).
HOPPER_JOINTS = ('base_x', 'base_z', 'hip', 'knee')
HOPPER_ACTUATED = ('hip', 'knee')
#: How the emulated robot is held (EmulatorConfig.stand).
STANDS = ('until_enable', 'clamped', 'none')


def sim_joint_names(sim) -> tuple:
    return tuple(getattr(sim, 'joint_names', HOPPER_JOINTS))


def sim_actuated_joint_names(sim) -> tuple:
    return tuple(getattr(sim, 'actuated_joint_names', HOPPER_ACTUATED))


def sim_contact_force(state, frame: str, frames: tuple) -> np.ndarray:
    """World [x, z] force on contact frame ``frame`` (N) of a simulator state."""
    forces = getattr(state, 'contact_forces', None)
    if forces is not None and frame in frames:
        row = np.asarray(forces[frames.index(frame)], dtype=float)
        return row[[0, 2]] if row.shape[0] == 3 else row
    return np.asarray(state.contact_force, dtype=float)


@dataclass(frozen=True)
class EmulatorConfig:
    """
    Emulated hardware parameters.

    Fields:
        mode: 'lockstep' (one physics period per Sync) or 'realtime' (the physics follows the
            wall clock).
        stand: 'until_enable': the robot rests on a stand in its initial pose (physics
            frozen) until an actuator is first enabled, as a real leg is held while the motors
            are off; 'clamped': the body stays clamped at its initial boom pose, the leg hangs
            free (a leg on a test stand; the boom joints are put back after every period);
            'none': the physics runs from the start.
        velocity_noise_counts: standard deviation of the velocity reading, counts (real
            velocity estimates jitter; the frozen-reading check relies on it).
        actuator_offsets: actuator position at joint zero per actuated joint, rad (what a
            power-up gives; the driver's calibration must match it). Empty: zeros.
        boom_power_on_counts: boom encoder counts at angle zero [yaw, pitch].
        current_limit: phase current limit of every actuator, A (times the torque constant:
            a torque limit below the model range), inf: the model range only.
        motor_timeout: firmware CAN timeout: no frame for this long in motor mode -> zero
            output, s.
        ambient_temperature: degC.
        thermal_time_constant: s.
        thermal_rise: steady temperature rise per (N*m)^2 of actuator torque, degC.
        firmware_temperature_limit: over this the firmware reports error 1 and rests, degC.
        foot_switch_threshold: vertical force that closes the foot switch, N.
        seed: noise seed.
        max_catch_up: realtime: most physics periods made up at once after a stall (the rest
            of the stall is skipped, counted in ``skipped_steps``).
        odrive: the emulated ODrive axes' settings (message rates, watchdog; used when the
            driver's ``protocols`` are 'odrive_can_simple').
    """

    mode: str = 'lockstep'
    stand: str = 'until_enable'
    velocity_noise_counts: float = 1.0
    actuator_offsets: tuple = ()
    boom_power_on_counts: tuple = (0, 0)
    current_limit: float = math.inf
    motor_timeout: float = 0.1
    ambient_temperature: float = 25.0
    thermal_time_constant: float = 300.0
    thermal_rise: float = 0.15
    firmware_temperature_limit: float = 100.0
    foot_switch_threshold: float = 5.0
    seed: int = 0
    max_catch_up: int = 10
    odrive: OdriveEmulation = OdriveEmulation()

    def __post_init__(self):
        if self.mode not in ('lockstep', 'realtime'):
            raise ValueError(f"EmulatorConfig.mode = {self.mode!r}: 'lockstep' or 'realtime'")
        if self.stand not in STANDS:
            raise ValueError(f'EmulatorConfig.stand = {self.stand!r}: one of {STANDS}')


class EmulatedActuator:
    """
    The firmware of one MIT-mode actuator (see module docs).

    ``config.zero_offset`` is the emulated power-up offset (actuator position at joint zero).
    """

    def __init__(self, config: ActuatorConfig, emulator_config: EmulatorConfig,
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
        e = self.ecfg
        target = e.ambient_temperature + e.thermal_rise * self.output * self.output
        self.temperature += (target - self.temperature) * (1.0 - math.exp(
            -dt / e.thermal_time_constant))
        self.check_temperature()

    def check_temperature(self) -> None:
        if self.temperature >= self.ecfg.firmware_temperature_limit and self.error_code == 0:
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
                                             temperature=int(round(self.temperature)),
                                             error_code=self.error_code)


class EmulatedSensorBoard:
    """The sensor board: boom encoders, boom rates and the foot load cell."""

    def __init__(self, boom: BoomConfig, joint_names: tuple, contact_frames: tuple,
                 emulator_config: EmulatorConfig, wire: WireFormat):
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


class Emulator:
    """
    The emulated actuators and sensor board on an in-process virtual bus (see module docs).

    Inputs:
        sim: the physics (a :class:`dodo_sim.simulator.Simulator`).
        driver_config: the driver's configuration: actuator ids, models, directions, gear
            ratios and the boom layout the emulated hardware is built to.
        config: emulator parameters.
        channel: virtual bus channel name (default: a unique one).
    """

    def __init__(self, sim, driver_config: DriverConfig, config: EmulatorConfig | None = None,
                 channel: str | None = None):
        self.sim = sim
        self.config = config or EmulatorConfig()
        self.driver_config = driver_config
        self.channel = channel or f'dodo-emulator-{uuid.uuid4().hex[:12]}'
        self.bus = can.Bus(interface='virtual', channel=self.channel)
        self.wire = WireFormat()
        self.period = float(sim.config.control_period)
        self.joint_names = sim_joint_names(sim)
        self.actuated = sim_actuated_joint_names(sim)
        self.contact_frames = tuple(getattr(sim, 'contact_frames', ('foot',)))
        _, limits = urdf_joints(sim.leg.urdf_xml)
        offsets = dict(zip(driver_config.joints, self.config.actuator_offsets or
                           (0.0,) * len(driver_config.joints)))
        rng = np.random.default_rng(self.config.seed)
        #: ODrive axes instead of MIT actuators (one protocol per bus, DriverConfig.protocols)
        self.odrive_bus = driver_config.actuator_protocol(0) == 'odrive_can_simple'
        self.actuators = {
            a.can_id: (EmulatedOdriveAxis(a, self.config.odrive, self.config, rng)
                       if self.odrive_bus else EmulatedActuator(a, self.config, self.wire, rng))
            for a in actuator_configs(driver_config, limits, offsets)}
        missing = [a.config.joint for a in self.actuators.values()
                   if a.config.joint not in self.actuated]
        if missing:
            raise ValueError(f'driver joints {missing} are not actuated joints of the simulator '
                             f'{list(self.actuated)}')
        self._q_index = {a.config.joint: self.joint_names.index(a.config.joint)
                         for a in self.actuators.values()}
        self._tau_index = {a.config.joint: self.actuated.index(a.config.joint)
                           for a in self.actuators.values()}
        self.board = EmulatedSensorBoard(
            boom_config(driver_config, self.config.boom_power_on_counts), self.joint_names,
            self.contact_frames, self.config, self.wire)
        self.has_board = any(driver_config.boom_joints) or bool(driver_config.contact_frame)
        self.steps = 0
        self.syncs = 0
        self.tau = np.zeros(len(self.actuated))
        self._driver_buses: list = []
        self._bus_off_until = -math.inf
        self._bus_off_announced = False
        self._tx_full = 0
        self._wall_start = 0.0
        self._started = False
        self.skipped_steps = 0
        self.on_stand = self.config.stand == 'until_enable'
        self._clamped = [self.joint_names.index(j) for j in driver_config.boom_joints
                         if j] if self.config.stand == 'clamped' else []
        self._clamp_q = np.array(sim.state.q, dtype=float)
        self._pin_data = sim.leg.model.createData() if self._clamped else None

    # -- the driver's side of the bus -----------------------------------------------------------

    def driver_bus(self) -> '_DriverSideBus':
        """
        Return a bus for the driver on the emulator's channel.

        (with the injected driver-side faults; in lockstep mode it lets the emulator answer before
        each receive).
        """
        bus = _DriverSideBus(self, can.Bus(interface='virtual', channel=self.channel))
        self._driver_buses.append(bus)
        return bus

    # -- time -----------------------------------------------------------------------------------

    def now(self) -> float:
        """
        Emulator time, s: simulated time in lockstep.

        Wall-clock time since the first frame in realtime.
        """
        if self.config.mode == 'lockstep' or not self._started:
            return self.steps * self.period
        return time.monotonic() - self._wall_start

    # -- frames ---------------------------------------------------------------------------------

    def service(self) -> None:
        """
        Answer every frame waiting on the bus.

        Answer every frame waiting on the bus (the driver's side of the bus calls this before it
        receives); in realtime mode first advance the physics to the wall clock.
        """
        if self.config.mode == 'realtime':
            self._advance_to(self.now())
        while True:
            msg = self.bus.recv(0.0)
            if msg is None:
                break
            self._handle(msg, self.now())

    def _handle(self, msg: can.Message, now: float) -> None:
        if msg.is_error_frame:
            return
        if now < self._bus_off_until:
            return                                   # bus-off: nothing gets through
        if self._bus_off_announced:
            self._bus_off_announced = False
            self.bus.send(restarted_frame())
        state = self.sim.state
        arbitration_id = msg.arbitration_id
        if arbitration_id == self.wire.sync_id and self.has_board:
            self.syncs += 1
            if self.config.mode == 'lockstep':
                self._step_physics(now)
                now = self.now()
                state = self.sim.state
            sequence = self.wire.decode_sync(msg.data)
            if self.board.drop_count > 0:
                self.board.drop_count -= 1
                return
            for frame_id, data in self.board.sample(state, sequence):
                self._queue(now, frame_id, data)
            return
        if self.odrive_bus:
            self._handle_odrive(arbitration_id, bytes(msg.data), now, msg.is_remote_frame)
            return
        actuator = self.actuators.get(arbitration_id)
        if actuator is None:
            return
        if self.config.mode == 'lockstep' and not self.has_board and actuator is next(
                iter(self.actuators.values())):
            self._step_physics(now)                  # no Sync on this bus: first frame paces
            now = self.now()
            state = self.sim.state
        index = self._q_index[actuator.config.joint]
        reply = actuator.receive(bytes(msg.data), now, float(state.q[index]),
                                 float(state.v[index]))
        if reply is not None:
            self._queue(now, self.wire.reply_id, reply)

    def _handle_odrive(self, arbitration_id: int, data: bytes, now: float,
                       remote: bool) -> None:
        """
        Handle a host frame for an emulated ODrive axis.

        A host frame for an emulated ODrive axis.

        (an RTR is answered at once; the cyclic messages go out as the physics advances,
        :meth:`_emit_cyclic`).
        """
        node, cmd = split_id(arbitration_id)
        axis = self.actuators.get(node)
        if axis is None:
            return
        if self.config.mode == 'lockstep' and not self.has_board and axis is next(
                iter(self.actuators.values())) and cmd == 0x0E:
            self._step_physics(now)                  # no Sync: the first torque frame paces
            now = self.now()
        state = self.sim.state
        index = self._q_index[axis.config.joint]
        answer = axis.receive(cmd, data, now, float(state.q[index]), float(state.v[index]),
                              remote)
        if answer is not None:
            self._queue(now, arbitration_id, answer)

    def _emit_cyclic(self) -> None:
        """Send the ODrive axes' cyclic messages due at the emulator's time."""
        if not self.odrive_bus or self.now() < self._bus_off_until:
            return
        now = self.now()
        state = self.sim.state
        for axis in self.actuators.values():
            index = self._q_index[axis.config.joint]
            for frame_id, data in axis.cyclic(now, float(state.q[index]),
                                              float(state.v[index])):
                self._queue(now, frame_id, data)

    def _queue(self, now: float, frame_id: int, data: bytes) -> None:
        self.bus.send(can.Message(arbitration_id=frame_id, data=data, is_extended_id=False))

    # -- physics --------------------------------------------------------------------------------

    def _advance_to(self, now: float) -> None:
        """
        Realtime: step the physics until it reaches wall-clock time ``now``.

        (at most ``max_catch_up`` periods; beyond, time is skipped and counted in
        ``skipped_steps``).
        """
        if not self._started:
            self._started = True
            self._wall_start = time.monotonic() - self.steps * self.period
            return
        due = int(now / self.period) - self.steps
        if due > self.config.max_catch_up:
            skipped = due - self.config.max_catch_up
            self.skipped_steps += skipped
            self._wall_start += skipped * self.period
            due = self.config.max_catch_up
        for _ in range(due):
            self._step_physics(self.steps * self.period)

    def _clamp(self, state) -> None:
        """
        Clamp the stand: remove the base joints' velocity.

        Stand 'clamped': the base joints' velocity is removed by an impulse through the mass matrix
        (the leg's velocities change as the clamp's reaction makes them, no energy is added) and
        their positions are put back.
        """
        import pinocchio as pin
        model = self.sim.leg.model
        b = self._clamped
        q = np.array(state.q, dtype=float)
        v = np.array(state.v, dtype=float)
        q[b] = self._clamp_q[b]
        mass = pin.crba(model, self._pin_data, q)
        mass = np.triu(mass) + np.triu(mass, 1).T
        minv_b = np.linalg.solve(mass, np.eye(len(v))[:, b])       # M^-1 J^T
        v = v - minv_b @ np.linalg.solve(minv_b[b, :], v[b])
        v[b] = 0.0
        self.sim.reset(q, v)

    def _step_physics(self, now: float) -> None:
        if self.on_stand:
            self.on_stand = not any(a.motor_mode for a in self.actuators.values())
            if self.on_stand:
                self.steps += 1          # time passes, the robot stays on its stand
                self._emit_cyclic()
                return
        state = self.sim.state
        tau = self.tau
        for actuator in self.actuators.values():
            joint = actuator.config.joint
            i = self._q_index[joint]
            out = actuator.torque(now, float(state.q[i]), float(state.v[i]))
            tau[self._tau_index[joint]] = actuator.config.joint_torque(out)
        state = self.sim.step(tau)
        if self._clamped:
            self._clamp(state)
        self.steps += 1
        for actuator in self.actuators.values():
            actuator.heat(self.period)
        self._emit_cyclic()

    def close(self) -> None:
        self.bus.shutdown()

    # -- fault injection ------------------------------------------------------------------------

    def _actuator(self, joint: str) -> EmulatedActuator:
        for a in self.actuators.values():
            if a.config.joint == joint:
                return a
        raise ValueError(f'no emulated actuator drives {joint!r}')

    def drop_replies(self, joint: str, count: int = 0, probability: float = 0.0) -> None:
        """
        Drop the next ``count`` replies of ``joint`` ('board': the sensor board).

        And each later one with ``probability``.
        """
        if joint == 'board':
            self.board.drop_count = count
            return
        a = self._actuator(joint)
        a.drop_count = count
        a.drop_probability = probability

    def set_error(self, joint: str, code: int) -> None:
        """
        Make the actuator report error ``code``.

        The actuator reports error ``code`` (and rests until the code is cleared with 0).
        """
        a = self._actuator(joint)
        if isinstance(a, EmulatedOdriveAxis):
            if code:
                a.set_error(int(code))       # ODriveError bits, latched until Clear_Errors
            else:
                a.axis_error = 0
            return
        a.error_code = int(code)
        a.error_persists = bool(code)
        if code:
            a.motor_mode = False
            a.output = 0.0

    def resolve_error(self, joint: str) -> None:
        """
        Remove the cause of an injected error; the actuator keeps reporting it (latched).

        Until the firmware's own clear: an MIT-mode actuator's next enable frame, an ODrive axis'
        Clear_Errors (its errors are always latched until then).
        """
        a = self._actuator(joint)
        if not isinstance(a, EmulatedOdriveAxis):
            a.error_persists = False

    def set_temperature(self, joint: str, degc: float) -> None:
        a = self._actuator(joint)
        a.temperature = float(degc)
        a.check_temperature()

    def freeze_encoder(self, joint: str, frozen: bool = True) -> None:
        """
        Freeze the reading of ``joint``.

        The reading of ``joint`` (an actuator or a boom joint) stops changing.
        """
        if joint in self.board.boom.joints and joint:
            self.board.freeze[self.board.boom.joints.index(joint)] = frozen
            return
        self._actuator(joint).freeze = frozen

    def boom_encoder_error(self, axis: int, error: bool = True) -> None:
        """
        Make the board flag a signal fault of boom encoder ``axis``.

        The board flags a signal fault of boom encoder ``axis`` (0 yaw, 1 pitch).
        """
        self.board.encoder_error[axis] = error

    def bus_off(self, duration: float) -> None:
        """
        Take the bus off for ``duration`` s.

        The bus goes off for ``duration`` s (emulator time): an error frame announces it, no frame
        gets through, the driver's sends fail with ENOBUFS; a 'restarted' error frame follows the
        first frame after it.
        """
        self._bus_off_until = self.now() + duration
        self._bus_off_announced = True
        self.bus.send(bus_off_frame())

    def transmit_queue_full(self, frames: int) -> None:
        """
        Make the driver's next ``frames`` sends fail with ENOBUFS.

        The driver's next ``frames`` sends fail with ENOBUFS.
        """
        self._tx_full = frames

    def _driver_send_fails(self) -> bool:
        if self._tx_full > 0:
            self._tx_full -= 1
            return True
        return self.now() < self._bus_off_until

    def actuator_on(self, joint: str) -> bool:
        """Whether the emulated actuator of ``joint`` is in motor mode."""
        return self._actuator(joint).motor_mode


class _DriverSideBus:
    """
    The driver's end of the emulator's virtual bus.

    (duck-types the python-can bus methods the backend uses).
    """

    def __init__(self, emulator: Emulator, bus: can.BusABC):
        self.emulator = emulator
        self.inner = bus
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


# -- the driver and the emulator in one process, stepped like a simulator -------------------------

class RigState(NamedTuple):
    """What :func:`dodo_sim.rollout.rollout` reads from a state (all measured by the driver)."""

    t: float
    q: np.ndarray
    v: np.ndarray
    in_contact: bool
    contact_force: np.ndarray
    contact_forces: np.ndarray      # one world [fx, fy, fz] row per contact frame, N
    tau_applied: np.ndarray


class EmulatedRig:
    """
    The driver core on the emulated hardware in lockstep, with a simulator's ``step``.

    ``rollout(EmulatedRig(...), controller)`` closes the loop through the wire format, the safety
    supervisor and the calibration, no ROS.

    Each :meth:`step` is one driver cycle: the command goes out in this cycle's frames and acts
    over the following period (the one-period delay of a fixed-rate hardware loop).
    """

    def __init__(self, sim, driver_config: DriverConfig,
                 emulator_config: EmulatorConfig | None = None,
                 calibration: Calibration | None = None, enable: bool = True):
        ecfg = emulator_config or EmulatorConfig()
        if ecfg.mode != 'lockstep':
            ecfg = dataclasses.replace(ecfg, mode='lockstep')
        if abs(sim.config.control_period - driver_config.control_period) > 1e-12:
            raise ValueError(f'driver control_period {driver_config.control_period} s differs '
                             f"from the simulator's {sim.config.control_period} s")
        self.sim = sim
        self.emulator = Emulator(sim, driver_config, ecfg)
        names, limits = urdf_joints(sim.leg.urdf_xml)
        actuators = actuator_configs(driver_config, limits)
        backend = make_backend(self.emulator.driver_bus(), actuators,
                               board=self.emulator.has_board)
        self.driver = DriverCore(driver_config, names, limits, backend, calibration)
        self.config = SimpleNamespace(control_period=driver_config.control_period)
        #: the one contact the sensor board measures (driver config), under the simulator's
        #: frame name; the rollout reads contact forces per frame
        self.contact_frames = ((driver_config.contact_frame,) if driver_config.contact_frame
                               else ())
        self.joint_names = tuple(names)
        self.actuated_joint_names = tuple(driver_config.joints)
        self._index = [names.index(j) for j in self.driver.actuated_joint_names]
        self.state = self._cycle()
        if enable:
            ok, message = self.driver.enable(self.state.t)
            if not ok:
                raise RuntimeError(f'cannot enable the emulated rig: {message}')
            for _ in range(2):          # zero command, enable frame
                self.state = self._cycle()

    @property
    def time(self) -> float:
        return self.state.t

    def _cycle(self) -> RigState:
        now = (self.emulator.steps + 1) * self.emulator.period
        s = self.driver.cycle(now)
        fx, fz = s.contact_force
        rows = np.array([[fx, 0.0, fz]] * len(self.contact_frames)).reshape(-1, 3)
        return RigState(s.t, s.q, s.v, s.in_contact, s.contact_force, rows,
                        s.effort[self._index])

    def step(self, tau) -> RigState:
        """
        One cycle with command ``tau`` (actuated joints, N*m); None: no command this cycle.

        (a silent controller).
        """
        if tau is not None:
            self.driver.set_command(self.state.t, tau)
        self.state = self._cycle()
        return self.state

    def close(self) -> None:
        self.driver.shutdown()
        self.emulator.close()


__all__ = ['Emulator', 'EmulatorConfig', 'EmulatedActuator', 'EmulatedSensorBoard',
           'EmulatedRig', 'RigState', 'HOPPER_JOINTS', 'sim_joint_names',
           'sim_actuated_joint_names']
