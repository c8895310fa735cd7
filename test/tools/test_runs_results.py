# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
What ``dodo hop`` reports.

Simulated time and stop reason from the simulator's summary line or the bag, a bag that mixes two
graphs, exit codes (no ROS needed).
"""
import io

from dodo_sim.tools.bag_writer import OfflineBagWriter
from dodo_sim.tools.run_report import bag_clock, RunResult
from dodo_sim.tools.run_supervision import HopRun
import pytest


def make_hop(tmp_path, bag=None):
    params = tmp_path / 'p.yaml'
    params.write_text('{}\n')
    return HopRun(params, 3.0, bag=bag, out=io.StringIO())


def clock_bag(path, times_s):
    with OfflineBagWriter(path) as writer:
        for i, t in enumerate(times_s):
            writer.clock(t, log_ns=1_000_000_000 + i)
    return path


def test_the_simulator_summary_line_wins(tmp_path):
    from dodo_sim.ros.runtime import format_summary
    hop = make_hop(tmp_path, clock_bag(tmp_path / 'bag', [0.0, 0.001, 0.002]))
    line = format_summary('exchange', {'sim_time_s': 2.5, 'steps': 2500,
                                       'stop_reason': 'shutdown', 'age_ms_p99': None})
    hop._parse_simulator_line(f'[INFO] [1.2] [simulator]: {line}')
    assert hop.simulated_time() == (2.5, 2500, 'shutdown')


def test_without_summary_the_last_clock_of_the_bag_and_the_stop_after_line(tmp_path):
    hop = make_hop(tmp_path, clock_bag(tmp_path / 'bag', [0.0, 0.001, 0.002]))
    assert hop.simulated_time() == (0.002, None, None)
    hop._parse_simulator_line('[simulator]: stop_after = 0.002 s of simulated time reached '
                              'after 2 steps; 0 command(s) rejected, 0 timeout(s)')
    assert hop.simulated_time() == (0.002, 2, 'stop_after')
    hop._parse_simulator_line('dodo simulator: stopping')      # not a summary line: ignored
    assert hop.sim_summary is None


def test_a_bag_with_two_graphs_is_a_failure(tmp_path):
    bag = clock_bag(tmp_path / 'bag', [0.0, 0.001, 0.002, 0.0, 0.003])
    last, problem = bag_clock(bag, '42')
    assert last == 0.003
    assert 'mixes messages of another graph' in problem and 'domain 42' in problem
    hop = make_hop(tmp_path, bag)
    hop.simulated_time()
    assert any('another graph' in f for f in hop.failures)


@pytest.mark.parametrize('outcome, signal_name, code, words', [
    ('completed', None, 0, 'completed: t = 3.000 s (3000 steps) simulated'),
    ('interrupted', 'SIGINT', 130, 'interrupted (SIGINT) at t = 1.234 s of 3 s simulated'),
    ('terminated', 'SIGTERM', 143, 'terminated (SIGTERM) at t = 1.234 s of 3 s simulated'),
    ('terminated', 'SIGHUP', 129, 'terminated (SIGHUP)'),
])
def test_exit_codes_and_summary(tmp_path, outcome, signal_name, code, words):
    hop = make_hop(tmp_path)
    t, steps = (3.0, 3000) if outcome == 'completed' else (1.234, None)
    hop._stop_after_line = (t, steps) if steps else None
    hop.sim_summary = None if steps else {'sim_time_s': t, 'stop_reason': 'signal'}
    result = hop.result(outcome, signal_name)
    assert isinstance(result, RunResult) and result.exit_code == code
    assert words in result.summary()
    assert 'cleanly' in result.summary() and 'FAILED' not in result.summary()


def test_a_completed_run_that_stopped_short_is_a_failure(tmp_path):
    hop = make_hop(tmp_path)
    hop.sim_summary = {'sim_time_s': 1.0, 'steps': 1000, 'stop_reason': 'signal'}
    result = hop.result('completed')
    assert result.exit_code == 1
    assert result.summary().startswith('FAILED at t = 1.000 s of 3 s simulated: the simulator '
                                       'stopped at t = 1.000 s, before 3 s')


def test_a_run_with_command_timeouts_is_a_failure(tmp_path):
    """
    Zero torque stood in for the controller (it stalled, or the machine was overloaded).

    The run completed its time but does not show the controller, so it is not reported as ok.
    """
    hop = make_hop(tmp_path)
    hop.sim_summary = {'sim_time_s': 3.0, 'steps': 3000, 'stop_reason': 'stop_after',
                       'mode': 'lockstep', 'timeouts': 3, 'zero_torque_steps': 311}
    result = hop.result('completed')
    assert result.exit_code == 1
    assert ('3 command timeout(s)' in result.summary()
            and 'zero torque on 311 step(s)' in result.summary())


def test_a_run_without_command_timeouts_completes(tmp_path):
    hop = make_hop(tmp_path)
    hop.sim_summary = {'sim_time_s': 3.0, 'steps': 3000, 'stop_reason': 'stop_after',
                       'mode': 'lockstep', 'timeouts': 0, 'zero_torque_steps': 0}
    assert hop.result('completed').exit_code == 0


def test_a_lost_controller_is_a_failure_naming_it(tmp_path):
    hop = make_hop(tmp_path)
    hop.sim_summary = {'sim_time_s': 1.2, 'steps': 1200, 'stop_reason': 'controller_lost',
                       'mode': 'lockstep', 'timeouts': 0, 'zero_torque_steps': 0,
                       'controller': '/controller', 'waits': 1, 'wait_s_max': 120.0}
    result = hop.result('completed')
    assert result.exit_code == 1
    assert ('controller lost: the simulator waited 120.0 s for /controller to answer a state'
            in result.summary()), result.summary()


def test_commands_of_a_second_controller_are_a_failure(tmp_path):
    hop = make_hop(tmp_path)
    hop.sim_summary = {'sim_time_s': 3.0, 'steps': 3000, 'stop_reason': 'stop_after',
                       'mode': 'lockstep', 'timeouts': 0, 'zero_torque_steps': 0,
                       'foreign': 1500, 'controller': '/controller',
                       'duplicate_controller': True}
    result = hop.result('completed')
    assert result.exit_code == 1
    assert '1500 command(s) from a second node named /controller' in result.summary()


def test_lockstep_waits_are_reported_and_not_a_failure(tmp_path):
    hop = make_hop(tmp_path)
    hop.sim_summary = {'sim_time_s': 3.0, 'steps': 3000, 'stop_reason': 'stop_after',
                       'mode': 'lockstep', 'timeouts': 0, 'zero_torque_steps': 0,
                       'waits': 2, 'wait_s_max': 2.5, 'foreign': 0}
    result = hop.result('completed')
    assert result.exit_code == 0
    assert '2 wait(s) past command_timeout (longest 2.50 s' in result.exchange_summary()
