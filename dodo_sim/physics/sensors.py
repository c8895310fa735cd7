# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
What the robot's sensors read: joint encoders, foot force sensors and an IMU (no rclpy).

:class:`SensorModel` turns a simulator :class:`~dodo_sim.physics.simulator.State` (the ground
truth) into what the sensors measure, once per state, for both the offline
:func:`dodo_sim.rollout.rollout` and the simulator node (``docs/ros_contract.md``, "Sensors"),
so that a rollout and a ROS run with the same ``SimConfig`` see the same numbers bit for bit.
Its parameters are ``SimConfig`` fields (units and bounds there, ``docs/parameters.md``); every
one defaults to an ideal sensor, and a model whose sensors are all ideal and that has no IMU
returns the state itself (:attr:`SensorModel.passthrough`).

Channels (each an array of n components; :class:`NoiseChannel`):

* joint positions and velocities of the 1-DoF joints (``/joint_states``; a floating base's free
  flyer is ground truth on ``odom``, never altered), one value for every joint or one per joint;
* contact forces: each contact frame's world force [fx, fy, fz] (``/<frame>_contact``);
* IMU angular velocity, linear acceleration (specific force) and orientation error (rad, a
  rotation vector applied in the IMU's own axes).

A channel's reading at step k is ``x_k + (b + w_k + sigma n_k)``, then rounded to a multiple of
its resolution: b the constant bias, w the bias random walk (``w_0 = 0``, ``w_{k+1} = w_k +
sigma_w sqrt(T) m_k``, sigma_w per sqrt(s), T the control period), n_k and m_k standard normal
draws. A sensor (joint states, contact forces, IMU) may report the reading taken ``latency``
control periods earlier (the first reading until there are older ones).

Determinism: each channel draws from its own stream, ``numpy.random.Generator(PCG64(
SeedSequence([sensor_seed, channel id])))``, exactly 2n normals per measured state while it is
noisy (whatever sigma is; drawn 256 steps at a time), so a reading is a function of (seed,
channel, step index, truth) and never of wall time or message arrival; changing one channel's
parameters changes no other channel, and scaling sigma scales the same draws. The step index
counts the states measured by this model: the rollout and the simulator node measure every
state once, in order.

IMU (``imu_link``; default: the root link of a floating base, none for a robot attached to the
world): orientation of the link frame in the world (REP-145), angular velocity of the link in
its own axes (pinocchio ``LOCAL``, exact at the state), and the specific force in its own axes,
``f_k = R_k^T (a_k - g)``, where ``a_k = (pdot_k - pdot_{k-1}) / T`` is the mean acceleration of
the link origin over the control period that ended at the state (world-frame linear velocity of
the origin, pinocchio ``LOCAL_WORLD_ALIGNED``), R_k its orientation at the state and g the
model's gravity. The mean over the period is exact for any motion, impacts included (the
velocity jump of an impact divided by T: what an accelerometer sampled with a one-period boxcar
filter reads); it is not the instantaneous acceleration. At rest it reads ``R^T (0, 0, +|g|)``:
+|g| along the body's up axis. The first state, and a state that does not follow the previous
one by exactly one period (a reset), have ``a = 0``.
"""
from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
import pinocchio as pin

from .sim_config import IMU_AUTO, IMU_NONE
from .simulator import total_force_and_foot

#: Stream id of each channel in the seed sequence [sensor_seed, id] (never renumber: bags of a
#: seed would change).
JOINT_POSITION, JOINT_VELOCITY, CONTACT_FORCE = 1, 2, 3
IMU_ANGULAR_VELOCITY, IMU_LINEAR_ACCELERATION, IMU_ORIENTATION = 4, 5, 6
#: Steps of noise a channel draws at once (never change: bags of a seed would change).
BLOCK_STEPS = 256


class ImuSample(NamedTuple):
    """One IMU reading: the link frame's orientation, rates and specific force."""

    orientation_xyzw: np.ndarray        # (4,) unit quaternion x, y, z, w: link frame in world
    angular_velocity: np.ndarray        # (3,) rad/s, link axes
    linear_acceleration: np.ndarray     # (3,) m/s^2, specific force in link axes

    def row(self) -> np.ndarray:
        """Return the 10 numbers as one row: orientation xyzw, angular velocity, acceleration."""
        return np.concatenate((self.orientation_xyzw, self.angular_velocity,
                               self.linear_acceleration))


