# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
Every rule of the command exchange (docs/ros_contract.md), in process, without DDS.

The exchange core (:mod:`dodo_sim.ros.exchange`) gets stamps, publisher ids, torques and ``now``
exactly as the simulator and driver nodes hand them over; these tests play both sides (states
published, commands received) with hand-made times. The attack matrix of issue 27 stays here as
tests: strays, future stamps, stale stamps, early commands.
"""
import math

from dodo_sim.ros.exchange import (ANSWER, EARLY, ExchangeEvents, FAR_AHEAD_NS, FOREIGN,
                                   FUTURE, HELD, LAST, LATE, LockstepExchange, LOST,
                                   RealtimeExchange, REJECTED, UNSTAMPED, WAITING)
import pytest

PERIOD_NS = 1_000_000
CONTROLLER, STRAY, OTHER = b'\x01' * 16, b'\x02' * 16, b'\x03' * 16
TAU, STRAY_TAU = (1.0, -1.0), (40.0, -40.0)


class Events(ExchangeEvents):
    """Every event, in order, as (name, args)."""

    def __init__(self):
        self.seen = []

    def __getattribute__(self, name):
        if name in ('bound', 'foreign', 'future', 'early', 'paused', 'resumed', 'zero_torque',
                    'commands_back', 'stale'):
            return lambda *args: self.seen.append((name,) + args)
        return object.__getattribute__(self, name)

    def named(self, name):
        return [e[1:] for e in self.seen if e[0] == name]


def lockstep(**kwargs):
    events = Events()
    options = {'command_timeout_s': 0.5, 'startup_timeout_s': 60.0, 'lost_timeout_s': 120.0}
    options.update(kwargs)
    return LockstepExchange(PERIOD_NS, events=events, **options), events


def realtime(**kwargs):
    events = Events()
    options = {'command_timeout_s': 0.5, 'max_command_age_s': 0.005, 'zero': (0.0, 0.0)}
    options.update(kwargs)
    return RealtimeExchange(PERIOD_NS, events=events, **options), events


# -- lockstep ---------------------------------------------------------------------------------

def test_lockstep_the_command_stamped_like_the_awaited_state_answers_it():
    x, events = lockstep()
    x.published(0, 10.0)
    assert x.command(0, CONTROLLER, TAU, 10.001) is ANSWER
    assert x.controller == CONTROLLER and events.named('bound') == [(CONTROLLER, None, 0)]
    x.published(PERIOD_NS, 10.002)
    assert x.command(PERIOD_NS, CONTROLLER, TAU, 10.003) is ANSWER
    assert x.counts.steps == 1 and x.command_age.max == 0 and x.command_age.count == 2
    assert x.round_trip.max == pytest.approx(1_000_000, abs=1000)      # 1 ms out -> in


def test_lockstep_pairs_by_stamp_never_by_arrival():
    x, _ = lockstep()
    x.published(0, 0.0)
    assert x.command(0, CONTROLLER, TAU, 0.0) is ANSWER
    x.published(PERIOD_NS, 0.0)
    # the answer to the previous state again (a duplicate): late, the state still waits
    assert x.command(0, CONTROLLER, TAU, 0.0) is LATE
    assert x.awaiting and x.counts.late == 1
    assert x.command(PERIOD_NS, CONTROLLER, TAU, 0.0) is ANSWER


def test_lockstep_binds_one_controller_and_refuses_every_other_publisher():
    x, events = lockstep()
    x.published(0, 0.0)
    assert x.command(0, CONTROLLER, TAU, 0.0) is ANSWER
    x.published(PERIOD_NS, 0.0)
    for _ in range(3):      # a stray answering the awaited state exactly: never applied
        assert x.command(PERIOD_NS, STRAY, STRAY_TAU, 0.0) is FOREIGN
    assert x.awaiting and x.counts.foreign == 3
    assert events.named('foreign') == [(STRAY, PERIOD_NS, True), (STRAY, PERIOD_NS, False),
                                       (STRAY, PERIOD_NS, False)]
    assert x.command(PERIOD_NS, CONTROLLER, TAU, 0.0) is ANSWER
    assert list(x.foreign_publishers) == [STRAY]


def test_lockstep_a_stray_that_answers_first_is_the_controller_and_named_as_such():
    x, _ = lockstep()
    x.name_publisher(STRAY, '/stray')
    x.name_publisher(CONTROLLER, '/controller')
    x.published(0, 0.0)
    assert x.command(0, STRAY, STRAY_TAU, 0.0) is ANSWER
    x.published(PERIOD_NS, 0.0)
    assert x.command(PERIOD_NS, CONTROLLER, TAU, 0.0) is FOREIGN
    summary = x.summary()
    assert summary['controller'] == '/stray' and summary['foreign_nodes'] == '/controller'
    assert summary['duplicate_controller'] is False


def test_lockstep_a_second_node_with_the_controllers_name_is_a_duplicate():
    x, _ = lockstep()
    x.name_publisher(CONTROLLER, '/controller')
    x.name_publisher(OTHER, '/controller')
    x.published(0, 0.0)
    x.command(0, CONTROLLER, TAU, 0.0)
    x.published(PERIOD_NS, 0.0)
    assert x.command(PERIOD_NS, OTHER, TAU, 0.0) is FOREIGN
    assert x.summary()['duplicate_controller'] is True


def test_lockstep_commands_before_the_first_state_are_early_not_foreign():
    x, events = lockstep()
    for publisher in (CONTROLLER, STRAY):     # a controller_manager publishes from its start
        assert x.command(0, publisher, TAU, 0.0) is EARLY
    assert x.counts.early == 2 and x.counts.foreign == 0 and x.controller is None
    x.published(0, 0.0)
    assert x.command(0, CONTROLLER, TAU, 0.0) is ANSWER


def test_lockstep_a_stamp_ahead_of_the_newest_state_is_future_refused_and_counted():
    x, events = lockstep()
    x.published(0, 0.0)
    x.command(0, CONTROLLER, TAU, 0.0)
    x.published(PERIOD_NS, 0.0)
    ahead = PERIOD_NS + 1000 * 1_000_000_000
    for _ in range(6):
        assert x.command(ahead, CONTROLLER, STRAY_TAU, 0.0) is FUTURE
    assert x.counts.future == 6 and x.awaiting
    assert events.named('future')[0] == (CONTROLLER, ahead, 1000 * 1_000_000_000)
    assert x.command(PERIOD_NS, CONTROLLER, TAU, 0.0) is ANSWER    # the next valid one applies


def test_lockstep_wall_clock_stamps_of_a_controller_manager_are_future_never_age_0():
    """Issue 27 item 14: a controller_manager not on sim time stamps with the system clock."""
    x, events = lockstep()
    x.published(0, 0.0)
    wall = 1_760_000_000 * 1_000_000_000            # 2025, in ns
    assert x.topic_based(wall, CONTROLLER, TAU, 0.0) is FUTURE
    assert x.controller is None and x.command_age.count == 0
    (_, _, ahead), = events.named('future')
    assert ahead >= FAR_AHEAD_NS                     # the node names use_sim_time for it
    assert x.topic_based(0, CONTROLLER, TAU, 0.0) is ANSWER        # on /clock: exact


def test_lockstep_malformed_and_unstamped_commands_never_answer():
    x, _ = lockstep()
    x.published(0, 0.0)
    assert x.command(0, CONTROLLER, None, 0.0) is REJECTED
    assert x.unstamped(CONTROLLER, None, 0.0) is REJECTED
    assert x.unstamped(CONTROLLER, TAU, 0.0) is UNSTAMPED
    assert x.awaiting and x.controller is None
    assert (x.counts.rejected, x.counts.unstamped) == (2, 1)


def test_lockstep_stop_after_answers_the_last_state_then_ends_without_a_step():
    x, _ = lockstep(stop_after_ns=2 * PERIOD_NS)
    x.published(0, 0.0)
    assert x.command(0, CONTROLLER, TAU, 0.0) is ANSWER
    x.published(PERIOD_NS, 0.0)
    assert not x.finished and x.command(PERIOD_NS, CONTROLLER, TAU, 0.0) is ANSWER
    x.published(2 * PERIOD_NS, 0.0)
    assert x.finished
    assert x.command(2 * PERIOD_NS, CONTROLLER, TAU, 0.0) is LAST
    assert x.command_age.count == 2                  # the last answer applies to no step


def test_reset_restarts_simulated_time_one_period_after_the_newest_stamp():
    x, _ = lockstep()
    assert x.state_stamp(0.0) == 0
    x.published(0, 0.0)
    x.published(x.state_stamp(0.003), 0.0)
    x.reset()
    assert x.state_stamp(0.0) == 4 * PERIOD_NS       # the clock never goes back
    x.published(x.state_stamp(0.0), 0.0)
    x.reset()
    assert x.state_stamp(0.001) == 6 * PERIOD_NS


def test_a_state_published_without_a_step_keeps_its_time_and_gets_the_next_stamp():
    """A teleport (simulation_interfaces SetEntityState) keeps the simulation's own time."""
    x, _ = lockstep()
    x.published(0, 0.0)
    x.published(x.state_stamp(0.002), 0.0)
    x.reset(0.002)                                   # same simulated time, a new state
    assert x.state_stamp(0.002) == 3 * PERIOD_NS
    x.published(x.state_stamp(0.002), 0.0)
    assert x.state_stamp(0.003) == 4 * PERIOD_NS     # the steps go on one period apart


