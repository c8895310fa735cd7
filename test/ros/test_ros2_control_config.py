# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
The shipped ros2_control configuration agrees with the robots and the ROS contract.

``urdf/*.urdf.xacro hardware_plugin:=...`` and ``config/ros2_control/<robot>_controllers.yaml``
(docs/ros2_control.md). The ``gz`` and ``mujoco`` choices are checked against what the released
packages read (docs/ros2_control.md, "Other simulators"): gz_ros2_control jazzy @ fa9ced4
(``gz_ros2_control/src/gz_ros2_control_plugin.cpp``: the <gazebo> plugin block and its
``parameters``), mujoco_ros2_control 0.0.3 @ 35ba817 (``mujoco_system_interface_plugin.xml``:
``mujoco_ros2_control/MujocoSystemInterface``; ``src/mujoco_system_interface.cpp``: the
``mujoco_model`` hardware parameter, else the MJCF on ``/mujoco_robot_description``).
"""
from __future__ import annotations

import xml.etree.ElementTree as ET

from conftest import REPO
from dodo_sim.ros import contract
from dodo_sim.simulator import SimConfig, Simulator
import pytest
import xacro
import yaml

ROBOTS = ('hopper', 'boom_leg', 'kneed_walker')
CONTACT_FRAMES = {'kneed_walker': ('left_foot', 'right_foot')}
PLUGINS = {'mock': 'mock_components/GenericSystem',
           'topic_based': 'joint_state_topic_hardware_interface/JointStateTopicSystem',
           'gz': 'gz_ros2_control/GazeboSimSystem',
           'mujoco': 'mujoco_ros2_control/MujocoSystemInterface'}
#: gz_ros2_control's system plugin (gz_ros2_control/CMakeLists.txt: library gz_ros2_control-system,
#: gz_ros2_control_plugin.cpp: GZ_ADD_PLUGIN(gz_ros2_control::GazeboSimROS2ControlPlugin, ...))
GZ_PLUGIN = {'filename': 'gz_ros2_control-system',
             'name': 'gz_ros2_control::GazeboSimROS2ControlPlugin'}


def _hardware(robot: str, plugin: str | None, **mappings):
    if plugin is not None:
        mappings['hardware_plugin'] = plugin
    if plugin == 'gz':
        mappings.setdefault('gz_parameters', '/my/controllers.yaml')
    xml = xacro.process_file(str(REPO / 'urdf' / f'{robot}.urdf.xacro'),
                             mappings=mappings).toxml()
    block = ET.fromstring(xml).find('ros2_control')
    return xml, block


@pytest.mark.parametrize('robot', ROBOTS)
@pytest.mark.parametrize('plugin', sorted(PLUGINS))
def test_hardware_plugin_argument_chooses_the_plugin(robot, plugin):
    _, block = _hardware(robot, plugin)
    assert [p.text for p in block.find('hardware').findall('plugin')] == [PLUGINS[plugin]]


@pytest.mark.parametrize('robot', ROBOTS)
def test_default_is_mock_components(robot):
    _, block = _hardware(robot, None)
    assert [p.text for p in block.find('hardware').findall('plugin')] == [PLUGINS['mock']]


@pytest.mark.parametrize('robot', ROBOTS)
def test_topic_based_plugin_uses_the_contract_topics_and_publishes_every_update(robot):
    _, block = _hardware(robot, 'topic_based')
    params = {p.get('name'): p.text for p in block.find('hardware').findall('param')}
    assert params == {'joint_commands_topic': contract.ROS2_CONTROL_COMMANDS,
                      'joint_states_topic': contract.ROS2_CONTROL_STATES,
                      'trigger_joint_command_threshold': '-1'}


@pytest.mark.parametrize('robot', ROBOTS)
def test_effort_controller_joints_are_the_simulators_actuated_joints(robot):
    xml, block = _hardware(robot, 'topic_based')
    effort_joints = [j.get('name') for j in block.findall('joint')
                     if any(c.get('name') == 'effort' for c in j.findall('command_interface'))]
    config = yaml.safe_load((REPO / 'config' / 'ros2_control' /
                             f'{robot}_controllers.yaml').read_text())
    types = config['controller_manager']['ros__parameters']
    assert types['effort_controller']['type'] == 'effort_controllers/JointGroupEffortController'
    assert (types['joint_state_broadcaster']['type']
            == 'joint_state_broadcaster/JointStateBroadcaster')
    joints = config['effort_controller']['ros__parameters']['joints']
    sim = Simulator(xml, SimConfig(contact_frames=CONTACT_FRAMES.get(robot, ('foot',))))
    assert joints == effort_joints == list(sim.actuated_joint_names)


@pytest.mark.parametrize('robot', ROBOTS)
def test_gz_loads_gz_ros2_control_with_the_robots_controllers(robot, tmp_path, monkeypatch):
    """The <gazebo> block gz_ros2_control needs, its parameters file this robot's by default."""
    xml, _ = _hardware(robot, 'gz')
    (plugin,) = ET.fromstring(xml).findall('gazebo/plugin')
    assert plugin.attrib == GZ_PLUGIN
    assert [p.text for p in plugin.findall('parameters')] == ['/my/controllers.yaml']
    # default: $(find dodo_sim) (a ROS install's ament index) + the shipped controllers file
    (tmp_path / 'share' / 'ament_index' / 'resource_index' / 'packages').mkdir(parents=True)
    (tmp_path / 'share' / 'ament_index' / 'resource_index' / 'packages' / 'dodo_sim').touch()
    monkeypatch.setenv('AMENT_PREFIX_PATH', str(tmp_path))
    xml = xacro.process_file(str(REPO / 'urdf' / f'{robot}.urdf.xacro'),
                             mappings={'hardware_plugin': 'gz'}).toxml()
    (parameters,) = ET.fromstring(xml).findall('gazebo/plugin/parameters')
    relative = f'config/ros2_control/{robot}_controllers.yaml'
    assert parameters.text == str(tmp_path / 'share' / 'dodo_sim' / relative)
    assert (REPO / relative).is_file()


@pytest.mark.parametrize('robot', ROBOTS)
@pytest.mark.parametrize('plugin', ['mock', 'topic_based', 'mujoco'])
def test_only_gz_adds_a_gazebo_block(robot, plugin):
    xml, _ = _hardware(robot, plugin)
    assert ET.fromstring(xml).findall('gazebo') == []


@pytest.mark.parametrize('robot', ROBOTS)
def test_mujoco_names_its_mjcf_only_when_given(robot):
    """mujoco_ros2_control reads mujoco_model, else the MJCF on /mujoco_robot_description."""
    _, block = _hardware(robot, 'mujoco')
    assert block.find('hardware').findall('param') == []
    _, block = _hardware(robot, 'mujoco', mujoco_model='/my/scene.xml')
    params = {p.get('name'): p.text for p in block.find('hardware').findall('param')}
    assert params == {'mujoco_model': '/my/scene.xml'}
