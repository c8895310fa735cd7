# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
A dodo_sim robot in pybullet (Bullet's multibody + sequential-impulse contact).

It is built from the same URDF/xacro, for the speed bench only.

Every URDF ``<collision>`` is replaced: each contact link gets one collision sphere of radius
``contact_radius_m`` at its origin, the ground is a plane at z = 0. The root link is fixed to the
world; the default velocity motors are disabled so that the joints take the given torques.
"""
from __future__ import annotations

from dataclasses import dataclass
import os
import tempfile
import xml.etree.ElementTree as ET


@dataclass
class BulletRobot:
    client: int
    body: int
    joints: list
    contact_links: list
    plane: int
    ndof: int

    def reset(self, q, v) -> None:
        import pybullet as p
        for j, qj, vj in zip(self.joints, q, v):
            p.resetJointState(self.body, j, float(qj), float(vj), physicsClientId=self.client)

    def step(self, generalized_force) -> None:
        import pybullet as p
        p.setJointMotorControlArray(self.body, self.joints, p.TORQUE_CONTROL,
                                    forces=generalized_force, physicsClientId=self.client)
        p.stepSimulation(physicsClientId=self.client)

    def qv(self):
        import pybullet as p
        states = p.getJointStates(self.body, self.joints, physicsClientId=self.client)
        return [s[0] for s in states], [s[1] for s in states]

    def contact_count(self) -> int:
        import pybullet as p
        return len(p.getContactPoints(self.body, self.plane, physicsClientId=self.client))


def build_bullet_robot(urdf_xml: str, contact_frames, *, contact_radius_m: float = 1e-3,
                       friction: float = 0.8, timestep_s: float = 1e-3) -> BulletRobot:
    import pybullet as p

    root = ET.fromstring(urdf_xml.encode() if urdf_xml.lstrip().startswith('<?xml') else urdf_xml)
    for block in root.findall('ros2_control'):
        root.remove(block)
    for link in root.findall('link'):
        for collision in link.findall('collision'):
            link.remove(collision)
        if link.get('name') in contact_frames:
            collision = ET.SubElement(link, 'collision')
            geometry = ET.SubElement(collision, 'geometry')
            ET.SubElement(geometry, 'sphere', radius=repr(contact_radius_m))
        if link.find('inertial') is None and link.get('name') != root.find('link').get('name'):
            inertial = ET.SubElement(link, 'inertial')
            ET.SubElement(inertial, 'mass', value='1e-6')
            ET.SubElement(inertial, 'inertia', ixx='1e-9', iyy='1e-9', izz='1e-9', ixy='0',
                          ixz='0', iyz='0')
    client = p.connect(p.DIRECT)
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, 'robot.urdf')
        with open(path, 'w') as f:
            f.write(ET.tostring(root, encoding='unicode'))
        body = p.loadURDF(path, useFixedBase=True, physicsClientId=client)
    p.setGravity(0, 0, -9.81, physicsClientId=client)
    p.setPhysicsEngineParameter(fixedTimeStep=timestep_s, numSubSteps=0,
                                physicsClientId=client)
    plane = p.createMultiBody(0, p.createCollisionShape(p.GEOM_PLANE, physicsClientId=client),
                              physicsClientId=client)
    p.changeDynamics(plane, -1, lateralFriction=friction, restitution=0.0,
                     physicsClientId=client)
    joints, links = [], []
    for j in range(p.getNumJoints(body, physicsClientId=client)):
        info = p.getJointInfo(body, j, physicsClientId=client)
        if info[2] != p.JOINT_FIXED:
            joints.append(j)
        if info[12].decode() in contact_frames:
            links.append(j)
            p.changeDynamics(body, j, lateralFriction=friction, restitution=0.0,
                             physicsClientId=client)
    p.setJointMotorControlArray(body, joints, p.VELOCITY_CONTROL, forces=[0.0] * len(joints),
                                physicsClientId=client)
    return BulletRobot(client=client, body=body, joints=joints, contact_links=links, plane=plane,
                       ndof=len(joints))
