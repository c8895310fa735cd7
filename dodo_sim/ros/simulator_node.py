"""``simulator`` ROS 2 node: a thin adapter around :class:`dodo_sim.simulator.Simulator`.

Publishes (every control period, in this order, all with the same sim-time stamp):
``/foot_contact`` (geometry_msgs/WrenchStamped: ground reaction force on the foot in the
``world`` frame, x and z in N, zero in flight), ``/joint_states`` (sensor_msgs/JointState:
``base_x, base_z, hip, knee`` position, velocity, effort = applied torque) and then ``/clock``
(rosgraph_msgs/Clock; last, so that it is off the lockstep critical path — the controller works
on the header stamps). The simulator is the clock source and does not follow ``/clock`` itself:
``use_sim_time`` is forced to false for this node (it only uses steady wall-clock timers).
``/robot_description`` (std_msgs/String, transient local) once, unless
``publish_robot_description`` is false (robot_state_publisher does it).

Subscribes: ``/effort_controller/commands`` (std_msgs/Float64MultiArray ``[hip, knee]`` N*m) and
``/simulator/push`` (geometry_msgs/Vector3: an impulse on the base, x and z in N*s, y ignored,
applied at the start of the next step) and ``/simulator/force`` (geometry_msgs/Vector3: a
constant force on the base, x and z in N, until the next message; zero to remove). Service ``/simulator/reset`` (std_srvs/Trigger): back to
``initial_q`` / ``initial_v`` at the next step; the published clock keeps increasing.

Timing (parameter ``mode``):

* ``lockstep``: publish the state of time t, then wait for the command answering it and step
  (the very first state waits up to ``startup_timeout`` so that discovery cannot cost steps).
  Float64MultiArray carries no stamp, so *the first command that arrives after a state was
  published answers that state* (the controller answers every state exactly once). No command
  within ``command_timeout`` wall-clock seconds: step with zero torque, warn (throttled), and
  keep stepping at the wall-clock control rate with zero torque until commands come back.
* ``realtime``: a steady wall-clock timer at ``control_period`` steps with the latest valid
  command (zero-order hold); zero torque when the latest is older than ``command_timeout``.
  A late tick makes up the steps due since the start (up to 10 ms worth; more is dropped and
  counted in ``overruns``), so simulated time follows wall time.

A command of the wrong length or with non-finite values is rejected, counted and logged
(throttled) and the last valid command is held: in lockstep a rejected command does not answer
the state (so a stray publisher cannot shift the exchange); if no valid answer follows within
``command_timeout``, the step uses the held command (zero torque if nothing but silence came).
Every parameter comes from :class:`SimConfig` and :class:`dodo_sim.ros.node_config.SimulatorNodeConfig`.
"""
from __future__ import annotations

import array
import math
import sys
import time

from geometry_msgs.msg import Vector3, WrenchStamped
from rclpy.clock import Clock, ClockType
from rclpy.node import Node
from rclpy.parameter import Parameter
from rclpy.task import Future
from rosgraph_msgs.msg import Clock as ClockMsg
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray, String
from std_srvs.srv import Trigger

from dodo_sim.model import JOINT_NAMES
from dodo_sim.ros import contract, node_config, runtime
from dodo_sim.ros.runtime import EXIT_DIVERGED, EXIT_OK, WarnThrottle, stamp_from_ns
from dodo_sim.ros.params import config_from_parameters, declare_config_parameters
from dodo_sim.paths import default_urdf_path
from dodo_sim.simulator import SimConfig, SimulationDiverged, Simulator

