# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
The rules of driving the simulation (dodo_sim.ros.sim_control), in process, one per test.

A :class:`Loop` plays the simulator node's step boundary with the real Simulator and the real
lockstep exchange, and a controller that answers every state (a PD hold of the start pose).
docs/simulation_interfaces.md.
"""
from __future__ import annotations

from conftest import pd_hold, URDF_XACRO
from dodo_sim import stamps
from dodo_sim.ros import sim_control as sc, sim_values as sv
from dodo_sim.ros.exchange import ANSWER, LockstepExchange, RealtimeExchange
from dodo_sim.ros.sim_entities import Entities
from dodo_sim.simulator import SimConfig, Simulator
import numpy as np
import pytest

START_Q = (0.0, 1.3, 0.3, -0.6)
PERIOD_NS = 1_000_000
CONTROLLER = b'controller'


class Loop:
    """The simulator node's boundary handling (simulator_node._boundary), without ROS."""

    def __init__(self, lockstep: bool = True, **config):
        self.sim = Simulator(URDF_XACRO, SimConfig(initial_q=START_Q, **config))
        self.lockstep = lockstep
        if lockstep:
            self.exchange = LockstepExchange(PERIOD_NS, command_timeout_s=1.0,
                                             startup_timeout_s=1.0)
        else:
            self.exchange = RealtimeExchange(PERIOD_NS, command_timeout_s=1.0,
                                             max_command_age_s=0.005, zero=(0.0, 0.0))
        self.events = []
        self.control = sc.SimulationControl(
            self.sim, self.exchange, Entities(self.sim), lockstep=lockstep,
            on_event=lambda record, episode: self.events.append((record, episode)))
        self.states = []        # (stamp, State) in publication order
        self.answers = 0
        self.quit = False
        self.publish(self.sim.state)

    def publish(self, state):
        ns = self.exchange.state_stamp(state.t)
        self.exchange.published(ns, 0.0)
        self.states.append((ns, state))
        self.control.published()

    def act(self, action):
        kind, value = action
        if kind == sc.STEP:
            assert (value is None) == (not self.lockstep)     # lockstep: the answer to apply
            self.publish(self.sim.step(value if value is not None else (0.0, 0.0)))
        elif kind == sc.PUBLISH:
            self.publish(value)
        elif kind == sc.QUIT:
            self.quit = True
        return kind

    def answer(self):
        """Answer the newest state as the controller; act on it as the node."""
        ns, state = self.states[-1]
        tau = tuple(pd_hold(state, START_Q).tolist())
        assert self.exchange.command(ns, CONTROLLER, tau, 0.0) is ANSWER
        self.answers += 1
        return self.act(self.control.boundary(tau))

    def poke(self):
        """Act on a request now if the boundary is in hand (the answer held)."""
        if self.control.held is not None:
            return self.act(self.control.boundary())
        return None

    @property
    def newest(self):
        return self.states[-1]


def paused_loop(**config) -> Loop:
    loop = Loop(**config)
    for _ in range(5):
        loop.answer()
    assert loop.control.set_state(sv.STATE_PAUSED).outcome == (sv.RESULT_OK, '')
    assert loop.answer() == sc.HOLD       # the answer to the newest state is held
    return loop


def test_paused_holds_the_answer_and_simulated_time_stops():
    loop = paused_loop()
    before = len(loop.states)
    assert loop.control.held is not None
    assert loop.poke() == sc.HOLD
    assert len(loop.states) == before


def test_step_n_publishes_n_states_each_answered_and_advances_n_periods():
    loop = paused_loop()
    start_ns = loop.newest[0]
    request = loop.control.step(100)
    progress = []
    request.on_progress = lambda done, left: progress.append((done, left))
    assert loop.poke() == sc.STEP              # the held answer is applied at once
    while not request.done:
        loop.answer()
    assert request.outcome == (sv.RESULT_OK, '')
    assert loop.newest[0] - start_ns == 100 * PERIOD_NS
    assert progress == [(k, 100 - k) for k in range(1, 101)]
    # the 100th state is answered and its answer held: nothing more moves
    assert loop.control.held is not None and loop.poke() == sc.HOLD
    stamps_out = [ns for ns, _ in loop.states]
    assert np.all(np.diff(stamps_out) == PERIOD_NS)


def test_stepping_is_refused_unless_paused():
    loop = Loop()
    request = loop.control.step(3)
    assert request.outcome[0] == sv.RESULT_OPERATION_FAILED and 'pause' in request.outcome[1]
    loop = paused_loop()
    for steps in (0, sc.MAX_STEPS + 1):
        assert loop.control.step(steps).outcome[0] == sv.RESULT_OPERATION_FAILED


