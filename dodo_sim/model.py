# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
The hopper's model as the SLIP controller needs it: joints [base_x, base_z, hip, knee].

It also has the foot and body frames, checked with the joints in :func:`load_leg_model`, and the
foot / CoG kinematics.

The simulator is robot-agnostic and loads any URDF through :func:`dodo_sim.physics.load_robot`;
this module is the hopper-specific view used by the controller (``dodo_control``). It also keeps
the old import path of :func:`robot_description_xml` and :class:`ModelError`.
"""
from __future__ import annotations

from dataclasses import dataclass
import os
from typing import Mapping

import numpy as np
import pinocchio as pin

from .physics.robot import ModelError, robot_description_xml

#: Generalised coordinates of the hopper, in this order: q = [x, z, hip, knee].
JOINT_NAMES = ('base_x', 'base_z', 'hip', 'knee')
#: Actuated joints, in the order of the effort command ``[hip, knee]``.
ACTUATED_JOINTS = ('hip', 'knee')
#: The point-contact frame at the tip of the shank.
FOOT_FRAME = 'foot'
#: Frame of the body (trunk) link, used to apply pushes.
BODY_FRAME = 'body'

_EXPECTED_TYPES = {
    'base_x': ('JointModelPX', np.array([1.0, 0.0, 0.0])),
    'base_z': ('JointModelPZ', np.array([0.0, 0.0, 1.0])),
    'hip': ('JointModelRY', np.array([0.0, 1.0, 0.0])),
    'knee': ('JointModelRY', np.array([0.0, 1.0, 0.0])),
}


@dataclass(frozen=True)
class LegModel:
    """
    A checked pinocchio model of the hopper with the indices the cores need.

    Fields:
        model: pinocchio model, nq = nv = 4 ordered as ``JOINT_NAMES``.
        foot_frame_id: frame id of the contact point.
        body_frame_id: frame id of the trunk.
        total_mass: kg.
        effort_limits: ``[hip, knee]`` torque limits from the URDF, N*m.
        urdf_xml: the XML the model was built from (publishable as robot_description).
    """

    model: pin.Model
    foot_frame_id: int
    body_frame_id: int
    total_mass: float
    effort_limits: np.ndarray
    urdf_xml: str

    def create_data(self) -> pin.Data:
        return self.model.createData()

    @property
    def gravity(self) -> np.ndarray:
        """Gravity in the x-z plane, m/s^2."""
        g = self.model.gravity.linear
        return np.array([g[0], g[2]])


def load_leg_model(urdf_xml_or_path: str | os.PathLike,
                   xacro_args: Mapping[str, object] | None = None) -> LegModel:
    """
    Build and check the hopper model.

    Raises :class:`ModelError` naming the problem.
    """
    xml = robot_description_xml(urdf_xml_or_path, xacro_args)
    try:
        model = pin.buildModelFromXML(xml)
    except (RuntimeError, ValueError) as exc:
        raise ModelError(f'invalid URDF: {exc}') from exc
    _check_joints(model)
    for frame in (FOOT_FRAME, BODY_FRAME):
        if not model.existFrame(frame):
            raise ModelError(f"URDF has no frame '{frame}' (expected link '{frame}')")
    total_mass = float(pin.computeTotalMass(model))
    if not total_mass > 0.0:
        raise ModelError(f'URDF total mass must be positive, got {total_mass} kg')
    effort = np.array([model.effortLimit[model.joints[model.getJointId(n)].idx_v]
                       for n in ACTUATED_JOINTS])
    return LegModel(model=model,
                    foot_frame_id=model.getFrameId(FOOT_FRAME),
                    body_frame_id=model.getFrameId(BODY_FRAME),
                    total_mass=total_mass,
                    effort_limits=effort,
                    urdf_xml=xml)


def _check_joints(model: pin.Model) -> None:
    names = [model.names[i] for i in range(1, model.njoints)]
    missing = [n for n in JOINT_NAMES if n not in names]
    if missing:
        raise ModelError(f"URDF is missing joint(s) {', '.join(repr(n) for n in missing)}; "
                         f'expected moving joints {list(JOINT_NAMES)}, found {names}')
    extra = [n for n in names if n not in JOINT_NAMES]
    if extra:
        raise ModelError(f'URDF has unexpected moving joint(s) {extra}; '
                         f'the hopper has exactly {list(JOINT_NAMES)}')
    if model.nq != 4 or model.nv != 4:
        raise ModelError(f'URDF must give nq = nv = 4, got nq = {model.nq}, nv = {model.nv}')
    for index, name in enumerate(JOINT_NAMES):
        joint = model.joints[model.getJointId(name)]
        expected_type, axis = _EXPECTED_TYPES[name]
        shortname = joint.shortname()
        if shortname != expected_type and not (
                shortname.startswith('JointModel') and _unaligned_axis_matches(joint, axis)):
            raise ModelError(f"joint '{name}' must be {expected_type[10:]} "
                             f'(axis {axis.tolist()}), got {shortname}')
        if joint.idx_q != index or joint.idx_v != index:
            raise ModelError(f"joint '{name}' must be coordinate {index} of q = "
                             f'{list(JOINT_NAMES)}, got {joint.idx_q}')


def _unaligned_axis_matches(joint, axis: np.ndarray) -> bool:
    """Return True for a prismatic/revolute joint given with an unaligned but equal axis."""
    joint_axis = getattr(joint, 'axis', None)
    return joint_axis is not None and np.allclose(np.asarray(joint_axis).ravel(), axis)


class Kinematics:
    """
    Foot and CoG kinematics on one ``pin.Data`` (each user owns its own instance).

    All vectors are in the world x-z plane. Call :meth:`update` first; the getters read the
    cached data.
    """

    # rows of a 6-D LOCAL_WORLD_ALIGNED jacobian that span the x-z plane
    _XZ = (0, 2)

    def __init__(self, leg: LegModel):
        self.leg = leg
        self.model = leg.model
        self.data = leg.model.createData()

    def foot_position(self, q: np.ndarray) -> np.ndarray:
        pin.framesForwardKinematics(self.model, self.data, q)
        return self.data.oMf[self.leg.foot_frame_id].translation[[0, 2]].copy()

    def foot_jacobian(self, q: np.ndarray) -> np.ndarray:
        """2x4 translational jacobian of the foot point (world x, z)."""
        jac = pin.computeFrameJacobian(self.model, self.data, q, self.leg.foot_frame_id,
                                       pin.LOCAL_WORLD_ALIGNED)
        return jac[self._XZ, :]

    def com_position(self, q: np.ndarray) -> np.ndarray:
        return pin.centerOfMass(self.model, self.data, q)[[0, 2]].copy()

    def com_jacobian(self, q: np.ndarray) -> np.ndarray:
        return pin.jacobianCenterOfMass(self.model, self.data, q)[[0, 2], :]
