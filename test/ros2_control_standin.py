# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
A stand-in controller_manager: ``ros2_control_node``'s main loop on sim time, in rclpy.

No controller_manager is installable here (C++ ROS packages), so the tests and
``bench/bench_ros2_control.py`` run this one. It follows the upstream sources line by line
where they decide what the simulator sees (docs/ros2_control.md, "What the controller_manager
does"):

* ros-controls/ros2_control, branch kilted @ cbe7d2c38b716569622786fa9732e3eaca78aca1 (5.16.0;
  the loop is identical on jazzy @ 9ffbf97fd6798085db22797fed44da59089dc10a, 4.46.0),
  ``controller_manager/src/ros2_control_node.cpp`` and ``src/sleeping_policies.cpp``: a
  MultiThreadedExecutor spins the controller_manager node (and, since hardware components have
  nodes, each component's node) while a thread runs the loop::

      cm->get_clock()->wait_until_started();                      // ROS time 0: not started
      cm->get_clock()->sleep_for(1 / update_rate);                // on the sim clock
      state.previous_time = cm->get_trigger_clock()->now();
      std::this_thread::sleep_for(state.period);                  // wall
      while (rclcpp::ok()) {
        current_time = now(); measured_period = current_time - previous_time;
        previous_time = current_time;
        cm->read(now(), measured_period); cm->update(...); cm->write(...);
        cm->get_clock()->sleep_until(state.previous_time + state.period);  // sleep_for_sim_time
      }

  ``rclcpp::Clock::wait_until_started`` (ros2/rclcpp jazzy @ 985e320) sleeps until 1 ns;
  ``get_trigger_clock()`` is the node's clock under ``use_sim_time`` (controller_manager.cpp,
  ``initialize_parameters``). The loop runs before any hardware exists; the resource manager is
  built when the first ``robot_description`` arrives (QoS(1), transient local; a later one is
  ignored: ``robot_description_callback``).
* ros-controls/topic_based_hardware_interfaces @ d115f23614d7180e54027e8cb7f2df5a9d719d2d,
  ``joint_state_topic_hardware_interface.cpp`` (``JointStateTopicSystem``): its own node (named
  after the <ros2_control> block, with its own clock: rclcpp gives every node a /clock
  subscription), commands published with ``QoS(1)`` on ``joint_commands_topic``, states read
  with ``SensorDataQoS`` from ``joint_states_topic`` into ``latest_joint_state_``; ``read()``
  copies the newest message's finite values to the state interfaces by joint name;
  ``write()`` sums |state - command| over the command interfaces, returns when it is <=
  ``trigger_joint_command_threshold`` (a NaN sum publishes), else publishes every joint's name
  and the command values, ``header.stamp = get_node()->now()``.
* The controller: a PD on the effort command interfaces of the joints the spawner's
  ``--param-file`` gives ``effort_controller`` (the role a JointGroupEffortController fed by a
  user's PD plays). Command interfaces hold NaN until it is active (ros2_control's initial
  value); it is activated ``activate_after_s`` wall s after the hardware (the spawner's time).

What differs (rclpy has no per-node clock thread: both nodes' /clock callbacks run on the
executor's thread, as the state callback does; one SingleThreadedExecutor thread instead of
rclpy's MultiThreadedExecutor, whose main thread spun at 100 % and stalled the loop) is said
in docs/ros2_control.md.

Measurement (every loop iteration): the loop's clock, the stamp of the state ``read()`` took,
whether ``write()`` published, and its stamp. A command *computed from the awaited state* is one
whose ``read()`` took the state stamped with the loop's clock: in lockstep the simulator awaits
the answer to the state whose /clock woke the loop.

Run as a script (``python test/ros2_control_standin.py --controllers F --param-file F
--report out.json``): it runs until SIGINT/SIGTERM, then writes the report (JSON).
:func:`run_recipe` runs the whole recipe of docs/ros2_control.md (the test and
``bench/bench_ros2_control.py``).
"""
from __future__ import annotations

import argparse
import json
import math
import os
from pathlib import Path
import signal
import subprocess
import sys
import threading
import time
import xml.etree.ElementTree as ET

import rclpy
from rclpy.duration import Duration
from rclpy.executors import ExternalShutdownException, SingleThreadedExecutor
from rclpy.parameter import Parameter
from rclpy.qos import (DurabilityPolicy, qos_profile_sensor_data, QoSProfile,
                       ReliabilityPolicy)
from rclpy.time import Time
from sensor_msgs.msg import JointState
from std_msgs.msg import String
import yaml

#: PD gains of the stand-in's effort controller (N*m/rad, N*m*s/rad) and its set point: the
#: joint positions of the <ros2_control> block's initial values.
KP, KD = 100.0, 5.0


class HardwareComponent:
    """``JointStateTopicSystem`` with the interfaces of one <ros2_control> block."""

    def __init__(self, context, block: ET.Element):
        hardware = block.find('hardware')
        params = {p.get('name'): (p.text or '').strip() for p in hardware.findall('param')}
        self.joints = [j.get('name') for j in block.findall('joint')]
        self.command_interfaces = {j.get('name'): [c.get('name') for c in
                                                   j.findall('command_interface')]
                                   for j in block.findall('joint')}
        self.initial = {}
        for joint in block.findall('joint'):
            for state in joint.findall('state_interface'):
                value = state.find("param[@name='initial_value']")
                if value is not None:
                    self.initial[f'{joint.get("name")}/{state.get("name")}'] = float(value.text)
        self.threshold = float(params.get('trigger_joint_command_threshold', '1e-5'))
        name = block.get('name').lower().replace('/', '_')
        # a component node: the controller_manager's global arguments (-p use_sim_time:=true)
        self.node = rclpy.create_node(name, context=context, parameter_overrides=[
            Parameter('use_sim_time', value=True)])
        self.pub = self.node.create_publisher(
            JointState, params.get('joint_commands_topic', '/robot_joint_commands'),
            QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE))
        self.latest = None
        self.node.create_subscription(JointState,
                                      params.get('joint_states_topic', '/robot_joint_states'),
                                      self._on_state, qos_profile_sensor_data)
        self.state = {f'{j}/{i}': self.initial.get(f'{j}/{i}', 0.0)
                      for j in self.joints for i in ('position', 'velocity', 'effort')}
        self.command = {f'{j}/{i}': math.nan
                        for j, names in self.command_interfaces.items() for i in names}
        self.read_stamp_ns = -1

    def _on_state(self, msg: JointState) -> None:
        self.latest = msg                     # latest_joint_state_ = *joint_state

    def read(self) -> None:
        msg = self.latest
        if msg is None:
            return
        self.read_stamp_ns = msg.header.stamp.sec * 1_000_000_000 + msg.header.stamp.nanosec
        for i, name in enumerate(msg.name):
            if name not in self.joints:
                continue
            for field, interface in ((msg.position, 'position'), (msg.velocity, 'velocity'),
                                     (msg.effort, 'effort')):
                if len(field) and math.isfinite(field[i]):
                    self.state[f'{name}/{interface}'] = field[i]

    def write(self):
        """Return the stamp (ns) of the published command and whether it was finite, or None."""
        diff = sum(abs(self.state[k] - self.command[k]) for k in self.command)
        if diff <= self.threshold:            # False for NaN: a NaN command is published
            return None
        msg = JointState()
        for joint in self.joints:
            msg.name.append(joint)
            msg.header.stamp = self.node.get_clock().now().to_msg()
            for interface in self.command_interfaces[joint]:
                value = self.command[f'{joint}/{interface}']
                getattr(msg, interface).append(value)
        self.pub.publish(msg)
        stamp = msg.header.stamp.sec * 1_000_000_000 + msg.header.stamp.nanosec
        return stamp, all(math.isfinite(v) for v in self.command.values())


class EffortPD:
    """The effort controller: a PD to the initial joint positions, active after a delay."""

    def __init__(self, joints, activate_after_s: float):
        self.joints = list(joints)
        self.activate_after_s = activate_after_s
        self.since = None

    def update(self, hardware: HardwareComponent, wall_s: float) -> None:
        if self.since is None:
            self.since = wall_s
        if wall_s - self.since < self.activate_after_s:
            return                            # not active yet: the interfaces keep NaN
        for joint in self.joints:
            q = hardware.state[f'{joint}/position']
            v = hardware.state[f'{joint}/velocity']
            q_ref = hardware.initial.get(f'{joint}/position', 0.0)
            hardware.command[f'{joint}/effort'] = KP * (q_ref - q) - KD * v


class ControllerManagerStandIn:
    """The controller_manager node, its loop thread and its executor (module docs)."""

    def __init__(self, context, controllers_file: str, param_file: str,
                 activate_after_s: float = 0.3, lose_clock_at_s: float = 0.0):
        config = yaml.safe_load(open(controllers_file).read())
        self.update_rate = int(config['controller_manager']['ros__parameters']['update_rate'])
        self.period_ns = 1_000_000_000 // self.update_rate
        spawned = yaml.safe_load(open(param_file).read())          # spawner --param-file
        self.controller = EffortPD(spawned['effort_controller']['ros__parameters']['joints'],
                                   activate_after_s)
        self.context = context
        self.node = rclpy.create_node('controller_manager', context=context,
                                      parameter_overrides=[Parameter('use_sim_time', value=True)])
        self.executor = SingleThreadedExecutor(context=context)
        self.executor.add_node(self.node)
        self.hardware = None
        self.node.create_subscription(
            String, 'robot_description', self._on_robot_description,
            QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE,
                       durability=DurabilityPolicy.TRANSIENT_LOCAL))
        self.iterations = []      # (loop clock ns, read stamp ns, write stamp ns or -1, finite)
        self.efforts = []         # (efforts read, efforts written) of the effort joints
        self.loop_wall = []       # wall s of the first and the last iteration
        # a fault: the /clock sample of this sim time never wakes the loop (ClockQoS is best
        # effort, depth 1); 0: none
        self.lose_clock_ns = round(lose_clock_at_s * 1e9)
        self.lost_clocks = 0
        self.thread = threading.Thread(target=self._main_loop, daemon=True)

    def _on_robot_description(self, msg: String) -> None:
        if self.hardware is not None:         # "ResourceManager has already loaded a urdf"
            return
        block = ET.fromstring(msg.data).find('ros2_control')
        hardware = HardwareComponent(self.context, block)
        self.executor.add_node(hardware.node)
        self.hardware = hardware              # activated at once (the default initial state)

    def _main_loop(self) -> None:
        clock = self.node.get_clock()
        context = self.context
        period = Duration(nanoseconds=self.period_ns)
        try:
            # wait_until_started(): rclcpp sleeps until 1 ns when the clock has not started
            if clock.now().nanoseconds == 0:
                clock.sleep_until(Time(nanoseconds=1, clock_type=clock.clock_type), context)
            clock.sleep_for(period, context)
            previous_time = clock.now()
            time.sleep(self.period_ns * 1e-9)             # std::this_thread::sleep_for (wall)
            while context.ok():
                current_time = clock.now()
                previous_time = current_time
                self._read_update_write(current_time.nanoseconds)
                if not clock.sleep_until(previous_time + period, context):   # sim time
                    break
        except Exception:                      # the context shut down under a sleep
            if context.ok():
                raise

    def _read_update_write(self, clock_ns: int) -> None:
        hardware = self.hardware
        if hardware is None:                   # no resource manager yet: nothing to do
            return
        if self.lose_clock_ns and clock_ns == self.lose_clock_ns:
            self.lost_clocks += 1              # as if asleep through it: no read, no write
            return
        hardware.read()
        joints = self.controller.joints
        read = tuple(hardware.state[f'{j}/effort'] for j in joints)
        self.controller.update(hardware, time.monotonic())
        written = hardware.write()
        stamp, finite = written if written is not None else (-1, False)
        self.iterations.append((clock_ns, hardware.read_stamp_ns, stamp, finite))
        self.efforts.append((read, tuple(hardware.command[f'{j}/effort'] for j in joints)))
        wall = time.monotonic()
        if not self.loop_wall:
            self.loop_wall = [wall, wall]
        self.loop_wall[1] = wall

    def start(self) -> None:
        self.thread.start()

    def report(self) -> dict:
        """Return what the loop did: writes, answers computed from the awaited state."""
        rows = list(self.iterations)
        valid = [r for r in rows if r[2] >= 0 and r[3]]
        from_awaited = [r for r in valid if r[1] == r[0]]
        # the state a loop read (stamped like its clock) carries the effort applied in the step
        # that led to it: the command the loop wrote one period earlier, when that one answered
        efforts = list(self.efforts)
        pairs = [(efforts[k - 1][1], efforts[k][0]) for k in range(1, len(rows))
                 if rows[k][1] == rows[k][0] == rows[k - 1][0] + self.period_ns
                 and rows[k - 1][2] >= 0 and rows[k - 1][3]]
        return {
            'update_rate': self.update_rate,
            'iterations': len(rows),
            'writes': sum(1 for r in rows if r[2] >= 0),
            'valid_writes': len(valid),
            'from_awaited_state': len(from_awaited),
            'fraction_from_awaited_state': (len(from_awaited) / len(valid)) if valid else None,
            'stamped_behind_loop_clock': sum(1 for r in valid if r[2] != r[0]),
            'applied_checked': len(pairs),
            'applied_as_written': sum(1 for written, applied in pairs if written == applied),
            'lost_clocks': self.lost_clocks,
            'first_clock_ns': rows[0][0] if rows else None,
            'last_clock_ns': rows[-1][0] if rows else None,
            'loop_wall_s': (self.loop_wall[1] - self.loop_wall[0]) if self.loop_wall else 0.0,
        }


REPO = Path(__file__).resolve().parent.parent
CONFIG = REPO / 'config' / 'ros2_control'


def recipe_env(domain: int) -> dict:
    """Return the environment of the recipe's processes: a private domain, localhost only."""
    env = dict(os.environ)
    env['ROS_DOMAIN_ID'] = str(domain)
    env['ROS_AUTOMATIC_DISCOVERY_RANGE'] = 'LOCALHOST'
    env['PYTHONPATH'] = os.pathsep.join(filter(None, [str(REPO), env.get('PYTHONPATH')]))
    env['PYTHONUNBUFFERED'] = '1'
    return env


def _stop(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(20.0)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(10.0)


def run_recipe(workdir: Path, domain: int, stop_after_s: float, budget_s: float,
               activate_after_s: float = 0.3, start_timeout_s: float = 60.0,
               lose_clock_at_s: float = 0.0) -> dict:
    """
    Run docs/ros2_control.md's recipe until the simulator's stop_after; return what it did.

    The simulator with ``config/ros2_control/simulator.yaml``, this stand-in with
    ``hopper_controllers.yaml`` (also as the spawner's ``--param-file``), and
    robot_state_publisher's part done here (the xacro output with
    ``hardware_plugin:=topic_based`` on ``/robot_description``, transient local). Raises
    TimeoutError when the simulator has not started within ``start_timeout_s`` or not
    finished ``budget_s`` after it started. ``lose_clock_at_s`` > 0: the loop never wakes at
    that sim time (a lost /clock sample).
    Returns ``{'summary': the simulator's dodo exchange: line, 'controller_manager': the
    stand-in's report, 'wall_s': from "simulation starts" to the simulator's exit,
    'simulator_log': its output}``.
    """
    import xacro
    from dodo_sim.ros.runtime import parse_summary
    env = recipe_env(domain)
    urdf = xacro.process_file(str(REPO / 'urdf' / 'hopper.urdf.xacro'),
                              mappings={'hardware_plugin': 'topic_based'}).toxml()
    context = rclpy.Context()
    rclpy.init(context=context, domain_id=domain)
    sim_log, cm_log = workdir / 'simulator.log', workdir / 'controller_manager.log'
    report = workdir / 'controller_manager.json'
    controllers = CONFIG / 'hopper_controllers.yaml'
    procs = []
    try:
        node = rclpy.create_node('robot_state_publisher', context=context)
        node.create_publisher(String, 'robot_description', QoSProfile(
            depth=1, reliability=ReliabilityPolicy.RELIABLE,
            durability=DurabilityPolicy.TRANSIENT_LOCAL)).publish(String(data=urdf))
        from rclpy.executors import SingleThreadedExecutor
        executor = SingleThreadedExecutor(context=context)
        executor.add_node(node)
        with open(sim_log, 'w') as out:
            procs.append(subprocess.Popen(
                [sys.executable, '-m', 'dodo_sim.ros.simulator_node', '--ros-args',
                 '--params-file', str(CONFIG / 'simulator.yaml'),
                 '-p', f'stop_after:={stop_after_s}'],
                env=env, stdout=out, stderr=subprocess.STDOUT, cwd=REPO))
        with open(cm_log, 'w') as out:
            procs.append(subprocess.Popen(
                [sys.executable, __file__, '--controllers', str(controllers),
                 '--param-file', str(controllers), '--report', str(report),
                 '--activate-after', str(activate_after_s),
                 '--lose-clock-at', str(lose_clock_at_s)],
                env=env, stdout=out, stderr=subprocess.STDOUT, cwd=REPO))
        sim = procs[0]
        deadline = time.monotonic() + start_timeout_s
        while 'simulation starts' not in sim_log.read_text():
            if sim.poll() is not None or time.monotonic() > deadline:
                raise TimeoutError('the simulator did not start: ' + sim_log.read_text()[-3000:])
            executor.spin_once(timeout_sec=0.05)
        started = time.monotonic()
        while sim.poll() is None:
            if time.monotonic() > started + budget_s:
                raise TimeoutError(f'no end within {budget_s} s of wall time: '
                                   + sim_log.read_text()[-3000:])
            executor.spin_once(timeout_sec=0.05)
        wall_s = time.monotonic() - started
        _stop(procs[1])
        node.destroy_node()
    finally:
        for proc in reversed(procs):
            _stop(proc)
        rclpy.try_shutdown(context=context)
    output = sim_log.read_text()
    return {'summary': parse_summary(output, 'exchange'), 'returncode': procs[0].returncode,
            'controller_manager': json.loads(report.read_text()), 'wall_s': wall_s,
            'simulator_log': output}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[1])
    parser.add_argument('--controllers', required=True, help='controller_manager params file')
    parser.add_argument('--param-file', required=True, help="the spawner's --param-file")
    parser.add_argument('--report', required=True, help='JSON report written at the end')
    parser.add_argument('--activate-after', type=float, default=0.3,
                        help='wall s from the hardware to the active effort controller')
    parser.add_argument('--lose-clock-at', type=float, default=0.0,
                        help='sim s whose /clock never wakes the loop (a fault; 0: none)')
    args = parser.parse_args()
    rclpy.init()
    context = rclpy.get_default_context()
    cm = ControllerManagerStandIn(context, args.controllers, args.param_file,
                                  args.activate_after, args.lose_clock_at)
    cm.start()
    try:
        cm.executor.spin()
    except (KeyboardInterrupt, ExternalShutdownException):
        pass
    finally:
        rclpy.try_shutdown()
        cm.thread.join(timeout=2.0)
        with open(args.report, 'w') as out:
            json.dump(cm.report(), out)


if __name__ == '__main__':
    main()