def test_a_stepped_run_equals_a_played_run_state_for_state():
    played = Loop()
    for _ in range(60):
        played.answer()
    stepped = paused_loop()
    for count in (1, 20, 34):
        request = stepped.control.step(count)
        stepped.poke()
        while not request.done:
            stepped.answer()
    assert [ns for ns, _ in stepped.states] == [ns for ns, _ in played.states]
    for (_, a), (_, b) in zip(stepped.states, played.states):
        assert np.array_equal(a.q, b.q) and np.array_equal(a.v, b.v)


def test_reset_while_playing_waits_for_the_answer_and_restarts_one_period_later():
    loop = Loop()
    for _ in range(30):
        loop.answer()
    newest = loop.newest[0]
    request = loop.control.reset(sv.SCOPE_DEFAULT)
    assert not request.done and loop.poke() is None      # the answer is not in yet
    assert loop.answer() == sc.PUBLISH                   # instead of a step
    ns, state = loop.newest
    assert ns == newest + PERIOD_NS and state.t == 0.0
    assert np.array_equal(state.q, START_Q) and not state.v.any()
    record, episode = loop.events[-1]
    assert episode and record['event'] == 'reset' and record['stamp_ns'] == ns
    assert record['episode'] == 1 and record['scope'] == ['time', 'state', 'spawned']
    assert not request.done                              # done when the new state is answered
    loop.answer()
    assert request.outcome == (sv.RESULT_OK, '')


def test_after_a_full_reset_the_run_repeats_itself():
    loop = Loop()
    for _ in range(40):
        loop.answer()
    first = [s for _, s in loop.states]
    loop.control.reset(sv.SCOPE_ALL)
    loop.answer()
    for _ in range(39):
        loop.answer()
    again = [s for _, s in loop.states[-40:]]
    for a, b in zip(first, again):
        assert a.t == b.t and np.array_equal(a.q, b.q) and np.array_equal(a.v, b.v)


def test_reset_state_alone_keeps_the_time_and_time_alone_keeps_the_state():
    loop = Loop()
    for _ in range(20):
        loop.answer()
    t = loop.sim.time
    loop.control.reset(sv.SCOPE_STATE)
    loop.answer()
    ns, state = loop.newest
    assert state.t == t and np.array_equal(state.q, START_Q)
    assert loop.events[-1][0]['scope'] == ['state']
    for _ in range(10):
        loop.answer()
    q = loop.newest[1].q
    loop.control.reset(sv.SCOPE_TIME)
    loop.answer()
    ns_time, state = loop.newest
    assert state.t == 0.0 and np.array_equal(state.q, q)
    assert ns_time == ns + 11 * PERIOD_NS            # the clock never goes back


def test_reset_scopes_spawned_alone_and_unknown_bits():
    loop = Loop()
    request = loop.control.reset(sv.SCOPE_SPAWNED)
    assert request.outcome[0] == sv.RESULT_OK and 'nothing' in request.outcome[1]
    assert not loop.control.waiting
    request = loop.control.reset(8)
    assert request.outcome[0] == sv.RESULT_FEATURE_UNSUPPORTED


def test_stopped_is_a_full_reset_then_paused_and_playing_runs_from_the_start():
    loop = Loop()
    for _ in range(25):
        loop.answer()
    request = loop.control.set_state(sv.STATE_STOPPED)
    assert loop.control.state == sv.STATE_STOPPED
    assert loop.answer() == sc.PUBLISH
    assert loop.newest[1].t == 0.0
    assert loop.answer() == sc.HOLD and request.outcome[0] == sv.RESULT_OK
    assert loop.control.set_state(sv.STATE_PLAYING).outcome[0] == sv.RESULT_OK
    assert loop.poke() == sc.STEP and loop.newest[1].t == pytest.approx(0.001)


def test_set_state_answers_already_there_and_unsupported_states():
    loop = Loop()
    assert loop.control.set_state(sv.STATE_PLAYING).outcome[0] == sv.ALREADY_IN_TARGET_STATE
    for state in (4, 5, 9):
        assert loop.control.set_state(state).outcome[0] == sv.RESULT_FEATURE_UNSUPPORTED


def test_quitting_holds_then_ends_the_run_at_the_boundary_after_its_release():
    loop = Loop()
    loop.answer()
    assert loop.control.set_state(sv.STATE_QUITTING).outcome[0] == sv.RESULT_OK
    assert loop.answer() == sc.HOLD           # the caller gets its answer first
    loop.control.release_quit()
    assert loop.control.waiting and loop.poke() == sc.QUIT
    assert loop.control.set_state(sv.STATE_PLAYING).outcome[0] == sv.INCORRECT_TRANSITION


