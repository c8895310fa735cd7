# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
Published robots after a fall, side by side with MuJoCo and DART on the same URDFs.

Issue 30 item 3: where each engine rests a published arm, quadruped and humanoid of
example-robot-data after a fall of 3 s, and what the ground carries. All three build the robot
from the URDF's own ``<collision>`` shapes, a mesh as the bounding box dodo_sim collides it as
(bench/urdf_boxes.py), touching the floor and never each other (bench/mujoco_urdf.py and
bench/dart_model.py with ``link_collisions=True``); dt = 1 ms, mu = 0.8, zero restitution.

Compared: the final joint angles, base height and tilt, what touches, and the ground's total
normal force (mean over the last 0.1 s) / (m g), m g at rest for a floating robot.

* UR5 (fixed base) from issue 30's pose q = [0, -1, 1, 0, 0, 0] under zero torque: it falls onto
  its upper arm and wrist (the fall that crashed dodo_sim at 0.53 s); the joint angles it rests
  at and the share of its weight the ground carries (the rest hangs on its base).
* Go2 (floating) standing on its default pose (legs straight down, calves on their limits)
  under zero torque: its legs fold onto their calf stops and it lies down on its base; base
  height and tilt, joint angles, ground force / (m g).
* Talos (floating, 90 kg) 2 cm up, a plain joint PD holding its default pose
  (test/public_robots.py ``PdHold``, 10 Hz, no gravity compensation): too weak for its weight,
  it sits down onto its base and torso; base height and tilt, joint angles, ground force.

