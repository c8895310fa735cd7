# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
The ``controller`` node's ``/controller/markers`` (visualization_msgs/MarkerArray; no rclpy).

Controllers reporting a SLIP leg (telemetry channels ``com_position_*`` and ``foot_position_*``,
the hopper) get the leg, the CoG path, the foot target and the ground reaction force; any other
robot gets markers from the robot model's kinematics (CoM, its path, the stance foot, one force
arrow per contact frame). See :mod:`dodo_sim.ros.controller_node`, module docs.
"""
from __future__ import annotations

import collections
import math

from dodo_sim.ros import contract
from geometry_msgs.msg import Point
import numpy as np
from visualization_msgs.msg import Marker, MarkerArray


def point(position) -> Point:
    """Return a marker point from a world position: [x, z] (planar) or [x, y, z]."""
    if len(position) == 2:
        return Point(x=float(position[0]), y=0.0, z=float(position[1]))
    return Point(x=float(position[0]), y=float(position[1]), z=float(position[2]))


class ControllerMarkers:
    """
    Build the marker arrays of one robot, keeping the CoG path between them.

    ``robot``: the loaded robot model (:func:`dodo_sim.physics.robot.load_robot`);
    ``joint_names``: the controller's q order; ``weight``: N (1 m of force arrow per body weight).
    """

    def __init__(self, robot, joint_names, weight: float, cog_path_points: int):
        self._robot = robot
        self._joint_names = tuple(joint_names)
        self._weight = weight
        self._cog_path = collections.deque(maxlen=max(2, cog_path_points))
        self._kinematics = None         # model markers: (data, q slots, order, q)
        self._stamp_ns = 0              # stamp of the markers being built

    def build(self, ns: int, q, telemetry: dict, last_contact, last_forces) -> MarkerArray:
        """
        Return the markers of the state stamped ``ns``.

        ``telemetry``: channel name -> value; ``last_contact``: the summed [fx, fz], N;
        ``last_forces``: one world [fx, fy, fz] row per contact frame, N (or None).
        """
        self._stamp_ns = ns
        if 'com_position_x' not in telemetry or 'foot_position_x' not in telemetry:
            return self._model_markers(q, telemetry, last_forces)
        return self._slip_markers(telemetry, last_contact)

    def _marker(self, markers: list, mid: int, name: str, kind: int, rgba) -> Marker:
        m = Marker()
        m.header.frame_id = contract.WORLD_FRAME
        m.header.stamp.sec, m.header.stamp.nanosec = divmod(self._stamp_ns, 1_000_000_000)
        m.ns, m.id, m.type, m.action = name, mid, kind, Marker.ADD
        m.pose.orientation.w = 1.0
        m.color.r, m.color.g, m.color.b, m.color.a = rgba
        markers.append(m)
        return m

    def _slip_markers(self, telemetry: dict, last_contact) -> MarkerArray:
        com = np.array((telemetry['com_position_x'], telemetry['com_position_z']))
        foot = np.array((telemetry['foot_position_x'], telemetry['foot_position_z']))
        self._cog_path.append(Point(x=float(com[0]), y=0.0, z=float(com[1])))
        markers = []

        def marker(mid, name, kind, rgba):
            return self._marker(markers, mid, name, kind, rgba)

        stance = telemetry.get('phase') == 1.0
        leg = marker(0, 'slip_leg', Marker.LINE_LIST,
                     (1.0, 0.4, 0.0, 1.0) if stance else (0.2, 0.6, 1.0, 1.0))
        leg.scale.x = 0.02
        leg.points = [point(com), point(foot)]
        path = marker(1, 'cog_path', Marker.LINE_STRIP, (0.5, 0.5, 0.5, 0.8))
        path.scale.x = 0.01
        path.points = list(self._cog_path)
        target = np.array((telemetry.get('foot_target_x', math.nan),
                           telemetry.get('foot_target_z', math.nan)))
        tmark = marker(2, 'foot_target', Marker.SPHERE, (0.1, 0.9, 0.1, 0.9))
        tmark.scale.x = tmark.scale.y = tmark.scale.z = 0.05
        if np.isfinite(target).all():
            tmark.pose.position = point(target)
        else:
            tmark.action = Marker.DELETE
        grf = marker(3, 'grf', Marker.ARROW, (0.9, 0.1, 0.1, 1.0))
        grf.scale.x, grf.scale.y, grf.scale.z = 0.02, 0.04, 0.06
        grf.points = [point(foot), point(foot + last_contact / self._weight)]
        return MarkerArray(markers=markers)

    def _model_markers(self, q, telemetry: dict, last_forces) -> MarkerArray:
        """
        Markers of any robot from the robot model's kinematics.

        They show the CoM, its path, the stance foot (when the telemetry names one) and the force
        on each contact frame.
        """
        import pinocchio as pin
        robot = self._robot
        if self._kinematics is None:
            # the controller's joints are the 1-DoF joints of /joint_states; a floating base's
            # free flyer is not among them (docs/ros_contract.md, "Odometry"), so the model's
            # other coordinates stay at its initial state (the base drawn at its start pose)
            names = [n for n in robot.joint_names if n in self._joint_names]
            slots = np.array([robot.joint_idx_q[robot.joint_names.index(n)] for n in names],
                             dtype=int)
            order = np.array([self._joint_names.index(n) for n in names], dtype=int)
            self._kinematics = (robot.model.createData(), slots, order,
                                np.array(robot.default_q, dtype=float))
        data, slots, order, q_model = self._kinematics
        model = robot.model
        q_model[slots] = np.asarray(q, dtype=float)[order]
        com = pin.centerOfMass(model, data, q_model)
        pin.updateFramePlacements(model, data)
        feet = [data.oMf[i].translation.copy() for i in robot.contact_frame_ids]
        self._cog_path.append(point(com))
        markers = []
        sphere = self._marker(markers, 0, 'com', Marker.SPHERE, (1.0, 0.8, 0.0, 1.0))
        sphere.scale.x = sphere.scale.y = sphere.scale.z = 0.06
        sphere.pose.position = point(com)
        path = self._marker(markers, 1, 'cog_path', Marker.LINE_STRIP, (0.5, 0.5, 0.5, 0.8))
        path.scale.x = 0.01
        path.points = list(self._cog_path)
        stance = int(telemetry.get('stance_frame', -1))
        foot = self._marker(markers, 2, 'stance_foot', Marker.SPHERE, (1.0, 0.4, 0.0, 1.0))
        foot.scale.x = foot.scale.y = foot.scale.z = 0.05
        if 0 <= stance < len(feet):
            foot.pose.position = point(feet[stance])
        else:
            foot.action = Marker.DELETE
        forces = last_forces
        for k, position in enumerate(feet):
            arrow = self._marker(markers, 3 + k, 'grf', Marker.ARROW, (0.9, 0.1, 0.1, 1.0))
            arrow.scale.x, arrow.scale.y, arrow.scale.z = 0.02, 0.04, 0.06
            force = np.zeros(3) if forces is None or forces.ndim != 2 else forces[k]
            arrow.points = [point(position), point(position + force / self._weight)]
        return MarkerArray(markers=markers)
