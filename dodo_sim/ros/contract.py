# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
The ROS graph contract of dodo_sim, in one place: topic names, message types, QoS, conventions.

Every node, the recorder, the bag tools and the tests take names and types from here; nothing
else spells a topic. The design document of the graph is ``docs/ros_contract.md``.

================================ ===================================== =============================
topic                            type                                  publisher
================================ ===================================== =============================
/clock                           rosgraph_msgs/Clock                   simulator (sim time source)
/joint_states                    sensor_msgs/JointState                simulator or hardware driver:
                                                                       every joint by name
                                                                       (position, velocity, effort)
/<frame>_contact                 geometry_msgs/WrenchStamped           simulator or driver: force on
                                                                       contact frame <frame>, world
                                                                       frame, N (hopper:
                                                                       /foot_contact)
/joint_commands                  sensor_msgs/JointState                controller: ``effort`` per
                                                                       actuated joint (``name``),
                                                                       header.stamp = stamp of the
                                                                       state it answers (lockstep
                                                                       pairs by this stamp)
/effort_controller/commands      std_msgs/Float64MultiArray            controller: actuated joints
                                                                       in URDF order, N*m
                                                                       (ros2_control convention)
/robot_description               std_msgs/String (transient local)     robot_state_publisher or sim
/tf, /tf_static                  tf2_msgs/TFMessage                    robot_state_publisher, or the
                                                                       plain-machine tf publisher
/diagnostics                     diagnostic_msgs/DiagnosticArray       hardware driver
/estop                           std_msgs/Bool                         anyone: true latches the
                                                                       driver's e-stop
/controller/state                sensor_msgs/JointState (named         controller: header.stamp =
                                 scalar channels in ``position``)      answered state; channel
                                                                       ``config_revision``
/controller/markers              visualization_msgs/MarkerArray        controller
/simulator/push                  geometry_msgs/Vector3                 anyone: impulse on the base,
                                                                       x and z in N*s
/simulator/force                 geometry_msgs/Vector3                 anyone: constant force on the
                                                                       base until changed, N
================================ ===================================== =============================

Services (std_srvs/Trigger): ``/simulator/reset``; the hardware driver's ``/driver/enable``,
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
CLOCK = '/clock'
JOINT_STATES = '/joint_states'
JOINT_COMMANDS = '/joint_commands'
EFFORT_COMMANDS = '/effort_controller/commands'
ROBOT_DESCRIPTION = '/robot_description'
TF = '/tf'
TF_STATIC = '/tf_static'
DIAGNOSTICS = '/diagnostics'
PARAMETER_EVENTS = '/parameter_events'
CONTROLLER_STATE = '/controller/state'
CONTROLLER_MARKERS = '/controller/markers'
PUSH = '/simulator/push'
FORCE = '/simulator/force'
RESET_SERVICE = '/simulator/reset'
#: The hardware driver's e-stop input (std_msgs/Bool; true latches the e-stop).
ESTOP = '/estop'

# -- the hardware driver's services (std_srvs/Trigger) -------------------------------------------
#: Node name of the hardware driver; its services are ``~/<name>`` for each of DRIVER_SERVICES.
DRIVER_NODE = 'driver'
DRIVER_SERVICES = ('enable', 'disable', 'estop', 'calibrate')


def driver_service(name: str, node: str = DRIVER_NODE) -> str:
    """Full name of the driver service ``name`` (one of :data:`DRIVER_SERVICES`)."""
    if name not in DRIVER_SERVICES:
        raise ValueError(f'no driver service {name!r}; services: {DRIVER_SERVICES}')
    return f'/{node}/{name}'


DRIVER_ENABLE = driver_service('enable')
DRIVER_DISABLE = driver_service('disable')
DRIVER_ESTOP = driver_service('estop')
DRIVER_CALIBRATE = driver_service('calibrate')

#: Frame in which contact forces, markers and the floating base are expressed.
WORLD_FRAME = 'world'


