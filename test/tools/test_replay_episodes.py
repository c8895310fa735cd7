# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
``dodo replay --through-controller`` across resets and states set by a client (episodes).

An offline bag laid out as the graph records it: the simulator's step boundary
(dodo_sim.ros.sim_control) resets the hopper mid-flight and teleports it, the controller starts
afresh at each episode's first state (its ``reset()``, as the node does) and its
``/controller/state`` carries the ``episode`` channel; ``simulator/events`` holds the events.
The replay restarts its controller where the run did: |dtau| = 0. Without the restart the
replayed hop memory is stale and the torques differ.
"""
from __future__ import annotations

from conftest import URDF_XACRO
from dodo_control.controller import Controller, ControllerConfig
from dodo_sim import stamps
from dodo_sim.ros import contract, sim_control as sc, sim_values as sv
from dodo_sim.ros.exchange import ANSWER, LockstepExchange
from dodo_sim.ros.params import config_to_parameters
from dodo_sim.ros.sim_entities import Entities
from dodo_sim.ros.sim_events import encode, EpisodeFollower
from dodo_sim.simulator import SimConfig, Simulator
from dodo_sim.tools.bag_writer import OfflineBagWriter
from dodo_sim.tools.replay_check import compare_with_controller
import numpy as np
import pytest

START_Q = (0.0, 1.3, 0.3, -0.6)
RESET_AT, TELEPORT_AT, TICKS = 700, 1300, 1800


def recorded_run(path, restart=True):
    """Write the bag of a run with a reset and a joint state set; return its event records."""
    sim = Simulator(URDF_XACRO, SimConfig(initial_q=START_Q))
    exchange = LockstepExchange(1_000_000, command_timeout_s=1.0, startup_timeout_s=1.0)
    events = []
    control = sc.SimulationControl(sim, exchange, Entities(sim), lockstep=True,
                                   on_event=lambda record, episode: events.append(record))
    config = ControllerConfig(apex_height=1.2)
    ctrl = Controller(str(URDF_XACRO), config)
    follower = EpisodeFollower()
    with OfflineBagWriter(path) as w:
        w.robot_description(sim.robot.urdf_xml)
        w.parameters('controller', config_to_parameters(config))
        state = sim.state
        written = 0
        for tick in range(TICKS):
            ns = exchange.state_stamp(state.t)
            exchange.published(ns, 0.0)
            for record in events[written:]:      # the events come before their state
                w.write(contract.SIM_EVENTS, 'std_msgs/msg/String',
                        w.typestore.types['std_msgs/msg/String'](data=encode(record)),
                        w.log_offset_ns + ns - 1)
                follower.event(record)
            written = len(events)
            t = stamps.stamp_s(ns)
            w.step(t, state.q, state.v, np.r_[0.0, 0.0, state.tau_applied],
                   state.contact_forces)
            if follower.starts(ns) and restart:
                ctrl.reset()
            tau = np.asarray(ctrl.update(t, state.q, state.v, state.contact_forces))
            w.joint_command(t, ['hip', 'knee'], tau)
            w.controller_state(t, ['tau_hip', 'tau_knee', 'config_revision', 'episode'],
                               [tau[0], tau[1], 0.0, float(follower.episode)])
            if tick == RESET_AT:
                control.reset(sv.SCOPE_ALL)
            if tick == TELEPORT_AT:
                control.set_joint_state({'hip': (0.4, 0.0)})
            assert exchange.command(ns, b'c', tuple(tau.tolist()), 0.0) is ANSWER
            action, value = control.boundary(tuple(tau.tolist()))
            state = sim.step(value) if action == sc.STEP else value
            control.published()
    return events


@pytest.fixture(scope='module')
def episode_bag(tmp_path_factory):
    bag = tmp_path_factory.mktemp('episodes') / 'bag'
    return bag, recorded_run(bag)


def test_replay_restarts_the_controller_where_the_run_did(episode_bag):
    bag, events = episode_bag
    assert [e['event'] for e in events] == ['reset', 'joint_state']
    result = compare_with_controller(bag)
    assert result.compared == TICKS and result.unmatched_states == 0
    assert result.restarts == 2, result.summary()
    assert result.max_abs_nm == 0.0, result.summary()
    assert [e['event'] for e in result.simulator_events] == ['reset', 'joint_state']


def test_a_controller_that_keeps_its_memory_is_told_apart(tmp_path):
    """The same run without the restart: the replay (which restarts) finds the difference."""
    bag = tmp_path / 'bag'
    recorded_run(bag, restart=False)
    result = compare_with_controller(bag)
    assert result.max_abs_nm > 1e-3, result.summary()
