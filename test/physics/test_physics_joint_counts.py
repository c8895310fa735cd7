# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
Any number of joints (issue 14 item 2).

A 1-DoF pendulum, a 2-DoF and a 4-DoF chain and a 3-joint tree go through the compiled kernels
(dodo_sim/physics/fast.py) as through pinocchio, and both integrators swing them as the analytic
pendulum does. A 1-DoF model used to raise IndexError in fast._joint_arrays (pinocchio returns a
1-D jacobian for a single column).
"""
import math

from dodo_sim.physics import fast
from dodo_sim.physics.contact import ContactParams
from dodo_sim.physics.timestepping import MoreauJeanIntegrator, TimeSteppingParams
from dodo_sim.simulator import SimConfig, Simulator
import numpy as np
from physics_models import planar_chain, planar_tree
import pinocchio as pin
import pytest

pytest.importorskip('numba')

MODELS = {
    '1-dof': (planar_chain(1, hinge_z=0.4), ('tip',)),
    '2-dof': (planar_chain(2), ('tip',)),
    '4-dof chain': (planar_chain(4), ('tip',)),
    '3-joint tree': (planar_tree(), ('left_tip', 'right_tip')),
}
# the same sizes hung 0.1 m lower than their reach, with a start pose (rad) above the ground:
# swung down, a tip hits the ground
IMPACTS = {
    '1-dof': (planar_chain(1, hinge_z=0.4), ('tip',), (1.2,)),
    '2-dof': (planar_chain(2, hinge_z=0.9), ('tip',), (1.2, 0.0)),
    '4-dof chain': (planar_chain(4, hinge_z=1.9), ('tip',), (1.2, 0.0, 0.0, 0.0)),
    '3-joint tree': (planar_tree(hinge_z=0.9), ('left_tip', 'right_tip'), (1.2, 0.0, 0.3)),
}


@pytest.mark.parametrize('name', MODELS)
def test_compiled_dynamics_equal_pinocchio(name):
    xml, frames = MODELS[name]
    sim = Simulator(xml, SimConfig(contact_frames=frames))
    packed = sim.integrator.packed
    assert packed is not None  # the compiled step covers it
    model, data = sim.robot.model, sim.robot.create_data()
    rng = np.random.default_rng(1)
    for _ in range(10):
        q = rng.normal(size=model.nq)
        v = rng.normal(size=model.nv) * 3.0
        mass, bias = fast.dynamics(packed, q, v)
        reference = pin.crba(model, data, q)
        reference = np.triu(reference) + np.triu(reference, 1).T
        np.testing.assert_allclose(mass, reference, rtol=0, atol=1e-12)
        np.testing.assert_allclose(bias, pin.rnea(model, data, q, v, np.zeros(model.nv)),
                                   rtol=0, atol=1e-11)


@pytest.mark.parametrize('name', IMPACTS)
def test_compiled_step_equals_the_generic_step_through_a_ground_impact(name):
    """
    Swung down from the side, a tip hits the ground.

    Slides or sticks and the chain comes to rest on it (a 1-DoF tip's contact block is rank 1).
    """
    xml, frames, q0 = IMPACTS[name]
    sim = Simulator(xml, SimConfig(contact_frames=frames))
    params = ContactParams(friction=0.5)
    generic = MoreauJeanIntegrator(sim.robot, sim.terrain, params,
                                   TimeSteppingParams(compiled=False))
    compiled = MoreauJeanIntegrator(sim.robot, sim.terrain, params, TimeSteppingParams())
    assert generic.packed is None and compiled.packed is not None
    nv = sim.robot.nv
    q0 = np.array(q0)
    v0 = np.zeros(nv)
    v0[0] = -4.0
    tau = np.zeros(nv)
    qa, va, qb, vb = q0, v0, q0, v0
    touched = False
    for _ in range(400):
        qa, va, ra = generic.step(qa, va, tau, 1e-3)
        qb, vb, rb = compiled.step(qb, vb, tau, 1e-3)
        touched |= any(ra.in_contact)
        np.testing.assert_allclose(qb, qa, rtol=0, atol=1e-9)
        np.testing.assert_allclose(vb, va, rtol=0, atol=1e-7)
        assert ra.in_contact == rb.in_contact
    assert touched


@pytest.mark.parametrize('integrator', ['timestepping', 'event'])
def test_a_one_dof_pendulum_swings_at_the_analytic_period(integrator):
    """
    Small swing of a rod pinned at its end.

    T = 2 pi sqrt(I_pivot / (m g d)) with I_pivot = m L^2 / 3, d = L / 2 (amplitude 0.01 rad: the
    finite-amplitude correction theta0^2 / 16 = 6e-6 is far below the 1e-3 tolerance).
    """
    length, g = 0.5, 9.81
    period = 2.0 * math.pi * math.sqrt((length ** 2 / 3.0) / (g * length / 2.0))
    sim = Simulator(planar_chain(1, link_length=length),
                    SimConfig(integrator=integrator, contact_frames=(), initial_q=(0.01,)))
    assert sim.robot.nq == 1 and sim.robot.actuated_joint_names == ('hinge0',)
    crossings = []
    previous = sim.state.q[0]
    for k in range(1, int(2.2 * period / 1e-3)):
        angle = sim.step([0.0]).q[0]
        if previous > 0.0 >= angle:  # downward zero crossings, one per period
            crossings.append((k - 1 + previous / (previous - angle)) * 1e-3)
        previous = angle
    assert len(crossings) == 2
    assert crossings[1] - crossings[0] == pytest.approx(period, rel=1e-3)
