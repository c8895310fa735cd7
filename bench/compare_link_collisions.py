# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
Link collisions (``collisions='links'``) side by side with MuJoCo and DART on the same URDFs.

The cases of issue 22 item 4 that both peers build from the URDF's own ``<collision>`` shapes
(``mujoco_urdf.build_mujoco_robot(..., link_collisions=True)`` and
``dart_model.build_dart_robot(..., link_collisions=True)``: spheres, boxes, cylinders; the
robot's shapes touch the floor, never each other), each with dodo_sim's two integrators and,
where one exists, the textbook value:

* box dropped flat: rest height of its centre, drift, tilt, normal force / (m g);
* box on a slope (mu = 0.5): at 20 deg it sticks (speed after 0.3 s); at 35 deg it slides at
  g (sin - mu cos) (Meriam & Kraige, Engineering Mechanics: Dynamics, 6/2);
* solid cylinder on a 20 deg slope: rolls at (2/3) g sin;
* the collapsed hopper of issue 22 (0.6 s of hip -40 / knee -10 N*m, then zero): where its body
  rests, the lowest point of any collision shape;
* the Kneed Walker from its default pose, zero torque: where it rests, what touches.

    python bench/compare_link_collisions.py

Prints one markdown table (docs/physics.md "Link collisions" quotes it);
test_physics_link_collisions_peers.py asserts on the same functions. MuJoCo's contact is soft
(solref 0.02 s: a resting body sinks by its static deflection, about 1e-4 m per the weight here)
and its cone elliptic; DART's is a velocity-level boxed LCP (hard, pyramid friction; its FCL
detector meshes a cylinder); dodo_sim's is hard (Signorini + Coulomb). DART's ground is flat: a
slope is its gravity tilted by the angle. Meshes (Solo-12) are not in this table: the peers need
the mesh files next to the URDF; test_physics_link_collisions.py checks that robot against the
floor itself.
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
from dodo_sim.physics.robot import robot_description_xml  # noqa: E402, I100
from dodo_sim.simulator import SimConfig, Simulator  # noqa: E402
import mujoco  # noqa: E402
from mujoco_urdf import build_mujoco_robot  # noqa: E402
from physics_models import BOX_MASS_KG, BOX_SIZE_M, planar_box, planar_wheel  # noqa: E402

G = 9.81
DT_S = 1e-3
ENGINES = ('timestepping', 'event', 'mujoco', 'dart')
SLOPE_MU = 0.5
WHEEL_RADIUS_M = 0.1
HOPPER = HERE.parent / 'urdf' / 'hopper.urdf.xacro'
WALKER = HERE.parent / 'urdf' / 'kneed_walker.urdf.xacro'
WALKER_FEET = ('left_foot', 'right_foot')


class _Dodo:
    """dodo_sim with link collisions; q, v in the URDF joint order of the planar models."""

    def __init__(self, urdf, integrator, contact_frames=(), **config):
        self.sim = Simulator(urdf, SimConfig(integrator=integrator, dt=DT_S,
                                             control_period=DT_S, contact_frames=contact_frames,
                                             collisions='links', **config))
        self.state = self.sim.state

    def reset(self, q, v=None):
        self.state = self.sim.reset(np.asarray(q, float),
                                    np.zeros(self.sim.robot.nv) if v is None else v)

    def step(self, tau=()):
        self.state = self.sim.step(tau)

    @property
    def q(self):
        return self.state.q

    @property
    def v(self):
        return self.state.v

    def normal_force(self) -> float:
        """Sum of the world z force of every touching link point and foot, N."""
        links = sum(float(c.force[2]) for c in self.state.link_contacts)
        return links + float(self.state.contact_forces[:, 2].sum())

    def lowest_point(self) -> float:
        """Lowest point of any collision shape's support point, m (world z)."""
        robot = self.sim.robot
        data = robot.model.createData()
        pin.framesForwardKinematics(robot.model, data, self.state.q)
        return min(data.oMf[p.frame_id].translation[2] - p.radius
                   for p in robot.collision_points)

    def touching(self) -> set:
        return {c.link for c in self.state.link_contacts}


