# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
The client's message work per answered state: raw CDR bytes against rclpy message objects.

``dodo_sim.client`` reads ``/joint_states`` and ``/foot_contact`` from their serialized bytes
and writes ``/joint_commands`` as CDR bytes refilled in place, as the controller node does; the
simpler alternative is rclpy's message objects (deserialize both inputs, fill a JointState,
publish it). This measures both on the same messages in one process, interleaved, least of the
rounds (a real publisher, no subscriber: rclpy's serialization and rcl's publish are counted,
the DDS delivery is not)::

    .venv/bin/python bench/bench_client.py [--states 2000] [--rounds 5]

It prints µs per answered state for each way and their ratio, with the load average beside.
"""
from __future__ import annotations

import argparse
import array
import os
import time

import numpy as np


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--states', type=int, default=2000)
    parser.add_argument('--rounds', type=int, default=5)
    args = parser.parse_args()

    import rclpy
    from dodo_sim.ros import contract
    from dodo_sim.ros.cdr import JointStateReader, JointStateWriter
    from dodo_sim.ros.raw_messages import read_contact, read_joint_state
    from dodo_sim.ros.state_merge import StateMerge
    from dodo_sim.ros.state_messages import contact_wrench_message, fill_wrench
    from geometry_msgs.msg import WrenchStamped
    from rclpy.serialization import deserialize_message, serialize_message
    from sensor_msgs.msg import JointState

    joints = ['base_x', 'base_z', 'hip', 'knee']
    states, contacts = [], []
    for k in range(args.states):
        msg = JointState(name=joints, position=[0.1 * k, 1.3, 0.3, -0.6],
                         velocity=[0.0, 0.1, 0.2, 0.3], effort=[0.0] * 4)
        msg.header.stamp.sec, msg.header.stamp.nanosec = divmod(k * 1_000_000, 10**9)
        states.append(serialize_message(msg))
        wrench = contact_wrench_message('foot')
        fill_wrench(wrench, *divmod(k * 1_000_000, 10**9), (1.0, 0.0, 50.0 + k))
        contacts.append(serialize_message(wrench))

    rclpy.init(domain_id=int(os.environ.get('ROS_DOMAIN_ID', '0') or 0))
    node = rclpy.create_node('bench_client')
    publisher = node.create_publisher(JointState, contract.JOINT_COMMANDS, contract.stream_qos())
    template = JointState(name=['hip', 'knee'], effort=[0.0, 0.0])
    writer = JointStateWriter(serialize_message(template), (0, 0, 2))

    def law(t, q, v, forces):
        return np.array([-300.0 * q[2] + forces[0, 2] * 1e-3, -300.0 * q[3]])

    def raw_way():
        merge, reader = StateMerge(joints, 1, 'stamp'), JointStateReader()
        for state, contact in zip(states, contacts):
            ns, names, q, v, _ = read_joint_state(reader, state)
            merge.joint_state(ns, names, q, v)
            merge.contact(0, *read_contact(contact))
            ns, q, v, forces = merge.take()
            effort = array.array('d')
            effort.frombytes(np.asarray(law(ns * 1e-9, q, v, forces), dtype=float).tobytes())
            publisher.publish(writer.write(ns, (), (), effort))

    def object_way():
        merge = StateMerge(joints, 1, 'stamp')
        for state, contact in zip(states, contacts):
            msg = deserialize_message(state, JointState)
            ns = msg.header.stamp.sec * 10**9 + msg.header.stamp.nanosec
            merge.joint_state(ns, list(msg.name), msg.position, msg.velocity)
            wrench = deserialize_message(contact, WrenchStamped)
            force = wrench.wrench.force
            merge.contact(0, wrench.header.stamp.sec * 10**9 + wrench.header.stamp.nanosec,
                          (force.x, force.y, force.z))
            ns, q, v, forces = merge.take()
            answer = JointState(name=['hip', 'knee'],
                                effort=np.asarray(law(ns * 1e-9, q, v, forces)).tolist())
            answer.header.stamp.sec, answer.header.stamp.nanosec = divmod(ns, 10**9)
            publisher.publish(answer)

    best = {'raw CDR (dodo_sim.client)': float('inf'), 'message objects': float('inf')}
    ways = dict(zip(best, (raw_way, object_way)))
    for _ in range(args.rounds):
        for name, way in ways.items():
            started = time.perf_counter()
            way()
            best[name] = min(best[name], (time.perf_counter() - started) / args.states * 1e6)
    node.destroy_node()
    rclpy.shutdown()
    raw, objects = best.values()
    print(f'load average {os.getloadavg()[0]:.1f}; {args.states} states x {args.rounds} rounds, '
          f'least per state:')
    for name, us in best.items():
        print(f'  {name:28s} {us:7.1f} us per answered state')
    print(f'  message objects / raw CDR: {objects / raw:.2f}')


if __name__ == '__main__':
    main()
