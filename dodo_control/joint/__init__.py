# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
The joint controller of any robot (docs/joint.md): hold the start pose or track set-points.

* :mod:`.controller` — :class:`JointController` and :class:`JointControllerConfig`: PD per joint
  with the gain rule from the joint-space inertia, gravity compensation from the model and the
  URDF torque limits; registry name ``joint_hold`` (``dodo_control.registry``).
"""
from .controller import JointController, JointControllerConfig

__all__ = ['JointController', 'JointControllerConfig']
