# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
Write a dodo_sim bag without DDS: :class:`OfflineBagWriter`, and the early chunk flush.

The layout is the one the ROS nodes and the recorder produce (docs/bags.md); :func:`flush_chunk`
is what the recorder uses to bound what a killed recording loses (no rclpy).
"""
from __future__ import annotations

import os
from pathlib import Path

from dodo_sim import stamps
from dodo_sim.ros import contract
from dodo_sim.tools.bag import make_typestore
from dodo_sim.tools.bag_parameters import node_fqn, parameter_value_msg
import numpy as np

#: Joint names of the hopper: the default of :class:`OfflineBagWriter` (readers take the names
#: from the bag).
HOPPER_JOINT_NAMES = ('base_x', 'base_z', 'hip', 'knee')


def _time_msg(typestore, t_s: float):
    sec, nanosec = stamps.sec_nanosec(stamps.stamp_ns(t_s))
    return typestore.types['builtin_interfaces/msg/Time'](sec=sec, nanosec=nanosec)


def flush_chunk(writer) -> bool:
    """
    Close the open chunk of a rosbags MCAP ``Writer`` and hand it to the OS.

    A process killed afterwards then leaves it readable on disk (``dodo bag recover``). Uses the
    rosbags MCAP storage's ``close_chunk`` (rosbags 0.11; test_bags_recover checks it). False if
    this rosbags cannot (then chunks are written every 1 MiB only).
    """
    storage = getattr(writer, 'storage', None)
    chunk = getattr(storage, 'chunk', None)
    if storage is None or chunk is None or not hasattr(storage, 'close_chunk') \
            or not hasattr(storage, 'bio'):
        return False
    if chunk.bio.tell():
        storage.close_chunk()
        storage.bio.flush()
    return True


class OfflineBagWriter:
    """
    Write the dodo topics of an offline (no-DDS) run to a rosbag2 MCAP bag.

    The layout is the one the ROS nodes and the recorder produce (docs/bags.md).

    Bag times are ``log_offset_ns + stamps.stamp_ns(t)`` (sim time on a wall-clock-like base)
    unless given.
    Used by tests (synthetic bags) and anything that logs a core-only run::

        with OfflineBagWriter(path) as w:
            w.robot_description(xml)
            w.parameters('controller', {'apex_height': 1.1, ...})   # start configuration
            w.step(t, q, v, effort, force_xz)       # /foot_contact, /joint_states, /clock
            w.joint_command(t, ['hip', 'knee'], tau)  # /joint_commands (stamped)
            w.command(t, tau)                        # /effort_controller/commands
            w.controller_state(t, names, values)     # /controller/state (JointState channels)
            w.parameter_change('controller', {'apex_height': 1.2}, t)   # ros2 param set
            w.odometry(t, BaseOdometer(robot)(q, v))   # ground-truth odom (floating base)
    """

    #: topics written with a transient-local (latched) offered QoS
    LATCHED = (contract.ROBOT_DESCRIPTION, contract.TF_STATIC)

    def __init__(self, bag_dir: str | os.PathLike, log_offset_ns: int = 1_700_000_000 * 10**9):
        from rosbags.rosbag2 import StoragePlugin, Writer
        self.typestore = make_typestore()
        self.log_offset_ns = int(log_offset_ns)
        self.writer = Writer(Path(bag_dir), version=9, storage_plugin=StoragePlugin.MCAP)
        self.connections: dict[str, object] = {}

    def __enter__(self):
        self.writer.open()
        return self

    def __exit__(self, *exc):
        self.writer.close()
        return False

    def _log_ns(self, t_s: float, log_ns: int | None) -> int:
        return self.log_offset_ns + stamps.stamp_ns(t_s) if log_ns is None else int(log_ns)

    def flush(self) -> bool:
        """Write the open chunk to disk now (as the recorder does every flush_period_s)."""
        return flush_chunk(self.writer)

    def write(self, topic: str, msgtype: str, msg, log_ns: int) -> None:
        """Serialize a rosbags message object and write it."""
        self.write_raw(topic, msgtype, self.typestore.serialize_cdr(msg, msgtype), log_ns)

    def write_raw(self, topic: str, msgtype: str, data: bytes, log_ns: int) -> None:
        """Write serialized CDR bytes."""
        conn = self.connections.get(topic)
        if conn is None:
            # stored under the resolved name in the root namespace, as the recorder stores it
            from rosbags.interfaces import (Qos, QosDurability, QosHistory, QosLiveliness,
                                            QosReliability, QosTime)
            latched = contract.relative_name(topic) in self.LATCHED
            zero = QosTime(0, 0)
            qos = Qos(QosHistory.KEEP_LAST, 1 if latched else 10, QosReliability.RELIABLE,
                      QosDurability.TRANSIENT_LOCAL if latched else QosDurability.VOLATILE,
                      zero, zero, QosLiveliness.AUTOMATIC, zero, False)
            conn = self.writer.add_connection(contract.resolve(topic), msgtype,
                                              typestore=self.typestore,
                                              offered_qos_profiles=[qos])
            self.connections[topic] = conn
        self.writer.write(conn, int(log_ns), data)

    def _header(self, t_s: float, frame_id: str = ''):
        return self.typestore.types['std_msgs/msg/Header'](stamp=_time_msg(self.typestore, t_s),
                                                           frame_id=frame_id)

    def robot_description(self, urdf_xml: str, log_ns: int | None = None) -> None:
        msg = self.typestore.types['std_msgs/msg/String'](data=urdf_xml)
        self.write(contract.ROBOT_DESCRIPTION, 'std_msgs/msg/String', msg,
                   self._log_ns(0.0, log_ns))

    def clock(self, t: float, log_ns: int | None = None) -> None:
        msg = self.typestore.types['rosgraph_msgs/msg/Clock'](clock=_time_msg(self.typestore, t))
        self.write(contract.CLOCK, 'rosgraph_msgs/msg/Clock', msg, self._log_ns(t, log_ns))

    def joint_state(self, t: float, q, v, effort=None, names=HOPPER_JOINT_NAMES,
                    log_ns: int | None = None, topic: str = contract.JOINT_STATES) -> None:
        """Write ``/joint_states`` (or ``topic``, e.g. its ground truth) at ``t``."""
        effort = np.zeros(len(names)) if effort is None else effort
        msg = self.typestore.types['sensor_msgs/msg/JointState'](
            header=self._header(t), name=list(names), position=np.asarray(q, dtype=float),
            velocity=np.asarray(v, dtype=float), effort=np.asarray(effort, dtype=float))
        self.write(topic, 'sensor_msgs/msg/JointState', msg, self._log_ns(t, log_ns))

    def imu(self, t: float, frame_id: str, orientation_xyzw, angular_velocity,
            linear_acceleration, log_ns: int | None = None, topic: str = contract.IMU) -> None:
        """Write ``/imu`` (or ``topic``: ``ground_truth/imu``) at ``t``: rad/s, m/s², its axes."""
        types = self.typestore.types
        vec = types['geometry_msgs/msg/Vector3']
        x, y, z, w = (float(c) for c in orientation_xyzw)
        zeros = np.zeros(9)
        msg = types[contract.IMU_TYPE](
            header=self._header(t, frame_id),
            orientation=types['geometry_msgs/msg/Quaternion'](x=x, y=y, z=z, w=w),
            orientation_covariance=zeros, angular_velocity=vec(*map(float, angular_velocity)),
            angular_velocity_covariance=zeros,
            linear_acceleration=vec(*map(float, linear_acceleration)),
            linear_acceleration_covariance=zeros)
        self.write(topic, contract.IMU_TYPE, msg, self._log_ns(t, log_ns))

    def contact(self, frame: str, t: float, force, log_ns: int | None = None) -> None:
        """
        Write ``/<frame>_contact``: ``force`` is [x, z] (planar) or [x, y, z], world axes, N.

        ``frame_id`` = the link's contact frame, as the simulator writes it.
        """
        types = self.typestore.types
        force = np.asarray(force, dtype=float)
        fx, fy, fz = (force[0], 0.0, force[1]) if len(force) == 2 else force[:3]
        vec = types['geometry_msgs/msg/Vector3']
        wrench = types['geometry_msgs/msg/Wrench'](
            force=vec(x=float(fx), y=float(fy), z=float(fz)), torque=vec(x=0.0, y=0.0, z=0.0))
        msg = types['geometry_msgs/msg/WrenchStamped'](header=self._header(
            t, contract.contact_frame_id(frame)),
                                                       wrench=wrench)
        self.write(contract.contact_topic(frame), contract.CONTACT_TYPE, msg,
                   self._log_ns(t, log_ns))

    def foot_contact(self, t: float, force_xz, log_ns: int | None = None) -> None:
        self.contact('foot', t, force_xz, log_ns)

    def step(self, t: float, q, v, effort, forces, log_ns: int | None = None,
             names=HOPPER_JOINT_NAMES, contact_frames=('foot',)) -> None:
        """
        One simulator step in the simulator node's order.

        That order is the contact topics, /joint_states, /clock (same stamp). ``forces``: one force
        per contact frame ([x, z] or [x, y, z]; a single 1-D force for one frame).
        """
        base = self._log_ns(t, log_ns)
        forces = np.asarray(forces, dtype=float)
        rows = forces.reshape(1, -1) if forces.ndim == 1 else forces
        if len(rows) != len(contact_frames):
            raise ValueError(f'{len(rows)} contact forces for contact frames {contact_frames}')
        for frame, force in zip(contact_frames, rows):
            self.contact(frame, t, force, base)
        self.joint_state(t, q, v, effort, names=names, log_ns=base + 1)
        self.clock(t, base + 2)

    def joint_command(self, t: float, names, effort, log_ns: int | None = None) -> None:
        """
        ``/joint_commands`` answering the state at ``t``.

        It is stamped ``t``; its bag time is just after the state's.
        """
        msg = self.typestore.types['sensor_msgs/msg/JointState'](
            header=self._header(t), name=list(names), position=np.zeros(0),
            velocity=np.zeros(0), effort=np.asarray(effort, dtype=float))
        self.write(contract.JOINT_COMMANDS, 'sensor_msgs/msg/JointState', msg,
                   self._log_ns(t, log_ns) + (400_000 if log_ns is None else 0))

    def command(self, t: float, tau, log_ns: int | None = None) -> None:
        """/effort_controller/commands answering the state at ``t`` (bag time just after it)."""
        types = self.typestore.types
        layout = types['std_msgs/msg/MultiArrayLayout'](dim=[], data_offset=0)
        msg = types['std_msgs/msg/Float64MultiArray'](layout=layout,
                                                      data=np.asarray(tau, dtype=float))
        self.write(contract.EFFORT_COMMANDS, 'std_msgs/msg/Float64MultiArray', msg,
                   self._log_ns(t, log_ns) + (500_000 if log_ns is None else 0))

    def controller_state(self, t: float, names, values, log_ns: int | None = None) -> None:
        """/controller/state as the controller node publishes it (JointState channels)."""
        msg = self.typestore.types['sensor_msgs/msg/JointState'](
            header=self._header(t), name=list(names),
            position=np.asarray(values, dtype=float), velocity=np.zeros(0),
            effort=np.zeros(0))
        self.write(contract.CONTROLLER_STATE, 'sensor_msgs/msg/JointState', msg,
                   self._log_ns(t, log_ns) + (500_001 if log_ns is None else 0))

    def _parameter_event(self, node: str, t: float, log_ns: int, new=None, changed=None):
        types = self.typestore.types
        value_cls, param_cls = types['rcl_interfaces/msg/ParameterValue'], \
            types['rcl_interfaces/msg/Parameter']

        def params(values):
            return [param_cls(name=k, value=parameter_value_msg(value_cls, v))
                    for k, v in (values or {}).items()]

        msg = types['rcl_interfaces/msg/ParameterEvent'](
            stamp=_time_msg(self.typestore, t), node=node_fqn(node),
            new_parameters=params(new), changed_parameters=params(changed),
            deleted_parameters=[])
        self.write(contract.PARAMETER_EVENTS, 'rcl_interfaces/msg/ParameterEvent', msg, log_ns)

    def parameters(self, node: str, values: dict, t: float = 0.0,
                   log_ns: int | None = None) -> None:
        """
        Record a node's parameters at start.

        They go into ``new_parameters``, as the node's declaration event or the recorder's snapshot
        writes them.
        """
        self._parameter_event(node, t, self._log_ns(t, log_ns), new=values)

    def parameter_change(self, node: str, values: dict, t: float,
                         log_ns: int | None = None) -> None:
        """
        Record a runtime parameter change.

        It goes into ``changed_parameters``, as after ``ros2 param set``.
        """
        self._parameter_event(node, t, self._log_ns(t, log_ns), changed=values)

    def odometry(self, t: float, odom, log_ns: int | None = None) -> None:
        """
        Write ``odom`` (nav_msgs/Odometry) as the simulator does.

        ``odom`` is a :class:`dodo_sim.ros.odometry.BaseOdometry` sample: pose in its
        ``frame_id``, twist in the base link's axes (``child_frame_id``).
        """
        types = self.typestore.types
        point, quat = types['geometry_msgs/msg/Point'], types['geometry_msgs/msg/Quaternion']
        vec = types['geometry_msgs/msg/Vector3']
        x, y, z = (float(c) for c in odom.position)
        qx, qy, qz, qw = (float(c) for c in odom.orientation_xyzw)
        pose = types['geometry_msgs/msg/PoseWithCovariance'](
            pose=types['geometry_msgs/msg/Pose'](position=point(x=x, y=y, z=z),
                                                 orientation=quat(x=qx, y=qy, z=qz, w=qw)),
            covariance=np.zeros(36))
        twist = types['geometry_msgs/msg/TwistWithCovariance'](
            twist=types['geometry_msgs/msg/Twist'](
                linear=vec(**{k: float(c) for k, c in zip('xyz', odom.linear)}),
                angular=vec(**{k: float(c) for k, c in zip('xyz', odom.angular)})),
            covariance=np.zeros(36))
        msg = types[contract.ODOM_TYPE](header=self._header(t, odom.frame_id),
                                        child_frame_id=odom.child_frame_id, pose=pose,
                                        twist=twist)
        self.write(contract.ODOM, contract.ODOM_TYPE, msg, self._log_ns(t, log_ns) + (
            3 if log_ns is None else 0))

    def tf_static(self, transforms, log_ns: int | None = None) -> None:
        from dodo_sim.ros.tf_frames import tf_message
        self.write(contract.TF_STATIC, 'tf2_msgs/msg/TFMessage',
                   tf_message(self.typestore, 0, transforms), self._log_ns(0.0, log_ns))

    def tf(self, t: float, transforms, log_ns: int | None = None) -> None:
        from dodo_sim.ros.tf_frames import tf_message
        self.write(contract.TF, 'tf2_msgs/msg/TFMessage',
                   tf_message(self.typestore, stamps.stamp_ns(t), transforms),
                   self._log_ns(t, log_ns) + (3 if log_ns is None else 0))
