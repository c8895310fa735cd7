# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
Task frame of the boom-mounted leg (Ding & Ramos' hopping-leg rig).

It gives the terms for the SLIP controller in the plane tangent to the boom circle. Pure core, no
rclpy.

Robot (docs/robots.md): ``q = [boom_yaw, boom_pitch, hip, knee]``; ``boom_yaw`` turns about a
vertical axis (world z through the yaw joint), ``boom_pitch`` about a horizontal one, both
passive; the leg (hip, knee) swings in the plane perpendicular to the boom. The foot is a 3-D
point contact.

Task frame (docs/control.md, "Task frame"). With ψ = ``boom_yaw``, the horizontal unit vectors
``t = (−sin ψ, cos ψ, 0)`` (tangent: the way the hip moves when ψ grows) and
``n = (cos ψ, sin ψ, 0)`` (radial), and a point ``p`` (world, measured from the yaw axis):

* horizontal (arc) coordinate ``s(p) = R ψ + t·p − o``; ``R`` is the hip's distance from the
  yaw axis along the boom and ``o`` its tangential offset (``boom_radius_m``,
  ``boom_offset_m``), so the hip has ``s = R ψ``: its arc length on the circle of radius R.
  Differences of ``s`` at one instant are exact tangential offsets: the SLIP leg vector is the
  foot-to-hip vector projected on the tangent plane (its radial part is dropped).
* vertical coordinate ``z(p)`` = world z.
* jacobians and drifts are the exact derivatives of these coordinates:
  ``∂s/∂q = t·J_p + (R − n·p) e_ψ``,
  ``s̈ = (∂s/∂q) q̈ + t·a_p − 2 ψ̇ n·ṗ − ψ̇² t·p`` (``a_p`` the classical drift acceleration).

SLIP point = the hip (the origin of the first actuated joint). The whole rig's CoG sits near the
post (≈ 0.18 m from the yaw axis with the default rig), carried by the post's bearings, so it
does not obey a point-mass law; the hip does, to the extent the boom behaves like a point mass
there: the SLIP template's mass and gravity are the hip's effective values with the leg joints
locked, ``Λ = (J_p M_pp⁻¹ J_pᵀ)⁻¹`` (vertical entry) and ``g_eff = −J_p M_pp⁻¹ g_p`` (p: the
passive coordinates), evaluated with the boom level and the leg at the model's default posture
(default rig: 1.93 kg and −5.54 m/s²; the whole rig weighs 3.44 kg).

Support (stance constraint) rows: the foot's world tangential and vertical velocity, the
constraint of Ding & Ramos; the radial direction is free in that model. dodo_sim's contact is a
3-D Coulomb point contact, so the foot slides radially against friction instead
(docs/control.md, "Boom-mounted leg").
"""
from __future__ import annotations

import math

from dodo_sim.physics.robot import ModelError, RobotModel
import numpy as np
import pinocchio as pin

from .dynamics import inv2, pack_terms, RobotDynamics, Terms

_LWA = pin.LOCAL_WORLD_ALIGNED


def boom_layout_problem(robot: RobotModel) -> str | None:
    """
    Why ``robot`` is not a boom-mounted two-joint leg this module can control (None: it is).

    Needed: four 1-DoF joints ``[yaw, pitch, hip, knee]`` in this order, the first a revolute
    joint about world z (at q = 0), the second a revolute joint about a horizontal axis, both
    passive, the last two actuated, and a contact frame ``foot``.
    """
    model = robot.model
    if model.nq != 4 or model.nv != 4 or len(robot.joint_names) != 4:
        return f'needs 4 one-DoF joints, got {list(robot.joint_names)} (nq={model.nq})'
    if tuple(robot.actuated_idx_v) != (2, 3):
        return (f'needs the 3rd and 4th joints actuated, got {list(robot.actuated_joint_names)} '
                f'of {list(robot.joint_names)}')
    data = model.createData()
    jac = pin.computeJointJacobians(model, data, np.zeros(4))
    axes = jac[3:, :2]                    # world angular velocity of the first two joints
    if np.abs(axes[:, 0] - np.array([0.0, 0.0, 1.0])).max() > 1e-9:
        return f"joint '{robot.joint_names[0]}' must turn about world +z"
    if abs(axes[2, 1]) > 1e-9 or np.linalg.norm(axes[:, 1]) < 1e-9:
        return f"joint '{robot.joint_names[1]}' must turn about a horizontal axis"
    if not model.existFrame('foot'):
        return "needs the contact frame 'foot'"
    return None


class BoomDynamics(RobotDynamics):
    """
    :class:`dodo_control.slip.dynamics.RobotDynamics` interface for the boom-mounted leg (module.

    docstring: the task frame, the SLIP point and the template).
    """

    frame = 'boom'

    def __init__(self, robot: RobotModel):  # noqa: D107 - the base __init__ is the hopper's
        problem = boom_layout_problem(robot)
        if problem is None and robot.contact_frames[:1] != ('foot',):
            problem = "the first contact frame must be 'foot'"
        if problem:
            raise ModelError(f'not a boom-mounted leg: {problem}')
        self.leg = robot
        self.model = robot.model
        self.data = robot.model.createData()
        self.joint_names = tuple(robot.joint_names)
        self.effort_limits = tuple(float(x) for x in robot.effort_limits)
        self._zero = np.zeros(4)
        model, data = self.model, self.data
        hip_joint = model.getJointId(robot.actuated_joint_names[0])
        self._hip_frame = next(i for i, f in enumerate(model.frames)
                               if f.type == pin.FrameType.JOINT and f.parentJoint == hip_joint)
        self._foot_frame = robot.foot_frame_id
        # the yaw axis (world) and the hip's radius R and tangential offset o at q = 0
        pin.forwardKinematics(model, data, np.zeros(4))
        axis = data.oMi[model.getJointId(robot.joint_names[0])].translation
        self._axis = (float(axis[0]), float(axis[1]))
        hip = data.oMi[hip_joint].translation
        self.radius_m = float(hip[0] - axis[0])
        self.offset_m = float(hip[1] - axis[1])
        if not self.radius_m > 0.0:
            raise ModelError(f'boom: the hip must lie on +x from the yaw axis at q = 0, got '
                             f'{self.radius_m:.4f} m')
        self._neutral_legs = np.array(robot.default_q[2:], dtype=float)
        self.crouch_joints = tuple(float(x) for x in self._neutral_legs)
        # SLIP template: effective mass and gravity of the hip, leg locked, boom level
        terms = self.terms(np.concatenate(([0.0, 0.0], self._neutral_legs)), np.zeros(4))
        jp = terms.Jc[:, :2]
        mpp_inv_jt = np.linalg.solve(terms.M[:2, :2], jp.T)
        lam = inv2(jp @ mpp_inv_jt)
        g_eff = -jp @ np.linalg.solve(terms.M[:2, :2], terms.g[:2])
        self.mass = float(lam[1, 1])
        self.gravity_xz = (0.0, float(g_eff[1]))
        self.gravity = np.array(self.gravity_xz)
        self.weight = self.mass * abs(self.gravity_xz[1])
        if not (self.mass > 0.0 and self.gravity_xz[1] < 0.0):
            raise ModelError(f'boom: effective hip mass {self.mass:.4f} kg and gravity '
                             f'{self.gravity_xz[1]:.4f} m/s^2 make no SLIP template')

    # -- evaluation ------------------------------------------------------------------------

    def _kinematics(self, q, v):
        """
        Pinocchio calls shared by both evaluations.

        They give the positions, world jacobians (3x4 rows as lists) and classical drift
        accelerations of the hip and the foot.
        """
        model, data = self.model, self.data
        pin.computeJointJacobians(model, data, q)
        pin.forwardKinematics(model, data, q, v, self._zero)
        out = []
        for fid in (self._hip_frame, self._foot_frame):
            pos = pin.updateFramePlacement(model, data, fid).translation.tolist()
            jac = pin.getFrameJacobian(model, data, fid, _LWA)[:3].tolist()
            acc = pin.getFrameClassicalAcceleration(model, data, fid, _LWA).linear.tolist()
            out.append((pos, jac, acc))
        return out

    def _task_point(self, pos, jac, acc, psi, c, s, v):
        """Task position, velocity, jacobian rows and drift of one point (scalar arithmetic)."""
        v0, v1, v2, v3 = v
        jx, jy, jz = jac
        px, py = pos[0] - self._axis[0], pos[1] - self._axis[1]
        rad = c * px + s * py                                  # n·p
        tan = -s * px + c * py                                 # t·p
        vx = jx[0] * v0 + jx[1] * v1 + jx[2] * v2 + jx[3] * v3
        vy = jy[0] * v0 + jy[1] * v1 + jy[2] * v2 + jy[3] * v3
        vz = jz[0] * v0 + jz[1] * v1 + jz[2] * v2 + jz[3] * v3
        world_t = [-s * a + c * b for a, b in zip(jx, jy)]      # t·J (the support row)
        row_s = list(world_t)
        row_s[0] += self.radius_m - rad
        drift_t = -s * acc[0] + c * acc[1]
        drift_s = drift_t - 2.0 * v0 * (c * vx + s * vy) - v0 * v0 * tan
        pos_s = self.radius_m * psi + tan - self.offset_m
        vel_s = row_s[0] * v0 + row_s[1] * v1 + row_s[2] * v2 + row_s[3] * v3
        return ((pos_s, pos[2]), [vel_s, vz], [row_s, list(jz)], (drift_s, acc[2]),
                [world_t, list(jz)], (drift_t, acc[2]))

    def tick_terms_into(self, q, v, out):
        """
        Write the tick terms in the boom's task frame into ``out`` (:data:`.dynamics.TERMS_SIZE`).

        The SLIP point (``COM``) is the hip, ``JS`` the foot's support rows (world tangential,
        vertical), ``JF`` its task rows. Returns ``out``.
        """
        (hp, hj, ha), (fp, fj, fa) = self._kinematics(q, v)
        model, data = self.model, self.data
        minv = pin.computeMinverse(model, data, q).tolist()
        h = pin.nonLinearEffects(model, data, q, v).tolist()
        m0, m1, m2, m3 = minv
        m1[0] = m0[1]
        m2[0], m2[1] = m0[2], m1[2]
        m3[0], m3[1], m3[2] = m0[3], m1[3], m2[3]
        qs, vs = q.tolist(), v.tolist()
        psi = qs[0]
        c, s = math.cos(psi), math.sin(psi)
        com, com_vel, jc, djc, _, _ = self._task_point(hp, hj, ha, psi, c, s, vs)
        foot, foot_vel, jf, djf, js, djs = self._task_point(fp, fj, fa, psi, c, s, vs)
        minv_h = [r[0] * h[0] + r[1] * h[1] + r[2] * h[2] + r[3] * h[3] for r in minv]
        return pack_terms(com, com_vel, foot, foot_vel, jc, js, minv, minv_h, djc, djs, jf, djf,
                          out)

    def terms(self, q, v) -> Terms:
        q = np.array(q, dtype=float)
        v = np.array(v, dtype=float)
        (hp, hj, ha), (fp, fj, fa) = self._kinematics(q, v)
        psi = float(q[0])
        c, s = math.cos(psi), math.sin(psi)
        vs = v.tolist()
        com, com_vel, jc, djc, _, _ = self._task_point(hp, hj, ha, psi, c, s, vs)
        foot, _, jf, djf, js, djs = self._task_point(fp, fj, fa, psi, c, s, vs)
        model, data = self.model, self.data
        M = pin.crba(model, data, q).copy()
        M = np.triu(M) + np.triu(M, 1).T
        Minv = pin.computeMinverse(model, data, q).copy()
        Minv = np.triu(Minv) + np.triu(Minv, 1).T
        h = pin.nonLinearEffects(model, data, q, v).copy()
        g = pin.computeGeneralizedGravity(model, data, q).copy()
        return Terms(q=q, v=v, M=M, Minv=Minv, h=h, g=g, Js=np.array(js), Jc=np.array(jc),
                     dJs_v=np.array(djs), dJc_v=np.array(djc), foot=np.array(foot),
                     com=np.array(com), com_vel=np.array(com_vel), Jf=np.array(jf),
                     dJf_v=np.array(djf))

    # -- geometry --------------------------------------------------------------------------

    def com_and_foot(self, q) -> tuple[np.ndarray, np.ndarray]:
        """Hip (SLIP point) and foot in task coordinates (arc m, height m) at q."""
        q = np.asarray(q, dtype=float)
        model, data = self.model, self.data
        pin.forwardKinematics(model, data, q)
        return tuple(self.task_coordinates(q[0], pin.updateFramePlacement(model, data,
                                                                          fid).translation)
                     for fid in (self._hip_frame, self._foot_frame))

    def task_coordinates(self, boom_yaw: float, point) -> np.ndarray:
        """Task coordinates (arc m, height m) of a world point at this boom yaw (rad)."""
        psi = float(boom_yaw)
        c, s = math.cos(psi), math.sin(psi)
        px, py = point[0] - self._axis[0], point[1] - self._axis[1]
        return np.array([self.radius_m * psi - s * px + c * py - self.offset_m, float(point[2])])

    def world_points(self, q) -> tuple[np.ndarray, np.ndarray]:
        """Hip (SLIP point) and foot in world coordinates (3-D, m), e.g. for markers."""
        pin.forwardKinematics(self.model, self.data, np.asarray(q, dtype=float))
        return tuple(pin.updateFramePlacement(self.model, self.data, fid).translation.copy()
                     for fid in (self._hip_frame, self._foot_frame))

    def base_height(self, q) -> float:
        """Hip height above world z = 0, m."""
        pin.forwardKinematics(self.model, self.data, np.asarray(q, dtype=float))
        return float(pin.updateFramePlacement(self.model, self.data,
                                              self._hip_frame).translation[2])

    def pitch_for_hip_height(self, height_m: float, legs=(0.0, 0.0)) -> float:
        """Boom pitch putting the hip ``height_m`` above world z = 0 (Newton), rad."""
        q = np.array([0.0, 0.0, float(legs[0]), float(legs[1])])
        for _ in range(20):
            pin.computeJointJacobians(self.model, self.data, q)
            err = height_m - pin.updateFramePlacement(self.model, self.data,
                                                      self._hip_frame).translation[2]
            if abs(err) < 1e-12:
                break
            slope = pin.getFrameJacobian(self.model, self.data, self._hip_frame, _LWA)[2, 1]
            q[1] = float(np.clip(q[1] + err / slope, -1.2, 1.2))
        return float(q[1])

    def table_q(self, q, slip_point_height: float) -> np.ndarray:
        """
        Touchdown-posture table configuration.

        Yaw is 0, the boom is pitched so the hip is ``slip_point_height`` above the ground, and the
        joint angles are the measured ones.
        """
        pitch = self.pitch_for_hip_height(slip_point_height, (q[2], q[3]))
        return np.array([0.0, pitch, q[2], q[3]])

    def posture_offset(self, terms: Terms) -> float:
        """Return the SLIP point is the base (hip): no offset."""
        return 0.0

    def impact_map(self, terms: Terms, n_s: np.ndarray) -> np.ndarray:
        """
        Hip velocity after a touchdown (leg joints at rest before it) from the one before.

        The map is (J_c N_s)[:, :2] (J_c[:, :2])⁻¹ (the boom joints carry the hip).
        """
        return (terms.Jc @ n_s)[:, :2] @ inv2(terms.Jc[:, :2])

    def stretched_leg_length(self) -> float:
        """Hip-to-foot distance with the leg straight, m."""
        com, foot = self.com_and_foot(np.zeros(4))
        return float(np.linalg.norm(com - foot))

    def posture_for_foot(self, rel_foot, q_guess, iterations: int = 30,
                         tol: float = 1e-10) -> np.ndarray:
        """
        Joint angles [hip, knee] putting the foot at ``rel_foot`` (task frame) from the hip.

        The boom angles are those of ``q_guess``. Raises ValueError if out of reach.
        """
        q = np.array(q_guess, dtype=float)
        target = np.asarray(rel_foot, dtype=float)
        zero = np.zeros(4)
        for _ in range(iterations):
            terms = self.terms(q, zero)
            err = target - (terms.foot - terms.com)
            if float(err @ err) < tol * tol:
                return q[2:].copy()
            jac = terms.Jf[:, 2:] - terms.Jc[:, 2:]
            q[2:] += np.linalg.solve(jac.T @ jac + 1e-9 * np.eye(2), jac.T @ err)
        raise ValueError(f'no posture puts the foot at {target.tolist()} from the hip')


__all__ = ['BoomDynamics', 'boom_layout_problem']
