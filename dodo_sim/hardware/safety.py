# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

r"""
The driver's safety supervisor: a pure state machine (no bus, no ROS, time passed in).

States and what the actuators get (see docs/hardware.md, safety table)::

    DISABLED --enable()--> ENABLED --estop()--> ESTOP --enable()--> ENABLED
        ^                     |  \--fault----> FAULT --enable()--> ENABLED
        +-----disable()-------+----------------+--------------------+

* DISABLED (start-up): every actuator gets the disable frame (motor off, still polled).
* ENABLED: the latest command, clamped to ``max_torque`` and shaped by the soft limits; no
  valid command for ``command_timeout`` (or none since enable): the watchdog's safe law (below),
  back to the commands as soon as one arrives. Commands older than the enable are dropped at
  enable.
* ESTOP (latched): disable frames (``estop_mode='disable'``) or zero torque plus damping
  (``'damping'``) from the next cycle on; ``enable()`` is refused while the e-stop input is
  held.
* FAULT (latched, disable frames): an actuator reported an error code, exceeded
  ``temperature_limit``, missed ``max_consecutive_missed`` replies in a row, froze its reading
  while enabled, or an actuated joint is beyond its URDF limit. ``enable()`` is refused while
  any such condition is present.

Soft limits: within ``soft_limit_margin`` of a URDF limit (depth ``s`` in [0, 1] across the
margin) the part of the command pushing further in is scaled by ``1 - s`` and a restoring
spring-damper ``-k depth - d v_out`` is added, so a joint driven at the limit stops inside it.

The watchdog's safe law (``watchdog_mode``), per joint, every cycle while tripped:

* ``'damp'``: zero torque plus firmware damping ``kd = damping`` (the motor's own loop).
* ``'land'`` (default): a low-gain joint PD towards a reference that lands the leg::

      r(t) = q_trip                          for t - t_trip < hold (fallback_hold_time)
           = q_trip + s(u) (q_crouch - q_trip)  u = (t - t_trip - hold) / fallback_lower_time
           = q_crouch                          afterwards (resting in the crouch)
      s(u) = 3u^2 - 2u^3 (smooth start and stop),   tau = shape(kp (r - q) - kd v)

  ``kp``, ``kd``: ``fallback_stiffness``, ``fallback_damping``. ``q_trip`` is the measured pose
  at the trip, ``q_crouch`` the ``fallback_crouch_pose`` (empty: ``q_trip``), both clipped
  into ``[lower + margin, upper - margin]`` (inside the soft limits, so the law never aims at a
  URDF limit); ``shape`` is the same clamp and soft limit as for the controller's commands
  (:meth:`SafetySupervisor.shape_torque`). The torque goes out as a
  feed-forward torque frame (kp = kd = 0 on the wire), so what is sent is exactly this law
  within the torque field's quantisation and never beyond ``max_torque``.
"""
from __future__ import annotations

from dataclasses import dataclass
import enum
import math
from typing import NamedTuple, Sequence


class SafetyState(enum.Enum):
    DISABLED = 'disabled'
    ENABLED = 'enabled'
    ESTOP = 'estop'
    FAULT = 'fault'


class JointMode(enum.Enum):
    OFF = 'off'            # disable frame: motor free
    DAMPING = 'damping'    # motor on: zero torque plus damping
    FALLBACK = 'fallback'  # motor on: the watchdog's landing law as a feed-forward torque
    TORQUE = 'torque'      # motor on: the (shaped) command


class JointSetpoint(NamedTuple):
    """What one actuator gets this cycle (joint side)."""

    mode: JointMode
    torque: float = 0.0    # N*m
    kd: float = 0.0        # N*m*s/rad


@dataclass(frozen=True)
class SafetyLimits:
    """
    Per-joint limits of the supervisor (joint side).

    Fields:
        lower / upper: URDF position limits, rad (hard: beyond them the driver faults).
        max_torque: torque clamp, N*m.
        damping: damping of the damping mode (watchdog 'damp', e-stop 'damping'), N*m*s/rad.
        fallback_stiffness: stiffness of the watchdog's landing law, N*m/rad.
        fallback_damping: damping of the watchdog's landing law, N*m*s/rad.
        crouch: the landing law's final pose, rad (None: the pose measured at the trip).
    """

    lower: float
    upper: float
    max_torque: float
    damping: float
    fallback_stiffness: float = 0.0
    fallback_damping: float = 0.0
    crouch: float | None = None


