# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
The SLIP controller's task frame, chosen from the robot model's joints (docs/control.md).

Sits above both task frames (:mod:`dodo_control.slip.dynamics` for the planar hopper,
:mod:`dodo_control.slip.boom` for the boom-mounted leg, which builds on the former), so that
neither imports the other to choose.
"""
from __future__ import annotations

from dodo_sim.model import JOINT_NAMES, load_leg_model, ModelError
from dodo_sim.physics.robot import load_robot, robot_description_xml

from .boom import boom_layout_problem, BoomDynamics
from .dynamics import RobotDynamics


def load_dynamics(urdf_xml_or_path, xacro_args=None):
    """
    Return the robot model and its task-frame dynamics, chosen from the model's joints.

    * joints ``base_x, base_z, hip, knee`` (the hopper): :func:`dodo_sim.model.load_leg_model`
      and :class:`dodo_control.slip.dynamics.RobotDynamics` (world x-z);
    * a boom-mounted leg (yaw about world z, pitch, two actuated joints; see
      :func:`dodo_control.slip.boom.boom_layout_problem`): the engine's robot model and
      :class:`dodo_control.slip.boom.BoomDynamics` (tangent plane of the boom circle).

    Returns ``(model, dynamics)``; the model has ``total_mass``, ``gravity`` (world x-z),
    ``effort_limits``, ``foot_frame_id`` and ``urdf_xml``. Raises
    :class:`dodo_sim.model.ModelError` naming the joints when neither layout fits.
    """
    xml = robot_description_xml(urdf_xml_or_path, xacro_args)
    supported = (f'the SLIP controller supports the planar hopper (joints {list(JOINT_NAMES)}) '
                 f'and a boom-mounted leg')
    try:
        robot = load_robot(xml, contact_frames=())
    except ModelError as exc:
        raise ModelError(f'{supported}; this robot: {exc}') from None
    if robot.joint_names == JOINT_NAMES:
        leg = load_leg_model(xml)
        return leg, RobotDynamics(leg)
    problem = boom_layout_problem(robot)
    if problem is None:
        robot = load_robot(xml, contact_frames=('foot',))
        return robot, BoomDynamics(robot)
    raise ModelError(f'{supported}; this robot has joints {list(robot.joint_names)} '
                     f'({problem})')


__all__ = ['load_dynamics']
