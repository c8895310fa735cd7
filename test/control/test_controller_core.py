# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
Unit tests of the SLIP controller core.

They cover model terms, stance identity, impact projection, flight posture law, SLIP return map,
deadbeat, phase machine and config. No simulator needed.
"""
import math

from dodo_control.controller import Controller
from dodo_control.slip.config import ControllerConfig, FLIGHT_POLICIES
from dodo_control.slip.dynamics import RobotDynamics, SELECTION
from dodo_control.slip.flight import (critically_damped_lead, foot_target, PositionLoop,
                                      posture_acceleration, raibert_angle, VelocityLoop)
from dodo_control.slip.phase import FLIGHT, PhaseMachine, PhaseParams, STANCE
from dodo_control.slip.stance import (flight_foot_torque, flight_foot_torque_tick,
                                      impact_energy_loss, impact_velocity, slip_torque,
                                      slip_torque_osc, slip_torque_tick,
                                      support_consistent_acceleration, support_projection)
from dodo_control.slip.template import (apex_return_map, deadbeat_angle, precompression,
                                        regulated_rest_length, slip_acceleration, stance_flow,
                                        StanceSpec, touchdown_rest_length)
from dodo_sim.model import load_leg_model
import numpy as np
import pinocchio as pin
import pytest

OTHER = {'body_mass': 8.0, 'thigh_length': 0.4, 'shank_length': 0.45}


@pytest.fixture(scope='module', params=['default', 'other'])
def dyn(request, urdf_path):
    leg = load_leg_model(urdf_path, OTHER if request.param == 'other' else None)
    return RobotDynamics(leg)


def _random_states(n, seed=0, stance=False, dyn=None):
    rng = np.random.default_rng(seed)
    for _ in range(n):
        q = np.array([rng.uniform(-1, 1), rng.uniform(0.6, 1.2), rng.uniform(-0.8, 0.8),
                      rng.uniform(-2.0, -0.3)])
        v = rng.normal(size=4)
        if stance:   # foot velocity zero: project onto the support nullspace
            terms = dyn.terms(q, v)
            v = support_projection(terms).N_s @ v
        yield q, v


def _kkt_acceleration(terms, tau):
    """q̈ of the leg with the foot held (independent of the support-consistent formula)."""
    M, Js = terms.M, terms.Js
    kkt = np.block([[M, -Js.T], [Js, np.zeros((2, 2))]])
    rhs = np.concatenate([SELECTION.T @ tau - terms.h, -terms.dJs_v])
    return np.linalg.solve(kkt, rhs)[:4]


# -- model terms ------------------------------------------------------------------------------

def test_terms_match_pinocchio_and_finite_differences(dyn):
    for q, v in _random_states(5, seed=1):
        terms = dyn.terms(q, v)
        np.testing.assert_allclose(terms.M, terms.M.T, atol=1e-12)
        np.testing.assert_allclose(terms.M @ terms.Minv, np.eye(4), atol=1e-9)
        eps = 1e-6
        for jac, drift, func in ((terms.Js, terms.dJs_v, lambda t: t.Js),
                                 (terms.Jc, terms.dJc_v, lambda t: t.Jc)):
            jp = func(dyn.terms(q + eps * v, v))
            jm = func(dyn.terms(q - eps * v, v))
            np.testing.assert_allclose((jp - jm) / (2 * eps) @ v, drift, atol=1e-6)
        # CoG velocity and position consistent with pinocchio directly
        data = dyn.model.createData()
        com = pin.centerOfMass(dyn.model, data, q, v)
        np.testing.assert_allclose(terms.com, com[[0, 2]], atol=1e-12)
        np.testing.assert_allclose(terms.com_vel, terms.Jc @ v, atol=1e-12)


def test_masses_and_lengths_come_from_the_urdf(urdf_path):
    default = Controller(urdf_path)
    other = Controller(urdf_path, xacro_args=OTHER)
    assert default.mass == pytest.approx(12.0, abs=1e-9)
    assert other.mass == pytest.approx(10.0, abs=1e-9)
    # stretched foot-to-CoG distance: hip-to-foot minus CoG depth below the hip
    depth = (1.0 * 0.2 + 1.0 * (0.4 + 0.225)) / 10.0
    assert other.stretched_length == pytest.approx(0.85 - depth, abs=1e-9)
    assert other.rest_length == pytest.approx(
        other.config.leg_rest_length_fraction * other.stretched_length, abs=1e-12)


def test_tick_terms_equal_the_full_terms(dyn):
    """The control tick's scalar fast path evaluates the same quantities as :meth:`terms`."""
    for q, v in _random_states(6, seed=11):
        terms, tt = dyn.terms(q, v), dyn.tick_terms(q, v)
        for name in ('com', 'com_vel', 'foot', 'Jc', 'Js', 'Minv', 'dJc_v', 'dJs_v'):
            np.testing.assert_allclose(np.array(getattr(tt, name)), getattr(terms, name),
                                       rtol=1e-12, atol=1e-12, err_msg=name)
        np.testing.assert_allclose(tt.foot_vel, terms.Js @ v, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(tt.Minv_h, terms.Minv @ terms.h, rtol=1e-12, atol=1e-12)


_TICK_FIELDS = ('com', 'com_vel', 'foot', 'foot_vel', 'Jc', 'Js', 'Minv', 'Minv_h', 'dJc_v',
                'dJs_v', 'Jf', 'dJf_v')


def _pinocchio_dynamics(leg):
    dyn = RobotDynamics(leg)
    assert not dyn.use_compiled(False)
    return dyn


def test_compiled_tick_terms_equal_the_pinocchio_ones(dyn):
    """
    The compiled kernel (default and mass-variant model) against the seven pinocchio calls.

    Both run on the controller's own model.
    """
    assert dyn.compiled
    reference = _pinocchio_dynamics(dyn.leg)
    for q, v in _random_states(20, seed=21):
        tt, ref = dyn.tick_terms(q, v), reference.tick_terms(q, v)
        for name in _TICK_FIELDS:
            np.testing.assert_allclose(np.array(getattr(tt, name)), np.array(getattr(ref, name)),
                                       rtol=1e-12, atol=1e-12, err_msg=name)


def test_compiled_tick_terms_follow_the_controllers_armature(urdf_path):
    """
    Controller.reconfigure writes the joint armature into the model: the compiled M^-1 sees it.

    That M^-1 differs from the one of the model without armature.
    """
    ctrl = Controller(urdf_path, ControllerConfig(joint_armature_kgm2=(0.02, 0.05)))
    assert ctrl.dyn.compiled
    reference = _pinocchio_dynamics(ctrl.leg)
    plain = RobotDynamics(load_leg_model(urdf_path))
    for q, v in _random_states(10, seed=22):
        tt, ref = ctrl.dyn.tick_terms(q, v), reference.tick_terms(q, v)
        for name in ('Minv', 'Minv_h'):
            np.testing.assert_allclose(np.array(getattr(tt, name)), np.array(getattr(ref, name)),
                                       rtol=1e-12, atol=1e-12, err_msg=name)
        assert abs(tt.Minv[3][3] - plain.tick_terms(q, v).Minv[3][3]) > 1e-3


def test_tick_terms_of_readonly_or_strided_arrays_compile_nothing_new(dyn):
    """
    Arrays the kernel was not compiled for take the plain path.

    Such arrays (read-only, strided) take the pinocchio path instead of compiling a new
    specialisation mid-run; same terms.
    """
    from dodo_sim.physics.kernels.point_terms import point_terms
    q, v = next(_random_states(1, seed=23))
    readonly_q = q.copy()
    readonly_q.flags.writeable = False
    strided_v = np.repeat(v, 2)[::2]
    expected = dyn.tick_terms(q, v)
    signatures = len(point_terms.signatures)
    tt = dyn.tick_terms(readonly_q, strided_v)
    assert len(point_terms.signatures) == signatures
    for name in _TICK_FIELDS:
        np.testing.assert_allclose(np.array(getattr(tt, name)),
                                   np.array(getattr(expected, name)), rtol=1e-12, atol=1e-12,
                                   err_msg=name)


def test_boom_leg_keeps_its_pinocchio_task_frame_terms():
    """
    The boom leg's task-frame terms are its own pinocchio evaluation.

    The compiled kernel is never switched on for it.
    """
    from pathlib import Path
    boom_urdf = Path(__file__).resolve().parents[2] / 'urdf' / 'boom_leg.urdf.xacro'
    ctrl = Controller(boom_urdf)
    assert ctrl.dyn.frame == 'boom'
    assert not ctrl.dyn.compiled and not ctrl.dyn.use_compiled(True)


def test_point_terms_refuse_a_model_they_do_not_cover(urdf_path):
    """
    A floating base (a 6-DoF joint) is not a chain of 1-DoF joints.

    There is therefore no packed kernel (the pinocchio path runs).
    """
    from dodo_sim.physics.kernels.point_terms import pack_point_terms
    from dodo_sim.physics.robot import robot_description_xml
    leg = load_leg_model(urdf_path)
    floating = pin.buildModelFromXML(robot_description_xml(urdf_path), pin.JointModelFreeFlyer())
    assert pack_point_terms(floating, floating.getFrameId('foot')) is None
    assert pack_point_terms(leg.model, leg.foot_frame_id) is not None


def test_tick_torques_equal_the_matrix_forms(dyn):
    rng = np.random.default_rng(12)
    for q, v in _random_states(8, seed=13):
        terms, tt = dyn.terms(q, v), dyn.tick_terms(q, v)
        a = rng.normal(scale=20.0, size=2)
        np.testing.assert_allclose(slip_torque_tick(tt.values, *a), slip_torque(terms, a),
                                   rtol=1e-9, atol=1e-9)
        np.testing.assert_allclose(flight_foot_torque_tick(tt.values, *a),
                                   flight_foot_torque(terms, a),
                                   rtol=1e-9, atol=1e-9)


# -- stance: support-consistent dynamics and the SLIP law -------------------------------------

def test_support_consistent_dynamics_equals_constrained_dynamics(dyn):
    rng = np.random.default_rng(2)
    for q, v in _random_states(6, seed=3, stance=True, dyn=dyn):
        terms = dyn.terms(q, v)
        tau = rng.normal(scale=50.0, size=2)
        np.testing.assert_allclose(support_consistent_acceleration(terms, tau),
                                   _kkt_acceleration(terms, tau), atol=1e-8)


def test_identity_cog_acceleration_equals_slip_acceleration(dyn):
    """Check docs/control.md: with an exact model the CoG acceleration is F_leg/m + g."""
    worst = 0.0
    for q, v in _random_states(8, seed=4, stance=True, dyn=dyn):
        terms = dyn.terms(q, v)
        (dx, dz), length = terms.com - terms.foot, float(np.linalg.norm(terms.com - terms.foot))
        a = np.array(slip_acceleration(dx, dz, length, 0.9 * length + 0.05, 5000.0, dyn.mass,
                                       *dyn.gravity))
        tau = slip_torque(terms, a)
        qdd = _kkt_acceleration(terms, tau)
        # CoG acceleration from pinocchio's own forward kinematics at (q, v, q̈)
        data = dyn.model.createData()
        pin.centerOfMass(dyn.model, data, q, v, qdd)
        achieved = data.acom[0][[0, 2]]
        worst = max(worst, float(np.max(np.abs(achieved - a))) / float(np.linalg.norm(a)))
    assert worst < 1e-9


def test_operational_space_form_equals_direct_solve(dyn):
    for q, v in _random_states(6, seed=5, stance=True, dyn=dyn):
        terms = dyn.terms(q, v)
        a = np.array([3.0, 25.0])
        np.testing.assert_allclose(slip_torque_osc(terms, a), slip_torque(terms, a),
                                   rtol=1e-8, atol=1e-8)


def test_slip_acceleration_is_the_spring_along_the_leg_plus_gravity():
    dx, dz = 0.2, 0.8                                   # r − p_f
    length = math.hypot(dx, dz)
    ax, az = slip_acceleration(dx, dz, length, length + 0.1, 4000.0, 12.0, 0.0, -9.81)
    # F_leg = k (l0 − l) along the leg, a = F_leg / m + g
    spring = np.array([ax, az + 9.81]) * 12.0
    assert spring @ np.array([dx, dz]) == pytest.approx(4000.0 * 0.1 * length, rel=1e-12)
    assert abs(spring[0] * dz - spring[1] * dx) < 1e-9     # parallel to the leg
    assert slip_acceleration(dx, dz, length, length, 4000.0, 12.0, 0.5, -9.81) == (0.5, -9.81)
    ax, az = slip_acceleration(dx, dz, length, length - 0.05, 4000.0, 12.0, 0.0, 0.0)
    assert ax < 0.0 and az < 0.0                        # stretched beyond rest: pulls


def test_regulated_rest_length_stores_the_missing_vertical_energy():
    k, m, g, lmax = 5000.0, 12.0, 9.81, 0.95
    length, height, vz, apex = 0.7, 0.6, 1.0, 0.8
    rest = regulated_rest_length(length, height, vz, apex, k, m, m * g, lmax)
    missing = m * g * (apex - height) - 0.5 * m * vz * vz            # E_v, J
    assert 0.5 * k * (rest - length) ** 2 == pytest.approx(missing, rel=1e-12)
    # at liftoff (l = l0') the spring is empty: z + ż²/2g = z_apex, the apex is met exactly
    vz_lo = math.sqrt(2.0 * g * (apex - height))
    assert regulated_rest_length(length, height, vz_lo, apex, k, m, m * g, lmax) == \
        pytest.approx(length, abs=1e-9)
    # more energy than needed: no stretch; never beyond the longest rest length
    assert regulated_rest_length(length, height, 3.0, apex, k, m, m * g, lmax) == length
    assert regulated_rest_length(length, 0.0, 0.0, 2.0, k, m, m * g, lmax) == lmax


def test_touchdown_rest_length_precompresses_by_the_impact_loss():
    rest = touchdown_rest_length(0.7, 7.5, 5000.0, 0.95)
    assert 0.5 * 5000.0 * (rest - 0.7) ** 2 == pytest.approx(7.5, rel=1e-12)
    assert touchdown_rest_length(0.7, 0.0, 5000.0, 0.95) == 0.7
    assert touchdown_rest_length(0.7, 1e4, 5000.0, 0.95) == 0.95


def test_posture_law_aims_the_foot_at_the_touchdown_point():
    tx, tz = foot_target(0.3, 0.8)                       # foot ahead of and below the CoG
    assert (tx, tz) == pytest.approx((0.8 * math.sin(0.3), -0.8 * math.cos(0.3)), rel=1e-15)
    assert math.atan2(tx, -tz) == pytest.approx(0.3, rel=1e-12)
    assert posture_acceleration(tx, tz, 0.0, 0.0, tx, tz, 400.0, 40.0) == (0.0, 0.0)
    ax, az = posture_acceleration(0.1, -0.7, 0.5, -1.0, 0.2, -0.8, 400.0, 40.0)
    assert (ax, az) == pytest.approx((400.0 * 0.1 - 40.0 * 0.5, -400.0 * 0.1 + 40.0 * 1.0))


# -- impact projection ------------------------------------------------------------------------

def test_impact_projection_identities(dyn):
    for q, v in _random_states(6, seed=6):
        terms = dyn.terms(q, v)
        proj = support_projection(terms)
        N = proj.N_s
        np.testing.assert_allclose(N @ N, N, atol=1e-10)                  # projector
        np.testing.assert_allclose(terms.Js @ N, 0.0, atol=1e-10)          # foot stops
        np.testing.assert_allclose(terms.M @ N, (terms.M @ N).T, atol=1e-10)  # M-orthogonal
        v_plus = impact_velocity(terms, v, proj)
        np.testing.assert_allclose(terms.Js @ v_plus, 0.0, atol=1e-10)
        # energy: the impact never creates kinetic energy; the SLIPic formula is the CoG loss
        ke = 0.5 * v @ terms.M @ v
        ke_plus = 0.5 * v_plus @ terms.M @ v_plus
        assert ke_plus <= ke + 1e-12
        loss = impact_energy_loss(terms, v, dyn.mass, proj)
        direct = 0.5 * dyn.mass * (np.sum((terms.Jc @ v) ** 2)
                                   - np.sum((terms.Jc @ v_plus) ** 2))
        assert loss == pytest.approx(direct, rel=1e-10, abs=1e-12)


def test_impact_projection_matches_the_simulators_impact_map(dyn):
    """The controller's N_s and the event integrator's sticking plastic impact agree."""
    from dodo_sim.physics.contact import ContactParams
    from dodo_sim.physics.event import impact_map
    contact = ContactParams(friction=100.0, restitution=0.0)
    for q, v in _random_states(4, seed=7):
        terms = dyn.terms(q, v)
        w = np.array([terms.Js[1], terms.Js[0]])      # flat ground: normal z, tangent x
        v_sim, _, _ = impact_map(terms.Minv, w, v, contact)
        np.testing.assert_allclose(impact_velocity(terms, v), v_sim, atol=1e-10)


def test_precompression_stores_the_impact_loss():
    dl = precompression(7.5, 5000.0)
    assert 0.5 * 5000.0 * dl ** 2 == pytest.approx(7.5, rel=1e-12)
    assert precompression(-1.0, 5000.0) == 0.0


# -- flight posture law -----------------------------------------------------------------------

def test_flight_torque_gives_the_commanded_relative_foot_acceleration(dyn):
    for q, v in _random_states(6, seed=8):
        terms = dyn.terms(q, v)
        want = np.array([12.0, -30.0])
        tau = flight_foot_torque(terms, want)
        qdd = pin.aba(dyn.model, dyn.model.createData(), q, v, SELECTION.T @ tau)
        got = (terms.Js - terms.Jc) @ qdd + terms.dJs_v - terms.dJc_v
        np.testing.assert_allclose(got, want, atol=1e-8)


def test_posture_ik_reaches_the_touchdown_point(dyn):
    target = foot_target(0.2, 0.7)
    joints = dyn.posture_for_foot(target, np.array([0.0, 1.0, 0.3, -0.6]))
    com, foot = dyn.com_and_foot(np.array([0.0, 1.0, joints[0], joints[1]]))
    np.testing.assert_allclose(foot - com, target, atol=1e-9)
    assert joints[1] < 0.0                    # knee branch of the guess kept
    with pytest.raises(ValueError):
        dyn.posture_for_foot(foot_target(0.0, 5.0), np.array([0.0, 1.0, 0.3, -0.6]))


# -- SLIP template ----------------------------------------------------------------------------

SPEC = {'stiffness': 5000.0, 'mass': 12.0, 'gravity_z': -9.81, 'max_rest_length': 0.95}


def test_conservative_slip_stance_conserves_energy_and_is_symmetric():
    spec = StanceSpec(regulate=False, apex_height_rel=0.0, step_s=0.001, **SPEC)
    alphas = np.array([-0.15, 0.0, 0.1, 0.2])
    apex, vx = apex_return_map(alphas, 1.1, 1.0, 0.8, spec, precompress=False)
    e0 = 12.0 * 9.81 * 1.1 + 0.5 * 12.0 * 1.0 ** 2
    e1 = 12.0 * 9.81 * apex + 0.5 * 12.0 * vx ** 2
    np.testing.assert_allclose(e1, e0, rtol=1e-6)
    # at zero speed: α = 0 keeps zero speed, ±α give opposite speeds
    _, vx0 = apex_return_map(np.array([-0.1, 0.0, 0.1]), 1.1, 0.0, 0.8, spec, precompress=False)
    assert abs(vx0[1]) < 1e-6
    assert vx0[0] == pytest.approx(-vx0[2], abs=1e-6)
    assert vx0[0] > 0.3                  # foot behind the CoG accelerates forward


def test_regulated_stance_reaches_the_apex_target_for_any_angle():
    spec = StanceSpec(regulate=True, apex_height_rel=1.12, step_s=0.002, **SPEC)
    for apex_vx in (0.0, 1.5):
        alphas = np.linspace(-0.1, 0.25, 6) + 0.1 * apex_vx
        apex, vx = apex_return_map(alphas, 1.05, apex_vx, 0.78, spec,
                                   impact_matrix=np.array([[0.97, 0.05], [0.02, 0.9]]))
        assert np.all(np.isfinite(vx))
        np.testing.assert_allclose(apex, 1.12, atol=1e-3)
        assert np.all(np.diff(vx) < 0.0)      # speed falls as the foot goes ahead


def test_stance_flow_reports_a_collapse_as_none():
    spec = StanceSpec(regulate=False, apex_height_rel=0.0, **{**SPEC, 'stiffness': 50.0})
    assert stance_flow(np.array([0.0, 0.8]), np.array([0.0, -3.0]), 0.8, spec) is None


def test_deadbeat_angle_hits_the_target_speed():
    spec = StanceSpec(regulate=True, apex_height_rel=1.12, step_s=0.002, **SPEC)
    impact = np.array([[0.95, 0.04], [0.01, 0.9]])
    for target, apex_vx in ((1.5, 0.0), (1.5, 1.4), (0.0, 1.0), (-0.5, 0.3)):
        alpha = deadbeat_angle(target, 1.12, apex_vx, 0.78, spec, 0.5, impact_matrix=impact,
                               tolerance_mps=1e-4)
        _, vx = apex_return_map([alpha], 1.12, apex_vx, 0.78, spec, impact_matrix=impact)
        assert vx[0] == pytest.approx(target, abs=2e-3)
    # out of reach: the closest bound
    assert deadbeat_angle(50.0, 1.12, 0.0, 0.78, spec, 0.5) == pytest.approx(-0.5)


# -- flight loops -----------------------------------------------------------------------------

def test_position_loop_saturates_with_anti_windup():
    loop = PositionLoop(kp=1.0, ki=0.5, max_speed=1.5)
    for _ in range(20):
        assert loop.update(4.0, 0.6) == pytest.approx(1.5)
    assert loop.integral == 0.0               # no windup while saturated
    assert loop.update(0.5, 0.6) == pytest.approx(0.5 + 0.5 * 0.3)
    banded = PositionLoop(kp=1.0, ki=0.5, max_speed=1.5, integral_band=0.1)
    banded.update(0.5, 0.6)
    assert banded.integral == 0.0             # integral separation far from the target
    assert banded.update(0.05, 0.6, feedforward=0.01) == pytest.approx(
        0.01 + 0.05 + 0.5 * 0.03)


@pytest.mark.parametrize('kp, fraction', [(0.5, 0.9), (1.0, 0.9), (1.0, 0.6), (0.8, 1.0),
                                          (2.0, 0.9)])
def test_critically_damped_lead_gives_a_double_eigenvalue(kp, fraction):
    """
    The critically damped lead gives the hop-to-hop map a double eigenvalue.

    With v_set = K_p (e − L v) the hop-to-hop position/velocity map has the double eigenvalue
    λ = 1 − √(K_p β T) (0 beyond deadbeat), as docs/control.md derives.
    """
    a, period = 0.33, 0.72
    lead = critically_damped_lead(a, period, fraction, kp)
    c = period - a
    # e' = e − a v − c v',  v' = v + β (K_p (e − L v) − v)
    v_row = np.array([fraction * kp, 1.0 - fraction - fraction * kp * lead])
    e_row = np.array([1.0, -a]) - c * v_row
    eig = np.linalg.eigvals(np.array([e_row, v_row]))
    lam = max(0.0, 1.0 - math.sqrt(kp * fraction * period))
    if lam > 0.0:
        np.testing.assert_allclose(eig, [lam, lam], atol=1e-6)
    else:                                    # beyond deadbeat: both eigenvalues inside 0
        assert np.max(np.abs(eig)) < 1.0 - 1e-9 and abs(np.prod(eig)) < 1e-9


def test_velocity_bias_observer_learns_a_model_bias_and_ignores_pushes(urdf_path):
    ctrl = Controller(urdf_path, ControllerConfig(velocity_bias_gain=0.5, max_velocity_bias=0.1,
                                                  max_velocity_bias_step=0.02))
    memory = ctrl._hop_memory
    for hop in range(1, 8):                  # the plant is 30 mm/s faster than predicted
        memory.v_pred, memory.hops, memory.hops_at_pred = 0.2, hop, hop - 1
        memory.update_velocity_bias(ctrl.config, 0.23)
    assert memory.v_bias == pytest.approx(0.03, abs=1e-3)
    memory.v_pred, memory.hops, memory.hops_at_pred = 0.2, 9, 8
    memory.update_velocity_bias(ctrl.config, 0.9)   # a push: residual beyond max_velocity_bias
    assert memory.v_bias == pytest.approx(0.03, abs=1e-3)
    memory.v_pred, memory.hops, memory.hops_at_pred = 0.2, 10, 9
    # one-hop change limited to max_velocity_bias_step
    memory.update_velocity_bias(ctrl.config, 0.2 - 0.07)
    assert memory.v_bias == pytest.approx(0.03 - 0.02, abs=1e-3)
    memory.v_pred, memory.hops_at_pred = 0.2, 10   # no touchdown since the prediction: unused
    memory.update_velocity_bias(ctrl.config, 0.0)
    assert memory.v_bias == pytest.approx(0.01, abs=1e-3)


def test_a_new_target_keeps_the_position_integral(urdf_path):
    ctrl = Controller(urdf_path, ControllerConfig(target_x=0.0))
    ctrl._position.integral = 0.012
    ctrl.set_setpoints(target_x=0.5)
    assert ctrl._position.integral == 0.012
    ctrl.set_setpoints(target_x=math.nan)     # to velocity mode: reset
    assert ctrl._position.integral == 0.0


def test_velocity_loop_sign_and_anti_windup():
    loop = VelocityLoop(kc=0.1, kp=0.06, ki=0.02, max_angle=0.5)
    alpha = loop.update(0.0, 1.5)             # too slow: foot behind (negative α)
    assert alpha == pytest.approx(-0.06 * 1.5 - 0.02 * 1.5)
    loop2 = VelocityLoop(kc=0.1, kp=1.0, ki=0.5, max_angle=0.2)
    for _ in range(10):
        assert loop2.update(0.0, 1.5) == pytest.approx(-0.2)
    assert loop2.integral == 0.0
    assert raibert_angle(1.0, 1.0, 0.2, 0.8, 0.1, 0.5) == pytest.approx(math.asin(0.1 / 0.8))


# -- phase machine ----------------------------------------------------------------------------

def _run_phase(contacts, released=None, vz=None, dt=0.001, params=PhaseParams()):
    pm = PhaseMachine(params)
    released = released or [False] * len(contacts)
    vz = vz or [-1.0] * len(contacts)
    out = []
    for i, (c, r, z) in enumerate(zip(contacts, released, vz)):
        out.append(pm.update(i * dt, c, r, z))
    return pm, out


def test_phase_machine_ignores_contact_chatter():
    rng = np.random.default_rng(9)
    contacts = [False] * 100
    contacts += [bool(x) for x in rng.integers(0, 2, size=25)]   # bouncing sensor at touchdown
    contacts[100] = True
    contacts += [True] * 100
    released = [False] * len(contacts)
    released[224] = True                                          # spring back at rest length
    contacts += [bool(x) for x in rng.integers(0, 2, size=25)]   # chatter after liftoff
    contacts += [False] * 100
    released += [False] * 125
    pm, events = _run_phase(contacts, released)
    flat = [(i, e) for i, ev in enumerate(events) for e in ev if e != 'apex']
    # one touchdown, one liftoff: the chatter right after each edge lies inside the 30 ms
    # minimum phase times, and 5 contact-free ticks never occur within them
    assert flat == [(100, 'touchdown'), (224, 'liftoff')]


def test_phase_machine_liftoff_needs_consecutive_contact_loss():
    contacts = [True] * 50 + [False, True] * 10 + [False] * 6 + [True] * 20
    pm, events = _run_phase(contacts, params=PhaseParams(liftoff_samples=5))
    flat = [(i, e) for i, ev in enumerate(events) for e in ev if e != 'apex']
    assert flat[0] == (0, 'touchdown')
    assert flat[1] == (74, 'liftoff')          # 5th consecutive contact-free tick


def test_phase_machine_reports_one_apex_per_flight():
    vz = [1.0 - 0.01 * i for i in range(300)]
    pm, events = _run_phase([False] * 300, vz=vz)
    apexes = [i for i, ev in enumerate(events) if 'apex' in ev]
    assert apexes == [100]                     # first tick with vz <= 0 after rising
    pm, events = _run_phase([False] * 10, vz=[-0.5] * 10)
    assert [i for i, ev in enumerate(events) if 'apex' in ev] == [0]   # drop from rest
    assert pm.phase == FLIGHT
    pm, events = _run_phase([True] * 3)
    assert events[0] == ('touchdown',) and pm.phase == STANCE


# -- config and API ---------------------------------------------------------------------------

def test_config_from_dict_rejects_unknown_keys_naming_them():
    cfg = ControllerConfig.from_dict({'target_x': 4.0, 'flight_policy': 'deadbeat'})
    assert cfg.target_x == 4.0 and cfg.flight_policy == 'deadbeat'
    with pytest.raises(ValueError, match='apex_hieght'):
        ControllerConfig.from_dict({'apex_hieght': 1.0, 'target_x': 1.0})
    with pytest.raises(ValueError, match='flight_policy'):
        ControllerConfig(flight_policy='magic')
    with pytest.raises(ValueError, match='leg_stiffness'):
        ControllerConfig(leg_stiffness=-1.0)
    with pytest.raises(ValueError, match='target_velocity'):
        ControllerConfig(target_velocity=math.nan)
    assert math.isnan(ControllerConfig().target_x)
    assert set(FLIGHT_POLICIES) == {'cascade', 'raibert', 'deadbeat'}


def test_controller_api_setpoints_and_input_checks(urdf_path):
    ctrl = Controller(urdf_path, ControllerConfig(apex_height=1.1))
    q = np.array([0.0, 1.2, 0.3, -0.6])
    tau = ctrl.update(0.0, q, np.zeros(4), np.zeros(2))
    assert tau.shape == (2,) and np.all(np.isfinite(tau))
    tel = ctrl.telemetry
    assert tel.phase == 'flight' and tel.apex_height == 1.1 and 'apex' in tel.events
    ctrl.set_setpoints(target_x=2.0, apex_height=1.3, flight_policy='raibert')
    ctrl.update(0.001, q, np.zeros(4), np.zeros(2))
    tel = ctrl.telemetry
    assert (tel.target_x, tel.apex_height) == (2.0, 1.3)
    assert ctrl.config.flight_policy == 'raibert'
    with pytest.raises(ValueError, match='flight_policy'):
        ctrl.set_setpoints(flight_policy='nope')
    with pytest.raises(ValueError):
        ctrl.update(0.002, q[:3], np.zeros(4), np.zeros(2))
    with pytest.raises(ValueError):
        ctrl.update(0.002, q, np.array([0, math.nan, 0, 0]), np.zeros(2))
    with pytest.raises(dataclass_error()):
        tel.phase = 'stance'


def dataclass_error():
    import dataclasses
    return dataclasses.FrozenInstanceError


def test_reconfigure_is_atomic_and_rederives_the_slip_gains(urdf_path):
    ctrl = Controller(urdf_path)
    q = np.array([0.0, 1.2, 0.3, -0.6])
    ctrl.update(0.0, q, np.zeros(4), np.zeros(2))
    for tick in range(1, 500):                  # the calibration is spread over the first ticks
        if not ctrl.busy:
            break
        ctrl.update(tick * 1e-3, q, np.zeros(4), np.zeros(2))
    kc, sens = ctrl.velocity_kc, ctrl.map_sensitivity
    assert sens is not None and sens > 0.0
    ctrl.set_setpoints(apex_height=1.0)
    assert ctrl.velocity_kc != kc and ctrl.map_sensitivity != sens
    before = ctrl.config
    with pytest.raises(ValueError, match='rest length'):
        ctrl.reconfigure(dataclass_replace(before, leg_rest_length_m=5.0))
    assert ctrl.config is before and ctrl.rest_length < ctrl.max_rest_length
    with pytest.raises(TypeError):
        ctrl.reconfigure({'apex_height': 1.0})


def dataclass_replace(obj, **changes):
    import dataclasses
    return dataclasses.replace(obj, **changes)


def test_set_points_can_change_before_the_first_update(urdf_path):
    """
    A new apex height set before any update is used from the start.

    Such a set point (a ROS parameter set while the node waits for its first state) takes effect at
    the first update instead of failing.
    """
    changed = Controller(urdf_path, ControllerConfig())
    changed.set_setpoints(apex_height=1.3)
    fresh = Controller(urdf_path, ControllerConfig(apex_height=1.3))
    q, v = np.array([0.0, 1.2, 0.3, -0.6]), np.zeros(4)
    assert changed.config.apex_height == 1.3
    np.testing.assert_array_equal(changed.update(0.0, q, v, np.zeros(2)),
                                  fresh.update(0.0, q, v, np.zeros(2)))
    assert changed.map_sensitivity == fresh.map_sensitivity
