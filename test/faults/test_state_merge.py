# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
The controller's state merge and contact pairing (:mod:`dodo_sim.ros.state_merge`), in process.

It is what the controller node runs and what a user's own client can run: joint states merged
by name, contacts paired by stamp whatever their order of arrival (issue 28: 1368 of 2001
states arrived before their contact message), ``auto`` deciding between ``stamp`` and
``latest``.
"""
from dodo_sim.ros.state_merge import AUTO_PAIRING_STATES, StateMerge
import numpy as np
import pytest

JOINTS = ['base_x', 'base_z', 'hip', 'knee']
Q, V = [0.0, 1.3, 0.3, -0.6], [0.1, 0.2, 0.3, 0.4]


def test_a_state_waits_for_the_contact_stamped_like_it_whatever_the_order():
    merge = StateMerge(JOINTS, 1, 'stamp')
    merge.contact(0, 999, (1.0, 0.0, 5.0))                # an older one is there
    assert merge.joint_state(1000, JOINTS, Q, V)
    assert merge.take() is None                          # its contact has not come
    merge.contact(0, 1000, (2.0, 0.0, 7.0))
    stamp, q, v, contacts = merge.take()
    assert stamp == 1000 and q.tolist() == Q and v.tolist() == V
    np.testing.assert_array_equal(contacts, [[2.0, 0.0, 7.0]])
    assert merge.take() is None                          # taken once


def test_contacts_before_their_state_pair_by_stamp_too():
    merge = StateMerge(JOINTS, 2, 'stamp')
    merge.contact(0, 1000, (1.0, 0.0, 1.0))
    merge.contact(1, 1000, (2.0, 0.0, 2.0))
    merge.contact(0, 2000, (3.0, 0.0, 3.0))              # the next state's, already here
    merge.joint_state(1000, JOINTS, Q, V)
    assert merge.take()[3].tolist() == [[1.0, 0.0, 1.0], [2.0, 0.0, 2.0]]


def test_joint_states_from_two_sources_merge_by_name_into_one_state():
    merge = StateMerge(JOINTS, 1, 'latest')
    merge.contact(0, 5, (0.0, 0.0, 0.0))
    merge.joint_state(100, ['base_x', 'base_z'], [1.0, 2.0], [0.0, 0.0])
    assert not merge.pending and merge.missing_joints() == ['hip', 'knee']
    merge.joint_state(90, ['knee', 'hip', 'elbow'], [4.0, 3.0, 9.0], [0.0, 0.0, 0.0])
    stamp, q, _, _ = merge.take()
    assert stamp == 100 and q.tolist() == [1.0, 2.0, 3.0, 4.0]    # the newest stamp merged


def test_a_newer_complete_state_replaces_the_pending_one_unanswered():
    merge = StateMerge(JOINTS, 1, 'stamp')
    merge.joint_state(1000, JOINTS, Q, V)
    merge.joint_state(2000, JOINTS, Q, V)
    assert merge.skipped == 1 and merge.stamp_ns == 2000


def test_malformed_joint_states_are_ignored():
    merge = StateMerge(JOINTS, 1)
    assert not merge.joint_state(1000, JOINTS, Q, V[:3])
    assert merge.states_received == 0 and not merge.pending


def test_auto_pairs_by_stamp_once_the_stamps_match():
    decided = []
    merge = StateMerge(JOINTS, 1, 'auto', on_pairing=decided.append)
    merge.joint_state(1000, JOINTS, Q, V)
    merge.contact(0, 1000, (0.0, 0.0, 1.0))
    assert merge.take() is not None
    assert decided == ['stamp'] and merge.pairing == 'stamp'


def test_auto_takes_the_newest_contact_when_the_sensor_has_its_own_clock():
    decided = []
    merge = StateMerge(JOINTS, 1, 'auto', on_pairing=decided.append)
    for k in range(AUTO_PAIRING_STATES + 1):
        merge.contact(0, 1000 * k + 370, (0.0, 0.0, float(k)))      # 0.37 us off
        merge.joint_state(1000 * k, JOINTS, Q, V)
        if k < AUTO_PAIRING_STATES:
            assert merge.take() is None
    assert decided == ['latest'] and merge.pairing == 'latest'
    assert merge.take()[3].tolist() == [[0.0, 0.0, float(AUTO_PAIRING_STATES)]]


def test_unknown_pairing_is_refused():
    with pytest.raises(ValueError, match='contact pairing'):
        StateMerge(JOINTS, 1, 'arrival')


def test_the_merged_state_reproduces_the_controller_input_bit_for_bit(urdf_path):
    """What the node hands the control law equals what the offline rollout hands it."""
    from dodo_control.controller import Controller, ControllerConfig
    from dodo_sim.rollout import rollout
    from dodo_sim.simulator import SimConfig, Simulator
    from dodo_sim.stamps import stamp_ns, stamp_s

    sim = Simulator(urdf_path, SimConfig(initial_q=(0.0, 1.3, 0.3, -0.6)))
    ctrl = Controller(urdf_path, ControllerConfig())
    run = rollout(sim, ctrl, steps=400)
    merged = Controller(urdf_path, ControllerConfig())
    merge = StateMerge(JOINTS, 1, 'auto')
    for k in range(run.ticks):
        ns = stamp_ns(run.t[k])
        merge.contact(0, ns, tuple(run.contact_forces[k][0]))      # as the node reads it
        merge.joint_state(ns, JOINTS, tuple(run.q[k]), tuple(run.v[k]))
        stamp, q, v, contacts = merge.take()
        tau = merged.update(stamp_s(stamp), q, v, contacts)
        assert np.array_equal(tau, run.tau[k]), k


def test_a_client_of_its_own_feeds_it_rclpy_messages():
    """What a user's rclpy node does with its callbacks (issue 28): no dodo node needed."""
    pytest.importorskip('rclpy')
    from dodo_sim.stamps import from_sec_nanosec
    from geometry_msgs.msg import WrenchStamped
    from sensor_msgs.msg import JointState

    merge = StateMerge(JOINTS, 1, 'auto')
    state = JointState(name=JOINTS, position=Q, velocity=V)
    state.header.stamp.sec, state.header.stamp.nanosec = 3, 1_000_000
    contact = WrenchStamped()
    contact.header.stamp = state.header.stamp
    contact.wrench.force.z = 120.0

    def stamp(msg):
        return from_sec_nanosec(msg.header.stamp.sec, msg.header.stamp.nanosec)

    merge.joint_state(stamp(state), state.name, state.position, state.velocity)
    force = contact.wrench.force
    merge.contact(0, stamp(contact), (force.x, force.y, force.z))
    ns, q, v, contacts = merge.take()
    assert ns == 3_001_000_000 and q.tolist() == Q and contacts.tolist() == [[0.0, 0.0, 120.0]]
