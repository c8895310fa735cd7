# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
The controller's task frames (docs/control.md, "Task frame").

The boom leg's tangent-plane terms against pinocchio and finite differences, its SLIP template
against an independent reduced model, the stance and flight laws on the boom, and the hopper's
torques unchanged by the generalisation (against the constrained dynamics written out here, 1e-9).
No simulator.
"""
import math

from conftest import REPO
from dodo_control.controller import Controller
from dodo_control.slip.boom import BoomDynamics
from dodo_control.slip.dynamics import RobotDynamics, SELECTION
from dodo_control.slip.stance import (flight_foot_torque, flight_foot_torque_tick, slip_torque,
                                      slip_torque_tick, support_projection)
from dodo_control.slip.task_frame import load_dynamics
from dodo_sim.model import load_leg_model, ModelError
import numpy as np
import pinocchio as pin
import pytest

BOOM = REPO / 'urdf' / 'boom_leg.urdf.xacro'
WALKER = REPO / 'urdf' / 'kneed_walker.urdf.xacro'
OTHER_BOOM = {'boom_radius_m': 0.6, 'boom_offset_m': 0.0, 'thigh_mass_kg': 1.0}


@pytest.fixture(scope='module', params=['default', 'other'])
def boom(request):
    robot, dyn = load_dynamics(BOOM, OTHER_BOOM if request.param == 'other' else None)
    return dyn


def _boom_states(n, seed):
    rng = np.random.default_rng(seed)
    for _ in range(n):
        q = np.array([rng.uniform(-4.0, 4.0), rng.uniform(-0.4, 0.2), rng.uniform(-1.6, 0.2),
                      rng.uniform(0.4, 2.4)])
        yield q, rng.normal(size=4)


def _task(dyn, q):
    """Task coordinates (s, z) of hip and foot, written out from world positions."""
    model, data = dyn.model, dyn.model.createData()
    pin.forwardKinematics(model, data, q)
    pin.updateFramePlacements(model, data)
    hip = data.oMi[model.getJointId('hip')].translation
    foot = data.oMf[model.getFrameId('foot')].translation
    psi = q[0]
    t = np.array([-math.sin(psi), math.cos(psi), 0.0])
    axis = data.oMi[model.getJointId('boom_yaw')].translation
    out = []
    for p in (hip, foot):
        out.append(np.array([dyn.radius_m * psi + t @ (p - axis) - dyn.offset_m, p[2]]))
    return out


def test_the_task_frame_is_chosen_from_the_joints(urdf_path):
    hopper_model, hopper = load_dynamics(urdf_path)
    assert type(hopper) is RobotDynamics and hopper.frame == 'planar_xz'
    _, boom = load_dynamics(BOOM)
    assert isinstance(boom, BoomDynamics) and boom.frame == 'boom'
    assert boom.joint_names == ('boom_yaw', 'boom_pitch', 'hip', 'knee')
    with pytest.raises(ModelError, match='left_hip'):
        load_dynamics(WALKER)
    assert Controller(BOOM).task_frame == 'boom'
    assert Controller(urdf_path).joint_names == ('base_x', 'base_z', 'hip', 'knee')


def test_hip_arc_coordinate_and_foot_offset(boom):
    for q, _ in _boom_states(4, seed=1):
        com, foot = boom.com_and_foot(q)
        hip_ref, foot_ref = _task(boom, q)
        assert com[0] == pytest.approx(boom.radius_m * q[0], abs=1e-12)   # s = R yaw
        np.testing.assert_allclose(com, hip_ref, atol=1e-12)
        np.testing.assert_allclose(foot, foot_ref, atol=1e-12)
        assert boom.base_height(q) == pytest.approx(com[1], abs=1e-12)
        hip_w, foot_w = boom.world_points(q)
        assert hip_w[2] == pytest.approx(com[1], abs=1e-12)
        assert foot_w[2] == pytest.approx(foot[1], abs=1e-12)
        t = np.array([-math.sin(q[0]), math.cos(q[0]), 0.0])
        assert t @ (foot_w - hip_w) == pytest.approx(foot[0] - com[0], abs=1e-12)


def test_boom_jacobians_and_drifts_match_finite_differences(boom):
    eps = 1e-5
    for q, v in _boom_states(5, seed=2):
        terms = boom.terms(q, v)
        hip_p, foot_p = _task(boom, q + eps * v)
        hip_m, foot_m = _task(boom, q - eps * v)
        hip_0, foot_0 = _task(boom, q)
        np.testing.assert_allclose(terms.com_vel, (hip_p - hip_m) / (2 * eps), atol=1e-8)
        np.testing.assert_allclose(terms.foot_vel, (foot_p - foot_m) / (2 * eps), atol=1e-8)
        # second derivative along q(t) = q + t v (q̈ = 0) is the drift J̇ q̇
        np.testing.assert_allclose(terms.dJc_v, (hip_p - 2 * hip_0 + hip_m) / eps**2, atol=2e-4)
        np.testing.assert_allclose(terms.dJf_v, (foot_p - 2 * foot_0 + foot_m) / eps**2,
                                   atol=2e-4)
        # support rows: the foot's world tangential and vertical acceleration at this instant
        model, data = boom.model, boom.model.createData()
        pin.forwardKinematics(model, data, q, v, np.zeros(4))
        pin.updateFramePlacements(model, data)
        acc = pin.getFrameClassicalAcceleration(model, data, model.getFrameId('foot'),
                                                pin.LOCAL_WORLD_ALIGNED).linear
        jac = pin.computeFrameJacobian(model, data, q, model.getFrameId('foot'),
                                       pin.LOCAL_WORLD_ALIGNED)[:3]
        t = np.array([-math.sin(q[0]), math.cos(q[0]), 0.0])
        np.testing.assert_allclose(terms.Js, np.vstack([t @ jac, jac[2]]), atol=1e-12)
        np.testing.assert_allclose(terms.dJs_v, [t @ acc, acc[2]], atol=1e-12)


def test_boom_tick_terms_equal_the_full_terms(boom):
    for q, v in _boom_states(5, seed=3):
        terms, tt = boom.terms(q, v), boom.tick_terms(q, v)
        for name in ('com', 'com_vel', 'foot', 'foot_vel', 'Jc', 'Js', 'Jf', 'Minv', 'dJc_v',
                     'dJs_v', 'dJf_v'):
            np.testing.assert_allclose(np.array(getattr(tt, name)), getattr(terms, name),
                                       rtol=1e-12, atol=1e-12, err_msg=name)
        np.testing.assert_allclose(tt.Minv_h, terms.Minv @ terms.h, rtol=1e-12, atol=1e-12)
        a = np.array([1.5, 20.0])
        np.testing.assert_allclose(slip_torque_tick(tt.values, *a), slip_torque(terms, a),
                                   atol=1e-9)
        np.testing.assert_allclose(flight_foot_torque_tick(tt.values, *a),
                                   flight_foot_torque(terms, a),
                                   atol=1e-9)


def test_slip_template_is_the_hips_effective_mass_and_gravity(boom):
    """
    Against a reduced model with the leg joints locked.

    The hip's acceleration under gravity alone is g_eff, a unit vertical force at the hip adds
    1/m_eff (cross terms below 2 %).
    """
    q_ref = np.concatenate(([0.0, 0.0], boom.leg.default_q[2:]))
    reduced = pin.buildReducedModel(boom.model, [boom.model.getJointId('hip'),
                                                 boom.model.getJointId('knee')], q_ref)
    data = reduced.createData()
    hip_frame = reduced.getFrameId('hip')
    q2, zero = np.zeros(2), np.zeros(2)

    def hip_vertical_acceleration(force_z):
        jac = pin.computeFrameJacobian(reduced, data, q2, hip_frame, pin.LOCAL_WORLD_ALIGNED)
        qdd = pin.aba(reduced, data, q2, zero, jac[:3].T @ np.array([0.0, 0.0, force_z]))
        return float((jac[:3] @ qdd)[2])

    assert boom.gravity_xz[1] == pytest.approx(hip_vertical_acceleration(0.0), rel=1e-9)
    assert boom.gravity_xz[0] == 0.0
    unit = hip_vertical_acceleration(1.0) - hip_vertical_acceleration(0.0)
    assert boom.mass == pytest.approx(1.0 / unit, rel=0.02)
    assert boom.weight == pytest.approx(boom.mass * abs(boom.gravity_xz[1]))
    assert boom.mass < pin.computeTotalMass(boom.model)


def _kkt(terms, tau):
    M, Js = terms.M, terms.Js
    kkt = np.block([[M, -Js.T], [Js, np.zeros((2, 2))]])
    rhs = np.concatenate([SELECTION.T @ tau - terms.h, -terms.dJs_v])
    return np.linalg.solve(kkt, rhs)[:4]


def test_boom_stance_law_gives_the_commanded_hip_acceleration(boom):
    """
    The boom stance law gives the commanded hip acceleration.

    With the foot held tangentially and vertically (the support rows) and the radial direction free
    (Ding & Ramos' constraint), the achieved task acceleration of the hip is the command.
    """
    rng = np.random.default_rng(4)
    for q, v in _boom_states(6, seed=5):
        terms = boom.terms(q, v)
        v = support_projection(terms).N_s @ v           # foot at rest in the support rows
        terms = boom.terms(q, v)
        a = rng.normal(scale=15.0, size=2)
        tau = np.array(slip_torque_tick(boom.tick_terms(q, v).values, *a))
        qdd = _kkt(terms, tau)
        np.testing.assert_allclose(terms.Jc @ qdd + terms.dJc_v, a, atol=1e-9)


def test_boom_flight_law_gives_the_commanded_relative_foot_acceleration(boom):
    rng = np.random.default_rng(6)
    for q, v in _boom_states(6, seed=7):
        terms = boom.terms(q, v)
        a = rng.normal(scale=50.0, size=2)
        tau = np.array(flight_foot_torque_tick(boom.tick_terms(q, v).values, *a))
        qdd = terms.Minv @ (SELECTION.T @ tau - terms.h)
        rel = (terms.Jf - terms.Jc) @ qdd + terms.dJf_v - terms.dJc_v
        np.testing.assert_allclose(rel, a, atol=1e-9)


def test_boom_posture_ik_and_table_configuration(boom):
    q_guess = np.concatenate(([0.0, 0.0], boom.leg.default_q[2:]))
    table_q = boom.table_q(q_guess, 0.2)
    assert boom.base_height(table_q) == pytest.approx(0.2, abs=1e-9)
    target = np.array([0.03, -0.19])
    legs = boom.posture_for_foot(target, table_q)
    com, foot = boom.com_and_foot(np.concatenate((table_q[:2], legs)))
    np.testing.assert_allclose(foot - com, target, atol=1e-9)
    with pytest.raises(ValueError, match='hip'):
        boom.posture_for_foot([0.0, -0.5], table_q)


# -- the hopper: torques unchanged by the task-frame generalisation ---------------------------

def _hopper_states(n, seed):
    rng = np.random.default_rng(seed)
    for _ in range(n):
        yield (np.array([rng.uniform(-1, 1), rng.uniform(0.6, 1.2), rng.uniform(-0.8, 0.8),
                         rng.uniform(-2.0, -0.3)]), rng.normal(size=4))


def _reference_hopper_torques(model, q, v, accel, flight_accel):
    """
    Return the hopper's stance and flight laws written out with pinocchio only.

    They use the world x-z rows of the CoG and foot jacobians and the constrained and free
    dynamics, as the controller had them before the task frame: stance τ with J_c q̈ + J̇_c q̇ = a
    under the foot constraint; flight τ with (J_s − J_c) q̈ + (J̇_s − J̇_c) q̇ = a_rel.
    """
    data = model.createData()
    fid = model.getFrameId('foot')
    xz = [0, 2]
    pin.centerOfMass(model, data, q, v, np.zeros(4))
    dJc_v = data.acom[0][xz]
    pin.updateFramePlacements(model, data)
    dJs_v = pin.getFrameClassicalAcceleration(model, data, fid, pin.LOCAL_WORLD_ALIGNED).linear[xz]
    Jc = pin.jacobianCenterOfMass(model, data, q)[xz]
    Js = pin.computeFrameJacobian(model, data, q, fid, pin.LOCAL_WORLD_ALIGNED)[xz]
    M = pin.crba(model, data, q)
    M = np.triu(M) + np.triu(M, 1).T
    h = pin.nonLinearEffects(model, data, q, v)
    kkt = np.block([[M, -Js.T], [Js, np.zeros((2, 2))]])
    # q̈ = Q τ + r under the constraint; columns of Q by superposition
    r = np.linalg.solve(kkt, np.concatenate([-h, -dJs_v]))[:4]
    Q = np.column_stack([np.linalg.solve(kkt, np.concatenate([SELECTION.T[:, j], np.zeros(2)]))[:4]
                         for j in range(2)])
    stance = np.linalg.solve(Jc @ Q, accel - dJc_v - Jc @ r)
    Jr = Js - Jc
    Minv = np.linalg.inv(M)
    flight = np.linalg.solve(Jr @ Minv @ SELECTION.T,
                             flight_accel - (dJs_v - dJc_v) + Jr @ Minv @ h)
    return stance, flight


@pytest.mark.parametrize('xacro_args', [None, {'body_mass': 8.0, 'thigh_length': 0.4}])
def test_hopper_torques_are_unchanged_by_the_task_frame(urdf_path, xacro_args):
    leg, dyn = load_dynamics(urdf_path, xacro_args)
    assert type(dyn) is RobotDynamics
    plain = RobotDynamics(load_leg_model(urdf_path, xacro_args))
    rng = np.random.default_rng(8)
    for q, v in _hopper_states(10, seed=9):
        a, b = rng.normal(scale=20.0, size=2), rng.normal(scale=20.0, size=2)
        tt = dyn.tick_terms(q, v)
        stance = np.array(slip_torque_tick(tt.values, *a))
        flight = np.array(flight_foot_torque_tick(tt.values, *b))
        ref_stance, ref_flight = _reference_hopper_torques(leg.model, q, v, a, b)
        np.testing.assert_allclose(stance, ref_stance, rtol=1e-9, atol=1e-9)
        np.testing.assert_allclose(flight, ref_flight, rtol=1e-9, atol=1e-9)
        # and the hopper's terms are the plain hopper model's, bit for bit
        ref = plain.tick_terms(q, v)
        for name in ('com', 'com_vel', 'foot', 'foot_vel', 'Jc', 'Js', 'Minv', 'Minv_h',
                     'dJc_v', 'dJs_v'):
            assert getattr(tt, name) == getattr(ref, name), name
        assert tt.Jf == tt.Js and tt.dJf_v == tt.dJs_v      # the foot task rows: J_s
