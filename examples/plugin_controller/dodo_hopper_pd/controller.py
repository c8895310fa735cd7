# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
A hopping controller of a planar leg from a third-party package: virtual spring + thrust, Raibert.

The leg is seen as a virtual leg from the hip to the foot (length l, unit vector u from the foot
to the hip), after M. H. Raibert, "Legged Robots that Balance" (MIT Press, 1986), chapter 2:

* **stance** (the foot's vertical contact force above ``contact_threshold_n``): the leg pushes
  along itself like a spring with damping, plus a constant thrust while it extends,
  ``F = max(0, k (l0 - l) - d dl/dt + thrust [dl/dt > 0])``; the ground reaction ``F u`` comes
  from the joint torques ``tau = -J^T F u`` (J: the foot's position relative to the hip over the
  actuated joints);
* **flight**: a PD on the foot's position relative to the hip, ``tau = J^T (kp (p* - p) - kd
  dp/dt)``, towards the touchdown point of Raibert's foot placement, ahead of the centre of mass
  by ``x* = v Ts / 2 + k_v (v - v*) + b`` at leg length l0 (v: the centre of mass's horizontal
  speed, constant in flight; ``Ts``: the last stance's duration; b: a per-hop integral of the
  speed error at liftoff, ``b += k_i (v - v*)``: the thrust makes the stance asymmetric, so the
  neutral point is not exactly ``v Ts / 2``).

