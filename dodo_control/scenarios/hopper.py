# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
Scenarios of the SLIP hopper.

The robot is urdf/hopper.urdf.xacro with :class:`dodo_control.controller.Controller`.

Every scenario builds ``Simulator`` and ``Controller`` from the trial's configs and the
perturbation's xacro args, runs :func:`dodo_sim.rollout.rollout` and measures on the
*simulator's* state (pinocchio on the simulator's model, never the controller's telemetry):

* apexes: the CoG vertical velocity changes sign from + to − in flight, after the first contact;
* apex x error: CoG x at the apex minus the position target of that moment;
  ``apex_x_error_max_m`` is its largest magnitude in the scenario's window (after ``skip_hops``
  apexes, counted from the target change in ``target_step``), so one objective can take the
  worst case over several scenarios;
* the run fails (:class:`ScenarioFailed`) if the simulation diverges, the controller refuses its
  configuration, the leg does not hop (on the ground for more than a second without a liftoff:
  :mod:`dodo_control.slip.outcome`, the rule ``dodo hop`` fails a run with), the knee passes
  through the stretched-leg singularity or the base falls below
  ``min_base_height_m``.

Kinds (options and defaults in :data:`SCENARIOS`):

``hold``
    hop in place at the start CoG x; apex x error after ``skip_hops`` hops.
``target_step``
    hold, then at ``at_s`` move ``target_x`` by ``step_m`` at run time (``set_setpoints``, as
    ``ros2 param set /controller target_x`` does); settling hop count within ``tolerance_m``,
    overshoot, error after settling.
``push``
    hold at the start CoG x after an initial horizontal speed ``initial_vx_mps`` (and an optional
    base impulse at ``push_time_s``); excursion and the final apex error.
``velocity``
    velocity mode at ``target_velocity``; speed error at the apexes after ``skip_hops``, distance,
    actuator energy and cost of transport.
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

URDF = Path(__file__).resolve().parents[2] / 'urdf' / 'hopper.urdf.xacro'

#: params-file section -> config dataclass
SECTIONS = {'simulator': SimConfig, 'controller': ControllerConfig}

#: start posture of every scenario unless the study sets simulator.initial_q: base 1.2 m up
START_Q = (0.0, 1.2, 0.3, -0.6)

_COMMON = {'duration_s': 10.0, 'min_base_height_m': 0.4}


def xacro_arg_names() -> tuple:
    """Arguments the hopper xacro declares."""
    return shared_xacro_arg_names(URDF)


def check_perturbation(perturbation: Perturbation) -> None:
    """Raise ValueError naming xacro args the hopper does not declare or cannot build."""
    check_xacro_args(URDF, perturbation)


# -- one run ----------------------------------------------------------------------------------

class _Run(SlipRun):
    """The hopper's run: its CoG, measured on the simulator's model."""

    def __init__(self, configs: dict, perturbation: Perturbation, sim_overrides: dict):
        sim_cfg = configs['simulator']
        if sim_overrides:
            sim_cfg = SimConfig(**{**config_fields(sim_cfg), **sim_overrides})
        super().__init__(URDF, configs, perturbation, sim_cfg)
        self.mass = float(self.sim.robot.total_mass)

    def com_x(self, q) -> float:
        """Return the CoG x (m) of configuration q on the simulator's model."""
        return float(pin.centerOfMass(self.model, self.data, np.asarray(q, float))[0])

    def measure(self, result, min_base_height_m: float) -> dict:
        """CoG, apexes and health of a finished rollout."""
        q, v, contact = result.q, result.v, result.in_contact
        n = len(q)
        com = np.empty((n, 2))
        com_vel = np.empty((n, 2))
        model, data = self.model, self.data
        for i in range(n):
            c = pin.centerOfMass(model, data, q[i], v[i])
            com[i] = c[0], c[2]
            vc = data.vcom[0]
            com_vel[i] = vc[0], vc[2]
        check_hops(result)
        check_knee_stays_bent(q[:, 3])
        if q[:, 1].min() < min_base_height_m:
            raise ScenarioFailed(f'the base fell to {q[:, 1].min():.3f} m')
        vz = com_vel[:, 1]
        touched = np.cumsum(contact) > 0
        apex = np.flatnonzero((vz[:-1] > 0.0) & (vz[1:] <= 0.0) & ~contact[1:] & touched[1:]) + 1
        return {'com': com, 'com_vel': com_vel, 'apex': apex}


def _start_sim_overrides(configs: dict, options: dict) -> dict:
    """Start posture (unless the study sets one) and an optional initial speed."""
    out = {}
    if configs['simulator'].initial_q == SimConfig().initial_q:
        out['initial_q'] = START_Q
    vx0 = options.get('initial_vx_mps', 0.0)
    if vx0:
        out['initial_v'] = (float(vx0), 0.0, 0.0, 0.0)
    return out


def _holding_run(configs: dict, perturbation: Perturbation, sim_overrides: dict):
    """
    Return a run whose controller holds the start CoG x, and that x.

    The controller's hold is set before the first tick.
    """
    run = _Run(configs, perturbation, sim_overrides)
    x0 = run.com_x(run.sim.config.initial_q)
    run.ctrl.set_setpoints(target_x=x0)
    return run, x0


# -- the scenarios ----------------------------------------------------------------------------

