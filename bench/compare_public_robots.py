# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
dodo_sim against MuJoCo and DART on a published quadruped, the Solo-12 of example-robot-data.

Built from the same URDF (docs/physics.md "Robots nobody here wrote"): standing on the static foot
forces, a 2 cm drop that settles under the static torques plus a PD hold, sliding down a 15 deg
slope (MuJoCo only: dart_model.py has a flat ground).

    python bench/compare_public_robots.py

Prints one table; test_physics_public_robots.py asserts on the same functions.
"""
from __future__ import annotations

import math
from pathlib import Path
import sys

import numpy as np
import pinocchio as pin

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / 'test'))

# These imports must follow the sys.path change above (E402), so they cannot take their
# place in the sorted import block (I100).
from dart_model import build_dart_robot  # noqa: E402, I100
from dodo_sim.physics.robot import robot_description_xml  # noqa: E402
from dodo_sim.simulator import SimConfig, Simulator  # noqa: E402
from mujoco_urdf import build_mujoco_robot  # noqa: E402
import public_robots as pr  # noqa: E402

G = 9.81
SLOPE_DEG, SLOPE_MU = 15.0, 0.1
PD_KP, PD_KD = 30.0, 0.3


def _joints(robot, q):
    return {name: float(q[robot.joint_idx_q[robot.joint_names.index(name)]])
            for name in robot.actuated_joint_names}


def stand(engine: str, seconds=0.3, dt=1e-3, drop_m=0.0, kp=0.0, kd=0.0):
    """
    Return foot forces, static solution and base height change.

    Foot forces (n_feet, 3) after ``seconds`` under the static torques (plus a PD hold of the
    stand's joint angles with gains kp, kd), the static solution, and the base height change from
    the static pose (m). ``drop_m``: the robot starts that high above it.
    """
    sim = Simulator(pr.solo12(), SimConfig(contact_frames=pr.SOLO_FEET, dt=dt, control_period=dt,
                                           integrator=engine if engine in ('timestepping',
                                                                           'event')
                                           else 'timestepping'))
    robot = sim.robot
    q = pr.standing_pose(sim, pr.SOLO_STAND_LEGS)
    forces, tau = pr.static_torques(robot, q)
    start = q.copy()
    start[2] += drop_m
    steps = int(round(seconds / dt))
    names = robot.actuated_joint_names

    def torques(angles, rates):
        return tau + kp * (pr.SOLO_STAND_LEGS - angles) - kd * rates

    if engine == 'mujoco':
        mj = build_mujoco_robot(robot_description_xml(pr.solo12()), pr.SOLO_FEET, timestep_s=dt)
        mj.set_state(start[:3], start[3:7], _joints(robot, start))
        for _ in range(steps):
            angles = np.array([mj.data.qpos[mj.joint_qpos[n]] for n in names])
            rates = np.array([mj.data.qvel[mj.joint_dof[n]] for n in names])
            mj.step(dict(zip(names, torques(angles, rates))))
        return mj.foot_forces(), forces, float(mj.data.qpos[2] - q[2])
    if engine == 'dart':
        # DART's foot spheres have their centre on the frame: the frame sits one radius higher
        radius = 1e-3
        dart = build_dart_robot(robot_description_xml(pr.solo12()), pr.SOLO_FEET, floating=True,
                                contact_radius_m=radius, timestep_s=dt)
        index = [dart.dof_names.index(n) for n in names]
        positions = np.zeros(len(dart.dof_names))
        positions[3:6] = start[:3] + (0.0, 0.0, radius)   # identity base rotation
        positions[index] = start[7:]
        dart.skeleton.setPositions(positions)
        dart.skeleton.setVelocities(np.zeros(len(positions)))
        for _ in range(steps):
            generalized = np.zeros(len(positions))
            generalized[index] = torques(dart.q[index], dart.v[index])
            dart.step(generalized)
        return dart.contact_forces(), forces, float(dart.q[5] - radius - q[2])
    sim.reset(start)
    for _ in range(steps):
        s = sim.state
        state = sim.step(torques(s.q[7:], s.v[6:]))
    return state.contact_forces, forces, float(state.q[2] - q[2])


def slide(engine: str, seconds=0.3, dt=1e-3):
    """
    Return the mean centre-of-mass acceleration along the slope.

    It is the mean over the last half of ``seconds`` (m/s^2; negative: downhill); its normal
    component is returned with it.
    """
    slope = math.radians(SLOPE_DEG)
    sim = Simulator(pr.solo12(), SimConfig(
        integrator=engine if engine != 'mujoco' else 'timestepping',
        contact_frames=pr.SOLO_FEET, terrain='slope', slope_deg=SLOPE_DEG, friction=SLOPE_MU,
        dt=dt, control_period=dt))
    robot = sim.robot
    q = robot.default_q.copy()
    q[7:] = pr.SOLO_STAND_LEGS
    q[3:7] = pin.Quaternion(pin.utils.rpyToMatrix(0.0, -slope, 0.0)).coeffs()
    points = sim.contact_positions(q)
    q[2] -= (points[:, 2] - math.tan(slope) * points[:, 0]).min()
    tangent = np.array([math.cos(slope), 0.0, math.sin(slope)])
    normal = np.array([-math.sin(slope), 0.0, math.cos(slope)])
    steps = int(round(seconds / dt))
    velocities = []
    if engine == 'mujoco':
        mj = build_mujoco_robot(robot_description_xml(pr.solo12()), pr.SOLO_FEET, timestep_s=dt,
                                friction=SLOPE_MU, slope_deg=SLOPE_DEG)
        mj.set_state(q[:3], q[3:7], _joints(robot, q))
        names = robot.actuated_joint_names
        for _ in range(steps):
            angles = np.array([mj.data.qpos[mj.joint_qpos[n]] for n in names])
            rates = np.array([mj.data.qvel[mj.joint_dof[n]] for n in names])
            mj.step(dict(zip(names, PD_KP * (pr.SOLO_STAND_LEGS - angles) - PD_KD * rates)))
            velocities.append(mj.com_velocity())
    else:
        sim.reset(q)
        data = robot.create_data()
        for _ in range(steps):
            s = sim.state
            state = sim.step(PD_KP * (pr.SOLO_STAND_LEGS - s.q[7:]) - PD_KD * s.v[6:])
            pin.centerOfMass(robot.model, data, state.q, state.v)
            velocities.append(data.vcom[0].copy())
    half = steps // 2
    accel = (velocities[-1] - velocities[half - 1]) / ((steps - half) * dt)
    return float(accel @ tangent), float(accel @ normal)


def main() -> int:
    slope = math.radians(SLOPE_DEG)
    analytic = -G * (math.sin(slope) - SLOPE_MU * math.cos(slope))
    print('Solo-12 (example-robot-data), dt = 1 ms; f*: the static foot forces under the static '
          'torques; drop: 2 cm, then 1 s under the static torques + PD hold (foot forces '
          'statically indeterminate: only their sum is compared)')
    print(f'{"engine":13s} {"stand: max|f-f*| N":>19s} {"sag mm":>7s} '
          f'{"drop: |sum f - mg| N":>20s} {"sag mm":>7s} '
          f'{"slope a_t m/s^2":>16s} {"(analytic)":>10s} {"a_n":>8s}')
    weight = np.array((0.0, 0.0, pr.solo12_mass_kg() * G))
    for engine in ('timestepping', 'event', 'mujoco', 'dart'):
        forces, static, sag = stand(engine)
        dropped, _, drop_sag = stand(engine, seconds=1.0, drop_m=0.02, kp=PD_KP, kd=PD_KD)
        a_t, a_n = slide(engine) if engine != 'dart' else (math.nan, math.nan)
        print(f'{engine:13s} {np.abs(forces - static).max():19.3e} {sag * 1e3:7.3f} '
              f'{np.abs(dropped.sum(axis=0) - weight).max():20.3e} {drop_sag * 1e3:7.3f} '
              f'{a_t:16.5f} {analytic:10.5f} {a_n:8.4f}')
    return 0


if __name__ == '__main__':
    sys.exit(main())