class Sensed(NamedTuple):
    """What the sensors read at one state."""

    state: object                       # the measured State (q, v, contact forces replaced)
    imu: ImuSample | None = None        # measured IMU reading (None: no IMU)
    imu_truth: ImuSample | None = None  # the exact IMU quantities at the state


class NoiseChannel:
    """
    One measured quantity of n components: bias, bias random walk, white noise, resolution.

    ``noise`` (sigma), ``bias``, ``bias_walk`` (sigma per sqrt(s)) and ``resolution`` (least
    significant bit; 0: none) are scalars or n-vectors; ``period`` is the control period, s. The
    reading at step k is ``round((truth + offset_k) / lsb) * lsb`` with ``offset_k = bias + w_k +
    sigma n_k`` (module docs); the offsets are drawn :data:`BLOCK_STEPS` steps at a time (one
    numpy call instead of one per step: the same stream, a fraction of the cost).
    """

    def __init__(self, n: int, *, noise=0.0, bias=0.0, bias_walk=0.0, resolution=0.0,
                 period: float, seed: int, stream: int):
        def vector(value):
            return np.broadcast_to(np.asarray(value, dtype=float), (n,)).copy()

        self.n = n
        self.noise = vector(noise)
        self.bias = vector(bias)
        self.walk_step = vector(bias_walk) * math.sqrt(period)
        self.resolution = vector(resolution)
        self.noisy = bool(self.noise.any() or self.walk_step.any())
        self.biased = bool(self.bias.any())
        self.quantised = bool(self.resolution.any())
        self.active = self.noisy or self.biased or self.quantised
        self.walk = np.zeros(n)             # w of the next block's first step
        self._rng = np.random.Generator(np.random.PCG64(np.random.SeedSequence([seed, stream])))
        self._offsets = np.empty((0, n))
        self._next = 0
        # division by 1 where a component is not quantised: its value passes unchanged
        self._lsb = np.where(self.resolution > 0.0, self.resolution, 1.0)
        self._keep = self.resolution <= 0.0

    def read(self, truth) -> np.ndarray:
        """Return the reading of ``truth`` (n values) at the next step and advance the stream."""
        if self.noisy:
            if self._next == len(self._offsets):
                self._draw_block()
            value = truth + self._offsets[self._next]
            self._next += 1
        elif self.biased:
            value = truth + self.bias
        else:
            value = np.array(truth, dtype=float)
        if self.quantised:
            value = np.where(self._keep, value, np.round(value / self._lsb) * self._lsb)
        return value

    def _draw_block(self) -> None:
        """Draw the offsets of the next BLOCK_STEPS steps (2n normals per step, in order)."""
        n = self.n
        draws = self._rng.standard_normal((BLOCK_STEPS, 2, n))
        walk = np.empty((BLOCK_STEPS + 1, n))
        walk[0] = self.walk
        np.multiply(self.walk_step, draws[:, 1], out=walk[1:])
        np.add.accumulate(walk, axis=0, out=walk)   # w_{k+1} = w_k + sigma_w sqrt(T) m_k
        self.walk = walk[-1].copy()
        self._offsets = self.bias + walk[:-1] + self.noise * draws[:, 0]
        self._next = 0

    def variance(self) -> np.ndarray:
        """Per component: white-noise variance plus the quantisation's lsb^2/12 (covariances)."""
        return self.noise ** 2 + self.resolution ** 2 / 12.0


class DelayLine:
    """Return what was pushed ``periods`` pushes ago (the first value until there is one)."""

    def __init__(self, periods: int):
        self.periods = int(periods)
        self._ring: list = []
        self._next = 0

    def push(self, value):
        """Store ``value``; return the value of ``periods`` pushes ago."""
        if self.periods == 0:
            return value
        ring = self._ring
        if not ring:
            ring.extend([value] * (self.periods + 1))
        ring[self._next] = value
        self._next = (self._next + 1) % len(ring)
        return ring[self._next]


