"""The ``driver`` node over real DDS with the emulated hardware (realtime, in the driver's
process) and a command publisher in its own process: joint states at ~1 kHz, the e-stop
service turning the emulated motors off from the next cycle, a killed command publisher giving
zero torque plus damping within command_timeout, reported on /diagnostics."""
import os
import signal
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest
from conftest import REPO, ros_env

rclpy = pytest.importorskip('rclpy')

from diagnostic_msgs.msg import DiagnosticArray  # noqa: E402
from sensor_msgs.msg import JointState  # noqa: E402
from std_srvs.srv import Trigger  # noqa: E402

from dodo_sim.ros import contract  # noqa: E402

pytestmark = [pytest.mark.ros]

COMMAND_TIMEOUT = 0.1
DAMPING = (40.0, 40.0)   # N*m*s/rad: the leg sinks slowly enough to stay in its limits

#: A PD hold of the leg as its own process: answers every joint state (both command topics).
PUBLISHER = textwrap.dedent('''
    import sys
    import rclpy
    from rclpy.executors import SingleThreadedExecutor
    from sensor_msgs.msg import JointState
    from std_msgs.msg import Float64MultiArray
    from dodo_sim.ros import contract
    topic = sys.argv[1]
    rclpy.init()
    node = rclpy.create_node('hold')
    qos = contract.stream_qos()
    pub = node.create_publisher(JointState if topic == 'joint_commands' else Float64MultiArray,
                                contract.JOINT_COMMANDS if topic == 'joint_commands'
                                else contract.EFFORT_COMMANDS, qos)
    ref = {'hip': 0.3, 'knee': -0.6}

    def on_state(msg):
        q = dict(zip(msg.name, msg.position))
        v = dict(zip(msg.name, msg.velocity))
        tau = [-300.0 * (q[j] - ref[j]) - 20.0 * v[j] for j in ('hip', 'knee')]
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
''')


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
        self.clients = {name: self.node.create_client(Trigger, f'/driver/{name}')
                        for name in ('enable', 'disable', 'estop')}

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


@pytest.fixture
def graph(tmp_path):
    env = ros_env()
    env['PYTHONPATH'] = os.pathsep.join([str(REPO), env.get('PYTHONPATH', '')])
    procs = {}
    log = tmp_path / 'driver.log'

    def start_driver():
        procs['driver'] = subprocess.Popen(
            [sys.executable, '-m', 'dodo_sim.ros.driver_node', '--ros-args',
             '-p', 'hardware:=emulated', '-p', f'command_timeout:={COMMAND_TIMEOUT}',
             '-p', f'damping:=[{DAMPING[0]}, {DAMPING[1]}]', '-p', 'diagnostics_period:=0.1',
             # standing on the ground: the hold need not catch a drop (commands can be late)
             '-p', 'emulator_initial_q:=[0.0, 0.96, 0.3, -0.6]'],
            env=env, stdout=log.open('w'), stderr=subprocess.STDOUT)

    def start_publisher(topic='effort_commands'):
        script = tmp_path / 'hold.py'
        script.write_text(PUBLISHER)
        procs['publisher'] = subprocess.Popen([sys.executable, str(script), topic], env=env)
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
    """The command publisher is matched and answering (the driver reports a fresh command age,
    even while disabled)."""
    if not probe.diagnostics:
        return False
    age = probe.diagnostics[-1][1]['driver: safety'][1]['command_age_s']
    return age != 'none' and float(age) < 0.05


def held(probe):
    """The PD hold carries the leg: commands flow (no watchdog on /diagnostics) and the last
    200 joint states are at the hold pose with the knee carrying load."""
    if not probe.diagnostics:
        return False
    safety = probe.diagnostics[-1][1]['driver: safety'][1]
    if safety['state'] != 'enabled' or safety['watchdog_active'] != 'False':
        return False
    recent = probe.states[-200:]
    return len(recent) == 200 and all(
        abs(q[0] - 0.3) < 0.05 and abs(q[1] + 0.6) < 0.1 and abs(effort[1]) > 5.0
        for _, effort, _, q in recent)