class _Mujoco:
    """The same URDF in MuJoCo with its collision shapes; q, v in the URDF joint order."""

    def __init__(self, urdf_xml, contact_frames=(), contact_radius_m=1e-3, friction=0.8,
                 slope_deg=0.0, actuated=()):
        self.robot = build_mujoco_robot(urdf_xml, contact_frames, friction=friction,
                                        contact_radius_m=contact_radius_m, slope_deg=slope_deg,
                                        floating=False, link_collisions=True,
                                        timestep_s=DT_S)
        m = self.robot.model
        self.joints = [m.joint(j).name for j in range(m.njnt)]
        self.actuated = tuple(actuated)

    def reset(self, q, v=None):
        d = self.robot.data
        mujoco.mj_resetData(self.robot.model, d)
        d.qpos[:] = q
        d.qvel[:] = 0.0 if v is None else v
        mujoco.mj_forward(self.robot.model, d)

    def step(self, tau=()):
        self.robot.step(dict(zip(self.actuated, tau)))

    @property
    def q(self):
        return self.robot.data.qpos.copy()

    @property
    def v(self):
        return self.robot.data.qvel.copy()

    def normal_force(self) -> float:
        m, d = self.robot.model, self.robot.data
        total, force = 0.0, np.zeros(6)
        for i in range(d.ncon):
            mujoco.mj_contactForce(m, d, i, force)
            world = d.contact[i].frame.reshape(3, 3).T @ force[:3]
            total += abs(world[2])
        return total

    def touching(self) -> set:
        m, d = self.robot.model, self.robot.data
        bodies = set()
        for i in range(d.ncon):
            for geom in (d.contact[i].geom1, d.contact[i].geom2):
                body = m.geom_bodyid[geom]
                if body:
                    bodies.add(m.body(body).name)
        return bodies


class _Dart:
    """
    The same URDF in DART with its collision shapes (dart_model.build_dart_robot).

    DART's ground is flat: a slope is the gravity vector tilted by its angle (the same
    mechanics), so a body set on the "slope" starts level and its speed along the slope is its
    speed in the x-z plane. q, v in the URDF joint order (DART's for a chain without a free
    joint).
    """

    def __init__(self, urdf_xml, contact_frames=(), contact_radius_m=1e-3, friction=0.8,
                 slope_deg=0.0, actuated=()):
        from dart_model import build_dart_robot
        s = math.radians(slope_deg)
        # a ground that rises with x (slope_deg > 0) pulls a body toward -x
        self.robot = build_dart_robot(urdf_xml, contact_frames, friction=friction,
                                      contact_radius_m=contact_radius_m, timestep_s=DT_S,
                                      detector='fcl', link_collisions=True,
                                      gravity=(-G * math.sin(s), 0.0, -G * math.cos(s)))
        self.slope = s
        names = self.robot.dof_names
        self.actuated = [names.index(name) for name in actuated]
        self.force = np.zeros(len(names))

    def reset(self, q, v=None):
        self.robot.reset(q, np.zeros(len(q)) if v is None else v)

    def step(self, tau=()):
        self.force[self.actuated] = tau
        self.robot.step(self.force)

    @property
    def q(self):
        return self.robot.q

    @property
    def v(self):
        return self.robot.v

    def normal_force(self) -> float:
        result = self.robot.world.getLastCollisionResult()
        return float(sum(abs(np.asarray(c.force)[2]) for c in result.getContacts()))

    def touching(self) -> set:
        result = self.robot.world.getLastCollisionResult()
        return {b.getName() for b in result.getCollidingBodyNodes()
                if b.getSkeleton().getName() != 'ground'}