def test_playing_interrupts_steps_and_a_cancel_finishes_the_steps_taken():
    loop = paused_loop()
    request = loop.control.step(10)
    loop.poke()
    loop.answer()
    loop.control.cancel(request)
    assert not request.done                  # its second step's state awaits its answer
    loop.answer()
    assert request.outcome[0] == sv.RESULT_OPERATION_FAILED and 'cancelled after 2' in \
        request.outcome[1]
    assert loop.poke() == sc.HOLD
    request = loop.control.step(10)
    loop.poke()
    assert loop.control.set_state(sv.STATE_PLAYING).outcome[0] == sv.RESULT_OK
    assert request.outcome[0] == sv.RESULT_OPERATION_FAILED and 'playing' in request.outcome[1]


def test_the_end_of_the_run_fails_what_is_pending():
    loop = paused_loop()
    step = loop.control.step(5)
    reset = loop.control.reset(sv.SCOPE_ALL)
    loop.control.ended('stop_after')
    assert step.outcome[0] == reset.outcome[0] == sv.RESULT_OPERATION_FAILED
    assert 'stop_after' in reset.outcome[1]


def test_set_entity_state_moves_the_base_and_keeps_the_joints():
    loop = paused_loop()
    entities = loop.control.entities
    name = entities.robot_name
    before = entities.state(name, loop.sim.state.q, loop.sim.state.v)
    position = before.position + np.array((0.4, 0.0, 0.2))
    request = loop.control.set_entity_state(name, 'world', position, before.orientation_xyzw,
                                            (0.5, 0.0, -0.1), (0.0, 0.0, 0.0))
    assert loop.poke() == sc.PUBLISH
    ns, state = loop.newest
    after = entities.state(name, state.q, state.v)
    assert after.position == pytest.approx(position, abs=1e-12)
    assert after.linear == pytest.approx((0.5, 0.0, -0.1), abs=1e-12)
    assert np.array_equal(state.q[2:], loop.states[-2][1].q[2:])      # hip and knee kept
    record, episode = loop.events[-1]
    assert episode and record['event'] == 'entity_state' and record['stamp_ns'] == ns
    loop.answer()
    assert request.outcome == (sv.RESULT_OK, '')


@pytest.mark.parametrize('offset, rotation, words', [
    ((0.0, 0.3, 0.0), (0.0, 0.0, 0.0, 1.0), 'cannot be put at that pose'),   # y: no joint
    ((0.0, 0.0, 0.0), (0.0, 0.2, 0.0, 0.98), 'cannot be put at that pose'),  # a pitch
    ((0.0, 0.0, -2.0), (0.0, 0.0, 0.0, 1.0), 'below the flat terrain'),
    ((0.0, 0.0, 0.0), (0.0, 0.0, 0.0, 0.0), 'zero quaternion'),
])
def test_a_pose_the_base_cannot_take_is_invalid(offset, rotation, words):
    loop = paused_loop()
    entities = loop.control.entities
    before = entities.state(entities.robot_name, loop.sim.state.q, loop.sim.state.v)
    request = loop.control.set_entity_state(entities.robot_name, '',
                                            before.position + np.array(offset), rotation,
                                            (0.0, 0.0, 0.0), (0.0, 0.0, 0.0))
    loop.poke()
    assert request.outcome[0] == sv.INVALID_POSE and words in request.outcome[1], request.outcome
    assert loop.control.episode == 0 and loop.poke() == sc.HOLD


def test_the_terrain_unknown_entities_and_other_frames_are_refused_at_once():
    loop = paused_loop()
    robot = loop.control.entities.robot_name
    zero, unit = (0.0, 0.0, 0.0), (0.0, 0.0, 0.0, 1.0)
    cases = (('terrain', '', sv.RESULT_OPERATION_FAILED), ('nope', '', sv.RESULT_NOT_FOUND),
             (robot, 'body', sv.RESULT_OPERATION_FAILED))
    for name, frame, code in cases:
        request = loop.control.set_entity_state(name, frame, zero, unit, zero, zero)
        assert request.outcome[0] == code, (name, request.outcome)
    assert not loop.control.waiting


