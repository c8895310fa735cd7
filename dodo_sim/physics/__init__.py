# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
The physics engine of dodo_sim.

It has the robot model from URDF, the terrain, the contact geometry, the complementarity solver,
the two integrators and the Simulator (no rclpy; see docs/physics.md).
"""
from .robot import AUTO, JointLimit, load_robot, ModelError, robot_description_xml, RobotModel
from .simulator import INTEGRATORS, SimConfig, SimulationDiverged, Simulator, State

__all__ = ['AUTO', 'JointLimit', 'ModelError', 'RobotModel', 'load_robot',
           'robot_description_xml', 'INTEGRATORS', 'SimConfig', 'SimulationDiverged',
           'Simulator', 'State']
