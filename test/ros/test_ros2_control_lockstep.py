# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
The documented ros2_control recipe runs in lockstep with a controller_manager on sim time.

Three processes, as docs/ros2_control.md ("Against the simulator") starts them
(``ros2_control_standin.run_recipe``): the simulator with the shipped
``config/ros2_control/simulator.yaml``; a controller_manager — the stand-in of
``test/ros2_control_standin.py``, which follows ``ros2_control_node.cpp``'s main loop on sim
time (ros-controls/ros2_control kilted @ cbe7d2c) and the topic-based system's read/write
(topic_based_hardware_interfaces @ d115f23) — with ``config/ros2_control/hopper_controllers.yaml``,
also as the spawner's ``--param-file``; and robot_state_publisher's part (the xacro output with
``hardware_plugin:=topic_based`` on ``/robot_description``, transient local). On main the
simulator waited 60 s for a ``/foot_contact`` subscriber nobody has, then its clock stayed at
0.000: the controller_manager waits for a started clock and one period on it before it writes.
"""
from __future__ import annotations

import pytest

pytest.importorskip('rclpy')

# These imports must follow the importorskip above (E402), so they cannot take their
# place in the sorted import block (I100).
from conftest import ros_domain_id  # noqa: E402, I100
from ros2_control_standin import run_recipe  # noqa: E402

pytestmark = [pytest.mark.ros, pytest.mark.slow]

#: simulated s of lockstep the run must reach, and the wall s it may take once started
LOCKSTEP_S, WALL_BUDGET_S = 5.0, 30.0


def test_a_controller_manager_on_sim_time_runs_the_recipe_in_lockstep(tmp_path):
    run = run_recipe(tmp_path, ros_domain_id(), stop_after_s=LOCKSTEP_S + 0.1,
                     budget_s=WALL_BUDGET_S)
    summary, result = run['summary'], run['controller_manager']
    print(f'ros2_control lockstep: {summary["steps"]} steps in {run["wall_s"]:.1f} s of wall '
          f'time; controller_manager: {result}')
    assert run['returncode'] == 0, run['simulator_log'][-3000:]
    assert summary['stop_reason'] == 'stop_after'
    assert summary['steps'] >= LOCKSTEP_S * 1000            # 1 ms control period
    assert summary['future'] == 0, summary
    assert result['update_rate'] == 1000
    # the clock was started and moved before the first answer (the controller_manager's start,
    # then the spawner's time with NaN commands): a few ticks, no step
    assert summary['clock_ticks'] >= 1
    # every write of the loop is accounted for: the NaN ones (no active controller yet) are
    # rejected, each valid one answers a state (the last one too) unless it came for a state
    # already published again (late, or foreign before the first answer bound the controller)
    assert summary['rejected'] == result['writes'] - result['valid_writes'], (summary, result)
    assert result['valid_writes'] == (summary['steps'] + 1 + summary['late']
                                      + summary['foreign']), (summary, result)
    assert summary['late'] + summary['foreign'] <= 2, summary
    # reported: the fraction of commands computed from the awaited state (goal >= 0.95 idle;
    # bench/bench_ros2_control.py measures it beside a CPU hog too)
    fraction = result['fraction_from_awaited_state']
    assert fraction is not None and fraction > 0.0
    # the simulator applied exactly what the loop wrote for each state: the state after a step
    # carries, as its effort, the command written one period earlier (every such pair the
    # loop saw; a state read late is not a pair)
    assert result['applied_checked'] >= 0.5 * summary['steps'], result
    assert result['applied_as_written'] == result['applied_checked'], result


def test_a_lost_clock_sample_costs_one_command_timeout_not_a_deadlock(tmp_path):
    """
    The loop never wakes at t = 1 s (/clock is best effort, depth 1: a sample can be lost).

    It sleeps until t + period on /clock, which the simulator never reaches while it waits for
    t's write: without the tick after command_timeout (0.5 s) the run would stop there.
    """
    run = run_recipe(tmp_path, ros_domain_id(), stop_after_s=1.5, budget_s=WALL_BUDGET_S,
                     lose_clock_at_s=1.0)
    summary, result = run['summary'], run['controller_manager']
    print(f'ros2_control lockstep, a lost /clock: {summary["steps"]} steps in '
          f'{run["wall_s"]:.1f} s of wall time; {summary}; controller_manager: {result}')
    assert result['lost_clocks'] == 1
    assert run['returncode'] == 0, run['simulator_log'][-3000:]
    assert summary['stop_reason'] == 'stop_after'
    assert summary['steps'] >= 1400                          # the same state again: no step
    assert summary['wait_s_max'] >= 0.5                      # the wait cost a command_timeout
    assert result['applied_as_written'] == result['applied_checked'], result
