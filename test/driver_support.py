# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
The emulated driver's graph for real-DDS tests (the ``graph`` fixture of conftest.py).

A helper module, not a test module: ``test/hardware/test_driver_node.py`` and
``test/ros/test_ros2_control.py`` use it, and each runs alone (a test module imported by
another one is importable only when pytest collected its folder first).
"""
import os
import signal
import subprocess
import sys
import textwrap
import time

from conftest import REPO, ros_env
import numpy as np
import rclpy

# These imports must follow rclpy's (a ROS environment), so they cannot take their place in
# the sorted import block (I100).
from diagnostic_msgs.msg import DiagnosticArray  # noqa: I100
from dodo_sim.ros import contract
from sensor_msgs.msg import JointState
from std_srvs.srv import Trigger

COMMAND_TIMEOUT = 0.1
DAMPING = (2.0, 1.5)     # N*m*s/rad

#: A command publisher as its own process: answers every joint state with constant torques
#: (argv: topic, hip N*m, knee N*m) — commands flow, no closed loop whose stability would depend
#: on the machine's load (closed-loop control through the driver: test_hardware_emulator.py).
PUBLISHER = textwrap.dedent("""
    import sys
    import rclpy
    from rclpy.executors import SingleThreadedExecutor
    from sensor_msgs.msg import JointState
    from std_msgs.msg import Float64MultiArray
    from dodo_sim.ros import contract
    topic = sys.argv[1]
    tau = [float(sys.argv[2]), float(sys.argv[3])]
    rclpy.init()
    node = rclpy.create_node('commands')
    qos = contract.stream_qos()
    pub = node.create_publisher(JointState if topic == 'joint_commands' else Float64MultiArray,
                                contract.JOINT_COMMANDS if topic == 'joint_commands'
                                else contract.EFFORT_COMMANDS, qos)

    def on_state(msg):
        if topic == 'joint_commands':
            out = JointState(name=['hip', 'knee'], effort=tau)
            out.header.stamp = msg.header.stamp
        else:
            out = Float64MultiArray(data=tau)
        pub.publish(out)

    node.create_subscription(JointState, contract.JOINT_STATES, on_state, qos)
    executor = SingleThreadedExecutor()
    executor.add_node(node)
    executor.spin()
""")
TORQUE = (2.0, 1.0)      # N*m: the hanging leg settles a little off its rest pose


class Probe:
    """In-process node of the test: joint states, diagnostics, the driver's services."""

    def __init__(self, domain: int):
        self.context = rclpy.Context()
        rclpy.init(context=self.context, domain_id=domain)
        self.node = rclpy.create_node('probe', context=self.context)
        from rclpy.executors import SingleThreadedExecutor
        self.executor = SingleThreadedExecutor(context=self.context)
        self.executor.add_node(self.node)
        self.states = []            # (stamp s, effort[2], velocity[2], position[2]) hip, knee
        self.diagnostics = []       # (receive time s, {name: (level, {key: value})})
        qos = contract.stream_qos()
        self.node.create_subscription(JointState, contract.JOINT_STATES, self._on_state, qos)
        self.node.create_subscription(DiagnosticArray, contract.DIAGNOSTICS, self._on_diag, 50)
        self.clients = {name: self.node.create_client(Trigger, contract.driver_service(name))
                        for name in contract.DRIVER_SERVICES}

    def _on_state(self, msg):
        index = [msg.name.index(j) for j in ('hip', 'knee')]
        self.states.append((msg.header.stamp.sec + 1e-9 * msg.header.stamp.nanosec,
                            np.array(msg.effort)[index], np.array(msg.velocity)[index],
                            np.array(msg.position)[index]))

    def _on_diag(self, msg):
        self.diagnostics.append((time.time(), {
            s.name: (s.level[0] if isinstance(s.level, bytes) else s.level,
                     {kv.key: kv.value for kv in s.values}) for s in msg.status}))

    def spin_until(self, predicate, timeout: float, what: str, log=None):
        deadline = time.monotonic() + timeout
        while not predicate():
            if time.monotonic() > deadline:
                tail = '\n'.join(log.read_text().splitlines()[-15:]) if log else ''
                raise AssertionError(f'timed out waiting for {what} (load average '
                                     f'{os.getloadavg()[0]:.1f}); driver log:\n{tail}')
            self.executor.spin_once(timeout_sec=0.02)

    def spin_for(self, seconds: float):
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            self.executor.spin_once(timeout_sec=0.02)

    def call(self, name: str, timeout: float = 20.0):
        client = self.clients[name]
        self.spin_until(client.service_is_ready, timeout, f'/driver/{name}')
        future = client.call_async(Trigger.Request())
        self.spin_until(future.done, timeout, f'/driver/{name} response')
        return future.result(), time.time()

    def close(self):
        self.node.destroy_node()
        rclpy.try_shutdown(context=self.context)


