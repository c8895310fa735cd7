# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
The ROS graph contract of dodo_sim, in one place: topic names, message types, QoS, conventions.

Every node, the recorder, the bag tools and the tests take names and types from here; nothing
else spells a topic. The design document of the graph is ``docs/ros_contract.md``.

================================ =====================================
=============================
topic                            type                                  publisher
================================ =====================================
=============================
/clock                           rosgraph_msgs/Clock                   simulator (sim time source)
/joint_states                    sensor_msgs/JointState                simulator or hardware
driver:
                                                                       every joint by name
                                                                       (position, velocity, effort)
/<frame>_contact                 geometry_msgs/WrenchStamped           simulator or driver: force
on
                                                                       contact link <frame>, N,
                                                                       frame_id <frame>_contact
                                                                       (world axes at the link;
                                                                       hopper: /foot_contact)
odom                             nav_msgs/Odometry                     simulator: ground truth of
                                                                       the base (REP-105)
imu                              sensor_msgs/Imu                       simulator: the IMU at its
                                                                       link (floating base, or
                                                                       SimConfig.imu_link)
ground_truth/joint_states,       as the sensor topic                   simulator: exact values of
ground_truth/<frame>_contact,                                          a sensor with noise, bias,
ground_truth/imu                                                       latency or quantisation
/joint_commands                  sensor_msgs/JointState                controller: ``effort`` per
                                                                       actuated joint (``name``),
                                                                       header.stamp = stamp of the
                                                                       state it answers (lockstep
                                                                       pairs by this stamp)
/effort_controller/commands      std_msgs/Float64MultiArray            controller: actuated joints
                                                                       in URDF order, N*m
                                                                       (ros2_control convention)
/robot_description               std_msgs/String (transient local)     robot_state_publisher or sim
/tf, /tf_static                  tf2_msgs/TFMessage                    robot_state_publisher, or
                                                                       the recorder (plain machine)
/diagnostics                     diagnostic_msgs/DiagnosticArray       hardware driver
/estop                           std_msgs/Bool                         anyone: true latches the
                                                                       driver's e-stop
/controller/state                sensor_msgs/JointState (named         controller: header.stamp =
                                 scalar channels in ``position``)      answered state; channel
                                                                       ``config_revision``
/controller/markers              visualization_msgs/MarkerArray        controller
/simulator/push                  geometry_msgs/Vector3                 anyone: impulse on the base,
                                                                       x and z in N*s
/simulator/events                std_msgs/String (JSON, transient      simulator: resets, states
                                 local)                                set, pauses, parameter
                                                                       changes, with their stamp
/simulator/force                 geometry_msgs/Vector3                 anyone: constant force on
the
                                                                       base until changed, N
================================ =====================================
=============================

Names are relative (``joint_states``) and resolve under the robot's namespace; the table shows
them for the default, empty namespace. Services (std_srvs/Trigger): ``/simulator/reset``; the
simulation_interfaces services ``/simulator/reset_simulation`` etc. (:data:`SIM_SERVICES`) and
the action ``/simulator/simulate_steps``; the
hardware driver's ``/driver/enable``,
``/driver/disable``, ``/driver/estop``, ``/driver/calibrate`` (docs/hardware.md).