def _engine(engine, urdf, contact_frames=(), contact_radius_m=0.0, friction=0.8, slope_deg=0.0,
            actuated=()):
    if engine == 'dart':
        xml = urdf if isinstance(urdf, str) else robot_description_xml(urdf)
        return _Dart(xml, contact_frames, contact_radius_m=max(contact_radius_m, 1e-4),
                     friction=friction, slope_deg=slope_deg, actuated=actuated)
    if engine == 'mujoco':
        xml = urdf if isinstance(urdf, str) else robot_description_xml(urdf)
        return _Mujoco(xml, contact_frames, contact_radius_m=max(contact_radius_m, 1e-4),
                       friction=friction, slope_deg=slope_deg, actuated=actuated)
    terrain = {'terrain': 'slope', 'slope_deg': slope_deg} if slope_deg else {}
    radii = ({'contact_radii': (contact_radius_m,) * len(contact_frames)} if contact_frames
             else {})
    return _Dodo(urdf, engine, contact_frames, friction=friction, **terrain, **radii)


def box_drop(engine: str, seconds: float = 1.0) -> dict:
    """Drop the planar box flat from 5 cm: its rest, as errors from the statics."""
    box = _engine(engine, planar_box())
    half = 0.5 * BOX_SIZE_M[2]
    box.reset((0.0, half + 0.05, 0.0))
    for _ in range(round(seconds / DT_S)):
        box.step()
    q, v = box.q, box.v
    return {'rest height error m': q[1] - half, 'drift m': abs(q[0]), 'tilt rad': abs(q[2]),
            'speed m/s': float(np.abs(v).max()),
            'normal force / mg': box.normal_force() / (BOX_MASS_KG * G)}


def slope_box(engine: str, slope_deg: float, seconds: float = 0.3) -> dict:
    """
    Set the box on a slope falling with +x: its speed along the slope and its acceleration.

    The acceleration is fitted between 0.1 s and ``seconds``; Coulomb's value
    g (sin - mu cos) where positive, else 0 (it sticks).
    """
    theta = math.radians(-slope_deg)
    box = _engine(engine, planar_box(), friction=SLOPE_MU, slope_deg=-slope_deg)
    if engine == 'dart':                 # level ground, tilted gravity
        theta = 0.0
    normal = np.array((-math.sin(theta), math.cos(theta)))
    centre = 0.5 * BOX_SIZE_M[2] * normal
    box.reset((centre[0], centre[1], -theta))
    speeds = []
    for _ in range(round(seconds / DT_S)):
        box.step()
        speeds.append(math.hypot(box.v[0], box.v[1]))
    s = math.radians(slope_deg)
    rate = (speeds[-1] - speeds[99]) / (seconds - 0.1)
    return {'acceleration m/s^2': rate, 'speed m/s': speeds[-1],
            'coulomb m/s^2': max(0.0, G * (math.sin(s) - SLOPE_MU * math.cos(s)))}


def rolling_cylinder(engine: str, slope_deg: float = 20.0, seconds: float = 0.3) -> dict:
    """Roll the solid cylinder down a slope: acceleration along it, slip speed |v - omega r|."""
    theta = math.radians(-slope_deg)
    r = WHEEL_RADIUS_M
    wheel = _engine(engine, planar_wheel(r), slope_deg=-slope_deg)
    if engine == 'dart':                 # level ground, tilted gravity
        theta = 0.0
    centre = r * np.array((-math.sin(theta), math.cos(theta)))
    wheel.reset((centre[0], centre[1], 0.0))
    speeds = []
    for _ in range(round(seconds / DT_S)):
        wheel.step()
        speeds.append(math.hypot(wheel.v[0], wheel.v[1]))
    rate = (speeds[-1] - speeds[99]) / (seconds - 0.1)
    return {'acceleration m/s^2': rate, 'slip m/s': abs(wheel.v[2] * r - speeds[-1]),
            'rolling m/s^2': 2.0 / 3.0 * G * math.sin(math.radians(slope_deg))}