class SensorModel:
    """
    The sensors of one simulated robot (see the module docs).

    ``robot``: :class:`dodo_sim.physics.robot.RobotModel`; ``config``: its ``SimConfig`` (the
    ``sensor_seed``, ``joint_*``, ``contact_force_*`` and ``imu_*`` fields). A per-joint field
    with a wrong number of values, or an ``imu_link`` that is no link of the robot, raises
    ValueError naming it.
    """

    def __init__(self, robot, config):
        cfg = config
        period, seed = cfg.control_period, cfg.sensor_seed
        self.control_period = period
        joints = [i for i, name in enumerate(robot.joint_names)
                  if robot.joint_nq[i] == 1 and robot.joint_nv[i] == 1]
        #: the 1-DoF joints the encoders measure (``/joint_states``), in q order
        self.joint_names = tuple(robot.joint_names[i] for i in joints)
        self._idx_q = np.array([robot.joint_idx_q[i] for i in joints], dtype=int)
        self._idx_v = np.array([robot.joint_idx_v[i] for i in joints], dtype=int)
        n = len(joints)

        def per_joint(name):
            values = tuple(getattr(cfg, name))
            if len(values) not in (0, 1, n):
                raise ValueError(f'SimConfig.{name} = {list(values)}: needs no value, one for '
                                 f'every joint or one per joint {list(self.joint_names)}')
            return values if values else 0.0

        def channel(size, stream, prefix, value=lambda name: getattr(cfg, name),
                    resolution=True):
            return NoiseChannel(
                size, noise=value(prefix + '_noise'), bias=value(prefix + '_bias'),
                bias_walk=value(prefix + '_bias_walk'),
                resolution=value(prefix + '_resolution') if resolution else 0.0,
                period=period, seed=seed, stream=stream)

        self.joint_position = channel(n, JOINT_POSITION, 'joint_position', per_joint)
        self.joint_velocity = channel(n, JOINT_VELOCITY, 'joint_velocity', per_joint)
        self._joint_delay = DelayLine(cfg.joint_state_latency)
        self.n_contacts = len(robot.contact_frames)
        self.contact_force = channel(3 * self.n_contacts, CONTACT_FORCE, 'contact_force')
        self._contact_delay = DelayLine(cfg.contact_force_latency)
        #: joint states and contact forces are exact and undelayed
        self.joints_ideal = not (self.joint_position.active or self.joint_velocity.active
                                 or cfg.joint_state_latency)
        self.contacts_ideal = not (self.contact_force.active or cfg.contact_force_latency)

        self.imu_link = imu_link(robot, cfg.imu_link)
        self.imu_ideal = True
        if self.imu_link is not None:
            self.angular_velocity = channel(3, IMU_ANGULAR_VELOCITY, 'imu_angular_velocity')
            self.linear_acceleration = channel(3, IMU_LINEAR_ACCELERATION,
                                               'imu_linear_acceleration')
            self.orientation = channel(3, IMU_ORIENTATION, 'imu_orientation',
                                       resolution=False)
            self._imu_delay = DelayLine(cfg.imu_latency)
            self.imu_ideal = not (self.angular_velocity.active
                                  or self.linear_acceleration.active
                                  or self.orientation.active or cfg.imu_latency)
            self._imu = _ImuKinematics(robot, self.imu_link, period)
        #: no sensor alters anything and there is no IMU: :meth:`measure` returns the state
        self.passthrough = self.joints_ideal and self.contacts_ideal and self.imu_link is None

    @classmethod
    def of(cls, sim) -> 'SensorModel':
        """Return the sensor model of simulator ``sim`` (its robot and config)."""
        return cls(sim.robot, sim.config)

    def measure(self, state) -> Sensed:
        """Return what the sensors read at ``state`` (the next step of every stream)."""
        if self.passthrough:
            return Sensed(state)
        changes = {}
        if not self.joints_ideal:
            q, v = state.q, state.v
            position = self.joint_position.read(q[self._idx_q]) \
                if self.joint_position.active else q[self._idx_q]
            velocity = self.joint_velocity.read(v[self._idx_v]) \
                if self.joint_velocity.active else v[self._idx_v]
            position, velocity = self._joint_delay.push((position, velocity))
            q, v = q.copy(), v.copy()
            q[self._idx_q] = position
            v[self._idx_v] = velocity
            changes.update(q=q, v=v)
        if not self.contacts_ideal:
            forces = state.contact_forces
            if self.contact_force.active:
                forces = self.contact_force.read(forces.reshape(-1)).reshape(forces.shape)
            forces = self._contact_delay.push(forces)
            changes.update(contact_forces=forces,
                           contact_force=total_force_and_foot(forces, state.foot_positions)[0])
        measured = state._replace(**changes) if changes else state
        if self.imu_link is None:
            return Sensed(measured)
        truth = self._imu(state)
        imu = truth if self.imu_ideal else self._imu_delay.push(self._read_imu(truth))
        return Sensed(measured, imu, truth)

    def imu_variances(self) -> tuple:
        """Return the (orientation, angular velocity, acceleration) variance vectors (3 each)."""
        return (self.orientation.variance(), self.angular_velocity.variance(),
                self.linear_acceleration.variance())

    def _read_imu(self, truth: ImuSample) -> ImuSample:
        orientation = truth.orientation_xyzw
        if self.orientation.active:
            error = self.orientation.read(np.zeros(3))
            rotation = pin.Quaternion(*_wxyz(orientation)).toRotationMatrix() @ pin.exp3(error)
            orientation = np.array(pin.Quaternion(rotation).coeffs())
        rate = truth.angular_velocity
        if self.angular_velocity.active:
            rate = self.angular_velocity.read(rate)
        acceleration = truth.linear_acceleration
        if self.linear_acceleration.active:
            acceleration = self.linear_acceleration.read(acceleration)
        return ImuSample(orientation, rate, acceleration)


