# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
The recorder's bag side: the connections it adds to the rosbags MCAP writer.

Each connection holds the resolved topic name, the message definition and type hash, and the
QoS its publishers offer (``offered_qos_profiles``), as ``ros2 bag record`` stores them.
"""
from __future__ import annotations

from dodo_sim.ros.recorder_config import LATCHED_TOPICS
from dodo_sim.ros.recorder_subscriptions import message_class
from dodo_sim.tools.bag import register_msg_class


def rosbags_qos(profile):
    """Convert an rclpy QoSProfile to a rosbags Qos (for the bag's offered_qos_profiles)."""
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


def topic_connection(writer, typestore, node, topic):
    """
    Add the bag connection of a subscribed ``topic`` (a RecordedTopic) to ``writer``.

    With its publishers' QoS and type hash (looked up through ``node``); a type the typestore
    does not know is described from its Python message class first.
    """
    infos = node.get_publishers_info_by_topic(topic.name)
    offered = [rosbags_qos(i.qos_profile) for i in infos if i.topic_type == topic.type_name]
    publisher_hash = next((str(i.topic_type_hash) for i in infos
                           if i.topic_type == topic.type_name
                           and str(i.topic_type_hash).startswith('RIHS01_')), None)
    if topic.type_name not in typestore.fielddefs:
        register_msg_class(typestore, topic.type_name, message_class(topic.type_name))
    msgdef, _ = typestore.generate_msgdef(topic.type_name, ros_version=2)
    rihs01 = typestore.hash_rihs01(topic.type_name)
    if publisher_hash and publisher_hash != rihs01:
        node.get_logger().warning(
            f'{topic.name}: type hash of the publisher ({publisher_hash}) differs from the '
            f'rosbags typestore ({rihs01}); storing the publisher hash')
        rihs01 = publisher_hash
    # the bag holds resolved names (/joint_states, or /<namespace>/joint_states)
    return writer.add_connection(node.resolve_topic_name(topic.name),
                                 topic.type_name, msgdef=msgdef,
                                 rihs01=rihs01, offered_qos_profiles=offered)


def computed_connection(writer, typestore, name: str, resolved_name: str, type_name: str):
    """
    Add the connection of a topic the recorder writes itself.

    ``name``: the contract name, ``resolved_name``: the one in the bag; QoS as
    robot_state_publisher offers it.
    """
    from dodo_sim.ros import contract
    offered = contract.latched_qos() if name in LATCHED_TOPICS else contract.tf_qos()
    msgdef, _ = typestore.generate_msgdef(type_name, ros_version=2)
    return writer.add_connection(resolved_name, type_name, msgdef=msgdef,
                                 rihs01=typestore.hash_rihs01(type_name),
                                 offered_qos_profiles=[rosbags_qos(offered)])
