# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
The contract's sensor topics: imu and ground_truth/* are recorded and never mistaken for others.

No rclpy: the names, the recorder's defaults, the bag readers' namespace and contact-topic rules,
the start gate's rule for the sensor topics.
"""
from dodo_sim.ros import contract
from dodo_sim.ros.recorder_config import CONTRACT_TYPES
from dodo_sim.ros.start_gate import Endpoint, GraphFacts, StartGate, TopicFacts
from dodo_sim.tools.bag_robot import contact_topics


def test_imu_and_ground_truth_topics_are_recorded_in_simulation_not_on_hardware():
    recorded = contract.recorded_topics(('left_foot', 'right_foot'))
    truth = ('ground_truth/joint_states', 'ground_truth/imu',
             'ground_truth/left_foot_contact', 'ground_truth/right_foot_contact')
    assert contract.IMU in recorded and set(truth) <= set(recorded)
    hardware = contract.hardware_recorded_topics(('left_foot', 'right_foot'))
    assert not set(truth) & set(hardware) and contract.ODOM not in hardware
    assert contract.topic_type(contract.IMU) == 'sensor_msgs/msg/Imu'
    assert contract.topic_type('ground_truth/joint_states') == 'sensor_msgs/msg/JointState'


def test_the_recorder_subscribes_only_typed_topics_before_they_show_up():
    assert None not in CONTRACT_TYPES.values()
    assert CONTRACT_TYPES[contract.IMU] == 'sensor_msgs/msg/Imu'


def test_ground_truth_topics_are_no_robot_namespace_and_no_contact_frame():
    topics = ['/left/joint_states', '/left/ground_truth/joint_states', '/left/foot_contact',
              '/left/ground_truth/foot_contact']
    assert contract.bag_namespace(topics) == '/left'
    assert contract.bag_namespace(['/joint_states', '/ground_truth/joint_states']) == ''
    assert contact_topics(['foot_contact', 'ground_truth/foot_contact']) == {
        'foot': 'foot_contact'}


def test_with_a_recorder_the_start_gate_waits_until_it_reads_the_sensor_topics():
    """The bag holds every reading from the first state on; without a recorder nothing waits."""
    imu = 'sensor_msgs/msg/Imu'
    command = TopicFacts('/joint_commands', 'sensor_msgs/msg/JointState',
                         (Endpoint('/controller', 'sensor_msgs/msg/JointState'),), 1)

    def gate_missing(sensor_topic, recorder):
        facts = GraphFacts(states=(), command=command, recorder=recorder,
                           recorded=frozenset({'/simulator', '/controller'}),
                           sensors=(sensor_topic,))
        return StartGate(min_subscribers=2).missing(facts)

    unread = TopicFacts('/imu', imu, (), 0)
    assert gate_missing(unread, recorder=False) == []
    assert gate_missing(unread, recorder=True) == [
        '/imu (sensor_msgs/Imu): the recorder to read it (0 of 1 matched; subscribed now: nobody)']
    # one reader is enough (min_subscribers counts the controller, which never reads the truth)
    read = TopicFacts('/imu', imu, (Endpoint('/recorder', imu),), 1)
    assert gate_missing(read, recorder=True) == []
