# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
Any URDF as a MuJoCo model with point-like feet.

For side-by-side checks of dodo_sim on published robots (test_physics_public_robots.py,
bench_simulator.py).

MuJoCo's URDF importer welds the root link to the world (it drops the root's joint to the
world and merges the root into the world body), so a floating base is made explicit here as
Gazebo's convention reads the URDF: a ``world`` link and a ``floating`` joint (which MuJoCo
imports as a free joint) are added in memory. Fixed-joint links are kept as bodies
(``fusestatic="false"``) so that the contact frames exist; each gets a sphere geom of
``contact_radius_m``, the only geoms that collide, and the floor plane lies one radius below
z = 0, so "frame origin at z = 0" is "touching" in both engines. Soft contact: MuJoCo's
default solref (0.02 s time constant) and an elliptic cone; joint torques enter through
``qfrc_applied``.
"""
from __future__ import annotations

from dataclasses import dataclass
import xml.etree.ElementTree as ET

import mujoco
import numpy as np
from urdf_boxes import mesh_as_box


@dataclass(frozen=True)
class MujocoRobot:
    """
    The fields of ``MujocoRobot``.

    Fields:
        model / data: MuJoCo model and its data.
        joint_qpos / joint_dof: qpos and dof address of each named 1-DoF joint.
        foot_geoms: geom id of each contact frame's sphere.
    """

    model: mujoco.MjModel
    data: mujoco.MjData
    joint_qpos: dict
    joint_dof: dict
    foot_geoms: tuple

    def set_state(self, base_xyz, base_quat_xyzw, joints: dict, v_base6=None, v_joints=None):
        """
        Set the base pose (world) and the joint angles by name.

        The base quaternion is in pinocchio's order [x y z w].

        v_base6: pinocchio's free-flyer velocity [linear (base frame), angular (base frame)].
        """
        d = self.data
        mujoco.mj_resetData(self.model, d)
        d.qpos[:3] = base_xyz
        x, y, z, w = base_quat_xyzw
        d.qpos[3:7] = (w, x, y, z)
        for name, value in joints.items():
            d.qpos[self.joint_qpos[name]] = value
        if v_base6 is not None:
            rot = np.empty(9)
            mujoco.mju_quat2Mat(rot, d.qpos[3:7])
            d.qvel[:3] = rot.reshape(3, 3) @ np.asarray(v_base6[:3])  # MuJoCo: world linear
            d.qvel[3:6] = v_base6[3:]                                  # and local angular
        for name, value in (v_joints or {}).items():
            d.qvel[self.joint_dof[name]] = value
        mujoco.mj_forward(self.model, d)

    def step(self, torques: dict):
        self.data.qfrc_applied[:] = 0.0
        for name, value in torques.items():
            self.data.qfrc_applied[self.joint_dof[name]] = value
        mujoco.mj_step(self.model, self.data)

    def foot_forces(self) -> np.ndarray:
        """(n_feet, 3) world force of the floor on each foot sphere, N."""
        out = np.zeros((len(self.foot_geoms), 3))
        force = np.zeros(6)
        for i in range(self.data.ncon):
            contact = self.data.contact[i]
            for sign, geom in ((1.0, contact.geom2), (-1.0, contact.geom1)):
                if geom in self.foot_geoms:
                    mujoco.mj_contactForce(self.model, self.data, i, force)
                    # force is in the contact frame (rows of contact.frame), from geom1 on geom2
                    world = contact.frame.reshape(3, 3).T @ force[:3]
                    out[self.foot_geoms.index(geom)] += sign * world
        return out

    def com_velocity(self) -> np.ndarray:
        """World velocity of the whole robot's centre of mass, m/s."""
        m, d = self.model, self.data
        total = np.zeros(3)
        mass = 0.0
        vel = np.zeros(6)
        for body in range(1, m.nbody):
            mujoco.mj_objectVelocity(m, d, mujoco.mjtObj.mjOBJ_BODY, body, vel, 0)
            # velocity of the body frame origin; add omega x (com - origin)
            offset = d.xipos[body] - d.xpos[body]
            total += m.body_mass[body] * (vel[3:] + np.cross(vel[:3], offset))
            mass += m.body_mass[body]
        return total / mass


