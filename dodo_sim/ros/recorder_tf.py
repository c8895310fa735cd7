# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
``/tf`` and ``/tf_static`` computed by the recorder from the joint states it records.

They are robot_state_publisher's frames (:mod:`dodo_sim.ros.tf_frames`), plus the contact frames
and the floating base's ``odom`` transform; the recorder parameter ``tf`` says when (docs/bags.md).
"""
from __future__ import annotations

import struct

from dodo_sim.ros import contract


class TfWriter:
    """
    ``/tf`` + ``/tf_static`` computed from the recorded joint states.

    They are robot_state_publisher's frames (:mod:`dodo_sim.ros.tf_frames`).
    """

    TYPE = 'tf2_msgs/msg/TFMessage'

    def __init__(self, recorder):
        """
        Compute for ``recorder``.

        It uses of the recorder: ``config`` (:class:`RecorderConfig`), ``typestore``,
        ``node`` (logger, graph), ``take_over_tf()`` and ``write_computed(name, type, log_ns,
        data)``.
        """
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
        from dodo_sim.physics.robot import ModelError, urdf_from_untrusted_text
        from dodo_sim.ros.tf_frames import TfTree
        from rclpy.serialization import deserialize_message
        from std_msgs.msg import String
        xml = deserialize_message(data, String).data
        try:
            # any node may publish the topic: XML only, never a path or a xacro to run
            self.tree = TfTree(urdf_from_untrusted_text(xml, f'/{contract.ROBOT_DESCRIPTION}'))
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

        They are stamped with its stamp, each at most once per ``tf_period_s``.
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
