# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
``controller`` ROS 2 node: a thin adapter around any controller of :mod:`dodo_control.registry`.

The parameter ``controller`` selects it: an installed entry point of ``dodo_sim.controllers``
(``slip_hopper``, the default, :class:`dodo_control.controller.Controller`; ``kneed_walker``;
``joint_hold``; any plugin package's) or ``module:Class`` of an importable class. The node
declares exactly the fields of :class:`~dodo_sim.ros.node_config.ControllerNodeConfig`, of the
selected controller's config dataclass and of its outcome monitor's configs as ROS parameters,
plus the read-only ``controller_identity`` (which controller runs: entry point, ``module:Class``,
distribution and version, JSON; the bag records it). Robot-agnostic: joints, actuated joints and
contact frames come from the controller (``joint_names``, ``actuated_joint_names``,
``contact_frames``); nothing here knows the hopper or the walker.

Inputs (what a boom-mounted leg measures, nothing else):

* ``/joint_states`` (sensor_msgs/JointState): merged by joint name, so base (boom) and leg joints
  may come from different drivers. A state is *complete* once every joint of the model has a new
  position and velocity since the last update; its time is the newest header stamp.
* ``/<frame>_contact`` (geometry_msgs/WrenchStamped), one per contact frame (the hopper:
  ``/foot_contact``): the force sensor, N, world axes (``frame_id`` checked: the link's contact
  frame, docs/ros_contract.md "Frames"). Parameter ``contact_pairing``: 'stamp' waits for the
  contact message with the joint state's stamp (simulation: deterministic),
  'latest' takes the newest (a driver whose sensors have their own clocks), 'auto' (default)
  decides from the stamps it sees and logs its choice.
* the robot model: parameter ``robot_description`` or the ``/robot_description`` topic
  (std_msgs/String, transient local) — the URDF the simulator / robot_state_publisher use.

Fresh state only: the state subscriptions keep a short history (``contract.input_qos``) and each
callback takes whatever else is queued before it computes, so after a stall (CPU load, SIGSTOP)
the controller answers the newest state and skips the backlog (counted in ``skipped_states``)
instead of working through old states.

Per complete state: exactly one ``ctrl.update(t, q, v, contact_force)`` (``t`` = the stamp in s;
``contact_force`` = one world ``[fx, fy, fz]`` row per contact frame of the controller, N)
and, in this order:

* ``/joint_commands`` (sensor_msgs/JointState): ``header.stamp`` = the stamp of the answered
  state, ``name`` = the actuated joints, ``effort`` = torques N*m. The simulator pairs commands
  with states by this stamp; its age at application is the command's age.
* ``/effort_controller/commands`` (std_msgs/Float64MultiArray, actuated joints in order, N*m:
  the ros2_control JointGroupEffortController convention, for realtime/hardware use).
* ``/controller/state`` (sensor_msgs/JointState used as *named scalar channels*, PlotJuggler /
  Foxglove friendly), every ``state_period`` s of sim time (stamps, not wall time; the first
  state after an accepted parameter change always): ``header.stamp`` = stamp of the answered
  joint state, ``name`` = channel
  names, ``position`` = values. Channels: ``phase`` (hopper: 0 flight, 1 stance, -1 unknown;
  walker: the step phase), then every numeric field of ``ctrl.telemetry`` under its own name
  (2-vectors split into ``<name>_x``, ``<name>_z``; fields the controller labels in
  ``ctrl.telemetry_labels`` as ``<name>_<label>`` per entry, a text field as the index of its
  value among the labels, e.g. the walker's ``stance_frame`` 0 left, 1 right), then the
  monitor's channels (walker: ``fallen``, ``fall_reason`` = index in
  ``walker_outcome.FALL_REASONS`` or -1, ``steps``, ``distance_m``, ``speed_m_s``), then
  ``tau_<joint>`` per actuated joint, then ``config_revision``: 0 at start, +1 each time a
  runtime parameter change is accepted; a message carrying revision r was computed with the
  configuration of the r-th accepted change (a replay applies each change right before the
  first state whose revision is higher), then ``episode``: the simulator's episode the command
  was computed in (the first state of a new episode is always published).
* ``/controller/markers`` (visualization_msgs/MarkerArray, frame ``world``, every
  ``marker_period`` s of sim time). Controllers reporting a SLIP leg (telemetry
  ``com_position`` and ``foot_position``, the hopper): ``slip_leg`` (line CoG -> foot),
  ``cog_path`` (line strip), ``foot_target`` (sphere at the desired foot point, when the
  controller reports one), ``grf`` (arrow at the foot, 1 m per body weight). Any other robot,
  from the robot model's kinematics: ``com`` (sphere at the CoM), ``cog_path``,
  ``stance_foot`` (sphere at the contact frame named by the telemetry's ``stance_frame``, when
  it has one), ``grf`` (one arrow per contact frame, 1 m per body weight).

Episodes (docs/simulation_interfaces.md): the node reads the simulator's events on
``simulator/events`` (:mod:`dodo_sim.ros.sim_events`). Before it answers the first state of a
new episode (a reset, a state set by a client) it starts afresh: the controller's ``reset()``
(``dodo_control.interface.restart``) and a new outcome monitor. The simulator publishes such an
event and waits for every reader to acknowledge it before it publishes that state, and this
node's events subscription comes before its state subscriptions, so the event is taken first.

Outcome monitor (controllers that name one; the walker's :class:`dodo_control.walker.monitor.
WalkMonitor`): judges every answered state from the measured q and contact forces only — falls
(reason from ``walker_outcome``), steps, distance, speed. At the first fall it logs one warning
``the robot fell: <reason> at t = ... s after N steps and D m`` and keeps running (commands
keep flowing, the bag closes normally); ``dodo walk`` turns the fall into a non-zero exit. Its
parameters: the fields of ``walker_outcome.FallCriteria`` and the ground
(``walker_monitor.TerrainConfig``, the simulator's terrain parameters, which the graph copies
from the simulator's section of the params file).

Without a command for ``wait_report_after`` s the node logs what it is waiting for (the robot
model, command subscribers, joints missing from /joint_states, a contact message with a given
stamp). More than one publisher on the command topics is reported. At shutdown it logs one
summary line, ``dodo controller: updates=... skipped_states=... config_revision=...
tick_ms_p50=... tick_ms_p99=... tick_ms_max=...`` (the wall time of the control law's
``update()`` per answered state; with a monitor also ``steps=... distance_m=...
speed_m_s=... fall_reason=... fall_time_s=...``).

Every field of the controller's config except its registry entry's ``startup_only`` fields
(hopper: ``control_period``; walker: the joint and frame names) is a ROS parameter settable at
runtime (``ros2 param set /controller apex_height 1.2``) through ``ctrl.reconfigure``; a bad
value is rejected with the core's reason and the running config is kept.

Health on ``/diagnostics`` every ``diagnostics_period`` (:mod:`dodo_sim.ros.diagnostics`, the
diagnostic_updater way): status ``controller: tick`` with the tick time p50/p99/max (ms, whole
run and since the last message), updates, skipped states; WARN when the newest ticks' max is
above the control period or states were skipped since the last message.

Merging joint states and pairing them with contacts by stamp is
:class:`dodo_sim.ros.state_merge.StateMerge` (no rclpy; a user's own client can use it too); the
telemetry channels (:mod:`dodo_sim.ros.telemetry_channels`), the markers
(:mod:`dodo_sim.ros.controller_markers`) and the raw input reading
(:mod:`dodo_sim.ros.raw_messages`) are modules of their own. This node feeds its subscriptions
to the merge and answers each state it hands out; it is one unit at this length because the
model set-up, the update, the reports and the runtime parameters share the hosted controller.
"""
from __future__ import annotations

import array
import math
import sys
import time

from dodo_control import registry
from dodo_control.interface import HostedController, restart
from dodo_sim import stamps
from dodo_sim.model import ModelError
from dodo_sim.parameter import config_defaults
from dodo_sim.physics.robot import urdf_from_untrusted_text
from dodo_sim.ros import contract, diagnostics, node_config, runtime
from dodo_sim.ros.cdr import JointStateReader, JointStateWriter
from dodo_sim.ros.controller_markers import ControllerMarkers
from dodo_sim.ros.params import coerce_value, config_from_parameters, declare_config_parameters
from dodo_sim.ros.raw_messages import read_contact, read_contact_frame_id, read_joint_state
from dodo_sim.ros.runtime import drain, WarnThrottle
from dodo_sim.ros.sim_events import decode, EpisodeFollower
from dodo_sim.ros.state_merge import StateMerge
from dodo_sim.ros.telemetry_channels import TelemetryChannels
from geometry_msgs.msg import WrenchStamped
import numpy as np
from rcl_interfaces.msg import SetParametersResult
from rclpy.clock import Clock, ClockType
from rclpy.node import Node
from rclpy.serialization import serialize_message
from rclpy.task import Future
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray, String
from visualization_msgs.msg import MarkerArray


def robot_names(ctrl) -> tuple:
    """
    (joint names, actuated joint names, contact frames) of the controller.

    They give the order of q/v it takes, of the torques it returns and of the contact forces it
    reads. Every controller the node wraps states them (attributes of the same names).
    """
    return (tuple(ctrl.joint_names), tuple(ctrl.actuated_joint_names),
            tuple(ctrl.contact_frames))


class ControllerNode(Node):
    """The controller node (see module docs)."""

    def __init__(self, **node_kwargs):
        super().__init__('controller', **node_kwargs)
        node_values = declare_config_parameters(
            self, node_config.ControllerNodeConfig,
            read_only=list(config_defaults(node_config.ControllerNodeConfig)))
        self.node_config: node_config.ControllerNodeConfig = config_from_parameters(
            node_config.ControllerNodeConfig, node_values)
        self.entry = registry.controller_entry(self.node_config.controller)
        self._declare_identity()
        self._config_class = self.entry.config_class()
        runtime_names = set(self.entry.runtime_parameters())
        ctrl_values = declare_config_parameters(
            self, self._config_class,
            read_only=[n for n in config_defaults(self._config_class) if n not in runtime_names])
        self.config = config_from_parameters(self._config_class, ctrl_values)
        self.monitor_configs = [
            config_from_parameters(cls, declare_config_parameters(
                self, cls, read_only=list(config_defaults(cls))))
            for cls in self.entry.monitor_config_classes()]
        self._throttle = WarnThrottle(self.get_logger(), self.node_config.warn_period)
        self._wait_throttle = WarnThrottle(self.get_logger(),
                                           10.0 * max(self.node_config.wait_report_after, 0.1))
        self._steady = Clock(clock_type=ClockType.STEADY_TIME)
        self.add_on_set_parameters_callback(self._on_set_parameters)

        self.ctrl: HostedController | None = None
        self.monitor = None             # the controller's outcome monitor (walker: falls, steps)
        self.exit_code = runtime.EXIT_OK
        self.done = Future()            # set when the node must exit (an unusable robot model)
        self.updates = 0                # commands sent
        # wall ns of the control law's update() per answered state (10 us bins up to 1 s)
        self.tick_ns = runtime.Histogram(10_000, 100_000)
        self._recent_tick_max_ns = 0
        self._diag_skipped = 0
        self.config_revision = 0        # accepted runtime parameter changes
        self.command_publishers = 1     # most publishers seen on /joint_commands
        self.merge: StateMerge | None = None    # joint states and contacts (with the model)
        self._answered_ns = None
        self._last_command_wall = time.monotonic()
        self._gate_open = (self.node_config.min_subscribers <= 0
                           and self.node_config.discovery_settle <= 0.0)
        self._next_marker_ns = 0
        self._next_state_ns = 0
        self._state_revision = -1       # config_revision of the last /controller/state sent
        self._state_names: list | None = None
        self._channels = TelemetryChannels()
        self._last_contact = np.zeros(2)
        self._last_forces = None
        self._sub_description = None
        # the simulator's events, subscribed before the states: an episode's event is taken
        # before its first state (sim_events)
        self.episodes = EpisodeFollower()
        self._state_episode = None      # episode of the last /controller/state sent
        self.create_subscription(String, contract.SIM_EVENTS,
                                 lambda msg: self.episodes.event(decode(msg.data)),
                                 contract.events_qos())
        self.diagnostics = diagnostics.Updater(self, self.node_config.controller,
                                               self.node_config.diagnostics_period)
        self.diagnostics.add('tick', self._diagnose)
        self._report_timer = self.create_timer(max(self.node_config.wait_report_after, 0.1),
                                               self._on_report_timer, clock=self._steady)
        if self.node_config.robot_description:
            self._setup(self.node_config.robot_description)
        else:
            self.get_logger().info(f'waiting for the robot model on {contract.ROBOT_DESCRIPTION}')
            self._sub_description = self.create_subscription(
                String, contract.ROBOT_DESCRIPTION, self._on_description, contract.latched_qos())

    def _declare_identity(self) -> None:
        """
        Say which controller runs: the read-only parameter ``controller_identity``.

        JSON of :meth:`dodo_control.registry.ControllerEntry.identity` (entry point name,
        ``module:Class``, distribution, version); the recorder's parameter snapshot puts it in
        the bag, and ``dodo replay --through-controller`` checks it (docs/bags.md). A params
        file cannot set it (``ignore_override``).
        """
        from rcl_interfaces.msg import ParameterDescriptor
        self.declare_parameter(
            contract.CONTROLLER_IDENTITY, registry.identity_text(self.entry.identity()),
            ParameterDescriptor(description='which controller runs (JSON: name, class, '
                                            'distribution, version); set by the node',
                                read_only=True), ignore_override=True)

    # -- model --------------------------------------------------------------------------------

    def _on_description(self, msg: String) -> None:
        if self.ctrl is not None:
            return
        try:
            # any node may publish the topic: XML only, never a path or a xacro to run
            self._setup(urdf_from_untrusted_text(msg.data, f'/{contract.ROBOT_DESCRIPTION}'))
        except (ModelError, ValueError) as exc:
            # the same outcome as a bad robot_description parameter: one line, exit code 2
            self.get_logger().fatal(f'bad configuration: cannot use '
                                    f'{contract.ROBOT_DESCRIPTION}: {exc}')
            self.exit_code = runtime.EXIT_CONFIG
            self.done.set_result(self.exit_code)

    def _setup(self, urdf_xml: str) -> None:
        from dodo_sim.physics.robot import load_robot
        ctrl = self.entry.build(urdf_xml, self.config)
        self.joint_names, self.actuated_joint_names, self.contact_frames = robot_names(ctrl)
        robot = load_robot(urdf_xml, contact_frames=self.contact_frames)
        monitor_class = self.entry.monitor_class()
        if monitor_class is not None:
            self.monitor = monitor_class(urdf_xml, self.joint_names, *self.monitor_configs)
        self.ctrl = ctrl
        self._urdf_xml = urdf_xml
        self._channels = TelemetryChannels(getattr(ctrl, 'telemetry_labels', None))
        self._robot = robot
        self._weight = robot.total_mass * float(np.linalg.norm(robot.model.gravity.linear))
        self._markers = ControllerMarkers(robot, self.joint_names, self._weight,
                                          self.node_config.cog_path_points)
        self.merge = StateMerge(self.joint_names, len(self.contact_frames),
                                self.node_config.contact_pairing, on_pairing=self._on_pairing)
        self._contact_topics = [contract.contact_topic(f) for f in self.contact_frames]
        self._contact_frame_checked = [False] * len(self.contact_frames)
        stream_qos = contract.stream_qos()
        self._pub_joint_command = self.create_publisher(JointState, contract.JOINT_COMMANDS,
                                                        stream_qos)
        self._pub_command = self.create_publisher(Float64MultiArray, contract.EFFORT_COMMANDS,
                                                  stream_qos)
        self._pub_state = self.create_publisher(JointState, contract.CONTROLLER_STATE, stream_qos)
        self._pub_markers = self.create_publisher(MarkerArray, contract.CONTROLLER_MARKERS, 10)
        input_qos = (contract.lockstep_input_qos() if self.node_config.reliable_states
                     else contract.input_qos())
        # raw: the 1 kHz inputs are read from their CDR bytes (dodo_sim.ros.cdr), not turned
        # into message objects by rclpy (a dozen nested constructors per message)
        self._joint_reader = JointStateReader()
        self._sub_joints = self.create_subscription(JointState, contract.JOINT_STATES,
                                                    self._on_joint_states, input_qos, raw=True)
        self._sub_contacts = [
            self.create_subscription(WrenchStamped, topic,
                                     lambda data, i=i: self._on_contact(i, data), input_qos,
                                     raw=True)
            for i, topic in enumerate(self._contact_topics)]
        if not self._gate_open:
            self._gate_start = time.monotonic()
            self._matched_since = None
            self._gate_timer = self.create_timer(0.005, self._check_gate, clock=self._steady)
        self._msg_joint_command = JointState()
        self._msg_joint_command.name = list(self.actuated_joint_names)
        # /joint_commands as CDR bytes refilled in place (dodo_sim.ros.cdr)
        n = len(self.actuated_joint_names)
        self._msg_joint_command.effort = [0.0] * n
        self._command_writer = JointStateWriter(serialize_message(self._msg_joint_command),
                                                (0, 0, n))
        self._msg_command = Float64MultiArray()
        self._msg_state = JointState()
        policy = getattr(self.config, 'flight_policy', None)
        self.get_logger().info(
            f'controller ready ({self.entry.name}; model: {robot.total_mass:.2f} kg; joints '
            f'{list(self.joint_names)}, actuated {list(self.actuated_joint_names)}, contact '
            f'topics {self._contact_topics}, contact pairing '
            f'{self.node_config.contact_pairing})'
            + (f'; flight policy {policy}' if policy is not None else '')
            + ('; outcome monitor on' if self.monitor is not None else ''))

    # -- parameters ---------------------------------------------------------------------------

    def _on_set_parameters(self, params) -> SetParametersResult:
        cls = self._config_class
        fields = config_defaults(cls)
        changes = {p.name: p.value for p in params if p.name in fields}
        if not changes:
            return SetParametersResult(successful=True)
        try:
            values = {n: getattr(self.config, n) for n in fields}
            for name, value in changes.items():
                values[name] = coerce_value(cls, name, value, fields[name])
            config = config_from_parameters(cls, values)
        except ValueError as exc:
            return SetParametersResult(successful=False, reason=str(exc))
        if self.ctrl is not None:
            try:
                self.ctrl.reconfigure(config)
            except ValueError as exc:
                self.ctrl.reconfigure(self.config)
                return SetParametersResult(successful=False, reason=str(exc))
        self.config = config
        self.config_revision += 1
        self.get_logger().info(f'set-points changed: {changes} (config_revision '
                               f'{self.config_revision})')
        return SetParametersResult(successful=True)

    # -- inputs -------------------------------------------------------------------------------

    def _on_joint_states(self, data: bytes) -> None:
        merge = self.merge
        self._merge(data)
        for newer, _info in drain(self._sub_joints):      # act on the newest state only
            self._merge(newer)
        if merge.pending:
            self._try_update()

    def _merge(self, data: bytes) -> None:
        ns, names, position, velocity, _ = read_joint_state(self._joint_reader, data)
        if not self.merge.joint_state(ns, names, position, velocity):
            self._throttle.warn('joint_states', f'ignored {contract.JOINT_STATES} without one '
                                f'position and one velocity per joint name')

    def _on_pairing(self, mode: str) -> None:
        """Say what ``contact_pairing: auto`` decided (StateMerge)."""
        if mode == 'stamp':
            self.get_logger().info(f'contact messages carry the {contract.JOINT_STATES} stamps: '
                                   f'pairing them by stamp (contact_pairing = auto)')
        else:
            self.get_logger().warning(
                f'contact messages carry other stamps than {contract.JOINT_STATES} (a driver '
                f'with its own clocks?): using the newest contact force (contact_pairing = '
                f'auto)')

    def _on_contact(self, index: int, data: bytes) -> None:
        if not self._contact_frame_checked[index] and not self._check_contact_frame(index, data):
            return
        merge = self.merge
        merge.contact(index, *read_contact(data))
        for newer, _info in drain(self._sub_contacts[index]):
            merge.contact(index, *read_contact(newer))
        if merge.pending:
            self._try_update()

    def _check_contact_frame(self, index: int, data: bytes) -> bool:
        """
        Check once per topic that the forces have world axes (the control law's input).

        ``docs/ros_contract.md``, "Frames": the contact frame of the link (or a fixed frame); a
        force in any other frame would be read as wrong world components, so the node stops.
        """
        frame = self.contact_frames[index]
        frame_id = read_contact_frame_id(data)
        if contract.world_aligned_frame(frame_id, frame):
            self._contact_frame_checked[index] = True
            return True
        if not self.done.done():
            self.get_logger().error(
                f'{self._contact_topics[index]} has frame_id {frame_id!r}: the controller reads '
                f'contact forces with world axes only (frame_id '
                f'{contract.contact_frame_id(frame)!r}, {contract.WORLD_FRAME!r} or '
                f'{contract.ODOM_FRAME!r}); stopping')
            self.exit_code = runtime.EXIT_CONFIG
            self.done.set_result(self.exit_code)
        return False

    def _check_gate(self) -> None:
        now = time.monotonic()
        need = self.node_config.min_subscribers
        matched = self._pub_joint_command.get_subscription_count()
        if matched < need and now - self._gate_start > self.node_config.startup_timeout:
            self.get_logger().warning(f'sending commands with {matched} of {need} '
                                      f'subscribers of {contract.JOINT_COMMANDS} matched')
            self._matched_since = -math.inf
        elif matched < need:
            self._matched_since = None
            return
        elif self._matched_since is None:
            self._matched_since = now
        if now - self._matched_since >= self.node_config.discovery_settle:
            self._gate_open = True
            self._gate_timer.cancel()
            if self.merge.pending:
                self._try_update()

    # -- the update ---------------------------------------------------------------------------

    def _try_update(self) -> None:
        if not self._gate_open:
            return
        paired = self.merge.take()
        if paired is None:
            return
        ns, q, v, contact = paired
        if self.episodes.starts(ns):
            self._start_episode(ns)
        t = stamps.stamp_s(ns)
        started = time.perf_counter_ns()
        tau = np.asarray(self.ctrl.update(t, q, v, contact), dtype=float)
        tick = time.perf_counter_ns() - started
        self.tick_ns.add(tick)
        if tick > self._recent_tick_max_ns:
            self._recent_tick_max_ns = tick
        if tau.shape != (len(self.actuated_joint_names),) or not np.isfinite(tau).all():
            self._throttle.warn('tau', f'controller returned {tau!r}; sending zero torque')
            tau = np.zeros(len(self.actuated_joint_names))
        effort = array.array('d')
        effort.frombytes(tau.tobytes())
        # first: the simulator waits for it
        self._pub_joint_command.publish(self._command_writer.write(ns, (), (), effort))
        self.updates += 1
        self._answered_ns = ns
        self._last_command_wall = time.monotonic()
        self._msg_command.data = effort
        self._pub_command.publish(self._msg_command)
        self._last_contact = (contact if contact.ndim == 1
                              else np.array((contact[:, 0].sum(), contact[:, 2].sum())))
        self._last_forces = contact
        if self.monitor is not None and self.monitor.update(t, q, contact):
            self.get_logger().warning(self.monitor.fall_message())
        # telemetry at its own rates, on the state stamps (a run and its replay agree); the
        # first state after a parameter change always carries its config_revision
        if (ns >= self._next_state_ns or self.config_revision != self._state_revision
                or self.episodes.episode != self._state_episode):
            self._next_state_ns = ns + stamps.stamp_ns(self.node_config.state_period)
            self._publish_state(ns, tau)
        if ns >= self._next_marker_ns:
            self._next_marker_ns = ns + stamps.stamp_ns(self.node_config.marker_period)
            self._publish_markers(ns, q)

    def _start_episode(self, ns: int) -> None:
        """Start afresh before answering the first state of a new episode (module docs)."""
        self.ctrl = restart(self.ctrl, lambda: self.entry.build(self._urdf_xml, self.config))
        if self.monitor is not None:
            self.monitor = type(self.monitor)(self._urdf_xml, self.joint_names,
                                              *self.monitor_configs)
        self.get_logger().info(f'episode {self.episodes.episode} starts at t = '
                               f'{stamps.stamp_s(ns):.6f} s: the controller starts afresh')

    def _publish_state(self, ns: int, tau) -> None:
        values = self._channels.values(getattr(self.ctrl, 'telemetry', None))
        self._state_revision = self.config_revision
        self._state_episode = self.episodes.episode
        monitor = self.monitor.channels() if self.monitor is not None else []
        msg = self._msg_state
        if self._state_names is None:
            self._state_names = (self._channels.names
                                 + (list(self.monitor.CHANNELS) if self.monitor is not None
                                    else [])
                                 + [f'tau_{name}' for name in self.actuated_joint_names]
                                 + ['config_revision', 'episode'])
            msg.name = self._state_names
        msg.header.stamp.sec, msg.header.stamp.nanosec = stamps.sec_nanosec(ns)
        msg.position = array.array('d', values + monitor + tau.tolist()
                                   + [float(self.config_revision),
                                      float(self.episodes.episode)])
        self._pub_state.publish(msg)

    # -- reports ------------------------------------------------------------------------------

    def _on_report_timer(self) -> None:
        self._check_publishers()
        silent = time.monotonic() - self._last_command_wall
        if silent < self.node_config.wait_report_after:
            return
        key, reason = self.waiting_for()
        message = f'no command sent for {silent:.1f} s: waiting for {reason}'
        if key == 'state':          # nothing wrong on this side: the states stopped
            self._wait_throttle.info(key, message)
        else:
            self._wait_throttle.warn(key, message)

    def waiting_for(self) -> tuple:
        """(key, text): what keeps the controller from sending its next command."""
        if self.ctrl is None:
            return 'model', (f'the robot model on {contract.ROBOT_DESCRIPTION} '
                             f'({self.count_publishers(contract.ROBOT_DESCRIPTION)} publisher(s))'
                             f' or in the robot_description parameter')
        if not self._gate_open:
            return 'gate', (f'{self.node_config.min_subscribers} subscriber(s) on '
                            f'{contract.JOINT_COMMANDS} (matched: '
                            f'{self._pub_joint_command.get_subscription_count()})')
        merge = self.merge
        if merge.states_received == 0:
            return 'joint_states', (f'{contract.JOINT_STATES}: nothing received '
                                    f'({self.count_publishers(contract.JOINT_STATES)} '
                                    f'publisher(s))')
        missing = merge.missing_joints()
        if missing:
            return 'joints', (f'joints {missing} on {contract.JOINT_STATES} (since the last '
                              f'complete state only {sorted(merge.fresh)} came)')
        if merge.pending:
            newest = merge.newest_contact_stamps()
            for topic, ns in zip(self._contact_topics, newest):
                if ns is None:
                    return 'contact', (f'{topic}: nothing received '
                                       f'({self.count_publishers(topic)} publisher(s))')
            listed = ', '.join(f'{t} {stamps.stamp_s(ns):.9f} s'
                               for t, ns in zip(self._contact_topics, newest))
            return 'contact', (f'contact messages stamped {stamps.stamp_s(merge.stamp_ns):.9f} '
                               f's like the pending {contract.JOINT_STATES} (newest: {listed}; '
                               f'contact_pairing = {merge.requested})')
        answered = ('-' if self._answered_ns is None
                    else f'{stamps.stamp_s(self._answered_ns):.6f} s')
        return 'state', f'a new state on {contract.JOINT_STATES} (last answered: {answered})'

    def _check_publishers(self) -> None:
        count = self.count_publishers(contract.JOINT_COMMANDS)
        if count > self.command_publishers:
            nodes = runtime.publisher_nodes(self, contract.JOINT_COMMANDS)
            self.get_logger().warning(f'{count} publishers on {contract.JOINT_COMMANDS}: '
                                      f'{nodes}; a second controller?')
        self.command_publishers = max(count, self.command_publishers)

    def _publish_markers(self, ns: int, q) -> None:
        values = self._channels.values(getattr(self.ctrl, 'telemetry', None))
        telemetry = dict(zip(self._channels.names, values))
        self._pub_markers.publish(self._markers.build(ns, q, telemetry, self._last_contact,
                                                      self._last_forces))

    def _diagnose(self) -> tuple:
        """Return the 'tick' status on /diagnostics: (level, message, values)."""
        ms = _ms
        recent_max, self._recent_tick_max_ns = self._recent_tick_max_ns, 0
        total = self.skipped_states
        skipped, self._diag_skipped = total - self._diag_skipped, total
        period_ns = stamps.stamp_ns(getattr(self.config, 'control_period', 0.001))
        level, problems = diagnostics.OK, []
        if self.ctrl is None:
            problems.append('waiting for the robot model')
        if recent_max > period_ns:
            level = diagnostics.WARN
            problems.append(f'a tick took {recent_max * 1e-6:.2f} ms (control period '
                            f'{period_ns * 1e-6:g} ms)')
        if skipped:
            level = diagnostics.WARN
            problems.append(f'{skipped} state(s) skipped (it fell behind)')
        values = {'updates': self.updates, 'skipped_states': total,
                  'tick_ms_p50': ms(self.tick_ns.percentile(50)),
                  'tick_ms_p99': ms(self.tick_ns.percentile(99)),
                  'tick_ms_max': ms(self.tick_ns.max), 'tick_ms_max_recent': ms(recent_max),
                  'config_revision': self.config_revision,
                  'command_publishers': self.command_publishers}
        return level, '; '.join(problems) or 'ok', values

    @property
    def skipped_states(self) -> int:
        """Return the complete states replaced by a newer one unanswered."""
        return self.merge.skipped if self.merge is not None else 0

    def summary(self) -> dict:
        merge = self.merge
        out = {'updates': self.updates, 'skipped_states': self.skipped_states,
               'config_revision': self.config_revision,
               'contact_pairing': merge.pairing if merge is not None else 'undecided',
               'command_publishers': self.command_publishers, 'controller': self.entry.name,
               'tick_ms_p50': _ms(self.tick_ns.percentile(50)),
               'tick_ms_p99': _ms(self.tick_ns.percentile(99)),
               'tick_ms_max': _ms(self.tick_ns.max)}
        if self.monitor is not None:
            out.update(self.monitor.summary())
        return out

    def destroy_node(self):
        if self.ctrl is not None:
            self.get_logger().info(runtime.format_summary('controller', self.summary()))
        return super().destroy_node()


def _ms(ns):
    return None if ns is None else ns * 1e-6


def main(args=None) -> int:
    return runtime.run_node(ControllerNode, 'controller', args)


if __name__ == '__main__':
    sys.exit(main())