def driver_graph(tmp_path):
    """Yield the emulated driver's graph (the ``graph`` fixture of conftest.py)."""
    env = ros_env()
    env['PYTHONPATH'] = os.pathsep.join([str(REPO), env.get('PYTHONPATH', '')])
    env['RCUTILS_LOGGING_BUFFERED_STREAM'] = '0'     # the driver's log file is read live
    procs = {}
    log = tmp_path / 'driver.log'

    def start_driver():
        procs['driver'] = subprocess.Popen(
            [sys.executable, '-m', 'dodo_sim.ros.driver_node', '--ros-args',
             '-p', 'hardware:=emulated', '-p', f'command_timeout:={COMMAND_TIMEOUT}',
             '-p', f'damping:=[{DAMPING[0]}, {DAMPING[1]}]', '-p', 'diagnostics_period:=0.1',
             '-p', 'watchdog_mode:=damp',     # the 'land' law: test_hardware_emulator.py
             # a leg on a test stand (body clamped): when the loaded machine starves the
             # command publisher past command_timeout, the damped leg swings instead of falling
             '-p', 'emulator_stand:=clamped'],
            env=env, stdout=log.open('w'), stderr=subprocess.STDOUT)
        return procs['driver']

    def start_publisher(topic='effort_commands'):
        script = tmp_path / 'commands.py'
        script.write_text(PUBLISHER)
        procs['publisher'] = subprocess.Popen(
            [sys.executable, str(script), topic, str(TORQUE[0]), str(TORQUE[1])], env=env)
        return procs['publisher']

    probe = Probe(int(env['ROS_DOMAIN_ID']))
    try:
        yield probe, start_driver, start_publisher, log
    finally:
        probe.close()
        for proc in procs.values():                 # only the processes this test started
            if proc.poll() is None:
                proc.send_signal(signal.SIGINT)
        for proc in procs.values():
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


def commands_flow(probe):
    """
    Return whether the command publisher is matched and answering.

    That is, the driver reports a fresh command age, even while disabled.
    """
    if not probe.diagnostics:
        return False
    age = probe.diagnostics[-1][1]['driver: safety'][1]['command_age_s']
    return age != 'none' and float(age) < 0.05


def torque_applied(probe):
    """
    Return whether the commands act.

    They act when the driver is enabled in torque mode and the last 100 joint states measure the
    commanded torques (12-bit torque field: +-0.13 N*m a count at the joint).
    """
    if not probe.diagnostics:
        return False
    status = probe.diagnostics[-1][1]
    if status['driver: safety'][1]['state'] != 'enabled' or any(
            status[f'driver: actuator {j}'][1]['mode'] != 'torque' for j in ('hip', 'knee')):
        return False
    recent = probe.states[-100:]
    return len(recent) == 100 and all(np.all(np.abs(effort - TORQUE) < 0.3)
                                      for _, effort, *_ in recent)
