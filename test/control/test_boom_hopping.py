# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
Closed loop: the boom-mounted leg of Ding & Ramos hops with SLIP.

The SLIP controller runs in the leg's task frame (docs/control.md, "Boom-mounted leg") with
parameters from config/boom.yaml; the scenario module dodo_control.scenarios.boom measures it on
the simulator's state (hip height above the ground, hip arc coordinate R boom_yaw).

The first three tests run without the motor model (ideal torque sources up to the URDF's stall
torques), the last two with config/boom.yaml as shipped: Ding & Ramos' rotor inertia (armature)
and their 12 V back-EMF torque-speed limit (docs/physics.md "Motors").

Time-stepping integrator, dt = 1 ms. The event-driven integrator is not run here: on this
contact it stops with "more than 50 contact events in one physics step" at the first reversal
of the foot's radial slide (docs/control.md).
"""
import dataclasses

from conftest import REPO
from dodo_control.scenarios import boom as scenarios
from dodo_control.scenarios import Perturbation
from dodo_control.slip.config import ControllerConfig
from dodo_sim.ros.params import config_from_file
from dodo_sim.simulator import SimConfig
import pytest

BOOM_YAML = REPO / 'config' / 'boom.yaml'

pytestmark = pytest.mark.slow


#: the simulator without the motor model, the controller without rotor inertia
NO_MOTORS = ({'motor_dynamics': False, 'torque_saturation': False},
             {'joint_armature_kgm2': ()})


def _run(kind, controller_changes=None, motors=False, **options):
    configs = {'simulator': config_from_file(SimConfig, BOOM_YAML, 'simulator'),
               'controller': config_from_file(ControllerConfig, BOOM_YAML, 'controller')}
    sim_changes, ctrl_changes = ({}, {}) if motors else NO_MOTORS
    assert configs['simulator'].motor_dynamics and configs['simulator'].torque_saturation
    configs['simulator'] = dataclasses.replace(configs['simulator'], **sim_changes)
    configs['controller'] = dataclasses.replace(configs['controller'], **ctrl_changes,
                                                **(controller_changes or {}))
    scenario = scenarios.SCENARIOS[kind]
    metrics = scenario.run(configs, {**scenario.options, **options}, Perturbation())
    print(f'[boom] {kind} motors={motors} {controller_changes or ""} {options}: '
          + ', '.join(f'{k}={v:.4g}' for k, v in metrics.items()))
    return metrics


def test_slip_hops_in_place_with_a_steady_apex():
    m = _run('hold', duration_s=10.0, skip_hops=3)
    assert m['hops'] >= 23                        # >= 20 hops after the first 3
    assert m['apex_height_spread'] <= 0.02        # (max - min) / mean of the hip apex heights
    assert m['apex_height_error_max_m'] <= 0.005  # from apex_height 0.25 m
    assert m['apex_arc_error_max_m'] <= 0.01      # stays on its start arc position


def test_slip_reaches_a_target_arc_position():
    m = _run('target_step', duration_s=10.0, at_s=1.0, step_m=0.2, tolerance_m=0.01,
             final_hops=4)
    assert m['settle_hops'] <= 12                 # within 1 cm from this apex on
    assert m['overshoot_m'] <= 0.01
    assert m['final_error_m'] <= 0.005


def test_bezier_stance_hops_in_place():
    m = _run('hold', {'stance_policy': 'bezier'}, duration_s=10.0, skip_hops=6)
    assert m['hops'] >= 23
    assert m['apex_height_spread'] <= 0.03        # the profile scale adapts per hop
    assert m['apex_height_error_max_m'] <= 0.01
    assert m['apex_arc_error_max_m'] <= 0.03


def test_slip_hops_in_place_with_the_motor_model():
    """
    Rotor inertia and the back-EMF limit.

    The start transient carries the hip ~2.5 cm along the arc (hop 5); measured from hop 12 on.
    """
    m = _run('hold', motors=True, duration_s=15.0, skip_hops=12)
    assert m['hops'] >= 32                        # >= 20 hops after the first 12
    assert m['apex_height_spread'] <= 0.02
    assert m['apex_height_error_max_m'] <= 0.005
    assert m['apex_arc_error_max_m'] <= 0.01


def test_slip_reaches_a_target_arc_position_with_the_motor_model():
    m = _run('target_step', motors=True, duration_s=12.0, at_s=1.0, step_m=0.2,
             tolerance_m=0.01, final_hops=4)
    assert m['final_error_m'] <= 0.005
