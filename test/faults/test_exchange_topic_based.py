# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
Lockstep with ros2_control's topic-based convention: the start and pairing rule, in process.

The other side is a controller_manager as ``ros2_control_node.cpp`` runs it on sim time
(ros-controls/ros2_control, kilted @ cbe7d2c; docs/ros2_control.md, "Lockstep"): it waits until
its clock has started (ROS time 0 has not), sleeps one period on it, then per loop reads,
updates, writes once — the topic-based system's ``write()`` stamps ``get_node()->now()``, the
clock of the hardware component's own node — and sleeps until its clock passed one more
period. ``ClockDrivenManager`` below is that loop as a function of the /clock values it sees;
the tests hand the exchange exactly what it would write, with hand-made wall times.
"""
from dodo_sim.ros.exchange import (ANSWER, FOREIGN, LATE, LockstepExchange, REJECTED, TICK,
                                   WAITING)
import pytest

PERIOD_NS = 1_000_000
CM, STRAY = b'\x01' * 16, b'\x02' * 16
TAU = (1.0, -1.0)


def exchange(**kwargs):
    options = {'command_timeout_s': 0.5, 'startup_timeout_s': 60.0, 'clock_tick_s': 0.05}
    options.update(kwargs)
    return LockstepExchange(PERIOD_NS, **options)


class ClockDrivenManager:
    """
    ros2_control_node.cpp's loop on sim time, driven by the /clock values it is handed.

    ``clock(ns)`` returns the stamps it writes at that clock (at most one: one write per loop),
    ``hardware_lag`` makes the hardware node's clock one /clock behind at the next write.
    """

    def __init__(self, period_ns=PERIOD_NS, active=True):
        self.period_ns = period_ns
        self.phase = 'wait_until_started'
        self.wake_at = None
        self.active = active          # the hardware component is active (it writes)
        self.hardware_clock = 0
        self.hardware_lag = False

    def clock(self, ns: int) -> list:
        previous_hardware = self.hardware_clock
        self.hardware_clock = ns
        if self.phase == 'wait_until_started':
            if ns == 0:
                return []
            self.phase, self.wake_at = 'sleep_one_period', ns + self.period_ns
            return []
        if ns < self.wake_at:
            return []
        # the loop: read, update, write (stamped by the hardware node's clock), sleep one period
        self.phase, self.wake_at = 'loop', ns + self.period_ns
        if not self.active:
            return []
        stamp = previous_hardware if self.hardware_lag else ns
        self.hardware_lag = False
        return [stamp]


def run(x, cm, states, torques=TAU, lag_at=()):
    """
    Publish states (the node's part), feed the manager each /clock; return the verdicts.

    Wall time moves 10 ms whenever the manager wrote nothing (0 to 100 s).
    """
    verdicts, wall = [], 0.0
    stamp = x.state_stamp(0.0)
    x.published(stamp, wall)
    t = 0.0
    while x.counts.steps < states and wall < 100.0:
        if x.counts.steps in lag_at:
            cm.hardware_lag = True
        written = cm.clock(x.newest_ns)
        for w in written:
            verdict = x.topic_based(w, CM, torques, wall)
            verdicts.append(verdict)
            if verdict is ANSWER:
                t += 0.001
                x.published(x.state_stamp(t), wall)
            elif verdict is TICK:
                x.tick()
                x.published(x.state_stamp(t), wall)
        if not written:
            wall += 0.01
            if x.tick_due(wall):
                x.tick()
                x.published(x.state_stamp(t), wall)
    return verdicts


def test_the_first_state_is_stamped_one_period_a_started_clock():
    x = exchange()
    assert x.state_stamp(0.0) == PERIOD_NS
    assert exchange(clock_tick_s=0.0).state_stamp(0.0) == 0     # the stamped contract: 0


def test_a_controller_manager_on_sim_time_starts_and_runs_in_lockstep():
    """The deadlock of issue 28: today simulated time stays at 0 for ever."""
    x, cm = exchange(), ClockDrivenManager()
    verdicts = run(x, cm, states=200)
    assert x.counts.steps == 200
    assert verdicts.count(ANSWER) == 200 and LATE not in verdicts
    # it started after one tick: /clock 1 ms (started), 2 ms (one period slept), then the loop
    assert x.counts.clock_ticks == 1
    assert x.newest_ns == x.state_stamp(0.2) == 202 * PERIOD_NS


def test_without_the_start_rule_the_controller_manager_never_writes():
    x, cm = exchange(clock_tick_s=0.0), ClockDrivenManager()
    x.published(x.state_stamp(0.0), 0.0)
    assert cm.clock(x.newest_ns) == []               # ROS time 0: not started
    assert not x.tick_due(1000.0)                    # nothing moves the clock: the deadlock


def test_ticks_are_paced_by_wall_time_then_only_past_command_timeout():
    x = exchange(clock_tick_s=0.05, command_timeout_s=0.5)
    x.published(x.state_stamp(0.0), 10.0)
    assert not x.tick_due(10.04) and x.tick_due(10.05)
    x.tick()
    x.published(x.state_stamp(0.0), 10.05)
    assert x.newest_ns == 2 * PERIOD_NS and x.counts.steps == 0 and x.counts.clock_ticks == 1
    assert x.waiting_s(10.5) == pytest.approx(0.5)   # the wait goes on: warned as one wait
    assert x.topic_based(2 * PERIOD_NS, CM, TAU, 10.06) is ANSWER
    x.published(x.state_stamp(0.001), 10.06)
    # then the answers move the clock; a tick only when a write was lost (best-effort /clock)
    assert not x.tick_due(10.55) and x.tick_due(10.56)


def test_a_lost_clock_sample_costs_one_command_timeout_never_the_pairing():
    """The /clock QoS is best effort, depth 1: a sample the loop never got stops it for ever."""
    x, cm = exchange(command_timeout_s=0.5), ClockDrivenManager()
    run(x, cm, states=5)
    newest = x.newest_ns                              # its /clock is lost: nothing is written
    assert not x.tick_due(x._ticked_wall + 0.4) and x.tick_due(x._ticked_wall + 0.5)
    x.tick()
    x.published(x.state_stamp(0.005), 100.6)          # the same state, one period later
    assert x.newest_ns == newest + PERIOD_NS and x.counts.steps == 5
    # a write for the lost clock now is late (strictly the new stamp after a tick without a
    # write); the loop's write at the new clock answers
    assert x.topic_based(newest, CM, TAU, 100.7) is LATE
    (w,) = cm.clock(x.newest_ns)
    assert x.topic_based(w, CM, TAU, 100.7) is ANSWER


def test_a_hardware_clock_one_period_behind_still_answers_and_never_shifts_the_pairing():
    """The hardware component's node has its own /clock subscription (rclcpp clock thread)."""
    x, cm = exchange(), ClockDrivenManager()
    verdicts = run(x, cm, states=100, lag_at=(10, 11, 50))
    assert verdicts.count(ANSWER) == 100 and LATE not in verdicts
    assert x.newest_ns == x.state_stamp(0.1)


def test_a_stale_stamp_after_a_tick_without_a_write_is_late_not_an_answer():
    x = exchange()
    x.published(x.state_stamp(0.0), 0.0)
    x.tick()
    x.published(x.state_stamp(0.0), 0.05)             # nothing was written for 1 ms
    assert x.topic_based(PERIOD_NS, CM, TAU, 0.06) is FOREIGN    # not a write for 2 ms
    assert x.topic_based(2 * PERIOD_NS, CM, TAU, 0.07) is ANSWER
    x.published(x.state_stamp(0.001), 0.07)
    assert x.topic_based(2 * PERIOD_NS, CM, TAU, 0.08) is ANSWER  # written at 3 ms, clock 2
    x.published(x.state_stamp(0.002), 0.08)
    assert x.topic_based(2 * PERIOD_NS, CM, TAU, 0.09) is LATE    # two periods behind


def test_unset_commands_before_the_effort_controller_is_active_keep_the_start_ticking():
    """ros2_control's command interfaces are NaN until a controller writes them."""
    x, cm = exchange(), ClockDrivenManager()
    x.published(x.state_stamp(0.0), 0.0)
    wall = 0.0
    for k in range(20):                               # the spawner takes a while
        for w in cm.clock(x.newest_ns):
            assert x.topic_based(w, CM, None, wall) is REJECTED     # NaN: no answer
        wall = (k + 1) * 0.0625
        assert x.tick_due(wall)
        x.tick()
        x.published(x.state_stamp(0.0), wall)
    assert x.counts.steps == 0 and x.counts.rejected == 19
    (w,) = cm.clock(x.newest_ns)
    assert x.topic_based(w, CM, TAU, wall) is ANSWER


def test_a_rejected_write_after_the_start_ticks_at_once_and_the_loop_goes_on():
    x, cm = exchange(), ClockDrivenManager()
    run(x, cm, states=10)
    (w,) = cm.clock(x.newest_ns)
    assert x.topic_based(w, CM, None, 1.0) is TICK    # NaN: the manager sleeps one period
    x.tick()
    x.published(x.state_stamp(0.010), 1.0)
    assert x.counts.steps == 10 and x.counts.clock_ticks == 2
    (w,) = cm.clock(x.newest_ns)
    assert x.topic_based(w, CM, TAU, 1.0) is ANSWER


def test_a_strays_rejected_command_never_ticks():
    x, cm = exchange(), ClockDrivenManager()
    run(x, cm, states=3)
    assert x.topic_based(x.newest_ns, STRAY, None, 1.0) is REJECTED
    assert x.topic_based(x.newest_ns, STRAY, TAU, 1.0) is FOREIGN
    assert x.awaiting and x.counts.clock_ticks == 1


def test_a_manager_at_half_the_rate_waits_a_command_timeout_each_step_and_is_warned():
    """update_rate must be 1 / control_period: its loop sleeps its own period on /clock."""
    x, cm = exchange(command_timeout_s=0.5), ClockDrivenManager(period_ns=2 * PERIOD_NS)
    x.published(x.state_stamp(0.0), 0.0)
    wall, answers = 0.0, 0
    while wall < 3.0:
        for w in cm.clock(x.newest_ns):
            if x.topic_based(w, CM, TAU, wall) is ANSWER:
                answers += 1
                x.published(x.state_stamp(answers * 0.001), wall)
        wall += 0.01
        assert x.watch(wall) in (None, WAITING)
        if x.tick_due(wall):
            x.tick()
            x.published(x.state_stamp(answers * 0.001), wall)
    # every other state waits command_timeout for a write that comes one period later
    assert 4 <= answers <= 7 and x.counts.waits >= answers - 2
