# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
The lockstep exchange cannot silently go wrong (over real DDS, controller in its own process).

Each run is checked against the offline core loop (:func:`dodo_sim.rollout.rollout`, same params
file): the states of the ROS run equal the offline run's bit for bit, and the torque applied in
every step is the controller's answer to exactly that state — or zero where no answer came in
time, counted by the simulator (never, in lockstep: simulated time waits). Faults: a burst of
10 000 valid commands (plus malformed ones) from a stray publisher on both command topics,
stamped like the newest state; the controller process stopped (SIGSTOP) for 0.8 s and 2.5 s,
shorter and longer than command_timeout; a
second controller started mid-run.
"""
import signal
import sys
import textwrap

import pytest

pytest.importorskip('rclpy')

# These imports must follow the importorskip above (E402), so they cannot take their
# place in the sorted import block (I100).
from exchange_support import (apex_heights, assert_same_states, LockstepGraph,  # noqa: E402, I100
                              Process, reference_run, Stall, write_params)

pytestmark = [pytest.mark.ros, pytest.mark.slow]

STRAY = textwrap.dedent("""
    import itertools, math, sys, time
    import rclpy
    from rclpy.qos import QoSProfile, ReliabilityPolicy
    from sensor_msgs.msg import JointState
    from std_msgs.msg import Float64MultiArray
    valid, malformed, start_ns = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
    rclpy.init()
    node = rclpy.create_node('stray')
    qos = QoSProfile(depth=2 * (valid + malformed), reliability=ReliabilityPolicy.RELIABLE)
    stamped = node.create_publisher(JointState, 'joint_commands', qos)
    plain = node.create_publisher(Float64MultiArray, 'effort_controller/commands', qos)
    newest = {'stamp': None}
    def on_state(msg):
        newest['stamp'] = msg.header.stamp
    node.create_subscription(JointState, 'joint_states', on_state, 10)
    deadline = time.monotonic() + 60.0
    while (stamped.get_subscription_count() < 1 or plain.get_subscription_count() < 1
           or newest['stamp'] is None
           or newest['stamp'].sec * 10**9 + newest['stamp'].nanosec < start_ns):
        rclpy.spin_once(node, timeout_sec=0.01)
        assert time.monotonic() < deadline, 'no simulator'
    first = newest['stamp']
    bad_plain = itertools.cycle([[0.0], [math.nan, 0.0], [0.0, 0.0, 0.0], [math.inf, 1.0]])
    bad_stamped = itertools.cycle([(['hip'], [0.0]), (['hip', 'ankle'], [0.0, 0.0]),
                                   (['hip', 'knee'], [math.nan, 0.0]),
                                   (['hip', 'knee'], [0.0])])
    every = valid // malformed
    for i in range(valid):
        msg = JointState(name=['hip', 'knee'], effort=[0.0, 0.0])
        msg.header.stamp = newest['stamp']          # races the controller for the state
        stamped.publish(msg)
        plain.publish(Float64MultiArray(data=[0.0, 0.0]))
        if i % every == 0:
            names, effort = next(bad_stamped)
            bad = JointState(name=names, effort=effort)
            bad.header.stamp = newest['stamp']
            stamped.publish(bad)
            plain.publish(Float64MultiArray(data=next(bad_plain)))
        if i % 50 == 0:
            rclpy.spin_once(node, timeout_sec=0.0)
    acked = stamped.wait_for_all_acked(rclpy.duration.Duration(seconds=60))
    acked = plain.wait_for_all_acked(rclpy.duration.Duration(seconds=60)) and acked
    last = newest['stamp']
    print(f'stray: sent {valid} valid and {malformed} malformed per topic between '
          f'{first.sec + 1e-9 * first.nanosec:.3f} s and {last.sec + 1e-9 * last.nanosec:.3f} s, '
          f'acked {acked}', flush=True)
