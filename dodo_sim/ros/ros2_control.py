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
  xacro sets -1: publish every update);
* a command interface nobody wrote holds NaN (ros2_control's initial value): until an effort
  controller is active and has received a command, ``write()`` sends NaN efforts.

The simulator's side of the lockstep start and pairing rule is the exchange core's
(:meth:`dodo_sim.ros.exchange.LockstepExchange.topic_based`, docs/ros2_control.md "Lockstep");
what lives here: how a command is read, the wall pace of the start ticks, and which
robot_description the simulator may publish beside a controller_manager.
"""
from __future__ import annotations

import math
from typing import Sequence
import xml.etree.ElementTree as ET

#: The topic-based system's plugin name (the <hardware><plugin> of the <ros2_control> block).
TOPIC_BASED_PLUGIN = 'joint_state_topic_hardware_interface/JointStateTopicSystem'
#: Wall s after which, before the first answer, a state nothing was written for is published
#: again one period later (``LockstepExchange(clock_tick_s=...)``): the controller_manager's
#: loop needs /clock to move to start (wait_until_started, then one period slept on /clock),
#: and nothing it does can be seen before its first write. Checked by the simulator's
#: watchdog (every <= 50 ms), so the start takes a few ticks of 50-100 ms.
CLOCK_TICK_S = 0.05


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
    if any(math.isnan(t) for t in torques):
        return None, (f'NaN effort {list(torques)} N*m: the controller_manager has no command for '
                      f'the joint (no active effort controller, or it has received no command '
                      f'yet: spawn it and publish on its commands topic); a NaN answers no state')
    if not all(math.isfinite(t) for t in torques):
        return None, f'non-finite effort {list(torques)} N*m'
    return torques, ''


def hardware_plugins(urdf_xml: str) -> list:
    """Return the <hardware><plugin> names of every <ros2_control> block of a URDF (text)."""
    try:
        root = ET.fromstring(urdf_xml)
    except ET.ParseError:
        return []
    return [(plugin.text or '').strip() for block in root.findall('ros2_control')
            for plugin in block.findall('hardware/plugin')]


def description_for_controller_manager(urdf_xml: str) -> tuple[bool, str]:
    """
    Return whether the simulator may publish this URDF beside a controller_manager, and why not.

    Under the ros2_control convention a controller_manager takes the first robot_description
    it receives and ignores every later one (controller_manager.cpp,
    ``robot_description_callback``). Published beside robot_state_publisher's, the
    simulator's URDF would race it: only a URDF whose <ros2_control> hardware is the
    topic-based system commands this simulator, so only such a URDF is published.
    """
    plugins = hardware_plugins(urdf_xml)
    if plugins and all(p == TOPIC_BASED_PLUGIN for p in plugins):
        return True, ''
    return False, (f'its <ros2_control> hardware is {plugins or "missing"}, not '
                   f'{TOPIC_BASED_PLUGIN}: a controller_manager that took it would never '
                   f'command this simulator, and it would race the robot_description of '
                   f'robot_state_publisher (xacro ... hardware_plugin:=topic_based), which the '
                   f'controller_manager must get')


__all__ = ['TOPIC_BASED_PLUGIN', 'CLOCK_TICK_S', 'topic_based_efforts', 'hardware_plugins',
           'description_for_controller_manager']
