# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
ros2_control's topic-based system, the command side (docs/ros2_control.md).

Pure functions, no rclpy: the simulator node and the hardware driver read the plugin's commands
through them.

The plugin is ``joint_state_topic_hardware_interface/JointStateTopicSystem``
(ros-controls/topic_based_hardware_interfaces, formerly PickNikRobotics/topic_based_ros2_control;
read at commit d115f23, ``joint_state_topic_hardware_interface/src/
joint_state_topic_hardware_interface.cpp``). Its ``write()`` publishes one sensor_msgs/JointState
per controller_manager update:

* ``name``: every joint of the URDF's <ros2_control> block, in block order;
* ``position`` / ``velocity`` / ``effort``: one value per *command interface* of that kind, in
  the same joint order (a joint with only state interfaces, such as the hopper's base joints,
  adds a name and nothing else);
* ``header.stamp = get_node()->now()``: the controller_manager's clock (sim time under
  ``use_sim_time``), not the stamp of a state;
* published with ``rclcpp::QoS(1)``, and only when the summed |state - command| over all
  command interfaces exceeds ``trigger_joint_command_threshold`` (default 1e-5; the shipped
  xacro sets -1: publish every update).
"""
from __future__ import annotations

import math
from typing import Sequence


def topic_based_efforts(names: Sequence[str], effort: Sequence[float],
                        position: Sequence[float], velocity: Sequence[float],
                        joint_names: Sequence[str], actuated: Sequence[str]
                        ) -> tuple[tuple | None, str]:
    """
    Return the torques (in ``actuated`` order, N*m) of one topic-based command, or ``(None, why)``.

    ``joint_names``: every joint of the robot; ``actuated``: the effort-commanded ones. The
    efforts belong to the actuated joints in the order ``names`` lists them; other joints of
    the robot may be named (state-only joints of the <ros2_control> block).
    """
    if len(position) or len(velocity):
        return None, (f'{len(position)} position / {len(velocity)} velocity commands: only '
                      f'effort command interfaces can be applied')
    known = set(joint_names)
    actuated_set = set(actuated)
    unknown = [n for n in names if n not in known]
    named = [n for n in names if n in actuated_set]
    if unknown or sorted(named) != sorted(actuated) or len(effort) != len(named):
        return None, (f'joints {list(names)} with {len(effort)} efforts; need every actuated '
                      f'joint {list(actuated)} named once (other joints of {list(joint_names)} '
                      f'may be named) and one effort per actuated joint, in the order named')
    by_name = dict(zip(named, effort))
    torques = tuple(float(by_name[n]) for n in actuated)
    if not all(math.isfinite(t) for t in torques):
        return None, f'non-finite effort {list(torques)} N*m'
    return torques, ''


__all__ = ['topic_based_efforts']
