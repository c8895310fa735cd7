# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
The exchange's attack cases of issue 27, as users meet them: over real DDS, short runs.

* a stray node answering the driver's states with 40 / -40 N*m beside ``dodo hop --hardware
  emulated``: the driver never applies them, the run fails naming the stray (item 2);
* six commands stamped 1000 s ahead to a realtime simulator: refused and counted, the valid
  commands after them applied (item 3);
* a stray publishing NaN commands from before the run: the completed run's bag replays through
  the controller with |dtau| = 0 (item 7);
* the driver itself stalled for 1 s: the watchdog trip names the driver's stall, not the
  controller (item 14; it said "the controller was silent").

The rules themselves are tested in process (test_exchange_core.py); these show the outcome.
"""
import math
import os
import re
import signal
import subprocess
import sys
import textwrap
import time

from conftest import REPO, ros_domain_id, ros_env
import numpy as np
import pytest

rclpy = pytest.importorskip('rclpy')

# These imports must follow the importorskip above (E402), so they cannot take their
# place in the sorted import block (I100).
from dodo_sim.ros import contract  # noqa: E402, I100
from dodo_sim.ros.runtime import parse_summary  # noqa: E402
from dodo_sim.tools.bag import read_bag  # noqa: E402
from dodo_sim.tools.bag_arrays import joint_states  # noqa: E402
from rclpy.parameter import Parameter  # noqa: E402

pytestmark = [pytest.mark.ros, pytest.mark.slow]

STRAY_TAU = (40.0, -40.0)

#: A stray node (argv: mode, hip N*m, knee N*m). ``answer``: once the run's controller has sent
#: 50 commands, answer every state with the stray torques, stamped like the state (current).
#: ``nan``: NaN commands on /joint_commands at ~50 Hz from its start, whatever runs.
STRAY = textwrap.dedent("""
    import math
    import sys
    import rclpy
    from rclpy.executors import SingleThreadedExecutor
    from sensor_msgs.msg import JointState
    from dodo_sim.ros import contract
    mode, tau = sys.argv[1], [float(sys.argv[2]), float(sys.argv[3])]
    rclpy.init()
    node = rclpy.create_node('stray')
    pub = node.create_publisher(JointState, contract.JOINT_COMMANDS, contract.stream_qos())
    seen = [0]

    def on_command(msg):
        seen[0] += 1

    def on_state(msg):
        if seen[0] >= 50:
            out = JointState(name=['hip', 'knee'], effort=tau)
            out.header.stamp = msg.header.stamp
            pub.publish(out)

    def nan():
        pub.publish(JointState(name=['hip', 'knee'], effort=[math.nan, 0.0]))

    if mode == 'answer':
        node.create_subscription(JointState, contract.JOINT_COMMANDS, on_command,
                                 contract.input_qos())
        node.create_subscription(JointState, contract.JOINT_STATES, on_state,
                                 contract.input_qos())
    else:
        node.create_timer(0.02, nan)
    executor = SingleThreadedExecutor()
    executor.add_node(node)
    executor.spin()