def collapsed_hopper(engine: str, seconds: float = 2.0) -> dict:
    """Collapse the hopper (issue 22): 0.6 s of hip -40 / knee -10 N*m, then zero torque."""
    start = Simulator(HOPPER, SimConfig(collisions='links'))
    q0 = start.robot.default_q.copy()
    hopper = _engine(engine, HOPPER, contact_frames=('foot',), contact_radius_m=0.02,
                     actuated=('hip', 'knee'))
    hopper.reset(q0)
    for step in range(round(seconds / DT_S)):
        hopper.step((-40.0, -10.0) if step < 600 else (0.0, 0.0))
    out = {'base z m': float(hopper.q[1]), 'speed': float(np.abs(hopper.v).max()),
           'touching': ' '.join(sorted(hopper.touching()))}
    if isinstance(hopper, _Dodo):
        out['lowest point m'] = hopper.lowest_point()
    return out


def fallen_walker(engine: str, seconds: float = 3.0) -> dict:
    """Let the Kneed Walker fall from its default pose (raised 0.1 m), zero torque."""
    start = Simulator(WALKER, SimConfig(contact_frames=WALKER_FEET, collisions='links'))
    q0 = start.robot.default_q.copy()
    q0[1] += 0.1                 # the URDF default has its feet 17 um under the ground
    walker = _engine(engine, WALKER, contact_frames=WALKER_FEET)
    walker.reset(q0)
    zero = (0.0,) * len(start.robot.actuated_idx_v) if isinstance(walker, _Dodo) else ()
    for _ in range(round(seconds / DT_S)):
        walker.step(zero)
    out = {'base z m': float(walker.q[1]), 'base pitch rad': float(walker.q[2]),
           'speed': float(np.abs(walker.v).max()),
           'touching': ' '.join(sorted(walker.touching()))}
    if isinstance(walker, _Dodo):
        out['lowest point m'] = walker.lowest_point()
    return out


def _dart_quadruped(path, q, joint_names, steps, torque=None) -> dict:
    """
    Run Solo-12 in DART from the pinocchio configuration ``q``; its final pose and contacts.

    ``torque(joint positions, joint velocities)``: joint torques in ``joint_names`` order (None:
    zero). DART's free joint: rotation vector then translation (world); its collision meshes as
    dodo_sim's bounding boxes (bench/urdf_boxes.py), detector FCL.
    """
    from dart_model import build_dart_robot
    import public_robots as pr
    robot = build_dart_robot(robot_description_xml(path), pr.SOLO_FEET, contact_radius_m=1e-4,
                             timestep_s=DT_S, detector='fcl', link_collisions=True,
                             floating=True, urdf_dir=Path(path).parent)
    joints = [robot.dof_names.index(name) for name in joint_names]
    x, y, z, w = q[3:7]
    positions = np.zeros(len(robot.dof_names))
    positions[:3] = pin.log3(pin.Quaternion(w, x, y, z).toRotationMatrix())
    positions[3:6] = q[:3]
    positions[joints] = q[7:]
    robot.reset(positions, np.zeros(len(positions)))
    force = np.zeros(len(positions))
    for _ in range(steps):
        if torque is not None:
            force[joints] = torque(robot.q[joints], robot.v[joints])
        robot.step(force)
    result = robot.world.getLastCollisionResult()
    touching = {b.getName() for b in result.getCollidingBodyNodes()
                if b.getSkeleton().getName() != 'ground'}
    depth = max((c.penetrationDepth for c in result.getContacts()), default=0.0)
    rotation = pin.exp3(robot.q[:3])
    return {'base z m': float(robot.q[5]), 'rotation': rotation,
            'speed': float(np.abs(robot.v).max()), 'touching': touching,
            'deepest contact m': float(depth)}