def run_hold(configs: dict, options: dict, perturbation: Perturbation) -> dict:
    run, x0 = _holding_run(configs, perturbation, _start_sim_overrides(configs, options))
    result = run.run(options['duration_s'])
    m = run.measure(result, options['min_base_height_m'])
    apex = m['apex']
    skip = options['skip_hops']
    errors = m['com'][apex, 0] - x0
    ground = np.array([run.sim.terrain.height(x) for x in result.q[apex, 0]])
    height_errors = result.q[apex, 1] - ground - configs['controller'].apex_height
    return {'apex_x_error_max_m': max_abs(errors[skip:]),
            'apex_x_error_rms_m': float(np.sqrt(np.mean(np.square(errors[skip:])))),
            'apex_height_error_max_m': max_abs(height_errors[skip:]),
            'hops': float(len(errors))}


def run_target_step(configs: dict, options: dict, perturbation: Perturbation) -> dict:
    run, x0 = _holding_run(configs, perturbation, _start_sim_overrides(configs, options))
    at_s, new_target = options['at_s'], x0 + options['step_m']
    result = run.run(options['duration_s'], on_tick=run.target_x_change(at_s, new_target))
    m = run.measure(result, options['min_base_height_m'])
    t_apex = result.t[m['apex']]
    errors = m['com'][m['apex'], 0][t_apex > at_s] - new_target
    if errors.size == 0:
        raise ScenarioFailed('no apex after the target change (run too short?)')
    settle = settle_hop(errors, options['tolerance_m'])
    direction = math.copysign(1.0, options['step_m']) if options['step_m'] else 1.0
    return {'settle_hops': float(settle),
            'overshoot_m': max(0.0, float(np.max(errors * direction))),
            'apex_x_error_max_m': max_abs(errors[options['skip_hops']:]),
            'final_error_m': max_abs(errors[-options['final_hops']:])}


def run_push(configs: dict, options: dict, perturbation: Perturbation) -> dict:
    run, x0 = _holding_run(configs, perturbation, _start_sim_overrides(configs, options))
    impulse = (float(options['impulse_x_ns']), 0.0)

    def on_tick(k, state, tau):
        if impulse[0] and abs(state.t - options['push_time_s']) < 0.5e-3:
            run.sim.apply_impulse(impulse)

    result = run.run(options['duration_s'], on_tick=on_tick)
    m = run.measure(result, options['min_base_height_m'])
    errors = m['com'][m['apex'], 0] - x0
    return {'excursion_m': float(np.max(np.abs(m['com'][:, 0] - x0))),
            'return_hops': float(settle_hop(errors, options['tolerance_m'])),
            'apex_x_error_max_m': max_abs(errors[options['skip_hops']:]),
            'final_error_m': max_abs(errors[-options['final_hops']:])}


def run_velocity(configs: dict, options: dict, perturbation: Perturbation) -> dict:
    overrides = _start_sim_overrides(configs, options)
    cfg = configs['controller']
    ctrl_cfg = ControllerConfig(**{**config_fields(cfg), 'target_x': math.nan,
                                   'target_velocity': float(options['target_velocity'])})
    run = _Run({**configs, 'controller': ctrl_cfg}, perturbation, overrides)
    result = run.run(options['duration_s'])
    m = run.measure(result, options['min_base_height_m'])
    speed_err = m['com_vel'][m['apex'], 0][options['skip_hops']:] - options['target_velocity']
    dt = run.sim.config.control_period
    energy = float(np.sum(np.abs(result.tau * result.v[:-1, 2:4])) * dt)
    distance = float(m['com'][-1, 0] - m['com'][0, 0])
    weight = run.mass * abs(float(run.sim.robot.gravity[1]))
    return {'velocity_error_max_mps': max_abs(speed_err),
            'velocity_error_rms_mps': float(np.sqrt(np.mean(np.square(speed_err)))),
            'distance_m': distance,
            'energy_j': energy,
            'cost_of_transport': energy / (weight * max(abs(distance), 1e-9)),
            'distance_per_energy_m_per_j': abs(distance) / max(energy, 1e-9)}


SCENARIOS = {
    'hold': Scenario(
        run_hold, {**_COMMON, 'skip_hops': 3},
        ('apex_x_error_max_m', 'apex_x_error_rms_m', 'apex_height_error_max_m', 'hops'),
        'hop in place at the start CoG x'),
    'target_step': Scenario(
        run_target_step, {**_COMMON, 'duration_s': 12.0, 'at_s': 3.0, 'step_m': 0.5,
                          'tolerance_m': 0.01, 'skip_hops': 6, 'final_hops': 4},
        ('settle_hops', 'overshoot_m', 'apex_x_error_max_m', 'final_error_m'),
        'move target_x by step_m at run time, measure the settling'),
    'push': Scenario(
        run_push, {**_COMMON, 'initial_vx_mps': 1.5, 'impulse_x_ns': 0.0, 'push_time_s': 0.0,
                   'tolerance_m': 0.01, 'skip_hops': 8, 'final_hops': 3},
        ('excursion_m', 'return_hops', 'apex_x_error_max_m', 'final_error_m'),
        'hold the start CoG x after an initial speed and/or a push on the base'),
    'velocity': Scenario(
        run_velocity, {**_COMMON, 'duration_s': 6.0, 'target_velocity': 1.0, 'skip_hops': 3},
        ('velocity_error_max_mps', 'velocity_error_rms_mps', 'distance_m', 'energy_j',
         'cost_of_transport', 'distance_per_energy_m_per_j'),
        'run at target_velocity (velocity mode): speed error, distance, energy'),
}

__all__ = ['SECTIONS', 'SCENARIOS', 'START_Q', 'check_perturbation', 'xacro_arg_names']
