"""``controller`` ROS 2 node: a thin adapter around :class:`dodo_control.controller.Controller`.

Inputs (what a boom-mounted leg measures, nothing else):

* ``/joint_states`` (sensor_msgs/JointState): merged by joint name, so base (boom) and leg joints
  may come from different drivers. A state is *complete* once every joint of
  ``base_x, base_z, hip, knee`` has a new position and velocity since the last update; its time is
  the newest header stamp.
* ``/foot_contact`` (geometry_msgs/WrenchStamped): the foot force sensor, world ``[x, z]`` N.
  With ``sync_foot_contact`` (default) the update waits for the force with the same stamp as the
  joint state (deterministic in simulation); otherwise the latest force is used.
* the robot model: parameter ``robot_description`` or the ``/robot_description`` topic
  (std_msgs/String, transient local) — the URDF the simulator / robot_state_publisher use.

Per complete state: exactly one ``ctrl.update(t, q, v, foot_force)`` and one command on
``/effort_controller/commands`` (std_msgs/Float64MultiArray ``[hip, knee]`` N*m, the ros2_control
JointGroupEffortController convention).

``/controller/state`` (sensor_msgs/JointState used as *named scalar channels*, PlotJuggler /
Foxglove friendly): ``header.stamp`` = stamp of the answered joint state, ``name`` = channel
names, ``position`` = values. Channels: ``phase`` (0 flight, 1 stance, -1 unknown), then every
numeric field of ``ctrl.telemetry`` under its own name (2-vectors split into ``<name>_x``,
``<name>_z``), then ``tau_hip``, ``tau_knee``.

``/controller/markers`` (visualization_msgs/MarkerArray, frame ``world``, every
``marker_period`` s of sim time): ``slip_leg`` (line CoG -> foot, the virtual SLIP leg),
``cog_path`` (line strip), ``foot_target`` (sphere at the desired foot point, when the
controller reports one), ``grf`` (arrow at the foot, 1 m per body weight).

Set-points (``target_x``, ``target_velocity``, ``apex_height``, ``flight_policy``) and every
other ControllerConfig field except ``control_period`` are ROS parameters settable at runtime
(``ros2 param set /controller apex_height 1.2``) through ``Controller.reconfigure``; a bad value
is rejected with the core's reason and the running config is kept.
"""
from __future__ import annotations

import array
import collections
import dataclasses
import enum
import math
import sys
import time
from collections.abc import Mapping

import numpy as np
from geometry_msgs.msg import Point, WrenchStamped
from rcl_interfaces.msg import SetParametersResult
from rclpy.clock import Clock, ClockType
from rclpy.node import Node
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray, String
from visualization_msgs.msg import Marker, MarkerArray

from dodo_sim.model import JOINT_NAMES, ModelError
from dodo_sim.ros import contract, node_config, runtime
from dodo_sim.ros.params import (coerce_value, config_defaults, config_from_parameters,
                             declare_config_parameters)
from dodo_sim.ros.runtime import WarnThrottle

from .controller import Controller, ControllerConfig

#: ControllerConfig fields fixed while running (everything else goes through
#: ``Controller.reconfigure``; the set-points are target_x, target_velocity, apex_height).
STARTUP_ONLY_PARAMETERS = ('control_period',)
PHASE_CODES = {'flight': 0.0, 'stance': 1.0}


def runtime_parameters() -> tuple:
    return tuple(n for n in config_defaults(ControllerConfig) if n not in STARTUP_ONLY_PARAMETERS)


def _items(telemetry) -> list:
    if dataclasses.is_dataclass(telemetry):
        return [(f.name, getattr(telemetry, f.name)) for f in dataclasses.fields(telemetry)]
    if isinstance(telemetry, Mapping):
        return list(telemetry.items())
    return [(k, v) for k, v in vars(telemetry).items() if not k.startswith('_')]


def _phase_code(value) -> float:
    text = getattr(value, 'value', value)
    if isinstance(text, (int, float)) and not isinstance(text, bool):
        return float(text)
    return PHASE_CODES.get(str(text).lower(), -1.0)


def _is_number(value) -> bool:
    return isinstance(value, (bool, int, float, np.floating, np.integer, np.bool_))


class TelemetryChannels:
    """Flattens ``ctrl.telemetry`` into named floats (see module docs); the layout is worked out
    once from the first snapshot and reused (a 1 kHz path)."""

    def __init__(self):
        self._plan = None      # [(attribute, kind)] kind: 'phase' | 'scalar' | 'vec2'
        self.names: list = []

    def _make_plan(self, telemetry) -> None:
        plan, names = [], []
        for name, value in _items(telemetry):
            if name == 'phase':
                plan.append((name, 'phase'))
                names.append('phase')
            elif isinstance(value, (str, enum.Enum)):
                continue
            elif _is_number(value):
                plan.append((name, 'scalar'))
                names.append(name)
            elif (isinstance(value, (tuple, list, np.ndarray)) and len(value) == 2
                  and all(_is_number(x) for x in value)):
                plan.append((name, 'vec2'))
                names.extend((name + '_x', name + '_z'))
        self._plan, self.names = plan, names

    def values(self, telemetry) -> list:
        if telemetry is None:
            return []
        if self._plan is None:
            self._make_plan(telemetry)
        get = (telemetry.get if isinstance(telemetry, Mapping)
               else lambda n: getattr(telemetry, n))
        out = []
        for name, kind in self._plan:
            value = get(name)
            if kind == 'scalar':
                out.append(float(value))
            elif kind == 'vec2':
                out.append(float(value[0]))
                out.append(float(value[1]))
            else:
                out.append(_phase_code(value))
        return out


