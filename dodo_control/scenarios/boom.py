# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
Scenarios of the boom-mounted leg.

The robot is urdf/boom_leg.urdf.xacro with the SLIP controller in the boom's task frame
(docs/control.md, "Boom-mounted leg"). A study names it ``robot: dodo_control.scenarios.boom`` or
``robot: boom``.

Every scenario builds ``Simulator`` and ``Controller`` from the trial's configs and the
perturbation's xacro args (:class:`~dodo_control.scenarios.slip_run.SlipRun`), runs
:func:`dodo_sim.rollout.rollout` and measures on the
*simulator's* state (pinocchio on the simulator's model, never the controller's telemetry):

* hip height above the ground under it and hip arc coordinate ``s = R boom_yaw`` (R: the hip's
  distance from the yaw axis at q = 0, i.e. ``boom_radius_m``);
* apexes: local maxima of the hip height in flight, after the first contact;
* the run fails (:class:`ScenarioFailed`) if the simulation diverges, the controller refuses its
  configuration, the leg does not hop (on the ground for more than a second without a liftoff:
  :mod:`dodo_control.slip.outcome`, the rule ``dodo hop`` fails a run with), the knee passes
  through the stretched-leg singularity or the hip falls below
  ``min_hip_height_m``.

Kinds (options and defaults in :data:`SCENARIOS`):

``hold``
    hop in place at the start arc position; apex height spread and arc error after
    ``skip_hops`` hops.
``target_step``
    hold, then at ``at_s`` move ``target_x`` (an arc coordinate) by ``step_m`` at run time;
    settling hop count within ``tolerance_m``, overshoot, final error.