def test_lockstep_waits_are_warned_after_startup_then_command_timeout_and_resume():
    x, events = lockstep(command_timeout_s=0.5, startup_timeout_s=5.0)
    x.published(0, 100.0)
    assert x.watch(101.0) is None                    # the first state: startup_timeout
    assert x.watch(105.5) is WAITING and x.counts.waits == 1
    assert x.watch(106.0) is WAITING and x.counts.waits == 1     # one wait, warned on
    assert x.command(0, CONTROLLER, TAU, 106.2) is ANSWER
    assert events.named('resumed') == [(pytest.approx(6.2), 0)]
    x.published(PERIOD_NS, 107.0)
    assert x.watch(107.4) is None
    assert x.watch(107.6) is WAITING and x.counts.waits == 2     # later states: command_timeout
    assert x.counts.wait_s_max == pytest.approx(6.0)
    assert x.watch(107.6) is WAITING and x.counts.steps == 1     # simulated time never moves


def test_lockstep_the_controller_is_lost_after_controller_lost_timeout():
    x, _ = lockstep(lost_timeout_s=3.0)
    x.published(0, 0.0)
    x.command(0, CONTROLLER, TAU, 0.0)
    x.published(PERIOD_NS, 1.0)
    assert x.watch(3.9) is WAITING
    assert x.watch(4.1) is LOST and 'controller_lost_timeout = 3 s' in x.lost_reason
    assert x.watch(5.0) is None                      # decided once