def imu_link(robot, setting: str) -> str | None:
    """
    Return the link of the IMU for ``SimConfig.imu_link`` = ``setting``, or None.

    'auto': the root link of a floating base, none otherwise; 'none': none; else that link
    (ValueError if the robot has no such link).
    """
    if setting == IMU_NONE:
        return None
    if setting == IMU_AUTO:
        return robot.root_link if robot.floating_base else None
    model = robot.model
    links = [f.name for f in model.frames if f.type == pin.FrameType.BODY]
    if setting not in links:
        raise ValueError(f"SimConfig.imu_link = '{setting}': not a link of the robot "
                         f"('{IMU_AUTO}', '{IMU_NONE}' or one of {links})")
    return setting


def _wxyz(xyzw):
    x, y, z, w = (float(c) for c in xyzw)
    return w, x, y, z


class _ImuKinematics:
    """The exact IMU quantities of one link frame at a state (module docs: the definitions)."""

    def __init__(self, robot, link: str, period: float):
        self.model = robot.model
        self.data = self.model.createData()
        self.frame = self.model.getFrameId(link, pin.FrameType.BODY)
        self.period = period
        self.gravity = np.array(self.model.gravity.linear, dtype=float)
        self._previous = None       # (t, world linear velocity of the frame origin)

    def __call__(self, state) -> ImuSample:
        model, data, frame = self.model, self.data, self.frame
        pin.forwardKinematics(model, data, state.q, state.v)
        rotation = pin.updateFramePlacement(model, data, frame).rotation
        rate = np.array(pin.getFrameVelocity(model, data, frame, pin.LOCAL).angular)
        velocity = np.array(pin.getFrameVelocity(model, data, frame,
                                                 pin.LOCAL_WORLD_ALIGNED).linear)
        previous = self._previous
        # the step before: exactly one period earlier (else the first state, or a reset)
        if previous is not None and abs(state.t - previous[0] - self.period) <= \
                1e-9 * self.period:
            acceleration = (velocity - previous[1]) / self.period
        else:
            acceleration = np.zeros(3)
        self._previous = (state.t, velocity)
        specific_force = rotation.T @ (acceleration - self.gravity)
        return ImuSample(np.array(pin.Quaternion(rotation).coeffs()), rate, specific_force)


__all__ = ['SensorModel', 'Sensed', 'ImuSample', 'NoiseChannel', 'DelayLine', 'imu_link']
