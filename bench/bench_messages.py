# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
Per-step message work of the lockstep exchange, in one process, side by side (no DDS timing).

What reading the 1 kHz inputs and publishing the telemetry cost per step, before and after.

    .venv/bin/python bench/bench_messages.py [--steps 3000] [--rounds 7]

Thread CPU time per step (us), least over interleaved rounds (a shared machine only ever slows a
measurement down), printed with the load average:

* reading one /joint_states + one /foot_contact: rclpy's deserialization into message objects
  (what a subscription without ``raw`` does) vs dodo_sim.ros.cdr from the same bytes;
* reading one /joint_commands in the simulator: the same two ways;
* the controller's /controller/state work per answered state: telemetry flattening, message
  fill and publish (no subscriber) every state (state_period 0) vs every 10th (0.01 s);
* the simulator's /joint_states publish (no subscriber): the refilled message object vs the
  refilled CDR bytes.
Nothing here is a test.
"""
from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np


def _least_per_step(function, steps: int, rounds: int) -> float:
    best = float('inf')
    for _ in range(rounds):
        c0 = time.thread_time()
        function(steps)
        best = min(best, (time.thread_time() - c0) / steps)
    return best


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--steps', type=int, default=3000)
    parser.add_argument('--rounds', type=int, default=7)
    args = parser.parse_args(argv)
    from dodo_sim.ros.cdr import JointStateReader, read_wrench_stamped
    from geometry_msgs.msg import WrenchStamped
    import rclpy
    from rclpy.serialization import deserialize_message, serialize_message
    from sensor_msgs.msg import JointState

    js = JointState(name=['base_x', 'base_z', 'hip', 'knee'], position=[0.1, 1.2, 0.3, -0.6],
                    velocity=[0.0, -1.0, 0.5, 0.2], effort=[0.0, 0.0, 1.5, -2.0])
    js.header.stamp.sec, js.header.stamp.nanosec = 12, 345_000_000
    contact = WrenchStamped()
    contact.header.frame_id = 'world'
    contact.wrench.force.z = 250.0
    command = JointState(name=['hip', 'knee'], effort=[1.5, -2.0])
    js_bytes, contact_bytes, command_bytes = (serialize_message(m)
                                              for m in (js, contact, command))
    reader, command_reader = JointStateReader(), JointStateReader()

    def rclpy_inputs(n):
        for _ in range(n):
            msg = deserialize_message(js_bytes, JointState)
            _ = (msg.name, msg.position, msg.velocity, msg.header.stamp.sec)
            msg = deserialize_message(contact_bytes, WrenchStamped)
            _ = (msg.wrench.force.x, msg.header.stamp.sec)

    def cdr_inputs(n):
        for _ in range(n):
            reader.read(js_bytes)
            read_wrench_stamped(contact_bytes)

    def rclpy_command(n):
        for _ in range(n):
            msg = deserialize_message(command_bytes, JointState)
            _ = (msg.name, msg.effort, msg.header.stamp.sec)

    def cdr_command(n):
        for _ in range(n):
            command_reader.read(command_bytes)

    rclpy.init()
    try:
        node = rclpy.create_node('bench_messages')
        results = state_work(node, args.steps, args.rounds)
        node.destroy_node()
    finally:
        rclpy.shutdown()
    rows = [
        ('controller inputs (/joint_states + /foot_contact), rclpy objects',
         _least_per_step(rclpy_inputs, args.steps, args.rounds)),
        ('controller inputs, dodo_sim.ros.cdr from the bytes',
         _least_per_step(cdr_inputs, args.steps, args.rounds)),
        ('simulator input (/joint_commands), rclpy objects',
         _least_per_step(rclpy_command, args.steps, args.rounds)),
        ('simulator input, dodo_sim.ros.cdr from the bytes',
         _least_per_step(cdr_command, args.steps, args.rounds)),
    ] + results
    print(f'per-step message work, thread CPU us, least of {args.rounds} rounds of '
          f'{args.steps} steps; load {os.getloadavg()[0]:.1f} (1 min), {os.cpu_count()} CPUs')
    for label, seconds in rows:
        print(f'  {label:68s} {seconds * 1e6:7.1f}')
    return 0


def state_work(node, steps: int, rounds: int) -> list:
    """
    Measure the controller node's /controller/state work per state.

    The work is per answered state, with a hopper controller's telemetry, for every state vs at
    state_period 0.01 s (every 10th state).
    """
    import array

    from dodo_control.controller import Controller, ControllerConfig
    from dodo_sim.ros.telemetry_channels import TelemetryChannels
    from dodo_sim.paths import default_urdf_path
    from dodo_sim.ros import contract
    from sensor_msgs.msg import JointState

    ctrl = Controller(default_urdf_path(), ControllerConfig())
    q = np.array([0.0, 1.2, 0.3, -0.6])
    ctrl.update(0.0, q, np.zeros(4), np.zeros(2))
    pub = node.create_publisher(JointState, '/bench' + contract.CONTROLLER_STATE,
                                contract.stream_qos())
    channels = TelemetryChannels(getattr(ctrl, 'telemetry_labels', None))
    msg = JointState()

    def publish_every(every):
        def run(n):
            for k in range(n):
                ctrl._telemetry = None              # as after each update: a new snapshot
                if k % every:
                    continue
                values = channels.values(ctrl.telemetry)
                if not msg.name:
                    msg.name = channels.names + ['tau_hip', 'tau_knee', 'config_revision']
                msg.header.stamp.sec, msg.header.stamp.nanosec = divmod(k, 1_000_000_000)
                msg.position = array.array('d', values + [0.0, 0.0, 0.0])
                pub.publish(msg)
        return run

    from dodo_sim.ros.cdr import JointStateWriter
    from rclpy.serialization import serialize_message
    joints = node.create_publisher(JointState, '/bench' + contract.JOINT_STATES,
                                   contract.stream_qos())
    names = ['base_x', 'base_z', 'hip', 'knee']
    js = JointState(name=names, position=[0.0] * 4, velocity=[0.0] * 4, effort=[0.0] * 4)
    writer = JointStateWriter(serialize_message(js), (4, 4, 4))
    q, v = np.array([0.1, 1.2, 0.3, -0.6]), np.array([0.0, -1.0, 0.5, 0.2])
    effort = array.array('d', [0.0, 0.0, 1.5, -2.0])

    def publish_object(n):
        for k in range(n):
            js.header.stamp.sec, js.header.stamp.nanosec = divmod(k, 1_000_000_000)
            js.position = array.array('d', q)
            js.velocity = array.array('d', v)
            js.effort = effort
            joints.publish(js)

    def publish_bytes(n):
        for k in range(n):
            joints.publish(writer.write(k, q.tolist(), v.tolist(), effort))

    return [('/controller/state every answered state (state_period 0)',
             _least_per_step(publish_every(1), steps, rounds)),
            ('/controller/state at state_period 0.01 s (every 10th state)',
             _least_per_step(publish_every(10), steps, rounds)),
            ('/joint_states publish, message object refilled',
             _least_per_step(publish_object, steps, rounds)),
            ('/joint_states publish, CDR bytes refilled (dodo_sim.ros.cdr)',
             _least_per_step(publish_bytes, steps, rounds))]


if __name__ == '__main__':
    sys.exit(main())