def test_lockstep_the_controller_is_lost_when_its_publisher_leaves_the_graph():
    present = {CONTROLLER: True}
    x, _ = lockstep(publisher_present=lambda gid: present.get(gid, False), graph_look_s=0.2)
    x.published(0, 0.0)
    x.command(0, CONTROLLER, TAU, 0.0)
    x.published(PERIOD_NS, 0.0)
    assert x.watch(1.0) is WAITING                   # looked: still there
    present[CONTROLLER] = False
    assert x.watch(1.1) is WAITING                   # the next look is 0.2 s later
    assert x.watch(1.25) is LOST and 'left the graph' in x.lost_reason


def test_lockstep_without_a_controller_the_graph_is_not_asked():
    asked = []
    x, _ = lockstep(publisher_present=lambda gid: asked.append(gid) or False)
    x.published(0, 0.0)
    assert x.watch(61.0) is WAITING and asked == []


# -- realtime -------------------------------------------------------------------------------

def test_realtime_holds_the_newest_command_and_measures_its_age():
    x, _ = realtime()
    x.published(0, 0.0)
    x.start(0.0)
    assert x.command(0, CONTROLLER, TAU, 0.0005) is HELD
    x.published(PERIOD_NS, 0.001)
    x.published(2 * PERIOD_NS, 0.002)
    assert x.next_command(0.002) == TAU              # zero-order hold, 2 ms old
    assert x.command_age.max == 2 * PERIOD_NS and x.counts.stale_steps == 0
    assert x.command(PERIOD_NS, CONTROLLER, (2.0, 2.0), 0.002) is HELD
    assert x.command(PERIOD_NS, CONTROLLER, TAU, 0.002) is LATE     # not newer than the held
    assert x.command(0, CONTROLLER, TAU, 0.002) is LATE
    assert x.next_command(0.002) == (2.0, 2.0)


