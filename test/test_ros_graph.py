"""The simulator and controller nodes in one process (one executor, private ROS domain).

Cheaper than separate processes and enough for: the lockstep exchange reproducing the pure core
loop, hopping at the set-point, bad commands rejected without effect, command timeout -> zero
torque and recovery, push topic and reset service, realtime zero-order hold, joint states merged
from two drivers, runtime set-points. Multi-process runs over real DDS are in test_ros_dds.py
and test_cli_hop.py.
"""
import dataclasses
import itertools
import math
import os
import subprocess
import sys
import time

import numpy as np
import pytest
from conftest import ros_domain_id

rclpy = pytest.importorskip('rclpy')

from geometry_msgs.msg import Vector3, WrenchStamped  # noqa: E402
from rclpy.parameter import Parameter  # noqa: E402
from sensor_msgs.msg import JointState  # noqa: E402
from std_msgs.msg import Float64MultiArray  # noqa: E402
from std_srvs.srv import Trigger  # noqa: E402

from dodo_control.controller import Controller, ControllerConfig  # noqa: E402
from dodo_sim.ros import contract  # noqa: E402
from dodo_sim.ros.params import config_from_file  # noqa: E402
from dodo_sim.paths import default_urdf_path  # noqa: E402
from dodo_sim.rollout import rollout  # noqa: E402
from dodo_sim.simulator import SimConfig, Simulator  # noqa: E402

pytestmark = pytest.mark.ros

APEX_SETPOINT = 1.2
PARAMS = f'''
/**:
  ros__parameters:
    use_sim_time: true
simulator:
  ros__parameters:
    mode: lockstep
    initial_q: [0.0, 1.3, 0.3, -0.6]
    command_timeout: 2.0
controller:
  ros__parameters:
    apex_height: {APEX_SETPOINT}
    target_x: .nan
    target_velocity: 0.0
'''


@pytest.fixture
def ros(monkeypatch, tmp_path):
    """A private rclpy context (own domain, localhost only) for in-process nodes."""
    monkeypatch.setenv('ROS_AUTOMATIC_DISCOVERY_RANGE', 'LOCALHOST')
    params = tmp_path / 'params.yaml'
    params.write_text(PARAMS)
    context = rclpy.Context()
    rclpy.init(context=context, domain_id=ros_domain_id(),
               args=['--ros-args', '--params-file', str(params)])
    nodes = []

    class Ros:
        def __init__(self):
            self.context = context
            self.params = params
            from rclpy.experimental import EventsExecutor
            self.executor = EventsExecutor(context=context)

        def add(self, node):
            nodes.append(node)
            self.executor.add_node(node)
            return node

        def spin_until(self, condition, timeout_s):
            """Spin until condition() is true; False at the deadline (never a bare sleep)."""
            deadline = time.monotonic() + timeout_s
            while not condition():
                if time.monotonic() > deadline:
                    return False
                self.executor.spin_once(timeout_sec=0.02)
            return True

    yield Ros()
    for node in nodes:
        node.destroy_node()
    rclpy.try_shutdown(context=context)


def make_sim(ros, **overrides):
    from dodo_sim.ros.simulator_node import SimulatorNode
    return ros.add(SimulatorNode(context=ros.context, parameter_overrides=[
        Parameter(k, value=v) for k, v in overrides.items()]))


def make_controller(ros, **overrides):
    from dodo_control.controller_node import ControllerNode
    return ros.add(ControllerNode(context=ros.context, parameter_overrides=[
        Parameter(k, value=v) for k, v in overrides.items()]))


def stamp_ns(msg):
    return msg.header.stamp.sec * 1_000_000_000 + msg.header.stamp.nanosec


class Probe:
    """A test node recording /joint_states and commands, and able to publish anything."""

    def __init__(self, ros):
        self.node = ros.add(rclpy.create_node('probe', context=ros.context))
        self.states, self.commands = [], []
        qos = 1000
        self.node.create_subscription(JointState, contract.JOINT_STATES, self.states.append, qos)
        self.node.create_subscription(Float64MultiArray, contract.EFFORT_COMMANDS,
                                      lambda m: self.commands.append(list(m.data)), qos)

    def publisher(self, msg_type, topic):
        return self.node.create_publisher(msg_type, topic, 100)


