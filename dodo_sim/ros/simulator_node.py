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
stamps). ``/joint_states`` and the contact topics carry what the sensors read (``SimConfig``
noise, bias, latency, resolution: :mod:`dodo_sim.physics.sensors`, exact by default); ``imu``
(an IMU's reading) and, for inexact sensors, ``ground_truth/...`` come after ``/joint_states``
(:mod:`dodo_sim.ros.sensor_output`). The simulator is the clock source and does not follow
``/clock`` itself:
``use_sim_time`` is forced to false for this node (it only uses steady wall-clock timers).
``/robot_description`` (std_msgs/String, transient local) once, unless
``publish_robot_description`` is false (robot_state_publisher does it). ``/simulator/controller``
(std_msgs/String, transient local): the controller it bound (docs/bags.md).

Subscribes: ``/joint_commands`` (sensor_msgs/JointState: ``name`` = the actuated joints, any
order, ``effort`` = N*m, ``header.stamp`` = stamp of the state the command answers),
``/effort_controller/commands`` (std_msgs/Float64MultiArray, actuated joints in order, N*m:
applied in realtime mode when no stamped commands come; in lockstep read only while a publisher
besides the controller is on it — checked every ``graph_check_period`` — and then counted and
never applied), ``/simulator/push`` (geometry_msgs/Vector3: an impulse on the base, x and z in N*s,
applied at the start of the next step), ``/simulator/force`` (geometry_msgs/Vector3: a constant
force on the base, x and z in N, until the next message). Service ``/simulator/reset``
(std_srvs/Trigger): back to ``initial_q`` / ``initial_v`` at the next step boundary (a full reset,
as ResetSimulation's SCOPE_ALL); the published clock keeps increasing.

Driving the simulation (docs/simulation_interfaces.md): the simulation_interfaces services and
action (``simulator/reset_simulation``, ``simulator/step_simulation``, ...), the companion
``simulator/set_joint_state``, the events on ``simulator/events`` and the runtime parameters are
:class:`dodo_sim.ros.sim_services.SimulationServices`; their rules (pause, step, reset, set
state) are :mod:`dodo_sim.ros.sim_control`, asked at every step boundary what to do: step, hold
(paused), publish a changed state, or end (quitting).

The exchange — which command answers which state, the one controller, what is refused and
counted, lockstep waits and the lost controller, realtime zero-order hold and catch-up — is
:mod:`dodo_sim.ros.exchange` (no rclpy; docs/ros_contract.md, "Timing and the command exchange"):
each command callback, timer tick and watchdog tick of this node is one call to it, and its
events are said in the log by :class:`dodo_sim.ros.exchange_reports.ExchangeReports`. This node
decodes the commands (:mod:`dodo_sim.ros.joint_commands`, :mod:`dodo_sim.ros.ros2_control`,
:mod:`dodo_sim.ros.raw_messages`), steps the physics with what the exchange says, publishes the
states, and at its end logs one summary line, ``dodo exchange: key=value ...``
(:meth:`SimulatorNode.summary`: the exchange's counters and timings, the command publishers seen,
and the physics steps whose contact solve missed its tolerance or that the event integrator left
to time-stepping, ``unconverged_steps``, ``accumulation_steps``; also on /diagnostics).

Every parameter comes from :class:`SimConfig` and
:class:`dodo_sim.ros.node_config.SimulatorNodeConfig`. One module at this length: the start gate,
the stepping and the state output share the node's exchange and its run's end.
"""
from __future__ import annotations

import array
import json
import sys
import time

from dodo_sim import stamps
from dodo_sim.paths import default_urdf_path
from dodo_sim.physics.sim_config import STARTUP_ONLY
from dodo_sim.ros import contract, diagnostics, node_config, runtime
from dodo_sim.ros.cdr import JointStateReader, JointStateWriter
from dodo_sim.ros.exchange import (ANSWER, LAST, LockstepExchange, LOST, RealtimeExchange,
                                   TICK, WAITING)
from dodo_sim.ros.exchange_reports import ExchangeReports, hosted_node_name, publisher_node
from dodo_sim.ros.joint_commands import actuated_efforts, unstamped_efforts
from dodo_sim.ros.link_contacts import LinkContactWrenches
from dodo_sim.ros.odometry import BaseOdometer
from dodo_sim.ros.params import config_from_parameters, declare_config_parameters
from dodo_sim.ros.raw_messages import read_joint_state
from dodo_sim.ros.ros2_control import (CLOCK_TICK_S, description_for_controller_manager,
                                       topic_based_efforts)
from dodo_sim.ros.runtime import (endpoint_facts, EXIT_DIVERGED, EXIT_OK, publisher_gid,
                                  WarnThrottle, with_message_info)
from dodo_sim.ros.sensor_output import SensorOutput
from dodo_sim.ros.sim_control import HOLD, PUBLISH, QUIT
from dodo_sim.ros.sim_services import SimulationServices
from dodo_sim.ros.sim_values import SCOPE_ALL
from dodo_sim.ros.start_gate import (CONVENTION_NEEDS, GraphFacts, StartGate, TopicFacts,
                                     waiting_text)
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

#: Wall-clock s after the node is up before the start gate first names what it waits for:
#: discovery on one machine completes well within it, so the first line is not noise.
FIRST_GATE_REPORT_S = 1.0
#: What a silent controller is told to check when its commands are stamped far ahead of the
#: simulated time (a controller, or a controller_manager, on the system clock).
FAR_AHEAD_HINT = (' — stamped with the system clock? A controller (a controller_manager too) '
                  'must run with use_sim_time: true beside the simulator')


class StateOutput:
    """
    The per-step publishers of a state and their messages, built once and refilled.

    Contacts, ``/joint_states`` (CDR bytes refilled in place, :mod:`dodo_sim.ros.cdr`: rclpy
    would convert the whole message object, names included, every step), ``odom`` and the link
    contacts at their rates on the stamps, then ``/clock``.
    """

    def __init__(self, node: Node, sim: Simulator, joint_names: tuple, states_topic: str,
                 odom_every: int, link_contact_every: int, period_ns: int):
        qos = contract.stream_qos()
        self.clock = node.create_publisher(ClockMsg, contract.CLOCK, qos)
        self.contacts = [node.create_publisher(WrenchStamped, contract.contact_topic(frame), qos)
                         for frame in sim.contact_frames]
        self.odom = node.create_publisher(Odometry, contract.ODOM, qos)
        self._link_wrenches = LinkContactWrenches(sim.robot, skip=tuple(sim.contact_frames))
        self.link_contacts = [
            node.create_publisher(WrenchStamped, contract.contact_topic(link), qos)
            for link in self._link_wrenches.links]
        self.joints = node.create_publisher(JointState, states_topic, qos)
        self._msg_clock = ClockMsg()
        self._msg_contacts = [contact_wrench_message(frame) for frame in sim.contact_frames]
        self._msg_link_contacts = [contact_wrench_message(link)
                                   for link in self._link_wrenches.links]
        if self._link_wrenches.skipped:
            node.get_logger().info(
                f'link collisions of the contact frame(s) {list(self._link_wrenches.skipped)} '
                f'are not published (their /<frame>_contact topic is the point contact)')
        self._odometer = BaseOdometer(sim.leg)
        self._msg_odom = odometry_message(self._odometer.frame_id, self._odometer.child_frame_id)
        # a floating base's free flyer (7 coordinates, 6 velocities) goes to odom, not to
        # /joint_states (JointState carries 1-DoF joints only, as robot_state_publisher reads it)
        self._q0, self._v0 = (7, 6) if sim.leg.floating_base else (0, 0)
        n = len(joint_names)
        self._effort = array.array('d', bytes(8 * n))
        self._effort_slots = [joint_names.index(j) for j in sim.actuated_joint_names]
        template = JointState(name=list(joint_names))
        template.position = template.velocity = template.effort = self._effort
        self._writer = JointStateWriter(serialize_message(template), (n, n, n))
        self._odom_every, self._link_every = odom_every, link_contact_every
        self._period_ns = period_ns

    def contacts_and_joints(self, state, ns: int, truth=None) -> bytes:
        """
        Publish the contacts, odom and link contacts of ``state``; return its joint state.

        ``state``: what the sensors read; ``truth`` (default: ``state``): the simulator's state,
        for the ground-truth ``odom`` and the link contacts.
        """
        truth = state if truth is None else truth
        sec, nanosec = stamps.sec_nanosec(ns)
        for pub, msg, force in zip(self.contacts, self._msg_contacts, state.contact_forces):
            fill_wrench(msg, sec, nanosec, force)     # messages and stamps are reused
            pub.publish(msg)
        effort = self._effort
        for slot, value in zip(self._effort_slots, state.tau_applied):
            effort[slot] = value
        joints = self._writer.write(ns, state.q[self._q0:].tolist(),
                                    state.v[self._v0:].tolist(), effort)
        tick = ns // self._period_ns                  # odom and link contacts on the stamps
        if tick % self._odom_every == 0:
            fill_odometry(self._msg_odom, sec, nanosec, self._odometer(truth.q, truth.v))
            self.odom.publish(self._msg_odom)
        if self.link_contacts and tick % self._link_every == 0:
            # only while a link touches, and its zero once when it lets go (link_contacts.py)
            for index, force, moment in self._link_wrenches.due(truth.q, truth.link_contacts):
                msg = self._msg_link_contacts[index]
                fill_wrench(msg, sec, nanosec, force, moment)
                self.link_contacts[index].publish(msg)
        return joints

    def publish_clock(self, ns: int) -> None:
        """Publish ``/clock`` at ``ns`` (last: off the lockstep critical path)."""
        clock = self._msg_clock.clock
        clock.sec, clock.nanosec = stamps.sec_nanosec(ns)
        self.clock.publish(self._msg_clock)


class SimulatorNode(Node):
    """The simulator node (see module docs)."""

    def __init__(self, **node_kwargs):
        super().__init__('simulator', **node_kwargs)
        if self.get_parameter('use_sim_time').value:
            # the clock source must not wait for (or deserialize) its own /clock
            self.set_parameters([Parameter('use_sim_time', Parameter.Type.BOOL, False)])
        # SimConfig's runtime fields are settable (sim_services); the others say why not
        sim_values = declare_config_parameters(self, SimConfig, read_only=list(STARTUP_ONLY),
                                               reasons=STARTUP_ONLY)
        node_fields = list(node_config.SimulatorNodeConfig.__dataclass_fields__)
        node_values = declare_config_parameters(
            self, node_config.SimulatorNodeConfig, read_only=node_fields,
            reasons=dict.fromkeys(node_fields, 'a setting of the simulator node, read at start'))
        # ValueError / ModelError here name the bad parameter; main() turns them into exit 2
        self.config: SimConfig = config_from_parameters(SimConfig, sim_values)
        cfg = self.node_config = config_from_parameters(node_config.SimulatorNodeConfig,
                                                        node_values)
        self.sim = Simulator(cfg.robot_description or default_urdf_path(), self.config)
        self.joint_names = tuple(self.sim.joint_names)[1 if self.sim.leg.floating_base else 0:]
        self._actuated = list(self.sim.actuated_joint_names)
        self._actuated_index = {name: i for i, name in enumerate(self._actuated)}
        state = self.sim.state
        q0, v0 = (7, 6) if self.sim.leg.floating_base else (0, 0)
        if not (len(state.q) - q0 == len(state.v) - v0 == len(self.joint_names)):
            raise ValueError(f'/joint_states needs one coordinate per joint: the model has '
                             f'{len(state.q)} positions and {len(state.v)} velocities for the '
                             f'joints {list(self.joint_names)}')
        self._throttle = WarnThrottle(self.get_logger(), cfg.warn_period)
        self._steady = Clock(clock_type=ClockType.STEADY_TIME)
        self._lockstep = self.config.mode == 'lockstep'
        # ros2_control's topic-based system: its command and state topics instead of ours
        self._ros2_control = cfg.command_convention == 'ros2_control'
        self.command_topics = ((contract.ROS2_CONTROL_COMMANDS,) if self._ros2_control
                               else (contract.JOINT_COMMANDS, contract.EFFORT_COMMANDS))
        self.command_publishers = 0     # most publishers seen on one command topic
        self.rejected_disturbances = 0  # malformed pushes and forces
        self._restart_clock = False     # realtime: the wall clock restarts after a pause
        self._stop_reason = 'shutdown'  # why the run ended: stop_after, diverged,
        # controller_lost or shutdown (a signal / the node destroyed)
        self._summary_logged = False
        self.done = Future()
        self.exit_code = EXIT_OK

        period_ns = stamps.stamp_ns(self.config.control_period)
        self._output = StateOutput(
            self, self.sim, self.joint_names,
            contract.ROS2_CONTROL_STATES if self._ros2_control else contract.JOINT_STATES,
            max(1, int(round(cfg.odom_period / self.config.control_period))),
            max(1, int(round(cfg.link_contact_period / self.config.control_period))),
            period_ns)
        # what the sensors read (noise, latency, IMU: dodo_sim.physics.sensors), imu, ground truth
        self._sensors = SensorOutput(
            self, self.sim, self.joint_names,
            contract.ROS2_CONTROL_STATES if self._ros2_control else contract.JOINT_STATES,
            max(1, int(round(cfg.imu_period / self.config.control_period))), period_ns)
        # which publisher's commands are applied (latched): the recorder keeps them apart
        self._pub_applied = self.create_publisher(String, contract.APPLIED_CONTROLLER,
                                                  contract.latched_qos())
        self.diagnostics = diagnostics.Updater(self, 'simulation', cfg.diagnostics_period)
        self.diagnostics.add('exchange', self._diagnose)
        self.exchange = self._make_exchange(period_ns)
        # pause, step, reset, set state, runtime parameters: simulation_interfaces
        self.sim_services = SimulationServices(
            self, self.sim, self.exchange, lockstep=self._lockstep, act_now=self._act_now,
            ack_timeout_s=self.config.command_timeout)
        self.control = self.sim_services.control

        command_qos = contract.command_qos() if self._lockstep else contract.input_qos()
        if self._ros2_control:
            command_qos = contract.ros2_control_command_qos()
        self._command_qos = command_qos
        # raw: commands are read from their CDR bytes (dodo_sim.ros.cdr), not built into
        # message objects by rclpy (nested constructors per message, at 1 kHz)
        self._command_reader = JointStateReader()
        self._sub_joint_commands = self.create_subscription(
            JointState, self.command_topics[0], with_message_info(self._on_joint_command),
            command_qos, raw=True)
        # the unstamped topic: always read in realtime; in lockstep only while someone besides
        # the controller publishes on it (to reject and count what strays send): reading the
        # controller's own copy of every command would cost both nodes a message per step
        self._sub_effort_commands = None
        if not self._lockstep and not self._ros2_control:
            self._read_effort_commands(True)
        self.create_subscription(Vector3, contract.PUSH, self._on_push, 10)
        self.create_subscription(Vector3, contract.FORCE, self._on_force, 10)
        self.create_service(Trigger, contract.RESET_SERVICE, self._on_reset)
        # the start waits for a recorder to hold every node's configuration (when recording)
        self._recorded_nodes: set = set()
        self.create_subscription(String, contract.RECORDED_CONFIGURATIONS,
                                 self._on_recorded_configurations, contract.latched_qos())
        if cfg.publish_robot_description and self._ros2_control:
            # a controller_manager keeps the first robot_description it gets (docs/ros2_control.md)
            publish, why = description_for_controller_manager(self.sim.leg.urdf_xml)
            if not publish:
                self.get_logger().info(f'not publishing /robot_description under '
                                       f'command_convention: ros2_control: {why}')
        else:
            publish = cfg.publish_robot_description
        if publish:
            self._pub_description = self.create_publisher(String, contract.ROBOT_DESCRIPTION,
                                                          contract.latched_qos())
            self._pub_description.publish(String(data=self.sim.leg.urdf_xml))

        self._diag_mark = (time.monotonic(), 0)       # (wall s, stamp ns): real-time factor
        self._diag_counts = (0, 0)                    # (rejected, foreign) at the last one
        self._startup_wall = time.monotonic()
        self._ready_since = None
        # the start gate: what the exchange needs on the graph (dodo_sim.ros.start_gate)
        self._gate = StartGate(min_subscribers=cfg.min_subscribers, lockstep=self._lockstep,
                               command_reliable=self._lockstep or self._ros2_control,
                               needs=CONVENTION_NEEDS[cfg.command_convention])
        self._next_gate_report = self._startup_wall + FIRST_GATE_REPORT_S
        self._gate_timer = self.create_timer(0.01, self._check_start, clock=self._steady)
        if cfg.graph_check_period > 0.0:
            self.create_timer(cfg.graph_check_period, self._check_publishers, clock=self._steady)
        self.get_logger().info(
            f'simulator ready: {self.config.integrator} integrator, dt = {self.config.dt} s, '
            f'control period = {self.config.control_period} s, mode = {self.config.mode}; '
            f'joints {list(self.joint_names)}, actuated {self._actuated}, contact frames '
            f'{list(self.sim.contact_frames)}; waiting for {cfg.min_subscribers} '
            f'subscriber(s) per state topic'
            + (' and a controller publishing ' + self._sub_joint_commands.topic_name
               if self._lockstep else ''))

    def _make_exchange(self, period_ns: int):
        """Build the exchange core of the mode, its events said by this node's log."""
        cfg = self.node_config
        reports = ExchangeReports(
            self, self._throttle, self.command_topics,
            announce=lambda text: self._pub_applied.publish(String(data=text)),
            far_ahead_hint=FAR_AHEAD_HINT, on_change=self.diagnostics.force_update,
            hosted_node=hosted_node_name(self, cfg.hosted_controller_node))
        stop_after_ns = stamps.stamp_ns(cfg.stop_after) if cfg.stop_after > 0.0 else 0
        if self._lockstep:
            exchange = LockstepExchange(
                period_ns, command_timeout_s=self.config.command_timeout,
                startup_timeout_s=cfg.startup_timeout,
                lost_timeout_s=cfg.controller_lost_timeout, stop_after_ns=stop_after_ns,
                events=reports,
                publisher_present=lambda gid: publisher_node(self, self.command_topics,
                                                             gid) != '',
                clock_tick_s=CLOCK_TICK_S if self._ros2_control else 0.0)
        else:
            exchange = RealtimeExchange(
                period_ns, command_timeout_s=self.config.command_timeout,
                max_command_age_s=cfg.max_command_age, stop_after_ns=stop_after_ns,
                zero=(0.0,) * len(self._actuated), events=reports)
        reports.exchange = exchange
        return exchange

    @property
    def steps(self) -> int:
        """Return the steps taken (resets included)."""
        return self.exchange.counts.steps

    # -- start-up -----------------------------------------------------------------------------

    def _graph_facts(self) -> GraphFacts:
        """Look the graph up for the start gate (:mod:`dodo_sim.ros.start_gate`)."""
        out = self._output
        # a controller_manager reads no contact topic (its topic-based system reads joints only)
        writers = [(out.joints, contract.JOINT_STATES, False),
                   (out.clock, contract.CLOCK, False)] + [
            (pub, contract.contact_topic(frame), self._ros2_control)
            for pub, frame in zip(out.contacts, self.sim.contact_frames)]
        states = tuple(
            TopicFacts(pub.topic_name, contract.topic_type(topic), tuple(
                endpoint_facts(e) for e in self.get_subscriptions_info_by_topic(pub.topic_name)),
                pub.get_subscription_count(), optional=optional)
            for pub, topic, optional in writers)
        reader = self._sub_joint_commands
        command = TopicFacts(reader.topic_name, contract.topic_type(self.command_topics[0]),
                             tuple(endpoint_facts(e) for e in
                                   self.get_publishers_info_by_topic(reader.topic_name)),
                             reader.get_publisher_count())
        return GraphFacts(states=states, command=command, node=self.get_fully_qualified_name(),
                          recorder=self.count_publishers(contract.RECORDED_CONFIGURATIONS) > 0,
                          recorded=frozenset(self._recorded_nodes),
                          sensors=tuple(
                              TopicFacts(pub.topic_name, kind, tuple(
                                  endpoint_facts(e)
                                  for e in self.get_subscriptions_info_by_topic(pub.topic_name)),
                                  pub.get_subscription_count())
                              for pub, kind in zip(self._sensors.publishers,
                                                   self._sensors.type_names())))

    def _on_recorded_configurations(self, msg: String) -> None:
        try:
            nodes = json.loads(msg.data)
            self._recorded_nodes = {str(n) for n in nodes} if isinstance(nodes, list) else set()
        except ValueError:
            self._recorded_nodes = set()

    def _check_start(self) -> None:
        if self.exchange.started:
            return
        now = time.monotonic()
        waited = now - self._startup_wall
        missing = self._gate.missing(self._graph_facts())
        if not missing and self._ready_since is None:
            self._ready_since = now
        elif missing:
            self._ready_since = None
        settled = not missing and now - self._ready_since >= self.node_config.discovery_settle
        if not settled:
            if waited < self.node_config.startup_timeout:
                if missing and now >= self._next_gate_report:
                    # at once (after discovery had its first second), then every few seconds
                    self._next_gate_report = now + self.node_config.start_report_period
                    self.get_logger().warning(f'{waiting_text(missing)} ({waited:.1f} s)')
                return
            self.get_logger().warning(
                f'starting after {waited:.1f} s without: ' + '; '.join(missing or ['settling']))
        self._gate_timer.cancel()
        self.get_logger().info(f'simulation starts (matched after {waited:.2f} s)')
        self._publish_state(self.sim.state)
        if self._lockstep:
            self.create_timer(min(0.05, self.config.command_timeout / 5.0), self._on_watchdog,
                              clock=self._steady)
        else:
            self.exchange.start(time.monotonic())
            self.create_timer(self.config.control_period, self._on_tick, clock=self._steady)

    # -- inputs ---------------------------------------------------------------------------------

    def _on_joint_command(self, data: bytes, info) -> None:
        ns, names, position, velocity, effort = read_joint_state(self._command_reader, data)
        exchange = self.exchange
        if self._ros2_control:
            torques, why = topic_based_efforts(names, effort, position, velocity,
                                               self.joint_names, self._actuated)
            judge = exchange.topic_based
        else:
            torques, why = actuated_efforts(names, effort, self._actuated,
                                            self._actuated_index)
            judge = exchange.command
        verdict = judge(ns, publisher_gid(info), torques, time.monotonic())
        if verdict is ANSWER:
            self._advance(torques)
        elif verdict is LAST:
            self._end_stop_after()
        else:
            if torques is None:
                self._warn_rejected(self.command_topics[0], why)
            if verdict is TICK:
                self._tick()

    def _on_effort_command(self, msg: Float64MultiArray, info) -> None:
        torques, why = unstamped_efforts(msg.data, self._actuated)
        self.exchange.unstamped(publisher_gid(info), torques, time.monotonic())
        if torques is None:
            self._warn_rejected(contract.EFFORT_COMMANDS, why)

    def _warn_rejected(self, topic: str, why: str) -> None:
        self._throttle.warn('bad_command', f'rejected {topic} command: {why}; '
                            f'{self.exchange.counts.rejected} rejected so far (a rejected '
                            f'command answers no state)')

    def _read_effort_commands(self, read: bool) -> None:
        if read and self._sub_effort_commands is None:
            self._sub_effort_commands = self.create_subscription(
                Float64MultiArray, contract.EFFORT_COMMANDS,
                with_message_info(self._on_effort_command), self._command_qos)
        elif not read and self._sub_effort_commands is not None:
            self.destroy_subscription(self._sub_effort_commands)
            self._sub_effort_commands = None

    def _check_publishers(self) -> None:
        if self._lockstep and not self._ros2_control:
            self._read_effort_commands(self.count_publishers(contract.EFFORT_COMMANDS) > 1)
        for topic in self.command_topics:
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
        outcome = self.control.reset(SCOPE_ALL, cause='reset').outcome
        if outcome is not None:         # refused (quitting)
            response.success, response.message = False, outcome[1]
            return response
        self._act_now()
        response.success = True
        response.message = 'the robot is put back to initial_q/initial_v at the next step'
        return response

    # -- stepping ----------------------------------------------------------------------------

    def _on_watchdog(self) -> None:
        """Lockstep: while a state waits for its answer (simulated time never moves here)."""
        if self.done.done():
            return
        now = time.monotonic()
        verdict = self.exchange.watch(now)
        if verdict is LOST:
            self._end_controller_lost(self.exchange.lost_reason)
            return
        if verdict is WAITING:
            self._warn_waiting(now)
        # a warned wait still ticks (ros2_control: a lost /clock, docs/ros2_control.md)
        if self.exchange.tick_due(now):
            self._tick()

    def _tick(self) -> None:
        """ros2_control in lockstep: the awaited state again, one period later (no step)."""
        self.exchange.tick()
        self._publish_state(self.sim.state)

    def _warn_waiting(self, now: float) -> None:
        exchange = self.exchange
        controller = exchange.controller
        who = ('a controller' if controller is None
               else 'the controller ' + exchange.events.who(controller))
        self._throttle.warn('wait', (
            f'simulated time paused at t = {stamps.stamp_s(exchange.newest_ns):.3f} s: no '
            f'command answering that state for {exchange.waiting_s(now):.2f} s (warning after '
            f'{"command_timeout" if exchange.answered_once else "startup_timeout"} = '
            f'{exchange.warn_after_s:g} s); waiting for {who} (declared lost when it leaves the '
            f'graph or after controller_lost_timeout = {exchange.lost_timeout_s:g} s)'
            + (f'; a controller_manager writes once per period of /clock: its update_rate must '
               f'be {1.0 / self.config.control_period:g} Hz and its hardware component '
               f'active, with use_sim_time' if self._ros2_control else '')))

    def _on_tick(self) -> None:
        """Realtime: take the steps due by now, each with the held command."""
        exchange = self.exchange
        now = time.monotonic()
        if not self.control.running:       # paused: no steps; the wall clock restarts on resume
            self._restart_clock = True
            self._act_now()
            return
        if self._restart_clock:
            self._restart_clock = False
            exchange.start(now)
        for _ in range(exchange.due(now)):
            if exchange.finished:           # the run ends here: no step, no command accounted
                self._end_stop_after()
                return
            if self._advance(None, now) is HOLD or self.done.done():
                return

    def _act_now(self) -> None:
        """Act on a new request now when the step boundary is in hand (paused)."""
        control = self.control
        if self.done.done() or not self.exchange.started:
            return
        if self._lockstep:
            if control.held is not None:
                self._advance(None)
        elif not control.running:
            while control.waiting and not self.done.done():
                self._advance(None, time.monotonic())

    def _advance(self, answer, now: float | None = None):
        """
        At a step boundary: step, hold (paused), publish a changed state or end (quitting).

        Lockstep: ``answer`` is the controller's answer to the newest state (None: the one held
        while paused); realtime: None, and the step takes the exchange's command at ``now``.
        Returns what the simulation control said.
        """
        if self.done.done():
            return HOLD
        action, tau = self.control.boundary(answer)
        if action is HOLD:
            return action
        if action is QUIT:
            self.get_logger().info('the simulation was set quitting: the run ends')
            self._end('quit', EXIT_OK)
            return action
        if action is PUBLISH:
            self._publish_state(tau)
            return action
        try:
            state = self.sim.step(tau if self._lockstep else self.exchange.next_command(now))
        except SimulationDiverged as exc:
            last = exc.last_good_state
            self.get_logger().error(
                f'{exc}; stopping. Last good state: q = {last.q.tolist()}, '
                f'v = {last.v.tolist()}')
            self._end('diverged', EXIT_DIVERGED)
            return HOLD
        self._publish_state(state)
        return action

    def _publish_state(self, state) -> None:
        ns = self.exchange.state_stamp(state.t)
        out = self._output
        measured = self._sensors.measure(state)
        joints = out.contacts_and_joints(measured, ns, truth=state)
        self.exchange.published(ns, time.monotonic())
        out.joints.publish(joints)
        self._sensors.publish(state, ns)            # imu, ground_truth/*
        out.publish_clock(ns)
        self.control.published()

    # -- the end --------------------------------------------------------------------------------

    def _end_stop_after(self) -> None:
        c = self.exchange.counts
        self.get_logger().info(
            f'stop_after = {self.node_config.stop_after} s of simulated time reached after '
            f'{c.steps} steps; {c.rejected} command(s) rejected, {c.timeouts} timeout(s)')
        self._end('stop_after', EXIT_OK)

    def _end_controller_lost(self, why: str) -> None:
        exchange = self.exchange
        name = (exchange.events.who(exchange.controller) if exchange.controller is not None
                else '(no controller answered yet)')
        self.get_logger().error(
            f'controller lost: {name}: {why}; the state of t = '
            f'{stamps.stamp_s(exchange.newest_ns):.3f} s was never answered. Ending the run '
            f'after {exchange.counts.steps} steps (exit code {runtime.EXIT_FAILED})')
        self._end('controller_lost', runtime.EXIT_FAILED)

    def _end(self, reason: str, code: int) -> None:
        self._stop_reason = reason
        self.exit_code = code
        self.control.ended(reason)
        self.diagnostics.force_update()
        self._log_summary()
        if not self.done.done():
            self.done.set_result(code)

    def _diagnose(self) -> tuple:
        """Return the 'exchange' status on /diagnostics: (level, message, values)."""
        exchange = self.exchange
        now = time.monotonic()
        newest = exchange.newest_ns or 0
        wall0, stamp0 = self._diag_mark
        rtf = (stamps.stamp_s(newest - stamp0) / (now - wall0)
               if exchange.started and now > wall0 else None)
        self._diag_mark = (now, newest)
        rejected, foreign = self._diag_counts
        counts = exchange.counts
        self._diag_counts = (counts.rejected, counts.foreign)
        waiting = exchange.waiting_s(now) if self._lockstep else 0.0
        level, problems = diagnostics.OK, []
        if self._stop_reason == 'controller_lost':
            level, problems = diagnostics.ERROR, ['controller lost']
        elif not exchange.started:
            problems.append('waiting for subscribers / the controller to start')
        if waiting > self.config.command_timeout and not self.done.done():
            level = diagnostics.WARN
            problems.append(f'paused {waiting:.1f} s waiting for the controller')
        if not self._lockstep and exchange.silent:
            level = diagnostics.WARN
            problems.append('no fresh command: zero torque')
        if counts.rejected > rejected:
            level = max(level, diagnostics.WARN)
            problems.append(f'{counts.rejected - rejected} command(s) rejected')
        if counts.foreign > foreign:
            level = max(level, diagnostics.WARN)
            problems.append(f'{counts.foreign - foreign} foreign command(s) refused')
        summary = self.summary()
        values = {'mode': self.config.mode, 'real_time_factor': rtf,
                  'sim_time_s': stamps.stamp_s(newest), 'waiting_s': waiting}
        values.update({k: summary[k] for k in (
            'steps', 'waits', 'wait_s_max', 'timeouts', 'zero_torque_steps', 'rejected',
            'foreign', 'late', 'future', 'early', 'unstamped', 'command_publishers',
            'controller', 'foreign_nodes', 'stale_steps', 'age_ms_p99', 'round_trip_ms_p99',
            'overruns', 'unconverged_steps', 'accumulation_steps', 'stop_reason')})
        message = '; '.join(problems) or (
            f'{self.config.mode}, real-time factor {rtf:.2f}' if rtf is not None else 'ok')
        return level, message, values

    def summary(self) -> dict:
        """Return the counters of the exchange (the ``dodo exchange:`` line); times in ms."""
        out = {'sim_time_s': stamps.stamp_s(self.exchange.newest_ns or 0),
               'stop_reason': self._stop_reason}
        out.update(self.exchange.summary())
        out['command_publishers'] = self.command_publishers
        out['max_command_age_ms'] = self.node_config.max_command_age * 1e3
        # physics steps whose contact solve missed its tolerance; event steps taken by
        # time-stepping at an accumulation of events (SimConfig.event_accumulation)
        out['unconverged_steps'] = self.sim.unconverged_steps
        out['accumulation_steps'] = self.sim.accumulation_steps
        out['episodes'] = self.control.episode      # resets and states set (sim_control)
        return out

    def _log_summary(self) -> None:
        if self._summary_logged or not self.exchange.started:
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
