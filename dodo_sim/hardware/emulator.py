# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
Emulated hardware driven by the physics.

MIT-mode actuators (or ODrive axes) and the sensor board answering on an in-process CAN bus with
python-can's interface (:mod:`dodo_sim.hardware.emulated_bus`) and the wire format of
``dodo_can.dbc``, their joints being the state of a :class:`dodo_sim.simulator.Simulator`.

The actuator firmware and the sensor board it emulates are described in
:mod:`dodo_sim.hardware.emulated_devices`; :class:`dodo_sim.hardware.emulated_rig.EmulatedRig` runs
the driver core on it in one process, stepped like a simulator.

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

from dataclasses import dataclass
import math
import time
import uuid

import can
import numpy as np

from .backend import bus_off_frame, restarted_frame
from .config import actuator_configs, boom_config, DriverConfig, urdf_joints
from .emulated_bus import DriverSideBus, EmulatedChannel
from .emulated_devices import EmulatedActuator, EmulatedSensorBoard
from .odrive import EmulatedOdriveAxis, OdriveEmulation, split_id
from .protocol import WireFormat

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
        for name in ('ambient_temperature', 'firmware_temperature_limit', 'thermal_rise'):
            if not math.isfinite(getattr(self, name)):
                raise ValueError(f'EmulatorConfig.{name} = {getattr(self, name)}: must be finite')
        if not self.thermal_time_constant > 0.0:
            raise ValueError(f'EmulatorConfig.thermal_time_constant = '
                             f'{self.thermal_time_constant}: must be > 0 s')


class Emulator:
    """
    The emulated actuators and sensor board on an in-process virtual bus (see module docs).

    Inputs:
        sim: the physics (a :class:`dodo_sim.simulator.Simulator`).
        driver_config: the driver's configuration: actuator ids, models, directions, gear
            ratios and the boom layout the emulated hardware is built to.
        config: emulator parameters.
        channel: the bus channel's name (default: a unique one).
    """

    def __init__(self, sim, driver_config: DriverConfig, config: EmulatorConfig | None = None,
                 channel: str | None = None):
        self.sim = sim
        self.config = config or EmulatorConfig()
        self.driver_config = driver_config
        self.channel = channel or f'dodo-emulator-{uuid.uuid4().hex[:12]}'
        self._wire_channel = EmulatedChannel(self.channel)
        self.bus = self._wire_channel.end()
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

    def driver_bus(self) -> DriverSideBus:
        """
        Return a bus for the driver on the emulator's channel.

        The bus has the injected driver-side faults; in lockstep mode it lets the emulator answer
        before each receive.
        """
        bus = DriverSideBus(self, self._wire_channel.end())
        self._driver_buses.append(bus)
        return bus

    # -- time -----------------------------------------------------------------------------------

    def now(self) -> float:
        """
        Emulator time, s: simulated time in lockstep.

        In realtime it is the wall-clock time since the first frame.
        """
        if self.config.mode == 'lockstep' or not self._started:
            return self.steps * self.period
        return time.monotonic() - self._wall_start

    # -- frames ---------------------------------------------------------------------------------

    def service(self) -> None:
        """
        Answer every frame waiting on the bus.

        The driver's side of the bus calls this before it receives. In realtime mode the physics is
        first advanced to the wall clock.
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

        An RTR is answered at once; the cyclic messages go out as the physics advances
        (:meth:`_emit_cyclic`).
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

        At most ``max_catch_up`` periods are stepped; beyond, time is skipped and counted in
        ``skipped_steps``.
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

        For stand 'clamped': an impulse through the mass matrix removes that velocity (the leg's
        velocities change as the clamp's reaction makes them, no energy is added), and the base
        joints' positions are put back.
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

        Each later reply is then dropped with ``probability``.
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

        The actuator then rests until the code is cleared with 0.
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

        It reports it until the firmware's own clear: an MIT-mode actuator's next enable frame, an
        ODrive axis' Clear_Errors (its errors are always latched until then).
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

        ``joint`` is an actuator or a boom joint; its reading stops changing.
        """
        if joint in self.board.boom.joints and joint:
            self.board.freeze[self.board.boom.joints.index(joint)] = frozen
            return
        self._actuator(joint).freeze = frozen

    def boom_encoder_error(self, axis: int, error: bool = True) -> None:
        """
        Make the board flag a signal fault of boom encoder ``axis``.

        ``axis`` is 0 for yaw, 1 for pitch.
        """
        self.board.encoder_error[axis] = error

    def bus_off(self, duration: float) -> None:
        """
        Take the bus off for ``duration`` s.

        ``duration`` is emulator time. An error frame announces the bus-off, no frame gets through
        and the driver's sends fail with ENOBUFS; a 'restarted' error frame follows the first frame
        after it.
        """
        self._bus_off_until = self.now() + duration
        self._bus_off_announced = True
        self.bus.send(bus_off_frame())

    def transmit_queue_full(self, frames: int) -> None:
        """Make the driver's next ``frames`` sends fail with ENOBUFS."""
        self._tx_full = frames

    def _driver_send_fails(self) -> bool:
        if self._tx_full > 0:
            self._tx_full -= 1
            return True
        return self.now() < self._bus_off_until

    def actuator_on(self, joint: str) -> bool:
        """Whether the emulated actuator of ``joint`` is in motor mode."""
        return self._actuator(joint).motor_mode


__all__ = ['Emulator', 'EmulatorConfig', 'HOPPER_JOINTS', 'sim_joint_names',
           'sim_actuated_joint_names']
