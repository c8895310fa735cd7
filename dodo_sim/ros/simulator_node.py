# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
``simulator`` ROS 2 node: a thin adapter around :class:`dodo_sim.simulator.Simulator`.

Robot-agnostic: the joints, actuated joints and contact frames are the simulator's
(``sim.joint_names``, ``sim.actuated_joint_names``, ``sim.contact_frames``).

Publishes (every control period, in this order, all with the same sim-time stamp): one
geometry_msgs/WrenchStamped per contact frame on ``/<frame>_contact`` (the force on that frame,
N, zero in flight, ``frame_id`` ``<frame>_contact``: a frame at the link's origin with the world's
axes, :func:`dodo_sim.ros.contract.contact_frame_id`; the hopper: ``/foot_contact``),
``/joint_states`` (sensor_msgs/JointState: every 1-DoF joint's position, velocity, and effort =
the torque applied in the step that led to this state, zero for unactuated joints; a floating
base's free flyer is on ``odom`` instead), ``odom`` (nav_msgs/Odometry, ground truth of the base,
:mod:`dodo_sim.ros.odometry`; every ``odom_period`` of the stamps), with ``collisions: links``
one WrenchStamped per collision link on ``/<link>_contact`` (:mod:`dodo_sim.ros.link_contacts`;
every ``link_contact_period`` while the link touches the terrain, and its zero once when it lets
go) and then ``/clock``
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
  it. Simulated time (and ``/clock``) *pause* while it waits, however long: a lockstep run is a
  function of its inputs, never of machine load. Commands are paired by stamp, never by arrival
  order: a command with another stamp (a stray or duplicate publisher) never answers the state.
  The first publisher whose command answers a state is *the controller*; valid commands from any
  other publisher are counted as foreign and ignored. The very first state is warned about after
  ``startup_timeout``, every later one after ``command_timeout`` wall-clock seconds (throttled,
  with how long it has waited; counted in ``waits``). The controller is declared lost — the run
  ends with ``stop_reason=controller_lost``, exit code 1, a line naming the controller and why —
  only when its publisher has left the graph or the wait passed ``controller_lost_timeout``
  (``inf``: never). (``dodo hop`` also ends the run when the controller's process is gone.)
  Zero-torque stepping is a realtime/hardware behaviour only.
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
publishers seen, the controller's node, lockstep waits past ``command_timeout`` and the
longest wait (s), the applied command age (p50/p99/max, ms), the wall-clock round trip from a
state's publication to its answer (p50/p99/max, ms), stale steps, overruns, and the physics
steps whose contact solve missed its tolerance or that the event integrator left to
time-stepping (``unconverged_steps``, ``accumulation_steps``; also on /diagnostics).

Every parameter comes from :class:`SimConfig` and
:class:`dodo_sim.ros.node_config.SimulatorNodeConfig`.

The messages it fills (:mod:`dodo_sim.ros.state_messages`), the command checks
(:mod:`dodo_sim.ros.joint_commands`, :mod:`dodo_sim.ros.ros2_control`) and the raw input reading
(:mod:`dodo_sim.ros.raw_messages`) are modules of their own. The rest is one unit at this length:
the lockstep and realtime exchanges, the controller binding and the counters of the summary are
one state machine driven by this node's subscriptions and timers, each callback moving it a step.
"""
from __future__ import annotations

import array
import json
import math
import sys
import time

from dodo_sim.paths import default_urdf_path
from dodo_sim.ros import contract, diagnostics, node_config, runtime
from dodo_sim.ros.cdr import JointStateReader, JointStateView, JointStateWriter
from dodo_sim.ros.joint_commands import actuated_efforts
from dodo_sim.ros.link_contacts import LinkContactWrenches
from dodo_sim.ros.odometry import BaseOdometer
from dodo_sim.ros.params import config_from_parameters, declare_config_parameters
from dodo_sim.ros.raw_messages import read_joint_state
from dodo_sim.ros.ros2_control import topic_based_efforts
from dodo_sim.ros.runtime import (EXIT_DIVERGED, EXIT_OK, Histogram, publisher_gid, WarnThrottle,
                                  with_message_info)
from dodo_sim.ros.state_messages import (contact_wrench_message, fill_odometry, fill_wrench,
                                         odometry_message)
from dodo_sim.simulator import SimConfig, SimulationDiverged, Simulator
from geometry_msgs.msg import Vector3, WrenchStamped
from nav_msgs.msg import Odometry
from rclpy.clock import Clock, ClockType
from rclpy.node import Node
from rclpy.parameter import Parameter
from rclpy.serialization import serialize_message
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
            self, SimConfig, read_only=list(SimConfig.__dataclass_fields__))
        node_values = declare_config_parameters(
            self, node_config.SimulatorNodeConfig,
            read_only=list(node_config.SimulatorNodeConfig.__dataclass_fields__))
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
        # a floating base's free flyer (7 coordinates, 6 velocities) goes to odom, not to
        # /joint_states (JointState carries 1-DoF joints only, as robot_state_publisher reads it)
        self._q0, self._v0 = (7, 6) if self.sim.leg.floating_base else (0, 0)
        if self._q0:
            self.joint_names = self.joint_names[1:]
        self._odometer = BaseOdometer(self.sim.leg)
        # collisions='links': a wrench per colliding link on /<link>_contact (feet unchanged)
        self._link_wrenches = LinkContactWrenches(self.sim.robot, skip=self.contact_frames)
        if not (len(state.q) - self._q0 == len(state.v) - self._v0 == len(self.joint_names)):
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
        self.command_timeouts = 0       # realtime: times the held command timed out
        self.waits = 0                  # lockstep: waits for an answer past command_timeout
        self.longest_wait_s = 0.0       # lockstep: the longest wait for an answer, wall s
        self.stale_steps = 0            # applied commands older than max_command_age
        self.overruns = 0               # realtime: ticks that dropped steps
        self.command_publishers = 0     # most publishers seen on one command topic
        self.duplicate_controller = False  # a second node with the controller's name sent commands
        period_ns = int(round(self.config.control_period * 1e9))
        self.command_age = Histogram(_AGE_BIN_NS, _AGE_BINS)       # ns, per applied step
        self.round_trip = Histogram(_WALL_BIN_NS, _WALL_BINS)      # ns, state out -> answer in
        self.tick_lateness = Histogram(_WALL_BIN_NS, _WALL_BINS)   # ns, realtime timer ticks

        self._period_ns = period_ns
        # odom every odom_period of simulated time (0: every state), scheduled on the stamps
        self._odom_every = max(1, int(round(self.node_config.odom_period
                                            / self.config.control_period)))
        self._link_contact_every = max(1, int(round(self.node_config.link_contact_period
                                                    / self.config.control_period)))
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
        self._controller_node = ''          # its node's full name (for the reports)
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
        self._controller_lost = False       # realtime: the held command timed out
        self._answered_once = False         # lockstep: the first state waits startup_timeout
        self._waiting_long = False          # lockstep: this wait passed its warning time
        self._next_graph_look = 0.0         # lockstep: next look for the controller (wall s)
        self._lost_timeout = self.node_config.controller_lost_timeout
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
        self._pub_odom = self.create_publisher(Odometry, contract.ODOM, stream_qos)
        self._pub_link_contacts = [
            self.create_publisher(WrenchStamped, contract.contact_topic(link), stream_qos)
            for link in self._link_wrenches.links]
        # ros2_control's topic-based system: its command and state topics instead of ours
        self._ros2_control = self.node_config.command_convention == 'ros2_control'
        self._pub_joints = self.create_publisher(
            JointState, contract.ROS2_CONTROL_STATES if self._ros2_control
            else contract.JOINT_STATES, stream_qos)
        command_qos = contract.command_qos() if self._lockstep else contract.input_qos()
        if self._ros2_control:
            command_qos = contract.ros2_control_command_qos()
        # raw: commands are read from their CDR bytes (dodo_sim.ros.cdr), not built into
        # message objects by rclpy (nested constructors per message, at 1 kHz)
        self._command_reader = JointStateReader()
        self._sub_joint_commands = self.create_subscription(
            JointState, contract.ROS2_CONTROL_COMMANDS if self._ros2_control
            else contract.JOINT_COMMANDS, with_message_info(self._on_raw_joint_command),
            command_qos, raw=True)
        # the unstamped topic: always read in realtime; in lockstep only while someone besides
        # the controller publishes on it (to reject and count what strays send): reading the
        # controller's own copy of every command would cost both nodes a message per step
        self._command_qos = command_qos
        self._sub_effort_commands = None
        if not self._lockstep and not self._ros2_control:
            self._read_effort_commands(True)
        self._sub_push = self.create_subscription(Vector3, contract.PUSH, self._on_push, 10)
        self._sub_force = self.create_subscription(Vector3, contract.FORCE, self._on_force, 10)
        self._srv_reset = self.create_service(Trigger, contract.RESET_SERVICE, self._on_reset)
        # the start waits for a recorder to hold every node's configuration (when recording)
        self._recorded_nodes: set = set()
        self._sub_configurations = self.create_subscription(
            String, contract.RECORDED_CONFIGURATIONS, self._on_recorded_configurations,
            contract.latched_qos())
        # which publisher's commands are applied (latched): the recorder keeps them apart
        self._pub_applied = self.create_publisher(String, contract.APPLIED_CONTROLLER,
                                                  contract.latched_qos())
        if self.node_config.publish_robot_description:
            self._pub_description = self.create_publisher(String, contract.ROBOT_DESCRIPTION,
                                                          contract.latched_qos())
            self._pub_description.publish(String(data=self.sim.leg.urdf_xml))

        # reusable messages (only the numbers change per step)
        self._msg_clock = ClockMsg()
        self._msg_contacts = [contact_wrench_message(frame) for frame in self.contact_frames]
        self._msg_link_contacts = [contact_wrench_message(link)
                                   for link in self._link_wrenches.links]
        if self._link_wrenches.skipped:
            self.get_logger().info(
                f'link collisions of the contact frame(s) {list(self._link_wrenches.skipped)} '
                f'are not published (their /<frame>_contact topic is the point contact)')
        self._msg_odom = odometry_message(self._odometer.frame_id, self._odometer.child_frame_id)
        self._msg_joints = JointState()
        self._msg_joints.name = list(self.joint_names)
        self._effort = array.array('d', bytes(8 * len(self.joint_names)))
        # /joint_states is published as CDR bytes refilled in place (dodo_sim.ros.cdr): rclpy
        # would convert the whole message object, joint names included, every step
        n = len(self.joint_names)
        self._msg_joints.position = self._msg_joints.velocity = self._effort
        self._msg_joints.effort = self._effort
        self._joints_writer = JointStateWriter(serialize_message(self._msg_joints), (n, n, n))

        # /diagnostics (diagnostic_updater style, off the step path): the real-time factor is
        # measured between two publications
        self._diag_mark = (time.monotonic(), 0)       # (wall s, stamp ns)
        self._diag_counts = (0, 0)                    # (rejected, foreign) at the last one
        self.diagnostics = diagnostics.Updater(self, 'simulation',
                                               self.node_config.diagnostics_period)
        self.diagnostics.add('exchange', self._diagnose)

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
        if self._lockstep and self._sub_joint_commands.get_publisher_count() < 1:
            return False
        return self._configurations_recorded()

    def _on_recorded_configurations(self, msg: String) -> None:
        try:
            self._recorded_nodes = set(json.loads(msg.data))
        except ValueError:
            self._recorded_nodes = set()

    def _configurations_recorded(self) -> bool:
        """
        Check that a recorder holds the run's configuration.

        A recorder on the graph holds this node's and the command publishers' parameters (or no
        recorder announces them): the bag cannot miss the run's configuration.
        """
        if self.count_publishers(contract.RECORDED_CONFIGURATIONS) == 0:
            return True
        need = {self.get_fully_qualified_name()} | set(
            runtime.publisher_nodes(self, contract.JOINT_COMMANDS))
        return need <= self._recorded_nodes

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
                f'starting after {waited:.1f} s without all subscribers/controller matched'
                + ('' if self._configurations_recorded() else
                   " and before the recorder held every node's configuration"))
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

    def _ros2_control_torques(self, msg: JointState):
        """
        Return the torques of a topic-based ros2_control command, or None (rejected).

        :func:`dodo_sim.ros.ros2_control.topic_based_efforts`.
        """
        torques, why = topic_based_efforts(msg.name, msg.effort, msg.position, msg.velocity,
                                           self.joint_names, self._actuated_list)
        if torques is None:
            self._reject(f'{contract.ROS2_CONTROL_COMMANDS} command', why)
        return torques

    def _command_torques(self, names, effort, what=f'{contract.JOINT_COMMANDS} command'):
        """Return the torques of a JointState command in actuated-joint order, or None."""
        torques, why = actuated_efforts(names, effort, self._actuated_list, self._actuated_index)
        if torques is None:
            self._reject(what, why)
        return torques

    def _on_raw_joint_command(self, data: bytes, info) -> None:
        ns, names, position, velocity, effort = read_joint_state(self._command_reader, data)
        sec, nanosec = divmod(ns, 1_000_000_000)
        self._on_joint_command(JointStateView(ns, sec, nanosec, names, position, velocity,
                                              effort), info)

    def _on_joint_command(self, msg: JointState, info) -> None:
        if self._ros2_control:
            torques = self._ros2_control_torques(msg)
        else:
            torques = self._command_torques(msg.name, msg.effort)
        if torques is None:
            return
        now = time.monotonic()
        stamp = msg.header.stamp
        stamp_ns = stamp.sec * 1_000_000_000 + stamp.nanosec
        gid = publisher_gid(info)
        if self._lockstep:
            # ros2_control carries no state stamp, only the controller_manager's now(): a
            # command answers the awaited state when it was written at or after the state's
            # time (its clock is our /clock, published after the state; docs/ros2_control.md)
            answers = (stamp_ns >= self._stamp_ns if self._ros2_control
                       else stamp_ns == self._stamp_ns)
            if not (self._awaiting and answers):
                if gid != self._controller_gid:
                    self._foreign(gid, stamp_ns)
                    return
                self.late_commands += 1           # answers no awaited state: never applied
                return
            if gid != self._controller_gid:
                if self._controller_gid:
                    self._foreign(gid, stamp_ns)  # a second controller: it never answers
                    return
                self._bind(gid)
            self._record_round_trip(stamp_ns, now)
            if not self._finished:
                self.command_age.add(0)     # it answers the state it is applied to: age 0
            self._answered_once = True
            if self._waiting_long:
                self._waiting_long = False
                self.get_logger().info(
                    f'the answer to the state of t = {self._stamp_ns * 1e-9:.3f} s came after '
                    f'{now - self._published_wall:.2f} s: simulated time resumes')
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
        if self._held_stamp_ns is not None and (
                stamp_ns < self._held_stamp_ns if self._ros2_control
                else stamp_ns <= self._held_stamp_ns):
            # ros2_control: several updates of the controller_manager in one period carry the
            # same now(); the newest of them is held
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
        self._controller_node = self._publisher_node(gid)
        self._foreign_gids.discard(gid)
        if previous:
            self.get_logger().warning(f'commands now come from {self._publisher_name(gid)} '
                                      f'(the previous controller was lost)')
        else:
            self.get_logger().info(f'controller: {self._publisher_name(gid)}')
        self._pub_applied.publish(String(data=json.dumps(
            {'node': self._controller_node, 'gid': gid.hex(), 'since_ns': self._stamp_ns})))

    def _foreign(self, gid: bytes, stamp_ns: int) -> None:
        self.foreign_commands += 1
        if gid not in self._foreign_gids:
            self._foreign_gids.add(gid)
            self.diagnostics.force_update()
            name = self._publisher_node(gid)
            if name and name == self._controller_node:
                self.duplicate_controller = True
                self.get_logger().warning(
                    f'a second node named {name} sends commands (publisher {gid.hex()}; the '
                    f'controller is publisher {self._controller_gid.hex()}): two controllers '
                    f'under one name. Its commands are ignored and recorded apart '
                    f"({contract.IGNORED_COMMANDS} in a bag); the run is the first one's")
            else:
                self.get_logger().warning(
                    f'commands from a second publisher, {self._publisher_name(gid)} (stamp '
                    f'{stamp_ns * 1e-9:.6f} s), ignored: commands are taken from the '
                    f'controller {self._publisher_name(self._controller_gid)} only')
        else:
            self._throttle.warn('foreign', f'{self.foreign_commands} command(s) from publishers '
                                f'other than the controller ignored')

    def _publisher_name(self, gid: bytes) -> str:
        if not gid:
            return '(none yet)'
        node = self._publisher_node(gid)
        return f'node {node}' if node else f'publisher {gid.hex()}'

    def _publisher_node(self, gid: bytes) -> str:
        """
        Return the full name of the node whose publisher on a command topic has this id.

        Returns '' if it is not in the graph.
        """
        for topic in self._command_topics():
            for endpoint in self.get_publishers_info_by_topic(topic):
                if runtime.endpoint_gid(endpoint)[:len(gid)] == gid:
                    return runtime.endpoint_node(endpoint)
        return ''

    def _command_topics(self) -> tuple:
        if self._ros2_control:
            return (contract.ROS2_CONTROL_COMMANDS,)
        return (contract.JOINT_COMMANDS, contract.EFFORT_COMMANDS)

    def _read_effort_commands(self, read: bool) -> None:
        if read and self._sub_effort_commands is None:
            self._sub_effort_commands = self.create_subscription(
                Float64MultiArray, contract.EFFORT_COMMANDS, self._on_effort_command,
                self._command_qos)
        elif not read and self._sub_effort_commands is not None:
            self.destroy_subscription(self._sub_effort_commands)
            self._sub_effort_commands = None

    def _check_publishers(self) -> None:
        if self._lockstep and not self._ros2_control:
            self._read_effort_commands(self.count_publishers(contract.EFFORT_COMMANDS) > 1)
        for topic in self._command_topics():
            count = self.count_publishers(topic)
            if count > self.command_publishers:
                self.command_publishers = count
                if count > 1:
                    nodes = runtime.publisher_nodes(self, topic)
                    twice = sorted({n for n in nodes if nodes.count(n) > 1})
                    self.get_logger().warning(
                        f'{count} publishers on {topic}: {nodes}; '
                        + (f'two nodes named {twice[0]}! ' if twice else 'a second controller? ')
                        + 'Only the controller that answers states is used')

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
        """
        Lockstep: while a state waits for its answer.

        Warn (throttled) past command_timeout (startup_timeout for the first state) and end the run
        when the controller is lost. Simulated time never moves here.
        """
        if not self._awaiting or self.done.done():
            return
        now = time.monotonic()
        silent = now - self._published_wall
        self.longest_wait_s = max(self.longest_wait_s, silent)
        warn_after = (self.config.command_timeout if self._answered_once
                      else self.node_config.startup_timeout)
        if silent <= warn_after:
            return
        if not self._waiting_long:
            self._waiting_long = True
            self.waits += 1
            self.diagnostics.force_update()     # a paused graph shows at once
        who = ('a controller' if not self._controller_gid else 'the controller '
               + (self._controller_node or self._publisher_name(self._controller_gid)))
        self._throttle.warn('wait', (
            f'simulated time paused at t = {self._stamp_ns * 1e-9:.3f} s: no command answering '
            f'that state for {silent:.2f} s (warning after '
            f'{"command_timeout" if self._answered_once else "startup_timeout"} = '
            f'{warn_after:g} s); waiting for {who} (declared lost when it leaves the graph or '
            f'after controller_lost_timeout = {self._lost_timeout:g} s)'))
        why = None
        if silent > self._lost_timeout:
            why = (f'no answer for {silent:.1f} s (controller_lost_timeout = '
                   f'{self._lost_timeout:g} s)')
        elif self._controller_gid and now >= self._next_graph_look:
            self._next_graph_look = now + 0.2
            if not self._publisher_node(self._controller_gid):
                why = f'its publisher on {contract.JOINT_COMMANDS} left the graph'
        if why is not None:
            self._controller_lost_end(why)

    def _controller_lost_end(self, why: str) -> None:
        name = self._controller_node or '(no controller answered yet)'
        self.get_logger().error(
            f'controller lost: {name}: {why}; the state of t = {self._stamp_ns * 1e-9:.3f} s '
            f'was never answered. Ending the run after {self.steps} steps (exit code '
            f'{runtime.EXIT_FAILED})')
        self._stop_reason = 'controller_lost'
        self.exit_code = runtime.EXIT_FAILED
        self._awaiting = False
        self.diagnostics.force_update()
        self._log_summary()
        self.done.set_result(runtime.EXIT_FAILED)

    def _on_tick(self) -> None:
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
            fill_wrench(msg, sec, nanosec, force)     # messages and stamps are reused
            pub.publish(msg)
        effort = self._effort
        for slot, value in zip(self._effort_slots, state.tau_applied):
            effort[slot] = value
        joints = self._joints_writer.write(ns, state.q[self._q0:].tolist(),
                                           state.v[self._v0:].tolist(), effort)
        if (ns // self._period_ns) % self._odom_every == 0:     # on the state stamps
            self._publish_odometry(state, sec, nanosec)
        if self._pub_link_contacts and (ns // self._period_ns) % self._link_contact_every == 0:
            self._publish_link_contacts(state, sec, nanosec)
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

    def _publish_link_contacts(self, state, sec: int, nanosec: int) -> None:
        # only while a link touches, and its zero once when it lets go (link_contacts.py)
        for index, force, moment in self._link_wrenches.due(state.q, state.link_contacts):
            msg = self._msg_link_contacts[index]
            fill_wrench(msg, sec, nanosec, force, moment)
            self._pub_link_contacts[index].publish(msg)

    def _publish_odometry(self, state, sec: int, nanosec: int) -> None:
        fill_odometry(self._msg_odom, sec, nanosec, self._odometer(state.q, state.v))
        self._pub_odom.publish(self._msg_odom)

    # -- health -------------------------------------------------------------------------------

    def _diagnose(self) -> tuple:
        """Return the 'exchange' status on /diagnostics: (level, message, values)."""
        now = time.monotonic()
        wall0, stamp0 = self._diag_mark
        rtf = ((self._stamp_ns - stamp0) * 1e-9 / (now - wall0)
               if self._started and now > wall0 else None)
        self._diag_mark = (now, self._stamp_ns)
        rejected, foreign = self._diag_counts
        self._diag_counts = (self.rejected_commands, self.foreign_commands)
        waiting = (now - self._published_wall
                   if self._lockstep and self._awaiting and self._started else 0.0)
        level, problems = diagnostics.OK, []
        if self._stop_reason == 'controller_lost':
            level, problems = diagnostics.ERROR, ['controller lost']
        elif not self._started:
            problems.append('waiting for subscribers / the controller to start')
        if waiting > self.config.command_timeout and not self.done.done():
            level = diagnostics.WARN
            problems.append(f'paused {waiting:.1f} s waiting for the controller')
        if self._controller_lost and not self._lockstep:
            level = diagnostics.WARN
            problems.append('no fresh command: zero torque')
        if self.rejected_commands > rejected:
            level = max(level, diagnostics.WARN)
            problems.append(f'{self.rejected_commands - rejected} command(s) rejected')
        if self.foreign_commands > foreign:
            level = max(level, diagnostics.WARN)
            problems.append(f'{self.foreign_commands - foreign} foreign command(s) ignored')
        summary = self.summary()
        values = {'mode': self.config.mode, 'real_time_factor': rtf,
                  'sim_time_s': self._stamp_ns * 1e-9, 'waiting_s': waiting}
        values.update({k: summary[k] for k in (
            'steps', 'waits', 'wait_s_max', 'timeouts', 'zero_torque_steps', 'rejected',
            'foreign', 'late', 'unstamped', 'command_publishers', 'controller', 'stale_steps',
            'age_ms_p99', 'round_trip_ms_p99', 'overruns', 'unconverged_steps',
            'accumulation_steps', 'stop_reason')})
        message = '; '.join(problems) or (
            f'{self.config.mode}, real-time factor {rtf:.2f}' if rtf is not None else 'ok')
        return level, message, values

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
            'controller': self._controller_node or None,
            'duplicate_controller': self.duplicate_controller,
            'waits': self.waits, 'wait_s_max': self.longest_wait_s,
            'age_ms_p50': ms(self.command_age, 50), 'age_ms_p99': ms(self.command_age, 99),
            'age_ms_max': ms(self.command_age), 'stale_steps': self.stale_steps,
            'max_command_age_ms': self.node_config.max_command_age * 1e3,
            'round_trip_ms_p50': ms(self.round_trip, 50),
            'round_trip_ms_p99': ms(self.round_trip, 99),
            'round_trip_ms_max': ms(self.round_trip),
            'overruns': self.overruns,
            # physics steps whose contact solve missed its tolerance; event steps taken by
            # time-stepping at an accumulation of events (SimConfig.event_accumulation)
            'unconverged_steps': self.sim.unconverged_steps,
            'accumulation_steps': self.sim.accumulation_steps,
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
