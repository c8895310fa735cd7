"""Launch the dodo_sim graph on a ROS 2 install (Jazzy / Kilted / Rolling).

    ros2 launch dodo_sim hop.launch.py                       # simulator + controller + RSP
    ros2 launch dodo_sim hop.launch.py rviz:=true record:=true bag:=runs/hop1
    ros2 launch dodo_sim hop.launch.py use_sim:=false        # a hardware driver publishes
                                                             # /joint_states and /foot_contact
    ros2 launch dodo_sim hop.launch.py --show-args           # documented arguments

The node set, executables, parameters and conditions come from ``dodo_sim.ros.graph`` — the same
source ``dodo hop`` uses on a plain machine, so the two cannot drift (test/test_launch.py).
robot_state_publisher gets robot_description from the xacro (``model`` argument) and publishes
/robot_description; the simulator simulates the same URDF.
"""
from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument
from launch.conditions import IfCondition
from launch.substitutions import Command, LaunchConfiguration, PathJoinSubstitution
from launch_ros.actions import Node
from launch_ros.parameter_descriptions import ParameterValue
from launch_ros.substitutions import FindPackageShare

from dodo_sim.ros import graph


def _share_path(parts):
    return PathJoinSubstitution([FindPackageShare(graph.PACKAGE), *parts])


def _argument(arg: graph.LaunchArg) -> DeclareLaunchArgument:
    default = _share_path(arg.share_path) if arg.share_path else arg.default
    return DeclareLaunchArgument(arg.name, default_value=default, description=arg.description)


def _value(value):
    return LaunchConfiguration(value.name) if isinstance(value, graph.Arg) else value


def _node(spec: graph.NodeSpec) -> Node:
    if spec.sim_only and spec.condition:
        raise ValueError(f'{spec.name}: a node has at most one launch condition')
    condition = None
    if spec.sim_only:
        condition = IfCondition(LaunchConfiguration('use_sim'))
    elif spec.condition:
        condition = IfCondition(LaunchConfiguration(spec.condition))
    parameters = []
    if spec.params_file:
        parameters.append(LaunchConfiguration('params_file'))
    extra = {'use_sim_time': ParameterValue(LaunchConfiguration('use_sim'), value_type=bool)}
    if spec.robot_description:
        extra['robot_description'] = ParameterValue(
            Command(['xacro ', LaunchConfiguration('model')]), value_type=str)
    extra.update({k: _value(v) for k, v in spec.parameters.items()})
    extra.update({k: _value(v) for k, v in spec.launch_parameters.items()})
    parameters.append(extra)
    arguments = [_share_path(a) if isinstance(a, tuple) else a for a in spec.arguments]
    return Node(package=spec.package, executable=spec.executable, name=spec.name,
                output='screen', parameters=parameters, arguments=arguments,
                remappings=list(spec.remappings), condition=condition)


def generate_launch_description() -> LaunchDescription:
    return LaunchDescription([_argument(a) for a in graph.LAUNCH_ARGUMENTS]
                             + [_node(spec) for spec in graph.NODES])
