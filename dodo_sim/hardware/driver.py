# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
The driver core: backend + safety supervisor + calibration -> one measured sample per cycle.

No rclpy: the ``driver`` node (dodo_sim/ros/driver_node.py) is a thin adapter around
:class:`DriverCore`, and :class:`dodo_sim.hardware.emulated_rig.EmulatedRig` runs the same core in
process (``dodo_sim.rollout``). Time is passed in (``now``, s, any monotonic clock).

One :meth:`DriverCore.cycle`:

1. the safety supervisor turns the latest command and the latest measurement into a set-point
   per actuator (off / damping / torque, see :mod:`dodo_sim.hardware.safety`);
2. set-points become MIT frames (an actuator being enabled first gets a zero command, then the
   enable frame, so no stale firmware set-point can kick; torque commands carry kp = kd = 0);
3. the backend sends them with the sensor board's Sync and collects the replies;
4. replies become joint positions, velocities and torques (calibrated), the board sample
   becomes the boom joints and the contact force; missed replies hold the last value;
5. the supervisor checks the new measurement (faults, URDF limits, temperatures).
"""
from __future__ import annotations

import dataclasses
import math
from pathlib import Path
from typing import Mapping, Sequence

import numpy as np

from .backend import ActuatorBackend, ActuatorFrame
from .calibration import Calibration, load_calibration, save_calibration
from .config import (actuator_configs, actuator_error_name, boom_config, BoomConfig,
                     DriverConfig, JointLimit)
from .driver_status import ActuatorStatus, BoardStatus, CycleTiming, Sample
from .protocol import MitCommand
from .safety import (JointHealth, JointMode, SafetyConfig, SafetyLimits, SafetyState,
                     SafetySupervisor)

#: Exit code of a driver whose motors were stopped during the run by a fault, an e-stop or
#: ~/disable (the run failed even if the driver then reached stop_after).
EXIT_MOTORS_STOPPED = 4
#: The driver's log line naming each motors-off event of a run (joint and cause), repeated
#: just before its summary: ``dodo driver motors off: <state>: <reason>`` (``dodo hop`` reads it).
MOTORS_OFF_PREFIX = 'dodo driver motors off: '
#: Frames that clear an actuator's latched error the way its firmware allows, one per cycle while
#: its motor is off (DriverCore.clear_errors): an MIT-mode firmware clears its error code when it
#: enters motor mode again (a zero set-point first, so nothing stale is applied, then the enable
#: frame, then back to rest: one period in motor mode at zero torque); an ODrive axis clears its
#: errors on Clear_Errors (CAN Simple 0x018). A cause still there raises the error again.
CLEAR_ERRORS_FRAMES = {'mit': ('command', 'enable', 'disable'),
                       'odrive_can_simple': ('clear_errors',)}
#: Exit code of a driver whose watchdog tripped during the run (the controller was silent for
#: more than command_timeout: the run does not show the controller; DESIGN.md section 7). A
#: motors-off event takes precedence (:data:`EXIT_MOTORS_STOPPED`).
EXIT_WATCHDOG_TRIPPED = 5
#: The driver's log line for each watchdog trip of a run, repeated just before its summary:
#: ``dodo driver watchdog tripped: at t = <s> s of driver time, no command for <s> s ...``.
WATCHDOG_PREFIX = 'dodo driver watchdog tripped: '
#: A cycle that starts this many control periods after the one before missed its deadline.
MISSED_DEADLINE_PERIODS = 1.5


def watchdog_cause(command_age_s: float, cycle_gap_s: float, command_timeout_s: float,
                   period_s: float) -> str:
    """
    Name why the watchdog tripped: the controller's silence or the driver's own stall.

    ``command_age_s``: s since the last command at the tripping cycle (inf: none since the
    enable); ``cycle_gap_s``: s since the cycle before it. While the driver does not cycle it
    publishes no state, so the controller has nothing to answer: a stall of the driver longer
    than ``command_timeout_s`` trips the watchdog at its next cycle whatever the controller
    does (issue 27: a 1 s stall of the driver was blamed on the controller).
    """
    if cycle_gap_s >= command_timeout_s:
        before = command_age_s - cycle_gap_s
        return (f'the driver itself stalled: no cycle for {cycle_gap_s:.3f} s, so no state '
                f'for the controller to answer'
                + (f' (its last command came {max(before, 0.0):.3f} s before the stall)'
                   if math.isfinite(before) else ''))
    if cycle_gap_s > MISSED_DEADLINE_PERIODS * period_s and math.isfinite(command_age_s):
        return (f'the controller was silent for {command_age_s - cycle_gap_s:.3f} s and the '
                f'driver then missed its deadline by {cycle_gap_s - period_s:.3f} s')
    return 'the controller was silent'


class DriverCore:
    """
    See module docs.

    Inputs:
        config: the driver parameters.
        urdf_joint_names: movable joints of the robot description, URDF order.
        limits: their URDF limits.
        backend: an :class:`ActuatorBackend` (real bus or emulated).
        calibration: zero offsets; None: read ``config.calibration_file`` (zeros if empty).
    """

    def __init__(self, config: DriverConfig, urdf_joint_names: Sequence[str],
                 limits: Mapping[str, JointLimit], backend: ActuatorBackend,
                 calibration: Calibration | None = None):
        self.config = config
        #: why the driver has no calibration (enable is refused), None when calibrated
        self.uncalibrated: str | None = None
        if calibration is None:
            calibration = Calibration()
            if config.calibration_file:
                if Path(config.calibration_file).is_file():
                    calibration = load_calibration(config.calibration_file)
                else:
                    self.uncalibrated = (f'not calibrated: {config.calibration_file} does not '
                                         f'exist (put the robot in the calibration pose and '
                                         f'call ~/calibrate)')
        self.calibration = calibration
        self.actuators = actuator_configs(config, limits, calibration.zero_offsets)
        self.boom: BoomConfig = boom_config(config, calibration.boom_zero_counts)
        boom_joints = [j for j in config.boom_joints if j]
        for j in boom_joints:
            if j not in limits:
                raise ValueError(f'DriverConfig.boom_joints: {j!r} is not a movable joint of '
                                 f'the robot description (has {sorted(limits)})')
        measured = set(config.joints) | set(boom_joints)
        missing = [j for j in urdf_joint_names if j not in measured]
        if missing:
            raise ValueError(f'joints {missing} of the robot description are neither actuated '
                             f'(DriverConfig.joints) nor measured by the boom '
                             f'(DriverConfig.boom_joints)')
        if config.calibration_pose and len(config.calibration_pose) != len(urdf_joint_names):
            raise ValueError(f'DriverConfig.calibration_pose needs one value per joint '
                             f'{list(urdf_joint_names)}')
        self.joint_names = tuple(urdf_joint_names)
        self.actuated_joint_names = tuple(config.joints)
        self._index = {name: i for i, name in enumerate(self.joint_names)}
        self._act_index = [self._index[a.joint] for a in self.actuators]
        self._boom_index = [self._index[j] if j else None for j in config.boom_joints]
        self.backend = backend
        self.safety = SafetySupervisor(
            self.actuated_joint_names,
            [SafetyLimits(limits[a.joint].lower, limits[a.joint].upper, a.max_torque, a.damping,
                          config.fallback_stiffness[k], config.fallback_damping[k],
                          config.fallback_crouch_pose[k] if config.fallback_crouch_pose
                          else None)
             for k, a in enumerate(self.actuators)],
            SafetyConfig(command_timeout=config.command_timeout, estop_mode=config.estop_mode,
                         soft_limit_margin=config.soft_limit_margin,
                         soft_limit_stiffness=config.soft_limit_stiffness,
                         soft_limit_damping=config.soft_limit_damping,
                         max_consecutive_missed=config.max_consecutive_missed,
                         temperature_warn=config.temperature_warn,
                         temperature_limit=config.temperature_limit,
                         stuck_reading_time=config.stuck_reading_time,
                         watchdog_mode=config.watchdog_mode,
                         fallback_hold_time=config.fallback_hold_time,
                         fallback_lower_time=config.fallback_lower_time))
        n = len(self.joint_names)
        self.q = np.zeros(n)
        self.v = np.zeros(n)
        self.effort = np.zeros(n)
        self.contact_force = np.zeros(2)
        self.in_contact = False
        self.status = [ActuatorStatus(a) for a in self.actuators]
        self.board = BoardStatus()
        self.has_board = any(self._boom_index) or bool(config.contact_frame)
        self.cycles = 0
        self.rejected_commands = 0
        self.timing = CycleTiming()
        self.last_output = None             # the SafetyOutput of the last cycle
        self._sequence = 0
        self._last_cycle_time: float | None = None
        self._zero_requests: set = set()

    # -- commands and requests ------------------------------------------------------------------

    def set_command(self, now: float, torques: Sequence[float]) -> bool:
        """
        Set the command (joint torques, N*m, ``actuated_joint_names`` order).

        Returns False (counted) if it has the wrong length or a non-finite value; the previous
        command is then kept.
        """
        try:
            values = [float(x) for x in torques]
        except (TypeError, ValueError):
            values = None
        if (values is None or len(values) != len(self.actuators)
                or not all(math.isfinite(x) for x in values)):
            self.rejected_commands += 1
            return False
        self.safety.command(now, values)
        return True

    def enable(self, now: float) -> tuple[bool, str]:
        ok, message = self.safety.enable(now)
        if ok:
            for s in self.status:
                if not s.motor_on:
                    s.primed = False
        return ok, message

    def clear_errors(self) -> tuple[bool, str]:
        """
        Clear the actuators' latched errors (:data:`CLEAR_ERRORS_FRAMES`), from the next cycle.

        Refused (with the reason) while an e-stop is latched or its input held, while the motors
        are on, when no actuator reports an error, or while another fault condition is present
        (a joint beyond its limit, a temperature over ``temperature_limit``, missing replies,
        ...): clearing then would only hide it. Afterwards ``~/enable`` as usual.
        """
        safety = self.safety
        if safety.state is SafetyState.ESTOP or safety.estop_input:
            return False, (f'refused: e-stop latched ({safety.reason}); release it '
                           f'(/estop false) and ~/enable or ~/disable first')
        if safety.state is SafetyState.ENABLED:
            return False, 'refused: the motors are on and no fault is latched: nothing to clear'
        others = safety.conditions_besides_actuator_errors
        if others:
            return False, 'refused: fault still present: ' + '; '.join(others)
        erring = [s for s in self.status if s.error_code]
        if not erring:
            return False, 'nothing to clear: no actuator reports an error'
        for s in erring:
            s.clearing = list(CLEAR_ERRORS_FRAMES[s.config.protocol])
            s.clears += 1
        return True, ('clearing ' + ', '.join(
            f'{s.config.joint} ({actuator_error_name(s.config.protocol, s.error_code)}; '
            + ' -> '.join(CLEAR_ERRORS_FRAMES[s.config.protocol]) + ')' for s in erring)
            + ' from the next cycle; /diagnostics shows the result, then ~/enable')

    def disable(self, reason: str = 'disable requested') -> None:
        self.safety.disable(reason)

    def estop(self, reason: str = 'e-stop requested') -> None:
        self.safety.estop(reason)

    def calibrate(self, pose: Mapping[str, float] | None = None) -> Calibration:
        """
        Zero offsets that make the current reading equal the calibration pose.

        They are applied at once and written to ``calibration_file``. Only while not enabled.
        """
        if self.safety.state is SafetyState.ENABLED:
            raise RuntimeError('calibrate only while disabled (the motors must be off)')
        if not self.config.calibration_file:
            raise RuntimeError('no calibration_file configured: nowhere to write the offsets')
        if pose is None:
            values = self.config.calibration_pose or (0.0,) * len(self.joint_names)
            pose = dict(zip(self.joint_names, values))
        missing = [s.config.joint for s in self.status if s.replies == 0]
        if missing:
            raise RuntimeError(f'no reply yet from {missing}: cannot calibrate')
        offsets = {}
        for s in self.status:
            a = s.config
            offsets[a.joint] = s.actuator_position - a.direction * a.gear_ratio * pose[a.joint]
        zero_counts = list(self.boom.zero_counts)
        if self.has_board:
            if self.board.samples == 0:
                raise RuntimeError('no sample from the sensor board yet: cannot calibrate')
            for axis, joint in enumerate(self.config.boom_joints):
                if not joint:
                    continue
                angle, _ = self.boom.angle_of(axis, pose[joint], 0.0)
                raw = self.board.counts[axis]
                zero_counts[axis] = int(round(
                    raw - self.boom.directions[axis] * angle * self.boom.counts_per_rev[axis]
                    / (2.0 * math.pi)))
        calibration = Calibration(offsets, tuple(zero_counts))
        save_calibration(self.config.calibration_file, calibration, pose,
                         {a.joint: a.can_id for a in self.actuators})
        self._apply_calibration(calibration)
        self.uncalibrated = None
        return calibration

    def _apply_calibration(self, calibration: Calibration) -> None:
        self.calibration = calibration
        updated = []
        for s in self.status:
            a = s.config
            new = dataclasses.replace(a, zero_offset=calibration.zero_offsets.get(a.joint, 0.0))
            s.config = new
            updated.append(new)
        self.actuators = tuple(updated)
        self.boom = dataclasses.replace(self.boom,
                                        zero_counts=tuple(calibration.boom_zero_counts))

    # -- the cycle ------------------------------------------------------------------------------

    def cycle(self, now: float, clock=None) -> Sample:
        """One control cycle at time ``now`` (s)."""
        backend = self.backend
        act_q = self.q[self._act_index]
        act_v = self.v[self._act_index]
        out = self.safety.setpoints(now, act_q, act_v)
        #: what this cycle sent (per actuator: mode, joint torque before quantisation, kd)
        self.last_output = out
        frames = []
        for s, setpoint, limited in zip(self.status, out.setpoints, out.soft_limited):
            frames.append(self._frame(s, setpoint))
            s.soft_limited = limited
        self._sequence = (self._sequence + 1) & 0xFF
        exchange = backend.exchange(frames, self._sequence, self.config.reply_timeout)
        self.timing = CycleTiming(exchange.t_start, exchange.t_sent, exchange.t_received)
        dt = (now - self._last_cycle_time) if self._last_cycle_time is not None else 0.0
        self._last_cycle_time = now
        fresh = self._read_actuators(exchange, dt)
        fresh &= self._read_board(exchange)
        if fresh and hasattr(backend, 'note_traffic'):
            backend.note_traffic()
        health = [JointHealth(s.consecutive_missed, s.error_code,
                              s.temperature if math.isfinite(s.temperature) else 25.0,
                              s.frozen_time, s.replies > 0,
                              actuator_error_name(s.config.protocol, s.error_code)
                              if s.error_code else '') for s in self.status]
        self.safety.observe(self.q[self._act_index], health)
        if self.has_board and self.board.consecutive_missed >= self.config.max_consecutive_missed:
            self.safety.add_condition(
                f'sensor board: no sample for {self.board.consecutive_missed} cycles')
        if self.uncalibrated:
            self.safety.add_condition(self.uncalibrated)
        if self.board.yaw_encoder_error or self.board.pitch_encoder_error:
            self.safety.add_condition('sensor board: boom encoder signal fault')
        self.cycles += 1
        if clock is not None:
            self.timing.done = clock()
        return Sample(now, self.q.copy(), self.v.copy(), self.effort.copy(),
                      self.contact_force.copy(), self.in_contact, fresh, self.safety.state,
                      out.watchdog)

    def _frame(self, s: ActuatorStatus, setpoint) -> ActuatorFrame:
        frame = self._frame_for(s, setpoint)
        s.mode = setpoint.mode.value if frame.kind == 'command' and s.motor_on else 'off'
        s.command_torque = setpoint.torque if s.mode in ('torque', 'fallback') else 0.0
        s.command_kd = setpoint.kd if s.mode == 'damping' else 0.0
        return frame

    def _frame_for(self, s: ActuatorStatus, setpoint) -> ActuatorFrame:
        a = s.config
        if setpoint.mode is JointMode.OFF and s.clearing:
            kind = s.clearing.pop(0)        # clear_errors: the firmware's own way, motor off
            s.motor_on = s.primed = False
            return (ActuatorFrame(a.can_id, 'command', MitCommand()) if kind == 'command'
                    else ActuatorFrame(a.can_id, kind))
        s.clearing = []
        if setpoint.mode is JointMode.OFF:
            s.motor_on = False
            s.primed = False
            return ActuatorFrame(a.can_id, 'disable')
        if not s.motor_on:
            if self.safety.state is SafetyState.ESTOP:
                return ActuatorFrame(a.can_id, 'disable')   # an e-stop never switches a motor on
            if not s.primed:          # clear the firmware's last set-point before enabling
                s.primed = True
                return ActuatorFrame(a.can_id, 'command', MitCommand())
            s.motor_on = True
            return ActuatorFrame(a.can_id, 'enable')
        if setpoint.mode is JointMode.DAMPING:
            return ActuatorFrame(a.can_id, 'command',
                                 MitCommand(kd=min(a.actuator_gain(setpoint.kd),
                                                   a.ranges.kd_max)))
        return ActuatorFrame(a.can_id, 'command',
                             MitCommand(torque=a.actuator_torque(setpoint.torque)))

    def _read_actuators(self, exchange, dt: float) -> bool:
        fresh = True
        for s, index in zip(self.status, self._act_index):
            a = s.config
            reply = exchange.replies.get(a.can_id)
            if reply is None:
                s.missed += 1
                s.missed_window += 1
                s.consecutive_missed += 1
                fresh = False
                continue
            s.replies += 1
            s.consecutive_missed = 0
            s.actuator_position = reply.position
            s.position = a.joint_position(reply.position)
            s.velocity = a.joint_velocity(reply.velocity)
            s.torque = a.joint_torque(reply.torque)
            s.temperature = float(reply.temperature)
            s.error_code = reply.error_code
            if s.counts is not None and reply.counts[:2] == s.counts[:2]:
                s.frozen_cycles += 1
                s.frozen_for += dt
            else:
                s.frozen_cycles = 0
                s.frozen_for = 0.0
            s.counts = reply.counts
            self.q[index] = s.position
            self.v[index] = s.velocity
            self.effort[index] = s.torque
        return fresh

    def _read_board(self, exchange) -> bool:
        if not self.has_board:
            return True
        b = self.board
        sample = exchange.board
        if sample is None:
            b.missed += 1
            b.missed_window += 1
            b.consecutive_missed += 1
            return False
        b.samples += 1
        b.consecutive_missed = 0
        b.counts = (sample.yaw_counts, sample.pitch_counts)
        b.yaw_encoder_error = sample.yaw_encoder_error
        b.pitch_encoder_error = sample.pitch_encoder_error
        b.encoder_errors += sample.yaw_encoder_error + sample.pitch_encoder_error
        b.force_overload = sample.force_overload
        b.foot_switch = sample.foot_switch
        rates = (sample.yaw_rate, sample.pitch_rate)
        for axis, index in enumerate(self._boom_index):
            if index is None:
                continue
            angle = self.boom.angle(axis, b.counts[axis])
            self.q[index], self.v[index] = self.boom.joint_state(axis, angle, rates[axis])
        if self.config.contact_frame:
            self.contact_force[:] = (sample.foot_force_x, sample.foot_force_z)
            self.in_contact = bool(sample.foot_switch
                                   or sample.foot_force_z > self.config.contact_threshold)
        return True

    # -- reporting ------------------------------------------------------------------------------

    def take_window(self) -> dict:
        """Missed replies per actuator (and 'board') since the last call (resets them)."""
        out = {s.config.joint: s.missed_window for s in self.status}
        out['board'] = self.board.missed_window
        for s in self.status:
            s.missed_window = 0
        self.board.missed_window = 0
        return out

    def shutdown(self) -> None:
        """Disable every actuator (one cycle of disable frames) and close the bus."""
        self.safety.disable('driver shutting down')
        try:
            frames = [ActuatorFrame(s.config.can_id, 'disable') for s in self.status]
            self.backend.exchange(frames, self._sequence, self.config.reply_timeout)
            for s in self.status:
                s.motor_on = False
        finally:
            self.backend.close()


__all__ = ['EXIT_MOTORS_STOPPED', 'MOTORS_OFF_PREFIX', 'MISSED_DEADLINE_PERIODS', 'DriverCore',
           'watchdog_cause']
