# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
``simulator`` ROS 2 node: a thin adapter around :class:`dodo_sim.simulator.Simulator`.

Robot-agnostic: the joints, actuated joints and contact frames are the simulator's
(``sim.joint_names``, ``sim.actuated_joint_names``, ``sim.contact_frames``).

Publishes (every control period, in this order, all with the same sim-time stamp): one
geometry_msgs/WrenchStamped per contact frame on ``/<frame>_contact`` (the force on that frame
in the ``world`` frame, N, zero in flight; the hopper: ``/foot_contact``), ``/joint_states``
(sensor_msgs/JointState: every joint's position, velocity, and effort = the torque applied in
the step that led to this state, zero for unactuated joints) and then ``/clock``
(rosgraph_msgs/Clock; last, off the lockstep critical path — the controller works on the header
stamps). The simulator is the clock source and does not follow ``/clock`` itself:
``use_sim_time`` is forced to false for this node (it only uses steady wall-clock timers).
``/robot_description`` (std_msgs/String, transient local) once, unless
``publish_robot_description`` is false (robot_state_publisher does it).

Subscribes: ``/joint_commands`` (sensor_msgs/JointState: ``name`` = the actuated joints, any
order, ``effort`` = N*m, ``header.stamp`` = stamp of the state the command answers),
``/effort_controller/commands`` (std_msgs/Float64MultiArray, actuated joints in order, N*m:
applied in realtime mode when no stamped commands come; in lockstep read only while a publisher
besides the controller is on it — checked every ``graph_check_period`` — and then counted and
never applied), ``/simulator/push`` (geometry_msgs/Vector3: an impulse on the base, x and z in N*s,
applied at the start of the next step), ``/simulator/force`` (geometry_msgs/Vector3: a constant
force on the base, x and z in N, until the next message). Service ``/simulator/reset``
(std_srvs/Trigger): back to ``initial_q`` / ``initial_v`` at the next step; the published clock
keeps increasing.

The exchange (``docs/ros_contract.md``, "Timing"):

* ``lockstep``: publish the state of time t, then wait for the command stamped t and step with
  it. Commands are paired by stamp, never by arrival order: a command with another stamp (a late
  answer after a timeout, a stray or duplicate publisher) never answers the state. The first
  publisher whose command answers a state is *the controller*; valid commands from any other
  publisher are counted as foreign and ignored (until the controller is lost: then the next
  publisher that answers a state takes over, with a log line). The very first state waits up to
  ``startup_timeout``. No answer within ``command_timeout`` wall-clock seconds: warn (throttled),
  step with zero torque at the wall-clock control rate, and go back to lockstep as soon as a
  command answers the newest state — the exchange resumes with zero offset.
* ``realtime``: a steady wall-clock timer at ``control_period`` steps with the newest command
  (zero-order hold); a command older (by its stamp) than the one held is ignored. The age of the
  applied command — the start of the step minus the stamp of the state the command was computed
  from — is measured every step: above ``max_command_age`` the step counts as stale (warned,
  throttled); above ``command_timeout`` zero torque is applied. A late tick makes up the steps
  due since the start (up to 10 ms worth; more are dropped and counted in ``overruns``), so
  simulated time follows wall time.

Rejected and never an answer: a command whose names are not the actuated joints, whose effort
length differs, or with non-finite values (counted, warned throttled). A second publisher on a
command topic is reported (graph query every ``graph_check_period``). At the end of the run the
node logs one summary line, ``dodo exchange: key=value ...`` (:meth:`SimulatorNode.summary`):
steps, zero-torque steps, timeouts, rejected / foreign / late / unstamped commands, command
publishers seen, the applied command age (p50/p99/max, ms), the wall-clock round trip from a
state's publication to its answer (p50/p99/max, ms), stale steps and overruns.