"""
from __future__ import annotations

import math
from pathlib import Path

from dodo_control.controller import ControllerConfig
from dodo_control.scenarios import (check_xacro_args, config_fields, max_abs, Perturbation,
                                    Scenario, ScenarioFailed, settle_hop)
from dodo_control.scenarios import xacro_arg_names as shared_xacro_arg_names
from dodo_control.scenarios.slip_run import check_hops, check_knee_stays_bent, SlipRun
from dodo_sim.simulator import SimConfig
import numpy as np
import pinocchio as pin

URDF = Path(__file__).resolve().parents[2] / 'urdf' / 'boom_leg.urdf.xacro'

#: params-file section -> config dataclass
SECTIONS = {'simulator': SimConfig, 'controller': ControllerConfig}

#: start posture unless the study sets simulator.initial_q: boom tipped up 0.1 rad (hip
#: 0.25 m up), the leg in Ding & Ramos' nominal crouch, the foot 6 cm above the ground
START_Q = (0.0, -0.1, -math.pi / 3.0, math.pi / 2.0)

_COMMON = {'duration_s': 8.0, 'min_hip_height_m': 0.08}


def xacro_arg_names() -> tuple:
    """Arguments the boom-leg xacro declares."""
    return shared_xacro_arg_names(URDF)


def check_perturbation(perturbation: Perturbation) -> None:
    """Raise ValueError naming xacro args the boom leg does not declare or cannot build."""
    check_xacro_args(URDF, perturbation)


class _Run(SlipRun):
    """The boom leg's run: its hip over the ground and along the boom's arc."""

    def __init__(self, configs: dict, perturbation: Perturbation):
        sim_cfg = configs['simulator']
        if sim_cfg.initial_q == SimConfig().initial_q:
            sim_cfg = SimConfig(**{**config_fields(sim_cfg), 'initial_q': START_Q})
        super().__init__(URDF, configs, perturbation, sim_cfg)
        hip_joint = self.model.getJointId(self.sim.actuated_joint_names[0])
        self.hip_joint = hip_joint
        pin.forwardKinematics(self.model, self.data, np.zeros(self.model.nq))
        axis = self.data.oMi[1].translation
        self.radius_m = float(self.data.oMi[hip_joint].translation[0] - axis[0])

    def arc(self, q) -> float:
        """Hip arc coordinate R boom_yaw, m."""
        return self.radius_m * float(q[0])

    def measure(self, result, min_hip_height_m: float) -> dict:
        """Hip heights, arc coordinates and apex indices of a finished rollout."""
        q, contact = result.q, result.in_contact
        heights = np.empty(len(q))
        terrain = self.sim.terrain
        for i, qi in enumerate(q):
            pin.forwardKinematics(self.model, self.data, qi)
            hip = self.data.oMi[self.hip_joint].translation
            heights[i] = hip[2] - terrain.height(float(hip[0]))   # ground under the hip
        check_hops(result)
        check_knee_stays_bent(q[:, 3])
        if heights.min() < min_hip_height_m:
            raise ScenarioFailed(f'the hip fell to {heights.min():.3f} m')
        touched = np.cumsum(contact) > 0
        inner = slice(1, len(q) - 1)
        apex = np.flatnonzero((heights[inner] >= heights[:-2]) & (heights[inner] > heights[2:])
                              & ~contact[inner] & touched[inner]) + 1
        return {'height': heights, 'arc': self.radius_m * q[:, 0], 'apex': apex}


def _holding_run(configs: dict, perturbation: Perturbation):
    run = _Run(configs, perturbation)
    s0 = run.arc(run.sim.config.initial_q)
    run.ctrl.set_setpoints(target_x=s0)
    return run, s0


def run_hold(configs: dict, options: dict, perturbation: Perturbation) -> dict:
    run, s0 = _holding_run(configs, perturbation)
    result = run.run(options['duration_s'])
    m = run.measure(result, options['min_hip_height_m'])
    apex = m['apex'][options['skip_hops']:]
    if apex.size == 0:
        raise ScenarioFailed('no apex in the measured window (run too short?)')
    heights = m['height'][apex]
    errors = m['arc'][apex] - s0
    return {'apex_height_spread': float((heights.max() - heights.min()) / heights.mean()),
            'apex_height_error_max_m': max_abs(heights - configs['controller'].apex_height),
            'apex_arc_error_max_m': max_abs(errors),
            'arc_drift_m': float(errors[-1] - errors[0]),
            'hops': float(len(m['apex']))}


def run_target_step(configs: dict, options: dict, perturbation: Perturbation) -> dict:
    run, s0 = _holding_run(configs, perturbation)
    at_s, new_target = options['at_s'], s0 + options['step_m']
    result = run.run(options['duration_s'], on_tick=run.target_x_change(at_s, new_target))
    m = run.measure(result, options['min_hip_height_m'])
    t_apex = result.t[m['apex']]
    errors = m['arc'][m['apex']][t_apex > at_s] - new_target
    if errors.size == 0:
        raise ScenarioFailed('no apex after the target change (run too short?)')
    direction = math.copysign(1.0, options['step_m']) if options['step_m'] else 1.0
    return {'settle_hops': float(settle_hop(errors, options['tolerance_m'])),
            'overshoot_m': max(0.0, float(np.max(errors * direction))),
            'final_error_m': max_abs(errors[-options['final_hops']:])}


SCENARIOS = {
    'hold': Scenario(
        run_hold, {**_COMMON, 'skip_hops': 3},
        ('apex_height_spread', 'apex_height_error_max_m', 'apex_arc_error_max_m', 'arc_drift_m',
         'hops'),
        'hop in place at the start arc position'),
    'target_step': Scenario(
        run_target_step, {**_COMMON, 'duration_s': 10.0, 'at_s': 1.0, 'step_m': 0.2,
                          'tolerance_m': 0.01, 'final_hops': 4},
        ('settle_hops', 'overshoot_m', 'final_error_m'),
        'move target_x (arc coordinate) by step_m at run time, measure the settling'),
}

__all__ = ['SECTIONS', 'SCENARIOS', 'START_Q', 'check_perturbation', 'xacro_arg_names']
