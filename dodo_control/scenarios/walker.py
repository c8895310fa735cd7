# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
Scenarios of the Kneed Walker.

The robot is urdf/kneed_walker.urdf.xacro with
:class:`dodo_control.walker.controller.WalkerController` (As & Mailhot 2018; docs/walker.md).

Every scenario builds ``Simulator`` and ``WalkerController`` from the trial's configs and the
perturbation's xacro args, walks with :func:`dodo_control.walker.outcome.walk` (which runs
:func:`dodo_sim.rollout.rollout`) and measures on the *simulator's* state only (the fall judge
:class:`~dodo_control.walker.outcome.FallDetector`, the per-foot contact flags, the joint
displacements), never on the controller's telemetry:

* the simulator section starts from the shipped walk (``config/walk.yaml``: the two feet as
  contact frames and a start state on the flat-ground limit cycle); a simulator field the study
  or the perturbation sets to a value other than the :class:`~dodo_sim.simulator.SimConfig`
  default replaces the file's value (``terrain: slope, slope_deg: -3.0``, ``integrator: event``,
  pushes ``push_times`` / ``push_impulses_x``, ...), and the start state is moved onto the
  terrain with :func:`~dodo_control.walker.outcome.config_on_terrain` (rotated about the stance
  foot), so the same start state serves flat ground and slopes;
* steps: alternating-foot touchdowns (:func:`~dodo_control.walker.outcome.count_steps`);
* the measured window runs from the touchdown of step ``settle_steps`` to the last touchdown
  (whole steps, so the gait's periodic part): ``cost_of_transport`` = sum over ticks of |motor
  work| / (m g hip distance) in the window (mechanical, dimensionless; As & Mailhot's measure),
  ``motor_work_j`` that work, ``speed_m_s`` the hip speed in the window;
* ``distance_m`` is the hip x travelled over the whole run (``duration_s``), ``steps`` the steps
  over the whole run;
* the run fails (:class:`~dodo_control.scenarios.ScenarioFailed`, with its reason) if the walker
  falls (torso pitch, hip height, knee contact: ``FallCriteria`` defaults), the simulation
  diverges, the controller refuses its configuration, fewer than ``settle_steps + 2`` steps are
  made (no window to measure) or the window speed is below ``min_speed_m_s``.

Kinds (options and defaults in :data:`SCENARIOS`):

``walk``
    walk for ``duration_s`` on the simulator's terrain from the shipped start state.
"""
from __future__ import annotations

import dataclasses
import math
from pathlib import Path

from dodo_control.scenarios import check_xacro_args, Perturbation, Scenario, ScenarioFailed
from dodo_control.scenarios import xacro_arg_names as shared_xacro_arg_names
from dodo_control.scenarios.failures import configuration_refused, run_failures
from dodo_control.walker.controller import WalkerConfig, WalkerController
from dodo_control.walker.outcome import config_on_terrain, motor_work_per_tick, walk
from dodo_sim.model import robot_description_xml
from dodo_sim.ros.params import config_from_file
from dodo_sim.simulator import SimConfig, Simulator
import numpy as np

_REPO = Path(__file__).resolve().parents[2]
URDF = _REPO / 'urdf' / 'kneed_walker.urdf.xacro'
#: the shipped walk: simulator values (start state, feet) every scenario starts from
WALK_PARAMS = _REPO / 'config' / 'walk.yaml'

#: params-file section -> config dataclass
SECTIONS = {'simulator': SimConfig, 'controller': WalkerConfig}

#: how to use the params file ``dodo optimize`` writes (its header comment)
PARAMS_FILE_USE = ('# Use: its sections over config/walk.yaml, e.g. '
                   'config_from_file(WalkerConfig, '
                   "<this file>, 'controller') (unset fields: the WalkerConfig defaults)")


def xacro_arg_names() -> tuple:
    """Arguments the walker xacro declares."""
    return shared_xacro_arg_names(URDF)


def check_perturbation(perturbation: Perturbation) -> None:
    """Raise ValueError naming xacro args the walker does not declare or cannot build."""
    check_xacro_args(URDF, perturbation)


def simulator_config(study_config: SimConfig) -> SimConfig:
    """
    Return the shipped walk's simulator config overridden by ``study_config``.

    Every field of ``study_config`` that differs from the SimConfig default goes on top (module
    docs).
    """
    default = SimConfig()
    changed = {f.name: getattr(study_config, f.name) for f in dataclasses.fields(SimConfig)
               if getattr(study_config, f.name) != getattr(default, f.name)}
    return dataclasses.replace(config_from_file(SimConfig, WALK_PARAMS, 'simulator'), **changed)


# -- the scenarios ----------------------------------------------------------------------------

def run_walk(configs: dict, options: dict, perturbation: Perturbation) -> dict:
    xml = robot_description_xml(URDF, perturbation.xacro_args or None)
    with configuration_refused():
        controller = WalkerController(configs['controller'])
        sim_cfg = config_on_terrain(xml, simulator_config(configs['simulator']),
                                    controller.config.initial_stance_frame)
        sim = Simulator(xml, sim_cfg)
    settle = int(options['settle_steps'])
    with run_failures():        # walk() reports a divergence as a fall; kept safe
        outcome = walk(sim, controller, duration_s=float(options['duration_s']),
                       settle_steps=settle)
    if outcome.fell:
        raise ScenarioFailed(f'the walker fell ({outcome.fall_reason}) at '
                             f'{outcome.fall_time_s:.2f} s after {outcome.steps} steps')
    ticks = outcome.step_ticks
    if len(ticks) < settle + 2:
        raise ScenarioFailed(f'only {len(ticks)} steps in {outcome.duration_s:.2f} s; the '
                             f'measured window needs settle_steps + 2 = {settle + 2}')
    run = outcome.rollout
    k0, k1 = ticks[settle], ticks[-1]
    work = float(np.abs(motor_work_per_tick(run, sim.robot.actuated_idx_v)[k0:k1]).sum())
    speed = outcome.speed_m_s
    if not (math.isfinite(speed) and speed >= options['min_speed_m_s']):
        raise ScenarioFailed(f'walked at {speed:.3f} m/s, below min_speed_m_s = '
                             f'{options["min_speed_m_s"]} m/s')
    return {'cost_of_transport': outcome.cost_of_transport,
            'motor_work_j': work,
            'distance_m': outcome.distance_m,
            'speed_m_s': speed,
            'steps': float(outcome.steps)}


SCENARIOS = {
    'walk': Scenario(
        run_walk, {'duration_s': 8.0, 'settle_steps': 2, 'min_speed_m_s': 0.0},
        ('cost_of_transport', 'motor_work_j', 'distance_m', 'speed_m_s', 'steps'),
        'walk for duration_s from the shipped start state on the simulator terrain'),
}

__all__ = ['PARAMS_FILE_USE', 'SECTIONS', 'SCENARIOS', 'URDF', 'WALK_PARAMS', 'check_perturbation',
           'simulator_config', 'xacro_arg_names']
