# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

r"""
``recorder``: record ROS 2 topics to a rosbag2 MCAP bag with the pure-Python ``rosbags`` library.

Run (plain machine or ROS install)::

    python -m dodo_sim.ros.recorder --ros-args -p bag:=/tmp/run1 \
        -p topics:="['/joint_states', '/effort_controller/commands', '/clock']"
    ros2 run dodo_sim recorder --ros-args -p bag:=/tmp/run1          # after colcon build

Parameters (``RecorderConfig`` holds the defaults and their meaning):

* ``bag`` (string, required): bag directory to create; it must not exist yet.
* ``topics`` (string array): topics to record; default :data:`dodo_sim.tools.bag.DEFAULT_TOPICS`
  (:func:`dodo_sim.ros.contract.recorded_topics`: ``/clock``, ``/joint_states``,
  ``/foot_contact``, ``/joint_commands``, ``/effort_controller/commands``, ``/controller/state``,
  ``/controller/markers``, ``/robot_description``, ``/tf``, ``/tf_static``,
  ``/parameter_events``, ``/diagnostics``). Missing topics are fine.
* ``tf`` (``auto`` | ``compute`` | ``record``): where ``/tf`` and ``/tf_static`` come from.
  ``compute``: the recorder writes them itself from ``/joint_states`` and ``/robot_description``
  (:mod:`dodo_sim.ros.tf_frames`, robot_state_publisher's frames); ``record``: only what other
  nodes publish; ``auto`` (default): ``compute`` unless a ``/tf`` publisher (e.g.
  robot_state_publisher) is on the graph when the first joint state with a known robot
  description arrives.
* ``tf_max_jump_s`` (double, s): a joint state stamped further ahead of the last ``/tf`` is a stray
  left out of ``/tf`` unless the next one continues from it.
* ``tf_period_s`` (double, s of sim time): at most one computed ``/tf`` message per period of the
  joint-state stamps (0: one per joint state).
* ``parameter_snapshots`` (bool): write every node's parameters into the bag (below).
* ``contact_topics`` (bool): also record every ``/<frame>_contact`` topic (WrenchStamped) that
  shows up on the graph, so any robot's contact frames are recorded with the default topics.
* ``flush_period_s`` (double, s): the open MCAP chunk is closed and flushed to disk at least this
  often, so a recorder killed with SIGKILL loses at most this much (``dodo bag recover``).
* ``queue_depth`` (int, messages): subscription history depth (KEEP_LAST, RELIABLE), big enough
  that no message is lost at 1 kHz when the recorder falls behind for a few seconds.
* ``discovery_period_s`` (double, s): how often topics not yet subscribed are looked up on the
    graph.
* ``executor`` (``events`` | ``single``): rclpy executor.  ``events`` (default,
  ``rclpy.experimental.EventsExecutor``) needs less than half the CPU of ``single`` at 1 kHz; it
  takes messages in arrival order and the bag time is the wall time (ns) at which the message is
  taken (rclpy 9.1's EventsExecutor cannot pass the DDS timestamps).
* ``timestamp`` (``send`` | ``receive``, only with ``executor: single``): the bag time is the
  publisher's DDS source timestamp (``send``: causal order across topics on one host) or the DDS
  reception time (``receive``, like ``ros2 bag record``).

Behaviour:

* The contract topics of docs/ros_contract.md are subscribed at once with their contract types, so
  nothing published after the ``ready`` line is lost.  Other topics are subscribed when they show
  up on the graph, with the message class imported from the type name (a contract topic that
  shows up with another type, before any message was recorded, is subscribed again with that
  type).  Messages are stored as the serialized CDR bytes (``raw=True``).
* QoS: RELIABLE, KEEP_LAST(``queue_depth``); TRANSIENT_LOCAL for ``/robot_description`` (latched)
  and for any topic whose publishers all offer TRANSIENT_LOCAL; BEST_EFFORT if a publisher only
  offers that.  A publisher appearing later with incompatible QoS (e.g. BEST_EFFORT on a contract
  topic) makes the recorder subscribe again with matching QoS (warning logged).  The publishers'
  QoS are written to the bag (``offered_qos_profiles``).
* Message definitions come from the rosbags typestore (``Stores.ROS2_KILTED``); types it does not
  know are described from the generated Python message class and registered.
* Parameters: ``/parameter_events`` is recorded (runtime changes of every node, with their
  time). A node's own declaration event is published before the recorder's subscription can
  match (measured: it never arrives), so with ``parameter_snapshots`` the recorder asks every
  node it discovers for its parameters (``list_parameters`` + ``get_parameters`` services, as
  ``ros2 param dump`` does) and writes the answer as a ``ParameterEvent`` with
  ``new_parameters`` (node = the node's full name) on ``/parameter_events``: the bag holds the
  resolved configuration of every node at start (params file, ``-p`` overrides, defaults) and
  every change after it (docs/bags.md, docs/ros_contract.md).
* Prints ``dodo recorder: ready <bag>`` on stdout (flushed) once the initial subscriptions exist.
* SIGINT / SIGTERM: stops, takes the messages still queued (until 0.2 s pass without one, at
  most 4 s; a second signal ends this at once — e.g. launch's SIGTERM after SIGINT), closes the
  bag (MCAP summary and ``metadata.yaml`` written), prints the message counts and exits 0.  Exit 2
  on bad parameters
  (e.g. the bag directory exists).
"""
from __future__ import annotations

from dataclasses import dataclass, fields
import importlib
from pathlib import Path
import signal
import struct
import sys
import time
from typing import Sequence

from dodo_sim.ros import contract, runtime
from dodo_sim.tools.bag import (CONTRACT_TYPES, DEFAULT_TOPICS, flush_chunk, make_typestore,
                                register_msg_class)
from dodo_sim.tools.live_view import clock_ns