def telemetry_channels(telemetry) -> list:
    """``[(name, value)]`` of the numeric content of ``ctrl.telemetry`` (see module docs)."""
    channels = TelemetryChannels()
    values = channels.values(telemetry)
    return list(zip(channels.names, values))


class ControllerNode(Node):
    """The controller node (see module docs)."""

    def __init__(self, **node_kwargs):
        super().__init__('controller', **node_kwargs)
        runtime = set(runtime_parameters())
        ctrl_values = declare_config_parameters(
            self, ControllerConfig,
            read_only=[n for n in config_defaults(ControllerConfig) if n not in runtime])
        node_values = declare_config_parameters(
            self, node_config.ControllerNodeConfig,
            read_only=list(config_defaults(node_config.ControllerNodeConfig)))
        self.config: ControllerConfig = config_from_parameters(ControllerConfig, ctrl_values)
        self.node_config: node_config.ControllerNodeConfig = config_from_parameters(
            node_config.ControllerNodeConfig, node_values)
        self._throttle = WarnThrottle(self.get_logger(), self.node_config.warn_period)
        self._steady = Clock(clock_type=ClockType.STEADY_TIME)
        self.add_on_set_parameters_callback(self._on_set_parameters)

        self.ctrl: Controller | None = None
        self.updates = 0
        self._index = {name: i for i, name in enumerate(JOINT_NAMES)}
        self._q = np.zeros(len(JOINT_NAMES))
        self._v = np.zeros(len(JOINT_NAMES))
        self._fresh: set = set()
        self._stamp_ns = -1           # stamp of the pending complete joint state
        self._pending = False
        self._force = np.zeros(2)
        self._force_stamp_ns = -2
        self._gate_open = (self.node_config.min_subscribers <= 0
                           and self.node_config.discovery_settle <= 0.0)
        self._next_marker_ns = 0
        self._cog_path = collections.deque(maxlen=max(2, self.node_config.cog_path_points))
        self._state_names: list | None = None
        self._channels = TelemetryChannels()
        self._last_values: list = []
        self._sub_description = None
        if self.node_config.robot_description:
            self._setup(self.node_config.robot_description)
        else:
            self.get_logger().info(f'waiting for the robot model on {contract.ROBOT_DESCRIPTION}')
            self._sub_description = self.create_subscription(
                String, contract.ROBOT_DESCRIPTION, self._on_description, contract.latched_qos())

    # -- model --------------------------------------------------------------------------------

    def _on_description(self, msg: String) -> None:
        if self.ctrl is not None:
            return
        try:
            self._setup(msg.data)
        except (ModelError, ValueError) as exc:
            self.get_logger().error(f'cannot use {contract.ROBOT_DESCRIPTION}: {exc}')
            return

    def _setup(self, urdf_xml: str) -> None:
        self.ctrl = Controller(urdf_xml, self.config)
        leg = self.ctrl.leg
        self._weight = leg.total_mass * float(np.linalg.norm(leg.gravity))
        stream_qos = contract.stream_qos()
        self._pub_command = self.create_publisher(Float64MultiArray, contract.EFFORT_COMMANDS, stream_qos)
        self._pub_state = self.create_publisher(JointState, contract.CONTROLLER_STATE, stream_qos)
        self._pub_markers = self.create_publisher(MarkerArray, contract.CONTROLLER_MARKERS, 10)
        self.create_subscription(JointState, contract.JOINT_STATES, self._on_joint_states,
                                 stream_qos)
        self.create_subscription(WrenchStamped, contract.FOOT_CONTACT, self._on_foot_contact,
                                 stream_qos)
        if not self._gate_open:
            self._gate_start = time.monotonic()
            self._matched_since = None
            self._gate_timer = self.create_timer(0.005, self._check_gate, clock=self._steady)
        self._msg_command = Float64MultiArray()
        self._msg_state = JointState()
        self.get_logger().info(
            f'controller ready (model: {leg.total_mass:.2f} kg); '
            f'flight policy {getattr(self.config, "flight_policy", "?")}')

    # -- parameters ---------------------------------------------------------------------------

    def _on_set_parameters(self, params) -> SetParametersResult:
        fields = config_defaults(ControllerConfig)
        changes = {p.name: p.value for p in params if p.name in fields}
        if not changes:
            return SetParametersResult(successful=True)
        try:
            values = {n: getattr(self.config, n) for n in fields}
            for name, value in changes.items():
                values[name] = coerce_value(ControllerConfig, name, value, fields[name])
            config = config_from_parameters(ControllerConfig, values)
        except ValueError as exc:
            return SetParametersResult(successful=False, reason=str(exc))
        if self.ctrl is not None:
            try:
                self.ctrl.reconfigure(config)
            except ValueError as exc:
                self.ctrl.reconfigure(self.config)
                return SetParametersResult(successful=False, reason=str(exc))
        self.config = config
        self.get_logger().info(f'set-points changed: {changes}')
        return SetParametersResult(successful=True)

    # -- inputs -------------------------------------------------------------------------------

    def _on_joint_states(self, msg: JointState) -> None:
        names, position, velocity = msg.name, msg.position, msg.velocity
        if len(position) != len(names) or len(velocity) != len(names):
            self._throttle.warn('joint_states', 'ignored /joint_states without one position '
                                'and one velocity per joint name')
            return
        index = self._index
        used = False
        for i, name in enumerate(names):
            j = index.get(name)
            if j is not None:
                self._q[j] = position[i]
                self._v[j] = velocity[i]
                self._fresh.add(name)
                used = True
        if not used:
            return
        ns = msg.header.stamp.sec * 1_000_000_000 + msg.header.stamp.nanosec
        if ns > self._stamp_ns or not self._pending:
            self._stamp_ns = max(ns, self._stamp_ns) if self._pending else ns
        if len(self._fresh) == len(index):
            self._fresh.clear()
            self._pending = True
            self._try_update()

    def _on_foot_contact(self, msg: WrenchStamped) -> None:
        force = msg.wrench.force
        self._force = np.array((force.x, force.z))
        self._force_stamp_ns = msg.header.stamp.sec * 1_000_000_000 + msg.header.stamp.nanosec
        if self._pending:
            self._try_update()

    def _check_gate(self) -> None:
        now = time.monotonic()
        need = self.node_config.min_subscribers
        matched = self._pub_command.get_subscription_count()
        if matched < need and now - self._gate_start > self.node_config.startup_timeout:
            self.get_logger().warning(f'sending commands with {matched} of {need} '
                                      f'subscribers matched')
            self._matched_since = -math.inf
        elif matched < need:
            self._matched_since = None
            return
        elif self._matched_since is None:
            self._matched_since = now
        if now - self._matched_since >= self.node_config.discovery_settle:
            self._gate_open = True
            self._gate_timer.cancel()
            if self._pending:
                self._try_update()

    # -- the update ---------------------------------------------------------------------------

    def _try_update(self) -> None:
        if not self._gate_open:
            return
        if self.node_config.sync_foot_contact and self._force_stamp_ns != self._stamp_ns:
            return
        self._pending = False
        ns = self._stamp_ns
        t = ns * 1e-9
        q, v = self._q.copy(), self._v.copy()
        tau = np.asarray(self.ctrl.update(t, q, v, self._force.copy()), dtype=float)
        self.updates += 1
        if tau.shape != (2,) or not np.isfinite(tau).all():
            self._throttle.warn('tau', f'controller returned {tau!r}; sending zero torque')
            tau = np.zeros(2)
        self._msg_command.data = array.array('d', tau)
        self._pub_command.publish(self._msg_command)
        self._publish_state(ns, tau)
        if ns >= self._next_marker_ns:
            self._next_marker_ns = ns + int(round(self.node_config.marker_period * 1e9))
            self._publish_markers(ns, q)

    def _publish_state(self, ns: int, tau) -> None:
        values = self._channels.values(getattr(self.ctrl, 'telemetry', None))
        self._last_values = values
        values = values + [float(tau[0]), float(tau[1])]
        msg = self._msg_state
        if self._state_names is None:
            self._state_names = self._channels.names + ['tau_hip', 'tau_knee']
            msg.name = self._state_names
        msg.header.stamp.sec, msg.header.stamp.nanosec = divmod(ns, 1_000_000_000)
        msg.position = array.array('d', values)
        self._pub_state.publish(msg)

    def _publish_markers(self, ns: int, q) -> None:
        telemetry = dict(zip(self._channels.names, self._last_values))
        if 'com_position_x' not in telemetry or 'foot_position_x' not in telemetry:
            return
        com = np.array((telemetry['com_position_x'], telemetry['com_position_z']))
        foot = np.array((telemetry['foot_position_x'], telemetry['foot_position_z']))
        self._cog_path.append(Point(x=float(com[0]), y=0.0, z=float(com[1])))
        stamp = self._msg_state.header.stamp
        markers = []

        def marker(mid, name, kind, rgba):
            m = Marker()
            m.header.frame_id = 'world'
            m.header.stamp = stamp
            m.ns, m.id, m.type, m.action = name, mid, kind, Marker.ADD
            m.pose.orientation.w = 1.0
            m.color.r, m.color.g, m.color.b, m.color.a = rgba
            markers.append(m)
            return m

        def point(xz):
            return Point(x=float(xz[0]), y=0.0, z=float(xz[1]))

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
        grf.points = [point(foot), point(foot + self._force / self._weight)]
        self._pub_markers.publish(MarkerArray(markers=markers))


def main(args=None) -> int:
    return runtime.run_node(ControllerNode, 'controller', args)


if __name__ == '__main__':
    sys.exit(main())
