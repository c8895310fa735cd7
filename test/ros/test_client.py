# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
The client for controller authors (:mod:`dodo_sim.client`, issue 28 item 2).

In process (the node's callbacks fed serialized messages, its answers taken from its publisher):
a state waits for the contact message of its own stamp when the contacts arrive late, and the
answers to a whole offline run, contacts delayed, are the torques of the offline rollout of the
same policy bit for bit. Over DDS (short): a fake simulator sends each contact 20 ms after its
joint state and every answer carries the torque of that state's own contact.
"""
import threading
import time

from conftest import REPO, ros_domain_id
from dodo_sim.client import ControllerClient
from dodo_sim.ros import contract
from dodo_sim.ros.node_config import ClientConfig
import numpy as np
import pytest


class ContactLaw:
    """A policy whose torque depends on the contact force (a wrong pairing shows)."""

    contact_frames = ('foot',)        # rollout hands it one (fx, fy, fz) row per frame

    def update(self, t, q, v, contacts):
        fz = contacts[0, 2]
        return np.array([-300.0 * (q[2] - 0.3) - 20.0 * v[2] + 1e-3 * fz,
                         -300.0 * (q[3] + 0.6) - 20.0 * v[3] + 1e-3 * contacts[0, 0] + t])


def joint_state_bytes(ns, names, q, v):
    from rclpy.serialization import serialize_message
    from sensor_msgs.msg import JointState
    msg = JointState(name=list(names), position=[float(x) for x in q],
                     velocity=[float(x) for x in v], effort=[0.0] * len(names))
    msg.header.stamp.sec, msg.header.stamp.nanosec = divmod(int(ns), 1_000_000_000)
    return serialize_message(msg)


def contact_bytes(ns, force):
    from dodo_sim.ros.state_messages import contact_wrench_message, fill_wrench
    from rclpy.serialization import serialize_message
    msg = contact_wrench_message('foot')
    fill_wrench(msg, *divmod(int(ns), 1_000_000_000), force)
    return serialize_message(msg)


def read_command(data):
    from dodo_sim.ros.cdr import JointStateReader
    ns, names, _, _, effort = JointStateReader().read(data)
    return ns, list(names), np.array(effort)


@pytest.fixture
def client(urdf_xml):
    """Yield a client node on a private domain whose answers are collected, not published."""
    import rclpy
    context = rclpy.Context()
    rclpy.init(context=context, domain_id=ros_domain_id())
    node = ControllerClient('client_test', update=ContactLaw().update, context=context,
                            config=ClientConfig(robot_description=urdf_xml))
    node.answers = []
    node._pub_command.publish = lambda data: node.answers.append(read_command(data))
    yield node
    node.destroy_node()
    rclpy.try_shutdown(context=context)


def test_the_model_comes_from_the_description_in_the_order_of_joint_states(client):
    assert client.joint_names == ('base_x', 'base_z', 'hip', 'knee')
    assert client.actuated_joint_names == ('hip', 'knee')
    assert client.robot.total_mass > 0


def test_a_late_contact_is_waited_for_and_the_state_answered_with_its_own_stamp(client):
    names, q, v = client.joint_names, [0.0, 1.3, 0.31, -0.61], [0.0, 0.1, 0.2, 0.3]
    client._on_contact(0, contact_bytes(1_000_000, (9.0, 0.0, 99.0)))    # the previous one
    client._on_joint_states(joint_state_bytes(2_000_000, names, q, v))
    assert client.answers == []                                          # its contact is late
    client._on_contact(0, contact_bytes(2_000_000, (1.0, 0.0, 50.0)))
    (ns, answered, tau), = client.answers
    assert ns == 2_000_000 and answered == ['hip', 'knee']
    expected = ContactLaw().update(0.002, np.array(q), np.array(v), np.array([[1.0, 0, 50.0]]))
    assert np.array_equal(tau, expected)


def test_answers_to_an_offline_run_with_late_contacts_equal_its_rollout_bit_for_bit(client):
    from dodo_sim.paths import default_urdf_path
    from dodo_sim.rollout import rollout
    from dodo_sim.ros.params import config_from_file
    from dodo_sim.simulator import SimConfig, Simulator
    from dodo_sim.stamps import stamp_ns
    sim = Simulator(str(default_urdf_path()), config_from_file(
        SimConfig, REPO / 'config' / 'hop.yaml', 'simulator'))
    run = rollout(sim, ContactLaw(), steps=300)
    for k in range(run.ticks):
        ns = stamp_ns(run.t[k])
        client._on_joint_states(joint_state_bytes(ns, client.joint_names, run.q[k], run.v[k]))
        client._on_contact(0, contact_bytes(ns, run.contact_forces[k, 0]))     # after it
    stamps_ns = [a[0] for a in client.answers]
    assert stamps_ns == [stamp_ns(t) for t in run.t[:run.ticks]]
    assert np.array_equal(np.array([a[2] for a in client.answers]), run.tau)
    assert run.contact_forces[:, 0, 2].max() > 0          # it stood on the ground: fz matters


def test_a_description_on_the_topic_that_is_not_xml_ends_the_node_with_exit_2(client):
    """A path (or a xacro) received as the description is never opened or run."""
    from std_msgs.msg import String
    bare = ControllerClient('client_bare', update=ContactLaw().update, context=client.context)
    try:
        bare._on_description(String(data=str(REPO / 'urdf' / 'hopper.urdf.xacro')))
        assert bare.done.done() and bare.exit_code == 2 and bare.robot is None
    finally:
        bare.destroy_node()


def test_a_bad_answer_is_replaced_by_zero_torque(client):
    client.update = lambda t, q, v, contacts: [float('nan'), 1.0]
    client._on_joint_states(joint_state_bytes(0, client.joint_names, [0, 1.3, 0.3, -0.6],
                                              [0, 0, 0, 0]))
    client._on_contact(0, contact_bytes(0, (0.0, 0.0, 0.0)))
    assert np.array_equal(client.answers[-1][2], [0.0, 0.0])


def test_a_new_episode_is_announced_to_the_controller_before_its_first_state_is_answered(
        client):
    # a reset through simulation_interfaces: the simulator's event (taken from simulator/events
    # before the state, as the simulator waits for the ack) starts episode 1 at t = 0.003 s
    from dodo_sim.ros.sim_events import encode
    from std_msgs.msg import String
    seen = []
    client.on_episode = lambda episode, t: seen.append(('episode', episode, t))
    law = client.update
    client.update = lambda t, q, v, contacts: seen.append(('update', t)) or law(t, q, v, contacts)
    (events,) = [s for s in client.subscriptions if s.topic_name == '/' + contract.SIM_EVENTS]
    q, v = [0.0, 1.3, 0.31, -0.61], [0.0, 0.0, 0.0, 0.0]
    for k, ns in enumerate((1_000_000, 2_000_000, 3_000_000, 4_000_000)):
        if ns == 3_000_000:
            events.callback(String(data=encode({'seq': 3, 'stamp_ns': ns, 'episode': 1,
                                                'event': 'reset', 'cause': 'reset'})))
        client._on_joint_states(joint_state_bytes(ns, client.joint_names, q, v))
        client._on_contact(0, contact_bytes(ns, (0.0, 0.0, 0.0)))
    assert seen == [('update', 0.001), ('update', 0.002), ('episode', 1, 0.003),
                    ('update', 0.003), ('update', 0.004)]
    assert client.summary()['restarts'] == 1 and len(client.answers) == 4


@pytest.mark.ros
def test_over_dds_each_answer_uses_the_contact_of_its_own_state_sent_late(urdf_xml):
    """A fake simulator sends every contact 20 ms after its joint state (and one early)."""
    import rclpy
    from rclpy.executors import SingleThreadedExecutor
    from sensor_msgs.msg import JointState
    from std_msgs.msg import String
    from geometry_msgs.msg import WrenchStamped
    from dodo_sim.ros.runtime import stamp_to_ns
    context = rclpy.Context()
    rclpy.init(context=context, domain_id=ros_domain_id())
    client = ControllerClient('client_dds', update=ContactLaw().update, context=context)
    fake = rclpy.create_node('simulator', context=context)
    executor = SingleThreadedExecutor(context=context)
    for node in (client, fake):
        executor.add_node(node)
    stop = threading.Event()
    spinner = threading.Thread(target=lambda: [executor.spin_once(timeout_sec=0.01)
                                               for _ in iter(stop.is_set, True)], daemon=True)
    answers = {}
    try:
        qos = contract.stream_qos()
        description = fake.create_publisher(String, contract.ROBOT_DESCRIPTION,
                                            contract.latched_qos())
        description.publish(String(data=urdf_xml))
        states = fake.create_publisher(JointState, contract.JOINT_STATES, qos)
        contacts = fake.create_publisher(WrenchStamped, contract.FOOT_CONTACT, qos)
        fake.create_subscription(JointState, contract.JOINT_COMMANDS, lambda m: answers.update(
            {stamp_to_ns(m.header.stamp): np.array(m.effort)}), qos)
        spinner.start()
        deadline = time.monotonic() + 30.0
        while not (states.get_subscription_count() and contacts.get_subscription_count()):
            assert time.monotonic() < deadline, 'the client did not subscribe'
            time.sleep(0.02)
        from rclpy.serialization import deserialize_message
        q, v = [0.0, 1.3, 0.31, -0.61], [0.0, 0.1, 0.2, 0.3]
        for k in range(1, 11):
            ns = k * 1_000_000
            force = (0.5 * k, 0.0, 10.0 * k)
            contact = deserialize_message(contact_bytes(ns, force), WrenchStamped)
            if k == 5:
                contacts.publish(contact)                   # once before its state
            states.publish(deserialize_message(joint_state_bytes(ns, client.joint_names, q, v),
                                               JointState))
            if k != 5:
                time.sleep(0.02)
                contacts.publish(contact)
            deadline = time.monotonic() + 10.0
            while ns not in answers:
                assert time.monotonic() < deadline, f'no answer to the state of {ns} ns'
                time.sleep(0.005)
            expected = ContactLaw().update(ns * 1e-9, np.array(q), np.array(v),
                                           np.array([force]))
            assert np.array_equal(answers[ns], expected), k
    finally:
        stop.set()
        if spinner.is_alive():
            spinner.join(timeout=5)
        client.destroy_node()
        fake.destroy_node()
        rclpy.try_shutdown(context=context)
