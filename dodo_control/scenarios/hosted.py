# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
Scenarios of any hosted controller on any robot: what a study of a plugin controller runs.

A study names the controller and, optionally, the robot (docs/optimize.md, "Any controller")::

    robot: hosted                      # this module (the default when controller: is given)
    controller: hopper_pd              # an installed entry point of dodo_sim.controllers, or
                                       # module:Class
    model: package://dodo_sim/urdf/hopper.urdf.xacro   # default: the controller's default_model

:func:`for_controller` binds the module to that controller: its sections are ``simulator``
(:class:`~dodo_sim.simulator.SimConfig`) and ``controller`` (the controller's ``config_class``),
so every field of the controller's config can be tuned. Each run builds the simulator and the
controller from the robot description (``xacro_args`` perturbations applied), as the controller
node builds it (:meth:`dodo_control.registry.ControllerEntry.build`), runs
:func:`dodo_sim.rollout.rollout` and measures on the *simulator's* state only (pinocchio on the
simulator's model, never the controller's telemetry), for any robot:

* the centre of mass (CoM) height: lowest, highest; below ``min_com_height_m`` the run fails
  (a fall);
* ``com_drift_m``: the CoM's horizontal distance from its start at the end;
* ``energy_j``: the actuators' work, sum over ticks of sum |tau v| * control period;
* ``peak_torque_ratio``: max |tau| / URDF effort over the run (joints with an effort limit);
* ``touchdowns``: ticks where the robot touches the ground after a tick without contact;
* kind ``hop`` adds the apexes (the CoM's vertical speed turns from up to down in flight, after
  the first contact; the first ``skip_hops`` left out): ``hops`` (apexes counted),
  ``apex_height_mean_m``, ``apex_height_error_max_m`` (from ``apex_height_m``) and
  ``apex_drift_max_m`` (the CoM's largest horizontal distance from its start at an apex); a run
  without an apex in that window fails.

The run fails (:class:`~dodo_control.scenarios.ScenarioFailed`) when the simulation diverges, the
controller refuses its configuration or raises, or the CoM falls below ``min_com_height_m``.
"""
from __future__ import annotations

from pathlib import Path
import types

from dodo_control.scenarios import check_xacro_args, max_abs, Perturbation, Scenario
from dodo_control.scenarios import ScenarioFailed
from dodo_control.scenarios.failures import configuration_refused, run_failures
from dodo_sim.rollout import rollout
from dodo_sim.simulator import SimConfig
import numpy as np

_RUN_OPTIONS = {'duration_s': 3.0, 'min_com_height_m': 0.0}
_RUN_METRICS = ('com_height_min_m', 'com_height_max_m', 'com_drift_m', 'energy_j',
                'peak_torque_ratio', 'touchdowns')
_HOP_METRICS = ('hops', 'apex_height_mean_m', 'apex_height_error_max_m', 'apex_drift_max_m')


def _measure(sim, ctrl, result, options: dict) -> dict:
    """Return the metrics of every kind and the apex indices of a finished rollout."""
    import pinocchio as pin
    model, data = sim.robot.model, sim.robot.model.createData()
    n = len(result.t)
    com = np.empty((n, 3))
    vz = np.empty(n)
    for i in range(n):
        com[i] = pin.centerOfMass(model, data, result.q[i], result.v[i])
        vz[i] = data.vcom[0][2]
    if com[:, 2].min() < options['min_com_height_m']:
        raise ScenarioFailed(f'the centre of mass fell to {com[:, 2].min():.3f} m (below '
                             f'min_com_height_m {options["min_com_height_m"]} m)')
    robot = sim.robot
    joints = list(robot.joint_names)
    actuated = list(ctrl.actuated_joint_names)
    v_index = [robot.joint_idx_v[joints.index(j)] for j in actuated]
    limits = dict(zip(robot.actuated_joint_names, robot.effort_limits))
    effort = np.array([limits.get(j, 0.0) for j in actuated])
    tau = np.asarray(result.tau).reshape(len(result.tau), len(actuated))
    limited = effort > 0.0
    ratio = (float(np.max(np.abs(tau[:, limited]) / effort[limited]))
             if limited.any() and len(tau) else 0.0)
    contact = np.asarray(result.in_contact, dtype=bool)
    horizontal = np.hypot(com[:, 0] - com[0, 0], com[:, 1] - com[0, 1])
    touched = np.cumsum(contact) > 0
    apex = np.flatnonzero((vz[:-1] > 0.0) & (vz[1:] <= 0.0) & ~contact[1:] & touched[1:]) + 1
    metrics = {
        'com_height_min_m': float(com[:, 2].min()),
        'com_height_max_m': float(com[:, 2].max()),
        'com_drift_m': float(horizontal[-1]),
        'energy_j': float(np.sum(np.abs(tau * result.v[:-1][:, v_index]))
                          * sim.config.control_period),
        'peak_torque_ratio': ratio,
        'touchdowns': float(np.count_nonzero(contact[1:] & ~contact[:-1])),
    }
    return metrics, apex, com, horizontal


def _rollout(entry, model: str, configs: dict, options: dict, perturbation: Perturbation):
    from dodo_sim.model import robot_description_xml
    from dodo_sim.simulator import Simulator
    with configuration_refused():
        xml = robot_description_xml(model, perturbation.xacro_args or None)
        sim = Simulator(xml, configs['simulator'])
        ctrl = entry.build(xml, configs['controller'])
    with run_failures():
        result = rollout(sim, ctrl, duration_s=float(options['duration_s']))
    return sim, ctrl, result


def _scenarios(entry, model: str) -> dict:
    def run(configs: dict, options: dict, perturbation: Perturbation) -> dict:
        sim, ctrl, result = _rollout(entry, model, configs, options, perturbation)
        return _measure(sim, ctrl, result, options)[0]

    def hop(configs: dict, options: dict, perturbation: Perturbation) -> dict:
        sim, ctrl, result = _rollout(entry, model, configs, options, perturbation)
        metrics, apex, com, horizontal = _measure(sim, ctrl, result, options)
        apex = apex[int(options['skip_hops']):]
        if apex.size == 0:
            raise ScenarioFailed(f'no apex after the first {options["skip_hops"]} hop(s): the '
                                 f'robot did not hop')
        heights = com[apex, 2]
        return {**metrics, 'hops': float(apex.size),
                'apex_height_mean_m': float(np.mean(heights)),
                'apex_height_error_max_m': max_abs(heights - float(options['apex_height_m'])),
                'apex_drift_max_m': float(np.max(horizontal[apex]))}

    return {
        'run': Scenario(run, dict(_RUN_OPTIONS), _RUN_METRICS,
                        'run the controller for duration_s; CoM, energy, peak torque'),
        'hop': Scenario(hop, {**_RUN_OPTIONS, 'skip_hops': 2, 'apex_height_m': 1.0},
                        _RUN_METRICS + _HOP_METRICS,
                        'run and measure the CoM apexes: height error, drift'),
    }


def for_controller(controller: str, model: str = '') -> types.SimpleNamespace:
    """
    Return this module bound to ``controller`` on the robot ``model`` (a scenario module).

    ``controller``: an installed entry point or ``module:Class`` (the user's study file);
    ``model``: a robot description path or ``package://`` URI, '' for the controller's
    ``default_model``. ValueError names an unknown controller or a missing model.
    """
    from dodo_control.registry import controller_entry
    from dodo_sim.paths import resolve_package_uri
    entry = controller_entry(controller)
    path = resolve_package_uri(model or entry.model)
    if not Path(path).is_file():
        raise ValueError(f'model {model or entry.model}: no such file')

    def check_perturbation(perturbation: Perturbation) -> None:
        if perturbation.xacro_args and not path.endswith('.xacro'):
            raise ValueError(f'unknown xacro arg(s) {sorted(perturbation.xacro_args)}: '
                             f'{Path(path).name} is not a xacro file')
        if perturbation.xacro_args:
            check_xacro_args(path, perturbation)

    extra = {'controller': {'controller': entry.name}}
    if model:
        extra['simulator'] = {'robot_description': model}
    return types.SimpleNamespace(
        SECTIONS={'simulator': SimConfig, 'controller': entry.config_class()},
        SCENARIOS=_scenarios(entry, path), check_perturbation=check_perturbation,
        PARAMS_FILE_USE=(f'# Use: dodo hop --params-file <this file>  (controller: {entry.name}, '
                         f'{entry.controller}, {entry.distribution} {entry.version})'.rstrip()),
        PARAMS_FILE_EXTRA=extra, entry=entry, model=path)


__all__ = ['for_controller']