The exchange (``docs/ros_contract.md``, "Timing"): a command answers the state whose stamp it
carries; the simulator applies it only to that state (lockstep) or holds the newest one and
measures its age (realtime). QoS: writers of the 1 kHz streams keep :data:`STREAM_DEPTH` samples
(:func:`stream_qos`, reliable: what recorders read); the controller reads states with a shallow
best-effort :func:`input_qos` and acts on the newest; the simulator reads lockstep commands with
:func:`command_qos` (keep all: a flood of stray commands can delay an answer, never drop it) and
realtime commands with :func:`input_qos`. This module imports no rclpy at module level
(the QoS helpers import it when called), so the launch file, ``dodo hop`` and offline tools can
use the names on machines without rclpy.
"""
from __future__ import annotations

PACKAGE = 'dodo_sim'

# -- topic names ------------------------------------------------------------------------------
# Relative names (DESIGN.md section 3): they resolve under the node's namespace, so a robot
# launched with ``namespace:=left`` publishes /left/joint_states and two robots share a domain.
# In the default (empty) namespace they resolve to /joint_states etc. Nodes in a namespace remap
# the absolute names rclpy and robot_state_publisher use internally (``/clock``, ``/tf``,
# ``/tf_static``, ``/parameter_events``) into it: :data:`NAMESPACE_REMAPS`. Bags store resolved
# names; the bag readers key topics by these relative names (:func:`relative_name`).
CLOCK = 'clock'
JOINT_STATES = 'joint_states'
JOINT_COMMANDS = 'joint_commands'
EFFORT_COMMANDS = 'effort_controller/commands'
ROBOT_DESCRIPTION = 'robot_description'
TF = 'tf'
TF_STATIC = 'tf_static'
DIAGNOSTICS = 'diagnostics'
PARAMETER_EVENTS = 'parameter_events'
CONTROLLER_STATE = 'controller/state'
CONTROLLER_MARKERS = 'controller/markers'
PUSH = 'simulator/push'
FORCE = 'simulator/force'
RESET_SERVICE = 'simulator/reset'
#: The simulator's events (std_msgs/String, reliable, transient local, EVENTS_DEPTH kept): one
#: JSON record per reset, entity or joint state set, pause, play, step request and runtime
#: parameter change, with the stamp it took effect at and the episode
#: (:mod:`dodo_sim.ros.sim_events`; docs/simulation_interfaces.md). Controllers start afresh at
#: a new episode; bags record it.
SIM_EVENTS = 'simulator/events'
#: Records of SIM_EVENTS kept for late joiners (transient local), messages.
EVENTS_DEPTH = 100
#: The simulation_interfaces services of the simulator and their types (Kilted line 1.6.1), by
#: name under the simulator node, as Gazebo's ros_gz names them under its node
#: (``/gzserver/reset_simulation``, ...): ``simulator/reset_simulation``, ...
SIM_SERVICES = {
    'get_simulator_features': 'simulation_interfaces/srv/GetSimulatorFeatures',
    'get_simulation_state': 'simulation_interfaces/srv/GetSimulationState',
    'set_simulation_state': 'simulation_interfaces/srv/SetSimulationState',
    'reset_simulation': 'simulation_interfaces/srv/ResetSimulation',
    'step_simulation': 'simulation_interfaces/srv/StepSimulation',
    'get_entities': 'simulation_interfaces/srv/GetEntities',
    'get_entities_states': 'simulation_interfaces/srv/GetEntitiesStates',
    'get_entity_state': 'simulation_interfaces/srv/GetEntityState',
    'get_entity_info': 'simulation_interfaces/srv/GetEntityInfo',
    'set_entity_state': 'simulation_interfaces/srv/SetEntityState',
}
#: The SimulateSteps action of the simulator (simulation_interfaces/action/SimulateSteps).
SIMULATE_STEPS = 'simulator/simulate_steps'
#: Companion of the standard (which sets no joint state): joint positions and velocities by
#: name, rcl_interfaces/srv/SetParametersAtomically (each parameter a joint: a double = its
#: position, a double array = [position] or [position, velocity]).
SET_JOINT_STATE = 'simulator/set_joint_state'


def sim_service(name: str) -> str:
    """Return the relative name of the simulation_interfaces service ``name`` (SIM_SERVICES)."""
    if name not in SIM_SERVICES:
        raise ValueError(f'no simulator service {name!r}; services: {sorted(SIM_SERVICES)}')
    return f'simulator/{name}'


#: The simulator's announcement of the publisher whose commands it applies (std_msgs/String,
#: latched, JSON ``{"node": ..., "gid": <hex>, "since_ns": <stamp>, "kind": "hosted" |
#: "external"}``): the recorder uses it to keep the applied commands on JOINT_COMMANDS in the
#: bag, replay to refuse an external controller (docs/bags.md).
APPLIED_CONTROLLER = 'simulator/controller'
#: The recorder's list of the nodes whose configuration (parameter snapshot) is in the bag
#: (std_msgs/String, latched, JSON list of full node names): the simulator starts only when it
#: holds the simulator's and the controller's (docs/bags.md).
RECORDED_CONFIGURATIONS = 'recorder/configurations'
#: The controller node's read-only parameter saying which controller runs (JSON ``{"name": ...,
#: "class": "module:Class", "distribution": ..., "version": ...}``,
#: ``dodo_control.registry.ControllerEntry.identity``); in the bag through the recorder's
#: parameter snapshot, checked by ``dodo replay --through-controller`` (docs/bags.md).
CONTROLLER_IDENTITY = 'controller_identity'
#: Bag-only topic: valid stamped commands of other publishers (never applied), as recorded.
IGNORED_COMMANDS = JOINT_COMMANDS + '/ignored'
#: The hardware driver's e-stop input (std_msgs/Bool; true latches the e-stop).
ESTOP = 'estop'
#: ros2_control's topic-based system (``joint_state_topic_hardware_interface/
#: JointStateTopicSystem``, ros-controls/topic_based_hardware_interfaces): the topics its
#: ``joint_commands_topic`` / ``joint_states_topic`` hardware parameters name in the shipped
#: xacro (``hardware_plugin:=topic_based``). With ``command_convention: ros2_control`` the
#: simulator reads the plugin's commands here and publishes its states here (the
#: joint_state_broadcaster of the user's controller_manager owns ``joint_states``).
#: docs/ros2_control.md.
ROS2_CONTROL_COMMANDS = 'topic_based_joint_commands'
ROS2_CONTROL_STATES = 'topic_based_joint_states'

#: Names used absolutely inside rclpy/rclcpp and robot_state_publisher, remapped into a
#: robot's namespace (the Nav2 multi-robot convention): ``--ros-args -r /clock:=clock ...``.
NAMESPACE_REMAPS = (('/clock', CLOCK), ('/tf', TF), ('/tf_static', TF_STATIC),
                    ('/parameter_events', PARAMETER_EVENTS))


def normalize_namespace(namespace: str | None) -> str:
    """
    ``''`` for the root namespace, else ``/a/b`` (leading slash, no trailing slash).

    Raises ValueError for names ROS would reject.
    """
    ns = (namespace or '').strip().strip('/')
    if not ns:
        return ''
    for token in ns.split('/'):
        if not token or not token.replace('_', 'a').isalnum() or token[0].isdigit():
            raise ValueError(f'namespace {namespace!r}: each token must be letters, digits and '
                             f'_ and not start with a digit')
    return '/' + ns


def resolve(name: str, namespace: str | None = '') -> str:
    """
    Resolve the relative contract ``name`` under ``namespace``.

    Returns the fully qualified name (``resolve(JOINT_STATES, 'left')`` is ``/left/joint_states``);
    absolute names are kept.
    """
    if name.startswith('/'):
        return name
    return f'{normalize_namespace(namespace)}/{name}'


def remap_arguments(namespace: str | None) -> list:
    """
    Return the ``--ros-args`` arguments that put a node into ``namespace``.

    They carry the remaps of :data:`NAMESPACE_REMAPS`; empty for the root namespace.
    """
    ns = normalize_namespace(namespace)
    if not ns:
        return []
    args = ['-r', f'__ns:={ns}']
    for absolute, relative in NAMESPACE_REMAPS:
        args += ['-r', f'{absolute}:={relative}']
    return args


def bag_namespace(topics) -> str:
    """
    Namespace a bag was recorded in: the prefix of its joint-state topic.

    ``''`` if there is none or it is the root namespace.
    """
    suffix = '/' + JOINT_STATES
    truth = '/' + GROUND_TRUTH
    prefixes = {t[:-len(suffix)] for t in topics
                if t.endswith(suffix) and not t[:-len(suffix)].endswith(truth)}
    return prefixes.pop() if len(prefixes) == 1 else ''


def relative_name(topic: str, namespace: str = '') -> str:
    """
    Return the contract (relative) name of a recorded topic.

    ``topic`` is the recorded topic of a robot in ``namespace``: ``/left/joint_states`` ->
    ``joint_states`` (namespace ``left``); ``/parameter_events`` -> ``parameter_events`` (root
    namespace).
    """
    ns = normalize_namespace(namespace)
    if not ns:
        return topic.lstrip('/')
    if topic.startswith(ns + '/'):
        return topic[len(ns) + 1:]
    return topic     # another namespace's topic stays absolute


# -- the hardware driver's services (std_srvs/Trigger) -------------------------------------------
#: Node name of the hardware driver; its services are ``~/<name>`` for each of DRIVER_SERVICES.
DRIVER_NODE = 'driver'
DRIVER_SERVICES = ('enable', 'disable', 'estop', 'calibrate', 'clear_errors')


def driver_service(name: str, node: str = DRIVER_NODE) -> str:
    """Full name of the driver service ``name`` (one of :data:`DRIVER_SERVICES`)."""
    if name not in DRIVER_SERVICES:
        raise ValueError(f'no driver service {name!r}; services: {DRIVER_SERVICES}')
    return f'{node}/{name}'


#: Node name of the controller node the graph starts (a hosted controller, dodo_control.registry).
HOSTED_CONTROLLER_NODE = 'controller'
#: Names of the nodes that consume commands and announce the controller they bound on
#: APPLIED_CONTROLLER (the recorder believes these only, in its own namespace).
COMMAND_CONSUMER_NODES = ('simulator', DRIVER_NODE)
#: ``kind`` of the bound controller in the APPLIED_CONTROLLER announcement: the controller node
#: of the graph (replayable through its controller) or any other node (docs/bags.md).
CONTROLLER_KINDS = ('hosted', 'external')

DRIVER_ENABLE = driver_service('enable')
DRIVER_DISABLE = driver_service('disable')
DRIVER_ESTOP = driver_service('estop')
DRIVER_CLEAR_ERRORS = driver_service('clear_errors')
DRIVER_CALIBRATE = driver_service('calibrate')

#: Frame in which contact forces, markers and the floating base are expressed.
WORLD_FRAME = 'world'


def contact_topic(frame: str) -> str:
    """
    Topic of the measured force on contact frame ``frame``.

    For the hopper's ``foot`` it is ``foot_contact``, for a biped's ``left_foot``
    ``left_foot_contact``.
    """
    if not frame or not frame.replace('_', 'a').isalnum():
        raise ValueError(f'contact frame name {frame!r} cannot form a topic name '
                         f'(letters, digits and _ only)')
    return f'{frame}_contact'


#: The hopper's single foot contact topic.
FOOT_CONTACT = contact_topic('foot')

#: Suffix of the frame a contact force is expressed in (``docs/ros_contract.md``, "Frames").
CONTACT_FRAME_SUFFIX = '_contact'


def contact_frame_id(frame: str) -> str:
    """
    Return the ``header.frame_id`` of the contact wrench of link ``frame``.

    A frame at the origin of the contact link with the axes of the fixed frame (``world``, or
    ``odom`` for a floating base): tf gives it as the child of the link (translation 0, rotation
    the inverse of the link's orientation), so viewers draw the force at the foot while its
    components stay the world components the simulator computes and the controller uses.
    """
    return f'{frame}{CONTACT_FRAME_SUFFIX}'


def world_aligned_frame(frame_id: str, frame: str) -> bool:
    """
    Say whether a contact wrench of link ``frame`` with ``frame_id`` has world axes.

    True for :func:`contact_frame_id` of the link, for the fixed frames (``world``, ``odom``:
    bags written before contact frames existed) and for an unset ``frame_id`` (a hand-written
    sensor publisher that states no frame: the contract's components are world ones); a
    consumer must not read any other frame as world components.
    """
    return frame_id in (contact_frame_id(frame), WORLD_FRAME, ODOM_FRAME, '')


#: REP-105 frames of a floating-base robot: the fixed odometry frame (the simulator's world).
ODOM_FRAME = 'odom'
#: Ground-truth odometry of the robot's base (nav_msgs/Odometry, REP-105).
ODOM = 'odom'
ODOM_TYPE = 'nav_msgs/msg/Odometry'
#: The IMU (sensor_msgs/Imu, ``frame_id`` = its link): what it measures, at ``imu_period``.
IMU = 'imu'
IMU_TYPE = 'sensor_msgs/msg/Imu'
#: Namespace of the ground truth of a sensor whose readings are not exact (noise, bias,
#: latency, quantisation: docs/ros_contract.md "Sensors"): ``ground_truth/joint_states``,
#: ``ground_truth/<frame>_contact``, ``ground_truth/imu``, the exact values at the same stamps.
GROUND_TRUTH = 'ground_truth'


def ground_truth_topic(topic: str) -> str:
    """Return the topic of the ground truth of sensor topic ``topic`` (``ground_truth/...``)."""
    return f'{GROUND_TRUTH}/{topic}'


#: Message type of each fixed topic (contact topics: :data:`CONTACT_TYPE`).
TOPIC_TYPES = {
    CLOCK: 'rosgraph_msgs/msg/Clock',
    JOINT_STATES: 'sensor_msgs/msg/JointState',
    JOINT_COMMANDS: 'sensor_msgs/msg/JointState',
    EFFORT_COMMANDS: 'std_msgs/msg/Float64MultiArray',
    ROBOT_DESCRIPTION: 'std_msgs/msg/String',
    TF: 'tf2_msgs/msg/TFMessage',
    TF_STATIC: 'tf2_msgs/msg/TFMessage',
    DIAGNOSTICS: 'diagnostic_msgs/msg/DiagnosticArray',
    ESTOP: 'std_msgs/msg/Bool',
    PARAMETER_EVENTS: 'rcl_interfaces/msg/ParameterEvent',
    CONTROLLER_STATE: 'sensor_msgs/msg/JointState',
    CONTROLLER_MARKERS: 'visualization_msgs/msg/MarkerArray',
    PUSH: 'geometry_msgs/msg/Vector3',
    ROS2_CONTROL_COMMANDS: 'sensor_msgs/msg/JointState',
    ROS2_CONTROL_STATES: 'sensor_msgs/msg/JointState',
    FORCE: 'geometry_msgs/msg/Vector3',
    APPLIED_CONTROLLER: 'std_msgs/msg/String',
    SIM_EVENTS: 'std_msgs/msg/String',
    RECORDED_CONFIGURATIONS: 'std_msgs/msg/String',
    IGNORED_COMMANDS: 'sensor_msgs/msg/JointState',
    ODOM: ODOM_TYPE,
    IMU: IMU_TYPE,
    GROUND_TRUTH + '/' + JOINT_STATES: 'sensor_msgs/msg/JointState',
    GROUND_TRUTH + '/' + IMU: IMU_TYPE,
}
CONTACT_TYPE = 'geometry_msgs/msg/WrenchStamped'


def topic_type(topic: str) -> str | None:
    """
    Contract message type of ``topic`` (contact topics included).

    None if not a contract topic.
    """
    if topic.lstrip('/') in TOPIC_TYPES:
        return TOPIC_TYPES[topic.lstrip('/')]
    # a contact topic of this robot: relative, at the top of its namespace
    if topic.endswith('_contact') and topic.count('/') == 0:
        return CONTACT_TYPE
    return None


#: Topics the simulator publishes every control period (contact topics come per frame).
SIMULATOR_STATE_TOPICS = (CLOCK, JOINT_STATES)


def recorded_topics(contact_frames=('foot',), command_convention: str = 'stamped') -> tuple:
    """
    Topics the recorder writes to a bag for a robot with these contact frames.

    Everything a bag needs to describe itself (``docs/bags.md``): the state streams, the
    stamped commands (and the ros2_control-style ones of older controllers), the controller's
    channels and markers, the robot description, ``/tf`` + ``/tf_static`` (recorded from
    robot_state_publisher, or computed by the recorder from ``/joint_states`` when nothing
    publishes them), every node's parameters (declarations, runtime changes) and the driver's
    diagnostics, and the simulator's events (resets, states set, runtime parameter changes).
    Under ``command_convention: ros2_control`` also the topic-based system's
    states and commands (the simulator's states go there, not to ``/joint_states``).
    """
    convention = ((ROS2_CONTROL_STATES, ROS2_CONTROL_COMMANDS)
                  if command_convention == 'ros2_control' else ())
    return ((CLOCK, JOINT_STATES) + tuple(contact_topic(f) for f in contact_frames)
            + (JOINT_COMMANDS, EFFORT_COMMANDS, CONTROLLER_STATE, CONTROLLER_MARKERS,
               ROBOT_DESCRIPTION, TF, TF_STATIC, PARAMETER_EVENTS, DIAGNOSTICS,
               APPLIED_CONTROLLER, ODOM, IMU, SIM_EVENTS) + convention
            + ground_truth_topics(contact_frames))


def ground_truth_topics(contact_frames=('foot',)) -> tuple:
    """Return the ground-truth topics of a robot with these contact frames (when published)."""
    return tuple(ground_truth_topic(t) for t in (JOINT_STATES, IMU) + tuple(
        contact_topic(f) for f in contact_frames))


#: Topics recorded by default (the hopper).
RECORDED_TOPICS = recorded_topics()


def hardware_recorded_topics(contact_frames=('foot',),
                             command_convention: str = 'stamped') -> tuple:
    """
    Topics the recorder writes on hardware (a driver instead of the simulator).

    No /clock, no ground truth (``odom``, ``ground_truth/...``) and no simulator events, plus
    the /estop input (the driver's /diagnostics is recorded everywhere).
    """
    simulator_only = (CLOCK, ODOM, SIM_EVENTS) + ground_truth_topics(contact_frames)
    return tuple(t for t in recorded_topics(contact_frames, command_convention)
                 if t not in simulator_only) + (ESTOP,)


#: Topics recorded on hardware by default (the hopper).
HARDWARE_RECORDED_TOPICS = hardware_recorded_topics()


# -- QoS (rclpy imported when called) ----------------------------------------------------------

#: Writer history of the 1 kHz lockstep state and command streams, messages: reliable, and deep
#: enough (5 s) that a recorder starved of CPU on a loaded machine loses nothing.
STREAM_DEPTH = 5000


def stream_qos():
    """Reliable, keep-last ``STREAM_DEPTH``: the lockstep state and command streams."""
    from rclpy.qos import QoSProfile, ReliabilityPolicy
    return QoSProfile(depth=STREAM_DEPTH, reliability=ReliabilityPolicy.RELIABLE)


#: Reader history of the newest-first inputs (the controller's states, realtime commands),
#: messages: a backlog longer than this is dropped, and the reader takes what is queued and acts
#: on the newest (:func:`dodo_sim.ros.runtime.drain`).
INPUT_DEPTH = 10


def input_qos():
    """
    Best effort, keep-last ``INPUT_DEPTH`` (the sensor-data profile).

    It is for inputs where only the newest sample matters. A reliable reader would hold newer
    samples back until older ones lost while it was stalled are repaired (Fast DDS: measured 0.7 s
    after a 0.8 s SIGSTOP of the controller ended), i.e. feed it stale states exactly when it is
    late already.
    """
    from rclpy.qos import QoSProfile, ReliabilityPolicy
    return QoSProfile(depth=INPUT_DEPTH, reliability=ReliabilityPolicy.BEST_EFFORT)


def lockstep_input_qos():
    """
    Return the QoS of the controller's state readers in lockstep: reliable, a short history.

    Each state waits for its answer, so one lost sample would stall the run (measured: a
    best-effort state sent while the controller was SIGSTOPped was never delivered and simulated
    time waited for ever); with one state in flight there is no newer sample for a repair to hold
    back.
    """
    from rclpy.qos import QoSProfile, ReliabilityPolicy
    return QoSProfile(depth=INPUT_DEPTH, reliability=ReliabilityPolicy.RELIABLE)


def command_qos():
    """
    Reliable, keep-all: the simulator's lockstep command reader.

    Every command is looked at (its stamp says which state it answers), so none may be dropped,
    whatever else is sent.
    """
    from rclpy.qos import HistoryPolicy, QoSProfile, ReliabilityPolicy
    return QoSProfile(history=HistoryPolicy.KEEP_ALL, depth=STREAM_DEPTH,
                      reliability=ReliabilityPolicy.RELIABLE)


def ros2_control_command_qos():
    """
    Return the QoS the topic-based system publishes its commands with.

    ``rclcpp::QoS(1)`` (reliable, volatile, keep last 1; joint_state_topic_hardware_interface.cpp,
    on_init). The simulator reads with it (a deeper reader changes nothing: the writer keeps one
    sample).
    """
    from rclpy.qos import QoSProfile, ReliabilityPolicy
    return QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE)


#: Writer history of /tf, messages: tf2_ros's DynamicBroadcasterQoS (robot_state_publisher's).
TF_DEPTH = 100


def tf_qos():
    """Reliable, volatile, keep-last ``TF_DEPTH``: /tf as tf2_ros's broadcaster offers it."""
    from rclpy.qos import QoSProfile, ReliabilityPolicy
    return QoSProfile(depth=TF_DEPTH, reliability=ReliabilityPolicy.RELIABLE)


def events_qos():
    """Reliable, transient local, depth ``EVENTS_DEPTH``: ``simulator/events``."""
    from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
    return QoSProfile(depth=EVENTS_DEPTH, reliability=ReliabilityPolicy.RELIABLE,
                      durability=DurabilityPolicy.TRANSIENT_LOCAL)


def latched_qos():
    """Reliable, transient local, depth 1: /robot_description, /tf_static, configuration."""
    from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
    return QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE,
                      durability=DurabilityPolicy.TRANSIENT_LOCAL)


__all__ = [name for name in dir() if name.isupper() or name in (
    'contact_topic', 'contact_frame_id', 'world_aligned_frame', 'topic_type',
    'normalize_namespace', 'resolve', 'remap_arguments',
    'bag_namespace', 'relative_name', 'recorded_topics', 'hardware_recorded_topics',
    'ground_truth_topic', 'ground_truth_topics',
    'driver_service', 'stream_qos', 'input_qos', 'command_qos', 'ros2_control_command_qos',
    'tf_qos', 'latched_qos', 'events_qos', 'sim_service')]
