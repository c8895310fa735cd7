# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
The entities of a one-robot simulator and their states, as simulation_interfaces sees them.

No rclpy (pinocchio and numpy only); :mod:`dodo_sim.ros.sim_services` turns these into messages.
docs/simulation_interfaces.md, "Entities":

* two entities: the robot (named after the URDF's ``<robot name>``, category ROBOT) and
  ``terrain`` (category STATIC_OBJECT; it moves only through the terrain parameters);
* a :class:`BaseState` is the base link's pose and twist in the fixed frame (``world``, or
  ``odom`` for a floating base: the simulator's world), the twist in that frame's axes as
  EntityState defines it ("observed in the frame specified by header.frame_id"): the linear
  velocity of the link's origin and the angular velocity, world axes (Gazebo's ros_gz does the
  same). The base link is the one ``odom`` reports (:mod:`dodo_sim.ros.odometry`): a floating
  base's root link, else the heaviest link (the hopper's ``body``);
* setting the base state changes the coordinates of the base's *supporting joints* only (a free
  flyer, or the joints between the world and the base link: the hopper's ``base_x`` and
  ``base_z``): solved exactly (Gauss-Newton on the pose, least squares on the twist); a pose or
  twist those joints cannot reach is refused, naming the joints and the residual. Every other
  joint keeps its position and velocity;
* joint positions and velocities (not in the standard: the companion ``set_joint_state``)
  change the named 1-DoF joints only.