def test_a_floating_base_round_trips_its_pose_and_twist():
    from physics_models import free_box
    sim = Simulator(free_box(), SimConfig(contact_frames=('c0', 'c1', 'c2', 'c3'),
                                          initial_q=(0, 0, 0.5, 0, 0, 0, 1)))
    entities = Entities(sim)
    assert entities.frame_id == 'odom' and entities.base_joint_names[0] != ''
    turn = np.array((0.1, -0.2, 0.3, 0.9))
    turn /= np.linalg.norm(turn)
    q, v = entities.with_base('box', 'odom', (0.3, -0.2, 0.8), turn, (1.0, -0.5, 0.2),
                              (0.3, 0.1, -2.0), sim.state.q, sim.state.v)
    back = entities.state('box', q, v)
    assert back.position == pytest.approx((0.3, -0.2, 0.8), abs=1e-12)
    assert abs(abs(float(back.orientation_xyzw @ turn)) - 1.0) < 1e-12
    assert back.linear == pytest.approx((1.0, -0.5, 0.2), abs=1e-12)
    assert back.angular == pytest.approx((0.3, 0.1, -2.0), abs=1e-12)


def test_set_joint_state_changes_the_named_joints_within_their_limits():
    loop = paused_loop()
    q_before = loop.sim.state.q.copy()
    request = loop.control.set_joint_state({'hip': (0.1, 0.5), 'knee': (-0.4, None)})
    assert loop.poke() == sc.PUBLISH
    state = loop.newest[1]
    assert state.q[2:].tolist() == [0.1, -0.4] and np.array_equal(state.q[:2], q_before[:2])
    assert state.v[2] == 0.5
    loop.answer()
    assert request.outcome[0] == sv.RESULT_OK
    assert loop.events[-1][0]['joints'] == ['hip', 'knee']
    refused = loop.control.set_joint_state({'elbow': (0.0, None)})
    assert refused.outcome[0] == sv.RESULT_NOT_FOUND and 'hip' in refused.outcome[1]
    limits = {lim.name: lim for lim in loop.sim.robot.limits}
    too_far = limits['knee'].lower - 0.1
    request = loop.control.set_joint_state({'knee': (too_far, None)})
    loop.poke()
    assert request.outcome[0] == sv.INVALID_POSE and 'URDF limits' in request.outcome[1]


def test_parameters_take_effect_from_the_newest_state_and_are_recorded():
    loop = Loop()
    for _ in range(10):
        loop.answer()
    newest = loop.newest[0]
    loop.control.set_parameters({'friction': 0.3, 'terrain_height_m': -0.01})
    assert loop.sim.config.friction == 0.3
    record, episode = loop.events[-1]
    assert not episode and record['event'] == 'parameters' and record['stamp_ns'] == newest
    assert record['values'] == {'friction': 0.3, 'terrain_height_m': -0.01}
    with pytest.raises(ValueError, match='control_period is fixed for a run'):
        loop.control.set_parameters({'control_period': 0.002})
    assert loop.sim.config.control_period == 0.001 and len(loop.events) == 1


def test_realtime_requests_are_done_when_their_state_is_out():
    loop = Loop(lockstep=False)
    loop.control.set_state(sv.STATE_PAUSED)
    assert loop.control.boundary() == (sc.HOLD, None) and not loop.control.running
    request = loop.control.step(3)
    assert loop.control.running
    while loop.control.running:
        loop.act(loop.control.boundary())
    assert request.outcome[0] == sv.RESULT_OK and len(loop.states) == 4
    reset = loop.control.reset(sv.SCOPE_ALL)
    while loop.control.waiting:
        loop.act(loop.control.boundary())
    assert reset.outcome[0] == sv.RESULT_OK and loop.newest[1].t == 0.0


def test_the_constants_are_the_standards():
    from simulation_interfaces.msg import Result, SimulationState, SimulatorFeatures
    from simulation_interfaces.srv import ResetSimulation, SetEntityState, SetSimulationState
    assert (sv.STATE_STOPPED, sv.STATE_PLAYING, sv.STATE_PAUSED, sv.STATE_QUITTING) == (
        SimulationState.STATE_STOPPED, SimulationState.STATE_PLAYING,
        SimulationState.STATE_PAUSED, SimulationState.STATE_QUITTING)
    assert (sv.RESULT_FEATURE_UNSUPPORTED, sv.RESULT_OK, sv.RESULT_NOT_FOUND,
            sv.RESULT_INCORRECT_STATE, sv.RESULT_OPERATION_FAILED) == (
        Result.RESULT_FEATURE_UNSUPPORTED, Result.RESULT_OK, Result.RESULT_NOT_FOUND,
        Result.RESULT_INCORRECT_STATE, Result.RESULT_OPERATION_FAILED)
    response = SetSimulationState.Response
    assert (sv.ALREADY_IN_TARGET_STATE, sv.STATE_TRANSITION_ERROR, sv.INCORRECT_TRANSITION) == (
        response.ALREADY_IN_TARGET_STATE, response.STATE_TRANSITION_ERROR,
        response.INCORRECT_TRANSITION)
    assert sv.INVALID_POSE == SetEntityState.Response.INVALID_POSE
    request = ResetSimulation.Request
    assert (sv.SCOPE_DEFAULT, sv.SCOPE_TIME, sv.SCOPE_STATE, sv.SCOPE_SPAWNED, sv.SCOPE_ALL) == (
        request.SCOPE_DEFAULT, request.SCOPE_TIME, request.SCOPE_STATE, request.SCOPE_SPAWNED,
        request.SCOPE_ALL)
    for value, name in sc.FEATURES.items():
        assert getattr(SimulatorFeatures, name) == value


