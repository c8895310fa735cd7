"""``recorder``: record ROS 2 topics to a rosbag2 MCAP bag with the pure-Python ``rosbags`` library.

Run (plain machine or ROS install)::

    python -m dodo_sim.ros.recorder --ros-args -p bag:=/tmp/run1 \\
        -p topics:="['/joint_states', '/effort_controller/commands', '/clock']"
    ros2 run dodo_sim recorder --ros-args -p bag:=/tmp/run1          # after colcon build

Parameters (``RecorderConfig`` holds the defaults and their meaning):

* ``bag`` (string, required): bag directory to create; it must not exist yet.
* ``topics`` (string array): topics to record; default :data:`dodo_sim.tools.bag.DEFAULT_TOPICS`
  (``/joint_states``, ``/effort_controller/commands``, ``/clock``, ``/foot_contact``,
  ``/robot_description``, ``/controller/state``, ``/controller/markers``). Missing topics are fine.
* ``queue_depth`` (int, messages): subscription history depth (KEEP_LAST, RELIABLE), big enough
  that no message is lost at 1 kHz when the recorder falls behind for a few seconds.
* ``discovery_period_s`` (double, s): how often topics not yet subscribed are looked up on the graph.
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
* Prints ``dodo recorder: ready <bag>`` on stdout (flushed) once the initial subscriptions exist.
* SIGINT / SIGTERM: stops, takes the messages still queued (until 0.2 s pass without one, at
  most 4 s; a second signal ends this at once — e.g. launch's SIGTERM after SIGINT), closes the
  bag (MCAP summary and ``metadata.yaml`` written), prints the message counts and exits 0.  Exit 2 on bad parameters
  (e.g. the bag directory exists).
"""
from __future__ import annotations

import importlib
import signal
import sys
import time
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Sequence

from dodo_sim.tools.bag import CONTRACT_TYPES, DEFAULT_TOPICS, make_typestore, register_msg_class


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

    def __post_init__(self):
        if not self.bag:
            raise ValueError("parameter 'bag' (bag directory to create) is required")
        if self.timestamp not in ('send', 'receive'):
            raise ValueError(f"parameter 'timestamp' must be 'send' or 'receive', got {self.timestamp!r}")
        if self.executor not in ('events', 'single'):
            raise ValueError(f"parameter 'executor' must be 'events' or 'single', got {self.executor!r}")
        if self.queue_depth < 1:
            raise ValueError(f"parameter 'queue_depth' must be >= 1, got {self.queue_depth}")
        if not self.discovery_period_s > 0.0:
            raise ValueError(f"parameter 'discovery_period_s' must be > 0, got {self.discovery_period_s}")


#: topics that publishers latch (TRANSIENT_LOCAL) by contract
LATCHED_TOPICS = ('/robot_description',)
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
    """rclpy QoSProfile -> rosbags Qos (for the bag's offered_qos_profiles)."""
    from rosbags.interfaces import (Qos, QosDurability, QosHistory, QosLiveliness,
                                    QosReliability, QosTime)

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


class Recorder:
    """Node + rosbags writer.  Create, :meth:`run` until :meth:`request_stop`, then it closes."""

    def __init__(self, node, config: RecorderConfig):
        from rosbags.rosbag2 import StoragePlugin, Writer

        self.node = node
        self.config = config
        self.typestore = make_typestore()
        self.topics: dict[str, _Topic] = {}
        self.stop_requested = False
        self.drain_aborted = False
        self.total = 0
        self.writer = Writer(Path(config.bag), version=9, storage_plugin=StoragePlugin.MCAP)
        self.writer.open()
        self._discover(initial=True)
        from rclpy.clock import Clock, ClockType
        # steady clock: the node may run with use_sim_time (shared params file) and /clock may
        # stop, but discovery and re-subscription must go on
        self._timer = node.create_timer(config.discovery_period_s, self._discover,
                                        clock=Clock(clock_type=ClockType.STEADY_TIME))

    # ---- graph -------------------------------------------------------------------------------
    def _discover(self, initial: bool = False) -> None:
        for topic in self.topics.values():
            if topic.resubscribe and topic.subscription is not None:
                topic.resubscribe = False
                self.node.destroy_subscription(topic.subscription)
                topic.subscription = None
                topic.waiting = True
            if topic.waiting:
                self._subscribe(topic.name, topic.type_name, topic)
        pending = [t for t in self.config.topics if t not in self.topics]
        unconfirmed = [t for t in self.topics.values()
                       if t.subscription is not None and t.connection is None]
        if not pending and not unconfirmed:
            return
        on_graph = dict(self.node.get_topic_names_and_types())
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
            elif initial and name in CONTRACT_TYPES:
                self._subscribe(name, CONTRACT_TYPES[name])

    def _publisher_qos(self, name: str):
        return [info.qos_profile for info in self.node.get_publishers_info_by_topic(name)]

    def _subscribe(self, name: str, type_name: str, topic: '_Topic | None' = None) -> None:
        """Subscribe (again, keeping the bag connection and count, when ``topic`` is given)."""
        from rclpy.qos import (DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy)
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
                offered and all(q.durability == DurabilityPolicy.TRANSIENT_LOCAL for q in offered)):
            durability = DurabilityPolicy.TRANSIENT_LOCAL
        reliability = ReliabilityPolicy.RELIABLE
        if any(q.reliability == ReliabilityPolicy.BEST_EFFORT for q in offered):
            reliability = ReliabilityPolicy.BEST_EFFORT
        qos = QoSProfile(history=HistoryPolicy.KEEP_LAST, depth=self.config.queue_depth,
                         reliability=reliability, durability=durability)
        topic = topic or _Topic(name, type_name)
        if self.config.executor == 'events':
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
        return self.writer.add_connection(topic.name, topic.type_name, msgdef=msgdef,
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

    # ---- lifecycle ---------------------------------------------------------------------------
    def request_stop(self, *_args) -> None:
        """First call: stop recording after draining the queues; a second call: stop draining."""
        if self.stop_requested:
            self.drain_aborted = True
        self.stop_requested = True

    def run(self, executor, drain_timeout_s: float = 4.0) -> None:
        """Spin until a stop is requested, then take what is still queued (until 0.2 s without a
        message, at most ``drain_timeout_s``, or until a second stop request) and close the bag.
        """
        while not self.stop_requested:
            executor.spin_once(timeout_sec=0.1)
        self._timer.cancel()
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

    def counts(self) -> dict[str, int]:
        return {name: t.count for name, t in self.topics.items()
                if t.subscription is not None or t.count}


def _declare_config(node) -> RecorderConfig:
    values = {}
    defaults = RecorderConfig.__dataclass_fields__
    for f in fields(RecorderConfig):
        default = defaults[f.name].default
        if f.name == 'topics':
            node.declare_parameter('topics', list(default))
            values['topics'] = tuple(node.get_parameter('topics').get_parameter_value()
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