@dataclass(frozen=True)
class RecorderConfig:
    """Recorder parameters (ROS parameters of the same names override them)."""

    #: bag directory to create (must not exist)
    bag: str = ''
    #: topics to record
    topics: tuple[str, ...] = DEFAULT_TOPICS
    #: subscription history depth, messages (KEEP_LAST, RELIABLE)
    queue_depth: int = 20000
    #: period of the graph lookup for topics not yet subscribed, s
    discovery_period_s: float = 0.2
    #: rclpy executor: 'events' (rclpy.experimental.EventsExecutor; bag time = wall time when
    #: the message is taken) or 'single' (SingleThreadedExecutor; bag time per ``timestamp``)
    executor: str = 'events'
    #: with executor 'single': 'send' (publisher source timestamp) or 'receive' (DDS reception)
    timestamp: str = 'send'
    #: source of /tf and /tf_static: 'auto', 'compute' (from /joint_states) or 'record'
    tf: str = 'auto'
    #: at most one computed /tf message per this period of joint-state stamps, s (0: every one)
    tf_period_s: float = 0.01
    #: a joint state stamped more than this ahead of the newest one used for /tf is taken as a
    #: stray (a stale publisher, a wrong clock) unless the next one continues from it, s
    tf_max_jump_s: float = 1.0
    #: write every discovered node's parameters to /parameter_events (new_parameters)
    parameter_snapshots: bool = True
    #: also record every contact topic (/<frame>_contact, WrenchStamped) seen on the graph
    contact_topics: bool = True
    #: the open MCAP chunk is written to disk at least this often, s (wall clock)
    flush_period_s: float = 0.25
    #: live view (dodo_sim.tools.live_view, docs/viewing.md): '' off, else 'PORT' or
    #: 'HOST:PORT' of a Foxglove WebSocket server streaming what is recorded (host default
    #: 127.0.0.1; port 0: any free one)
    live: str = ''
    #: live view: at most this many messages per wall-clock second on each channel, Hz (0: all)
    live_max_rate_hz: float = 60.0
    #: live view: per-topic limits overriding live_max_rate_hz, '/topic=HZ' (0: all)
    live_topic_rates: tuple[str, ...] = ('/diagnostics=5', '/controller/markers=30')
    #: live view: messages queued per client before its oldest are dropped
    live_backlog: int = 1024
    #: print 'dodo recorder: progress sim_time_s=... joint_states=...' this often, s (wall
    #: clock; 0: never); dodo hop reads it for its progress line
    progress_period_s: float = 0.0

    def __post_init__(self):
        if not self.bag:
            raise ValueError("parameter 'bag' (bag directory to create) is required")
        if self.timestamp not in ('send', 'receive'):
            raise ValueError(
                f"parameter 'timestamp' must be 'send' or 'receive', got {self.timestamp!r}")
        if self.executor not in ('events', 'single'):
            raise ValueError(
                f"parameter 'executor' must be 'events' or 'single', got {self.executor!r}")
        if self.queue_depth < 1:
            raise ValueError(f"parameter 'queue_depth' must be >= 1, got {self.queue_depth}")
        if not self.discovery_period_s > 0.0:
            raise ValueError(
                f"parameter 'discovery_period_s' must be > 0, got {self.discovery_period_s}")
        if self.tf not in ('auto', 'compute', 'record'):
            raise ValueError(
                f"parameter 'tf' must be 'auto', 'compute' or 'record', got {self.tf!r}")
        if not self.tf_period_s >= 0.0:
            raise ValueError(f"parameter 'tf_period_s' must be >= 0 s, got {self.tf_period_s}")
        if not self.tf_max_jump_s > 0.0:
            raise ValueError(f"parameter 'tf_max_jump_s' must be > 0 s, got {self.tf_max_jump_s}")
        if not self.flush_period_s > 0.0:
            raise ValueError(
                f"parameter 'flush_period_s' must be > 0 s, got {self.flush_period_s}")
        if not self.live_max_rate_hz >= 0.0:
            raise ValueError(f"parameter 'live_max_rate_hz' must be >= 0 Hz, "
                             f'got {self.live_max_rate_hz}')
        if self.live_backlog < 1:
            raise ValueError(f"parameter 'live_backlog' must be >= 1, got {self.live_backlog}")
        if not self.progress_period_s >= 0.0:
            raise ValueError(f"parameter 'progress_period_s' must be >= 0 s, "
                             f'got {self.progress_period_s}')
        if self.live:
            from dodo_sim.tools.live_view import parse_address, parse_topic_rates
            parse_address(self.live)
            parse_topic_rates(self.live_topic_rates)


#: topics that publishers latch (TRANSIENT_LOCAL) by contract
LATCHED_TOPICS = (contract.ROBOT_DESCRIPTION, contract.TF_STATIC, contract.APPLIED_CONTROLLER)
#: discovery periods a node's parameter services are waited for before its snapshot is given up
MAX_SNAPSHOT_ATTEMPTS = 50
#: period at which parameter snapshots in progress are advanced, s
SNAPSHOT_POLL_S = 0.01
#: how often a topic is subscribed again after an incompatible-QoS event
MAX_RESUBSCRIPTIONS = 3
#: discovery periods a failing subscription is retried (e.g. while the middleware still holds
#: the topic with its previous type)
MAX_SUBSCRIBE_ATTEMPTS = 50


def message_class(type_name: str):
    """Python message class for ``pkg/msg/Name`` (or ``pkg/Name``)."""
    parts = type_name.split('/')
    if len(parts) == 2:
        parts = [parts[0], 'msg', parts[1]]
    if len(parts) != 3:
        raise ValueError(f'not a ROS message type name: {type_name!r}')
    try:
        module = importlib.import_module(f'{parts[0]}.{parts[1]}')
        return getattr(module, parts[2])
    except (ImportError, AttributeError) as exc:
        raise ValueError(f'cannot import message type {type_name!r}: {exc}') from exc


