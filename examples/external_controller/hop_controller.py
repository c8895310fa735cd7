# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
A hopping controller for the dodo_sim hopper, as your own ROS 2 node (examples/README.md).

Run it beside ``dodo hop --controller external`` on the run's ROS domain (README.md beside this
file). :class:`HopLaw` is the control law (numpy only: the same object runs offline with
``dodo_sim.rollout.rollout``); :class:`HopController` is the node: :mod:`dodo_sim.client` reads
the states, pairs each with its foot force by stamp and answers with the stamped command.

The law (a Raibert-style hopper in joint space, Raibert 1986 "Legged robots that balance"):

* stance (foot force above 20 N, left below 5 N): the knee is a torsional spring of
  ``stiffness`` N*m/rad toward the knee angle of the leg length ``leg_length`` m, plus
  ``thrust`` N*m while the body rises (the energy lost at touchdown); the hip is free;
* flight: a PD holds the knee at that angle and the leg's angle from the vertical at
  ``-placement`` s times the forward velocity (the foot lands where it slows the body);
* torques clipped at the URDF effort limits.

The lengths of thigh and shank come from the robot model the client received on
``/robot_description`` (the knee joint's and the foot frame's placements).
"""
from __future__ import annotations

import math
import sys

from dodo_sim.client import ControllerClient, run
import numpy as np


class HopLaw:
    """
    The control law: ``update(t, q, v, contacts) -> [tau_hip, tau_knee]`` (module docs).

    ``q``, ``v``: [base_x, base_z, hip, knee] (m, rad; m/s, rad/s); ``contacts``: one world
    (fx, fy, fz) row for the foot, N.
    """

    #: the contact frames whose forces ``update`` reads (rollout hands it the same rows)
    contact_frames = ('foot',)

    def __init__(self, thigh_m: float = 0.5, shank_m: float = 0.5,
                 effort_limits=(300.0, 300.0), leg_length: float = 0.9,
                 stiffness: float = 800.0, thrust: float = 40.0, placement: float = 0.1,
                 kp: float = 300.0, kd: float = 15.0):
        self.thigh, self.shank = thigh_m, shank_m
        self.limit = np.asarray(effort_limits, dtype=float)
        cos_knee = (leg_length ** 2 - thigh_m ** 2 - shank_m ** 2) / (2 * thigh_m * shank_m)
        self.knee_rest = -math.acos(cos_knee)        # the bent knee of that leg length
        self.stiffness, self.thrust, self.placement = stiffness, thrust, placement
        self.kp, self.kd = kp, kd
        self.stance = False

    @classmethod
    def for_robot(cls, robot, **gains) -> 'HopLaw':
        """Return the law for a robot model (dodo_sim.physics.robot.RobotModel): its lengths."""
        model = robot.model
        knee = model.getJointId('knee')
        foot = model.frames[model.getFrameId('foot')]
        return cls(thigh_m=float(np.linalg.norm(model.jointPlacements[knee].translation)),
                   shank_m=float(np.linalg.norm(foot.placement.translation)),
                   effort_limits=robot.effort_limits, **gains)

    def leg_angle(self, hip: float, knee: float, hip_rate: float, knee_rate: float):
        """Return the angle of the hip-to-foot line from the vertical and its rate."""
        a, b = self.thigh, self.shank
        x = a * math.sin(hip) + b * math.sin(hip + knee)
        down = a * math.cos(hip) + b * math.cos(hip + knee)
        x_rate = a * math.cos(hip) * hip_rate + b * math.cos(hip + knee) * (hip_rate + knee_rate)
        down_rate = (-a * math.sin(hip) * hip_rate
                     - b * math.sin(hip + knee) * (hip_rate + knee_rate))
        return math.atan2(x, down), (x_rate * down - x * down_rate) / (x * x + down * down)

    def update(self, t, q, v, contacts):
        force_z = contacts[0, 2]
        if not self.stance and force_z > 20.0:
            self.stance = True
        elif self.stance and force_z < 5.0:
            self.stance = False
        hip, knee = q[2], q[3]
        if self.stance:
            tau_hip = 0.0
            tau_knee = (self.stiffness * (self.knee_rest - knee)
                        + (self.thrust if v[1] > 0.0 else 0.0))
        else:
            angle, angle_rate = self.leg_angle(hip, knee, v[2], v[3])
            tau_hip = self.kp * (-self.placement * v[0] - angle) - self.kd * angle_rate
            tau_knee = self.kp * (self.knee_rest - knee) - self.kd * v[3]
        return np.clip(np.array([tau_hip, tau_knee]), -self.limit, self.limit)


class HopController(ControllerClient):
    """The node: the client does the ROS side, :class:`HopLaw` the control."""

    def on_robot(self, robot):
        self.law = HopLaw.for_robot(robot)

    def update(self, t, q, v, contacts):
        return self.law.update(t, q, v, contacts)


def main(args=None) -> int:
    return run(HopController, 'hop_controller', args)


if __name__ == '__main__':
    sys.exit(main())