def build_mujoco_robot(urdf_xml: str, contact_frames, *, contact_radius_m: float = 1e-3,
                       friction: float = 0.8, timestep_s: float = 1e-3,
                       slope_deg: float = 0.0, floating: bool = True,
                       link_collisions: bool = False, urdf_dir=None) -> MujocoRobot:
    """
    Build the URDF as a MuJoCo model (module docs).

    ``link_collisions``: keep the URDF's ``<collision>`` shapes (spheres, boxes, cylinders; a
    mesh as the bounding box dodo_sim gives it, its file looked up from ``urdf_dir``; an
    unreadable mesh is dropped, as dodo_sim drops it) and let them touch the floor, as
    dodo_sim's ``collisions='links'`` does (no self-collision: robot geoms collide with the
    floor only). The floor then lies at z = 0 and each contact frame's sphere of
    ``contact_radius_m`` is centred at the frame, as dodo_sim's contact radius is.
    """
    root = ET.fromstring(urdf_xml.encode() if urdf_xml.lstrip().startswith('<?xml')
                         else urdf_xml)
    for link in root.findall('link'):
        for tag in ('visual',) if link_collisions else ('visual', 'collision'):
            for element in link.findall(tag):
                link.remove(element)
        if link_collisions:
            for element in link.findall('collision'):
                mesh_as_box(link, element, urdf_dir)
    children = {c.get('link') for j in root.iter('joint') for c in j.findall('child')}
    base = next(link.get('name') for link in root.findall('link')
                if link.get('name') not in children)
    if floating and base != 'world':
        ET.SubElement(root, 'link', {'name': 'world'})
        joint = ET.SubElement(root, 'joint', {'name': 'root_joint', 'type': 'floating'})
        ET.SubElement(joint, 'parent', {'link': 'world'})
        ET.SubElement(joint, 'child', {'link': base})
    extension = ET.Element('mujoco')
    # boundmass / boundinertia: MuJoCo refuses a moving body without mass, such as the massless
    # carriages of a planar base (prismatic x, prismatic z, pitch); 1e-9 kg changes nothing
    # measurable
    ET.SubElement(extension, 'compiler', {'discardvisual': 'true', 'fusestatic': 'false',
                                          'inertiafromgeom': 'false', 'boundmass': '1e-9',
                                          'boundinertia': '1e-12'})
    root.insert(0, extension)
    model = mujoco.MjModel.from_xml_string(ET.tostring(root, encoding='unicode'))
    spec = mujoco.MjSpec.from_string(_saved_xml(model))
    spec.option.timestep = timestep_s
    spec.option.cone = mujoco.mjtCone.mjCONE_ELLIPTIC
    floor = spec.worldbody.add_geom()
    floor.type = mujoco.mjtGeom.mjGEOM_PLANE
    floor.size = [50.0, 50.0, 0.1]
    floor.friction = [friction, 0.0, 0.0]
    slope = np.radians(slope_deg)
    # plane through (0, 0, -r) whose normal is tilted about -y (rises with x for slope > 0)
    offset = 0.0 if link_collisions else contact_radius_m
    floor.pos = [offset * np.sin(slope), 0.0, -offset * np.cos(slope)]
    floor.quat = [np.cos(-slope / 2), 0.0, np.sin(-slope / 2), 0.0]
    floor.condim = 3
    for body in spec.bodies:
        for geom in body.geoms:
            if geom is floor:
                continue
            if link_collisions:
                # touches the floor (contype 1 & conaffinity 1), never another robot geom
                geom.contype, geom.conaffinity = 2, 1
                geom.friction = [friction, 0.0, 0.0]
                geom.condim = 3
            else:
                geom.contype = geom.conaffinity = 0
    feet = []
    for frame in contact_frames:
        geom = spec.body(frame).add_geom()
        geom.type = mujoco.mjtGeom.mjGEOM_SPHERE
        geom.size = [contact_radius_m, 0.0, 0.0]
        geom.friction = [friction, 0.0, 0.0]
        geom.condim = 3
        geom.mass = 0.0
        if link_collisions:
            geom.contype, geom.conaffinity = 2, 1
        geom.name = f'{frame}_sphere'
        feet.append(geom.name)
    compiled = spec.compile()
    data = mujoco.MjData(compiled)
    qpos = {compiled.joint(j).name: int(compiled.jnt_qposadr[j]) for j in range(compiled.njnt)}
    dofs = {compiled.joint(j).name: int(compiled.jnt_dofadr[j]) for j in range(compiled.njnt)}
    return MujocoRobot(compiled, data, qpos, dofs,
                       tuple(mujoco.mj_name2id(compiled, mujoco.mjtObj.mjOBJ_GEOM, n)
                             for n in feet))


def _saved_xml(model) -> str:
    import os
    import tempfile
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, 'model.xml')
        mujoco.mj_saveLastXML(path, model)
        with open(path) as handle:
            return handle.read()
