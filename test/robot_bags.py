# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
Bags of in-process runs of any robot, written like the simulator, controller and recorder would.

``write_rollout_bag`` turns a :func:`dodo_sim.rollout.rollout` of any simulated robot into a bag
with the ROS contract's topics (docs/bags.md): ``/robot_description``, the simulator's and the
controller's parameters, per state the contact topics, ``/joint_states`` (the 1-DoF joints only:
the free flyer of a floating base is never in it) and ``/clock``, the ground-truth ``odom`` every
``odom_period_s`` (or, for a floating base, only the ``odom`` -> root link transform on ``/tf``
the recorder computes from it, or neither: ``base_source``) and the stamped ``/joint_commands``.
No DDS.
"""
from __future__ import annotations

from dodo_sim.ros.contract import ODOM_FRAME
from dodo_sim.ros.odometry import BaseOdometer
from dodo_sim.ros.params import config_to_parameters
from dodo_sim.ros.tf_frames import Transform
from dodo_sim.tools.bag_writer import OfflineBagWriter
import numpy as np


def measured_joints(robot) -> tuple:
    """(names, q indices, v indices) of the joints /joint_states carries: the 1-DoF ones."""
    rows = [(n, iq, iv) for n, iq, iv, nq, nv in zip(robot.joint_names, robot.joint_idx_q,
                                                     robot.joint_idx_v, robot.joint_nq,
                                                     robot.joint_nv) if (nq, nv) == (1, 1)]
    names, iq, iv = zip(*rows)
    return names, np.array(iq), np.array(iv)


def write_rollout_bag(path, sim, run, *, controller: str = 'joint_hold', controller_config=None,
                      odom_period_s: float = 0.01, base_source: str | None = 'odom',
                      controller_parameters=None):
    """
    Write ``run`` (a rollout of ``sim``) as a bag at ``path``; return ``path``.

    ``base_source``: 'odom' (the simulator's ground truth), 'tf' (only ``odom`` -> root link on
    ``/tf``, a floating base) or None (neither, as on hardware). ``controller_parameters``: more
    recorded parameters of the controller node (e.g. its ``controller_identity``).
    """
    robot = sim.robot
    names, iq, iv = measured_joints(robot)
    actuated = robot.actuated_joint_names
    effort_index = [names.index(j) for j in actuated]
    odometer = BaseOdometer(robot)
    frames = tuple(sim.contact_frames)
    with OfflineBagWriter(path) as w:
        w.robot_description(robot.urdf_xml)
        w.parameters('simulator', {'contact_frames': list(frames), 'base': sim.config.base,
                                   'control_period': sim.config.control_period})
        values = {'controller': controller}
        if controller_config is not None:
            values.update(config_to_parameters(controller_config))
        values.update(controller_parameters or {})
        w.parameters('controller', values)
        next_odom = -1.0
        for k, t in enumerate(run.t):
            effort = np.zeros(len(names))
            if k:
                effort[effort_index] = run.tau[k - 1]
            w.step(t, run.q[k, iq], run.v[k, iv], effort, run.contact_forces[k], names=names,
                   contact_frames=frames)
            if base_source is not None and t >= next_odom - 1e-12:
                next_odom = t + odom_period_s
                if base_source == 'odom':
                    w.odometry(t, odometer(run.q[k], run.v[k]))
                else:
                    w.tf(t, [Transform(ODOM_FRAME, robot.root_link, run.q[k, :3],
                                       run.q[k, 3:7])])
            if k < len(run.tau):
                w.joint_command(t, actuated, run.tau[k])
    return path