def apex_heights(z, vz):
    """Base heights where the vertical velocity turns from + to - (the drop excluded)."""
    z, vz = np.asarray(z), np.asarray(vz)
    idx = np.nonzero((vz[:-1] > 0.0) & (vz[1:] <= 0.0))[0] + 1
    return z[idx]


def core_reference(params, steps):
    """The same run without ROS: Simulator + Controller called directly."""
    sim = Simulator(default_urdf_path(), config_from_file(SimConfig, params, 'simulator'))
    ctrl = Controller(sim.leg.urdf_xml, config_from_file(ControllerConfig, params, 'controller'))
    run = rollout(sim, ctrl, steps=steps)
    return run.q, run.tau


@pytest.fixture
def lockstep_run(ros):
    """3 s lockstep with a stray publisher of bad commands (wrong length, NaN) all along."""
    duration = 3.0
    sim = make_sim(ros, stop_after=duration)
    ctrl = make_controller(ros)
    probe = Probe(ros)
    bad = probe.publisher(Float64MultiArray, contract.EFFORT_COMMANDS)
    bad_messages = itertools.cycle([[1.0], [math.nan, 0.0], [0.0, 1.0, 2.0], [0.0, math.inf]])
    probe.node.create_timer(0.01, lambda: bad.publish(Float64MultiArray(data=next(bad_messages))))
    assert ros.spin_until(lambda: sim.done.done(), timeout_s=120.0), 'run did not finish'
    return sim, ctrl, probe, duration


def test_lockstep_reproduces_the_core_loop_and_hops(ros, lockstep_run):
    sim, ctrl, probe, duration = lockstep_run
    steps = int(round(duration / sim.config.control_period))
    assert ros.spin_until(lambda: len(probe.states) == steps + 1, 10.0)
    assert sim.exit_code == 0 and sim.steps == steps
    assert sim.command_timeouts == 0
    stamps = np.array([stamp_ns(m) for m in probe.states])
    assert np.all(np.diff(stamps) == 1_000_000) and stamps[0] == 0
    q = np.array([list(m.position) for m in probe.states])
    v = np.array([list(m.velocity) for m in probe.states])
    q_ref, tau_ref = core_reference(ros.params, steps)
    # the nodes are thin adapters: same trajectory as calling the cores directly
    np.testing.assert_allclose(q, q_ref, rtol=0, atol=1e-9)
    apexes = apex_heights(q[:, 1], v[:, 1])
    assert len(apexes) >= 3, apexes
    np.testing.assert_allclose(apexes[2:], APEX_SETPOINT, rtol=0.01)
    assert ctrl.updates == steps + 1


def test_bad_commands_are_rejected_without_effect(ros, lockstep_run):
    sim, ctrl, probe, duration = lockstep_run
    assert sim.rejected_commands >= 20     # ~100 Hz stray publisher during the whole run
    good = [c for c in probe.commands if len(c) == 2 and all(map(math.isfinite, c))]
    assert len(good) == sim.steps + 1
    # effort published = command applied one step later (ideal motors): never a bad value
    efforts = np.array([list(m.effort) for m in probe.states])
    assert np.isfinite(efforts).all()


def test_command_timeout_gives_zero_torque_then_recovers(ros):
    sim = make_sim(ros, command_timeout=0.2, min_subscribers=0)
    probe = Probe(ros)
    pub = probe.publisher(Float64MultiArray, contract.EFFORT_COMMANDS)
    answering = {'on': True}

    def answer(msg):
        if answering['on']:
            pub.publish(Float64MultiArray(data=[2.0, -1.0]))

    probe.node.create_subscription(JointState, contract.JOINT_STATES, answer, 100)
    assert ros.spin_until(lambda: len(probe.states) >= 50, 30.0)
    assert list(probe.states[-1].effort)[2:] == [2.0, -1.0]
    answering['on'] = False
    n = len(probe.states)
    assert ros.spin_until(lambda: sim.command_timeouts == 1 and len(probe.states) > n + 50, 10.0)
    assert list(probe.states[-1].effort)[2:] == [0.0, 0.0]     # zero torque, still stepping
    answering['on'] = True
    m = sim.steps
    assert ros.spin_until(lambda: sim.steps > m + 100 and not sim._controller_lost, 10.0)
    assert list(probe.states[-1].effort)[2:] == [2.0, -1.0]
    assert sim.command_timeouts == 1