Every parameter comes from :class:`SimConfig` and
:class:`dodo_sim.ros.node_config.SimulatorNodeConfig`.
"""
from __future__ import annotations

import array
import math
import sys
import time

from dodo_sim.paths import default_urdf_path
from dodo_sim.ros import contract, node_config, runtime
from dodo_sim.ros.params import config_from_parameters, declare_config_parameters
from dodo_sim.ros.runtime import (EXIT_DIVERGED, EXIT_OK, Histogram, publisher_gid, WarnThrottle,
                                  with_message_info)
from dodo_sim.simulator import SimConfig, SimulationDiverged, Simulator
from geometry_msgs.msg import Vector3, WrenchStamped
from rclpy.clock import Clock, ClockType
from rclpy.node import Node
from rclpy.parameter import Parameter
from rclpy.task import Future
from rosgraph_msgs.msg import Clock as ClockMsg
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray, String
from std_srvs.srv import Trigger

#: Publication wall times remembered for the round-trip measurement (states).
_ROUND_TRIP_RING = 1024
#: Histogram resolution: command ages in ns (bins of 0.1 ms up to 2 s), round trips in ns
#: (bins of 10 us up to 1 s), tick lateness in ns (bins of 10 us up to 1 s).
_AGE_BIN_NS, _AGE_BINS = 100_000, 20_000
_WALL_BIN_NS, _WALL_BINS = 10_000, 100_000


class SimulatorNode(Node):
    """The simulator node (see module docs)."""

    def __init__(self, **node_kwargs):
        super().__init__('simulator', **node_kwargs)
        if self.get_parameter('use_sim_time').value:
            # the clock source must not wait for (or deserialize) its own /clock
            self.set_parameters([Parameter('use_sim_time', Parameter.Type.BOOL, False)])
        sim_values = declare_config_parameters(
            self, SimConfig, read_only=[f for f in SimConfig.__dataclass_fields__])
        node_values = declare_config_parameters(
            self, node_config.SimulatorNodeConfig,
            read_only=[f for f in node_config.SimulatorNodeConfig.__dataclass_fields__])
        # ValueError / ModelError here name the bad parameter; main() turns them into exit 2
        self.config: SimConfig = config_from_parameters(SimConfig, sim_values)
        self.node_config: node_config.SimulatorNodeConfig = config_from_parameters(
            node_config.SimulatorNodeConfig, node_values)
        urdf = self.node_config.robot_description or default_urdf_path()
        self.sim = Simulator(urdf, self.config)
        self.joint_names = tuple(self.sim.joint_names)
        self.actuated_joint_names = tuple(self.sim.actuated_joint_names)
        self.contact_frames = tuple(self.sim.contact_frames)
        state = self.sim.state
        if not len(state.q) == len(state.v) == len(self.joint_names):
            raise ValueError(f'/joint_states needs one coordinate per joint: the model has '
                             f'{len(state.q)} positions and {len(state.v)} velocities for the '
                             f'joints {list(self.joint_names)}')
        self._throttle = WarnThrottle(self.get_logger(), self.node_config.warn_period)
        self._steady = Clock(clock_type=ClockType.STEADY_TIME)
        self._lockstep = self.config.mode == 'lockstep'

        # counters (read by tests, the bench and the summary line)
        self.steps = 0
        self.zero_torque_steps = 0      # stepped with zero torque: no (fresh) command
        self.rejected_commands = 0      # malformed: names, length, non-finite
        self.rejected_disturbances = 0  # malformed pushes and forces
        self.foreign_commands = 0       # valid, from a publisher other than the controller
        self.late_commands = 0          # valid, from the controller, answering no awaited state
        self.unstamped_commands = 0     # valid Float64MultiArray commands not applied
        self.command_timeouts = 0       # times the controller was declared lost
        self.stale_steps = 0            # applied commands older than max_command_age
        self.overruns = 0               # realtime: ticks that dropped steps
        self.command_publishers = 0     # most publishers seen on one command topic
        period_ns = int(round(self.config.control_period * 1e9))
        self.command_age = Histogram(_AGE_BIN_NS, _AGE_BINS)       # ns, per applied step
        self.round_trip = Histogram(_WALL_BIN_NS, _WALL_BINS)      # ns, state out -> answer in
        self.tick_lateness = Histogram(_WALL_BIN_NS, _WALL_BINS)   # ns, realtime timer ticks

        self._period_ns = period_ns
        self._max_age_ns = int(round(self.node_config.max_command_age * 1e9))
        self._timeout_ns = int(round(self.config.command_timeout * 1e9))
        self._max_catch_up = max(1, int(round(0.01 / self.config.control_period)))
        self._time_offset_ns = 0            # grows at each reset so the clock never goes back
        self._stamp_ns = 0                  # stamp of the newest published state
        n_act = len(self.actuated_joint_names)
        self._zero = (0.0,) * n_act
        self._actuated_list = list(self.actuated_joint_names)
        self._actuated_index = {name: i for i, name in enumerate(self.actuated_joint_names)}
        self._effort_slots = [self.joint_names.index(n) for n in self.actuated_joint_names]
        # the controller: publisher id of the commands that answer states (b'' = none yet)
        self._controller_gid = b''
        self._foreign_gids: set = set()
        # realtime: the held command and the stamp of the state it was computed from
        self._held = self._zero
        self._held_stamp_ns = None
        self._stamped_wall = -math.inf      # wall time of the last stamped command (realtime)
        self._realtime_steps = 0
        self._realtime_start = 0.0
        # lockstep
        self._awaiting = False              # a state is published, its answer pending
        self._published_wall = 0.0
        self._controller_lost = False
        self._answered_once = False         # lockstep: the first state waits startup_timeout
        # publication wall time (ns) of recent states, by stamp: the round-trip measurement
        self._ring_stamp = [-1] * _ROUND_TRIP_RING
        self._ring_wall = [0] * _ROUND_TRIP_RING
        self._reset_requested = False
        self._finished = False              # stop_after reached: the next advance ends the run
        self._stop_reason = 'shutdown'      # why the run ended (the summary line): stop_after,
        # diverged, or shutdown (a signal / the node destroyed)
        self._started = False
        self._summary_logged = False
        self.done = Future()
        self.exit_code = EXIT_OK

        stream_qos = contract.stream_qos()
        self._pub_clock = self.create_publisher(ClockMsg, contract.CLOCK, stream_qos)
        self._pub_contacts = [self.create_publisher(WrenchStamped, contract.contact_topic(frame),
                                                    stream_qos)
                              for frame in self.contact_frames]
        self._pub_joints = self.create_publisher(JointState, contract.JOINT_STATES, stream_qos)
        command_qos = contract.command_qos() if self._lockstep else contract.input_qos()
        self._sub_joint_commands = self.create_subscription(
            JointState, contract.JOINT_COMMANDS, with_message_info(self._on_joint_command),
            command_qos)
        # the unstamped topic: always read in realtime; in lockstep only while someone besides
        # the controller publishes on it (to reject and count what strays send): reading the
        # controller's own copy of every command would cost both nodes a message per step
        self._command_qos = command_qos
        self._sub_effort_commands = None
        if not self._lockstep:
            self._read_effort_commands(True)
        self._sub_push = self.create_subscription(Vector3, contract.PUSH, self._on_push, 10)
        self._sub_force = self.create_subscription(Vector3, contract.FORCE, self._on_force, 10)
        self._srv_reset = self.create_service(Trigger, contract.RESET_SERVICE, self._on_reset)
        if self.node_config.publish_robot_description:
            self._pub_description = self.create_publisher(String, contract.ROBOT_DESCRIPTION,
                                                          contract.latched_qos())
            self._pub_description.publish(String(data=self.sim.leg.urdf_xml))

        # reusable messages (only the numbers change per step)
        self._msg_clock = ClockMsg()
        self._msg_contacts = []
        for _ in self.contact_frames:
            msg = WrenchStamped()
            msg.header.frame_id = contract.WORLD_FRAME
            self._msg_contacts.append(msg)
        self._msg_joints = JointState()
        self._msg_joints.name = list(self.joint_names)
        self._effort = array.array('d', bytes(8 * len(self.joint_names)))

        self._startup_wall = time.monotonic()
        self._ready_since = None
        self._gate_timer = self.create_timer(0.01, self._check_start, clock=self._steady)
        self._watchdog = None
        self._tick_timer = None
        self._graph_timer = None
        if self.node_config.graph_check_period > 0.0:
            self._graph_timer = self.create_timer(self.node_config.graph_check_period,
                                                  self._check_publishers, clock=self._steady)
        self.get_logger().info(
            f'simulator ready: {self.config.integrator} integrator, dt = {self.config.dt} s, '
            f'control period = {self.config.control_period} s, mode = {self.config.mode}; '
            f'joints {list(self.joint_names)}, actuated {self._actuated_list}, contact frames '
            f'{list(self.contact_frames)}; waiting for {self.node_config.min_subscribers} '
            f'subscriber(s) per state topic')

    # -- start-up -----------------------------------------------------------------------------

    def _ready(self) -> bool:
        need = self.node_config.min_subscribers
        pubs = [self._pub_clock, self._pub_joints] + self._pub_contacts
        if any(p.get_subscription_count() < need for p in pubs):
            return False
        return not self._lockstep or self._sub_joint_commands.get_publisher_count() >= 1

    def _check_start(self) -> None:
        if self._started:
            return
        now = time.monotonic()
        waited = now - self._startup_wall
        ready = self._ready()
        if ready and self._ready_since is None:
            self._ready_since = now
        elif not ready:
            self._ready_since = None
        settled = ready and now - self._ready_since >= self.node_config.discovery_settle
        if not settled:
            if waited < self.node_config.startup_timeout:
                return
            self.get_logger().warning(
                f'starting after {waited:.1f} s without all subscribers/controller matched')
        self._started = True
        self._gate_timer.cancel()
        self.get_logger().info(f'simulation starts (matched after {waited:.2f} s)')
        self._publish_state(self.sim.state)
        if self._lockstep:
            period = min(0.05, self.config.command_timeout / 5.0)
            self._watchdog = self.create_timer(period, self._on_watchdog, clock=self._steady)
        else:
            self._realtime_start = time.monotonic()
            self._tick_timer = self.create_timer(self.config.control_period, self._on_tick,
                                                 clock=self._steady)

    # -- inputs ---------------------------------------------------------------------------------

    def _reject(self, what: str, why: str) -> None:
        self.rejected_commands += 1
        self._throttle.warn('bad_command', f'rejected {what}: {why}; {self.rejected_commands} '
                            f'rejected so far (a rejected command answers no state)')

    def _command_torques(self, names, effort):
        """
        Return the torques of a JointState command in actuated-joint order, or None.

        (rejected).
        """
        if len(effort) != len(names):
            self._reject(f'{contract.JOINT_COMMANDS} command', f'{len(names)} names but '
                         f'{len(effort)} efforts')
            return None
        if names == self._actuated_list:
            torques = tuple(effort)
        elif sorted(names) == sorted(self._actuated_list):
            index = self._actuated_index
            ordered = [0.0] * len(names)
            for name, value in zip(names, effort):
                ordered[index[name]] = value
            torques = tuple(ordered)
        else:
            self._reject(f'{contract.JOINT_COMMANDS} command', f'joint names {list(names)}, '
                         f'need the actuated joints {self._actuated_list}')
            return None
        for value in torques:
            if not math.isfinite(value):
                self._reject(f'{contract.JOINT_COMMANDS} command',
                             f'non-finite effort {list(torques)} N*m')
                return None
        return torques

    def _on_joint_command(self, msg: JointState, info) -> None:
        torques = self._command_torques(msg.name, msg.effort)
        if torques is None:
            return
        now = time.monotonic()
        stamp = msg.header.stamp
        stamp_ns = stamp.sec * 1_000_000_000 + stamp.nanosec
        gid = publisher_gid(info)
        if self._lockstep:
            if not (self._awaiting and stamp_ns == self._stamp_ns):
                if gid != self._controller_gid:
                    self._foreign(gid, stamp_ns)
                    return
                self.late_commands += 1           # a late answer, after a timeout
                if self._controller_lost and self._published_recently(stamp_ns):
                    # the controller is back: stop stepping on our own and wait for its answer
                    # to the newest state (it has it or gets it next), so that the exchange
                    # resumes with zero offset however long its round trip is
                    self._recover()
                    self._published_wall = now
                return
            if gid != self._controller_gid:
                if self._controller_gid and not self._controller_lost:
                    self._foreign(gid, stamp_ns)  # a second controller: it never answers
                    return
                self._bind(gid)
            self._record_round_trip(stamp_ns, now)
            if not self._finished:
                self.command_age.add(0)     # it answers the state it is applied to: age 0
            self._answered_once = True
            if self._controller_lost:
                self._recover()
            self._advance(torques)
            return
        # realtime: hold the newest command of a state we published
        if gid != self._controller_gid:
            if self._controller_gid and not self._controller_lost:
                self._foreign(gid, stamp_ns)
                return
            if not self._published_recently(stamp_ns):
                self._foreign(gid, stamp_ns)
                return
            self._bind(gid)
        if self._held_stamp_ns is not None and stamp_ns <= self._held_stamp_ns:
            self.late_commands += 1
            return
        self._record_round_trip(stamp_ns, now)
        self._held, self._held_stamp_ns = torques, stamp_ns
        self._stamped_wall = now

    def _on_effort_command(self, msg: Float64MultiArray) -> None:
        data = msg.data
        if len(data) != len(self._zero) or not all(map(math.isfinite, data)):
            self._reject(f'{contract.EFFORT_COMMANDS} command',
                         f'{list(data)!r}, need {len(self._zero)} finite values '
                         f'{self._actuated_list} N*m')
            return
        if self._lockstep or time.monotonic() - self._stamped_wall <= self.config.command_timeout:
            self.unstamped_commands += 1      # lockstep pairs by stamp; a stamped source wins
            return
        # realtime without a stamped source (a ros2_control-style controller): it answers the
        # newest state published before it arrived
        self._held, self._held_stamp_ns = tuple(data), self._stamp_ns

    def _published_recently(self, stamp_ns: int) -> bool:
        return 0 <= self._stamp_ns - stamp_ns <= self._timeout_ns

    def _bind(self, gid: bytes) -> None:
        previous = self._controller_gid
        self._controller_gid = gid
        self._foreign_gids.discard(gid)
        if previous:
            self.get_logger().warning(f'commands now come from {self._publisher_name(gid)} '
                                      f'(the previous controller was lost)')
        else:
            self.get_logger().info(f'controller: {self._publisher_name(gid)}')

    def _foreign(self, gid: bytes, stamp_ns: int) -> None:
        self.foreign_commands += 1
        if gid not in self._foreign_gids:
            self._foreign_gids.add(gid)
            self.get_logger().warning(
                f'commands from a second publisher, {self._publisher_name(gid)} (stamp '
                f'{stamp_ns * 1e-9:.6f} s), ignored: commands are taken from the controller '
                f'{self._publisher_name(self._controller_gid)} only')
        else:
            self._throttle.warn('foreign', f'{self.foreign_commands} command(s) from publishers '
                                f'other than the controller ignored')

    def _publisher_name(self, gid: bytes) -> str:
        if not gid:
            return '(none yet)'
        for topic in (contract.JOINT_COMMANDS, contract.EFFORT_COMMANDS):
            for endpoint in self.get_publishers_info_by_topic(topic):
                if runtime.endpoint_gid(endpoint)[:len(gid)] == gid:
                    return (f'node {endpoint.node_namespace.rstrip("/")}/'
                            f'{endpoint.node_name}')
        return f'publisher {gid.hex()}'

    def _read_effort_commands(self, read: bool) -> None:
        if read and self._sub_effort_commands is None:
            self._sub_effort_commands = self.create_subscription(
                Float64MultiArray, contract.EFFORT_COMMANDS, self._on_effort_command,
                self._command_qos)
        elif not read and self._sub_effort_commands is not None:
            self.destroy_subscription(self._sub_effort_commands)
            self._sub_effort_commands = None

    def _check_publishers(self) -> None:
        if self._lockstep:
            self._read_effort_commands(self.count_publishers(contract.EFFORT_COMMANDS) > 1)
        for topic in (contract.JOINT_COMMANDS, contract.EFFORT_COMMANDS):
            count = self.count_publishers(topic)
            if count > self.command_publishers:
                self.command_publishers = count
                if count > 1:
                    nodes = sorted(f'{e.node_namespace.rstrip("/")}/{e.node_name}'
                                   for e in self.get_publishers_info_by_topic(topic))
                    self.get_logger().warning(
                        f'{count} publishers on {topic}: {nodes}; a second controller? Only '
                        f'the controller that answers states is used')

    def _record_round_trip(self, stamp_ns: int, now: float) -> None:
        slot = (stamp_ns // self._period_ns) % _ROUND_TRIP_RING
        if self._ring_stamp[slot] == stamp_ns:
            self.round_trip.add(int(now * 1e9) - self._ring_wall[slot])

    def _on_push(self, msg: Vector3) -> None:
        try:
            self.sim.apply_impulse([msg.x, msg.z])
        except ValueError as exc:
            self.rejected_disturbances += 1
            self._throttle.warn('bad_push', f'rejected push: {exc}')
            return
        self.get_logger().info(f'push on the base: [{msg.x}, {msg.z}] N*s')

    def _on_force(self, msg: Vector3) -> None:
        try:
            self.sim.set_external_force([msg.x, msg.z])
        except ValueError as exc:
            self.rejected_disturbances += 1
            self._throttle.warn('bad_force', f'rejected force (the last valid one stays): '
                                f'{exc}')
            return
        self.get_logger().info(f'constant force on the base: [{msg.x}, {msg.z}] N')

    def _on_reset(self, request, response):
        self._reset_requested = True
        response.success = True
        response.message = 'the robot is put back to initial_q/initial_v at the next step'
        return response

    # -- stepping ----------------------------------------------------------------------------

    def _on_watchdog(self) -> None:
        if not self._awaiting or self._controller_lost:
            return
        silent = time.monotonic() - self._published_wall
        if not self._answered_once:
            # start-up: the controller may still be discovering the command subscribers
            if silent > self.node_config.startup_timeout:
                self._answered_once = True
                self.get_logger().warning(f'no answer to the first state within '
                                          f'startup_timeout = {self.node_config.startup_timeout} s')
            return
        if silent > self.config.command_timeout:
            self.command_timeouts += 1
            self._controller_lost = True
            self.get_logger().warning(
                f'no command for {silent:.2f} s answering the state of t = '
                f'{self._stamp_ns * 1e-9:.3f} s (command_timeout = {self.config.command_timeout} '
                f's): zero torque, stepping at the wall-clock control rate until a command '
                f'answers the newest state')
            self._tick_timer = self.create_timer(self.config.control_period, self._on_tick,
                                                 clock=self._steady)

    def _recover(self) -> None:
        self._controller_lost = False
        if self._lockstep and self._tick_timer is not None:
            self.destroy_timer(self._tick_timer)
            self._tick_timer = None
        self.get_logger().info(f'commands are back (newest state: t = '
                               f'{self._stamp_ns * 1e-9:.3f} s): lockstep again')

    def _on_tick(self) -> None:
        if self._lockstep:
            if self._controller_lost:
                self.zero_torque_steps += 1
                self._advance(self._zero)
            return
        now = time.monotonic()
        # steps due by now; a late tick catches up (at most max_catch_up steps at once, the
        # rest is dropped and counted) so that simulated time keeps up with wall time
        elapsed = now - self._realtime_start
        due = int(elapsed / self.config.control_period + 0.5)
        self.tick_lateness.add(max(0, int((elapsed - self._realtime_steps
                                           * self.config.control_period) * 1e9)))
        behind = due - self._realtime_steps
        if behind > self._max_catch_up:
            self.overruns += 1
            self._realtime_steps = due - self._max_catch_up
            behind = self._max_catch_up
        for _ in range(max(behind, 0)):
            self._realtime_steps += 1
            if self._finished:              # the run ends here: no step, no command accounted
                self._advance(self._zero)
                return
            self._advance(self._realtime_command())
            if self.done.done():
                return

    def _realtime_command(self):
        """Return the command for the step from the newest state, with its age accounted."""
        held_stamp = self._held_stamp_ns
        age = self._stamp_ns - held_stamp if held_stamp is not None else None
        if age is None or age > self._timeout_ns:
            self.zero_torque_steps += 1
            if not self._controller_lost and (
                    age is not None
                    or time.monotonic() - self._realtime_start > self.config.command_timeout):
                self.command_timeouts += 1
                self._controller_lost = True
                self.get_logger().warning(f'no command computed within command_timeout = '
                                          f'{self.config.command_timeout} s: zero torque')
            return self._zero
        if self._controller_lost:
            self._controller_lost = False
            self.get_logger().info('commands are back')
        self.command_age.add(age)
        if age > self._max_age_ns:
            self.stale_steps += 1
            self._throttle.warn('stale', f'applied a command computed from a state '
                                f'{age * 1e-6:.1f} ms old (max_command_age = '
                                f'{self.node_config.max_command_age * 1e3:.1f} ms); '
                                f'{self.stale_steps} stale step(s) so far')
        return self._held

    def _advance(self, tau) -> None:
        if self.done.done():
            return
        self._awaiting = False
        if self._finished:
            self.get_logger().info(
                f'stop_after = {self.node_config.stop_after} s of simulated time reached after '
                f'{self.steps} steps; {self.rejected_commands} command(s) rejected, '
                f'{self.command_timeouts} timeout(s)')
            self._stop_reason = 'stop_after'
            self._log_summary()
            self.done.set_result(EXIT_OK)
            return
        if self._reset_requested:
            self._reset_requested = False
            self._time_offset_ns = self._stamp_ns + self._period_ns
            state = self.sim.reset()
            self.get_logger().info('reset to the initial state')
        else:
            try:
                state = self.sim.step(tau)
            except SimulationDiverged as exc:
                last = exc.last_good_state
                self.get_logger().error(
                    f'{exc}; stopping. Last good state: q = {last.q.tolist()}, '
                    f'v = {last.v.tolist()}')
                self.exit_code = EXIT_DIVERGED
                self._stop_reason = 'diverged'
                self._log_summary()
                self.done.set_result(EXIT_DIVERGED)
                return
        self.steps += 1
        self._publish_state(state)

    def _publish_state(self, state) -> None:
        ns = self._time_offset_ns + int(round(state.t * 1e9))
        self._stamp_ns = ns
        sec, nanosec = divmod(ns, 1_000_000_000)
        forces = state.contact_forces           # one world [x, y, z] row per contact frame, N
        for pub, msg, force in zip(self._pub_contacts, self._msg_contacts, forces):
            stamp = msg.header.stamp                  # messages and stamps are reused
            stamp.sec, stamp.nanosec = sec, nanosec
            f = msg.wrench.force
            f.x, f.y, f.z = float(force[0]), float(force[1]), float(force[2])
            pub.publish(msg)
        joints = self._msg_joints
        joints.header.stamp.sec, joints.header.stamp.nanosec = sec, nanosec
        joints.position = array.array('d', state.q)
        joints.velocity = array.array('d', state.v)
        effort = self._effort
        for slot, value in zip(self._effort_slots, state.tau_applied):
            effort[slot] = value
        joints.effort = effort
        stop_after = self.node_config.stop_after
        # the last state (t >= stop_after) is still answered before the run ends
        self._finished = stop_after > 0.0 and ns >= int(round(stop_after * 1e9)) - 1000
        self._awaiting = self._lockstep
        now = time.monotonic()
        self._published_wall = now
        self._pub_joints.publish(joints)
        slot = (ns // self._period_ns) % _ROUND_TRIP_RING
        self._ring_stamp[slot] = ns
        self._ring_wall[slot] = int(now * 1e9)
        clock = self._msg_clock.clock
        clock.sec, clock.nanosec = sec, nanosec
        self._pub_clock.publish(self._msg_clock)

    # -- the end --------------------------------------------------------------------------------

    def summary(self) -> dict:
        """
        Return the counters of the exchange (the ``dodo exchange:`` line).

        Ages and round trips in ms.
        """
        def ms(histogram, p=None):
            value = histogram.max if p is None else histogram.percentile(p)
            return None if value is None else value * 1e-6

        return {
            'sim_time_s': self._stamp_ns * 1e-9, 'stop_reason': self._stop_reason,
            'mode': self.config.mode, 'steps': self.steps,
            'zero_torque_steps': self.zero_torque_steps, 'timeouts': self.command_timeouts,
            'rejected': self.rejected_commands, 'foreign': self.foreign_commands,
            'late': self.late_commands, 'unstamped': self.unstamped_commands,
            'command_publishers': self.command_publishers,
            'age_ms_p50': ms(self.command_age, 50), 'age_ms_p99': ms(self.command_age, 99),
            'age_ms_max': ms(self.command_age), 'stale_steps': self.stale_steps,
            'max_command_age_ms': self.node_config.max_command_age * 1e3,
            'round_trip_ms_p50': ms(self.round_trip, 50),
            'round_trip_ms_p99': ms(self.round_trip, 99),
            'round_trip_ms_max': ms(self.round_trip),
            'overruns': self.overruns,
            'tick_late_ms_p99': ms(self.tick_lateness, 99),
            'tick_late_ms_max': ms(self.tick_lateness),
        }

    def _log_summary(self) -> None:
        if self._summary_logged or not self._started:
            return
        self._summary_logged = True
        self.get_logger().info(runtime.format_summary('exchange', self.summary()))

    def destroy_node(self):
        self._log_summary()
        return super().destroy_node()


def main(args=None) -> int:
    return runtime.run_node(SimulatorNode, 'simulator', args)


if __name__ == '__main__':
    sys.exit(main())