def test_realtime_six_commands_stamped_1000_s_ahead_are_refused_and_the_next_ones_applied():
    """Issue 27 item 3: a future stamp froze the torque for the rest of the run."""
    x, events = realtime()
    x.published(0, 0.0)
    x.start(0.0)
    assert x.command(0, CONTROLLER, TAU, 0.0) is HELD
    for k in range(1, 7):
        x.published(k * PERIOD_NS, k * 0.001)
        ahead = k * PERIOD_NS + 1000 * 1_000_000_000
        assert x.command(ahead, CONTROLLER, STRAY_TAU, k * 0.001) is FUTURE
        assert x.next_command(k * 0.001) == TAU      # never held
    for k in range(7, 20):
        x.published(k * PERIOD_NS, k * 0.001)
        assert x.command(k * PERIOD_NS, CONTROLLER, (k, -k), k * 0.001) is HELD
        assert x.next_command(k * 0.001) == (k, -k)
    assert x.counts.future == 6 and x.counts.late == 0


def test_realtime_a_strays_stale_stamps_never_drop_the_controllers_commands():
    """Issue 27 item 2: stale-stamped strays made the driver drop the real controller's."""
    x, _ = realtime()
    x.published(0, 0.0)
    assert x.command(0, CONTROLLER, TAU, 0.0) is HELD
    for k in range(1, 100):
        now = k * 0.001
        x.published(k * PERIOD_NS, now)
        assert x.command(0, STRAY, STRAY_TAU, now) is FOREIGN            # stale stamps
        assert x.command(k * PERIOD_NS + 10 ** 12, STRAY, STRAY_TAU, now) is FOREIGN  # ahead
        assert x.command(k * PERIOD_NS, STRAY, STRAY_TAU, now) is FOREIGN        # current
        assert x.command(k * PERIOD_NS, CONTROLLER, TAU, now) is HELD
    assert x.held == TAU and x.controller == CONTROLLER and x.counts.foreign == 3 * 99


def test_realtime_binds_the_first_publisher_with_a_current_command():
    x, events = realtime(command_timeout_s=0.05)
    x.published(0, 0.0)
    for k in range(1, 100):
        x.published(k * PERIOD_NS, k * 0.001)
    # a stamp of a state 60 ms old is not current: it cannot bind
    assert x.command(39 * PERIOD_NS, STRAY, STRAY_TAU, 0.099) is FOREIGN
    assert x.command(99 * PERIOD_NS, CONTROLLER, TAU, 0.099) is HELD
    assert events.named('bound') == [(CONTROLLER, None, 99 * PERIOD_NS)]