def contact_topic(frame: str) -> str:
    """
    Topic of the measured force on contact frame ``frame``.

    (the hopper's ``foot``: ``/foot_contact``; a biped's ``left_foot``: ``/left_foot_contact``).
    """
    if not frame or not frame.replace('_', 'a').isalnum():
        raise ValueError(f'contact frame name {frame!r} cannot form a topic name '
                         f'(letters, digits and _ only)')
    return f'/{frame}_contact'


#: The hopper's single foot contact topic.
FOOT_CONTACT = contact_topic('foot')

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
    FORCE: 'geometry_msgs/msg/Vector3',
}
CONTACT_TYPE = 'geometry_msgs/msg/WrenchStamped'


def topic_type(topic: str) -> str | None:
    """
    Contract message type of ``topic`` (contact topics included).

    None if not a contract topic.
    """
    if topic in TOPIC_TYPES:
        return TOPIC_TYPES[topic]
    if topic.endswith('_contact') and topic.count('/') == 1:
        return CONTACT_TYPE
    return None


#: Topics the simulator publishes every control period (contact topics come per frame).
SIMULATOR_STATE_TOPICS = (CLOCK, JOINT_STATES)


def recorded_topics(contact_frames=('foot',)) -> tuple:
    """
    Topics the recorder writes to a bag for a robot with these contact frames.

    Everything a bag needs to describe itself (``docs/bags.md``): the state streams, the
    stamped commands (and the ros2_control-style ones of older controllers), the controller's
    channels and markers, the robot description, ``/tf`` + ``/tf_static`` (recorded from
    robot_state_publisher, or computed by the recorder from ``/joint_states`` when nothing
    publishes them), every node's parameters (declarations, runtime changes) and the driver's
    diagnostics.
    """
    return ((CLOCK, JOINT_STATES) + tuple(contact_topic(f) for f in contact_frames)
            + (JOINT_COMMANDS, EFFORT_COMMANDS, CONTROLLER_STATE, CONTROLLER_MARKERS,
               ROBOT_DESCRIPTION, TF, TF_STATIC, PARAMETER_EVENTS, DIAGNOSTICS))


#: Topics recorded by default (the hopper).
RECORDED_TOPICS = recorded_topics()


def hardware_recorded_topics(contact_frames=('foot',)) -> tuple:
    """
    Topics the recorder writes on hardware (a driver instead of the simulator).

    No /clock, plus the /estop input (the driver's /diagnostics is recorded everywhere).
    """
    return tuple(t for t in recorded_topics(contact_frames) if t != CLOCK) + (ESTOP,)


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

    Inputs where only the newest sample matters. A reliable reader would hold newer samples back
    until older ones lost while it was stalled are repaired (Fast DDS: measured 0.7 s after a 0.8 s
    SIGSTOP of the controller ended), i.e. feed it stale states exactly when it is late already.
    """
    from rclpy.qos import QoSProfile, ReliabilityPolicy
    return QoSProfile(depth=INPUT_DEPTH, reliability=ReliabilityPolicy.BEST_EFFORT)


def command_qos():
    """
    Reliable, keep-all: the simulator's lockstep command reader.

    Every command is looked at (its stamp says which state it answers), so none may be dropped,
    whatever else is sent.
    """
    from rclpy.qos import HistoryPolicy, QoSProfile, ReliabilityPolicy
    return QoSProfile(history=HistoryPolicy.KEEP_ALL, depth=STREAM_DEPTH,
                      reliability=ReliabilityPolicy.RELIABLE)


def latched_qos():
    """Reliable, transient local, depth 1: /robot_description, /tf_static, configuration."""
    from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
    return QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE,
                      durability=DurabilityPolicy.TRANSIENT_LOCAL)


__all__ = [name for name in dir() if name.isupper() or name in (
    'contact_topic', 'topic_type', 'recorded_topics', 'hardware_recorded_topics',
    'driver_service', 'stream_qos', 'input_qos', 'command_qos',
    'latched_qos')]
