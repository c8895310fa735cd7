# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
Scenarios of a published arm: UR5 (example-robot-data) under the joint controller of any robot.

The robot is ``ur_description/urdf/ur5_robot.urdf`` of the ``example-robot-data`` package (a
test requirement; a study of this module needs it installed) with
:class:`dodo_control.joint.JointController` (docs/joint.md). The arm is bolted to the world (its
root link is ``world``) in the pose [0, -1, 1, 0, 0, 0] rad with the terrain 10 m below, so no
shape touches the ground: the scenarios measure the controller, not contact. Metrics come from
the simulator's state only:

* ``settle_time_s``: from the set-point step to the last time the stepped joint was farther than
  ``tolerance_rad`` from its target (0 if never);
* ``overshoot_rad``: how far the stepped joint went past its target;
* ``final_error_rad``: the largest |q - target| of every joint at the end (the others hold
  their start positions);
* ``peak_torque_ratio``: the largest |tau| / URDF effort of any joint over the run (1: saturated).

The run fails (:class:`~dodo_control.scenarios.ScenarioFailed`) if the joint has not settled by the
end, the simulation diverges or the controller refuses its configuration.

Kinds (options and defaults in :data:`SCENARIOS`):

``reach``
    hold the start pose for ``at_s``, then step the target of ``joint`` by ``step_rad``.
"""
from __future__ import annotations

import dataclasses
from importlib.metadata import distribution, PackageNotFoundError

from dodo_control.joint.controller import JointController, JointControllerConfig
from dodo_control.scenarios import Perturbation, Scenario, ScenarioFailed
from dodo_control.scenarios.failures import configuration_refused, run_failures
from dodo_sim.rollout import rollout
from dodo_sim.simulator import SimConfig, Simulator
import numpy as np

#: the arm's start pose, rad (shoulder_pan, shoulder_lift, elbow, wrist_1, wrist_2, wrist_3)
START_Q = (0.0, -1.0, 1.0, 0.0, 0.0, 0.0)
#: the simulator every scenario starts from: the arm in the air, the ground far below
ARM_SIMULATOR = {'contact_frames': ('tool0',), 'collisions': 'feet',
                 'terrain_height_m': -10.0, 'initial_q': START_Q}

#: params-file section -> config dataclass
SECTIONS = {'simulator': SimConfig, 'controller': JointControllerConfig}

#: how to use the params file ``dodo optimize`` writes (its header comment)
PARAMS_FILE_USE = ('# Use: its controller section with controller: joint_hold, e.g. '
                   "config_from_file(JointControllerConfig, <this file>, 'controller')")


def urdf() -> str:
    """Return the path of the UR5 URDF of example-robot-data (ValueError if not installed)."""
    try:
        dist = distribution('example-robot-data')
    except PackageNotFoundError:
        raise ValueError('the ur5 scenarios need the example-robot-data package '
                         '(pip install example-robot-data)') from None
    return str(dist.locate_file('cmeel.prefix/share/example-robot-data/robots/ur_description/'
                                'urdf/ur5_robot.urdf'))


def check_perturbation(perturbation: Perturbation) -> None:
    """Raise ValueError for xacro args: the UR5 is a plain URDF."""
    if perturbation.xacro_args:
        raise ValueError(f'unknown xacro arg(s) {sorted(perturbation.xacro_args)}: the UR5 '
                         f'description is a plain URDF')


def simulator_config(study_config: SimConfig) -> SimConfig:
    """Return :data:`ARM_SIMULATOR` with every field ``study_config`` sets to a non-default."""
    default = SimConfig()
    changed = {f.name: getattr(study_config, f.name) for f in dataclasses.fields(SimConfig)
               if getattr(study_config, f.name) != getattr(default, f.name)}
    return SimConfig(**{**ARM_SIMULATOR, **changed})


def run_reach(configs: dict, options: dict, perturbation: Perturbation) -> dict:
    path = urdf()
    with configuration_refused():
        sim = Simulator(path, simulator_config(configs['simulator']))
        # the contact frames only name the node's topics: the simulator's
        config = dataclasses.replace(configs['controller'],
                                     contact_frames=sim.config.contact_frames)
        controller = JointController(path, config)
        joint = str(options['joint'])
        if joint not in controller.actuated_joint_names:
            raise ValueError(f'joint {joint!r} is not a controlled joint '
                             f'{list(controller.actuated_joint_names)}')
    index = sim.robot.joint_names.index(joint)   # the arm's q: its joints, as the controller's
    with run_failures():
        hold = rollout(sim, controller, duration_s=float(options['at_s']))
        target = hold.q[0, index] + float(options['step_rad'])
        controller.reconfigure(dataclasses.replace(config, target_joints=(joint,),
                                                   target_positions=(target,)))
        run = rollout(sim, controller, duration_s=float(options['duration_s'])
                      - float(options['at_s']))
    away = np.abs(run.q[:, index] - target) > float(options['tolerance_rad'])
    if away[-1]:
        raise ScenarioFailed(f'{joint} did not settle within {options["tolerance_rad"]} rad of '
                             f'its target by the end (error {run.q[-1, index] - target:.3g} '
                             f'rad)')
    last_away = int(np.flatnonzero(away)[-1]) + 1 if away.any() else 0
    targets = np.array(controller.telemetry.target)
    final = np.abs(run.q[-1, [sim.robot.joint_names.index(j)
                              for j in controller.actuated_joint_names]] - targets)
    tau = np.vstack([hold.tau, run.tau])
    return {'settle_time_s': float(run.t[last_away] - run.t[0]),
            'overshoot_rad': float(max(0.0, np.max((run.q[:, index] - target)
                                                   * np.sign(options['step_rad'])))),
            'final_error_rad': float(final.max()),
            'peak_torque_ratio': float(np.max(np.abs(tau) / sim.robot.effort_limits))}


SCENARIOS = {
    'reach': Scenario(
        run_reach, {'duration_s': 2.0, 'at_s': 0.2, 'joint': 'elbow_joint', 'step_rad': 0.5,
                    'tolerance_rad': 0.01},
        ('settle_time_s', 'overshoot_rad', 'final_error_rad', 'peak_torque_ratio'),
        'hold the start pose, then step one joint target; settle time and overshoot'),
}

__all__ = ['ARM_SIMULATOR', 'PARAMS_FILE_USE', 'SCENARIOS', 'SECTIONS', 'START_Q',
           'check_perturbation', 'simulator_config', 'urdf']