""")


def start_stray(tmp_path, env, mode: str) -> subprocess.Popen:
    script = tmp_path / 'stray.py'
    script.write_text(STRAY)
    return subprocess.Popen([sys.executable, str(script), mode, *map(str, STRAY_TAU)], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)


def stop(proc: subprocess.Popen) -> None:
    """Stop a process this test started (by its pid)."""
    if proc.poll() is None:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(10)


def dodo_hop(bag, domain: int, *options: str) -> tuple[int, str]:
    proc = subprocess.run([sys.executable, '-m', 'dodo_sim.tools.cli', 'hop', *options,
                           '--bag', str(bag), '--no-plots', '--domain-id', str(domain)],
                          capture_output=True, text=True, env=ros_env(domain), cwd=REPO,
                          timeout=300)
    return proc.returncode, proc.stdout + proc.stderr


def test_the_driver_never_applies_a_strays_commands_and_the_run_names_it(tmp_path):
    domain = ros_domain_id()
    stray = start_stray(tmp_path, ros_env(domain), 'answer')
    try:
        code, out = dodo_hop(tmp_path / 'bag', domain, '--hardware', 'emulated',
                             '--duration', '1')
    finally:
        stop(stray)
    data = read_bag(tmp_path / 'bag', [contract.JOINT_STATES, contract.JOINT_COMMANDS,
                                       contract.IGNORED_COMMANDS])
    js = joint_states(data[contract.JOINT_STATES])
    hip, knee = js.names.index('hip'), js.names.index('knee')
    measured = js.effort[:, [hip, knee]]
    applied = np.all(np.abs(measured - STRAY_TAU) < 0.5, axis=1)
    assert not applied.any(), f'the stray torques were measured on {applied.sum()} cycles'
    # the run fails and says who was refused and whose commands were applied
    assert code == 1, out[-3000:]
    assert re.search(r'FAILED .*\d+ command\(s\) from /stray refused: the driver applied only '
                     r'the commands of /controller', out), out[-3000:]
    driver = parse_summary(out, 'driver')
    assert driver['controller'] == '/controller', driver
    assert driver['foreign'] > 10 and driver['foreign_nodes'] == '/stray', driver
    recorded = [tuple(m.effort) for m in data[contract.JOINT_COMMANDS].messages]
    assert STRAY_TAU not in recorded
    assert len(data[contract.IGNORED_COMMANDS].messages) >= driver['foreign']


def test_six_commands_stamped_1000_s_ahead_are_refused_and_the_next_ones_applied():
    """
    A realtime simulator and a controller stand-in that answers every state.

    Its torque encodes the answered state's stamp (hip = t, knee = -t); six of its answers are
    stamped 1000 s ahead with 40 N*m. Before: those six were held for the rest of the run and
    every valid command after them dropped as late.
    """
    from dodo_sim.ros.simulator_node import SimulatorNode
    from rclpy.experimental import EventsExecutor
    from sensor_msgs.msg import JointState

    os.environ.setdefault('ROS_AUTOMATIC_DISCOVERY_RANGE', 'LOCALHOST')
    context = rclpy.Context()
    rclpy.init(context=context, domain_id=ros_domain_id())
    sim = SimulatorNode(context=context, parameter_overrides=[
        Parameter('mode', value='realtime'), Parameter('stop_after', value=1.0),
        Parameter('min_subscribers', value=0), Parameter('command_timeout', value=2.0),
        Parameter('initial_q', value=[0.0, 1.3, 0.3, -0.6])])
    node = rclpy.create_node('stand_in', context=context)
    pub = node.create_publisher(JointState, contract.JOINT_COMMANDS, contract.stream_qos())
    answered, future_sent, states = [0], [], []

    def on_state(msg):
        states.append(msg)
        stamp_ns = msg.header.stamp.sec * 1_000_000_000 + msg.header.stamp.nanosec
        out = JointState(name=['hip', 'knee'])
        answered[0] += 1
        if 200 <= answered[0] < 206:
            out.effort = list(STRAY_TAU)
            stamp_ns += 1000 * 1_000_000_000
            future_sent.append(stamp_ns)
        else:
            out.effort = [stamp_ns * 1e-9, -stamp_ns * 1e-9]
        out.header.stamp.sec, out.header.stamp.nanosec = divmod(stamp_ns, 1_000_000_000)
        pub.publish(out)

    node.create_subscription(JointState, contract.JOINT_STATES, on_state, contract.input_qos())
    executor = EventsExecutor(context=context)
    executor.add_node(sim)
    executor.add_node(node)
    try:
        deadline = time.monotonic() + 60.0
        while not sim.done.done():
            assert time.monotonic() < deadline, f'run did not finish: {sim.steps} steps'
            executor.spin_once(timeout_sec=0.005)
        assert len(future_sent) == 6
        # after the six: every applied torque is a valid command of a recent state
        after = [s for s in states if s.header.stamp.sec * 1e9 + s.header.stamp.nanosec
                 > future_sent[-1] - 1000e9 + 50e6]
        assert len(after) > 200, len(after)
        for s in after:
            t = s.header.stamp.sec + 1e-9 * s.header.stamp.nanosec
            hip_tau = s.effort[s.name.index('hip')]
            assert hip_tau != STRAY_TAU[0] and t - 0.1 <= hip_tau <= t, (t, hip_tau)
        summary = sim.summary()
        assert summary['future'] == 6 and summary['late'] == 0, summary
    finally:
        node.destroy_node()
        sim.destroy_node()
        rclpy.try_shutdown(context=context)


def test_a_strays_nan_commands_before_the_run_leave_a_bag_that_replays_exactly(tmp_path):
    from dodo_sim.tools import replay
    from dodo_sim.tools.replay_check import compare_with_controller

    domain = ros_domain_id()
    stray = start_stray(tmp_path, ros_env(domain), 'nan')
    try:
        code, out = dodo_hop(tmp_path / 'bag', domain, '--duration', '1')
    finally:
        stop(stray)
    assert code == 0, out[-3000:]
    exchange = parse_summary(out, 'exchange')
    assert exchange['rejected'] > 0, exchange            # the stray's NaN commands came
    data = read_bag(tmp_path / 'bag', [contract.JOINT_COMMANDS, contract.IGNORED_COMMANDS])
    recorded = [m.effort for m in data[contract.JOINT_COMMANDS].messages]
    assert all(math.isfinite(x) for effort in recorded for x in effort)
    assert len(data[contract.IGNORED_COMMANDS].messages) > 0
    assert replay.main([str(tmp_path / 'bag'), '--through-controller']) == 0
    result = compare_with_controller(tmp_path / 'bag')
    assert result.max_abs_nm == 0.0 and result.compared >= 1000, result.summary()


def test_a_one_second_stall_of_the_driver_is_named_as_the_cause_of_the_trip(tmp_path):
    from dodo_sim.tools.run_supervision import HopRun

    domain = ros_domain_id()
    hop = HopRun(REPO / 'config' / 'hop.yaml', 4.0, bag=tmp_path / 'bag', env=ros_env(domain),
                 keep_lines=True, domain_id=domain, hardware='emulated',
                 out=open(os.devnull, 'w'))
    hop.check()
    try:
        hop.start()
        driver = hop.children['driver']
        deadline = time.monotonic() + 120.0
        while not any('enable_on_start: enabled' in line for line in driver.lines):
            assert time.monotonic() < deadline, driver.lines[-15:]
            hop.pump(0.05)
        resume = time.monotonic() + 0.5
        while time.monotonic() < resume:             # commands flow
            hop.pump(0.05)
        # the fault itself: the driver stopped for 1 s. The controller is held from just
        # before until just after (20 ms, well within command_timeout), so that no answer it
        # sent during the stall is taken before the driver's first cycle: the cycle that trips
        controller = hop.children['controller']
        controller.send(signal.SIGSTOP)
        try:
            time.sleep(0.005)
            driver.send(signal.SIGSTOP)
            try:
                time.sleep(1.0)
            finally:
                driver.send(signal.SIGCONT)
            time.sleep(0.02)
        finally:
            controller.send(signal.SIGCONT)
        assert hop.wait(120.0), hop.failures
    finally:
        hop.stop()
        hop.group.close()
        hop.release()
    trips = [line for line in driver.lines if 'watchdog tripped' in line]
    assert trips, driver.lines[-30:]
    assert 'the driver itself stalled: no cycle for' in trips[0], trips
    assert 'the controller was silent' not in trips[0], trips
