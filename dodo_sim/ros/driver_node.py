# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
``driver`` ROS 2 node: a thin adapter around :class:`dodo_sim.hardware.driver.DriverCore`.

The hardware in place of the simulator, same topics, wall-clock time.

Publishes every cycle (``control_period``, steady wall-clock timer; ``header.stamp`` = system
time of the cycle): ``/joint_states`` (sensor_msgs/JointState: every joint of the robot
description by name; boom joints from the sensor board's encoders, actuated joints from the
actuators' replies; effort = measured torque, 0 on the boom) and the contact topic of
``contact_frame`` (geometry_msgs/WrenchStamped, N, world axes, ``frame_id``
``<contact_frame>_contact`` at the foot; hopper: ``/foot_contact``).
``/diagnostics`` (diagnostic_msgs/DiagnosticArray) every ``diagnostics_period``: one status
per actuator (temperature, fault code, missed replies, current), the sensor board, the bus
(state, transmit errors, error frames) and the safety supervisor (state, reason, command age,
watchdog trips). Does not publish ``/clock``; ``use_sim_time`` is forced to false.

Subscribes: ``/joint_commands`` (sensor_msgs/JointState, ``effort`` per actuated joint by
name; its ``header.stamp`` is the stamp of the state it answers, so the state-to-command age is
reported), ``/effort_controller/commands`` (std_msgs/Float64MultiArray, actuated joints in
``joints`` order, N*m; applied only while no stamped command came for ``command_timeout``) and
ros2_control's ``topic_based_joint_commands`` (docs/ros2_control.md). Which command is applied
is the realtime exchange core's rule, as in the simulator (:class:`dodo_sim.ros.exchange.
RealtimeExchange`, docs/ros_contract.md): the driver binds ONE controller — the first publisher
whose valid command answers a state published at most ``command_timeout`` ago — and refuses,
counts and names every other publisher (``foreign``, in the log, /diagnostics and the summary;
``/simulator/controller`` announces the bound one, so a bag keeps the others apart); commands
stamped ahead of the newest state (``future``), older than the held one (``late``), received
before the first state (``early``) or malformed (``rejected``, logged throttled) are never
applied, and the previous command is kept. ``/estop`` (std_msgs/Bool): true latches the e-stop,
false releases the input (the driver stays in e-stop until ``~/enable``).

Services (std_srvs/Trigger, names in :mod:`dodo_sim.ros.contract`): ``~/enable`` (refused
while the e-stop input is held or a fault condition is present, with the reason),
``~/disable``, ``~/estop``, ``~/calibrate`` (only while not enabled: zero offsets from the
current reading and ``calibration_pose``, written to ``calibration_file``), ``~/clear_errors``
(clears latched actuator errors the way the firmware allows: ODrive Clear_Errors, MIT re-entry
of motor mode; refused while an e-stop is latched or another fault condition is present).

Actuators stay disabled until ``~/enable`` — or, with emulated hardware only, until the start
gate of ``enable_on_start`` opens (every state topic has ``min_subscribers`` matched
subscriptions and ``/joint_commands`` a publisher, held for ``discovery_settle``). Driver time
runs from the first enable; after ``stop_after`` s of it the driver disables the actuators
(their disable frames go out in a last cycle) and the node exits 0. At its end the node logs
one summary line, ``dodo driver: key=value ...`` (:meth:`DriverNode.summary`; ``dodo hop``
reads it). With ``hardware: emulated`` the node builds the physics
(:class:`dodo_sim.simulator.Simulator`) and the emulated actuators and sensor board
(:class:`dodo_sim.hardware.emulator.Emulator`) in process on a python-can virtual bus; exit
code 3 when that physics diverges. ``publish_robot_description``: the URDF on
``/robot_description`` (transient local) for the controller where no robot_state_publisher
runs. Every parameter comes from :class:`dodo_sim.hardware.config.DriverConfig`.

The driver is built by :func:`dodo_sim.hardware.build.build_driver` and its ``/diagnostics``
by :mod:`dodo_sim.ros.driver_diagnostics`. The rest is one unit at this length: the start gate,
the services, the cycle and the run's verdict (watchdog trips named by their cause —
:func:`dodo_sim.hardware.driver.watchdog_cause`: the controller's silence or the driver's own
stall —, motors stopped, exit code) share the per-cycle bookkeeping that the summary line
reports.
"""
from __future__ import annotations

import array
import collections
import math
import sys
import time

from diagnostic_msgs.msg import DiagnosticArray
from dodo_sim.hardware.build import build_driver
from dodo_sim.hardware.config import DriverConfig
from dodo_sim.hardware.driver import (EXIT_MOTORS_STOPPED, EXIT_WATCHDOG_TRIPPED,
                                      MISSED_DEADLINE_PERIODS, MOTORS_OFF_PREFIX,
                                      watchdog_cause, WATCHDOG_PREFIX)
from dodo_sim.hardware.safety import SafetyState
from dodo_sim.hardware.state_log import StateLog, StateRing
from dodo_sim.model import robot_description_xml
from dodo_sim.paths import default_urdf_path
from dodo_sim.ros import contract, runtime
from dodo_sim.ros.cdr import JointStateWriter
from dodo_sim.ros.driver_diagnostics import driver_diagnostics
from dodo_sim.ros.exchange import HELD, RealtimeExchange
from dodo_sim.ros.exchange_reports import ExchangeReports, hosted_node_name
from dodo_sim.ros.joint_commands import actuated_efforts, unstamped_efforts
from dodo_sim.ros.params import config_from_parameters, declare_config_parameters
from dodo_sim.ros.ros2_control import topic_based_efforts
from dodo_sim.ros.runtime import (EXIT_DIVERGED, Histogram, publisher_gid, WarnThrottle,
                                  with_message_info)
from dodo_sim.ros.state_messages import contact_wrench_message
from dodo_sim.simulator import SimulationDiverged
from dodo_sim.stamps import sec_nanosec, stamp_ns, stamp_s, wall_ns
from geometry_msgs.msg import WrenchStamped
from rclpy.clock import Clock, ClockType
from rclpy.node import Node
from rclpy.parameter import Parameter
from rclpy.serialization import serialize_message
from rclpy.task import Future
from sensor_msgs.msg import JointState
from std_msgs.msg import Bool, Float64MultiArray, String
from std_srvs.srv import Trigger

#: The e-stop input topic (std_msgs/Bool).
ESTOP_TOPIC = contract.ESTOP
#: Histogram bin width of the cycle period and the state-to-command age, ns (10 us).
TIMING_BIN_NS = 10_000
#: What is said of a command stamped far ahead of the driver's newest state.
FAR_AHEAD_HINT = (' — its clock is not the one of the driver (the clock of another machine, '
                  'or sim time beside hardware? hardware runs on wall time: use_sim_time '
                  'false)')
#: s: a watchdog trip still open when a signal stops the driver and begun less than this before
#: is the controller stopping first (ros2 launch signals every node at once), not a failure
SHUTDOWN_TRIP_GRACE_S = 0.5


class DriverNode(Node):
    """The driver node (see module docs)."""

    def __init__(self, **node_kwargs):
        super().__init__('driver', **node_kwargs)
        if self.get_parameter('use_sim_time').value:
            self.get_logger().warning('use_sim_time is true but hardware runs on wall time: '
                                      'forcing it to false for the driver')
            self.set_parameters([Parameter('use_sim_time', Parameter.Type.BOOL, False)])
        values = declare_config_parameters(
            self, DriverConfig, read_only=list(DriverConfig.__dataclass_fields__))
        self.config: DriverConfig = config_from_parameters(DriverConfig, values)
        urdf = robot_description_xml(self.config.robot_description or default_urdf_path())
        self.core, self.emulator = build_driver(self.config, urdf)
        self._throttle = WarnThrottle(self.get_logger(), self.config.warn_period)
        self._steady = Clock(clock_type=ClockType.STEADY_TIME)
        self._exit_code = runtime.EXIT_OK
        self._failed_trips: list[str] | None = None     # failed_watchdog_events, once decided
        self.done = Future()                # completed only when the emulated physics diverges
        #: per cycle (bench/bench_driver.py): perf_counter s of the tick, then s from the
        #: command's receipt to its frame on the bus (nan: no new command), frames -> replies,
        #: replies -> /joint_states published; the last 60 s
        self.cycle_timing = collections.deque(maxlen=60000)
        #: s from a state's stamp to the receipt of the /joint_commands answering it
        self.state_to_command = collections.deque(maxlen=60000)
        self._command_wall: float | None = None
        self._state_age = math.nan          # s from a state's stamp to the command answering it
        self._cycle_gap = 0.0               # s between the last two cycles
        self._prev_state = self.core.safety.state
        #: monotonic s of the first successful enable: driver time 0 (None: never enabled)
        self.enabled_at: float | None = None
        self.stop_reason = 'shutdown'
        self._stopping = False              # stop_after reached: the last cycle goes out next
        self.published = 0                  # /joint_states messages published
        self.estops = 0                     # e-stops taken (~/estop calls, /estop presses)
        #: what stopped the motors during the run (fault, e-stop, ~/disable): '<state>: <reason>'
        self.motors_off_events: list[str] = []
        #: each watchdog trip of the run: 'at t = ... s of driver time, no command for ...'
        self.watchdog_events: list[str] = []
        self._trips_seen = 0                # safety.watchdog_trips already reported
        self._trip_started: float | None = None     # monotonic s of the open trip
        self.watchdog_s_max = 0.0           # longest tripped stretch, s
        self.commands_received = 0          # commands applied (held), any topic
        self._period_ns = Histogram(TIMING_BIN_NS, 100_000)     # up to 1 s
        self._age_ns = Histogram(TIMING_BIN_NS, 100_000)
        self._first_tick = self._last_tick = None     # monotonic s of the first / last tick
        #: cycles that started more than half a period late (period > 1.5 control_period)
        self.missed_deadlines = 0
        self._summary_logged = False
        # the log keeps the bag's resolved name (the node's namespace)
        self._state_log_topic = self.resolve_topic_name(contract.JOINT_STATES)
        #: every published /joint_states, for the driver's own log (config.state_log)
        self._state_ring = (StateRing(len(self.core.joint_names)) if self.config.state_log
                            else None)
        self.states_logged: int | None = None     # states in the written state_log file

        qos = contract.stream_qos()
        self._pub_joints = self.create_publisher(JointState, contract.JOINT_STATES, qos)
        self._pub_contact = None
        if self.config.contact_frame:
            self._pub_contact = self.create_publisher(
                WrenchStamped, contract.contact_topic(self.config.contact_frame), qos)
        self._pub_diag = self.create_publisher(DiagnosticArray, contract.DIAGNOSTICS, 10)
        self._pub_applied = self.create_publisher(String, contract.APPLIED_CONTROLLER,
                                                  contract.latched_qos())
        self.exchange = self._make_exchange()
        self._actuated = list(self.core.actuated_joint_names)
        self._actuated_index = {name: i for i, name in enumerate(self._actuated)}
        self._diag_refused = 0              # foreign + future at the last /diagnostics
        self.create_subscription(JointState, contract.JOINT_COMMANDS,
                                 with_message_info(self._on_joint_command), qos)
        self.create_subscription(Float64MultiArray, contract.EFFORT_COMMANDS,
                                 with_message_info(self._on_effort_command), qos)
        # ros2_control's topic-based system (docs/ros2_control.md): held like the others
        self.create_subscription(JointState, contract.ROS2_CONTROL_COMMANDS,
                                 with_message_info(self._on_ros2_control_command),
                                 contract.ros2_control_command_qos())
        self.create_subscription(Bool, ESTOP_TOPIC, self._on_estop_input, 10)
        handlers = {'enable': self._on_enable, 'disable': self._on_disable,
                    'estop': self._on_estop, 'calibrate': self._on_calibrate,
                    'clear_errors': self._on_clear_errors}
        for name in contract.DRIVER_SERVICES:
            self.create_service(Trigger, f'~/{name}', handlers[name])
        if self.config.publish_robot_description:
            self._pub_description = self.create_publisher(String, contract.ROBOT_DESCRIPTION,
                                                          contract.latched_qos())
            self._pub_description.publish(String(data=urdf))

        # /joint_states is published as CDR bytes refilled in place (dodo_sim.ros.cdr), as the
        # simulator does: rclpy would convert the whole message object, names included, every
        # cycle of the 1 kHz loop
        n = len(self.core.joint_names)
        template = JointState(name=list(self.core.joint_names))
        template.position = template.velocity = template.effort = array.array('d', bytes(8 * n))
        self._joints_writer = JointStateWriter(serialize_message(template), (n, n, n))
        # world axes at the foot link (docs/ros_contract.md)
        self._msg_contact = (contact_wrench_message(self.config.contact_frame)
                             if self.config.contact_frame else None)
        self._tick = self.create_timer(self.config.control_period, self._on_tick,
                                       clock=self._steady)
        self._diag_timer = self.create_timer(self.config.diagnostics_period,
                                             self._on_diagnostics, clock=self._steady)
        self._diag_wall = time.monotonic()
        self._gate_timer = None
        if self.config.enable_on_start:
            self._gate_start = time.monotonic()
            self._gate_since: float | None = None
            self._gate_timer = self.create_timer(0.01, self._check_gate, clock=self._steady)
        where = (f'emulated bus {self.emulator.channel} ({self.config.emulator_mode})'
                 if self.emulator is not None
                 else f'{self.config.bus_interface}:{self.config.bus_channel}')
        self.get_logger().info(
            f'driver ready on {where} ({self.config.hardware}): actuators '
            + ', '.join(f'{a.joint}=CAN {a.can_id} ({a.model})' for a in self.core.actuators)
            + '; disabled until ' + (
                f'{self.config.min_subscribers} subscriber(s) per state topic and the first '
                f'command (enable_on_start)' if self.config.enable_on_start
                else '~/enable')
            + f'; period {self.config.control_period} s'
            + (f'; stops {self.config.stop_after} s after the first enable'
               if self.config.stop_after > 0.0 else ''))

    def _make_exchange(self) -> RealtimeExchange:
        """Build the realtime exchange core that binds the controller (module docs)."""
        cfg = self.config
        reports = ExchangeReports(
            self, self._throttle, (contract.JOINT_COMMANDS, contract.EFFORT_COMMANDS,
                                   contract.ROS2_CONTROL_COMMANDS),
            announce=lambda text: self._pub_applied.publish(String(data=text)),
            far_ahead_hint=FAR_AHEAD_HINT,
            hosted_node=hosted_node_name(self, cfg.hosted_controller_node))
        # a controller_manager's clock (the topic-based convention) is the system clock: it may
        # run ahead of the newest state by a cycle and its latency, never by command_timeout;
        # no take-over: one node drives the motors for the whole run
        exchange = RealtimeExchange(
            stamp_ns(cfg.control_period), command_timeout_s=cfg.command_timeout,
            max_command_age_s=cfg.command_timeout, zero=(0.0,) * len(cfg.joints),
            written_ahead_ns=stamp_ns(cfg.command_timeout), takeover=False,
            same_node=reports.same_node, events=reports)
        reports.exchange = exchange
        return exchange

    # -- start gate (enable_on_start, emulated hardware) ---------------------

    def _check_gate(self) -> None:
        now = time.monotonic()
        cfg = self.config
        topics = [contract.JOINT_STATES] + ([contract.contact_topic(cfg.contact_frame)]
                                            if cfg.contact_frame else [])
        matched = min(self.count_subscribers(t) for t in topics)
        controller = self.commands_received      # the controller is up: it answers states
        if matched >= cfg.min_subscribers and controller >= 1:
            if self._gate_since is None:
                self._gate_since = now
            if now - self._gate_since < cfg.discovery_settle:
                return
        elif now - self._gate_start > cfg.startup_timeout:
            self.get_logger().warning(
                f'enable_on_start: enabling after {cfg.startup_timeout} s with {matched} of '
                f'{cfg.min_subscribers} subscriber(s) per state topic and {controller} '
                f'command(s) received')
        else:
            self._gate_since = None
            return
        self._gate_timer.cancel()
        ok, message = self.enable(now)
        (self.get_logger().info if ok else self.get_logger().error)(
            f'enable_on_start: {"enabled" if ok else "enable refused"}: {message}')

    # -- commands --------------------------------------------------------------------------------

    def _apply(self, verdict: str, torques, topic: str, why: str) -> bool:
        """Apply a command the exchange held; say why a malformed one was rejected."""
        if verdict is HELD:
            self.core.set_command(time.monotonic(), torques)
            self._command_wall = time.perf_counter()
            self.commands_received += 1
            return True
        if torques is None:
            self._throttle.warn('bad_command', f'rejected {topic} command: {why}; '
                                f'{self.exchange.counts.rejected} rejected so far, holding '
                                f'the last')
        return False

    def _on_joint_command(self, msg: JointState, info) -> None:
        stamp = runtime.stamp_to_ns(msg.header.stamp)
        torques, why = actuated_efforts(msg.name, msg.effort, self._actuated,
                                        self._actuated_index)
        verdict = self.exchange.command(stamp, publisher_gid(info), torques, time.monotonic())
        if self._apply(verdict, torques, contract.JOINT_COMMANDS, why):
            age_ns = self.get_clock().now().nanoseconds - stamp
            self._state_age = stamp_s(age_ns)
            self.state_to_command.append(self._state_age)
            if self.enabled_at is not None:
                self._age_ns.add(max(age_ns, 0))

    def _on_ros2_control_command(self, msg: JointState, info) -> None:
        torques, why = topic_based_efforts(msg.name, msg.effort, msg.position, msg.velocity,
                                           self.core.joint_names, self._actuated)
        verdict = self.exchange.topic_based(runtime.stamp_to_ns(msg.header.stamp),
                                            publisher_gid(info), torques, time.monotonic())
        self._apply(verdict, torques, contract.ROS2_CONTROL_COMMANDS, why)

    def _on_effort_command(self, msg: Float64MultiArray, info) -> None:
        torques, why = unstamped_efforts(msg.data, self._actuated)
        verdict = self.exchange.unstamped(publisher_gid(info), torques, time.monotonic())
        self._apply(verdict, torques, contract.EFFORT_COMMANDS, why)

    def _on_estop_input(self, msg: Bool) -> None:
        was = self.core.safety.estop_input
        self.core.safety.set_estop_input(msg.data)
        if msg.data and not was:
            self.estops += 1
            self.get_logger().error('e-stop input pressed: motors '
                                    + ('off' if self.config.estop_mode == 'disable'
                                       else 'damped') + ' from the next cycle')
        elif was and not msg.data:
            self.get_logger().info('e-stop input released (still stopped until ~/enable)')

    # -- services -------------------------------------------------------------------------------

    def enable(self, now: float) -> tuple:
        """Enable (the service and enable_on_start); the first success starts driver time."""
        ok, message = self.core.enable(now)
        if ok and self.enabled_at is None:
            self.enabled_at = now
        return ok, message

    def _on_enable(self, request, response):
        if self._stopping:
            response.success, response.message = False, 'stop_after reached: stopping'
            return response
        ok, message = self.enable(time.monotonic())
        return self._answer(response, ok, message, 'enable: ', 'enable refused: ')

    def _on_disable(self, request, response):
        self.core.disable('~/disable called')
        response.success, response.message = True, 'disabled (from the next cycle)'
        self.get_logger().info('disabled by ~/disable')
        return response

    def _on_clear_errors(self, request, response):
        ok, message = self.core.clear_errors()
        return self._answer(response, ok, message, 'clear_errors: ', 'clear_errors ')

    def _answer(self, response, ok: bool, message: str, done: str, refused: str):
        """Fill a Trigger response with ``(ok, message)`` and log it after its prefix."""
        response.success, response.message = ok, message
        if ok:
            self.get_logger().info(done + message)
        else:
            self.get_logger().warning(refused + message)
        return response

    def _on_estop(self, request, response):
        self.core.estop('~/estop called')
        self.estops += 1
        response.success, response.message = True, f'e-stop ({self.config.estop_mode})'
        self.get_logger().error('e-stop by ~/estop')
        return response

    def _on_calibrate(self, request, response):
        try:
            calibration = self.core.calibrate()
        except (RuntimeError, OSError, ValueError) as exc:
            response.success, response.message = False, f'calibration refused: {exc}'
            self.get_logger().warning(response.message)
            return response
        response.success = True
        response.message = (f'zero offsets written to {self.config.calibration_file}: '
                            f'{dict(calibration.zero_offsets)}, boom '
                            f'{list(calibration.boom_zero_counts)}')
        self.get_logger().info(response.message)
        return response

    # -- the cycle --------------------------------------------------------------------------------

    def driver_time(self, now: float | None = None) -> float:
        """Return the driver time since the first enable, s (0 before it)."""
        if self.enabled_at is None:
            return 0.0
        return (time.monotonic() if now is None else now) - self.enabled_at

    def _on_tick(self) -> None:
        command_wall = self._command_wall
        now = time.monotonic()
        if self._last_tick is not None:
            self._cycle_gap = now - self._last_tick
            self._period_ns.add(wall_ns(self._cycle_gap))
            if self._cycle_gap > MISSED_DEADLINE_PERIODS * self.config.control_period:
                self.missed_deadlines += 1
        else:
            self._first_tick = now
        self._last_tick = now
        stop_after = self.config.stop_after
        if (not self._stopping and stop_after > 0.0 and self.enabled_at is not None
                and now - self.enabled_at >= stop_after):
            self._stopping = True              # this cycle sends the disable frames
            self.core.disable(f'stop_after = {stop_after} s of driver time reached')
            self.stop_reason = 'stop_after'
        try:
            sample = self.core.cycle(now)
        except SimulationDiverged as exc:          # only the emulated hardware can raise it
            self.get_logger().fatal(f'emulated hardware: {exc}')
            self.exit_code = EXIT_DIVERGED
            self.stop_reason = 'diverged'
            self._tick.cancel()
            self._log_summary()
            if not self.done.done():
                self.done.set_result(EXIT_DIVERGED)
            return
        timing = self.core.timing
        waited = math.nan
        if command_wall is not None:
            self._command_wall = None
            waited = timing.sent - command_wall
        stamp = self.get_clock().now().nanoseconds
        if self._pub_contact is not None:
            c = self._msg_contact
            c.header.stamp.sec, c.header.stamp.nanosec = sec_nanosec(stamp)
            c.wrench.force.x = float(sample.contact_force[0])
            c.wrench.force.z = float(sample.contact_force[1])
            self._pub_contact.publish(c)
        self._pub_joints.publish(self._joints_writer.write(stamp, sample.q, sample.v,
                                                           sample.effort))
        self.exchange.published(stamp, time.monotonic())
        self.published += 1
        if self._state_ring is not None:
            self._state_ring.append(stamp, sample.q, sample.v, sample.effort)
        self.cycle_timing.append((timing.start, waited, timing.received - timing.sent,
                                  time.perf_counter() - timing.received))
        self._report_transitions(sample)
        if self._stopping:
            self._tick.cancel()
            self.get_logger().info(
                f'stop_after = {stop_after} s of driver time reached after {self.core.cycles} '
                f'cycles: actuators disabled')
            self._log_summary()
            if not self.done.done():
                self.done.set_result(self.exit_code)

    def _report_transitions(self, sample) -> None:
        safety = self.core.safety
        if sample.state is not self._prev_state:
            text = f'safety: {self._prev_state.value} -> {sample.state.value} ({safety.reason})'
            if sample.state is SafetyState.FAULT:
                self.get_logger().error(text)
            else:
                self.get_logger().info(text)
            if (self._prev_state is SafetyState.ENABLED and not self._stopping
                    and sample.state is not SafetyState.ENABLED):
                # the run's motors stopped before stop_after: the run failed (issue 16 item 0)
                event = (safety.reason if safety.reason.startswith(sample.state.value)
                         else f'{sample.state.value}: {safety.reason}')
                self.motors_off_events.append(event)
                self.exit_code = EXIT_MOTORS_STOPPED      # over a watchdog trip's 5
                self.get_logger().error(MOTORS_OFF_PREFIX + event)
            self._prev_state = sample.state
        self._report_watchdog(safety)
        if safety.watchdog_active:
            age = safety.command_age(time.monotonic())
            since = f'for {age:.3f} s' if math.isfinite(age) else 'since enable'
            self._throttle.warn('watchdog', f'no command {since} (command_timeout = '
                                f'{self.config.command_timeout} s): '
                                + ('zero torque plus damping'
                                   if self.config.watchdog_mode == 'damp'
                                   else 'landing the leg (hold, lower to the crouch, rest)')
                                + ' until commands return')
        if not sample.fresh:
            missed = [s.config.joint for s in self.core.status if s.consecutive_missed]
            if self.core.has_board and self.core.board.consecutive_missed:
                missed.append('sensor board')
            self._throttle.warn('missed', f'missed replies this cycle: {missed}')

    def _report_watchdog(self, safety) -> None:
        """Report a watchdog trip: it fails the run (DESIGN.md section 7); logged, exit code 5."""
        now = time.monotonic()
        if self._trip_started is not None and not safety.watchdog_active:
            stretch = now - self._trip_started
            self.watchdog_s_max = max(self.watchdog_s_max, stretch)
            self._trip_started = None
            self.get_logger().info(f'watchdog: commands back after {stretch:.3f} s')
        if safety.watchdog_trips == self._trips_seen:
            return
        self._trips_seen = safety.watchdog_trips
        if self._stopping:
            return
        self._trip_started = now
        age = safety.command_age(now)
        silent = (f'no command for {age:.3f} s' if math.isfinite(age)
                  else 'no command since the enable')
        cause = watchdog_cause(age, self._cycle_gap, self.config.command_timeout,
                               self.config.control_period)
        event = (f'at t = {self.driver_time(now):.3f} s of driver time, {silent} '
                 f'(command_timeout = {self.config.command_timeout} s): {cause}; '
                 f'{self.config.watchdog_mode} law until commands returned')
        self.watchdog_events.append(event)
        # the run's verdict (WATCHDOG_PREFIX lines, exit code) comes at the end: a trip just
        # before a signal stopped the driver is the controller stopping first (trip_verdict)
        self.get_logger().error('watchdog tripped ' + event)

    def failed_watchdog_events(self) -> list[str]:
        """
        Return the trips that fail the run, decided once, when the driver stops.

        Every trip, except one still open when a signal (not stop_after) stopped the driver that
        began less than :data:`SHUTDOWN_TRIP_GRACE_S` before: ``ros2 launch`` signals every node
        at once and the controller may stop first.
        """
        if self._failed_trips is None:
            events = list(self.watchdog_events)
            now = time.monotonic()
            if (events and self._trip_started is not None and self.stop_reason == 'shutdown'
                    and now - self._trip_started < SHUTDOWN_TRIP_GRACE_S):
                self.get_logger().info(f'watchdog trip {now - self._trip_started:.3f} s before '
                                       f'the stop: the controller stopped first (not a failure)')
                events.pop()
            self._failed_trips = events
        return self._failed_trips

    @property
    def exit_code(self) -> int:
        """Return the process exit code; read when the driver stops (runtime.run_node)."""
        if self._exit_code != runtime.EXIT_OK:
            return self._exit_code            # diverged (3), motors stopped (4)
        return EXIT_WATCHDOG_TRIPPED if self.failed_watchdog_events() else runtime.EXIT_OK

    @exit_code.setter
    def exit_code(self, code: int) -> None:
        self._exit_code = code

    # -- diagnostics ------------------------------------------------------------------------------

    def _on_diagnostics(self) -> None:
        self._pub_diag.publish(self.diagnostics())

    def diagnostics(self) -> DiagnosticArray:
        """Return the driver's /diagnostics: safety, each actuator, the sensor board, the bus."""
        now = time.monotonic()
        window = self.core.take_window()
        span = max(now - self._diag_wall, 1e-9)
        self._diag_wall = now
        counts = self.exchange.counts
        refused = counts.foreign + counts.future
        new_refused, self._diag_refused = refused - self._diag_refused, refused
        return driver_diagnostics(self.core, self.config, window,
                                  span / self.config.control_period, self._state_age, now,
                                  self.get_clock().now().to_msg(),
                                  self._exchange_summary(), new_refused)

    # -- the run summary --------------------------------------------------------------------------

    def summary(self) -> dict:
        """
        Return the run in numbers (the ``dodo driver:`` line).

        The numbers: driver time since the first enable, cycles and published states since the
        start, achieved rate, cycle period and state-to-command age percentiles (ms), watchdog
        trips, e-stops, missed deadlines (:data:`MISSED_DEADLINE_PERIODS`), missed replies,
        rejected commands, the emulator's skipped physics steps.
        """
        run = self.driver_time()
        ms = (lambda h, p: None if h.percentile(p) is None else h.percentile(p) * 1e-6)
        safety = self.core.safety
        out = {'hardware': self.config.hardware, 'run_time_s': run,
               'cycles': self.core.cycles, 'published': self.published,
               'rate_hz': (self._period_ns.count / (self._last_tick - self._first_tick)
                           if self._period_ns.count else None),
               'period_ms_p50': ms(self._period_ns, 50), 'period_ms_p99': ms(self._period_ns, 99),
               'period_ms_max': (None if self._period_ns.max is None
                                 else self._period_ns.max * 1e-6),
               'missed_deadlines': self.missed_deadlines,
               'age_ms_p50': ms(self._age_ns, 50), 'age_ms_p99': ms(self._age_ns, 99),
               'age_ms_max': None if self._age_ns.max is None else self._age_ns.max * 1e-6,
               'watchdog_trips': safety.watchdog_trips, 'watchdog_s_max': self.watchdog_s_max,
               'estops': self.estops,
               'state': safety.state.value,
               'missed_replies': sum(s.missed for s in self.core.status)
               + (self.core.board.missed if self.core.has_board else 0),
               'cpu_s': time.process_time(),
               'faults': safety.faults, 'motors_off_events': len(self.motors_off_events),
               'logged': self.states_logged,
               'stop_reason': self.stop_reason}
        out.update(self._exchange_summary())
        if self.emulator is not None:
            out['emulator_mode'] = self.config.emulator_mode
            out['emulated_time_s'] = self.emulator.steps * self.emulator.period
            out['skipped_steps'] = self.emulator.skipped_steps
        return out

    def _exchange_summary(self) -> dict:
        """Return the commands' accounting: the controller, what was refused and from whom."""
        x = self.exchange.summary()
        out = {'controller': x['controller'], 'commands': self.commands_received}
        out.update((k, x[k]) for k in ('rejected', 'foreign', 'future', 'late', 'early',
                                       'unstamped', 'foreign_nodes'))
        return out

    def _log_summary(self) -> None:
        if not self._summary_logged:
            self._summary_logged = True
            self._write_state_log()
            if self._trip_started is not None:          # still tripped at the end
                self.watchdog_s_max = max(self.watchdog_s_max,
                                          time.monotonic() - self._trip_started)
            for event in self.failed_watchdog_events():     # the last lines: why it failed
                self.get_logger().error(WATCHDOG_PREFIX + event)
            for event in self.motors_off_events:
                self.get_logger().error(MOTORS_OFF_PREFIX + event)
            self.get_logger().info(runtime.format_summary('driver', self.summary()))

    def _write_state_log(self) -> None:
        """Write the ring of published states to ``state_log`` (once, at the end)."""
        ring, self._state_ring = self._state_ring, None
        if ring is None:
            return
        try:
            log = StateLog(self.config.state_log, self._state_log_topic)
            msg = JointState()
            msg.name = list(self.core.joint_names)
            try:
                for ns, q, v, effort in ring.rows():
                    msg.header.stamp.sec, msg.header.stamp.nanosec = sec_nanosec(ns)
                    msg.position = array.array('d', q)
                    msg.velocity = array.array('d', v)
                    msg.effort = array.array('d', effort)
                    log.write(ns, serialize_message(msg))
            finally:
                log.close()
            self.states_logged = log.logged
            self.get_logger().info(f'state log: {log.logged} of {self.published} published '
                                   f'{contract.JOINT_STATES} written to {log.path}')
        except OSError as exc:
            self.get_logger().error(f'state log {self.config.state_log} not written: {exc}')

    def destroy_node(self):
        self._log_summary()
        try:
            self.core.shutdown()                    # disable frames, bus closed
        finally:
            if self.emulator is not None:
                self.emulator.close()
        return super().destroy_node()


def main(args=None) -> int:
    return runtime.run_node(DriverNode, 'driver', args)


if __name__ == '__main__':
    sys.exit(main())
