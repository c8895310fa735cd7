"""Launch the dodo_sim graph on a ROS 2 install (Jazzy / Kilted / Rolling).

    ros2 launch dodo_sim hop.launch.py                       # simulator + controller + RSP
    ros2 launch dodo_sim hop.launch.py rviz:=true record:=true bag:=runs/hop1
    ros2 launch dodo_sim hop.launch.py use_sim:=false        # a hardware driver publishes
                                                             # /joint_states and /foot_contact
    ros2 launch dodo_sim hop.launch.py --show-args           # documented arguments

The node set, executables and parameters come from ``dodo_sim.ros.graph`` — the same functions
``dodo hop`` uses on a plain machine (``launch_nodes``/``hop_nodes``, ``node_parameters``), so the
two cannot drift: with ``record:=true`` the simulator's start gate (``min_subscribers``) counts
the recorder exactly as in ``dodo hop``, and the bag holds the run from t = 0. The launch
arguments are evaluated once (an OpaqueFunction) and the nodes built from their values; string
parameters are passed typed (a bag called ``123`` or ``run #1`` stays that string).
robot_state_publisher gets robot_description from the xacro (``model`` argument) and publishes
/robot_description; the simulator simulates the same URDF. docs/running.md has the details.
"""
import shlex
from pathlib import Path
from typing import List

from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument, OpaqueFunction
from launch.conditions import evaluate_condition_expression
from launch.substitutions import Command, LaunchConfiguration, PathJoinSubstitution
from launch_ros.actions import Node
from launch_ros.parameter_descriptions import ParameterValue
from launch_ros.substitutions import FindPackageShare

from dodo_sim.ros import graph

#: Launch arguments that switch nodes on or off (true/false, 1/0).
SWITCHES = ('use_sim', 'record', 'rviz')


def _share_path(parts):
    return PathJoinSubstitution([FindPackageShare(graph.PACKAGE), *parts])


def _argument(arg: graph.LaunchArg) -> DeclareLaunchArgument:
    default = _share_path(arg.share_path) if arg.share_path else arg.default
    return DeclareLaunchArgument(arg.name, default_value=default, description=arg.description)


def _typed(value):
    """A parameter value launch_ros passes with its Python type (strings are not re-read as
    YAML: ``bag:=123`` stays the string '123')."""
    if isinstance(value, str):
        return ParameterValue(value, value_type=str)
    if isinstance(value, (list, tuple)) and value and all(isinstance(v, str) for v in value):
        return ParameterValue(list(value), value_type=List[str])
    return value


def _node(spec: graph.NodeSpec, running: tuple, values: dict, use_sim: bool) -> Node:
    parameters = []
    if spec.params_file:
        parameters.append(Path(values['params_file']))
    extra = {key: _typed(value) for key, value in graph.node_parameters(
        spec, running, values, use_sim=use_sim, launch=True).items()}
    if spec.robot_description:
        extra['robot_description'] = ParameterValue(
            Command(['xacro ', shlex.quote(values['model'])]), value_type=str)
    parameters.append(extra)
    arguments = [_share_path(a) if isinstance(a, tuple) else a for a in spec.arguments]
    return Node(package=spec.package, executable=spec.executable, name=spec.name,
                output='screen', parameters=parameters, arguments=arguments,
                remappings=list(spec.remappings))


def _switch(context, name: str) -> bool:
    text = LaunchConfiguration(name).perform(context)
    if text.strip().lower() not in ('true', 'false', '1', '0'):
        raise ValueError(f'launch argument {name}:={text!r}: expected true or false')
    return evaluate_condition_expression(context, [LaunchConfiguration(name)])


def _nodes(context):
    switches = {name: _switch(context, name) for name in SWITCHES}
    values = {arg.name: LaunchConfiguration(arg.name).perform(context)
              for arg in graph.LAUNCH_ARGUMENTS}
    running = graph.launch_nodes(**switches)
    return [_node(spec, running, values, switches['use_sim']) for spec in running]


def generate_launch_description() -> LaunchDescription:
    return LaunchDescription([_argument(a) for a in graph.LAUNCH_ARGUMENTS]
                             + [OpaqueFunction(function=_nodes)])