@dataclass(frozen=True)
class SafetyConfig:
    """Attributes: see :class:`dodo_sim.hardware.config.DriverConfig` (same names)."""

    command_timeout: float = 0.05
    estop_mode: str = 'disable'
    soft_limit_margin: float = 0.15
    soft_limit_stiffness: float = 1000.0
    soft_limit_damping: float = 20.0
    max_consecutive_missed: int = 10
    temperature_warn: float = 70.0
    temperature_limit: float = 85.0
    stuck_reading_time: float = 0.2
    watchdog_mode: str = 'land'
    fallback_hold_time: float = 0.2
    fallback_lower_time: float = 1.0


class JointHealth(NamedTuple):
    """What the driver knows about one actuator after a cycle."""

    consecutive_missed: int = 0
    error_code: int = 0
    temperature: float = 25.0
    frozen_for: float = 0.0       # s the raw reading has not changed
    seen: bool = True             # at least one reply since start
    error_name: str = ''          # the protocol's name of error_code (fault messages)


class SafetyOutput(NamedTuple):
    state: SafetyState
    setpoints: tuple               # JointSetpoint per joint
    watchdog: bool                 # zero torque + damping because commands are missing
    soft_limited: tuple            # per joint: the soft limit shaped the torque


class SafetySupervisor:
    """
    See the module docs.

    ``joints`` names the actuated joints, ``limits`` their :class:`SafetyLimits` in the same order.
    """

    def __init__(self, joints: Sequence[str], limits: Sequence[SafetyLimits],
                 config: SafetyConfig | None = None):
        if len(joints) != len(limits):
            raise ValueError('one SafetyLimits per joint')
        self.joints = tuple(joints)
        self.limits = tuple(limits)
        self.config = config or SafetyConfig()
        self.state = SafetyState.DISABLED
        self.reason = 'disabled at start-up'
        self.estop_input = False
        self.watchdog_trips = 0
        self.faults = 0
        self._watchdog = False
        self._trip_time = -math.inf
        self._trip_pose: tuple = ()
        self._command: tuple | None = None
        self._command_time = -math.inf
        self._enabled_at = -math.inf
        self._conditions: list[str] = []
        self._actuator_errors: list[str] = []     # the conditions that are actuator error codes
        n = len(self.joints)
        self._off = tuple(JointSetpoint(JointMode.OFF) for _ in range(n))
        self._damping = tuple(JointSetpoint(JointMode.DAMPING, 0.0, lim.damping)
                              for lim in self.limits)

    # -- inputs ---------------------------------------------------------------------------------

    def command(self, now: float, torques: Sequence[float]) -> None:
        """
        Record the arrival of a valid command.

        It arrived at ``now``; a valid command holds joint torques (N*m), finite, one per joint.
        """
        if len(torques) != len(self.joints):
            raise ValueError(f'command needs {len(self.joints)} torques {list(self.joints)}, '
                             f'got {len(torques)}')
        self._command = tuple(float(t) for t in torques)
        self._command_time = now

    def command_age(self, now: float) -> float:
        """Return the time since the last valid command, s (inf if none)."""
        return now - self._command_time

    @property
    def conditions(self) -> tuple:
        """Fault conditions present at the last :meth:`observe` (empty: healthy)."""
        return tuple(self._conditions)

    @property
    def conditions_besides_actuator_errors(self) -> tuple:
        """Return the conditions a clear-errors command cannot remove (limits, heat, ...)."""
        return tuple(c for c in self._conditions if c not in self._actuator_errors)

    def enable(self, now: float) -> tuple[bool, str]:
        """
        Request ENABLED.

        It is refused, with the reason, while the e-stop input is held or a fault condition is
        present.
        """
        if self.estop_input:
            return False, 'e-stop input is active: release it first'
        if self._conditions:
            return False, 'fault condition present: ' + '; '.join(self._conditions)
        if self.state is SafetyState.ENABLED:
            return True, 'already enabled'
        self.state = SafetyState.ENABLED
        self.reason = 'enabled'
        self._enabled_at = now
        self._command = None                  # nothing sent before the enable is applied
        self._command_time = -math.inf
        self._watchdog = False
        return True, 'enabled'

    def disable(self, reason: str = 'disable requested') -> None:
        self.state = SafetyState.DISABLED
        self.reason = reason

    def estop(self, reason: str = 'e-stop') -> None:
        self.state = SafetyState.ESTOP
        self.reason = reason

    def set_estop_input(self, pressed: bool) -> None:
        """
        Apply the e-stop input.

        The input comes from a topic: pressing it latches ESTOP; releasing it does not enable.
        """
        if pressed and not self.estop_input:
            self.estop('e-stop input pressed')
        self.estop_input = bool(pressed)

    def observe(self, q: Sequence[float], health: Sequence[JointHealth]) -> tuple:
        """
        Check the measurement of a cycle; an enabled driver with a fault condition goes to FAULT.

        Returns the conditions found.
        """
        cfg = self.config
        found = []
        self._actuator_errors = []
        for name, lim, qj, h in zip(self.joints, self.limits, q, health):
            if h.error_code:
                found.append(f'{name}: actuator error code {h.error_code}'
                             + (f' ({h.error_name})' if h.error_name else ''))
                self._actuator_errors.append(found[-1])
            if h.temperature >= cfg.temperature_limit:
                found.append(f'{name}: temperature {h.temperature:.0f} degC >= '
                             f'{cfg.temperature_limit:.0f} degC')
            if h.consecutive_missed >= cfg.max_consecutive_missed or not h.seen:
                found.append(f'{name}: no reply for {h.consecutive_missed} cycles')
            elif not (lim.lower <= qj <= lim.upper):
                found.append(f'{name}: position {qj:.3f} rad beyond the URDF limit '
                             f'[{lim.lower}, {lim.upper}]')
            if (cfg.stuck_reading_time > 0.0 and h.frozen_for >= cfg.stuck_reading_time
                    and self.state is SafetyState.ENABLED):
                found.append(f'{name}: reading frozen for {h.frozen_for:.2f} s (stuck encoder?)')
        self._conditions = found
        if found and self.state is SafetyState.ENABLED:
            self.state = SafetyState.FAULT
            self.reason = 'fault: ' + '; '.join(found)
            self.faults += 1
        return tuple(found)

    def add_condition(self, condition: str) -> None:
        """
        Latch a fault condition found outside :meth:`observe`.

        For example: the sensor board is silent.
        """
        self._conditions.append(condition)
        if self.state is SafetyState.ENABLED:
            self.state = SafetyState.FAULT
            self.reason = 'fault: ' + condition
            self.faults += 1

    # -- output ---------------------------------------------------------------------------------

    def setpoints(self, now: float, q: Sequence[float], v: Sequence[float]) -> SafetyOutput:
        """Return what each actuator gets this cycle, from the latest measurement ``q``, ``v``."""
        n = len(self.joints)
        none = (False,) * n
        state = self.state
        if state is SafetyState.DISABLED or state is SafetyState.FAULT:
            return SafetyOutput(state, self._off, False, none)
        if state is SafetyState.ESTOP:
            out = self._damping if self.config.estop_mode == 'damping' else self._off
            return SafetyOutput(state, out, False, none)
        # ENABLED
        fresh = (self._command is not None
                 and now - self._command_time <= self.config.command_timeout)
        if not fresh:
            since = now - max(self._command_time, self._enabled_at)
            if since > self.config.command_timeout and not self._watchdog:
                self._watchdog = True
                self.watchdog_trips += 1
                self._trip_time = now
                self._trip_pose = tuple(self._inside(qj, lim) for qj, lim in zip(q, self.limits))
            if self.config.watchdog_mode == 'damp' or not self._watchdog:
                # (not tripped yet: enabled less than command_timeout ago, no command so far)
                return SafetyOutput(state, self._damping, self._watchdog, none)
            setpoints, limited = [], []
            for j, (lim, qj, vj) in enumerate(zip(self.limits, q, v)):
                tau, hit = self.shape_torque(self._landing_pd(j, now, qj, vj), qj, vj, lim)
                setpoints.append(JointSetpoint(JointMode.FALLBACK, tau, 0.0))
                limited.append(hit)
            return SafetyOutput(state, tuple(setpoints), self._watchdog, tuple(limited))
        self._watchdog = False
        setpoints = []
        limited = []
        for tau, lim, qj, vj in zip(self._command, self.limits, q, v):
            shaped, hit = self.shape_torque(tau, qj, vj, lim)
            setpoints.append(JointSetpoint(JointMode.TORQUE, shaped, 0.0))
            limited.append(hit)
        return SafetyOutput(state, tuple(setpoints), False, tuple(limited))

    def _inside(self, q: float, lim: SafetyLimits) -> float:
        """``q`` clipped into the range inside the soft limits (the middle if none)."""
        margin = self.config.soft_limit_margin
        lo, hi = lim.lower + margin, lim.upper - margin
        if lo > hi:
            return 0.5 * (lim.lower + lim.upper)
        return min(max(q, lo), hi)

    def landing_reference(self, joint: int, now: float) -> float:
        """
        Return the landing law's reference of ``joint`` (index) at ``now``, rad.

        The law is described in the module docs.
        """
        cfg = self.config
        start = self._trip_pose[joint]
        crouch = self.limits[joint].crouch
        end = start if crouch is None else self._inside(crouch, self.limits[joint])
        elapsed = now - self._trip_time - cfg.fallback_hold_time
        if elapsed <= 0.0:
            return start
        u = 1.0 if cfg.fallback_lower_time <= 0.0 else min(1.0, elapsed / cfg.fallback_lower_time)
        return start + (3.0 * u * u - 2.0 * u * u * u) * (end - start)

    def _landing_pd(self, joint: int, now: float, q: float, v: float) -> float:
        lim = self.limits[joint]
        return (lim.fallback_stiffness * (self.landing_reference(joint, now) - q)
                - lim.fallback_damping * v)

    def safe_law(self, now: float, q: Sequence[float], v: Sequence[float]) -> tuple:
        """
        Return what the watchdog sends while tripped (per joint: (mode, torque N*m, kd N*m*s/rad)).

        For tests and documentation: the same computation as :meth:`setpoints`, no side effects.
        Valid only while :attr:`watchdog_active`.
        """
        if self.config.watchdog_mode == 'damp':
            return tuple((JointMode.DAMPING, 0.0, lim.damping) for lim in self.limits)
        return tuple((JointMode.FALLBACK,
                      self.shape_torque(self._landing_pd(j, now, qj, vj), qj, vj, lim)[0], 0.0)
                     for j, (lim, qj, vj) in enumerate(zip(self.limits, q, v)))

    def shape_torque(self, tau: float, q: float, v: float, lim: SafetyLimits) -> tuple:
        """(clamped and soft-limited torque, whether the soft limit acted)."""
        cfg = self.config
        margin = cfg.soft_limit_margin
        hit = False
        tau = max(-lim.max_torque, min(lim.max_torque, tau))
        if margin > 0.0:
            upper_soft = lim.upper - margin
            lower_soft = lim.lower + margin
            if q > upper_soft:
                depth = q - upper_soft
                if tau > 0.0:
                    tau *= max(0.0, 1.0 - depth / margin)
                tau -= cfg.soft_limit_stiffness * depth + cfg.soft_limit_damping * max(v, 0.0)
                hit = True
            elif q < lower_soft:
                depth = lower_soft - q
                if tau < 0.0:
                    tau *= max(0.0, 1.0 - depth / margin)
                tau += cfg.soft_limit_stiffness * depth - cfg.soft_limit_damping * min(v, 0.0)
                hit = True
        return max(-lim.max_torque, min(lim.max_torque, tau)), hit

    @property
    def watchdog_active(self) -> bool:
        """Tell whether ENABLED gives zero torque plus damping because commands are missing."""
        return self._watchdog and self.state is SafetyState.ENABLED


__all__ = ['SafetyState', 'JointMode', 'JointSetpoint', 'SafetyLimits', 'SafetyConfig',
           'JointHealth', 'SafetyOutput', 'SafetySupervisor']
