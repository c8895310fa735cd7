# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
The launch description of the dodo_sim graph, shared by every launch file of the package.

``launch/hop.launch.py`` and ``launch/walk.launch.py`` are one line each:
``generate_launch_description = lambda: launch_description('walk')``; the profile
(:data:`dodo_sim.ros.graph.PROFILES`) sets the defaults of the params file and the rviz2
configuration. Everything else comes from ``dodo_sim.ros.graph`` — the functions ``dodo hop`` and
``dodo walk`` use on a plain machine (``launch_nodes``/``hop_nodes``, ``node_parameters``,
``robot_from_params``), so launch and CLI cannot drift: with ``record:=true`` the simulator's
start gate (``min_subscribers``) counts the recorder exactly as in ``dodo hop``, and the bag holds
the run from t = 0.

The launch arguments are evaluated once (an OpaqueFunction) and the nodes built from their
values; string parameters are passed typed (a bag called ``123`` or ``run #1`` stays that
string). The params file names the controller (its ``controller`` parameter) and the contact
frames (the simulator's ``contact_frames``): the recorder records every contact topic of the
robot. robot_state_publisher and the simulator get robot_description from the xacro of the
``model`` argument (empty: the controller's default model); robot_state_publisher publishes
/robot_description. With ``use_sim:=false`` the hardware ``driver`` takes the simulator's place
(docs/hardware.md; ``hardware:=emulated|can``): every node on wall time, the recorder records
/diagnostics and /estop; on emulated hardware the driver enables itself once the controller (and
the recorder) are up, a real bus (``hardware:=can``) never without an explicit ``ros2 service
call /driver/enable std_srvs/srv/Trigger``; the driver and the controller run under SCHED_FIFO
(``realtime_priority``) where permitted. docs/running.md has the details. This module imports
launch and launch_ros
(only launch files import it).
"""
from __future__ import annotations

from pathlib import Path
import shlex
import sys
from typing import List

from dodo_sim.ros import graph
from launch_ros.actions import Node
from launch_ros.parameter_descriptions import ParameterValue
from launch_ros.substitutions import FindPackageShare

from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument, OpaqueFunction
from launch.conditions import evaluate_condition_expression
from launch.substitutions import Command, LaunchConfiguration, PathJoinSubstitution

#: Launch arguments that switch nodes on or off (true/false, 1/0).
SWITCHES = ('use_sim', 'record', 'rviz')


def _share_path(parts):
    return PathJoinSubstitution([FindPackageShare(graph.PACKAGE), *parts])


def _argument(arg: graph.LaunchArg) -> DeclareLaunchArgument:
    default = _share_path(arg.share_path) if arg.share_path else arg.default
    return DeclareLaunchArgument(arg.name, default_value=default, description=arg.description)


def _typed(value):
    """
    Return a parameter value launch_ros passes with its Python type (strings are not re-read as.

    YAML: ``bag:=123`` stays the string '123').
    """
    if isinstance(value, str):
        return ParameterValue(value, value_type=str)
    if isinstance(value, (list, tuple)) and value and all(isinstance(v, str) for v in value):
        return ParameterValue(list(value), value_type=List[str])
    return value


def _prefix(spec: graph.NodeSpec, values: dict, use_sim: bool) -> str | None:
    """
    Command prefix of the hardware loop's FIFO scheduling.

    ``python -m dodo_sim.tools.supervisor fifo N --`` for the hardware loop's nodes (real-time
    scheduling where permitted, normal scheduling with a note where not); None otherwise.
    """
    text = values['realtime_priority']
    try:
        priority = int(text)
        fifo = graph.realtime_priority(spec, use_sim, priority)
    except ValueError:
        raise ValueError(f'launch argument realtime_priority:={text!r}: expected 0 (off) or '
                         f'1..99') from None
    if not fifo:
        return None
    return f'{shlex.quote(sys.executable)} -m dodo_sim.tools.supervisor fifo {fifo} --'


def _node(spec: graph.NodeSpec, running: tuple, values: dict, use_sim: bool,
          robot: graph.Robot) -> Node:
    parameters = []
    if spec.params_file:
        parameters.append(Path(values['params_file']))
    extra = {key: _typed(value) for key, value in graph.node_parameters(
        spec, running, values, use_sim=use_sim, launch=True, robot=robot).items()}
    if spec.robot_description:
        xml = robot.model.lstrip().startswith('<')
        extra['robot_description'] = ParameterValue(
            robot.model if xml else Command(['xacro ', shlex.quote(robot.model)]),
            value_type=str)
    parameters.append(extra)
    arguments = []
    for a in spec.arguments:
        if isinstance(a, graph.Arg):
            a = values[a.name]
        arguments.append(_share_path(a) if isinstance(a, tuple) else a)
    # exec_name: the process label stays the executable's under the SCHED_FIFO prefix
    return Node(package=spec.package, executable=spec.executable, name=spec.name,
                exec_name=spec.executable, output='screen', parameters=parameters,
                arguments=arguments, remappings=list(spec.remappings),
                prefix=_prefix(spec, values, use_sim))


def _switch(context, name: str) -> bool:
    text = LaunchConfiguration(name).perform(context)
    if text.strip().lower() not in ('true', 'false', '1', '0'):
        raise ValueError(f'launch argument {name}:={text!r}: expected true or false')
    return evaluate_condition_expression(context, [LaunchConfiguration(name)])


def _nodes(context, profile_name: str):
    switches = {name: _switch(context, name) for name in SWITCHES}
    values = {arg.name: LaunchConfiguration(arg.name).perform(context)
              for arg in graph.launch_arguments(profile_name)}
    graph.check_params_file(values['params_file'])     # names a bad key before anything starts
    if values['hardware'] not in graph.HARDWARE_KINDS:
        raise ValueError(f"launch argument hardware:={values['hardware']!r}: expected one of "
                         f'{graph.HARDWARE_KINDS}')
    robot = graph.robot_from_params(values['params_file'], values['model'] or None)
    if not switches['use_sim']:     # the driver must stand in for this robot's simulator
        graph.check_hardware(values['params_file'], robot, values['hardware'])
    running = graph.launch_nodes(**switches)
    return [_node(spec, running, values, switches['use_sim'], robot) for spec in running]


def launch_description(profile_name: str = 'hop') -> LaunchDescription:
    """Return the launch description of ``<profile_name>.launch.py`` (graph.PROFILES)."""
    return LaunchDescription([_argument(a) for a in graph.launch_arguments(profile_name)]
                             + [OpaqueFunction(function=_nodes,
                                               kwargs={'profile_name': profile_name})])


__all__ = ['launch_description', 'SWITCHES']
