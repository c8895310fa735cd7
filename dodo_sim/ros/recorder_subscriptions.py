# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
What the recorder subscribes to: topics found on the graph, their message classes and QoS.

:class:`TopicSubscriptions` looks the graph up every discovery period, subscribes (raw CDR bytes)
with the QoS the publishers offer, and subscribes again when a publisher offers another type or
incompatible QoS; each message goes to the recorder's write callback.
"""
from __future__ import annotations

import importlib
import time

from dodo_sim.ros import contract, runtime
from dodo_sim.ros.recorder_config import CONTRACT_TYPES, LATCHED_TOPICS

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


class RecordedTopic:
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


def importable(type_name: str) -> bool:
    """Return whether the Python message class of ``type_name`` can be imported."""
    try:
        message_class(type_name)
    except ValueError:
        return False
    return True


class TopicSubscriptions:
    """The recorder's subscriptions, one per recorded topic in ``topics`` (shared with it)."""

    def __init__(self, node, config, topics: dict, write, by_publisher: dict):
        """
        Subscribe through ``node``; messages go to ``write(topic, stamp, data)``.

        Messages of the topics in ``by_publisher`` (stamped commands, the controller
        announcement) go to ``by_publisher[name](topic, stamp, data, publisher gid)``.
        """
        self.node = node
        self.config = config
        self.topics = topics
        self._write = write
        self._by_publisher = dict(by_publisher)

    def discover(self, initial: bool = False) -> None:
        """Subscribe to what showed up, again to what must be; the initial contract topics."""
        for topic in self.topics.values():
            if topic.resubscribe and topic.subscription is not None:
                topic.resubscribe = False
                self.node.destroy_subscription(topic.subscription)
                topic.subscription = None
                topic.waiting = True
            if topic.waiting:
                self.subscribe(topic.name, topic.type_name, topic)
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
                self.subscribe(name, types[0])
            elif initial and name in CONTRACT_TYPES and importable(CONTRACT_TYPES[name]):
                # a type without a Python message package here (e.g. tf2_msgs before
                # build_interfaces ran) is subscribed when a publisher shows up with it
                self.subscribe(name, CONTRACT_TYPES[name])

    def _publisher_qos(self, name: str):
        return [info.qos_profile for info in self.node.get_publishers_info_by_topic(name)]

    def subscribe(self, name: str, type_name: str, topic: 'RecordedTopic | None' = None) -> None:
        """Subscribe (again, keeping the bag connection and count, when ``topic`` is given)."""
        from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy
        try:
            cls = message_class(type_name)
        except ValueError as exc:
            self.node.get_logger().error(f'not recording {name}: {exc}')
            failed = topic or RecordedTopic(name, type_name)
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
        topic = topic or RecordedTopic(name, type_name)
        if name in self._by_publisher:
            # the publisher of each message decides where it goes (a command: the applied
            # controller's to JOINT_COMMANDS, any other's to IGNORED_COMMANDS; an announcement:
            # only the command consumer's is believed)
            events = self.config.executor == 'events'
            write = self._by_publisher[name]

            def with_publisher(data, info, topic=topic, write=write):
                stamp = (time.time_ns() if events else info['source_timestamp']
                         if self.config.timestamp == 'send' else info['received_timestamp'])
                write(topic, stamp, data, runtime.publisher_gid(info))
            callback = runtime.with_message_info(with_publisher)
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