def test_stamps_of_a_change_follow_the_one_stamp_rule():
    loop = paused_loop()
    loop.control.set_joint_state({'hip': (0.2, None)})
    loop.poke()
    ns, state = loop.newest
    assert ns == loop.states[-2][0] + PERIOD_NS
    assert ns == loop.exchange.state_stamp(state.t)
    assert stamps.stamp_ns(state.t) == stamps.stamp_ns(loop.sim.time)


def test_entities_filters_by_name_and_category_and_refuses_tags_and_bounds():
    from dodo_sim.ros.sim_entities import CATEGORY_ROBOT, CATEGORY_STATIC_OBJECT, EntityError
    entities = Loop().control.entities
    assert entities.names() == ['hopper', 'terrain']
    assert entities.names('^ter') == ['terrain']
    assert entities.names('', [CATEGORY_ROBOT]) == ['hopper']
    assert entities.names('hop', [CATEGORY_STATIC_OBJECT]) == []
    for kwargs, code in (({'tags': ['legged']}, sv.RESULT_FEATURE_UNSUPPORTED),
                         ({'bounds_type': 3}, sv.RESULT_FEATURE_UNSUPPORTED),
                         ({'pattern': '(unclosed'}, sv.RESULT_OPERATION_FAILED),
                         ({'pattern': 'a' * 300}, sv.RESULT_OPERATION_FAILED)):
        with pytest.raises(EntityError) as info:
            entities.names(**kwargs)
        assert info.value.code == code


def test_an_episode_starts_at_its_first_state_and_only_there():
    from dodo_sim.ros.sim_events import decode, encode, EpisodeFollower
    follower = EpisodeFollower()
    follower.event(decode(encode({'seq': 1, 'stamp_ns': 5, 'episode': 1, 'event': 'reset'})))
    assert not follower.starts(7) and follower.episode == 1     # a fresh controller joins
    follower.event({'seq': 2, 'stamp_ns': 9, 'episode': 1, 'event': 'paused'})
    follower.event({'seq': 3, 'stamp_ns': 12, 'episode': 2, 'event': 'entity_state'})
    assert not follower.starts(11)
    assert follower.starts(12) and follower.episode == 2
    assert not follower.starts(13)
    follower.event({'seq': 1, 'stamp_ns': 5, 'episode': 1, 'event': 'reset'})   # history
    assert not follower.starts(14) and follower.episode == 2


def test_a_controller_joining_late_takes_the_history_without_a_restart():
    from dodo_sim.ros.sim_events import EpisodeFollower
    follower = EpisodeFollower()
    assert not follower.starts(100)                                # no event yet
    follower.event({'seq': 1, 'stamp_ns': 40, 'episode': 1, 'event': 'reset'})
    follower.event({'seq': 2, 'stamp_ns': 70, 'episode': 2, 'event': 'reset'})
    assert not follower.starts(101) and follower.episode == 2     # before it joined
    follower.event({'seq': 3, 'stamp_ns': 150, 'episode': 3, 'event': 'reset'})
    assert follower.starts(150) and follower.episode == 3


@pytest.mark.parametrize('text', ['', 'x' * 70000, '[1, 2]', '{"event": "reset"}',
                                  '{"seq": 1, "episode": true, "event": "reset"}',
                                  '{"seq": 1, "episode": 1, "event": "reset", "stamp_ns": 1.5}',
                                  'NaN'])
def test_a_record_that_is_not_one_is_ignored(text):
    from dodo_sim.ros.sim_events import decode, EpisodeFollower
    assert decode(text) is None
    follower = EpisodeFollower()
    follower.event(decode(text))
    assert not follower.pending