def _rosbags_qos(profile):
    """Rclpy QoSProfile -> rosbags Qos (for the bag's offered_qos_profiles)."""
    from rosbags.interfaces import (Qos, QosDurability, QosHistory, QosLiveliness, QosReliability,
                                    QosTime)

    def duration(d):
        ns = d.nanoseconds if hasattr(d, 'nanoseconds') else int(d)
        if ns >= 2**63 - 1 or ns < 0:  # "infinite"
            return QosTime(2147483647, 4294967295)
        return QosTime(ns // 10**9, ns % 10**9)

    return Qos(history=QosHistory(int(profile.history)),
               depth=int(profile.depth),
               reliability=QosReliability(int(profile.reliability)),
               durability=QosDurability(int(profile.durability)),
               deadline=duration(profile.deadline),
               lifespan=duration(profile.lifespan),
               liveliness=QosLiveliness(int(profile.liveliness)),
               liveliness_lease_duration=duration(profile.liveliness_lease_duration),
               avoid_ros_namespace_conventions=bool(profile.avoid_ros_namespace_conventions))


class _Topic:
    """One recorded topic: subscription, bag connection (created at the first message), count."""

    def __init__(self, name: str, type_name: str):
        self.name = name
        self.type_name = type_name
        self.subscription = None
        self.connection = None
        self.count = 0
        self.resubscribe = False     # subscribe again (QoS) at the next discovery period
        self.resubscriptions = 0
        self.waiting = False         # (re)subscription pending
        self.unrecordable = False    # its type cannot be described in the bag
        self.attempts = 0
        self.computed = False        # written by the recorder itself (/tf from joint states)


def _importable(type_name: str) -> bool:
    try:
        message_class(type_name)
    except ValueError:
        return False
    return True


def _copy_parameter_value(cls, value):
    """Rclpy rcl_interfaces/ParameterValue -> the rosbags class ``cls`` (same type and fields)."""
    import numpy as np
    return cls(type=int(value.type), bool_value=bool(value.bool_value),
               integer_value=int(value.integer_value), double_value=float(value.double_value),
               string_value=str(value.string_value),
               byte_array_value=np.frombuffer(b''.join(value.byte_array_value), dtype=np.uint8),
               bool_array_value=np.asarray(list(value.bool_array_value), dtype=bool),
               integer_array_value=np.asarray(list(value.integer_array_value), dtype=np.int64),
               double_array_value=np.asarray(list(value.double_array_value), dtype=float),
               string_array_value=list(value.string_array_value))


class _Snapshot:
    """Parameter snapshot of one node: its list/get parameter service clients and progress."""

    def __init__(self, fqn: str):
        self.fqn = fqn
        self.state = 'waiting'       # waiting -> listing -> getting -> done | failed
        self.list_client = None
        self.get_client = None
        self.future = None
        self.names: list = []
        self.attempts = 0


class _TfWriter:
    """
    ``/tf`` + ``/tf_static`` computed from the recorded joint states.

    (robot_state_publisher's frames, :mod:`dodo_sim.ros.tf_frames`).
    """

    TYPE = 'tf2_msgs/msg/TFMessage'

    def __init__(self, recorder: 'Recorder'):
        self.recorder = recorder
        self.log = recorder.node.get_logger()
        self.mode = recorder.config.tf
        self.computing = self.mode == 'compute'
        self.decided = self.mode == 'compute'
        self.tree = None
        self.positions: dict = {}
        self.period_ns = int(round(recorder.config.tf_period_s * 1e9))
        self.last_ns = None
        self.static_written = False
        self.split = False
        self.joint_last_ns: dict = {}
        self.max_jump_ns = int(round(recorder.config.tf_max_jump_s * 1e9))
        self.jump_ns = None          # stamp of a joint state far ahead, not yet confirmed
        self.strays = 0              # joint states left out of /tf as strays
        self.contact_links: list = []    # links whose contact wrenches are recorded
        self.base_pose = None        # floating base: (position, xyzw) of the newest odom
        self.odom_last_ns = None
        # floating base: a contact frame's axes need the base pose and the joint positions of
        # one stamp, which come on two topics: joined by stamp (the newest few of each)
        self.base_by_stamp: dict = {}
        self.positions_by_stamp: dict = {}

    def on_description(self, log_ns: int, data: bytes) -> None:
        from dodo_sim.physics.robot import ModelError
        from dodo_sim.ros.tf_frames import TfTree
        from rclpy.serialization import deserialize_message
        from std_msgs.msg import String
        xml = deserialize_message(data, String).data
        try:
            self.tree = TfTree(xml)
        except (ModelError, ValueError) as exc:
            self.tree = None
            self.log.error(f'no {contract.TF} from the recorder: cannot use the robot '
                           f'description: {exc}')
            return
        self.static_written = False
        self.last_ns = None
        self.joint_last_ns = {}
        self.jump_ns = None
        self.odom_last_ns = None
        if self.computing:
            self._write_static(log_ns)

    def _decide(self) -> None:
        self.decided = True
        foreign = [i.node_name for i in self.recorder.node.get_publishers_info_by_topic(
            contract.TF)]
        if foreign:
            self.log.info(f'{contract.TF} is published by {sorted(set(foreign))}: recording it '
                          f'(tf: auto)')
            return
        self.computing = True
        self.recorder.take_over_tf()
        self.log.info(f'no {contract.TF} publisher: computing {contract.TF} and '
                      f'{contract.TF_STATIC} from {contract.JOINT_STATES} (tf: auto)')

    def _write_static(self, log_ns: int) -> None:
        from dodo_sim.ros.tf_frames import tf_message
        transforms = self.tree.static_transforms()
        if transforms:
            store = self.recorder.typestore
            self.recorder.write_computed(
                contract.TF_STATIC, self.TYPE, log_ns,
                store.serialize_cdr(tf_message(store, 0, transforms), self.TYPE))
        self.static_written = True

    def on_joint_state(self, log_ns: int, data: bytes) -> None:
        """
        robot_state_publisher's rule: the transforms of the joints in this message.

        Stamped with its stamp, each at most once per ``tf_period_s``.
        """
        if self.tree is None:
            return
        if not self.decided:
            self._decide()
        if not self.computing:
            return
        if not self.static_written:
            self._write_static(log_ns)
        if self.last_ns is not None and len(data) >= 12:
            # the stamp (first, after the 4-byte CDR header), read without deserializing (26 us
            # at 1 kHz)
            sec, nanosec = struct.unpack_from('<iI' if data[1] == 1 else '>iI', data, 4)
            ns = sec * 1_000_000_000 + nanosec
            if ns > self.last_ns + self.max_jump_ns:
                if not self._confirms_jump(ns):
                    return
            else:
                self.jump_ns = None     # the stream goes on: a jump before it was a stray
            # every message so far held every joint: this one is skipped within the period
            if (not self.split and self.last_ns is not None
                    and ns < self.last_ns + self.period_ns):
                return
        from dodo_sim.ros.tf_frames import tf_message
        from rclpy.serialization import deserialize_message
        from sensor_msgs.msg import JointState
        msg = deserialize_message(data, JointState)
        stamp_ns = msg.header.stamp.sec * 1_000_000_000 + msg.header.stamp.nanosec
        for name, position in zip(msg.name, msg.position):
            self.positions[name] = position
        names = set(msg.name)
        if any(name not in names for name in self.tree.joint_names):
            self.split = True         # joints from several publishers: look at every message
        due = [name for name in self.tree.joint_names if name in names and (
            name not in self.joint_last_ns
            or stamp_ns >= self.joint_last_ns[name] + self.period_ns)]
        if not due:
            return
        for name in due:
            self.joint_last_ns[name] = stamp_ns
        self.last_ns = stamp_ns if self.last_ns is None else max(self.last_ns, stamp_ns)
        q = self.tree.configuration(self.positions, self.base_pose)
        transforms = self.tree.moving_transforms(q, due)
        if self.contact_links and not self.tree.floating_base:
            # world axes at each contact link (docs/ros_contract.md "Frames")
            transforms += self.tree.contact_transforms(q, self.contact_links)
        elif self.contact_links:
            self.positions_by_stamp[stamp_ns] = dict(self.positions)
            self._join_contacts(log_ns, stamp_ns)
        store = self.recorder.typestore
        self.recorder.write_computed(contract.TF, self.TYPE, log_ns, store.serialize_cdr(
            tf_message(store, stamp_ns, transforms), self.TYPE))

    def on_contact(self, topic: str) -> None:
        """Add the contact frame of ``topic``'s link to the computed /tf (a wrench came)."""
        link = topic.rsplit('/', 1)[-1][:-len(contract.CONTACT_FRAME_SUFFIX)]
        if link in self.contact_links or self.tree is None or link not in self.tree.links:
            return
        self.contact_links.append(link)

    def on_odom(self, log_ns: int, data: bytes) -> None:
        """
        Floating base: ``odom`` -> root link from the ground-truth odometry (REP-105).

        Stamped with the odometry's stamp, at most once per ``tf_period_s``; a robot attached to
        ``world`` by its URDF joints has that chain from its joint states already.
        """
        if self.tree is None or not self.tree.floating_base or not self.computing:
            return
        from dodo_sim.ros.tf_frames import tf_message
        from nav_msgs.msg import Odometry
        import numpy as np
        from rclpy.serialization import deserialize_message
        msg = deserialize_message(data, Odometry)
        pose = msg.pose.pose
        self.base_pose = (np.array([pose.position.x, pose.position.y, pose.position.z]),
                          np.array([pose.orientation.x, pose.orientation.y,
                                    pose.orientation.z, pose.orientation.w]))
        stamp_ns = msg.header.stamp.sec * 1_000_000_000 + msg.header.stamp.nanosec
        if self.contact_links:
            self.base_by_stamp[stamp_ns] = self.base_pose
            self._join_contacts(log_ns, stamp_ns)
        if self.odom_last_ns is not None and \
                self.odom_last_ns <= stamp_ns < self.odom_last_ns + self.period_ns:
            return
        self.odom_last_ns = stamp_ns
        q = self.tree.configuration(self.positions, self.base_pose)
        store = self.recorder.typestore
        self.recorder.write_computed(contract.TF, self.TYPE, log_ns, store.serialize_cdr(
            tf_message(store, stamp_ns, [self.tree.base_transform(q)]), self.TYPE))

    def _join_contacts(self, log_ns: int, stamp_ns: int) -> None:
        """Floating base: the contact frames at ``stamp_ns`` once its odom and joints are in."""
        from dodo_sim.ros.tf_frames import tf_message
        if stamp_ns in self.base_by_stamp and stamp_ns in self.positions_by_stamp:
            q = self.tree.configuration(self.positions_by_stamp.pop(stamp_ns),
                                        self.base_by_stamp.pop(stamp_ns))
            store = self.recorder.typestore
            self.recorder.write_computed(contract.TF, self.TYPE, log_ns, store.serialize_cdr(
                tf_message(store, stamp_ns, self.tree.contact_transforms(q, self.contact_links)),
                self.TYPE))
        for pending in (self.base_by_stamp, self.positions_by_stamp):
            while len(pending) > 64:               # the other half never came: let go
                del pending[next(iter(pending))]

    def _confirms_jump(self, ns: int) -> bool:
        """
        Return a joint state far ahead of the /tf written so far.

        One such message is a stray (left out, so a far-future stamp cannot end /tf); the next one
        continuing from it (within tf_max_jump_s) confirms a new time base (a reset clock, a paused
        driver).
        """
        previous, self.jump_ns = self.jump_ns, ns
        if previous is not None and previous <= ns <= previous + self.max_jump_ns:
            self.jump_ns = None
            self.last_ns = None
            self.joint_last_ns = {}
            return True
        self.strays += 1
        if self.strays == 1 or self.strays % 1000 == 0:
            self.log.warning(f'{contract.JOINT_STATES} stamped {ns * 1e-9:.3f} s, more than '
                             f'tf_max_jump_s ahead of the last /tf ({self.last_ns * 1e-9:.3f} '
                             f's): left out of the computed {contract.TF} ({self.strays} so '
                             f'far)')
        return False


class Recorder:
    """
    Node + rosbags writer.

    Create, :meth:`run` until :meth:`request_stop`, then it closes.
    """

    def __init__(self, node, config: RecorderConfig):
        from rosbags.rosbag2 import StoragePlugin, Writer

        self.node = node
        self.config = config
        self.typestore = make_typestore()
        self.topics: dict[str, _Topic] = {}
        self.stop_requested = False
        self.drain_aborted = False
        self.total = 0
        self.live = None
        if config.live:        # before the bag exists: a taken port leaves nothing behind
            from dodo_sim.tools.live_view import LiveView, parse_address, parse_topic_rates
            host, port = parse_address(config.live)
            latched = tuple(node.resolve_topic_name(t) for t in LATCHED_TOPICS)
            self.live = LiveView(host=host, port=port, max_rate_hz=config.live_max_rate_hz,
                                 topic_rates=parse_topic_rates(config.live_topic_rates),
                                 unlimited=latched + (
                                     node.resolve_topic_name(contract.PARAMETER_EVENTS),),
                                 latched=latched, backlog=config.live_backlog,
                                 sim_time=contract.CLOCK in config.topics)
            self.live.start(self._live_topics())
        self._sim_time_s: float | None = None
        self._last_state: bytes | None = None
        self.writer = Writer(Path(config.bag), version=9, storage_plugin=StoragePlugin.MCAP)
        self.writer.open()
        self._tf = None
        if (config.tf != 'record' and contract.JOINT_STATES in config.topics
                and contract.ROBOT_DESCRIPTION in config.topics
                and (contract.TF in config.topics or contract.TF_STATIC in config.topics)):
            self._tf = _TfWriter(self)
            if self._tf.computing:
                self.take_over_tf()
        self._snapshots: dict[str, _Snapshot] = {}
        self._applied_gid = b''         # the publisher of the commands the simulator applies
        self._pub_configurations = None
        if config.parameter_snapshots and contract.PARAMETER_EVENTS in config.topics:
            from std_msgs.msg import String
            self._pub_configurations = node.create_publisher(
                String, contract.RECORDED_CONFIGURATIONS, contract.latched_qos())
        self._ignored: _Topic | None = None
        self._flush_warned = False
        self._discover(initial=True)
        from rclpy.clock import Clock, ClockType

        # steady clock: the node may run with use_sim_time (shared params file) and /clock may
        # stop, but discovery and re-subscription must go on
        steady = Clock(clock_type=ClockType.STEADY_TIME)
        self._timer = node.create_timer(config.discovery_period_s, self._discover, clock=steady)
        self._flush_timer = node.create_timer(config.flush_period_s, self.flush, clock=steady)
        # parameter snapshots in progress advance every 10 ms (two service round trips each):
        # the start configuration is in the bag before anyone can change it at run time
        self._snapshot_timer = node.create_timer(SNAPSHOT_POLL_S, self._advance_snapshots,
                                                 clock=steady)
        self._progress_timer = (node.create_timer(config.progress_period_s, self.print_progress,
                                                  clock=steady)
                                if config.progress_period_s > 0 else None)

    # ---- graph -------------------------------------------------------------------------------
    def _discover(self, initial: bool = False) -> None:
        if self.config.parameter_snapshots and contract.PARAMETER_EVENTS in self.config.topics:
            self._snapshot_parameters()
        for topic in self.topics.values():
            if topic.resubscribe and topic.subscription is not None:
                topic.resubscribe = False
                self.node.destroy_subscription(topic.subscription)
                topic.subscription = None
                topic.waiting = True
            if topic.waiting:
                self._subscribe(topic.name, topic.type_name, topic)
        # each topic once, even if the list names it twice (one subscription, one connection)
        pending = [t for t in dict.fromkeys(self.config.topics) if t not in self.topics]
        unconfirmed = [t for t in self.topics.values()
                       if t.subscription is not None and t.connection is None]
        on_graph = None
        if self.config.contact_topics:
            # any robot's contact topics (/<frame>_contact), whatever frames the list names
            # graph names relative to this recorder's namespace: another robot's topics
            # (another namespace) stay absolute and are not contact topics of this robot
            on_graph = {contract.relative_name(name, self.node.get_namespace()): types
                        for name, types in self.node.get_topic_names_and_types()}
            pending += [name for name, types in on_graph.items()
                        if name not in self.topics and name not in pending
                        and contract.CONTACT_TYPE in types
                        and contract.topic_type(name) == contract.CONTACT_TYPE]
        if not pending and not unconfirmed:
            return
        if on_graph is None:
            on_graph = {contract.relative_name(name, self.node.get_namespace()): types
                        for name, types in self.node.get_topic_names_and_types()}
        for topic in unconfirmed:
            # types offered by publishers (the graph also lists this recorder's subscription)
            types = sorted({i.topic_type for i in
                            self.node.get_publishers_info_by_topic(topic.name)})
            if types and topic.type_name not in types:
                self.node.get_logger().warning(
                    f'{topic.name} is published as {types[0]}, not {topic.type_name}; '
                    f'subscribing again with {types[0]}')
                # the middleware frees the old topic type after this callback: subscribe on a
                # later period
                self.node.destroy_subscription(topic.subscription)
                topic.subscription = None
                topic.type_name = types[0]
                topic.waiting = True
        for name in pending:
            types = on_graph.get(name, [])
            if len(types) > 1:
                self.node.get_logger().warning(
                    f'{name} has several types {types}; recording {types[0]}')
            if types:
                self._subscribe(name, types[0])
            elif initial and name in CONTRACT_TYPES and _importable(CONTRACT_TYPES[name]):
                # a type without a Python message package here (tf2_msgs, diagnostic_msgs on a
                # plain machine) is subscribed when a publisher shows up with it
                self._subscribe(name, CONTRACT_TYPES[name])

    def _publisher_qos(self, name: str):
        return [info.qos_profile for info in self.node.get_publishers_info_by_topic(name)]

    def _subscribe(self, name: str, type_name: str, topic: '_Topic | None' = None) -> None:
        """Subscribe (again, keeping the bag connection and count, when ``topic`` is given)."""
        from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy
        try:
            cls = message_class(type_name)
        except ValueError as exc:
            self.node.get_logger().error(f'not recording {name}: {exc}')
            failed = topic or _Topic(name, type_name)
            failed.waiting = False
            self.topics[name] = failed  # do not retry every period
            return
        offered = self._publisher_qos(name)
        durability = DurabilityPolicy.VOLATILE
        if (name in LATCHED_TOPICS and not offered) or (
                offered and all(q.durability == DurabilityPolicy.TRANSIENT_LOCAL
                                for q in offered)):
            durability = DurabilityPolicy.TRANSIENT_LOCAL
        reliability = ReliabilityPolicy.RELIABLE
        if any(q.reliability == ReliabilityPolicy.BEST_EFFORT for q in offered):
            reliability = ReliabilityPolicy.BEST_EFFORT
        qos = QoSProfile(history=HistoryPolicy.KEEP_LAST, depth=self.config.queue_depth,
                         reliability=reliability, durability=durability)
        topic = topic or _Topic(name, type_name)
        if name == contract.JOINT_COMMANDS:
            # the publisher of each command decides where it goes (the applied controller's:
            # JOINT_COMMANDS; any other's: IGNORED_COMMANDS)
            events = self.config.executor == 'events'

            def command(data, info, topic=topic):
                stamp = (time.time_ns() if events else info['source_timestamp']
                         if self.config.timestamp == 'send' else info['received_timestamp'])
                self._write_command(topic, stamp, data, runtime.publisher_gid(info))
            callback = runtime.with_message_info(command)
        elif self.config.executor == 'events':
            # rclpy 9.1 EventsExecutor cannot call back with MessageInfo: time taken here
            def callback(data, topic=topic):
                self._write(topic, time.time_ns(), data)
        else:
            def callback(data, info, topic=topic):
                self._write(topic, info['source_timestamp'] if self.config.timestamp == 'send'
                            else info['received_timestamp'], data)
        from rclpy.event_handler import SubscriptionEventCallbacks

        def incompatible(event, topic=topic):
            if topic.resubscriptions < MAX_RESUBSCRIPTIONS:
                topic.resubscriptions += 1
                topic.resubscribe = True
                self.node.get_logger().warning(
                    f'{topic.name}: a publisher offers incompatible QoS '
                    f'({event.last_policy_kind}); subscribing again with its QoS')
            else:
                self.node.get_logger().error(
                    f'{topic.name}: a publisher offers incompatible QoS '
                    f'({event.last_policy_kind}); its messages are not recorded')

        from rclpy.subscription import RCLError
        self.topics[name] = topic
        try:
            topic.subscription = self.node.create_subscription(
                cls, name, callback, qos, raw=True,
                event_callbacks=SubscriptionEventCallbacks(incompatible_qos=incompatible))
        except RCLError as exc:
            topic.attempts += 1
            topic.waiting = topic.attempts < MAX_SUBSCRIBE_ATTEMPTS
            log = self.node.get_logger()
            (log.info if topic.waiting else log.error)(
                f'{name}: cannot subscribe yet ({exc}); '
                + ('retrying' if topic.waiting else 'giving up'))
            return
        topic.waiting = False

    # ---- writing -----------------------------------------------------------------------------
    def _connection(self, topic: _Topic):
        infos = self.node.get_publishers_info_by_topic(topic.name)
        offered = [_rosbags_qos(i.qos_profile) for i in infos if i.topic_type == topic.type_name]
        publisher_hash = next((str(i.topic_type_hash) for i in infos
                               if i.topic_type == topic.type_name
                               and str(i.topic_type_hash).startswith('RIHS01_')), None)
        if topic.type_name not in self.typestore.fielddefs:
            register_msg_class(self.typestore, topic.type_name, message_class(topic.type_name))
        msgdef, _ = self.typestore.generate_msgdef(topic.type_name, ros_version=2)
        rihs01 = self.typestore.hash_rihs01(topic.type_name)
        if publisher_hash and publisher_hash != rihs01:
            self.node.get_logger().warning(
                f'{topic.name}: type hash of the publisher ({publisher_hash}) differs from the '
                f'rosbags typestore ({rihs01}); storing the publisher hash')
            rihs01 = publisher_hash
        # the bag holds resolved names (/joint_states, or /<namespace>/joint_states)
        return self.writer.add_connection(self.node.resolve_topic_name(topic.name),
                                          topic.type_name, msgdef=msgdef,
                                          rihs01=rihs01, offered_qos_profiles=offered)

    def _write(self, topic: _Topic, stamp: int, data: bytes) -> None:
        if topic.connection is None:
            if topic.unrecordable:
                return
            from rosbags.rosbag2 import WriterError
            from rosbags.typesys import TypesysError
            try:
                topic.connection = self._connection(topic)
            except (ValueError, TypesysError, WriterError) as exc:
                topic.unrecordable = True
                self.node.get_logger().error(f'not recording {topic.name}: cannot describe '
                                             f'{topic.type_name} for the bag: {exc}')
                return
        if not stamp:
            stamp = time.time_ns()
        self.writer.write(topic.connection, int(stamp), data)
        topic.count += 1
        self.total += 1
        if self.live is not None:
            self._to_live(topic.name, topic.type_name, int(stamp), data)
        if self._progress_timer is not None:
            if topic.name == contract.CLOCK:
                self._sim_time_s = clock_ns(data) * 1e-9
            elif topic.name == contract.CONTROLLER_STATE:
                self._last_state = data        # decoded only when the progress line is due
        if topic.name == contract.APPLIED_CONTROLLER:
            self._on_applied_controller(data)
        if self._tf is not None:
            if topic.name == contract.JOINT_STATES:
                self._tf.on_joint_state(int(stamp), data)
            elif topic.name == contract.ROBOT_DESCRIPTION:
                self._tf.on_description(int(stamp), data)
            elif topic.type_name == contract.CONTACT_TYPE:
                self._tf.on_contact(topic.name)
            elif topic.name == contract.ODOM:
                self._tf.on_odom(int(stamp), data)

    def _write_command(self, topic: _Topic, stamp: int, data: bytes, gid: bytes) -> None:
        """
        Record a stamped command as applied or ignored.

        A stamped command: to JOINT_COMMANDS when it comes from the publisher the simulator applies
        (APPLIED_CONTROLLER; before its announcement, or without a simulator: every one), else to
        IGNORED_COMMANDS, so a replay checks the applied commands only.
        """
        applied = self._applied_gid
        if applied and gid and gid[:len(applied)] != applied[:len(gid)]:
            if self._ignored is None:
                self._ignored = _Topic(contract.IGNORED_COMMANDS, topic.type_name)
                self._ignored.computed = True
                self.topics[contract.IGNORED_COMMANDS] = self._ignored
                self.node.get_logger().warning(
                    f'{contract.JOINT_COMMANDS} from a publisher the simulator does not apply '
                    f'({gid.hex()}): recorded as {contract.IGNORED_COMMANDS}')
            self._write(self._ignored, stamp, data)
            return
        self._write(topic, stamp, data)

    def _on_applied_controller(self, data: bytes) -> None:
        import json

        from rclpy.serialization import deserialize_message
        from std_msgs.msg import String
        try:
            announced = json.loads(deserialize_message(data, String).data)
            self._applied_gid = bytes.fromhex(announced['gid'])
        except (ValueError, KeyError, TypeError) as exc:
            self.node.get_logger().error(f'unreadable {contract.APPLIED_CONTROLLER}: {exc}')

    # ---- what the recorder writes itself ------------------------------------------------------
    def take_over_tf(self) -> None:
        """/tf and /tf_static are computed here: drop any subscription to them."""
        for name in (contract.TF, contract.TF_STATIC):
            topic = self.topics.get(name)
            if topic is not None and topic.subscription is not None:
                self.node.destroy_subscription(topic.subscription)
            if topic is None or not topic.count:
                topic = _Topic(name, _TfWriter.TYPE)
                topic.computed = True
                self.topics[name] = topic

    def write_computed(self, name: str, type_name: str, log_ns: int, data: bytes) -> None:
        """Write a message the recorder made (QoS as robot_state_publisher offers it)."""
        topic = self.topics.get(name)
        if topic is None or not topic.computed:
            topic = _Topic(name, type_name)
            topic.computed = True
            self.topics[name] = topic
        if topic.connection is None:
            from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
            latched = name in LATCHED_TOPICS
            offered = QoSProfile(depth=1 if latched else 100,
                                 reliability=ReliabilityPolicy.RELIABLE,
                                 durability=(DurabilityPolicy.TRANSIENT_LOCAL if latched
                                             else DurabilityPolicy.VOLATILE))
            msgdef, _ = self.typestore.generate_msgdef(type_name, ros_version=2)
            topic.connection = self.writer.add_connection(
                self.node.resolve_topic_name(name), type_name, msgdef=msgdef,
                rihs01=self.typestore.hash_rihs01(type_name),
                offered_qos_profiles=[_rosbags_qos(offered)])
        self.writer.write(topic.connection, int(log_ns), data)
        topic.count += 1
        self.total += 1
        if self.live is not None:
            self._to_live(name, type_name, int(log_ns), data)

    def _live_topics(self) -> list:
        """Return (resolved topic, type, msgdef) of every recorded contract topic (live view)."""
        out = []
        for name in self.config.topics:
            type_name = contract.topic_type(name)
            if type_name is not None:
                msgdef, _ = self.typestore.generate_msgdef(type_name, ros_version=2)
                out.append((self.node.resolve_topic_name(name), type_name, msgdef))
        return out

    def _to_live(self, name: str, type_name: str, stamp: int, data: bytes) -> None:
        """
        Pass the message just written to the bag on to the live view.

        The message just written to the bag, to the live view (same bytes, same msgdef).
        """
        is_clock = name == contract.CLOCK
        name = self.node.resolve_topic_name(name)      # viewers see the bag's (resolved) names
        if not self.live.has_topic(name):
            msgdef, _ = self.typestore.generate_msgdef(type_name, ros_version=2)
            self.live.add_topic(name, type_name, msgdef)
        self.live.log(name, data, stamp, is_clock=is_clock)

    def print_progress(self) -> None:
        """One machine-readable progress line on stdout (dodo hop's progress line reads it)."""
        clock = self.topics.get(contract.CLOCK)
        states = self.topics.get(contract.JOINT_STATES)
        t = self._sim_time_s if clock is not None and clock.count else None
        hops = ''
        if self._last_state is not None:       # the hopper's controller counts its hops
            state = self.typestore.deserialize_cdr(self._last_state,
                                                   'sensor_msgs/msg/JointState')
            if 'hops' in state.name:
                hops = f' hops={int(state.position[list(state.name).index("hops")])}'
        print(f'dodo recorder: progress sim_time_s={"-" if t is None else f"{t:.3f}"} '
              f'joint_states={states.count if states is not None else 0}{hops}', flush=True)

    def _snapshot_parameters(self) -> None:
        """Ask every node on the graph once for its parameters (docs at the top)."""
        from rcl_interfaces.srv import GetParameters, ListParameters
        own = self.node.get_fully_qualified_name()
        present = set()
        for name, namespace in self.node.get_node_names_and_namespaces():
            fqn = namespace.rstrip('/') + '/' + name
            if fqn == own or name.startswith('_'):
                continue
            present.add(fqn)
            if fqn not in self._snapshots:
                snap = _Snapshot(fqn)
                snap.list_client = self.node.create_client(ListParameters,
                                                           f'{fqn}/list_parameters')
                snap.get_client = self.node.create_client(GetParameters, f'{fqn}/get_parameters')
                self._snapshots[fqn] = snap
        for fqn, snap in list(self._snapshots.items()):
            if fqn not in present and snap.state not in ('done', 'failed'):
                self.node.get_logger().warning(f'{fqn} left the graph before answering: its '
                                               f'parameters are not in the bag')
                self._finish_snapshot(snap, 'failed')
            if snap.state in ('done', 'failed'):
                if fqn not in present:        # gone: a node of that name later is new
                    del self._snapshots[fqn]
                continue
            snap.attempts += 1                # counted in discovery periods
            if snap.attempts == MAX_SNAPSHOT_ATTEMPTS:
                # never given up while the node is on the graph (a node busy in its constructor
                # answers late; the simulator does not start before its snapshot is here)
                self.node.get_logger().warning(
                    f'{snap.fqn}: no answer from its parameter services yet; still asking '
                    f'(its parameters are not in the bag until it answers)')
        self._advance_snapshots()

    def _advance_snapshots(self) -> None:
        for snap in list(self._snapshots.values()):
            if snap.state not in ('done', 'failed'):
                self._advance_snapshot(snap)

    def _advance_snapshot(self, snap: '_Snapshot') -> None:
        from rcl_interfaces.srv import GetParameters, ListParameters
        if snap.state == 'waiting':
            if snap.list_client.service_is_ready() and snap.get_client.service_is_ready():
                snap.future = snap.list_client.call_async(ListParameters.Request(depth=0))
                snap.state = 'listing'
                return
        elif snap.future is not None and snap.future.done():
            response = snap.future.result()
            if response is None:
                snap.state = 'waiting'
            elif snap.state == 'listing':
                snap.names = list(response.result.names)
                snap.future = snap.get_client.call_async(GetParameters.Request(names=snap.names))
                snap.state = 'getting'
                return
            else:
                self._write_snapshot(snap, response.values)
                self._finish_snapshot(snap, 'done')
                self._publish_configurations()

    def _publish_configurations(self) -> None:
        """
        Publish the nodes whose configuration is in the bag, latched.

        The nodes whose configuration is in the bag, latched (the simulator's start gate).
        """
        import json

        from std_msgs.msg import String
        done = sorted(f for f, s in self._snapshots.items() if s.state == 'done')
        if self._pub_configurations is not None:
            self._pub_configurations.publish(String(data=json.dumps(done)))

    def _finish_snapshot(self, snap: '_Snapshot', state: str) -> None:
        snap.state = state
        snap.future = None
        for client in (snap.list_client, snap.get_client):
            self.node.destroy_client(client)
        snap.list_client = snap.get_client = None

    def _write_snapshot(self, snap: '_Snapshot', values) -> None:
        topic = self.topics.get(contract.PARAMETER_EVENTS)
        if topic is None:
            return
        # serialized with the rosbags typestore: rclpy's serialize_message pads its buffer with
        # up to 8 bytes that rosbags readers reject as a size mismatch
        store = self.typestore
        types = store.types
        value_cls = types['rcl_interfaces/msg/ParameterValue']
        params = [types['rcl_interfaces/msg/Parameter'](name=n, value=_copy_parameter_value(
            value_cls, v)) for n, v in zip(snap.names, values)]
        sec, nanosec = divmod(self.node.get_clock().now().nanoseconds, 1_000_000_000)
        event = types['rcl_interfaces/msg/ParameterEvent'](
            stamp=types['builtin_interfaces/msg/Time'](sec=sec, nanosec=nanosec), node=snap.fqn,
            new_parameters=params, changed_parameters=[], deleted_parameters=[])
        self._write(topic, time.time_ns(),
                    bytes(store.serialize_cdr(event, 'rcl_interfaces/msg/ParameterEvent')))
        self.node.get_logger().info(f'parameters of {snap.fqn} recorded ({len(params)})')

    def flush(self) -> None:
        """
        Close the open MCAP chunk and hand it to the OS.

        (a SIGKILL then loses only what came after).
        """
        if self.writer is None or flush_chunk(self.writer) or self._flush_warned:
            return
        self._flush_warned = True
        self.node.get_logger().warning('this rosbags MCAP writer cannot close chunks early: a '
                                       'killed recorder loses up to 1 MiB of messages')

    # ---- lifecycle ---------------------------------------------------------------------------
    def request_stop(self, *_args) -> None:
        """First call: stop recording after draining the queues; a second call: stop draining."""
        if self.stop_requested:
            self.drain_aborted = True
        self.stop_requested = True

    def run(self, executor, drain_timeout_s: float = 4.0) -> None:
        """
        Spin until a stop is requested.

        Then take what is still queued (until 0.2 s without a message, at most ``drain_timeout_s``,
        or until a second stop request) and close the bag.
        """
        while not self.stop_requested:
            executor.spin_once(timeout_sec=0.1)
        self._timer.cancel()
        self._flush_timer.cancel()
        self._snapshot_timer.cancel()
        if self._progress_timer is not None:
            self._progress_timer.cancel()
        deadline = time.monotonic() + drain_timeout_s
        quiet_since = time.monotonic()
        last_total = self.total
        while (time.monotonic() < deadline and time.monotonic() - quiet_since < 0.2
               and not self.drain_aborted):
            executor.spin_once(timeout_sec=0.02)
            if self.total != last_total:
                last_total = self.total
                quiet_since = time.monotonic()
        self.close()

    def close(self) -> None:
        if self.writer is not None:
            self.writer.close()
            self.writer = None
        if self.live is not None:
            self.live.stop()
            self.live = None

    def counts(self) -> dict[str, int]:
        return {name: t.count for name, t in self.topics.items()
                if t.subscription is not None or t.count or t.computed}


def _declare_config(node) -> RecorderConfig:
    values = {}
    defaults = RecorderConfig.__dataclass_fields__
    for f in fields(RecorderConfig):
        default = defaults[f.name].default
        if isinstance(default, tuple):        # string arrays (an empty default has no type)
            from rcl_interfaces.msg import ParameterDescriptor, ParameterType
            node.declare_parameter(f.name, list(default), ParameterDescriptor(
                type=ParameterType.PARAMETER_STRING_ARRAY))
            values[f.name] = tuple(node.get_parameter(f.name).get_parameter_value()
                                   .string_array_value)
            continue
        node.declare_parameter(f.name, default)
        values[f.name] = node.get_parameter(f.name).value
    return RecorderConfig(**values)


def main(args: Sequence[str] | None = None) -> int:
    import rclpy
    from rclpy.signals import SignalHandlerOptions

    # a stop request that arrives while starting up is kept and honoured once the bag is open
    early_stop = []
    signal.signal(signal.SIGINT, lambda *_: early_stop.append(True))
    signal.signal(signal.SIGTERM, lambda *_: early_stop.append(True))
    rclpy.init(args=args, signal_handler_options=SignalHandlerOptions.NO)
    node = rclpy.create_node('recorder')
    recorder = None
    try:
        from rosbags.rosbag2 import WriterError
        try:
            config = _declare_config(node)
            recorder = Recorder(node, config)
        except (ValueError, WriterError) as exc:
            print(f'dodo recorder: error: {exc}', file=sys.stderr)
            return 2
        signal.signal(signal.SIGINT, recorder.request_stop)
        signal.signal(signal.SIGTERM, recorder.request_stop)
        if early_stop:
            recorder.request_stop()
        if config.executor == 'events':
            from rclpy.experimental import EventsExecutor
            executor = EventsExecutor()
        else:
            from rclpy.executors import SingleThreadedExecutor
            executor = SingleThreadedExecutor()
        executor.add_node(node)
        if recorder.live is not None:
            print(f'dodo recorder: live view {recorder.live.address}', flush=True)
        print(f'dodo recorder: ready {config.bag}', flush=True)
        recorder.run(executor)
        counts = recorder.counts()
        print(f'dodo recorder: closed {config.bag}: '
              + ', '.join(f'{k}={v}' for k, v in counts.items()), flush=True)
        executor.shutdown()
        return 0
    finally:
        if recorder is not None:
            recorder.close()
        node.destroy_node()
        if rclpy.ok():
            rclpy.shutdown()


if __name__ == '__main__':
    sys.exit(main())