DART enforces the URDF position limits here (``joint_limits=True``; DART's default ignores them,
and the Go2's calves then fold through their stops).

    python bench/compare_resting_robots.py

Prints one markdown table; test_physics_public_robots_fall.py
asserts on the same functions.
"""
from __future__ import annotations

import functools
from pathlib import Path
import sys

import numpy as np
import pinocchio as pin

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / 'test'))

# These imports must follow the sys.path change above (E402), so they cannot take their
# place in the sorted import block (I100).
from dodo_sim.physics.robot import robot_description_xml  # noqa: E402, I100
from dodo_sim.simulator import SimConfig, Simulator  # noqa: E402
import public_robots as pr  # noqa: E402

G = 9.81
DT_S = 1e-3
SECONDS = 3.0
#: the ground's normal force is the mean over the last this many steps (a robot still settling
#: rocks by a few per cent of its weight from step to step)
AVERAGED_STEPS = 100
ENGINES = ('timestepping', 'mujoco', 'dart')
#: case -> (URDF under example-robot-data's robots/, start joint angles (None: the default
#: pose), drop height m, frequency of the PD hold Hz (0: zero torque))
CASES = {'ur5': ('ur_description/urdf/ur5_robot.urdf', pr.UR_START, 0.0, 0.0),
         'go2': ('go2_description/urdf/go2.urdf', None, 0.0, 0.0),
         'talos': ('talos_data/robots/talos_reduced.urdf', None, 0.02, 10.0)}


@functools.lru_cache(maxsize=None)
def _setup(spec: tuple):
    """dodo_sim's model of a case (a value of CASES), its start q and PD hold."""
    urdf, joints, drop, frequency_hz = spec
    path = pr.robots_dir() / urdf
    sim = Simulator(str(path), SimConfig(contact_frames=(), dt=DT_S, control_period=DT_S))
    q0 = pr.resting_start(sim, joints)
    if sim.robot.floating_base:
        q0[2] += drop
    hold = pr.PdHold(sim, q0, frequency_hz) if frequency_hz else None
    return path, sim, q0, hold


def _torque(hold, n):
    if hold is None:
        return lambda qj, vj: np.zeros(n)
    return lambda qj, vj: hold.kp * (hold.target - qj) - hold.kd * vj


def _result(robot, q, base_rotation, speed, normal_force, touching, gaps=None) -> dict:
    out = {'joints': np.asarray(q, float), 'speed': float(speed),
           'normal force / mg': float(normal_force) / (robot.total_mass * G),
           'touching': ' '.join(sorted(touching))}
    if base_rotation is not None:
        out['base z m'], out['base tilt rad'] = base_rotation
    if gaps is not None:   # dodo_sim: its deepest support point during the run and at its end
        out['deepest m'], out['deepest at the end m'] = (float(g) for g in gaps)
    return out


def _run_dodo(spec: tuple, integrator: str) -> dict:
    path, probe, q0, hold = _setup(spec)
    sim = probe if integrator == 'timestepping' else Simulator(str(path), SimConfig(
        contact_frames=(), integrator=integrator, dt=DT_S, control_period=DT_S))
    robot = sim.robot
    iq = [robot.joint_idx_q[robot.joint_names.index(n)] for n in robot.actuated_joint_names]
    iv = list(robot.actuated_idx_v)
    torque = _torque(hold, len(iv))
    state = sim.reset(q0)
    deepest = force = 0.0
    steps = round(SECONDS / DT_S)
    for step in range(steps):
        state = sim.step(torque(state.q[iq], state.v[iv]))
        deepest = min(deepest, float(pr.support_gaps(sim, state.q).min()))
        if step >= steps - AVERAGED_STEPS:
            force += sum(float(c.force[2]) for c in state.link_contacts) / AVERAGED_STEPS
    base = None
    if robot.floating_base:
        x, y, z, w = state.q[3:7]
        tilt = float(np.linalg.norm(pin.log3(pin.Quaternion(w, x, y, z).toRotationMatrix())))
        base = (float(state.q[2]), tilt)
    out = _result(robot, state.q[iq], base, np.abs(state.v).max(), force,
                  {c.link for c in state.link_contacts},
                  (deepest, pr.support_gaps(sim, state.q).min()))
    out['joint speeds'] = np.abs(state.v[iv])
    return out


def _run_mujoco(spec: tuple) -> dict:
    import mujoco
    from mujoco_urdf import build_mujoco_robot
    path, sim, q0, hold = _setup(spec)
    robot = sim.robot
    names = list(robot.actuated_joint_names)
    iq = [robot.joint_idx_q[robot.joint_names.index(n)] for n in names]
    peer = build_mujoco_robot(robot_description_xml(str(path)), (), contact_radius_m=1e-4,
                              link_collisions=True, urdf_dir=path.parent, timestep_s=DT_S,
                              floating=robot.floating_base)
    m, d = peer.model, peer.data
    joints = dict(zip(names, q0[iq]))
    if robot.floating_base:
        peer.set_state(q0[:3], q0[3:7], joints)
    else:
        mujoco.mj_resetData(m, d)
        for name, value in joints.items():
            d.qpos[peer.joint_qpos[name]] = value
        mujoco.mj_forward(m, d)
    qpos = [peer.joint_qpos[n] for n in names]
    dofs = [peer.joint_dof[n] for n in names]
    torque = _torque(hold, len(names))
    force, wrench = 0.0, np.zeros(6)
    steps = round(SECONDS / DT_S)
    for step in range(steps):
        peer.step(dict(zip(names, torque(d.qpos[qpos], d.qvel[dofs]))))
        if step >= steps - AVERAGED_STEPS:
            for i in range(d.ncon):
                mujoco.mj_contactForce(m, d, i, wrench)
                force += abs((d.contact[i].frame.reshape(3, 3).T @ wrench[:3])[2]) / (
                    AVERAGED_STEPS)
    touching = {m.body(m.geom_bodyid[g]).name for c in d.contact[:d.ncon]
                for g in (c.geom1, c.geom2) if m.geom_bodyid[g]}
    base = None
    if robot.floating_base:
        w, x, y, z = d.qpos[3:7]
        tilt = float(np.linalg.norm(pin.log3(pin.Quaternion(w, x, y, z).toRotationMatrix())))
        base = (float(d.qpos[2]), tilt)
    return _result(robot, d.qpos[qpos], base, np.abs(d.qvel).max(), force, touching)


def _run_dart(spec: tuple) -> dict:
    from dart_model import build_dart_robot
    path, sim, q0, hold = _setup(spec)
    robot = sim.robot
    names = list(robot.actuated_joint_names)
    iq = [robot.joint_idx_q[robot.joint_names.index(n)] for n in names]
    peer = build_dart_robot(robot_description_xml(str(path)), (), contact_radius_m=1e-4,
                            timestep_s=DT_S, detector='fcl', link_collisions=True,
                            floating=robot.floating_base, urdf_dir=path.parent,
                            joint_limits=True)
    dofs = list(peer.dof_names)
    positions = np.zeros(len(dofs))
    if robot.floating_base:      # DART's free joint: rotation vector, then translation
        x, y, z, w = q0[3:7]
        positions[:3] = pin.log3(pin.Quaternion(w, x, y, z).toRotationMatrix())
        positions[3:6] = q0[:3]
    joints = [dofs.index(n) for n in names]
    positions[joints] = q0[iq]
    peer.reset(positions, np.zeros(len(dofs)))
    torque = _torque(hold, len(names))
    force = np.zeros(len(dofs))
    normal = 0.0
    steps = round(SECONDS / DT_S)
    for step in range(steps):
        force[joints] = torque(peer.q[joints], peer.v[joints])
        peer.step(force)
        if step >= steps - AVERAGED_STEPS:
            result = peer.world.getLastCollisionResult()
            normal += sum(abs(np.asarray(c.force)[2]) for c in result.getContacts()
                          if not (_welded(c.collisionObject1) and _welded(c.collisionObject2))
                          ) / AVERAGED_STEPS
    result = peer.world.getLastCollisionResult()
    touching = {b.getName() for b in result.getCollidingBodyNodes()
                if b.getSkeleton().getName() != 'ground' and not _welded_body(b)}
    base = None
    if robot.floating_base:
        base = (float(peer.q[5]), float(np.linalg.norm(peer.q[:3])))
    return _result(robot, peer.q[joints], base, np.abs(peer.v).max(), normal, touching)


def _welded_body(body) -> bool:
    """Whether a DART body cannot move: it and every body above it hang on weld joints."""
    while body is not None:
        if body.getParentJoint().getNumDofs() > 0:
            return False
        body = body.getParentBodyNode()
    return True


def _welded(collision_object) -> bool:
    return _welded_body(collision_object.getShapeFrame().getBodyNode())


def run(case, engine: str = 'timestepping') -> dict:
    """
    Return the final state of ``case`` in ``engine`` (dodo_sim's integrator name, or a peer).

    ``case``: a name of CASES, or a tuple like its values. Each run is made once per process.
    """
    return _run(CASES[case] if isinstance(case, str) else tuple(case), engine)


@functools.lru_cache(maxsize=None)
def _run(spec: tuple, engine: str) -> dict:
    if engine == 'mujoco':
        return _run_mujoco(spec)
    if engine == 'dart':
        return _run_dart(spec)
    return _run_dodo(spec, engine)


def joint_names(case: str) -> tuple:
    return _setup(CASES[case])[1].robot.actuated_joint_names


def _cell(value) -> str:
    if isinstance(value, float):
        return f'{value:.4g}'
    if isinstance(value, np.ndarray):
        return ' '.join(f'{v:.3f}' for v in value)
    return str(value)


def main() -> None:
    if pr.robots_dir() is None:
        sys.exit('compare_resting_robots: error: example-robot-data is not installed')
    for case in CASES:
        rows = {engine: run(case, engine) for engine in ENGINES}
        keys = [k for k in rows['timestepping'] if k not in ('joints', 'joint speeds')]
        print(f'\n{case} ({CASES[case][0]}), {SECONDS} s; joints {list(joint_names(case))}')
        print('| engine | ' + ' | '.join(keys) + ' | joints rad |')
        print('|---' * (len(keys) + 2) + '|')
        for engine, row in rows.items():
            print(f'| {engine} | ' + ' | '.join(_cell(row.get(k, '')) for k in keys)
                  + f" | {_cell(row['joints'])} |")


if __name__ == '__main__':
    main()