The thrust sets the hop height, the foot placement the speed. It reads what a real leg measures:
the joints' positions and velocities (the passive base joints of the hopper's boom included) and
the foot's force sensor, never the simulator's state. Its model is its own, built with pinocchio
from the robot description it is given.
"""
from __future__ import annotations

from dataclasses import dataclass
import math

from dodo_sim.model import robot_description_xml
from dodo_sim.parameter import bounded, check_fields
import numpy as np
import pinocchio as pin


@dataclass(frozen=True)
class HopperPDConfig:
    """
    Parameters of the hop law (each one a ROS parameter of the controller node).

    Fields:
        contact_frames: the foot, the one contact frame (the simulator's ``contact_frames``).
        hip_joint: the actuated joint at the hip (its origin is the virtual leg's top).
        knee_joint: the actuated knee joint.
        horizontal_joint: the passive joint whose velocity is the body's horizontal speed.
        leg_length_m: rest length l0 of the virtual leg, m.
        stiffness_n_m: virtual leg spring k in stance, N/m.
        damping_n_s_m: damping d along the leg in stance, N*s/m.
        thrust_n: push along the leg while it extends in stance, N (sets the hop height).
        flight_kp_n_m: foot position gain in flight, N/m.
        flight_kd_n_s_m: foot velocity gain in flight, N*s/m.
        target_velocity_m_s: horizontal speed set-point v*, m/s.
        velocity_gain_s: Raibert's foot placement gain k_v, s.
        velocity_integral_s: per-hop integral gain k_i of the speed error at liftoff, s.
        stance_time_s: stance duration Ts assumed until the first stance is measured, s.
        contact_threshold_n: vertical foot force above which the foot is on the ground, N.
    """

    contact_frames: tuple = ('foot',)
    hip_joint: str = 'hip'
    knee_joint: str = 'knee'
    horizontal_joint: str = 'base_x'
    leg_length_m: float = bounded(0.9, 0.1, 10.0, unit='m')
    stiffness_n_m: float = bounded(4000.0, low=0.0, low_open=True, unit='N/m')
    damping_n_s_m: float = bounded(20.0, low=0.0, unit='N*s/m')
    thrust_n: float = bounded(150.0, low=0.0, unit='N')
    flight_kp_n_m: float = bounded(1500.0, low=0.0, unit='N/m')
    flight_kd_n_s_m: float = bounded(60.0, low=0.0, unit='N*s/m')
    target_velocity_m_s: float = bounded(0.0, unit='m/s')
    velocity_gain_s: float = bounded(0.05, low=0.0, unit='s')
    velocity_integral_s: float = bounded(0.1, low=0.0, unit='s')
    stance_time_s: float = bounded(0.2, low=0.0, low_open=True, unit='s')
    contact_threshold_n: float = bounded(5.0, low=0.0, unit='N')

    def __post_init__(self):
        frames = self.contact_frames
        object.__setattr__(self, 'contact_frames',
                           (frames,) if isinstance(frames, str) else tuple(frames))
        check_fields(self)       # the bounds above (dodo_sim.parameter)
        if len(self.contact_frames) != 1:
            raise ValueError(f'HopperPDConfig.contact_frames = {self.contact_frames!r}: one '
                             f'foot')


@dataclass(frozen=True)
class HopperPDTelemetry:
    """
    The controller's snapshot after a tick (``/controller/state`` channels).

    Fields:
        phase: 'flight' or 'stance'.
        leg_length_m: virtual leg length l, m.
        leg_force_n: the commanded force along the leg in stance (0 in flight), N.
        foot_target_x_m: touchdown point ahead of the centre of mass (Raibert), m.
        placement_offset_m: the integral b in it, m.
        stance_time_s: the last measured stance duration, s.
        hops: touchdowns so far.
        tau: the returned torques, N*m.
    """

    phase: str
    leg_length_m: float
    leg_force_n: float
    foot_target_x_m: float
    placement_offset_m: float
    stance_time_s: float
    hops: int
    tau: tuple


class HopperPD:
    """Virtual spring + thrust hop law with Raibert foot placement (module docs)."""

    # how dodo_sim hosts it (dodo_control.registry): its config dataclass, the fields that name
    # joints and frames (fixed while the node runs: they sized its topics), the default robot
    config_class = HopperPDConfig
    startup_only = ('contact_frames', 'hip_joint', 'knee_joint', 'horizontal_joint')
    default_model = 'package://dodo_sim/urdf/hopper.urdf.xacro'

    def __init__(self, robot_description, config: HopperPDConfig | None = None):
        config = config if config is not None else HopperPDConfig()
        self.model = pin.buildModelFromXML(robot_description_xml(robot_description))
        self.data = self.model.createData()
        names = tuple(self.model.names[1:])
        if self.model.nq != len(names) or self.model.nv != len(names):
            raise ValueError(f'hopper_pd: every joint of the robot needs one coordinate, got '
                             f'{list(names)}')
        self._joint_names = names
        self._config = None
        self.reconfigure(config)
        self._stance = False
        self._touchdown_t = None
        self._stance_time = config.stance_time_s
        self._hops = 0
        self._offset = 0.0
        self._telemetry = None

    # -- what the controller node sizes its topics from ---------------------------------------

    @property
    def joint_names(self) -> tuple:
        """Order of q and v in ``update``: every joint of the robot (/joint_states)."""
        return self._joint_names

    @property
    def actuated_joint_names(self) -> tuple:
        """Order of the returned torques: hip, knee."""
        return (self._config.hip_joint, self._config.knee_joint)

    @property
    def contact_frames(self) -> tuple:
        return self._config.contact_frames

    @property
    def telemetry(self) -> HopperPDTelemetry | None:
        return self._telemetry

    # -- configuration --------------------------------------------------------------------------

    def reconfigure(self, config: HopperPDConfig) -> None:
        """Use ``config`` from the next update on (ValueError names a joint the robot lacks)."""
        model = self.model
        for name in (config.hip_joint, config.knee_joint, config.horizontal_joint):
            if name not in self._joint_names:
                raise ValueError(f'hopper_pd: joint {name!r} is not a joint of the robot '
                                 f'{list(self._joint_names)}')
        if not model.existFrame(config.contact_frames[0]):
            raise ValueError(f'hopper_pd: no frame {config.contact_frames[0]!r} in the robot')
        self._hip = model.getJointId(config.hip_joint)
        self._foot = model.getFrameId(config.contact_frames[0])
        self._actuated = [model.joints[model.getJointId(n)].idx_v
                          for n in (config.hip_joint, config.knee_joint)]
        self._horizontal = model.joints[model.getJointId(config.horizontal_joint)].idx_v
        self._effort = np.asarray(model.effortLimit)[self._actuated]
        self._config = config

    # -- the tick ---------------------------------------------------------------------------------

    def update(self, t: float, q: np.ndarray, v: np.ndarray,
               contact_forces: np.ndarray) -> np.ndarray:
        """Return the hip and knee torques (N*m) for the measured state at time ``t`` (s)."""
        cfg, model, data = self._config, self.model, self.data
        pin.computeJointJacobians(model, data, q)
        pin.updateFramePlacements(model, data)
        frame = pin.LOCAL_WORLD_ALIGNED
        jac = (pin.getFrameJacobian(model, data, self._foot, frame)[[0, 2]]
               - pin.getJointJacobian(model, data, self._hip, frame)[[0, 2]])
        rel = (data.oMf[self._foot].translation - data.oMi[self._hip].translation)[[0, 2]]
        rel_v = jac @ v
        leg = jac[:, self._actuated]              # foot relative to the hip over hip, knee
        length = float(np.hypot(*rel))
        loaded = float(np.asarray(contact_forces).reshape(-1, 3)[0, 2]) > cfg.contact_threshold_n
        # stance from the first loaded tick until the foot is unloaded with the leg extended
        # again (a foot that bounces at touchdown stays in stance)
        stance = loaded or (self._stance and length < cfg.leg_length_m)
        was_stance = self._stance
        self._phase_change(t, stance)
        # the centre of mass: its speed is constant in flight (the body's own is not: the
        # swinging leg moves it), and the touchdown point is placed relative to it
        pin.centerOfMass(model, data, q, v)
        speed = float(data.vcom[0][0])
        com_ahead_of_hip = float(data.com[0][0] - data.oMi[self._hip].translation[0])
        reach = 0.5 * cfg.leg_length_m
        if was_stance and not stance:               # liftoff: this flight's speed error
            self._offset += cfg.velocity_integral_s * (speed - cfg.target_velocity_m_s)
        target_x = float(np.clip(speed * self._stance_time / 2.0 + cfg.velocity_gain_s
                                 * (speed - cfg.target_velocity_m_s) + self._offset,
                                 -reach, reach))
        if stance:
            up = -rel / length                    # foot -> hip
            rate = float(-up @ rel_v)             # dl/dt: rel grows along -up
            force = max(0.0, cfg.stiffness_n_m * (cfg.leg_length_m - length)
                        - cfg.damping_n_s_m * rate + (cfg.thrust_n if rate > 0.0 else 0.0))
            tau = -leg.T @ (force * up)
        else:
            force = 0.0
            ahead = float(np.clip(target_x + com_ahead_of_hip, -reach, reach))
            goal = np.array([ahead, -math.sqrt(cfg.leg_length_m ** 2 - ahead ** 2)])
            tau = leg.T @ (cfg.flight_kp_n_m * (goal - rel) - cfg.flight_kd_n_s_m * rel_v)
        tau = np.clip(tau, -self._effort, self._effort)
        self._telemetry = HopperPDTelemetry('stance' if stance else 'flight', length, force,
                                            target_x, self._offset, self._stance_time,
                                            self._hops,
                                            tuple(float(x) for x in tau))
        return tau

    def _phase_change(self, t: float, stance: bool) -> None:
        if stance and not self._stance:
            self._touchdown_t = t
            self._hops += 1
        elif self._stance and not stance and self._touchdown_t is not None:
            self._stance_time = max(t - self._touchdown_t, 1e-3)
        self._stance = stance
