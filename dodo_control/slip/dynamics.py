# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
The controller's own rigid-body terms, in the robot's task frame, evaluated once per tick.

Built from the URDF (masses and lengths come from there), on the controller's own
``pinocchio.Data``; the simulator's data is never touched.

The SLIP controller works in a 2-D **task frame** (horizontal, vertical) that each supported
robot provides (docs/control.md, "Task frame"); :func:`dodo_control.slip.task_frame.load_dynamics`
picks it from the model's joints:

* :class:`RobotDynamics` — the planar hopper (``base_x``, ``base_z``, ``hip``, ``knee``): the
  world x-z plane; the SLIP point is the CoG, the template mass and gravity are the total mass
  and the world gravity.
* :class:`dodo_control.slip.boom.BoomDynamics` — the boom-mounted leg (``boom_yaw`` about world z,
  ``boom_pitch``, ``hip``, ``knee``): the plane tangent to the boom circle at the current yaw;
  horizontal is the arc coordinate, the SLIP point is the hip, the template mass and gravity are
  the boom's effective mass and gravity there.

Notation (docs/control.md): ``M`` joint-space inertia, ``h = b + g`` nonlinear effects,
``J_s`` foot (support) jacobian, ``J_c`` SLIP-point (hopper: CoG) jacobian (2x4 each),
``dJs_v = J̇_s q̇``, ``dJc_v = J̇_c q̇``, ``S = [0 0 1 0; 0 0 0 1]`` the actuator selection.
``J_f`` / ``dJf_v`` are the foot's task-coordinate jacobian and drift (the flight law's foot
point); they equal ``J_s`` / ``dJs_v`` when the task frame does not turn with the robot (hopper).
"""
from __future__ import annotations

from dataclasses import dataclass

from dodo_sim.model import JOINT_NAMES, LegModel
from dodo_sim.physics.kernels.point_terms import pack_point_terms, point_terms, point_terms_size
import numpy as np
import pinocchio as pin

from .compiled import compiled

#: Actuator selection matrix S (hip, knee are coordinates 2 and 3 of q).
SELECTION = np.array([[0.0, 0.0, 1.0, 0.0],
                      [0.0, 0.0, 0.0, 1.0]])
_XZ = slice(0, 3, 2)   # rows x and z of a 3-D vector


def solve2(A: np.ndarray, b: np.ndarray) -> np.ndarray:
    """
    Solve the 2x2 system A x = b (explicit, much cheaper than np.linalg.solve at this size).

    Raises np.linalg.LinAlgError if A is singular to working precision.
    """
    a00, a01, a10, a11 = float(A[0, 0]), float(A[0, 1]), float(A[1, 0]), float(A[1, 1])
    det = a00 * a11 - a01 * a10
    scale = max(abs(a00 * a11), abs(a01 * a10), 1e-300)
    if abs(det) <= 1e-13 * scale:
        raise np.linalg.LinAlgError('singular 2x2 system')
    b0, b1 = float(b[0]), float(b[1])
    return np.array([(a11 * b0 - a01 * b1) / det, (a00 * b1 - a10 * b0) / det])


def inv2(A: np.ndarray) -> np.ndarray:
    """Inverse of a regular 2x2 matrix (explicit)."""
    a00, a01, a10, a11 = float(A[0, 0]), float(A[0, 1]), float(A[1, 0]), float(A[1, 1])
    det = a00 * a11 - a01 * a10
    if abs(det) <= 1e-13 * max(abs(a00 * a11), abs(a01 * a10), 1e-300):
        raise np.linalg.LinAlgError('singular 2x2 matrix')
    return np.array([[a11, -a01], [-a10, a00]]) / det


_FLOAT64 = np.dtype(np.float64)


def _compiled_layout(x) -> bool:
    """``x`` is a C-contiguous writable float64 ndarray (the compiled kernel's argument type)."""
    flags = getattr(x, 'flags', None)
    return (flags is not None and flags.c_contiguous and flags.writeable
            and x.dtype == _FLOAT64 and x.ndim == 1)


@dataclass(frozen=True)
class Terms:
    """
    Rigid-body terms at one (q, v).

    Arrays are fresh copies (safe to keep).
    """

    q: np.ndarray
    v: np.ndarray
    M: np.ndarray          # 4x4, kg / kg m^2
    Minv: np.ndarray       # 4x4
    h: np.ndarray          # 4, nonlinear effects b + g (N, N*m)
    g: np.ndarray          # 4, generalised gravity (N, N*m)
    Js: np.ndarray         # 2x4 foot jacobian
    Jc: np.ndarray         # 2x4 CoG jacobian
    dJs_v: np.ndarray      # 2, J̇_s q̇ (m/s^2)
    dJc_v: np.ndarray      # 2, J̇_c q̇ (m/s^2)
    foot: np.ndarray       # 2, foot position (m)
    com: np.ndarray        # 2, CoG position (m)
    com_vel: np.ndarray    # 2, CoG velocity (m/s)
    Jf: np.ndarray | None = None     # 2x4 foot task jacobian; None: equal to Js
    dJf_v: np.ndarray | None = None  # 2, J̇_f q̇; None: equal to dJs_v

    @property
    def foot_vel(self) -> np.ndarray:
        return (self.Js if self.Jf is None else self.Jf) @ self.v

    @property
    def foot_jacobian(self) -> np.ndarray:
        """J_f: the foot's task jacobian (the flight law's foot point)."""
        return self.Js if self.Jf is None else self.Jf

    @property
    def foot_drift(self) -> np.ndarray:
        """J̇_f q̇ (m/s^2)."""
        return self.dJs_v if self.dJf_v is None else self.dJf_v


#: The tick terms: one float64 array in the task frame (the layout the compiled tick reads).
#: Offsets of the SLIP point (``COM``: hopper CoG, boom leg hip) and foot positions (m) and
#: velocities (m/s), 2 each; J_c, J_s, J_f (2x4 row-major); M⁻¹ (4x4 row-major, symmetric);
#: M⁻¹ h (4); the drifts J̇_c q̇, J̇_s q̇, J̇_f q̇ (2 each, m/s^2).
COM, COM_VEL, FOOT, FOOT_VEL = 0, 2, 4, 6
JC, JS, JF = 8, 16, 24
MINV, MINV_H = 32, 48
DJC, DJS, DJF = 52, 54, 56
TERMS_SIZE = 58


def planar_terms(q, v, floats, ints, armature, raw, terms) -> bool:
    """
    Write the hopper's tick terms, from the compiled point terms, into ``terms``.

    ``raw`` receives :func:`dodo_sim.physics.kernels.point_terms.point_terms` (world x-y-z, nv =
    4), of which the x and z rows are the planar task frame's; J_f and J̇_f q̇ are J_s and J̇_s q̇.
    Returns False (``terms`` unchanged) if M is not positive definite.
    """
    if not point_terms(q, v, floats, ints, armature, raw):
        return False
    terms[COM], terms[COM + 1] = raw[0], raw[2]
    terms[COM_VEL], terms[COM_VEL + 1] = raw[3], raw[5]
    terms[DJC], terms[DJC + 1] = raw[6], raw[8]
    terms[FOOT], terms[FOOT + 1] = raw[9], raw[11]
    terms[FOOT_VEL], terms[FOOT_VEL + 1] = raw[12], raw[14]
    terms[DJS], terms[DJS + 1] = raw[15], raw[17]
    terms[DJF], terms[DJF + 1] = raw[15], raw[17]
    for c in range(4):
        terms[JC + c], terms[JC + 4 + c] = raw[18 + c], raw[26 + c]
        terms[JS + c], terms[JS + 4 + c] = raw[30 + c], raw[38 + c]
        terms[JF + c], terms[JF + 4 + c] = raw[30 + c], raw[38 + c]
        terms[MINV_H + c] = raw[58 + c]
    for k in range(16):
        terms[MINV + k] = raw[42 + k]
    return True


planar_terms = compiled(planar_terms)


def pack_terms(com, com_vel, foot, foot_vel, Jc, Js, Minv, Minv_h, dJc_v, dJs_v, Jf, dJf_v,
               out):
    """Write task-frame terms given as floats and rows (lists) into ``out`` (the layout)."""
    out[:] = [*com, *com_vel, *foot, *foot_vel, *Jc[0], *Jc[1], *Js[0], *Js[1], *Jf[0], *Jf[1],
              *Minv[0], *Minv[1], *Minv[2], *Minv[3], *Minv_h, *dJc_v, *dJs_v, *dJf_v]
    return out


class TickTerms:
    """
    The tick terms as plain Python floats (rows as lists), for reading.

    The per-tick subset of :class:`Terms` (same quantities and notation; ``Minv_h = M⁻¹ h``
    replaces ``h``, the law needs only that product; ``Jf`` / ``dJf_v`` equal ``Js`` /
    ``dJs_v`` when the task frame does not turn with the robot). ``values`` is the array the
    control tick reads (:data:`TERMS_SIZE`, offsets :data:`COM` ...).
    """

    __slots__ = ('values', 'com', 'com_vel', 'foot', 'foot_vel', 'Jc', 'Js', 'Jf', 'Minv',
                 'Minv_h', 'dJc_v', 'dJs_v', 'dJf_v')

    def __init__(self, values):
        self.values = values
        x = values.tolist()
        self.com, self.com_vel = (x[COM], x[COM + 1]), [x[COM_VEL], x[COM_VEL + 1]]
        self.foot, self.foot_vel = (x[FOOT], x[FOOT + 1]), [x[FOOT_VEL], x[FOOT_VEL + 1]]
        self.Jc = [x[JC:JC + 4], x[JC + 4:JC + 8]]
        self.Js = [x[JS:JS + 4], x[JS + 4:JS + 8]]
        self.Jf = [x[JF:JF + 4], x[JF + 4:JF + 8]]
        self.Minv = [x[MINV + 4 * r:MINV + 4 * r + 4] for r in range(4)]
        self.Minv_h = x[MINV_H:MINV_H + 4]
        self.dJc_v = (x[DJC], x[DJC + 1])
        self.dJs_v = (x[DJS], x[DJS + 1])
        self.dJf_v = (x[DJF], x[DJF + 1])


class RobotDynamics:
    """
    Evaluates :class:`Terms` on the controller's own pinocchio Data.

    The planar hopper, task frame = world x-z, SLIP point = CoG, template mass and gravity = total
    mass and world gravity.

    The task-frame interface (also of :class:`dodo_control.slip.boom.BoomDynamics`): ``terms``,
    ``tick_terms_into`` (``tick_terms``), ``com_and_foot``, ``posture_for_foot``, ``base_height``,
    ``table_q``,
    ``posture_offset``, ``impact_map``, ``mass`` / ``gravity`` / ``gravity_xz`` / ``weight`` (the
    SLIP template's), ``joint_names``, ``effort_limits``.
    """

    #: task frame name (docs/control.md)
    frame = 'planar_xz'
    #: (floats, ints, armature, raw) of :func:`planar_terms`, None when it is not in use
    compiled_buffers = None
    joint_names = JOINT_NAMES
    #: [hip, knee] start guess of posture searches (picks the knee branch), rad
    crouch_joints = (0.5, -1.0)

    def __init__(self, leg: LegModel):
        self.leg = leg
        self.model = leg.model
        self.data = leg.model.createData()
        self.mass = float(leg.total_mass)
        self.gravity = np.asarray(leg.gravity, dtype=float)  # [gx, gz] m/s^2
        self.gravity_xz = (float(self.gravity[0]), float(self.gravity[1]))
        self.weight = self.mass * abs(self.gravity_xz[1])     # m |g|, N
        self.effort_limits = tuple(float(x) for x in leg.effort_limits)  # hip, knee, N*m
        self._zero = np.zeros(self.model.nv)
        self.compiled_buffers = None
        self.use_compiled(True)

    def use_compiled(self, enabled: bool = True) -> bool:
        """
        Evaluate :meth:`tick_terms_into` with the compiled kernel.

        The kernel (:func:`planar_terms` on :func:`dodo_sim.physics.kernels.point_terms.
        point_terms`) makes one call instead of seven pinocchio calls and the list algebra. It is
        used when ``enabled`` and the model qualifies (numba installed, every joint 1-DoF);
        otherwise pinocchio evaluates the terms. Both give the same terms to rounding
        (unit-tested). Returns whether the compiled kernel is in use.
        """
        self.compiled_buffers = None
        # a task frame with its own terms (the boom leg) keeps its own evaluation
        if enabled and type(self).tick_terms_into is RobotDynamics.tick_terms_into:
            buffers = pack_point_terms(self.model, self.leg.foot_frame_id)
            if buffers is not None:
                # model.armature is a view of the model's own vector: the kernel sees the
                # controller's armature changes (Controller.reconfigure writes into it)
                self.compiled_buffers = buffers + (
                    self.model.armature, np.empty(point_terms_size(self.model.nv)))
                zero = np.zeros(self.model.nv)    # compile / load now, not in the first tick
                planar_terms(zero, zero.copy(), *self.compiled_buffers, np.empty(TERMS_SIZE))
        return self.compiled_buffers is not None

    @property
    def compiled(self) -> bool:
        """:meth:`tick_terms` runs the compiled kernel (see :meth:`use_compiled`)."""
        return self.compiled_buffers is not None

    def terms(self, q, v) -> Terms:
        model, data, fid = self.model, self.data, self.leg.foot_frame_id
        q = np.array(q, dtype=float)
        v = np.array(v, dtype=float)
        xz = _XZ
        # kinematics with zero acceleration: data.a holds the velocity-product (drift) terms
        com = pin.centerOfMass(model, data, q, v, self._zero)[xz].copy()
        com_vel = data.vcom[0][xz].copy()
        dJc_v = data.acom[0][xz].copy()
        foot = pin.updateFramePlacement(model, data, fid).translation[xz].copy()
        dJs_v = pin.getFrameClassicalAcceleration(model, data, fid,
                                                  pin.LOCAL_WORLD_ALIGNED).linear[xz].copy()
        Jc = pin.jacobianCenterOfMass(model, data, q)[xz].copy()
        Js = pin.computeFrameJacobian(model, data, q, fid, pin.LOCAL_WORLD_ALIGNED)[xz].copy()
        M = pin.crba(model, data, q).copy()
        if M[1, 0] != M[0, 1] or M[3, 2] != M[2, 3]:       # upper triangle only: symmetrise
            M = np.triu(M) + np.triu(M, 1).T
        Minv = pin.computeMinverse(model, data, q).copy()
        if Minv[3, 2] != Minv[2, 3]:
            Minv = np.triu(Minv) + np.triu(Minv, 1).T
        h = pin.nonLinearEffects(model, data, q, v).copy()
        g = pin.computeGeneralizedGravity(model, data, q).copy()
        return Terms(q=q, v=v, M=M, Minv=Minv, h=h, g=g, Js=Js, Jc=Jc,
                     dJs_v=dJs_v, dJc_v=dJc_v, foot=foot, com=com, com_vel=com_vel)

    def tick_terms(self, q, v) -> TickTerms:
        """:class:`TickTerms` at (q, v) (:meth:`tick_terms_into` a new array)."""
        return TickTerms(self.tick_terms_into(np.asarray(q, float), np.asarray(v, float),
                                              np.empty(TERMS_SIZE)))

    def tick_terms_into(self, q, v, out):
        """
        Write the tick terms at (q, v) into ``out`` (:data:`TERMS_SIZE` floats), the tick's path.

        One compiled call (:meth:`use_compiled`), else seven pinocchio calls and scalar algebra;
        equal to :meth:`terms` up to rounding (unit-tested). ``q`` / ``v``: float arrays.
        Returns ``out``.
        """
        # the kernel's compiled signature: contiguous writable float64 arrays (anything else
        # would compile a new specialisation, seconds, mid-run: it takes the pinocchio path)
        if self.compiled_buffers is not None and _compiled_layout(q) and _compiled_layout(v):
            floats, ints, armature, raw = self.compiled_buffers
            if planar_terms(q, v, floats, ints, armature, raw, out):
                return out
            # M not positive definite (a non-finite state): pinocchio's answer below
        model, data, fid = self.model, self.data, self.leg.foot_frame_id
        # kinematics with zero acceleration: data.a holds the velocity-product (drift) terms
        com = pin.centerOfMass(model, data, q, v, self._zero).tolist()
        acom = data.acom[0].tolist()
        foot = pin.updateFramePlacement(model, data, fid).translation.tolist()
        dJs = pin.getFrameClassicalAcceleration(model, data, fid,
                                                pin.LOCAL_WORLD_ALIGNED).linear.tolist()
        jc = pin.jacobianCenterOfMass(model, data, q).tolist()
        js = pin.computeFrameJacobian(model, data, q, fid, pin.LOCAL_WORLD_ALIGNED).tolist()
        minv = pin.computeMinverse(model, data, q).tolist()
        h = pin.nonLinearEffects(model, data, q, v).tolist()
        v0, v1, v2, v3 = v.tolist()
        m0, m1, m2, m3 = minv                   # symmetric: use the upper triangle (the one
        m1[0] = m0[1]                           # pinocchio always fills)
        m2[0], m2[1] = m0[2], m1[2]
        m3[0], m3[1], m3[2] = m0[3], m1[3], m2[3]
        Jc = [jc[0], jc[2]]
        Js = [js[0], js[2]]
        Minv_h = [r[0] * h[0] + r[1] * h[1] + r[2] * h[2] + r[3] * h[3] for r in minv]
        com_vel = [r[0] * v0 + r[1] * v1 + r[2] * v2 + r[3] * v3 for r in Jc]
        foot_vel = [r[0] * v0 + r[1] * v1 + r[2] * v2 + r[3] * v3 for r in Js]
        dJs_v = (dJs[0], dJs[2])
        return pack_terms((com[0], com[2]), com_vel, (foot[0], foot[2]), foot_vel, Jc, Js, minv,
                          Minv_h, (acom[0], acom[2]), dJs_v, Js, dJs_v, out)

    def base_height(self, q) -> float:
        """Height of the base above world z = 0 (hopper: the ``base_z`` coordinate), m."""
        return q[1]

    def table_q(self, q, slip_point_height: float) -> np.ndarray:
        """
        Return the configuration of the touchdown-posture table.

        The base is at the origin, the joint angles are the measured ones (they pick the knee
        branch); ``slip_point_height`` is not needed here.
        """
        return np.array([0.0, 0.0, q[2], q[3]])

    def posture_offset(self, terms: 'Terms') -> float:
        """SLIP point (CoG) height above the base at the table configuration, m."""
        return terms.com[1]

    def impact_map(self, terms: 'Terms', n_s: np.ndarray) -> np.ndarray:
        """
        Return the 2x2 touchdown velocity map of the SLIP point.

        It maps the SLIP point's velocity before a touchdown (joints at rest) to its velocity after
        it: the base columns of J_c N_s (the base moves the CoG one to one).
        """
        return (terms.Jc @ n_s)[:, :2]

    def world_points(self, q) -> tuple[np.ndarray, np.ndarray]:
        """SLIP point (CoG) and foot in world coordinates (3-D, m), e.g. for markers."""
        model, data = self.model, self.data
        com = pin.centerOfMass(model, data, np.asarray(q, float)).copy()
        return com, pin.updateFramePlacement(
            model, data, self.leg.foot_frame_id).translation.copy()

    def com_and_foot(self, q) -> tuple[np.ndarray, np.ndarray]:
        """Return the CoG and foot positions (world x-z, m) at q (kinematics only)."""
        model, data = self.model, self.data
        com = pin.centerOfMass(model, data, np.asarray(q, float))[_XZ].copy()
        foot = pin.updateFramePlacement(model, data, self.leg.foot_frame_id).translation[_XZ]
        return com, foot.copy()

    def stretched_leg_length(self) -> float:
        """Foot-to-CoG distance with the leg straight (hip = knee = 0), m."""
        com, foot = self.com_and_foot(np.zeros(self.model.nq))
        return float(np.linalg.norm(com - foot))

    def posture_for_foot(self, rel_foot, q_guess, iterations: int = 30,
                         tol: float = 1e-10) -> np.ndarray:
        """
        Joint angles [hip, knee] putting the foot at ``rel_foot`` (world x-z) from the CoG.

        Damped Newton from ``q_guess`` (keeps the knee branch of the guess). Raises ValueError if
        the point is out of reach.
        """
        q = np.array(q_guess, dtype=float)
        target = np.asarray(rel_foot, dtype=float)
        for _ in range(iterations):
            com, foot = self.com_and_foot(q)
            err = target - (foot - com)
            if float(err @ err) < tol * tol:
                return q[2:].copy()
            jac = (pin.computeFrameJacobian(self.model, self.data, q, self.leg.foot_frame_id,
                                            pin.LOCAL_WORLD_ALIGNED)[_XZ, 2:]
                   - pin.jacobianCenterOfMass(self.model, self.data, q)[_XZ, 2:])
            q[2:] += np.linalg.solve(jac.T @ jac + 1e-9 * np.eye(2), jac.T @ err)
        raise ValueError(f'no posture puts the foot at {target.tolist()} from the CoG')