def test_push_force_topics_and_reset_service(ros):
    # start 30 m up: ~2.4 s of free fall, so however late the push arrives on a loaded machine
    # it lands in flight, where the base x-velocity is exactly zero until the push
    high_q = [0.0, 30.0, 0.3, -0.6]
    sim = make_sim(ros, min_subscribers=0, initial_q=high_q)
    probe = Probe(ros)
    cmd = probe.publisher(Float64MultiArray, contract.EFFORT_COMMANDS)
    push = probe.publisher(Vector3, contract.PUSH)
    zero = Float64MultiArray(data=[0.0, 0.0])
    probe.node.create_subscription(JointState, contract.JOINT_STATES, lambda m: cmd.publish(zero),
                                   100)
    assert ros.spin_until(lambda: len(probe.states) >= 20, 30.0)
    # reference: the core with the same impulse at the same step
    push.publish(Vector3(x=6.0, y=0.0, z=3.0))
    assert ros.spin_until(lambda: abs(probe.states[-1].velocity[0]) > 1e-6, 10.0)
    pushed = next(i for i, m in enumerate(probe.states) if abs(m.velocity[0]) > 1e-6)
    ref = Simulator(default_urdf_path(), dataclasses.replace(
        config_from_file(SimConfig, ros.params, 'simulator'), initial_q=tuple(high_q)))
    for _ in range(pushed - 1):
        ref.step([0.0, 0.0])
    ref.apply_impulse([6.0, 3.0])
    state = ref.step([0.0, 0.0])
    np.testing.assert_allclose(list(probe.states[pushed].velocity), state.v, atol=1e-12)
    # reset: back to initial_q, clock keeps increasing
    client = probe.node.create_client(Trigger, contract.RESET_SERVICE)
    assert ros.spin_until(client.service_is_ready, 10.0)
    future = client.call_async(Trigger.Request())
    assert ros.spin_until(future.done, 10.0) and future.result().success
    initial_q = list(sim.config.initial_q)
    assert ros.spin_until(lambda: any(list(m.position) == initial_q
                                      for m in probe.states[pushed + 1:]), 10.0)
    stamps = [stamp_ns(m) for m in probe.states]
    assert all(b > a for a, b in zip(stamps, stamps[1:]))
    # constant force: the base accelerates sideways while the leg hangs in the air
    force = probe.publisher(Vector3, contract.FORCE)
    assert ros.spin_until(lambda: force.get_subscription_count() > 0, 10.0)
    force.publish(Vector3(x=24.0, y=0.0, z=0.0))
    n = len(probe.states)
    assert ros.spin_until(lambda: len(probe.states) > n + 10
                          and probe.states[-1].velocity[0] > 0.01, 10.0)
    bad_force = sim.rejected_commands
    force.publish(Vector3(x=math.nan, y=0.0, z=0.0))       # rejected, the run goes on
    m = len(probe.states)
    assert ros.spin_until(lambda: len(probe.states) > m + 10, 10.0)
    assert sim.rejected_commands == bad_force and np.isfinite(probe.states[-1].velocity).all()


def test_realtime_mode_holds_the_last_command(ros):
    sim = make_sim(ros, mode='realtime', command_timeout=5.0, min_subscribers=0)
    probe = Probe(ros)
    cmd = probe.publisher(Float64MultiArray, contract.EFFORT_COMMANDS)
    assert ros.spin_until(lambda: sim._started, 30.0)
    cmd.publish(Float64MultiArray(data=[1.5, -0.5]))           # sent once, then held
    assert ros.spin_until(lambda: len(probe.states) >= 300, 30.0)
    efforts = np.array([list(m.effort)[2:] for m in probe.states[-100:]])
    np.testing.assert_array_equal(efforts, [[1.5, -0.5]] * 100)
    stamps = np.array([stamp_ns(m) for m in probe.states])
    assert np.all(np.diff(stamps) == 1_000_000)      # one control period per tick
    assert sim.tick_times and sim.steps >= len(probe.states) - 1   # the first state: no step