def _mujoco_quadruped(path, q, joint_names, steps, torque=None) -> dict:
    """
    Run Solo-12 in MuJoCo from the pinocchio configuration ``q``; its final pose and contacts.

    ``torque`` as for :func:`_dart_quadruped`. Its collision meshes as dodo_sim's bounding boxes
    (bench/urdf_boxes.py through bench/mujoco_urdf.py).
    """
    import public_robots as pr
    robot = build_mujoco_robot(robot_description_xml(path), pr.SOLO_FEET, contact_radius_m=1e-4,
                               link_collisions=True, urdf_dir=Path(path).parent,
                               timestep_s=DT_S)
    robot.set_state(q[:3], q[3:7], dict(zip(joint_names, q[7:])))
    m, d = robot.model, robot.data
    qpos = [robot.joint_qpos[n] for n in joint_names]
    dofs = [robot.joint_dof[n] for n in joint_names]
    for _ in range(steps):
        torques = {} if torque is None else torque(d.qpos[qpos], d.qvel[dofs])
        robot.step(dict(zip(joint_names, torques)))
    w, x, y, z = d.qpos[3:7]
    touching = {m.body(m.geom_bodyid[g]).name for c in d.contact[:d.ncon]
                for g in (c.geom1, c.geom2) if m.geom_bodyid[g]}
    return {'base z m': float(d.qpos[2]),
            'rotation': pin.Quaternion(w, x, y, z).toRotationMatrix(),
            'speed': float(np.abs(d.qvel).max()), 'touching': touching}


def fallen_quadruped(engine: str, seconds: float = 1.5) -> dict:
    """
    Drop Solo-12 (example-robot-data) crouched, 0.1 m up, with zero torque: where it rests.

    Its collision meshes collide as their bounding boxes in both engines (dodo_sim's rule; bench/
    mujoco_urdf.py and bench/dart_model.py give MuJoCo and DART the same boxes). dodo_sim's event
    integrator meets accumulations of events on
    this fall (88 support points land together, the first at 0.359 s) and takes those steps by
    time-stepping (``SimConfig.event_accumulation``); it is slow here (about 0.5 s of wall time
    per ms once resting), so the bench table runs it but the tests do not.
    """
    import public_robots as pr
    path = pr.solo12()
    # one dodo_sim model: the pose (and MuJoCo's joint names) come from it as well
    dodo = _Dodo(path, engine if engine in ('timestepping', 'event') else 'timestepping',
                 pr.SOLO_FEET)
    sim = dodo.sim
    q = pr.standing_pose(sim, pr.SOLO_STAND_LEGS, gap_m=0.1)
    steps = round(seconds / DT_S)
    if engine in PEER_QUADRUPEDS:
        out = PEER_QUADRUPEDS[engine](path, q, sim.robot.actuated_joint_names, steps)
        tilt = float(np.linalg.norm(pin.log3(out.pop('rotation'))))
        return {'base z m': out.pop('base z m'), 'tilt rad': tilt, 'speed': out.pop('speed'),
                'touching': ' '.join(sorted(out.pop('touching'))), **out}
    dodo.reset(q)
    for _ in range(steps):
        dodo.step(np.zeros(len(sim.robot.actuated_idx_v)))
    tilt = 2.0 * math.acos(min(1.0, abs(float(dodo.q[6]))))
    return {'base z m': float(dodo.q[2]), 'tilt rad': tilt, 'speed': float(np.abs(dodo.v).max()),
            'touching': ' '.join(sorted(dodo.touching() | {
                name for name, force in zip(sim.robot.contact_frames,
                                            dodo.state.contact_forces) if force[2] > 0.0})),
            'lowest point m': dodo.lowest_point(),
            'accumulation steps': sim.accumulation_steps}


#: peer engine -> its Solo-12 run (path, q, joint names, steps, torque) -> final pose and contacts
PEER_QUADRUPEDS = {'mujoco': _mujoco_quadruped, 'dart': _dart_quadruped}

#: joint PD of the tipped-over quadruped: holds the standing legs (N*m/rad, N*m*s/rad)
TIP_KP, TIP_KD = 5.0, 0.1