def test_joint_states_at_1khz_and_estop_turns_motors_off_from_the_next_cycle(graph):
    probe, start_driver, start_publisher, log = graph
    start_driver()
    probe.spin_until(lambda: len(probe.states) > 3000, 60.0, 'joint states')
    stamps = np.array([s[0] for s in probe.states[-3000:]])
    spacing = np.diff(stamps)
    rate = (len(stamps) - 1) / (stamps[-1] - stamps[0])
    # ~1 kHz: the median spacing is the 1 ms period, stretched when the machine is loaded
    # (1.13 ms at load 10 on 2 cores). The average rate is what the load leaves
    # (bench/bench_driver.py: 714 Hz at load 4.9, 247 Hz at load 15): here only "not stuck".
    assert 0.0009 < np.median(spacing) < 0.002, (rate, np.percentile(spacing, [1, 50, 99]))
    assert rate > 100.0, (rate, os.getloadavg())
    start_publisher()
    probe.spin_until(lambda: commands_flow(probe), 60.0, 'commands from the publisher', log)
    response, _ = probe.call('enable')
    assert response.success, response.message
    probe.spin_until(lambda: held(probe), 60.0, 'the hold to carry the leg', log)
    response, answered = probe.call('estop')
    assert response.success
    probe.spin_until(lambda: sum(stamp > answered for stamp, *_ in probe.states[-300:]) > 100,
                     30.0, '100 joint states after the e-stop')
    after = [effort for stamp, effort, *_ in probe.states if stamp > answered]
    # the reply of a disabled actuator: zero torque (one count of the 12-bit field)
    assert max(np.abs(e).max() for e in after) < 0.2, log.read_text()
    probe.spin_until(lambda: probe.diagnostics and probe.diagnostics[-1][0] > answered + 0.15,
                     10.0, 'diagnostics after the e-stop')
    status = probe.diagnostics[-1][1]
    assert status['driver: safety'][1]['state'] == 'estop'
    assert status['driver: actuator hip'][1]['motor_on'] == 'False'
    assert status['driver: actuator knee'][1]['motor_on'] == 'False'


def test_killed_command_publisher_gives_zero_torque_plus_damping_and_diagnostics(graph):
    probe, start_driver, start_publisher, log = graph
    start_driver()
    publisher = start_publisher('joint_commands')
    probe.spin_until(lambda: commands_flow(probe), 60.0, 'commands from the publisher', log)
    response, _ = probe.call('enable')
    assert response.success, response.message
    probe.spin_until(lambda: held(probe), 60.0, 'the hold to carry the leg', log)
    publisher.send_signal(signal.SIGKILL)
    publisher.wait()
    killed = time.time()
    probe.spin_until(lambda: sum(stamp > killed + COMMAND_TIMEOUT + 0.005
                                 for stamp, *_ in probe.states[-300:]) > 100,
                     30.0, '100 joint states after the command timeout')
    states = probe.states
    late = [k for k, (stamp, *_) in enumerate(states)
            if stamp > killed + COMMAND_TIMEOUT + 0.005]
    assert len(late) > 100
    damping = np.array(DAMPING)
    for k in late:
        # the firmware's output -kd v, computed at the start of the physics period(s) since
        # the previous reply: between -kd v of the last three samples (+ velocity noise and torque counts)
        effort = states[k][1]
        bounds = np.array([-damping * states[i][2] for i in (k - 2, k - 1, k)])
        assert np.all(effort >= bounds.min(axis=0) - 0.6), (effort, bounds)
        assert np.all(effort <= bounds.max(axis=0) + 0.6), (effort, bounds)
    probe.spin_until(lambda: any(t > killed + COMMAND_TIMEOUT and d['driver: safety'][1][
        'watchdog_active'] == 'True' for t, d in probe.diagnostics), 10.0,
        'the watchdog on /diagnostics')
    first = next(t for t, d in probe.diagnostics
                 if t > killed and d['driver: safety'][1]['watchdog_active'] == 'True')
    assert first - killed < 5.0              # reported at the next 10 Hz diagnostics (+ load)
    level, values = next(d for t, d in probe.diagnostics if t == first)['driver: safety']
    assert level == 1                                         # WARN
    assert float(values['command_age_s']) > COMMAND_TIMEOUT
    assert 'no command for' in log.read_text()
