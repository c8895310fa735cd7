# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
The simulator and controller nodes in one process (one executor, private ROS domain).

Cheaper than separate processes and enough for: the lockstep exchange reproducing the pure core
loop, hopping at the set-point, bad commands rejected without effect, a silent controller
pausing simulated time (and the controller declared lost), /diagnostics, push/force topics and
reset service, realtime zero-order hold, joint states merged from two drivers, runtime
set-points. Multi-process runs over real DDS are in
test_ros_dds.py, test_exchange_*.py and test_cli_hop.py.
"""
import dataclasses
import itertools
import math
import os
import subprocess
import sys
import time

from conftest import ros_domain_id
import numpy as np
from process_support import hop_params
import pytest
from ros_support import in_process_ros

rclpy = pytest.importorskip('rclpy')

# These imports must follow the importorskip above (E402), so they cannot take their
# place in the sorted import block (I100).
from dodo_control.controller import Controller, ControllerConfig  # noqa: E402, I100
from dodo_sim.paths import default_urdf_path  # noqa: E402
from dodo_sim.rollout import rollout  # noqa: E402
from dodo_sim.ros import contract  # noqa: E402
from dodo_sim.ros.params import config_from_file  # noqa: E402
from dodo_sim.simulator import SimConfig, Simulator  # noqa: E402
from geometry_msgs.msg import Vector3, WrenchStamped  # noqa: E402
from rclpy.parameter import Parameter  # noqa: E402
from sensor_msgs.msg import JointState  # noqa: E402
from std_msgs.msg import Float64MultiArray  # noqa: E402
from std_srvs.srv import Trigger  # noqa: E402

pytestmark = pytest.mark.ros

APEX_SETPOINT = 1.2
PARAMS = hop_params(simulator={'mode': 'lockstep', 'command_timeout': 2.0},
                    controller={'apex_height': APEX_SETPOINT, 'target_velocity': 0.0})


@pytest.fixture
def ros(monkeypatch, tmp_path):
    """Return a private rclpy context (own domain, localhost only) for in-process nodes."""
    monkeypatch.setenv('ROS_AUTOMATIC_DISCOVERY_RANGE', 'LOCALHOST')
    params = tmp_path / 'params.yaml'
    params.write_text(PARAMS)
    with in_process_ros(['--ros-args', '--params-file', str(params)]) as ros:
        ros.params = params
        yield ros


def make_sim(ros, **overrides):
    from dodo_sim.ros.simulator_node import SimulatorNode
    return ros.add(SimulatorNode(context=ros.context, parameter_overrides=[
        Parameter(k, value=v) for k, v in overrides.items()]))


def make_controller(ros, **overrides):
    from dodo_sim.ros.controller_node import ControllerNode
    return ros.add(ControllerNode(context=ros.context, parameter_overrides=[
        Parameter(k, value=v) for k, v in overrides.items()]))


def stamp_ns(msg):
    return msg.header.stamp.sec * 1_000_000_000 + msg.header.stamp.nanosec


class Probe:
    """
    A test node recording /joint_states and both command topics.

    It can also publish anything.
    """

    def __init__(self, ros):
        self.node = ros.add(rclpy.create_node('probe', context=ros.context))
        self.states, self.commands, self.joint_commands = [], [], []
        qos = 10000
        self.node.create_subscription(JointState, contract.JOINT_STATES, self.states.append, qos)
        self.node.create_subscription(Float64MultiArray, contract.EFFORT_COMMANDS,
                                      lambda m: self.commands.append(list(m.data)), qos)
        self.node.create_subscription(JointState, contract.JOINT_COMMANDS,
                                      self.joint_commands.append, qos)

    def publisher(self, msg_type, topic):
        return self.node.create_publisher(msg_type, topic, 100)

    def answer_with(self, torques):
        """
        Answer every state with the stamped command ``torques()`` (a controller stand-in).

        Returns a switch: ``switch['on'] = False`` stops answering.
        """
        pub = self.publisher(JointState, contract.JOINT_COMMANDS)
        switch = {'on': True, 'publisher': pub}

        def answer(state):
            if switch['on']:
                pub.publish(joint_command(state.header.stamp, torques()))

        self.node.create_subscription(JointState, contract.JOINT_STATES, answer, 100)
        return switch


def joint_command(stamp, torques, names=('hip', 'knee')):
    """Return a /joint_commands message answering the state stamped ``stamp``."""
    msg = JointState(name=list(names), effort=[float(x) for x in torques])
    msg.header.stamp = stamp
    return msg


def apex_heights(z, vz):
    """
    Return the base heights where the vertical velocity turns from + to -.

    The drop is excluded.
    """
    z, vz = np.asarray(z), np.asarray(vz)
    idx = np.nonzero((vz[:-1] > 0.0) & (vz[1:] <= 0.0))[0] + 1
    return z[idx]


def core_reference(params, steps):
    """Return the same run without ROS: Simulator + Controller called directly."""
    sim = Simulator(default_urdf_path(), config_from_file(SimConfig, params, 'simulator'))
    ctrl = Controller(sim.leg.urdf_xml, config_from_file(ControllerConfig, params, 'controller'))
    run = rollout(sim, ctrl, steps=steps)
    return run.q, run.tau


@pytest.fixture
def lockstep_run(ros):
    """
    Lockstep with a stray publisher of bad commands.

    The run lasts 3 s. All along, the stray publisher sends bad commands (wrong length, wrong
    names, NaN) on both command topics, each stamped like the newest state.
    """
    duration = 3.0
    sim = make_sim(ros, stop_after=duration)
    ctrl = make_controller(ros)
    probe = Probe(ros)
    bad = probe.publisher(Float64MultiArray, contract.EFFORT_COMMANDS)
    bad_stamped = probe.publisher(JointState, contract.JOINT_COMMANDS)
    bad_messages = itertools.cycle([[1.0], [math.nan, 0.0], [0.0, 1.0, 2.0], [0.0, math.inf]])
    bad_names = itertools.cycle([('hip',), ('hip', 'ankle'), ('hip', 'knee', 'base_x'),
                                 ('hip', 'knee')])

    def stray():
        data = next(bad_messages)
        bad.publish(Float64MultiArray(data=data))
        names = next(bad_names)
        effort = (data * 3)[:len(names)] if names != ('hip', 'knee') else [math.nan, 1.0]
        stamp = probe.states[-1].header.stamp if probe.states else JointState().header.stamp
        bad_stamped.publish(joint_command(stamp, effort, names))

    probe.node.create_timer(0.01, stray)
    assert ros.spin_until(lambda: sim.done.done(), timeout_s=120.0), 'run did not finish'
    steps = int(round(duration / sim.config.control_period))
    # the answer to the last state ends the run: the probe may still have it in flight
    assert ros.spin_until(lambda: len(probe.joint_commands) >= steps + 1
                          and len(probe.states) == steps + 1, 10.0)
    return sim, ctrl, probe, duration


def test_lockstep_reproduces_the_core_loop_and_hops(ros, lockstep_run):
    sim, ctrl, probe, duration = lockstep_run
    steps = int(round(duration / sim.config.control_period))
    assert sim.exit_code == 0 and sim.steps == steps
    assert sim.exchange.counts.timeouts == 0
    stamps = np.array([stamp_ns(m) for m in probe.states])
    assert np.all(np.diff(stamps) == 1_000_000) and stamps[0] == 0
    q = np.array([list(m.position) for m in probe.states])
    v = np.array([list(m.velocity) for m in probe.states])
    q_ref, tau_ref = core_reference(ros.params, steps)
    # the nodes are thin adapters: the same trajectory as calling the cores directly, bit for bit
    np.testing.assert_array_equal(q, q_ref)
    applied = np.array([list(m.effort)[2:] for m in probe.states[1:]])
    np.testing.assert_array_equal(applied, tau_ref)
    apexes = apex_heights(q[:, 1], v[:, 1])
    assert len(apexes) >= 3, apexes
    np.testing.assert_allclose(apexes[2:], APEX_SETPOINT, rtol=0.01)
    assert ctrl.updates == steps + 1


def test_bad_commands_are_rejected_without_effect(ros, lockstep_run):
    sim, ctrl, probe, duration = lockstep_run
    assert sim.exchange.counts.rejected >= 40   # 2 x ~100 Hz stray publishers the whole run
    good = [m for m in probe.joint_commands
            if list(m.name) == ['hip', 'knee'] and all(map(math.isfinite, m.effort))]
    assert len(good) == sim.steps + 1
    # effort published = command applied one step later (ideal motors): never a bad value
    efforts = np.array([list(m.effort) for m in probe.states])
    assert np.isfinite(efforts).all()
    assert sim.exchange.counts.timeouts == 0 and sim.exchange.counts.zero_torque_steps == 0


def test_a_silent_controller_pauses_simulated_time_then_the_run_goes_on(ros):
    sim = make_sim(ros, command_timeout=0.2, min_subscribers=0, warn_period=0.1)
    probe = Probe(ros)
    answering = probe.answer_with(lambda: (2.0, -1.0))
    assert ros.spin_until(lambda: len(probe.states) >= 50, 30.0)
    answering['on'] = False
    # wait 5 command_timeouts of wall time: not one state more, the newest never answered
    assert ros.spin_until(lambda: sim.exchange.counts.waits == 1, 10.0)
    paused_at = len(probe.states)
    steps = sim.steps
    assert ros.spin_until(lambda: sim.exchange.counts.wait_s_max > 1.0, 10.0)
    assert len(probe.states) == paused_at and sim.steps == steps
    assert sim.exchange.counts.waits == 1 and not sim.done.done()
    assert sim.exchange.counts.zero_torque_steps == 0 and sim.exchange.counts.timeouts == 0
    # the answer to the waiting state, however late, resumes the run where it stopped
    answering['on'] = True
    answering['publisher'].publish(joint_command(probe.states[-1].header.stamp, (2.0, -1.0)))
    assert ros.spin_until(lambda: sim.steps > steps + 100, 10.0)
    stamps = np.array([stamp_ns(m) for m in probe.states])
    assert np.all(np.diff(stamps) == 1_000_000)          # no step skipped, none at wall rate
    assert all(list(m.effort)[2:] == [2.0, -1.0] for m in probe.states[1:])
    assert sim.exchange.counts.zero_torque_steps == 0 and sim.exchange.counts.waits == 1
    summary = sim.summary()
    assert summary['waits'] == 1 and summary['wait_s_max'] > 0.8


def test_the_controller_lost_after_controller_lost_timeout_ends_the_run(ros):
    sim = make_sim(ros, command_timeout=0.1, controller_lost_timeout=0.6, min_subscribers=0)
    probe = Probe(ros)
    answering = probe.answer_with(lambda: (0.0, 0.0))
    assert ros.spin_until(lambda: len(probe.states) >= 20, 30.0)
    answering['on'] = False
    assert ros.spin_until(lambda: sim.done.done(), 10.0)
    assert sim.done.result() == sim.exit_code == 1
    summary = sim.summary()
    assert summary['stop_reason'] == 'controller_lost'
    assert summary['controller'] == '/probe' and summary['wait_s_max'] > 0.6
    assert sim.exchange.counts.zero_torque_steps == 0


def test_the_controller_leaving_the_graph_ends_the_run(ros):
    sim = make_sim(ros, command_timeout=0.1, min_subscribers=0)   # controller_lost_timeout: 120
    probe = Probe(ros)
    fake = ros.add(rclpy.create_node('fake_controller', context=ros.context))
    pub = fake.create_publisher(JointState, contract.JOINT_COMMANDS, 100)
    probe.node.create_subscription(
        JointState, contract.JOINT_STATES,
        lambda m: pub.publish(joint_command(m.header.stamp, (0.0, 0.0)))
        if len(probe.states) < 30 else None, 100)
    assert ros.spin_until(lambda: len(probe.states) >= 30, 30.0)
    started = time.monotonic()
    fake.destroy_publisher(pub)
    assert ros.spin_until(lambda: sim.done.done(), 10.0)
    assert time.monotonic() - started < 5.0               # not the 120 s timeout
    assert sim.exit_code == 1
    assert sim.summary()['stop_reason'] == 'controller_lost'
    assert sim.summary()['controller'] == '/fake_controller'


def test_health_on_diagnostics_from_simulator_and_controller(ros):
    """
    diagnostic_updater-style statuses: the simulator's mode, real-time factor and counters.

    The controller's tick times; a paused graph shows as WARN at once.
    """
    from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus
    sim = make_sim(ros, stop_after=0.0, diagnostics_period=0.2, command_timeout=0.2)
    ctrl = make_controller(ros, diagnostics_period=0.2)
    probe = Probe(ros)
    statuses = {}
    probe.node.create_subscription(
        DiagnosticArray, contract.DIAGNOSTICS,
        lambda m: [statuses.setdefault(s.name, []).append(s) for s in m.status], 100)
    assert ros.spin_until(lambda: sim.steps > 500 and len(statuses.get('simulator: exchange', []))
                          >= 3 and len(statuses.get('controller: tick', [])) >= 3, 60.0)
    exchange = {kv.key: kv.value for kv in statuses['simulator: exchange'][-1].values}
    assert exchange['mode'] == 'lockstep' and float(exchange['real_time_factor']) > 0.0
    assert exchange['controller'] == '/controller' and exchange['waits'] == '0'
    assert statuses['simulator: exchange'][-1].hardware_id == 'simulation'
    tick = {kv.key: kv.value for kv in statuses['controller: tick'][-1].values}
    assert 0.0 < float(tick['tick_ms_p50']) <= float(tick['tick_ms_p99']) <= float(
        tick['tick_ms_max'])
    assert 0 < int(tick['updates']) <= ctrl.updates and tick['skipped_states'] == '0'
    assert ctrl.summary()['tick_ms_max'] == pytest.approx(ctrl.tick_ns.max * 1e-6)
    # the controller stops answering (destroyed): the simulator reports the pause as WARN
    ros.executor.remove_node(ctrl)
    n = len(statuses['simulator: exchange'])
    assert ros.spin_until(lambda: any(
        s.level == DiagnosticStatus.WARN and 'paused' in s.message
        for s in statuses['simulator: exchange'][n:]), 10.0)


def test_push_force_topics_and_reset_service(ros):
    # start 30 m up: ~2.4 s of free fall, so however late the push arrives on a loaded machine
    # it lands in flight, where the base x-velocity is exactly zero until the push (base_z's
    # URDF limit is 10 m: joint limits off for this drop)
    high_q = [0.0, 30.0, 0.3, -0.6]
    sim = make_sim(ros, min_subscribers=0, initial_q=high_q, joint_limits=False)
    probe = Probe(ros)
    probe.answer_with(lambda: (0.0, 0.0))
    push = probe.publisher(Vector3, contract.PUSH)
    assert ros.spin_until(lambda: len(probe.states) >= 20, 30.0)
    # reference: the core with the same impulse at the same step
    push.publish(Vector3(x=6.0, y=0.0, z=3.0))
    assert ros.spin_until(lambda: abs(probe.states[-1].velocity[0]) > 1e-6, 10.0)
    pushed = next(i for i, m in enumerate(probe.states) if abs(m.velocity[0]) > 1e-6)
    config = dataclasses.replace(config_from_file(SimConfig, ros.params, 'simulator'),
                                 initial_q=tuple(high_q), joint_limits=False)
    ref = Simulator(default_urdf_path(), config)
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
    reset = next(i for i in range(pushed + 1, len(probe.states))
                 if list(probe.states[i].position) == initial_q)
    stamps = [stamp_ns(m) for m in probe.states]
    assert all(b > a for a, b in zip(stamps, stamps[1:]))
    # constant force: on until removed; a non-finite force is rejected and the last one kept
    force = probe.publisher(Vector3, contract.FORCE)
    assert ros.spin_until(lambda: force.get_subscription_count() > 0, 10.0)
    for value in (24.0, math.nan, 0.0):
        force.publish(Vector3(x=value, y=0.0, z=0.0))
        n = sim.steps
        assert ros.spin_until(lambda: sim.steps > n + 100, 10.0)
    assert sim.rejected_disturbances == 1
    n = sim.steps
    assert ros.spin_until(lambda: len(probe.states) > n, 10.0)
    # which force acted in each step since the reset: the core stepped from the same state
    # with 0 N or 24 N reproduces the published next state bit for bit with exactly one of them
    ref = Simulator(default_urdf_path(), config)
    acted = []
    for before, after in zip(probe.states[reset:-1], probe.states[reset + 1:]):
        matches = []
        for fx in (0.0, 24.0):
            ref.reset(list(before.position), list(before.velocity))
            ref.set_external_force([fx, 0.0])
            stepped = ref.step([0.0, 0.0])
            if (list(stepped.q) == list(after.position)
                    and list(stepped.v) == list(after.velocity)):
                matches.append(fx)
        assert len(matches) == 1, (stamp_ns(after), matches)
        acted.append(matches[0])
    # 0 N until the force came, 24 N through the rejected NaN (100 + 100 steps), then 0 N
    first = acted.index(24.0)
    last = len(acted) - acted[::-1].index(24.0)
    assert set(acted[:first]) <= {0.0} and set(acted[first:last]) == {24.0}
    assert last - first >= 150 and set(acted[last:]) == {0.0} and last < len(acted)
    assert np.isfinite([list(m.velocity) for m in probe.states]).all()


def test_realtime_mode_holds_the_last_command(ros):
    sim = make_sim(ros, mode='realtime', command_timeout=5.0, min_subscribers=0)
    probe = Probe(ros)
    cmd = probe.publisher(Float64MultiArray, contract.EFFORT_COMMANDS)
    assert ros.spin_until(lambda: sim.exchange.started, 30.0)
    cmd.publish(Float64MultiArray(data=[1.5, -0.5]))           # sent once, then held
    # (no stamped commands come: the unstamped ros2_control topic is applied)
    assert ros.spin_until(lambda: len(probe.states) >= 300, 30.0)
    efforts = np.array([list(m.effort)[2:] for m in probe.states[-100:]])
    np.testing.assert_array_equal(efforts, [[1.5, -0.5]] * 100)
    stamps = np.array([stamp_ns(m) for m in probe.states])
    assert np.all(np.diff(stamps) == 1_000_000)      # one control period per tick
    # the first state is no step
    assert sim.exchange.tick_lateness.count > 0 and sim.steps >= len(probe.states) - 1


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
        assert ros.spin_until(lambda: len(probe.commands) == n + 1
                              and len(probe.joint_commands) == n + 1, 10.0)
        expected = reference.update(k * 1e-3, q, v, np.zeros(2))
        np.testing.assert_allclose(probe.commands[-1], expected, rtol=0, atol=1e-12)
        # the stamped command: answers the state of stamp k ms, names the actuated joints
        answer = probe.joint_commands[-1]
        assert stamp_ns(answer) == k * 1_000_000 and list(answer.name) == ['hip', 'knee']
        assert list(answer.effort) == list(probe.commands[-1])
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


def test_config_revision_marks_the_first_tick_computed_with_a_change(ros):
    """
    /controller/state is decimated (state_period 10 ms, ticks 1 ms apart).

    Yet the first state answered after each accepted change is published with its revision (replay
    needs it).
    """
    ctrl = make_controller(ros, robot_description=Simulator(default_urdf_path()).leg.urdf_xml,
                           min_subscribers=0, state_period=0.01)
    probe = Probe(ros)
    states = []
    probe.node.create_subscription(JointState, contract.CONTROLLER_STATE, states.append, 100)
    joints = probe.publisher(JointState, contract.JOINT_STATES)
    foot = probe.publisher(WrenchStamped, contract.FOOT_CONTACT)
    assert ros.spin_until(lambda: joints.get_subscription_count() >= 2
                          and foot.get_subscription_count() >= 1, 20.0)

    def tick(k, published):
        stamp = rclpy.time.Time(nanoseconds=k * 1_000_000).to_msg()
        msg = JointState(name=['base_x', 'base_z', 'hip', 'knee'], position=[0.0, 1.3, 0.3, -0.6],
                         velocity=[0.0] * 4, effort=[0.0] * 4)
        contact = WrenchStamped()
        msg.header.stamp = contact.header.stamp = stamp
        foot.publish(contact)
        joints.publish(msg)
        assert ros.spin_until(lambda: ctrl.updates == k + 1 and len(states) == published, 10.0)

    tick(0, 1)
    tick(1, 1)                                          # inside the state period: not sent
    assert ctrl.set_parameters([Parameter('apex_height', value=1.3)])[0].successful
    assert not ctrl.set_parameters([Parameter('flight_policy', value='teleport')])[0].successful
    tick(2, 2)
    assert ctrl.set_parameters([Parameter('target_velocity', value=0.2)])[0].successful
    tick(3, 3)
    tick(4, 3)
    revisions = [m.position[list(m.name).index('config_revision')] for m in states]
    assert revisions == [0.0, 1.0, 2.0]                 # a rejected change is no revision
    assert [stamp_ns(m) for m in states] == [0, 2_000_000, 3_000_000]
    assert list(states[0].name)[-4:] == ['tau_hip', 'tau_knee', 'config_revision', 'episode']


@pytest.mark.parametrize('module, args, words', [
    ('dodo_sim.ros.simulator_node', ['-p', 'integrator:=rk45'], ['integrator', 'rk45']),
    ('dodo_sim.ros.simulator_node', ['-p', 'dt:=fast'], ['dt', 'fast']),
    ('dodo_sim.ros.controller_node',
     ['-p', 'robot_description:=<robot name="x"><link name="a"/></robot>'], ['base_x']),
    ('dodo_sim.ros.controller_node', ['-p', 'flight_policy:=teleport'], ['flight_policy']),
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


def test_an_unusable_robot_description_topic_ends_the_controller_with_exit_2(ros):
    """
    A /robot_description the controller cannot use.

    Here it has no hopper joints. The outcome is the same as for a bad robot_description parameter:
    a fatal line and exit code 2, not a node that waits forever.
    """
    from dodo_sim.ros import contract
    from std_msgs.msg import String
    ctrl = make_controller(ros)
    publisher = ros.add(rclpy.create_node('describer', context=ros.context)).create_publisher(
        String, contract.ROBOT_DESCRIPTION, contract.latched_qos())
    publisher.publish(String(data='<robot name="x"><link name="a"/></robot>'))
    assert ros.spin_until(ctrl.done.done, 30.0)
    assert ctrl.exit_code == 2 and ctrl.done.result() == 2 and ctrl.ctrl is None


def test_divergence_stops_with_a_clear_error(ros, caplog):
    """max_speed exceeded (here on purpose, 0.5 m/s during the drop): exit code 3, no hang."""
    sim = make_sim(ros, min_subscribers=0, max_speed=0.5)
    probe = Probe(ros)
    probe.answer_with(lambda: (0.0, 0.0))
    assert ros.spin_until(sim.done.done, 60.0)
    assert sim.done.result() == 3 and sim.exit_code == 3
    speeds = np.abs([list(m.velocity) for m in probe.states])
    assert speeds.max() <= 0.5            # only sound states were published
    # free fall from rest: |v_z| = g t passes 0.5 m/s during the step ending at 51 ms
    assert len(probe.states) == math.floor(0.5 / 9.81 / 1e-3) + 1


def test_controller_stops_on_contact_forces_in_a_link_frame(ros):
    """A contact wrench in the foot link's own axes is not read as world components."""
    ctrl = make_controller(ros, robot_description=Simulator(default_urdf_path()).leg.urdf_xml,
                           min_subscribers=0)
    probe = Probe(ros)
    foot = probe.publisher(WrenchStamped, contract.FOOT_CONTACT)
    assert ros.spin_until(lambda: foot.get_subscription_count() >= 1, 20.0)
    contact = WrenchStamped()
    contact.header.frame_id = 'foot'            # rotates with the shank: not world axes
    foot.publish(contact)
    assert ros.spin_until(lambda: ctrl.done.done(), 10.0)
    assert ctrl.exit_code == 2 and ctrl.updates == 0
