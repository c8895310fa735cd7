# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
Robot descriptions with numbers the engine cannot simulate are refused at load, in one line.

Issue 27 items 14 and 15: an infinite collision sphere and a massless moving link loaded and then
failed as "simulation diverged"; negative or NaN collision sizes were accepted. pinocchio's URDF
parser also loads a negative mass, a NaN mass (as 0 kg), a negative inertia, a zero joint axis and
lower > upper. Each is now a ModelError naming the link or joint and the field
(dodo_sim/physics/urdf_check.py, docs/physics.md "Model inputs").
"""
from dodo_sim.physics.robot import load_robot, ModelError
from dodo_sim.simulator import SimConfig, Simulator
import pytest

# a floating box with one arm on a revolute joint; the fields the cases replace are {name}
TEMPLATE = """<robot name="toy">
  <link name="base">
    <inertial><origin xyz="{base_com}"/><mass value="{base_mass}"/>
      <inertia ixx="0.1" iyy="0.1" izz="0.1" ixy="0" ixz="0" iyz="0"/></inertial>
    <collision><origin xyz="{collision_xyz}"/><geometry>{base_shape}</geometry></collision>
  </link>
  <joint name="shoulder" type="revolute">
    <parent link="base"/><child link="arm"/><origin xyz="{joint_xyz}" rpy="0 0 0"/>
    <axis xyz="{axis}"/>
    <limit lower="{lower}" upper="{upper}" effort="{effort}" velocity="{velocity}"/>
  </joint>
  <link name="arm">
    <inertial><mass value="{arm_mass}"/>
      <inertia ixx="{arm_ixx}" iyy="0.01" izz="0.01" ixy="0" ixz="0" iyz="0"/></inertial>
    <collision><geometry><cylinder radius="{cylinder_radius}" length="0.3"/></geometry></collision>
  </link>
</robot>"""
GOOD = {'base_com': '0 0 0', 'base_mass': '2', 'collision_xyz': '0 0 0',
        'base_shape': '<box size="0.2 0.2 0.1"/>', 'joint_xyz': '0.1 0 0', 'axis': '0 1 0',
        'lower': '-1', 'upper': '1', 'effort': '5', 'velocity': '10', 'arm_mass': '0.5',
        'arm_ixx': '0.01', 'cylinder_radius': '0.02'}


def urdf(**changes) -> str:
    return TEMPLATE.format(**{**GOOD, **changes})


def test_the_toy_loads_and_runs():
    sim = Simulator(urdf(), SimConfig(contact_frames=()))
    assert len(sim.robot.collision_points) > 8
    sim.step([0.0])


@pytest.mark.parametrize('shape, field', [
    ('<sphere radius="inf"/>', '<collision> <sphere radius>'),
    ('<sphere radius="nan"/>', '<collision> <sphere radius>'),
    ('<sphere radius="-0.1"/>', '<collision> <sphere radius>'),
    ('<sphere/>', '<collision> <sphere radius>'),
    ('<box size="0.2 -0.2 0.1"/>', '<collision> <box size>'),
    ('<box size="0.2 nan 0.1"/>', '<collision> <box size>'),
    ('<box size="0.2 0.2"/>', '<collision> <box size>'),
    ('<cylinder radius="0.1" length="inf"/>', '<collision> <cylinder length>'),
    ('<cylinder radius="-1" length="0.1"/>', '<collision> <cylinder radius>'),
    ('<mesh filename="x.stl" scale="1 nan 1"/>', '<collision> <mesh scale>'),
])
def test_a_collision_size_that_is_not_a_finite_size_is_refused_naming_link_and_field(
        shape, field):
    with pytest.raises(ModelError) as error:
        Simulator(urdf(base_shape=shape), SimConfig(contact_frames=()))
    message = str(error.value)
    assert "link 'base'" in message and field in message and '\n' not in message


def test_zero_sizes_are_points_and_plates_and_load():
    for shape in ('<sphere radius="0"/>', '<box size="0.2 0.2 0"/>'):
        Simulator(urdf(base_shape=shape), SimConfig(contact_frames=()))


@pytest.mark.parametrize('changes, names', [
    ({'arm_mass': '-0.5'}, ("link 'arm'", '<mass value>')),
    ({'arm_mass': 'nan'}, ("link 'arm'", '<mass value>')),    # urdfdom: a massless link
    ({'arm_ixx': '-0.05'}, ("link 'arm'", 'not positive semi-definite')),
    ({'arm_ixx': 'inf'}, ("link 'arm'", '<inertia ixx>')),
    ({'base_com': '0 nan 0'}, ("link 'base' <inertial>", '<origin xyz>')),
    ({'collision_xyz': 'inf 0 0'}, ("link 'base' <collision>", '<origin xyz>')),
    ({'joint_xyz': '0.1 0 nan'}, ("joint 'shoulder'", '<origin xyz>')),
    ({'axis': '0 0 0'}, ("joint 'shoulder'", '<axis xyz>', 'non-zero')),
    ({'lower': '1', 'upper': '-1'}, ("joint 'shoulder'", '<limit lower>', 'above')),
    ({'lower': 'nan'}, ("joint 'shoulder'", '<limit lower>')),
    ({'effort': '-5'}, ("joint 'shoulder'", '<limit effort>', 'N*m')),
    ({'velocity': '-1'}, ("joint 'shoulder'", '<limit velocity>', 'rad/s')),
    ({'effort': 'nan'}, ("joint 'shoulder'", '<limit effort>')),
])
def test_a_bad_mass_inertia_origin_axis_or_limit_is_refused_naming_it(changes, names):
    with pytest.raises(ModelError) as error:
        load_robot(urdf(**changes), contact_frames=())
    message = str(error.value)
    assert all(name in message for name in names), message
    assert '\n' not in message


def test_a_massless_moving_link_is_refused_naming_it():
    """A leaf link without <inertial> on a revolute joint: M has a zero row (it diverged)."""
    massless = urdf().split('<link name="arm">')[0] + (
        '<link name="arm"><collision><geometry><sphere radius="0.05"/></geometry></collision>'
        '</link></robot>')
    with pytest.raises(ModelError, match=r"singular.*'shoulder'.*link\(s\) 'arm' have no mass"):
        Simulator(massless, SimConfig(contact_frames=()))


def test_a_point_mass_turning_about_itself_is_refused():
    """A link with mass but no rotational inertia on its own axis moves no inertia."""
    with pytest.raises(ModelError, match=r"singular.*'shoulder'.*link\(s\) 'arm'"):
        load_robot(urdf(arm_ixx='0', joint_xyz='0 0 0').replace(
            'iyy="0.01" izz="0.01"', 'iyy="0" izz="0"'), contact_frames=())


def test_a_massless_link_carried_by_a_massive_one_loads():
    """The hopper's massless boom carriage moves the body after it: its joint moves inertia."""
    load_robot('urdf/hopper.urdf.xacro')


def test_an_entity_expansion_bomb_is_still_refused_as_invalid_xml():
    bomb = ('<?xml version="1.0"?><!DOCTYPE r [<!ENTITY a "aaaaaaaaaa">'
            + ''.join(f'<!ENTITY {chr(98 + i)} "{("&" + chr(97 + i) + ";") * 10}">'
                      for i in range(8))
            + ']>' + urdf().replace('name="toy"', 'name="&i;"'))
    with pytest.raises(ModelError, match='invalid URDF'):
        load_robot(bomb, contact_frames=())
