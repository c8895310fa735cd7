# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
``/tf`` and ``/tf_static`` of a URDF from joint positions, as robot_state_publisher makes them.

No rclpy: the recorder uses it to compute TF (into the bag and live on DDS) when no
robot_state_publisher runs, as on a plain machine (``docs/bags.md``), and the tests use it to
check the recorded transforms. Conventions of robot_state_publisher:

* one transform per URDF joint, ``header.frame_id`` = the joint's parent link,
  ``child_frame_id`` = its child link (URDF link names, so ``world`` is the fixed frame of
  every dodo_sim robot);
* fixed joints go to ``/tf_static`` (once, latched), movable 1-DoF joints (revolute,
  continuous, prismatic) to ``/tf`` stamped with the stamp of the joint state message that
  carried them (joints from separate drivers: one message per driver); joints with more
  degrees of freedom (floating, planar) are not published (JointState cannot carry them).

The transform of a joint is ``oMf(parent)^-1 * oMf(child)`` from pinocchio's forward kinematics
of the URDF (the same model the simulator and the controller use), so it includes the joint's
origin and its motion.
"""
from __future__ import annotations

import os
from typing import Mapping, NamedTuple, Sequence
import xml.etree.ElementTree as ET

import numpy as np

#: URDF joint types that move with one coordinate (robot_state_publisher publishes these on /tf)
MOVABLE_TYPES = ('revolute', 'continuous', 'prismatic')


class Transform(NamedTuple):
    """One edge of the TF tree: ``child`` expressed in ``parent``."""

    parent: str
    child: str
    translation: np.ndarray     # (3,) m
    rotation_xyzw: np.ndarray   # (4,) unit quaternion x, y, z, w (geometry_msgs order)


class UrdfJoint(NamedTuple):
    name: str
    kind: str
    parent: str
    child: str


def urdf_joints(urdf_xml: str) -> list[UrdfJoint]:
    """
    Return the ``<joint>`` children of ``<robot>``, in URDF order.

    The ros2_control block's joints are not among them.
    """
    text = urdf_xml.encode() if urdf_xml.lstrip().startswith('<?xml') else urdf_xml
    try:
        root = ET.fromstring(text)
    except ET.ParseError as exc:
        raise ValueError(f'robot description is not valid XML: {exc}') from exc
    joints = []
    for joint in root.findall('joint'):
        parent, child = joint.find('parent'), joint.find('child')
        if parent is None or child is None:
            raise ValueError(f"URDF joint '{joint.get('name')}' has no parent or child link")
        joints.append(UrdfJoint(joint.get('name'), joint.get('type'), parent.get('link'),
                                child.get('link')))
    return joints


def urdf_links(urdf_xml: str) -> list[str]:
    """Link names of a URDF, in URDF order."""
    text = urdf_xml.encode() if urdf_xml.lstrip().startswith('<?xml') else urdf_xml
    return [link.get('name') for link in ET.fromstring(text).findall('link')]


class TfTree:
    """The TF tree of one URDF (robot_state_publisher semantics, see the module docs)."""

    def __init__(self, urdf_xml_or_path: str | os.PathLike):
        from dodo_sim.physics.robot import load_robot, robot_description_xml
        import pinocchio as pin

        xml = robot_description_xml(urdf_xml_or_path)
        robot = load_robot(xml, contact_frames=())
        self._pin = pin
        self.model = robot.model
        self.data = self.model.createData()
        self.neutral = robot.default_q.copy()
        #: a free flyer joins the root link to ``odom`` (REP-105): :meth:`base_transform`
        self.floating_base = robot.floating_base
        self.root_link = robot.root_link
        self._q_index = {name: iq for name, iq, nq in
                         zip(robot.joint_names, robot.joint_idx_q, robot.joint_nq) if nq == 1}
        self.static_joints: list[UrdfJoint] = []
        self.moving_joints: list[UrdfJoint] = []
        for joint in urdf_joints(xml):
            if joint.kind == 'fixed':
                self.static_joints.append(joint)
            elif joint.kind in MOVABLE_TYPES and joint.name in self._q_index:
                self.moving_joints.append(joint)
        self._frame = {}
        for joint in self.static_joints + self.moving_joints:
            for link in (joint.parent, joint.child):
                if link not in self._frame:
                    self._frame[link] = self.model.getFrameId(link, pin.FrameType.BODY)
                    if self._frame[link] >= self.model.nframes:
                        raise ValueError(f"URDF link '{link}' is not a frame of the model")
        #: 1-DoF joints whose positions move /tf
        self.joint_names = tuple(j.name for j in self.moving_joints)

    @property
    def links(self) -> tuple:
        return tuple(self._frame)

    def configuration(self, positions: Mapping[str, float], base_pose=None) -> np.ndarray:
        """
        Q from joint positions by name (joints not given keep the model's initial pose).

        ``base_pose``: a floating base's (position (3,), quaternion x y z w (4,)) in ``odom``.
        """
        q = self.neutral.copy()
        if base_pose is not None and self.floating_base:
            q[:3], q[3:7] = base_pose[0], base_pose[1]
        for name, value in positions.items():
            i = self._q_index.get(name)
            if i is not None:
                q[i] = value
        return q

    def _edges(self, q: np.ndarray, joints: Sequence[UrdfJoint]) -> list[Transform]:
        pin = self._pin
        pin.framesForwardKinematics(self.model, self.data, q)
        out = []
        for joint in joints:
            placement = self.data.oMf[self._frame[joint.parent]].actInv(
                self.data.oMf[self._frame[joint.child]])
            out.append(Transform(joint.parent, joint.child, np.array(placement.translation),
                                 np.array(pin.Quaternion(placement.rotation).coeffs())))
        return out

    def static_transforms(self) -> list[Transform]:
        """Return the transforms of the fixed joints (for ``/tf_static``)."""
        return self._edges(self.neutral, self.static_joints)

    def moving_transforms(self, q: np.ndarray, joints: Sequence[str] | None = None
                          ) -> list[Transform]:
        """
        Return the transforms of the movable joints (or of the named ones) at configuration ``q``.

        They are for ``/tf``; a joint's transform depends on its own coordinate only.
        """
        chosen = self.moving_joints if joints is None else \
            [j for j in self.moving_joints if j.name in set(joints)]
        return self._edges(np.asarray(q, dtype=float), chosen)

    def contact_transforms(self, q: np.ndarray, links: Sequence[str]) -> list[Transform]:
        """
        Link -> its contact frame (:func:`dodo_sim.ros.contract.contact_frame_id`) at ``q``.

        Translation 0, rotation the inverse of the link's orientation in the fixed frame: the
        contact frame sits at the link's origin with the fixed frame's axes, the frame the contact
        wrenches are expressed in (``docs/ros_contract.md``, "Frames").
        """
        from dodo_sim.ros.contract import contact_frame_id
        pin = self._pin
        pin.framesForwardKinematics(self.model, self.data, np.asarray(q, dtype=float))
        out = []
        for link in links:
            rotation = self.data.oMf[self._frame_id(link)].rotation
            out.append(Transform(link, contact_frame_id(link), np.zeros(3),
                                 np.array(pin.Quaternion(rotation.T).coeffs())))
        return out

    def base_transform(self, q: np.ndarray) -> Transform:
        """``odom`` -> root link of a floating base at ``q`` (REP-105)."""
        from dodo_sim.ros.contract import ODOM_FRAME
        if not self.floating_base:
            raise ValueError(f"root link '{self.root_link}' is attached to the world by the "
                             f'URDF: no odom transform')
        q = np.asarray(q, dtype=float)
        return Transform(ODOM_FRAME, self.root_link, q[:3].copy(), q[3:7].copy())

    def _frame_id(self, link: str) -> int:
        frame = self.model.getFrameId(link, self._pin.FrameType.BODY)
        if frame >= self.model.nframes:
            raise ValueError(f"URDF link '{link}' is not a frame of the model")
        return frame

    def placement(self, q: np.ndarray, link: str) -> tuple[np.ndarray, np.ndarray]:
        """World position and rotation matrix of ``link`` at ``q`` (pinocchio FK)."""
        pin = self._pin
        pin.framesForwardKinematics(self.model, self.data, np.asarray(q, dtype=float))
        placement = self.data.oMf[self.model.getFrameId(link, pin.FrameType.BODY)]
        return np.array(placement.translation), np.array(placement.rotation)


def tf_message(typestore, stamp_ns: int, transforms: Sequence[Transform]):
    """
    Return a rosbags ``tf2_msgs/msg/TFMessage`` object.

    Serialize it with ``typestore.serialize_cdr(msg, 'tf2_msgs/msg/TFMessage')``.
    """
    types = typestore.types
    sec, nanosec = divmod(int(stamp_ns), 1_000_000_000)
    stamp = types['builtin_interfaces/msg/Time'](sec=sec, nanosec=nanosec)
    vector, quaternion = types['geometry_msgs/msg/Vector3'], types['geometry_msgs/msg/Quaternion']
    out = []
    for t in transforms:
        out.append(types['geometry_msgs/msg/TransformStamped'](
            header=types['std_msgs/msg/Header'](stamp=stamp, frame_id=t.parent),
            child_frame_id=t.child,
            transform=types['geometry_msgs/msg/Transform'](
                translation=vector(x=float(t.translation[0]), y=float(t.translation[1]),
                                   z=float(t.translation[2])),
                rotation=quaternion(x=float(t.rotation_xyzw[0]), y=float(t.rotation_xyzw[1]),
                                    z=float(t.rotation_xyzw[2]), w=float(t.rotation_xyzw[3])))))
    return types['tf2_msgs/msg/TFMessage'](transforms=out)


def compose(transforms: Sequence[Transform], target: str, fixed_frame: str = 'world'
            ) -> tuple[np.ndarray, np.ndarray]:
    """
    Position and rotation matrix of ``target`` in ``fixed_frame`` by composing the edges.

    This is what a TF listener does. Raises ValueError if the chain is broken.
    """
    by_child = {t.child: t for t in transforms}
    chain = []
    frame = target
    while frame != fixed_frame:
        edge = by_child.get(frame)
        if edge is None:
            raise ValueError(f"no transform to '{frame}' on the way from '{fixed_frame}' to "
                             f"'{target}'")
        chain.append(edge)
        frame = edge.parent
    position, rotation = np.zeros(3), np.eye(3)
    for edge in reversed(chain):
        r = quaternion_matrix(edge.rotation_xyzw)
        position = position + rotation @ edge.translation
        rotation = rotation @ r
    return position, rotation


def quaternion_matrix(xyzw) -> np.ndarray:
    """Rotation matrix of a unit quaternion (x, y, z, w)."""
    x, y, z, w = (float(c) for c in xyzw)
    return np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
                     [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
                     [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)]])


__all__ = ['Transform', 'TfTree', 'tf_message', 'compose', 'quaternion_matrix', 'urdf_joints',
           'urdf_links', 'MOVABLE_TYPES']