def tipped_quadruped(engine: str, tilt_deg: float = 40.0, seconds: float = 1.5) -> dict:
    """
    Tip Solo-12 (example-robot-data) over sideways: it falls over its right feet onto its back.

    Standing, its legs held by the same joint PD in both engines (TIP_KP, TIP_KD), the robot is
    turned ``tilt_deg`` about the line through its right feet (the feet 0.1 mm above the floor):
    past the tipping angle (36 deg in both engines) it rolls over its right legs and lands on
    the top of its base. dodo_sim's event integrator
    meets an accumulation of events when the right legs land (0.471 s) and takes that one step
    by time-stepping (``SimConfig.event_accumulation``, docs/physics.md).
    """
    import public_robots as pr
    path = pr.solo12()
    dodo = _Dodo(path, engine if engine in ('timestepping', 'event') else 'timestepping',
                 pr.SOLO_FEET)
    sim = dodo.sim
    q0 = pr.standing_pose(sim, pr.SOLO_STAND_LEGS)
    feet = dict(zip(sim.robot.contact_frames, sim.contact_positions(q0)))
    pivot = (feet['FR_FOOT'] + feet['HR_FOOT']) / 2.0
    turn = pin.rpy.rpyToMatrix(-math.radians(tilt_deg), 0.0, 0.0)     # towards -y, the right
    q = q0.copy()
    q[:3] = turn @ (q0[:3] - pivot) + pivot
    x, y, z, w = q0[3:7]
    tilted = pin.Quaternion(turn @ pin.Quaternion(w, x, y, z).toRotationMatrix())
    q[3:7] = (tilted.x, tilted.y, tilted.z, tilted.w)
    q[2] += 1e-4 - sim.contact_positions(q)[:, 2].min()
    legs = q[7:].copy()
    names = list(sim.robot.actuated_joint_names)
    steps = round(seconds / DT_S)
    if engine in PEER_QUADRUPEDS:
        out = PEER_QUADRUPEDS[engine](path, q, names, steps,
                                      lambda qj, vj: TIP_KP * (legs - qj) - TIP_KD * vj)
        rotation, touching = out.pop('rotation'), out.pop('touching')
    else:
        dodo.reset(q)
        for _ in range(steps):
            dodo.step(TIP_KP * (legs - dodo.q[7:]) - TIP_KD * dodo.v[6:])
        x, y, z, w = dodo.q[3:7]
        rotation = pin.Quaternion(w, x, y, z).toRotationMatrix()
        touching = dodo.touching() | {name for name, force in zip(
            sim.robot.contact_frames, dodo.state.contact_forces) if force[2] > 0.0}
        out = {'base z m': float(dodo.q[2]), 'speed': float(np.abs(dodo.v).max()),
               'lowest point m': dodo.lowest_point(),
               'accumulation steps': sim.accumulation_steps}
    roll, pitch, yaw = pin.rpy.matrixToRpy(rotation)
    return {**out, 'roll rad': float(roll), 'pitch rad': float(pitch), 'yaw rad': float(yaw),
            'touching': ' '.join(sorted(touching))}


CASES = (('box dropped flat', box_drop), ('box on 20 deg, mu 0.5', lambda e: slope_box(e, 20.0)),
         ('box on 35 deg, mu 0.5', lambda e: slope_box(e, 35.0)),
         ('cylinder rolling, 20 deg', rolling_cylinder),
         ('collapsed hopper', collapsed_hopper), ('Kneed Walker falling', fallen_walker))


def _cell(value) -> str:
    if isinstance(value, float):
        return f'{value:.4g}'
    return str(value)


def main() -> None:
    import dartpy
    print(f'MuJoCo {mujoco.__version__}, DART {dartpy.__version__} (FCL), dt = {DT_S} s; '
          'dodo_sim collisions=links\n')
    print('| case | engine | result |')
    print('|---|---|---|')
    for name, case in CASES:
        for engine in ENGINES:
            result = case(engine)
            text = ', '.join(f'{k} {_cell(v)}' for k, v in result.items())
            print(f'| {name} | {engine} | {text} |')
    for engine in ENGINES:
        text = ', '.join(f'{k} {_cell(v)}' for k, v in fallen_quadruped(engine).items())
        print(f'| Solo-12 falling | {engine} | {text} |')
        text = ', '.join(f'{k} {_cell(v)}' for k, v in tipped_quadruped(engine).items())
        print(f'| Solo-12 tipped over sideways | {engine} | {text} |')


if __name__ == '__main__':
    main()
