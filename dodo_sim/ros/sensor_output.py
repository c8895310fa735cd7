# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
The simulator node's sensor topics: ``imu`` and the ground truth of inexact sensors.

What the sensors read is :class:`dodo_sim.physics.sensors.SensorModel` (no rclpy; the offline
rollout uses the same model, so both see the same numbers). This adapter makes one
``measure`` call per published state and publishes, on the state's stamp:

* ``imu`` (sensor_msgs/Imu, ``frame_id`` = the IMU link) when the robot has an IMU, every
  ``imu_period`` of the stamps; covariances: the diagonal of each reading's white-noise
  variance plus its quantisation's lsb^2/12 (zero for an exact IMU);
* the exact values of every sensor whose readings are not (noise, bias, latency, resolution):
  ``ground_truth/joint_states``, ``ground_truth/<frame>_contact``, ``ground_truth/imu``, the same
  types and frames as the measured topics. With ideal sensors no ground-truth topic exists: the
  measured topics are exact (docs/ros_contract.md "Sensors").

The measured joint states and contact forces themselves go out on the usual topics through the
node's state output (the measured state replaces the true one there).
"""
from __future__ import annotations

import array

from dodo_sim import stamps
from dodo_sim.physics.sensors import SensorModel
from dodo_sim.ros import contract
from dodo_sim.ros.cdr import JointStateWriter
from dodo_sim.ros.state_messages import contact_wrench_message, fill_wrench
from geometry_msgs.msg import WrenchStamped
from rclpy.serialization import serialize_message
from sensor_msgs.msg import Imu, JointState


class SensorOutput:
    """The sensor model of the node's simulator and the topics it adds (see module docs)."""

    def __init__(self, node, sim, joint_names: tuple, states_topic: str, imu_every: int,
                 period_ns: int):
        self.model = SensorModel.of(sim)
        model = self.model
        qos = contract.stream_qos()
        self.publishers = []
        self._sensed = None
        self._period_ns, self._imu_every = period_ns, imu_every
        self.imu = self.imu_truth = None
        if model.imu_link is not None:
            self.imu = node.create_publisher(Imu, contract.IMU, qos)
            self._msg_imu = imu_message(model.imu_link, None if model.imu_ideal
                                        else model.imu_variances())
            self.publishers.append(self.imu)
            if not model.imu_ideal:
                self.imu_truth = node.create_publisher(
                    Imu, contract.ground_truth_topic(contract.IMU), qos)
                self._msg_imu_truth = imu_message(model.imu_link, None)
                self.publishers.append(self.imu_truth)
        self.joints_truth = None
        if not model.joints_ideal:
            self.joints_truth = node.create_publisher(
                JointState, contract.ground_truth_topic(states_topic), qos)
            self.publishers.append(self.joints_truth)
            n = len(joint_names)
            self._q0, self._v0 = (7, 6) if sim.leg.floating_base else (0, 0)
            self._effort = array.array('d', bytes(8 * n))
            self._effort_slots = [joint_names.index(j) for j in sim.actuated_joint_names]
            template = JointState(name=list(joint_names))
            template.position = template.velocity = template.effort = self._effort
            self._writer = JointStateWriter(serialize_message(template), (n, n, n))
        self.contacts_truth, self._msg_contacts = [], []
        if not model.contacts_ideal:
            self.contacts_truth = [
                node.create_publisher(WrenchStamped, contract.ground_truth_topic(
                    contract.contact_topic(frame)), qos) for frame in sim.contact_frames]
            self._msg_contacts = [contact_wrench_message(f) for f in sim.contact_frames]
            self.publishers += self.contacts_truth

    def measure(self, state):
        """Return the measured state of ``state`` (kept for :meth:`publish`)."""
        if self.model.passthrough:          # ideal sensors, no IMU: the state itself
            return state
        self._sensed = sensed = self.model.measure(state)
        return sensed.state

    def type_names(self) -> list:
        """
        Return the message type of each of :attr:`publishers`, in order (``pkg/msg/Name``).

        For the start gate's rule on these topics
        (:func:`dodo_sim.ros.start_gate.sensor_topics_recorded`).
        """
        return [contract.IMU_TYPE if pub in (self.imu, self.imu_truth)
                else contract.CONTACT_TYPE if pub in self.contacts_truth
                else contract.topic_type(contract.JOINT_STATES) for pub in self.publishers]

    def publish(self, state, ns: int) -> None:
        """Publish the IMU and the ground truth of ``state`` (the last measured) at ``ns``."""
        if not self.publishers:
            return
        sensed = self._sensed
        sec, nanosec = stamps.sec_nanosec(ns)
        if self.joints_truth is not None:
            effort = self._effort
            for slot, value in zip(self._effort_slots, state.tau_applied):
                effort[slot] = value
            self.joints_truth.publish(self._writer.write(
                ns, state.q[self._q0:].tolist(), state.v[self._v0:].tolist(), effort))
        for pub, msg, force in zip(self.contacts_truth, self._msg_contacts,
                                   state.contact_forces):
            fill_wrench(msg, sec, nanosec, force)
            pub.publish(msg)
        if self.imu is not None and (ns // self._period_ns) % self._imu_every == 0:
            fill_imu(self._msg_imu, sec, nanosec, sensed.imu)
            self.imu.publish(self._msg_imu)
            if self.imu_truth is not None:
                fill_imu(self._msg_imu_truth, sec, nanosec, sensed.imu_truth)
                self.imu_truth.publish(self._msg_imu_truth)


def imu_message(link: str, variances) -> Imu:
    """
    Return an empty Imu message of ``link``.

    ``variances``: (orientation, angular velocity, linear acceleration) per-axis variances for
    the covariance diagonals, or None (exact values: zero covariances).
    """
    msg = Imu()
    msg.header.frame_id = link
    if variances is not None:
        for name, values in zip(('orientation_covariance', 'angular_velocity_covariance',
                                 'linear_acceleration_covariance'), variances):
            covariance = [0.0] * 9
            covariance[0], covariance[4], covariance[8] = (float(x) for x in values)
            setattr(msg, name, covariance)
    return msg


def fill_imu(msg: Imu, sec: int, nanosec: int, sample) -> None:
    """Set the stamp and the reading of ``msg`` from ``sample`` (an ImuSample)."""
    msg.header.stamp.sec, msg.header.stamp.nanosec = sec, nanosec
    o, w, a = msg.orientation, msg.angular_velocity, msg.linear_acceleration
    o.x, o.y, o.z, o.w = (float(c) for c in sample.orientation_xyzw)
    w.x, w.y, w.z = (float(c) for c in sample.angular_velocity)
    a.x, a.y, a.z = (float(c) for c in sample.linear_acceleration)


__all__ = ['SensorOutput', 'imu_message', 'fill_imu']