class SimulatorNode(Node):
    """The simulator node (see module docs)."""

    def __init__(self, **node_kwargs):
        super().__init__('simulator', **node_kwargs)
        if self.get_parameter('use_sim_time').value:
            # the clock source must not wait for (or deserialize) its own /clock
            self.set_parameters([Parameter('use_sim_time', Parameter.Type.BOOL, False)])
        sim_values = declare_config_parameters(
            self, SimConfig, read_only=[f for f in SimConfig.__dataclass_fields__])
        node_values = declare_config_parameters(
            self, node_config.SimulatorNodeConfig,
            read_only=[f for f in node_config.SimulatorNodeConfig.__dataclass_fields__])
        # ValueError / ModelError here name the bad parameter; main() turns them into exit 2
        self.config: SimConfig = config_from_parameters(SimConfig, sim_values)
        self.node_config: node_config.SimulatorNodeConfig = config_from_parameters(
            node_config.SimulatorNodeConfig, node_values)
        urdf = self.node_config.robot_description or default_urdf_path()
        self.sim = Simulator(urdf, self.config)
        self._throttle = WarnThrottle(self.get_logger(), self.node_config.warn_period)
        self._steady = Clock(clock_type=ClockType.STEADY_TIME)

        # counters (read by tests and the bench)
        self.steps = 0
        self.rejected_commands = 0
        self.command_timeouts = 0
        self.tick_times: list[float] = []   # realtime mode: wall time of each tick (s)
        self.overruns = 0                   # realtime mode: ticks that dropped steps
        self._realtime_steps = 0
        self._realtime_start = 0.0
        self._max_catch_up = max(1, int(round(0.01 / self.config.control_period)))

        self._period_ns = int(round(self.config.control_period * 1e9))
        self._time_offset_ns = 0            # grows at each reset so the clock never goes back
        self._stamp_ns = 0
        self._command = [0.0, 0.0]          # last valid command
        self._last_command_wall = -math.inf
        self._awaiting = False              # lockstep: a state is published, answer pending
        self._published_wall = 0.0
        self._controller_lost = False
        self._rejected_since_publish = False
        self._answered_once = False         # lockstep: the first state waits startup_timeout
        self._reset_requested = False
        self._finished = False              # stop_after reached: the next advance ends the run
        self._started = False
        self.done = Future()
        self.exit_code = EXIT_OK

        stream_qos = contract.stream_qos()
        self._pub_clock = self.create_publisher(ClockMsg, contract.CLOCK, stream_qos)
        self._pub_contact = self.create_publisher(WrenchStamped, contract.FOOT_CONTACT, stream_qos)
        self._pub_joints = self.create_publisher(JointState, contract.JOINT_STATES, stream_qos)
        self._sub_command = self.create_subscription(
            Float64MultiArray, contract.EFFORT_COMMANDS, self._on_command, stream_qos)
        self._sub_push = self.create_subscription(Vector3, contract.PUSH, self._on_push, 10)
        self._sub_force = self.create_subscription(Vector3, contract.FORCE, self._on_force, 10)
        self._srv_reset = self.create_service(Trigger, contract.RESET_SERVICE, self._on_reset)
        if self.node_config.publish_robot_description:
            self._pub_description = self.create_publisher(String, contract.ROBOT_DESCRIPTION,
                                                          contract.latched_qos())
            self._pub_description.publish(String(data=self.sim.leg.urdf_xml))

        # reusable messages (only the numbers change per step)
        self._msg_clock = ClockMsg()
        self._msg_contact = WrenchStamped()
        self._msg_contact.header.frame_id = 'world'
        self._msg_joints = JointState()
        self._msg_joints.name = list(JOINT_NAMES)

        self._startup_wall = time.monotonic()
        self._ready_since = None
        self._gate_timer = self.create_timer(0.01, self._check_start, clock=self._steady)
        self._watchdog = None
        self._tick_timer = None
        self.get_logger().info(
            f'simulator ready: {self.config.integrator} integrator, dt = {self.config.dt} s, '
            f'control period = {self.config.control_period} s, mode = {self.config.mode}; '
            f'waiting for {self.node_config.min_subscribers} subscriber(s) per state topic')

    # -- start-up -----------------------------------------------------------------------------

    def _ready(self) -> bool:
        need = self.node_config.min_subscribers
        pubs = (self._pub_clock, self._pub_contact, self._pub_joints)
        if any(p.get_subscription_count() < need for p in pubs):
            return False
        return self.config.mode != 'lockstep' or self._sub_command.get_publisher_count() >= 1

    def _check_start(self) -> None:
        if self._started:
            return
        now = time.monotonic()
        waited = now - self._startup_wall
        ready = self._ready()
        if ready and self._ready_since is None:
            self._ready_since = now
        elif not ready:
            self._ready_since = None
        settled = ready and now - self._ready_since >= self.node_config.discovery_settle
        if not settled:
            if waited < self.node_config.startup_timeout:
                return
            self.get_logger().warning(
                f'starting after {waited:.1f} s without all subscribers/controller matched')
        self._started = True
        self._gate_timer.cancel()
        self.get_logger().info(f'simulation starts (matched after {waited:.2f} s)')
        self._publish_state(self.sim.state)
        if self.config.mode == 'lockstep':
            period = min(0.05, self.config.command_timeout / 5.0)
            self._watchdog = self.create_timer(period, self._on_watchdog, clock=self._steady)
        else:
            self._last_command_wall = time.monotonic()   # command_timeout counts from the start
            self._realtime_start = time.monotonic()
            self._tick_timer = self.create_timer(self.config.control_period, self._on_tick,
                                                 clock=self._steady)

    # -- inputs ---------------------------------------------------------------------------------

    def _on_command(self, msg: Float64MultiArray) -> None:
        data = msg.data
        if len(data) != 2 or not (math.isfinite(data[0]) and math.isfinite(data[1])):
            self.rejected_commands += 1
            self._rejected_since_publish = True
            self._throttle.warn(
                'bad_command', f'rejected command {list(data)!r} (need 2 finite values '
                f'[hip, knee] N*m); {self.rejected_commands} rejected so far, holding '
                f'{self._command}')
            return
        self._command = [float(data[0]), float(data[1])]
        self._last_command_wall = time.monotonic()
        self._answered_once = True
        if self._controller_lost:
            self._recover()
        if self._awaiting:
            self._advance(self._command)

    def _on_push(self, msg: Vector3) -> None:
        try:
            self.sim.apply_impulse([msg.x, msg.z])
        except ValueError as exc:
            self._throttle.warn('bad_push', f'rejected push: {exc}')
            return
        self.get_logger().info(f'push on the base: [{msg.x}, {msg.z}] N*s')

    def _on_force(self, msg: Vector3) -> None:
        try:
            self.sim.set_external_force([msg.x, msg.z])
        except ValueError as exc:
            self._throttle.warn('bad_force', f'rejected force: {exc}')
            return
        self.get_logger().info(f'constant force on the base: [{msg.x}, {msg.z}] N')

    def _on_reset(self, request, response):
        self._reset_requested = True
        response.success = True
        response.message = 'the leg is put back to initial_q/initial_v at the next step'
        return response

    # -- stepping ----------------------------------------------------------------------------

    def _on_watchdog(self) -> None:
        if not self._awaiting or self._controller_lost:
            return
        silent = time.monotonic() - self._published_wall
        if not self._answered_once:
            # start-up: the controller may still be discovering the command subscribers
            if silent > self.node_config.startup_timeout:
                self._answered_once = True
                self.get_logger().warning(f'no answer to the first state within '
                                          f'startup_timeout = {self.node_config.startup_timeout} s')
            return
        if silent > self.config.command_timeout and self._rejected_since_publish:
            self._throttle.warn('held', f'only rejected commands for {silent:.2f} s: stepping '
                                f'with the held command {self._command}')
            self._advance(self._command)
        elif silent > self.config.command_timeout:
            self.command_timeouts += 1
            self._controller_lost = True
            self._throttle.warn(
                'timeout', f'no command for {silent:.2f} s (command_timeout = '
                f'{self.config.command_timeout} s): zero torque, stepping at the wall-clock '
                f'control rate until commands come back')
            self._tick_timer = self.create_timer(self.config.control_period, self._on_tick,
                                                 clock=self._steady)

    def _recover(self) -> None:
        self._controller_lost = False
        if self.config.mode == 'lockstep' and self._tick_timer is not None:
            self.destroy_timer(self._tick_timer)
            self._tick_timer = None
        self.get_logger().info('commands are back')

    def _on_tick(self) -> None:
        now = time.monotonic()
        if self.config.mode == 'realtime':
            self.tick_times.append(now)
            # steps due by now; a late tick catches up (at most max_catch_up steps at once, the
            # rest is dropped and counted) so that simulated time keeps up with wall time
            due = int(round((now - self._realtime_start) / self.config.control_period))
            behind = due - self._realtime_steps
            if behind > self._max_catch_up:
                self.overruns += 1
                self._realtime_steps = due - self._max_catch_up
                behind = self._max_catch_up
            for _ in range(max(behind, 0)):
                self._realtime_steps += 1
                if now - self._last_command_wall > self.config.command_timeout:
                    if not self._controller_lost:
                        self.command_timeouts += 1
                    self._controller_lost = True
                    self._throttle.warn('timeout', f'no valid command for more than '
                                        f'{self.config.command_timeout} s: zero torque')
                    self._advance((0.0, 0.0))
                else:
                    self._advance(self._command)
        elif self._controller_lost:
            self._advance((0.0, 0.0))

    def _advance(self, tau) -> None:
        if self.done.done():
            return
        self._awaiting = False
        if self._finished:
            self.get_logger().info(
                f'stop_after = {self.node_config.stop_after} s of simulated time reached after '
                f'{self.steps} steps; {self.rejected_commands} command(s) rejected, '
                f'{self.command_timeouts} timeout(s)')
            self.done.set_result(EXIT_OK)
            return
        if self._reset_requested:
            self._reset_requested = False
            self._time_offset_ns = self._stamp_ns + self._period_ns
            state = self.sim.reset()
            self.get_logger().info('reset to the initial state')
        else:
            try:
                state = self.sim.step(tau)
            except SimulationDiverged as exc:
                last = exc.last_good_state
                self.get_logger().error(
                    f'{exc}; stopping. Last good state: q = {last.q.tolist()}, '
                    f'v = {last.v.tolist()}')
                self.exit_code = EXIT_DIVERGED
                self.done.set_result(EXIT_DIVERGED)
                return
        self.steps += 1
        self._publish_state(state)

    def _publish_state(self, state) -> None:
        ns = self._time_offset_ns + int(round(state.t * 1e9))
        self._stamp_ns = ns
        stamp = stamp_from_ns(ns)
        contact = self._msg_contact
        contact.header.stamp = stamp
        contact.wrench.force.x = float(state.contact_force[0])
        contact.wrench.force.z = float(state.contact_force[1])
        self._pub_contact.publish(contact)
        joints = self._msg_joints
        joints.header.stamp = stamp
        joints.position = array.array('d', state.q)
        joints.velocity = array.array('d', state.v)
        tau = state.tau_applied
        joints.effort = array.array('d', (0.0, 0.0, tau[0], tau[1]))
        stop_after = self.node_config.stop_after
        # the last state (t >= stop_after) is still answered before the run ends
        self._finished = stop_after > 0.0 and ns >= int(round(stop_after * 1e9)) - 1000
        self._published_wall = time.monotonic()
        self._rejected_since_publish = False
        self._awaiting = self.config.mode == 'lockstep'
        self._pub_joints.publish(joints)
        self._msg_clock.clock = stamp
        self._pub_clock.publish(self._msg_clock)


def main(args=None) -> int:
    return runtime.run_node(SimulatorNode, 'simulator', args)


if __name__ == '__main__':
    sys.exit(main())
