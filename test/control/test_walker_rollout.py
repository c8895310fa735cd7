# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
The closed-loop runner gives a policy its declared contact frames.

A policy that declares ``contact_frames`` gets the matching rows of the state's per-frame contact
forces (docs/walker.md); other policies keep the single-foot force.
"""
from conftest import REPO
from dodo_sim.rollout import rollout
from dodo_sim.simulator import SimConfig, Simulator
import numpy as np
import pytest

WALKER = REPO / 'urdf' / 'kneed_walker.urdf.xacro'


class _Recorder:
    """Zero-torque policy that keeps what it was given."""

    def __init__(self, contact_frames=None, n_tau=4):
        if contact_frames is not None:
            self.contact_frames = contact_frames
        self.n_tau = n_tau
        self.seen = []

    def update(self, t, q, v, contact_forces):
        self.seen.append(np.array(contact_forces, copy=True))
        return np.array([0.0, -5.0, 0.0, -5.0][:self.n_tau])


def _walker_sim():
    return Simulator(WALKER, SimConfig(contact_frames=('left_foot', 'right_foot')))


def test_policy_gets_its_frames_rows_in_its_own_order():
    sim = _walker_sim()
    policy = _Recorder(contact_frames=('right_foot', 'left_foot'))
    run = rollout(sim, policy, steps=50, keep_states=True)
    assert len(policy.seen) == 50
    for seen, state in zip(policy.seen, run.states):
        assert seen.shape == (2, 3)
        np.testing.assert_array_equal(seen[0], state.contact_forces[1])   # right_foot row
        np.testing.assert_array_equal(seen[1], state.contact_forces[0])
    # both feet carry the weight while standing, so the rows are real measurements
    assert policy.seen[-1][:, 2].sum() == pytest.approx(sim.robot.total_mass * 9.81, rel=1e-3)


def test_run_records_every_frames_force_rows():
    sim = _walker_sim()
    run = rollout(sim, _Recorder(contact_frames=('left_foot', 'right_foot')), steps=20,
                  keep_states=True)
    assert run.contact_forces.shape == (21, 2, 3)
    np.testing.assert_array_equal(run.contact_forces[-1], run.states[-1].contact_forces)


def test_policy_without_contact_frames_keeps_the_single_foot_force():
    sim = _walker_sim()
    policy = _Recorder()
    run = rollout(sim, policy, steps=10, keep_states=True)
    for seen, state in zip(policy.seen, run.states):
        np.testing.assert_array_equal(seen, state.contact_force)
        assert seen.shape == (2,)


def test_unknown_policy_frame_is_named():
    with pytest.raises(ValueError, match='toe'):
        rollout(_walker_sim(), _Recorder(contact_frames=('left_foot', 'toe')), steps=1)


def test_hopper_policy_input_is_unchanged(urdf_path):
    """
    The hopper (one frame 'foot') and its controllers see the [fx, fz] single-foot force.

    It is the state's field, bit for bit.
    """
    sim = Simulator(urdf_path, SimConfig(initial_q=(0.0, 1.1, 0.3, -0.6)))
    policy = _Recorder(n_tau=2)
    run = rollout(sim, policy, steps=1000, keep_states=True)
    assert any(s.in_contact for s in run.states)       # the foot landed during the run
    for seen, state in zip(policy.seen, run.states):
        np.testing.assert_array_equal(seen, np.asarray(state.contact_force, dtype=float))
