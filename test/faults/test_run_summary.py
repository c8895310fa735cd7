# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
A run's summary names the right node and the right cause (issue 27 items 6 and 14).

``runtime.parse_summary`` reads ``duplicate_controller=false`` as False (it read the string
``'false'``, truthy, so every run with foreign traffic named the bound controller "a second node
... ignored"); the report names the applied controller and the refused nodes, also when a stray
won the first state; commands before the first state never fail a run; a driver stall is not
blamed on the controller.
"""
from dodo_sim.hardware.driver import watchdog_cause
from dodo_sim.ros.runtime import format_summary, parse_summary
from dodo_sim.tools.run_report import summary_failures

CLEAN = {'sim_time_s': 3.0, 'steps': 3000, 'stop_reason': 'stop_after', 'mode': 'lockstep',
         'timeouts': 0, 'zero_torque_steps': 0}


def failures(sim=None, driver=None, hardware=None):
    return summary_failures('completed', 3.0, duration=3.0, clock='simulated time',
                            hardware=hardware, sim_summary=sim, driver_summary=driver,
                            controller_summary=None, watchdog_events=[], motors_off_events=[])


def test_summary_words_read_back_as_what_was_written():
    fields = {'duplicate_controller': False, 'late': True, 'controller': '/controller',
              'foreign_nodes': None, 'steps': 3000, 'age_ms_p99': 0.25}
    parsed = parse_summary('[simulator] ' + format_summary('exchange', fields), 'exchange')
    assert parsed == fields
    assert parsed['duplicate_controller'] is False


def test_a_stray_that_won_the_first_state_is_named_as_the_applied_controller():
    line = ('dodo exchange: mode=lockstep steps=3000 foreign=2999 early=0 '
            'controller=/stray foreign_nodes=/controller duplicate_controller=false')
    (failure,) = failures(dict(CLEAN, **parse_summary(line, 'exchange')))
    assert 'from /controller refused' in failure
    assert 'applied only the commands of /stray' in failure
    assert 'second node named' not in failure


def test_a_real_second_node_of_the_same_name_is_said_so():
    line = ('dodo exchange: foreign=1500 controller=/controller foreign_nodes=/controller '
            'duplicate_controller=true')
    (failure,) = failures(dict(CLEAN, **parse_summary(line, 'exchange')))
    assert '1500 command(s) from a second node named /controller' in failure


def test_commands_before_the_first_state_never_fail_a_run():
    line = 'dodo exchange: foreign=0 early=250 controller=/controller_manager'
    assert failures(dict(CLEAN, **parse_summary(line, 'exchange'))) == []


def test_a_drivers_foreign_commands_fail_the_run_naming_the_stray():
    driver = {'stop_reason': 'stop_after', 'foreign': 67, 'controller': '/controller',
              'foreign_nodes': '/stray', 'duplicate_controller': False}
    (failure,) = failures(driver=driver, hardware='emulated')
    assert '67 command(s) from /stray refused: the driver applied only the commands of ' \
           '/controller' in failure


def test_a_one_second_driver_stall_is_not_blamed_on_the_controller():
    cause = watchdog_cause(command_age_s=1.002, cycle_gap_s=1.0, command_timeout_s=0.05,
                           period_s=0.001)
    assert cause.startswith('the driver itself stalled: no cycle for 1.000 s')
    assert 'the controller was silent' not in cause


def test_a_silent_controller_is_named_as_the_cause():
    assert watchdog_cause(0.051, 0.001, 0.05, 0.001) == 'the controller was silent'
    assert watchdog_cause(float('inf'), 0.001, 0.05, 0.001) == 'the controller was silent'
    both = watchdog_cause(0.052, 0.004, 0.05, 0.001)
    assert 'the controller was silent for 0.048 s' in both and 'missed its deadline' in both