""")


@pytest.fixture
def graph_factory(tmp_path):
    graphs = []

    def make(command_timeout=2.0, stop_after=3.0, **sim_parameters):
        params = write_params(tmp_path, command_timeout=command_timeout)
        graph = LockstepGraph(tmp_path, params, stop_after, **sim_parameters)
        graphs.append(graph)
        return graph

    yield make
    for graph in graphs:
        graph.close()


def test_a_burst_of_stray_commands_on_both_topics_shifts_nothing(graph_factory, tmp_path,
                                                                 capfd):
    valid, malformed = 10_000, 1_000
    # the run goes on until the burst is over (however long that takes on a loaded machine)
    # and 1000 steps more; stop_after is never reached
    graph = graph_factory(stop_after=600.0)
    controller = graph.start_controller()
    stray = Process([sys.executable, '-c', STRAY, str(valid), str(malformed), '500000000'],
                    graph.env, tmp_path / 'stray.log')
    graph.processes.append(stray)
    after = {}

    def burst_over():
        if stray.proc.poll() is None:
            return False
        after.setdefault('steps', graph.sim.steps)
        return graph.sim.steps >= max(after['steps'] + 1000, 3000)

    graph.finish(timeout_s=300.0, until=burst_over)
    sim = graph.sim
    states, commands = graph.states, graph.commands
    # nothing shifted: the run is the offline run, every torque answers its own state (the
    # controller answered every state)
    every_state = [(s[0], None, None) for s in states]
    run, zero_steps, mismatches = reference_run(graph.params, states, every_state)
    assert mismatches == [] and zero_steps == [], (len(mismatches), mismatches[:10],
                                                   zero_steps[:10])
    assert_same_states(run, states)
    assert {c[0] for c in commands} >= {s[0] for s in states[:-1]}
    # every stray message reached the simulator during the run, and was accounted for
    assert stray.proc.wait(60) == 0, stray.output()
    assert 'acked True' in stray.output(), stray.output()
    assert sim.exchange.counts.foreign == valid, sim.summary()
    assert sim.exchange.counts.rejected == 2 * malformed, sim.summary()
    assert sim.exchange.counts.unstamped >= valid, sim.summary()    # + the controller's own copies
    assert sim.command_publishers == 2
    assert sim.exchange.counts.zero_torque_steps == 0 and sim.exchange.counts.timeouts == 0
    assert len(apex_heights(states)) >= 3           # it hops
    # reported: the stray publisher by name
    err = capfd.readouterr().err
    assert 'commands from a second publisher, node /stray' in err, err[-3000:]
    assert "2 publishers on joint_commands: ['/controller', '/stray']" in err, err[-3000:]
    assert controller.proc.poll() is None


def assert_unchanged_by_the_stalls(graph) -> None:
    """Every state answered, none by zero torque or late, and the offline run reproduced."""
    sim = graph.sim
    states, commands = graph.states, graph.commands
    run, zero_steps, mismatches = reference_run(graph.params, states, commands)
    assert mismatches == [] and zero_steps == [], (mismatches[:10], zero_steps[:10])
    assert_same_states(run, states)
    counts = sim.exchange.counts
    assert counts.zero_torque_steps == 0 and counts.timeouts == 0 and counts.late == 0
    assert len(commands) == len(states)              # one answer per state, none skipped


def test_controller_stalls_shorter_than_the_timeout_cost_nothing(graph_factory):
    graph = graph_factory(command_timeout=2.0, stop_after=3.0)
    controller = graph.start_controller()
    stalls = [Stall(controller, lambda n=n: graph.sim.steps >= n, 0.8) for n in (500, 1500, 2500)]
    graph.finish(on_spin=lambda: [stall() for stall in stalls])
    assert all(stall.done for stall in stalls)
    assert_unchanged_by_the_stalls(graph)
    assert len(apex_heights(graph.states)) >= 2


def test_controller_stalls_longer_than_the_timeout_pause_simulated_time(graph_factory):
    # 0.8 s and 2.5 s stalls, command_timeout 0.3 s: simulated time waits, the run is unchanged
    graph = graph_factory(command_timeout=0.3, stop_after=2.5)
    controller = graph.start_controller()
    stalls = [Stall(controller, lambda n=n: graph.sim.steps >= n, seconds)
              for n, seconds in ((500, 0.8), (1500, 2.5))]
    graph.finish(on_spin=lambda: [stall() for stall in stalls])
    assert all(stall.done for stall in stalls)
    assert_unchanged_by_the_stalls(graph)
    sim = graph.sim
    # both stalls were waits past command_timeout (a loaded machine may add waits of its own)
    assert sim.exchange.counts.waits >= 2 and sim.exchange.counts.wait_s_max >= 2.3, sim.summary()
    assert sim.exit_code == 0 and sim.summary()['stop_reason'] == 'stop_after'
    controller.proc.send_signal(signal.SIGINT)
    controller.proc.wait(20)
    out = controller.output()
    assert 'dodo controller: updates=' in out, out[-2000:]


def test_a_second_controller_started_mid_run_is_reported_and_ignored(graph_factory, capfd):
    graph = graph_factory(stop_after=6.0)
    first = graph.start_controller()
    started = {}

    def start_second():
        if not started and graph.sim.steps >= 300:
            started['process'] = graph.start_controller(name='controller_b', min_subscribers=1)

    graph.finish(on_spin=start_second)
    sim = graph.sim
    states, commands = graph.states, graph.commands
    second = started['process']
    assert second.proc.poll() is None, second.output()
    # the second controller answered states (its own, different, answers)...
    assert sim.exchange.counts.foreign > 100, (sim.summary(), second.output()[-2000:])
    # ...none of which was applied: the run is the first controller's, bit for bit (it answered
    # every state; the probe cannot tell its answers from the second one's, both are stamped)
    assert len(commands) > len(states)
    every_state = [(s[0], None, None) for s in states]
    run, zero_steps, mismatches = reference_run(graph.params, states, every_state)
    assert mismatches == [] and zero_steps == [], (mismatches[:10], zero_steps[:10])
    assert_same_states(run, states)
    assert sim.command_publishers == 2
    err = capfd.readouterr().err
    assert 'commands from a second publisher, node /controller_b' in err, err[-3000:]
    first.proc.send_signal(signal.SIGINT)
    first.proc.wait(20)
    assert '2 publishers on joint_commands' in first.output(), first.output()[-3000:]
