# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
The ``driver`` node's ``/diagnostics`` message, built from the driver core (no rclpy).

One status for the safety supervisor, one for the commands (the bound controller, what was
refused and from whom), one per actuator (temperature, fault code, missed replies, current;
ODrive axis state), one for the sensor board and one for the bus
(:mod:`dodo_sim.ros.driver_node`, module docs).
"""
from __future__ import annotations

import math

from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus, KeyValue
from dodo_sim.hardware.config import actuator_error_name, DriverConfig
from dodo_sim.hardware.safety import SafetyState

_LEVEL = {'ok': DiagnosticStatus.OK, 'warn': DiagnosticStatus.WARN,
          'error': DiagnosticStatus.ERROR, 'stale': DiagnosticStatus.STALE}


def driver_diagnostics(core, cfg: DriverConfig, window: dict, cycles_window: float,
                       state_age: float, now: float, stamp, commands: dict,
                       new_refused: int) -> DiagnosticArray:
    """
    Return the driver's /diagnostics at monotonic time ``now``, stamped ``stamp``.

    ``core``: the :class:`dodo_sim.hardware.driver.DriverCore`; ``window``: its missed replies
    since the last message (``core.take_window()``), over ``cycles_window`` cycles;
    ``state_age``: s from a state's stamp to the command answering it; ``commands``: the
    exchange's accounting (``controller``, ``commands``, ``rejected``, ``foreign``, ``future``,
    ``late``, ``early``, ``unstamped``, ``foreign_nodes``); ``new_refused``: foreign and future
    commands since the last message (WARN).
    """
    msg = DiagnosticArray()
    msg.header.stamp = stamp
    safety = core.safety
    age = safety.command_age(now)
    level = {SafetyState.ENABLED: 'warn' if safety.watchdog_active else 'ok',
             SafetyState.DISABLED: 'ok', SafetyState.ESTOP: 'warn',
             SafetyState.FAULT: 'error'}[safety.state]
    msg.status.append(_status(
        level, 'driver: safety', 'driver',
        f'{safety.state.value}: {safety.reason}'
        + (('; watchdog: zero torque + damping' if cfg.watchdog_mode == 'damp'
            else '; watchdog: landing the leg') if safety.watchdog_active else ''),
        state=safety.state.value, reason=safety.reason,
        watchdog_active=safety.watchdog_active, watchdog_trips=safety.watchdog_trips,
        command_age_s=f'{age:.4f}' if math.isfinite(age) else 'none',
        state_to_command_age_s=f'{state_age:.4f}',
        estop_input=safety.estop_input, faults=safety.faults,
        conditions='; '.join(safety.conditions) or 'none', cycles=core.cycles))
    refused = ', '.join(f'{commands[k]} {k}' for k in ('foreign', 'future', 'rejected')
                        if commands.get(k))
    msg.status.append(_status(
        'warn' if new_refused else 'ok', 'driver: commands', 'driver',
        f"controller {commands.get('controller') or '(none yet)'}"
        + (f'; refused: {refused}' if refused else '')
        + (f" (from {commands['foreign_nodes']})" if commands.get('foreign_nodes') else ''),
        **{k: '-' if v is None else v for k, v in commands.items()}))
    for s in core.status:
        a = s.config
        rate = window[a.joint] / cycles_window
        if s.error_code or s.temperature >= cfg.temperature_limit or (
                s.consecutive_missed >= cfg.max_consecutive_missed) or s.replies == 0:
            lvl = 'error'
        elif (s.temperature >= cfg.temperature_warn or window[a.joint]
              or s.soft_limited or (s.frozen_time >= cfg.stuck_reading_time > 0.0)):
            lvl = 'warn'
        else:
            lvl = 'ok'
        fault = actuator_error_name(a.protocol, s.error_code)
        text = (f'{fault}, {s.temperature:.0f} degC'
                + (f', {window[a.joint]} missed replies' if window[a.joint] else '')
                + (', in the soft limit zone' if s.soft_limited else '')
                + (', reading frozen' if s.frozen_time >= cfg.stuck_reading_time > 0.0
                   else '')
                + ('' if s.replies else ', never replied'))
        msg.status.append(_status(
            lvl, f'driver: actuator {a.joint}', f'can_id {a.can_id} ({a.model})', text,
            position_rad=f'{s.position:.5f}', velocity_rad_s=f'{s.velocity:.4f}',
            torque_nm=f'{s.torque:.3f}', current_a=f'{s.current:.2f}',
            temperature_degc=f'{s.temperature:.0f}', fault_code=s.error_code,
            fault=fault, protocol=a.protocol,
            **odrive_axis_values(core.backend, a.can_id), motor_on=s.motor_on, mode=s.mode,
            command_torque_nm=f'{s.command_torque:.3f}',
            command_kd_nms_rad=f'{s.command_kd:.3f}', replies=s.replies,
            missed_replies=s.missed, consecutive_missed=s.consecutive_missed,
            miss_rate=f'{rate:.4f}', frozen_for_s=f'{s.frozen_time:.3f}',
            soft_limited=s.soft_limited, clear_errors_requests=s.clears))
    if core.has_board:
        b = core.board
        encoder_fault = b.yaw_encoder_error or b.pitch_encoder_error
        lvl = ('error' if encoder_fault or b.consecutive_missed >= cfg.max_consecutive_missed
               or b.samples == 0 else 'warn' if window['board'] or b.force_overload else 'ok')
        msg.status.append(_status(
            lvl, 'driver: sensor board', 'boom encoders and foot sensor',
            ('boom encoder signal fault' if encoder_fault else 'ok')
            + (f', {window["board"]} missed samples' if window['board'] else ''),
            samples=b.samples, missed=b.missed, consecutive_missed=b.consecutive_missed,
            yaw_counts=b.counts[0], pitch_counts=b.counts[1],
            yaw_encoder_error=b.yaw_encoder_error, pitch_encoder_error=b.pitch_encoder_error,
            foot_switch=b.foot_switch, force_overload=b.force_overload))
    backend = core.backend
    counters = backend.counters
    lvl = ('error' if backend.bus_state == 'bus-off' else
           'warn' if backend.bus_state != 'error-active' or counters['tx_errors'] else 'ok')
    msg.status.append(_status(
        lvl, 'driver: bus', cfg.hardware, f'{backend.bus_state}',
        bus_state=backend.bus_state, **counters,
        last_cycle_bus_s=f'{core.timing.received - core.timing.start:.6f}'))
    return msg


def odrive_axis_values(backend, node_id: int) -> dict:
    """
    Return the ODrive axis state and heartbeat count of an ODrive axis.

    Empty for MIT actuators.
    """
    axis = getattr(backend, 'axes', {}).get(node_id)
    if axis is None:
        return {}
    return {'odrive_axis_state': axis.axis_state, 'odrive_axis_error': f'0x{axis.axis_error:08x}',
            'odrive_procedure_result': axis.procedure_result, 'odrive_heartbeats': axis.heartbeats}


def _status(level: str, name: str, hardware_id: str, message: str, **values) -> DiagnosticStatus:
    return DiagnosticStatus(level=_LEVEL[level], name=name, hardware_id=hardware_id,
                            message=message,
                            values=[KeyValue(key=k, value=str(v)) for k, v in values.items()])
