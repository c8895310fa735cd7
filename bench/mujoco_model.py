# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
The hopper as a MuJoCo model, built from the same URDF/xacro as dodo_sim (bench only).

Steps: xacro -> URDF XML (``dodo_sim.model.robot_description_xml``) -> a few importer fixes
(compiler options: no visuals, keep the fixed foot body, no inertia from geoms - otherwise the
foot sphere would weigh 34 g -, and a tiny mass on the massless boom carriage) -> MuJoCo's URDF
importer ->
``mj_saveLastXML`` -> MJCF edits with xml.etree (timestep, floor, contact geoms, motors) -> reload.

Contact geometry: dodo_sim's contact point is the foot frame origin (the centre of the drawn foot
sphere). Here the foot sphere is the only colliding geom and the floor plane lies one foot radius
below z = 0, so "foot centre z = 0" means "touching" in both simulators and the penetration
of MuJoCo's soft contact is simply ``-foot_z`` as it is for dodo_sim.
"""
from __future__ import annotations

from dataclasses import dataclass
import os
import tempfile
import xml.etree.ElementTree as ET

from dodo_sim.model import ACTUATED_JOINTS, JOINT_NAMES, robot_description_xml
import mujoco
import numpy as np

#: Mass given to the massless boom carriage link (MuJoCo rejects massless moving bodies), kg.
BOOM_CARRIAGE_MASS_KG = 1e-6
#: Its (diagonal) rotational inertia, kg*m^2.
BOOM_CARRIAGE_INERTIA_KGM2 = 1e-9


@dataclass(frozen=True)
class MujocoHopper:
    """
    A compiled MuJoCo hopper and the ids the bench needs.

    Fields:
        model: compiled ``mujoco.MjModel``.
        foot_geom_id: id of the foot sphere geom (the only geom that collides with the floor).
        foot_radius_m: its radius, m; the floor plane is at z = -foot_radius_m.
        qpos_index: qpos address of each of ``JOINT_NAMES`` (q = [x, z, hip, knee]).
        mjcf: the final MJCF text.
    """

    model: mujoco.MjModel
    foot_geom_id: int
    foot_radius_m: float
    qpos_index: tuple
    mjcf: str

    def foot_z(self, data: mujoco.MjData) -> float:
        """World z of the foot sphere centre (the dodo_sim contact point), m."""
        return float(data.geom_xpos[self.foot_geom_id, 2])


def _urdf_for_mujoco(urdf_xml: str) -> str:
    root = ET.fromstring(urdf_xml)
    extension = ET.SubElement(root, 'mujoco')
    ET.SubElement(extension, 'compiler', discardvisual='true', fusestatic='false',
                  balanceinertia='true', inertiafromgeom='false')
    for link in root.findall('link'):
        moving = any(j.find('child').get('link') == link.get('name')
                     for j in root.findall('joint') if j.get('type') != 'fixed')
        if moving and link.find('inertial') is None:
            inertial = ET.SubElement(link, 'inertial')
            ET.SubElement(inertial, 'mass', value=repr(BOOM_CARRIAGE_MASS_KG))
            i = repr(BOOM_CARRIAGE_INERTIA_KGM2)
            ET.SubElement(inertial, 'inertia', ixx=i, iyy=i, izz=i, ixy='0', ixz='0', iyz='0')
    return ET.tostring(root, encoding='unicode')


def build_mujoco_hopper(urdf_xml_or_path, *, timestep_s: float = 0.001, friction: float = 0.8,
                        xacro_args=None) -> MujocoHopper:
    """Load the hopper description into MuJoCo with a floor and hip/knee torque motors."""
    urdf = _urdf_for_mujoco(robot_description_xml(urdf_xml_or_path, xacro_args))
    imported = mujoco.MjModel.from_xml_string(urdf)
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, 'hopper.xml')
        mujoco.mj_saveLastXML(path, imported)
        root = ET.parse(path).getroot()

    option = root.find('option')
    if option is None:
        option = ET.Element('option')
        root.insert(1, option)
    option.set('timestep', repr(timestep_s))
    option.set('gravity', '0 0 -9.81')

    foot_body = root.find(".//body[@name='foot']")
    if foot_body is None:
        raise ValueError("MuJoCo import lost the 'foot' body (is fusestatic off?)")
    foot_geoms = [g for g in foot_body.findall('geom') if g.get('type', 'sphere') == 'sphere']
    if len(foot_geoms) != 1:
        raise ValueError(f'expected one foot sphere geom, found {len(foot_geoms)}')
    foot_geom = foot_geoms[0]
    foot_geom.set('name', 'foot_sphere')
    foot_radius = float(foot_geom.get('size').split()[0])
    for geom in root.iter('geom'):  # only the foot sphere touches anything
        geom.set('contype', '0')
        geom.set('conaffinity', '0')
    foot_geom.set('contype', '1')
    foot_geom.set('conaffinity', '1')
    foot_geom.set('friction', f'{friction} 0.005 0.0001')

    worldbody = root.find('worldbody')
    worldbody.insert(0, ET.Element('geom', name='floor', type='plane', size='0 0 1',
                                   pos=f'0 0 {-foot_radius!r}', contype='1', conaffinity='1',
                                   friction=f'{friction} 0.005 0.0001'))
    actuator = root.find('actuator')
    if actuator is None:
        actuator = ET.SubElement(root, 'actuator')
    for joint in ACTUATED_JOINTS:
        ET.SubElement(actuator, 'motor', name=joint, joint=joint, gear='1')

    mjcf = ET.tostring(root, encoding='unicode')
    model = mujoco.MjModel.from_xml_string(mjcf)
    qpos_index = tuple(int(model.jnt_qposadr[model.joint(name).id]) for name in JOINT_NAMES)
    if qpos_index != (0, 1, 2, 3) or model.nv != 4:
        raise ValueError(f'unexpected MuJoCo coordinates {qpos_index}, nv = {model.nv}')
    return MujocoHopper(model=model, foot_geom_id=model.geom('foot_sphere').id,
                        foot_radius_m=foot_radius, qpos_index=qpos_index, mjcf=mjcf)


def compare_with_pinocchio(hopper: MujocoHopper, leg, q) -> dict:
    """Largest differences of mass matrix, gravity torques and foot position at q (same model?)."""
    import pinocchio as pin
    q = np.asarray(q, float)
    data = mujoco.MjData(hopper.model)
    data.qpos[:] = q
    mujoco.mj_forward(hopper.model, data)
    mass_mj = np.zeros((4, 4))
    try:  # MuJoCo >= 3.5 passes MjData; older versions the sparse qM array
        mujoco.mj_fullM(hopper.model, data, mass_mj)
    except TypeError:
        mujoco.mj_fullM(hopper.model, mass_mj, data.qM)
    pdata = leg.model.createData()
    mass_pin = pin.crba(leg.model, pdata, q)
    mass_pin = np.triu(mass_pin) + np.triu(mass_pin, 1).T
    gravity_pin = pin.computeGeneralizedGravity(leg.model, pdata, q)
    pin.framesForwardKinematics(leg.model, pdata, q)
    foot_pin = pdata.oMf[leg.foot_frame_id].translation
    return {
        'mass_matrix': float(np.abs(mass_mj - mass_pin).max()),
        'gravity_torque': float(np.abs(data.qfrc_bias - gravity_pin).max()),
        'foot_position': float(np.abs(data.geom_xpos[hopper.foot_geom_id] - foot_pin).max()),
    }
