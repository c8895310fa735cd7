# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
The boom leg's policies as units.

Bézier ground-reaction-force profile and its torque law (Ding & Ramos), the profile-scale
adaptation, the displacement observer of the position loop, the new configuration fields, and one
stance tick of each stance policy on the boom model. No simulator.
"""
import math

from conftest import REPO
from dodo_control.controller import Controller, ControllerConfig
from dodo_control.slip.bezier import adapt_scale, bezier_torque, bezier_value, stance_phase
from dodo_sim.ros.params import config_from_file, field_docs
import numpy as np
import pytest

BOOM = REPO / 'urdf' / 'boom_leg.urdf.xacro'
BOOM_YAML = REPO / 'config' / 'boom.yaml'
CROUCH = (-math.pi / 3.0, math.pi / 2.0)


def test_bezier_value_is_the_bernstein_polynomial():
    # Ding & Ramos' example: polyval_bz([0 0 60 0 0], s) peaks at 60 C(4,2) / 2^4 at s = 0.5
    assert bezier_value((0.0, 0.0, 60.0, 0.0, 0.0), 0.5) == pytest.approx(22.5)
    assert bezier_value((0.0, 0.0, 60.0, 0.0, 0.0), 0.0) == 0.0
    coefficients = (3.0, -1.0, 7.0, 2.0)
    for s in (0.1, 0.37, 0.8):
        explicit = sum(a * math.comb(3, k) * s**k * (1 - s)**(3 - k)
                       for k, a in enumerate(coefficients))
        assert bezier_value(coefficients, s) == pytest.approx(explicit, rel=1e-14)
    assert bezier_value(coefficients, 1.7) == pytest.approx(2.0)      # clipped: s = 1
    assert bezier_value(coefficients, -0.5) == pytest.approx(3.0)     # clipped: s = 0
    assert bezier_value((), 0.5) == 0.0
    assert stance_phase(1.09, 1.0, 0.18) == pytest.approx(0.5)
    assert stance_phase(2.0, 1.0, 0.18) == 1.0


def test_bezier_torque_pushes_the_ground_with_minus_f_and_adds_the_joint_pd():
    jf = [[0.1, 0.2, -0.15, -0.08], [0.0, -0.5, 0.05, 0.12]]
    force = np.array([3.0, 40.0])
    tau = np.array(bezier_torque(jf, *force, (0.0, 0.0), (0.0, 0.0), (0.0, 0.0), 0.0, 0.0))
    j_rel = np.array(jf)[:, 2:]
    np.testing.assert_allclose(tau, -j_rel.T @ force, rtol=1e-14)
    # virtual work: the torques do the work of −F on the foot's motion relative to the hip
    rates = np.array([0.7, -1.3])
    assert tau @ rates == pytest.approx(-force @ (j_rel @ rates), rel=1e-12)
    with_pd = bezier_torque(jf, 0.0, 0.0, (0.1, 1.0), (0.5, -2.0), (0.0, 1.2), 0.03, 0.08)
    assert with_pd == pytest.approx((0.03 * -0.1 - 0.08 * 0.5, 0.03 * 0.2 + 0.08 * 2.0))


def test_profile_scale_adapts_to_the_apex_error_within_bounds():
    assert adapt_scale(1.0, 0.01, 2.0, 2.0) == pytest.approx(1.02)     # apex too low: more
    assert adapt_scale(1.0, -0.01, 2.0, 2.0) == pytest.approx(0.98)
    assert adapt_scale(1.99, 0.5, 2.0, 2.0) == 2.0
    assert adapt_scale(0.51, -0.5, 2.0, 2.0) == 0.5
    assert adapt_scale(1.3, 0.2, 0.0, 2.0) == 1.3                      # gain 0: fixed


def test_new_config_fields_are_checked_documented_and_coerced():
    cfg = ControllerConfig.from_dict({'stance_policy': 'bezier',
                                      'bezier_force_z_n': [0, 20, 100, 0, 0],
                                      'bezier_joint_target_rad': [-1.0, 1.5]})
    assert cfg.bezier_force_z_n == (0.0, 20.0, 100.0, 0.0, 0.0)
    assert cfg.bezier_joint_target_rad == (-1.0, 1.5)
    for bad, name in (({'stance_policy': 'spring'}, 'stance_policy'),
                      ({'bezier_force_frame': 'world'}, 'bezier_force_frame'),
                      ({'bezier_stance_time_s': 0.0}, 'bezier_stance_time_s'),
                      ({'bezier_joint_target_rad': (1.0,)}, 'bezier_joint_target_rad'),
                      ({'bezier_force_z_n': (0.0, math.nan)}, 'bezier_force_z_n'),
                      ({'bezier_force_x_n': 'abc'}, 'bezier_force_x_n'),
                      ({'max_bezier_scale': 0.5}, 'max_bezier_scale'),
                      ({'bezier_apex_gain': -1.0}, 'bezier_apex_gain'),
                      ({'displacement_bias_gain': 1.5}, 'displacement_bias_gain'),
                      ({'max_displacement_bias_m': -0.1}, 'max_displacement_bias_m')):
        with pytest.raises(ValueError, match=name):
            ControllerConfig(**bad)
    docs = field_docs(ControllerConfig)
    for name in ('stance_policy', 'bezier_force_frame', 'bezier_force_x_n', 'bezier_force_z_n',
                 'bezier_stance_time_s', 'bezier_joint_kp', 'bezier_joint_kd',
                 'bezier_joint_target_rad', 'bezier_apex_gain', 'max_bezier_scale',
                 'displacement_bias_gain', 'max_displacement_bias_m'):
        assert docs.get(name), name


def test_displacement_observer_learns_the_missing_displacement_and_ignores_pushes():
    ctrl = Controller(BOOM, ControllerConfig(displacement_bias_gain=0.5,
                                             max_displacement_bias_m=0.03, target_x=0.0))
    fall, stance, kick = 0.12, 0.16, 0.0
    memory = ctrl._hop_memory
    memory.stance_time = stance
    x = 0.0
    for hop in range(1, 12):       # in place at apex speed 0 but the plant moves 8 mm per hop
        memory.hops = hop
        memory.update_displacement_bias(ctrl.config, x, 0.0, fall, kick)
        x += 0.008
    assert memory.x_bias == pytest.approx(0.008, abs=1e-4)
    memory.hops += 1
    memory.update_displacement_bias(ctrl.config, x + 0.2, 0.0, fall, kick)  # a push: not used
    assert memory.x_bias == pytest.approx(0.008, abs=1e-4)
    before = memory.x_bias
    memory.hops += 3               # apexes missed in between: no residual from that gap
    memory.update_displacement_bias(ctrl.config, x + 0.5, 0.0, fall, kick)
    assert memory.x_bias == before


def _stance_tick(config):
    """Return a boom controller after a flight tick and a touchdown tick at nominal crouch."""
    ctrl = Controller(BOOM, config)
    q = np.array([0.1, 0.0, -0.9, 1.4])
    v = np.array([0.2, 0.8, 0.0, 0.0])
    ctrl.update(0.0, q, v, np.zeros(2))
    assert ctrl.phase == 'flight'
    ctrl.update(0.04, q, v, np.array([0.0, 30.0]))
    assert ctrl.phase == 'stance'
    return ctrl, q, v


def test_bezier_stance_pushes_the_profile_along_the_leg():
    cfg = ControllerConfig(stance_policy='bezier', leg_rest_length_m=0.2, apex_height=0.25,
                           bezier_force_z_n=(0.0, 20.0, 100.0, 0.0, 0.0),
                           bezier_stance_time_s=0.18, bezier_joint_kp=0.0, bezier_joint_kd=0.0,
                           saturate_torque=False)
    ctrl, q, v = _stance_tick(cfg)
    ctrl.update(0.04 + 0.09, q, v, np.array([0.0, 30.0]))     # s = 0.5 of 0.18 s
    tel = ctrl.telemetry
    leg = tel.com_position - tel.foot_position
    force = tel.leg_force_n
    assert np.linalg.norm(force) == pytest.approx(42.5, rel=1e-12)   # 20*4/16 + 100*6/16
    assert abs(force[0] * leg[1] - force[1] * leg[0]) < 1e-9 * np.linalg.norm(force)
    assert force @ leg > 0.0                                    # pushes the hip away
    task = ControllerConfig(**{**cfg.__dict__, 'bezier_force_frame': 'task'})
    ctrl, q, v = _stance_tick(task)
    ctrl.update(0.04 + 0.09, q, v, np.array([0.0, 30.0]))
    np.testing.assert_allclose(ctrl.telemetry.leg_force_n, [0.0, 42.5], atol=1e-12)


def test_bezier_stance_ends_at_the_nominal_stance_time():
    cfg = ControllerConfig(stance_policy='bezier', leg_rest_length_m=0.2, apex_height=0.25,
                           bezier_stance_time_s=0.1, min_stance_time_s=0.03)
    ctrl, q, v = _stance_tick(cfg)
    ctrl.update(0.04 + 0.099, q, v, np.array([0.0, 30.0]))
    assert ctrl.phase == 'stance'
    ctrl.update(0.04 + 0.1, q, v, np.array([0.0, 30.0]))
    assert ctrl.phase == 'flight' and 'liftoff' in ctrl.telemetry.events


def test_boom_params_file_gives_a_valid_controller():
    cfg = config_from_file(ControllerConfig, BOOM_YAML, 'controller')
    ctrl = Controller(BOOM, cfg)
    assert ctrl.task_frame == 'boom'
    assert cfg.bezier_joint_target_rad == pytest.approx(CROUCH)
    # the SLIP point is the hip: its apex offset is zero and the rest length fits the leg
    assert 0.0 < ctrl.rest_length < ctrl.max_rest_length < ctrl.stretched_length
    tau = ctrl.update(0.0, np.array([0.0, -0.1, *CROUCH]), np.zeros(4), np.zeros(2))
    assert np.all(np.abs(tau) <= ctrl.effort_limits + 1e-12)


def test_boom_scenario_module_plugs_into_dodo_optimize():
    from dodo_control.scenarios import Perturbation, robot_module
    module = robot_module('dodo_control.scenarios.boom')
    assert set(module.SCENARIOS) == {'hold', 'target_step'}
    assert module.SECTIONS['controller'] is ControllerConfig
    module.check_perturbation(Perturbation(xacro_args={'boom_radius_m': 0.6}))
    with pytest.raises(ValueError, match='body_mass'):
        module.check_perturbation(Perturbation(xacro_args={'body_mass': 8.0}))
