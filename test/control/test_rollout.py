# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
dodo_sim.rollout against a plain hand-written closed loop over sim.step / policy.update.

It also checks the compiled controller terms against the pinocchio ones in a closed loop.
"""
from dodo_control.controller import Controller, ControllerConfig
from dodo_sim.rollout import rollout
from dodo_sim.simulator import SimConfig, Simulator
from dodo_sim.stamps import stamp_ns
import numpy as np
import pytest

INITIAL_Q = (0.0, 1.2, 0.3, -0.6)


def _pair(urdf_path, compiled=True, **sim_args):
    sim = Simulator(urdf_path, SimConfig(initial_q=INITIAL_Q, **sim_args))
    ctrl = Controller(urdf_path, ControllerConfig())
    ctrl.dyn.use_compiled(compiled)
    return sim, ctrl


def _hand_loop(sim, ctrl, steps):
    """
    Return the closed loop written out.

    Each tick records the state, commands from the stamped time and the foot's contact row, and
    steps.
    """
    state = sim.state
    t, q, v, force, contact, forces, taus = [], [], [], [], [], [], []
    for k in range(steps + 1):
        t.append(state.t)
        q.append(state.q.copy())
        v.append(state.v.copy())
        force.append(np.array(state.contact_force))
        contact.append(bool(state.in_contact))
        forces.append(np.array(state.contact_forces))
        if k == steps:
            break
        tau = ctrl.update(stamp_ns(state.t) * 1e-9, state.q.copy(), state.v.copy(),
                          np.array(state.contact_forces[[0]]))
        taus.append(np.array(tau))
        state = sim.step(tau)
    return {'t': np.array(t), 'q': np.array(q), 'v': np.array(v), 'tau': np.array(taus),
            'contact_force': np.array(force), 'in_contact': np.array(contact),
            'contact_forces': np.array(forces)}


@pytest.mark.parametrize('integrator', ['timestepping', 'event'])
def test_rollout_equals_a_hand_written_loop_bit_for_bit(urdf_path, integrator):
    steps = 2000                      # 2 s at the 1 ms control period: several hops
    run = rollout(*_pair(urdf_path, integrator=integrator), steps=steps)
    ref = _hand_loop(*_pair(urdf_path, integrator=integrator), steps)
    assert run.in_contact.any() and not run.in_contact.all()   # flight and stance ticks
    for name, expected in ref.items():
        np.testing.assert_array_equal(getattr(run, name), expected, err_msg=name)


def test_compiled_controller_terms_keep_the_closed_loop(urdf_path):
    """
    The compiled tick terms equal the pinocchio ones to rounding (test_controller_core).

    In a 2 s closed loop the rounding stays at rounding level (same contact ticks).
    """
    compiled = rollout(*_pair(urdf_path, compiled=True), steps=2000)
    reference = rollout(*_pair(urdf_path, compiled=False), steps=2000)
    np.testing.assert_array_equal(compiled.in_contact, reference.in_contact)
    np.testing.assert_allclose(compiled.q, reference.q, rtol=0, atol=1e-12)
    np.testing.assert_allclose(compiled.tau, reference.tau, rtol=0, atol=1e-9)


@pytest.mark.parametrize('frames', [('left_foot', 'right_foot'), ('right_foot',),
                                    ('right_foot', 'left_foot')])
def test_policy_rows_in_order_out_of_order_and_single(frames):
    """
    Consecutive rows and other orders give the same rollout.

    Consecutive rows are read as a slice, other orders by fancy indexing; either way the policy
    gets the rows of its frames, as fresh float arrays.
    """
    from pathlib import Path
    walker = Path(__file__).resolve().parents[2] / 'urdf' / 'kneed_walker.urdf.xacro'
    sim = Simulator(walker, SimConfig(contact_frames=('left_foot', 'right_foot')))
    index = [sim.contact_frames.index(f) for f in frames]

    class Recorder:
        contact_frames = frames
        seen = []

        def update(self, t, q, v, contact_forces):
            self.seen.append(contact_forces)
            return np.array([0.0, -5.0, 0.0, -5.0])

    policy = Recorder()
    run = rollout(sim, policy, steps=30, keep_states=True)
    for seen, state in zip(policy.seen, run.states):
        assert seen.dtype == np.float64 and not np.shares_memory(seen, state.contact_forces)
        np.testing.assert_array_equal(seen, state.contact_forces[index])
    assert policy.seen[-1][:, 2].sum() > 0.0       # standing: the rows carry the weight


def test_a_policy_naming_its_joints_gets_them_in_its_order_as_the_node_gives_them(urdf_path):
    """
    The policy gets q and v in its ``joint_names`` order, 1-DoF joints only (/joint_states).

    A joint the simulator lacks is refused naming it.
    """
    sim = Simulator(urdf_path, SimConfig(initial_q=INITIAL_Q))

    class Recorder:
        joint_names = ('knee', 'hip', 'base_z')
        seen = []

        def update(self, t, q, v, contact_force):
            self.seen.append((q, v))
            return np.zeros(2)

    policy = Recorder()
    run = rollout(sim, policy, steps=20, keep_states=True)
    for (q, v), state in zip(policy.seen, run.states):
        np.testing.assert_array_equal(q, state.q[[3, 2, 1]])
        np.testing.assert_array_equal(v, state.v[[3, 2, 1]])
        assert not np.shares_memory(q, state.q)
    Recorder.joint_names = ('knee', 'ankle')
    with pytest.raises(ValueError, match=r"\['ankle'\].*base_x"):
        rollout(sim, Recorder(), steps=1)
