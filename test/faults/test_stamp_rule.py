# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
One stamp rule (:mod:`dodo_sim.stamps`): the rollout, the simulator node and replay agree.

A ROS run, its offline rollout and ``dodo replay --through-controller`` reproduce each other bit
for bit only if all three hand the control law the same float for the same state. The test runs
each path on the same states and compares, on times where another rounding (truncation,
``/ 1e9``) would give another float — so re-inlining a different rule fails here.
"""
from pathlib import Path
import re
from types import SimpleNamespace

from conftest import REPO
from dodo_sim import stamps
from dodo_sim.simulator import SimConfig, Simulator
import numpy as np
import pytest

STEPS = 2000
JOINTS = ('base_x', 'base_z', 'hip', 'knee')


class Recording:
    """A policy that answers zero torque and keeps every t it is handed."""

    contact_frames = ('foot',)

    def __init__(self):
        self.times = []

    def update(self, t, q, v, contact):
        self.times.append(t)
        return np.zeros(2)


@pytest.fixture(scope='module')
def run(urdf_path):
    from dodo_sim.rollout import rollout
    policy = Recording()
    sim = Simulator(urdf_path, SimConfig(initial_q=(0.0, 1.3, 0.3, -0.6)))
    return rollout(sim, policy, steps=STEPS), policy.times


def test_the_sampled_times_tell_the_rules_apart(run):
    states, _ = run
    truncated = sum(int(t * 1e9) != stamps.stamp_ns(t) for t in states.t)
    divided = sum(stamps.stamp_ns(t) / 1e9 != stamps.controller_time(t) for t in states.t)
    assert truncated > 10 and divided > 10, (truncated, divided)


def test_the_rollout_hands_the_controller_the_stamp_rule_time(run):
    states, times = run
    assert times == [stamps.controller_time(t) for t in states.t[:-1]]


def test_the_simulator_node_stamps_states_by_the_rule(run, urdf_path):
    """The node's published stamp of each state is stamps.stamp_ns of its time."""
    import rclpy
    from conftest import ros_domain_id
    from dodo_sim.ros.simulator_node import SimulatorNode
    from rclpy.parameter import Parameter

    context = rclpy.Context()
    rclpy.init(context=context, domain_id=ros_domain_id())
    node = SimulatorNode(context=context, parameter_overrides=[
        Parameter('initial_q', value=[0.0, 1.3, 0.3, -0.6])])
    try:
        states, _ = run
        published = []
        for k in range(300):
            state = node.sim.state if k == 0 else node.sim.step(np.zeros(2))
            node._publish_state(state)           # what the node does with every state
            published.append(node.exchange.newest_ns)
        assert published == [stamps.stamp_ns(t) for t in states.t[:300]]
    finally:
        node.destroy_node()
        rclpy.try_shutdown(context=context)


def test_replay_hands_the_controller_the_stamp_rule_time(run):
    from dodo_sim.tools.bag_arrays import JointStates
    from dodo_sim.tools.replay_check import _Inputs

    states, times = run
    ns = np.array([stamps.stamp_ns(t) for t in states.t], dtype=np.int64)
    js = JointStates(names=JOINTS, t=states.t, stamp_ns=ns, log_time_ns=ns,
                     q=states.q, v=states.v, effort=np.zeros_like(states.q))

    def wrench(k):
        sec, nanosec = stamps.sec_nanosec(int(ns[k]))
        force = SimpleNamespace(x=0.0, y=0.0, z=0.0)
        return SimpleNamespace(header=SimpleNamespace(stamp=SimpleNamespace(
            sec=sec, nanosec=nanosec), frame_id='foot_contact'),
            wrench=SimpleNamespace(force=force))

    contacts = SimpleNamespace(messages=[wrench(k) for k in range(len(ns))], log_time_ns=ns)
    policy = Recording()
    _Inputs({'foot_contact': contacts}, js, ('foot',), True).run(policy, ns[:-1])
    assert policy.times == times


#: Modules that turn simulated time into stamps or stamps into the controller's time: they call
#: dodo_sim.stamps, never an inlined rounding of their own.
STAMP_USERS = ('dodo_sim/rollout.py', 'dodo_sim/ros/simulator_node.py',
               'dodo_sim/ros/controller_node.py', 'dodo_sim/ros/exchange.py',
               'dodo_sim/ros/state_merge.py', 'dodo_sim/tools/replay_check.py',
               'dodo_sim/tools/bag_writer.py')


@pytest.mark.parametrize('module', STAMP_USERS)
def test_no_module_inlines_a_stamp_rule_of_its_own(module):
    source = Path(REPO, module).read_text()
    inlined = re.findall(r'.*(?:\b1e9\b|\b1e-9\b|1_000_000_000|\bNS_PER_S\s*\)).*', source)
    assert inlined == [], f'{module}: use dodo_sim.stamps: {inlined}'
