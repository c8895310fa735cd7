# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
ros2_control's topic-based convention: how the simulator reads it (dodo_sim/ros/ros2_control.py).

In process, no rclpy: the URDFs are the shipped xacros' outputs (docs/ros2_control.md).
"""
import math

from conftest import REPO
from dodo_sim.ros.ros2_control import (description_for_controller_manager, hardware_plugins,
                                       topic_based_efforts, TOPIC_BASED_PLUGIN)
import pytest
import xacro

JOINTS, ACTUATED = ('base_x', 'base_z', 'hip', 'knee'), ('hip', 'knee')


def hopper(plugin=None) -> str:
    mappings = {} if plugin is None else {'hardware_plugin': plugin}
    return xacro.process_file(str(REPO / 'urdf' / 'hopper.urdf.xacro'),
                              mappings=mappings).toxml()


def test_only_a_topic_based_urdf_is_published_beside_a_controller_manager():
    """A controller_manager keeps the first robot_description: the mock one never commands."""
    assert hardware_plugins(hopper()) == ['mock_components/GenericSystem']
    publish, why = description_for_controller_manager(hopper())
    assert not publish and 'mock_components/GenericSystem' in why and 'hardware_plugin' in why
    assert description_for_controller_manager(hopper('topic_based')) == (True, '')
    assert hardware_plugins(hopper('topic_based')) == [TOPIC_BASED_PLUGIN]


def test_a_urdf_without_ros2_control_or_unparsable_is_not_published():
    assert description_for_controller_manager('<robot name="r"><link name="a"/></robot>')[0] \
        is False
    assert hardware_plugins('<robot') == []


def test_nan_efforts_say_that_no_effort_controller_commands_yet():
    """ros2_control's command interfaces hold NaN until a controller writes them."""
    torques, why = topic_based_efforts(JOINTS, (math.nan, math.nan), (), (), JOINTS, ACTUATED)
    assert torques is None and 'no active effort controller' in why
    torques, why = topic_based_efforts(JOINTS, (math.inf, 0.0), (), (), JOINTS, ACTUATED)
    assert torques is None and why.startswith('non-finite')


@pytest.mark.parametrize('efforts', [(1.0, -2.0), (0.0, 0.0)])
def test_finite_efforts_go_to_the_actuated_joints(efforts):
    assert topic_based_efforts(JOINTS, efforts, (), (), JOINTS, ACTUATED) == (efforts, '')