Errors are :class:`EntityError` with the simulation_interfaces result code to answer.
"""
from __future__ import annotations

import math
import re
from typing import NamedTuple

from dodo_sim.ros.sim_values import (INVALID_POSE, RESULT_FEATURE_UNSUPPORTED, RESULT_NOT_FOUND,
                                     RESULT_OPERATION_FAILED)
import numpy as np

#: simulation_interfaces/msg/EntityCategory values (1.6.1).
CATEGORY_ROBOT = 1
CATEGORY_STATIC_OBJECT = 5
#: The terrain's entity name.
TERRAIN = 'terrain'
#: A pose or twist the base's joints reproduce to this is reached (m, rad; m/s, rad/s).
REACH_TOLERANCE = 1e-9
#: Gauss-Newton iterations for a base pose (a prismatic/free-flyer chain converges in one or two).
MAX_ITERATIONS = 50
#: Longest entity-name filter accepted (a regular expression from a caller), characters.
MAX_FILTER_CHARS = 256


class EntityError(ValueError):
    """A request the entities refuse: ``code`` is the simulation_interfaces result to answer."""

    def __init__(self, code: int, message: str):
        super().__init__(message)
        self.code = code


class BaseState(NamedTuple):
    """Pose and twist of the base link in ``frame_id`` (world axes), SI units."""

    frame_id: str
    position: np.ndarray          # (3,) m
    orientation_xyzw: np.ndarray  # (4,) unit quaternion
    linear: np.ndarray            # (3,) m/s of the link origin, world axes
    angular: np.ndarray           # (3,) rad/s, world axes


class EntityInfo(NamedTuple):
    """What GetEntityInfo says about an entity."""

    category: int
    description: str


class Entities:
    """The robot and the terrain of one simulator (:class:`dodo_sim.simulator.Simulator`)."""

    def __init__(self, sim):
        import pinocchio as pin
        from dodo_sim.ros.contract import ODOM_FRAME, WORLD_FRAME
        self._pin = pin
        self._sim = sim
        robot = sim.robot
        self.model = robot.model
        self.data = self.model.createData()
        self.robot_name = self.model.name or 'robot'
        self.frame_id = ODOM_FRAME if robot.floating_base else WORLD_FRAME
        #: frames a request may name for the fixed frame ('' defaults to world)
        self.fixed_frames = ('', WORLD_FRAME, ODOM_FRAME)
        if robot.floating_base:
            self.base_frame = self.model.getFrameId(robot.root_link, pin.FrameType.BODY)
        else:
            self.base_frame = robot.push_frame_id
        self.base_link = self.model.frames[self.base_frame].name
        joint = self.model.frames[self.base_frame].parentJoint
        #: the joints that carry the base (from the world), their velocity indices
        self.base_joints = [j for j in self.model.supports[joint] if j > 0]
        self._base_v = [i for j in self.base_joints
                        for i in range(self.model.idx_vs[j],
                                       self.model.idx_vs[j] + self.model.nvs[j])]
        self.base_joint_names = tuple(self.model.names[j] for j in self.base_joints)
        #: 1-DoF joints by name: (q index, v index) — what set_joint_state may change
        self._joints = {name: (q, v) for name, q, v, nq in zip(
            robot.joint_names, robot.joint_idx_q, robot.joint_idx_v, robot.joint_nq) if nq == 1}

    # -- the list ---------------------------------------------------------------------------------

    def infos(self) -> dict:
        """Return entity name -> :class:`EntityInfo`, the robot first."""
        return {
            self.robot_name: EntityInfo(
                CATEGORY_ROBOT, f'the simulated robot (URDF {self.robot_name!r}); base link '
                f'{self.base_link!r} moved by {list(self.base_joint_names)}; joints by the '
                f'companion service set_joint_state'),
            TERRAIN: EntityInfo(
                CATEGORY_STATIC_OBJECT, f'the {self._sim.config.terrain} terrain; changed through '
                f'the simulator parameters terrain, terrain_height_m, slope_deg, ...'),
        }

    def names(self, pattern: str = '', categories=(), tags=(), bounds_type: int = 0) -> list:
        """
        Return the entity names matching the filters of GetEntities.

        ``pattern``: a regular expression searched in the name (Python's ``re``: POSIX extended
        patterns as the standard writes them mostly mean the same), '' all; ``categories``: any
        of these (empty: all). Tags and bounds are not supported (no entity has tags; no
        bounds): a filter using them is refused with FEATURE_UNSUPPORTED.
        """
        if tags:
            raise EntityError(RESULT_FEATURE_UNSUPPORTED, 'entity tags are not supported (no '
                              'entity has tags): leave filters.tags empty')
        if bounds_type:
            raise EntityError(RESULT_FEATURE_UNSUPPORTED, 'bounds filters are not supported: '
                              'leave filters.bounds empty (TYPE_EMPTY)')
        if len(pattern) > MAX_FILTER_CHARS:
            raise EntityError(RESULT_OPERATION_FAILED, f'filters.filter is longer than '
                              f'{MAX_FILTER_CHARS} characters')
        try:
            regex = re.compile(pattern)
        except re.error as exc:
            raise EntityError(RESULT_OPERATION_FAILED,
                              f'filters.filter {pattern!r} is not a regular expression: '
                              f'{exc}') from None
        wanted = set(categories)
        return [name for name, info in self.infos().items()
                if regex.search(name) and (not wanted or info.category in wanted)]

    def check(self, name: str) -> None:
        """Raise EntityError (NOT_FOUND) naming the entities when ``name`` is none of them."""
        if name not in (self.robot_name, TERRAIN):
            raise EntityError(RESULT_NOT_FOUND, f'no entity {name!r}; entities: '
                              f'{[self.robot_name, TERRAIN]}')

    # -- states -----------------------------------------------------------------------------------

    def state(self, name: str, q, v) -> BaseState:
        """Return the state of entity ``name`` with the robot at (q, v)."""
        self.check(name)
        if name == TERRAIN:
            zero = np.zeros(3)
            return BaseState(self.frame_id, zero, np.array((0.0, 0.0, 0.0, 1.0)), zero, zero)
        pin = self._pin
        pin.forwardKinematics(self.model, self.data, np.asarray(q, float), np.asarray(v, float))
        placement = pin.updateFramePlacement(self.model, self.data, self.base_frame)
        twist = pin.getFrameVelocity(self.model, self.data, self.base_frame,
                                     pin.LOCAL_WORLD_ALIGNED)
        return BaseState(self.frame_id, np.array(placement.translation),
                         np.array(pin.Quaternion(placement.rotation).coeffs()),
                         np.array(twist.linear), np.array(twist.angular))

    def check_settable(self, name: str, frame_id: str) -> None:
        """
        Raise EntityError unless the state of ``name`` may be set in ``frame_id``.

        NOT_FOUND for an unknown entity, OPERATION_FAILED for the terrain (static: its
        parameters move it) and for a frame other than the fixed one.
        """
        self.check(name)
        if name == TERRAIN:
            raise EntityError(RESULT_OPERATION_FAILED, 'the terrain is static here: change it '
                              'through the simulator parameters (terrain, terrain_height_m, '
                              'slope_deg, step_edges_x_m, step_rises_m, sine_amplitude_m, '
                              'sine_wavelength_m)')
        if frame_id not in self.fixed_frames:
            raise EntityError(RESULT_OPERATION_FAILED, f'state.header.frame_id {frame_id!r}: '
                              f'give the state in the fixed frame ({self.frame_id!r}, or empty)')

    def with_base(self, name: str, frame_id: str, position, orientation_xyzw, linear, angular,
                  q, v) -> tuple:
        """
        Return (q, v) with the base of entity ``name`` at the given pose and twist.

        Only the base's supporting joints change. Raises EntityError: NOT_FOUND, OPERATION_FAILED
        (the terrain, another frame), INVALID_POSE (a bad quaternion, a pose or twist the base's
        joints cannot reach).
        """
        self.check_settable(name, frame_id)
        values = np.concatenate([np.asarray(x, float).reshape(-1) for x in
                                 (position, orientation_xyzw, linear, angular)])
        if values.shape != (13,) or not np.isfinite(values).all():
            raise EntityError(INVALID_POSE, 'the pose and twist need finite values')
        quaternion = values[3:7]
        norm = float(np.linalg.norm(quaternion))
        if not norm > 1e-6:
            raise EntityError(INVALID_POSE, f'orientation {quaternion.tolist()} is not a rotation '
                                            f'(a zero quaternion)')
        pin = self._pin
        x, y, z, w = quaternion / norm
        target = pin.SE3(pin.Quaternion(w, x, y, z).matrix(), values[:3])   # Eigen: w first
        q = self._reach_pose(target, np.array(q, float))
        v = self._reach_twist(values[7:10], values[10:13], q, np.array(v, float))
        return q, v

    def with_joints(self, joints: dict, q, v) -> tuple:
        """
        Return (q, v) with the named 1-DoF joints set: ``{name: (position, velocity or None)}``.

        Unnamed joints keep theirs; a velocity None keeps the joint's velocity. Raises
        EntityError (NOT_FOUND for an unknown or multi-DoF joint, OPERATION_FAILED for a
        non-finite value).
        """
        q, v = np.array(q, float), np.array(v, float)
        for name, (position, velocity) in joints.items():
            if name not in self._joints:
                raise EntityError(RESULT_NOT_FOUND, f'no 1-DoF joint {name!r}; joints: '
                                                    f'{sorted(self._joints)}')
            values = [position] + ([] if velocity is None else [velocity])
            if not all(isinstance(x, float) and math.isfinite(x) for x in values):
                raise EntityError(RESULT_OPERATION_FAILED, f'joint {name!r}: position and '
                                                           f'velocity must be finite numbers')
            iq, iv = self._joints[name]
            q[iq] = position
            if velocity is not None:
                v[iv] = velocity
        return q, v

    # -- solving for the base's joints ------------------------------------------------------------

    def _reach_pose(self, target, q) -> np.ndarray:
        pin, model, data = self._pin, self.model, self.data
        columns = self._base_v
        error = None
        for _ in range(MAX_ITERATIONS):
            pin.forwardKinematics(model, data, q)
            current = pin.updateFramePlacement(model, data, self.base_frame)
            error = pin.log6(current.actInv(target)).vector      # in the base's own axes
            if np.abs(error).max() <= REACH_TOLERANCE * 1e-3:
                break
            jacobian = pin.computeFrameJacobian(model, data, q, self.base_frame,
                                                pin.LOCAL)[:, columns]
            step, *_ = np.linalg.lstsq(jacobian, error, rcond=None)
            dq = np.zeros(model.nv)
            dq[columns] = step
            q = pin.integrate(model, q, dq)
        pin.forwardKinematics(model, data, q)
        reached = pin.updateFramePlacement(model, data, self.base_frame)
        miss = reached.actInv(target)
        distance = float(np.linalg.norm(miss.translation))
        angle = float(np.linalg.norm(pin.log3(miss.rotation)))
        if distance > REACH_TOLERANCE or angle > REACH_TOLERANCE:
            raise EntityError(INVALID_POSE, (
                f'the base link {self.base_link!r} cannot be put at that pose by its joints '
                f'{list(self.base_joint_names)}: the closest pose misses it by {distance:.3g} m '
                f'and {angle:.3g} rad (keep the coordinates those joints do not move: '
                f'GetEntityState gives them)'))
        return q

    def _reach_twist(self, linear, angular, q, v) -> np.ndarray:
        pin, model, data = self._pin, self.model, self.data
        columns = self._base_v
        jacobian = pin.computeFrameJacobian(model, data, q, self.base_frame,
                                            pin.LOCAL_WORLD_ALIGNED)
        wanted = np.concatenate((linear, angular))
        # the part of the base's twist the other joints give is zero: they are not its
        # ancestors; solve the supporting joints' velocities alone
        base = jacobian[:, columns]
        solution, *_ = np.linalg.lstsq(base, wanted, rcond=None)
        miss = float(np.abs(base @ solution - wanted).max())
        if miss > REACH_TOLERANCE * max(1.0, float(np.abs(wanted).max())):
            raise EntityError(INVALID_POSE, (
                f'the base link {self.base_link!r} cannot move with that twist: its joints '
                f'{list(self.base_joint_names)} reach it only to {miss:.3g} m/s or rad/s'))
        v = v.copy()
        v[columns] = solution
        return v


__all__ = ['BaseState', 'CATEGORY_ROBOT', 'CATEGORY_STATIC_OBJECT', 'Entities', 'EntityError',
           'EntityInfo', 'TERRAIN']