def test_controller_merges_joint_states_from_two_drivers_and_changes_setpoints(ros):
    ctrl = make_controller(ros, robot_description=Simulator(default_urdf_path()).leg.urdf_xml,
                           min_subscribers=0)
    probe = Probe(ros)
    joints = probe.publisher(JointState, contract.JOINT_STATES)
    foot = probe.publisher(WrenchStamped, contract.FOOT_CONTACT)
    assert ros.spin_until(lambda: joints.get_subscription_count() >= 2
                          and foot.get_subscription_count() >= 1, 20.0)
    reference = Controller(default_urdf_path(),
                           config_from_file(ControllerConfig, ros.params, 'controller'))
    q = np.array([0.0, 1.3, 0.3, -0.6])
    v = np.array([0.1, -0.5, 0.0, 0.0])
    for k in range(5):
        stamp = rclpy.time.Time(nanoseconds=k * 1_000_000).to_msg()
        base = JointState(name=['base_z', 'base_x'], position=[q[1], q[0]],
                          velocity=[v[1], v[0]], effort=[0.0, 0.0])
        leg = JointState(name=['knee', 'hip'], position=[q[3], q[2]], velocity=[v[3], v[2]],
                         effort=[0.0, 0.0])
        base.header.stamp = leg.header.stamp = stamp
        contact = WrenchStamped()
        contact.header.stamp = stamp
        joints.publish(base)
        n = len(probe.commands)
        assert not ros.spin_until(lambda: len(probe.commands) > n, 0.2)   # incomplete state
        joints.publish(leg)
        foot.publish(contact)
        assert ros.spin_until(lambda: len(probe.commands) == n + 1, 10.0)
        expected = reference.update(k * 1e-3, q, v, np.zeros(2))
        np.testing.assert_allclose(probe.commands[-1], expected, rtol=0, atol=1e-12)
        q = q + 1e-3 * v
    assert ctrl.updates == 5
    # runtime set-points: accepted through Controller.reconfigure, bad ones rejected
    ok = ctrl.set_parameters([Parameter('apex_height', value=1.3)])[0]
    assert ok.successful and ctrl.ctrl.config.apex_height == 1.3
    bad = ctrl.set_parameters([Parameter('flight_policy', value='teleport')])[0]
    assert not bad.successful and 'flight_policy' in bad.reason
    assert ctrl.ctrl.config.flight_policy == 'cascade'
    fixed = ctrl.set_parameters([Parameter('control_period', value=0.002)])[0]
    assert not fixed.successful


@pytest.mark.parametrize('module, args, words', [
    ('dodo_sim.ros.simulator_node', ['-p', 'integrator:=rk45'], ['integrator', 'rk45']),
    ('dodo_sim.ros.simulator_node', ['-p', 'dt:=fast'], ['dt', 'fast']),
    ('dodo_control.controller_node',
     ['-p', 'robot_description:=<robot name="x"><link name="a"/></robot>'], ['base_x']),
    ('dodo_control.controller_node', ['-p', 'flight_policy:=teleport'], ['flight_policy']),
])
def test_bad_configuration_is_one_clear_error(module, args, words):
    env = dict(os.environ, ROS_DOMAIN_ID=str(ros_domain_id()),
               ROS_AUTOMATIC_DISCOVERY_RANGE='LOCALHOST')
    result = subprocess.run([sys.executable, '-m', module, '--ros-args', *args],
                            capture_output=True, text=True, timeout=60, env=env)
    assert result.returncode == 2
    text = result.stdout + result.stderr
    assert 'Traceback' not in text
    for word in words:
        assert word in text


def test_divergence_stops_with_a_clear_error(ros, caplog):
    """max_speed exceeded (here on purpose, 0.5 m/s during the drop): exit code 3, no hang."""
    sim = make_sim(ros, min_subscribers=0, max_speed=0.5)
    probe = Probe(ros)
    cmd = probe.publisher(Float64MultiArray, contract.EFFORT_COMMANDS)
    zero = Float64MultiArray(data=[0.0, 0.0])
    probe.node.create_subscription(JointState, contract.JOINT_STATES, lambda m: cmd.publish(zero),
                                   100)
    assert ros.spin_until(sim.done.done, 60.0)
    assert sim.done.result() == 3 and sim.exit_code == 3
    speeds = np.abs([list(m.velocity) for m in probe.states])
    assert speeds.max() <= 0.5            # only sound states were published
    # free fall from rest: |v_z| = g t passes 0.5 m/s during the step ending at 51 ms
    assert len(probe.states) == math.floor(0.5 / 9.81 / 1e-3) + 1