def test_realtime_another_publisher_takes_over_only_after_the_controller_went_silent():
    x, events = realtime(command_timeout_s=0.05)
    x.published(0, 0.0)
    assert x.command(0, CONTROLLER, TAU, 0.0) is HELD
    x.published(PERIOD_NS, 0.01)
    assert x.command(PERIOD_NS, OTHER, STRAY_TAU, 0.01) is FOREIGN     # the controller is active
    x.published(100 * PERIOD_NS, 0.1)
    assert x.command(100 * PERIOD_NS, OTHER, STRAY_TAU, 0.1) is HELD   # silent 100 ms: taken over
    assert events.named('bound')[-1] == (OTHER, CONTROLLER, 100 * PERIOD_NS)
    assert x.command(100 * PERIOD_NS, CONTROLLER, TAU, 0.1) is FOREIGN


def test_the_driver_never_lets_another_node_take_over_a_silent_controller():
    """Hardware (``takeover=False``): strays never drive motors, also during a stall."""
    x, _ = realtime(command_timeout_s=0.05, takeover=False)
    x.published(0, 0.0)
    assert x.command(0, CONTROLLER, TAU, 0.0) is HELD
    x.published(500 * PERIOD_NS, 0.5)                # the controller silent for 0.5 s
    assert x.command(500 * PERIOD_NS, STRAY, STRAY_TAU, 0.5) is FOREIGN
    assert x.unstamped(STRAY, STRAY_TAU, 0.5) is FOREIGN
    assert x.command(500 * PERIOD_NS, CONTROLLER, TAU, 0.5) is HELD     # it comes back


def test_one_node_drives_its_stamped_and_unstamped_commands_are_one_controller():
    node = {CONTROLLER: '/controller', OTHER: '/controller', STRAY: '/stray'}
    x, _ = realtime(command_timeout_s=0.05, takeover=False,
                    same_node=lambda a, b: node[a] == node[b])
    x.published(0, 0.0)
    assert x.unstamped(OTHER, TAU, 0.0) is HELD      # its /effort_controller/commands first
    assert x.command(0, STRAY, STRAY_TAU, 0.0) is FOREIGN       # another node: never
    assert x.command(0, CONTROLLER, TAU, 0.001) is HELD         # the same node's stamped ones
    assert x.unstamped(OTHER, TAU, 0.002) is UNSTAMPED          # stamped wins while it answers
    x.published(100 * PERIOD_NS, 0.1)
    assert x.unstamped(STRAY, STRAY_TAU, 0.1) is FOREIGN        # silent: still not a stray's


def test_realtime_zero_torque_past_command_timeout_once_per_silence_and_stale_steps():
    x, events = realtime(command_timeout_s=0.01, max_command_age_s=0.002)
    x.published(0, 0.0)
    x.start(0.0)
    assert x.next_command(0.0) == (0.0, 0.0)         # nothing yet: zero, not a timeout
    assert x.counts.timeouts == 0 and x.counts.zero_torque_steps == 1
    x.command(0, CONTROLLER, TAU, 0.0)
    for k in range(1, 4):
        x.published(k * PERIOD_NS, k * 0.001)
        assert x.next_command(k * 0.001) == TAU
    assert x.counts.stale_steps == 1                 # 3 ms old > 2 ms
    for k in range(4, 20):
        x.published(k * PERIOD_NS, k * 0.001)
        x.next_command(k * 0.001)
    assert x.counts.timeouts == 1 and x.silent       # 11 ms old > 10 ms: zero torque, once
    assert x.counts.zero_torque_steps == 1 + 9
    x.command(19 * PERIOD_NS, CONTROLLER, TAU, 0.019)
    assert x.next_command(0.019) == TAU and not x.silent
    assert [e[0] for e in events.seen if e[0] in ('zero_torque', 'commands_back')] == \
        ['zero_torque', 'commands_back']


def test_realtime_a_late_tick_catches_up_at_most_10_ms_and_counts_the_overrun():
    x, _ = realtime()
    x.published(0, 0.0)
    x.start(0.0)
    assert x.due(0.0) == 0
    assert x.due(0.0031) == 3
    assert x.due(0.0032) == 0
    assert x.due(0.0502) == 10 and x.counts.overruns == 1      # 47 due, 10 made up
    assert x.ticks == 50
    assert x.tick_lateness.max > 40_000_000


def test_realtime_unstamped_commands_are_held_only_without_a_stamped_source():
    x, _ = realtime(command_timeout_s=0.05)
    assert x.unstamped(CONTROLLER, TAU, 0.0) is EARLY
    x.published(0, 0.0)
    assert x.unstamped(CONTROLLER, TAU, 0.0) is HELD and x.held_stamp_ns == 0
    assert x.unstamped(STRAY, STRAY_TAU, 0.01) is FOREIGN      # one unstamped source at a time
    assert x.command(0, OTHER, (3.0, 3.0), 0.02) is HELD        # a stamped source wins
    assert x.unstamped(CONTROLLER, TAU, 0.03) is UNSTAMPED
    assert x.held == (3.0, 3.0)


def test_realtime_topic_based_commands_hold_the_newest_of_one_clock():
    x, _ = realtime(written_ahead_ns=PERIOD_NS)
    x.published(0, 0.0)
    half = PERIOD_NS // 2     # a controller_manager on the system clock, after the state
    assert x.topic_based(half, CONTROLLER, TAU, 0.0) is HELD
    assert x.topic_based(half, CONTROLLER, (2.0, 2.0), 0.0) is HELD    # same clock: newest
    assert x.topic_based(half - 1, CONTROLLER, TAU, 0.0) is LATE
    assert x.topic_based(10 ** 12, CONTROLLER, TAU, 0.0) is FUTURE
    assert x.held == (2.0, 2.0) and x.held_stamp_ns == 0      # its age is never negative


def test_summaries_carry_every_counter():
    x, _ = realtime()
    keys = set(x.summary())
    for key in ('mode', 'steps', 'rejected', 'foreign', 'future', 'late', 'early', 'unstamped',
                'controller', 'foreign_nodes', 'duplicate_controller', 'zero_torque_steps',
                'timeouts', 'stale_steps', 'overruns', 'age_ms_p99', 'round_trip_ms_p99',
                'tick_late_ms_p99'):
        assert key in keys, key
    assert set(lockstep()[0].summary()) >= keys - {'tick_late_ms_p99'} | {'waits'}


def test_a_flood_of_publisher_ids_costs_bounded_memory():
    x, _ = lockstep()
    x.published(0, 0.0)
    x.command(0, CONTROLLER, TAU, 0.0)
    for k in range(10_000):
        assert x.command(0, k.to_bytes(16, 'little') + b'x', TAU, 0.0) is FOREIGN
    assert x.counts.foreign == 10_000 and len(x.foreign_publishers) <= 64


def test_bad_period_is_refused():
    with pytest.raises(ValueError, match='period_ns'):
        LockstepExchange(0, command_timeout_s=1.0, startup_timeout_s=1.0)


def test_an_infinite_controller_lost_timeout_waits_for_ever():
    x, _ = lockstep(lost_timeout_s=math.inf)
    x.published(0, 0.0)
    x.command(0, CONTROLLER, TAU, 0.0)
    x.published(PERIOD_NS, 0.0)
    assert x.watch(1e9) is WAITING


def test_the_exchange_core_imports_no_rclpy():
    """The core, the state merge and the command routing run without ROS (for lean loops)."""
    import subprocess
    import sys
    code = ('import sys, dodo_sim.ros.exchange, dodo_sim.ros.state_merge, '
            'dodo_sim.ros.recorder_commands, dodo_sim.stamps\n'
            'assert "rclpy" not in sys.modules, "rclpy imported"')
    subprocess.run([sys.executable, '-c', code], check=True)
