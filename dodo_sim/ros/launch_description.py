# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
The launch description of the dodo_sim graph, shared by every launch file of the package.

``launch/hop.launch.py`` and ``launch/walk.launch.py`` are one line each:
``generate_launch_description = lambda: launch_description('walk')``; the profile
(:data:`dodo_sim.ros.graph.PROFILES`) sets the defaults of the params file and the rviz2
configuration. Everything else comes from ``dodo_sim.ros.graph`` — the functions ``dodo hop`` and
``dodo walk`` use on a plain machine (``launch_nodes``/``hop_nodes``, ``node_parameters``,
``robot_from_params``), so launch and CLI cannot drift.

The description is readable and composable (docs/running.md, "Launch"):

* one ``Node`` action per node of :data:`dodo_sim.ros.graph.NODES`, visible to
  ``ros2 launch dodo_sim hop.launch.py --print``, each with its condition (``use_sim``,
  ``record``, ``rviz``; the controller node: unless ``controller:=none``/``external`` or the
  params file's ``command_convention: ros2_control``), the ``namespace`` argument and the
  namespace remaps of /clock, /tf,
  /tf_static, /parameter_events (:data:`dodo_sim.ros.contract.NAMESPACE_REMAPS`);
* arguments with ``choices`` where they have them;
* includable: ``IncludeLaunchDescription(..., launch_arguments={'record': 'true'}.items())``
  overrides any argument; an enclosing ``PushRosNamespace`` namespaces the nodes as well.

What depends on the evaluated arguments — the start gates (``min_subscribers`` counts the
recorder exactly as in ``dodo hop``), the recorded topics of the robot's contact frames, the
hardware parameters, the robot description (xacro of the ``model`` argument, empty: the
controller's default model) — is computed at launch time by :class:`GraphParameters`, a
substitution that writes each node's graph parameters to a params file (``/**`` section: it
matches the node in any namespace). The user's params file is namespaced the same way
(:class:`NamespacedParamsFile`), and so is the rviz2 configuration (:class:`NamespacedRvizConfig`:
its topics moved into the namespace). The arguments are checked (params file keys, hardware kind,
the robot for ``use_sim:=false``) by an action that runs before the nodes start. This module
imports launch and launch_ros (only launch files import it).
"""
from __future__ import annotations

import shlex
import sys
import tempfile

from dodo_sim.ros import contract, graph
from launch import Condition, LaunchDescription, Substitution
from launch.actions import DeclareLaunchArgument, OpaqueFunction
from launch.conditions import IfCondition, UnlessCondition
from launch.substitutions import LaunchConfiguration, PathJoinSubstitution
from launch_ros.actions import Node
from launch_ros.substitutions import FindPackageShare
import yaml

#: Launch arguments that switch nodes on or off (true/false).
SWITCHES = ('use_sim', 'record', 'rviz')


def _share_path(parts):
    return PathJoinSubstitution([FindPackageShare(graph.PACKAGE), *parts])


def _argument(arg: graph.LaunchArg) -> DeclareLaunchArgument:
    default = _share_path(arg.share_path) if arg.share_path else arg.default
    kwargs = {'choices': list(arg.choices)} if arg.choices else {}
    return DeclareLaunchArgument(arg.name, default_value=default, description=arg.description,
                                 **kwargs)


class _Evaluated:
    """The launch arguments of one launch, evaluated once per context."""

    def __init__(self, context, profile_name: str):
        self.values = {arg.name: LaunchConfiguration(arg.name).perform(context)
                       for arg in graph.launch_arguments(profile_name)}
        self.switches = {name: self.values[name].strip().lower() in ('true', '1')
                         for name in SWITCHES}
        self.use_sim = self.switches['use_sim']
        self.robot = graph.robot_from_params(self.values['params_file'],
                                             self.values['model'] or None,
                                             self.values['controller'] or None)
        self.running = graph.launch_nodes(**self.switches, hosted=not self.robot.external)

    @classmethod
    def of(cls, context, profile_name: str) -> '_Evaluated':
        key = f'_dodo_sim_graph_{profile_name}'
        evaluated = context.get_locals_as_dict().get(key)
        if evaluated is None:
            evaluated = cls(context, profile_name)
            context.extend_locals({key: evaluated})
        return evaluated


def _check(context, profile_name: str):
    """Name a bad argument before anything starts (the same checks as ``dodo hop``)."""
    values = {arg.name: LaunchConfiguration(arg.name).perform(context)
              for arg in graph.launch_arguments(profile_name)}
    graph.check_params_file(values['params_file'], values['controller'] or None)
    contract.normalize_namespace(values['namespace'])
    ev = _Evaluated.of(context, profile_name)
    if not ev.use_sim:      # the driver must stand in for this robot's simulator
        graph.check_hardware(values['params_file'], ev.robot, values['hardware'])
    return []


def _temporary_file(prefix: str, text: str, suffix: str = '.yaml') -> str:
    handle = tempfile.NamedTemporaryFile('w', prefix=prefix, suffix=suffix, delete=False)
    with handle:
        handle.write(text)
    return handle.name


class GraphParameters(Substitution):
    """
    Launch substitution: the path of the params file the graph writes for node ``name``.

    The file holds the parameters the graph gives node ``name`` on top of the user's params file
    (:func:`dodo_sim.ros.graph.node_parameters`, launch variant); it is written when the launch
    runs.
    """

    def __init__(self, profile_name: str, name: str):
        super().__init__()
        self.profile_name, self.name = profile_name, name

    def describe(self) -> str:
        return f"GraphParameters('{self.name}')"

    def perform(self, context) -> str:
        ev = _Evaluated.of(context, self.profile_name)
        spec = graph.node(self.name)
        params = graph.node_parameters(spec, ev.running, ev.values, use_sim=ev.use_sim,
                                       launch=True, robot=ev.robot)
        if spec.robot_description:
            params['robot_description'] = _robot_xml(ev.robot.model)
        if self.name == 'recorder' and ev.values.get('live'):      # docs/viewing.md
            params['live'] = ev.values['live']
        params = {k: (list(v) if isinstance(v, tuple) else v) for k, v in params.items()}
        return _temporary_file(f'dodo_{self.name}_', yaml.safe_dump(
            {'/**': {'ros__parameters': params}}, default_flow_style=False, sort_keys=False))


def _full_namespace(context) -> str:
    """Return the robot's namespace: ``namespace`` under any enclosing PushRosNamespace."""
    namespace = contract.normalize_namespace(LaunchConfiguration('namespace').perform(context))
    base = contract.normalize_namespace(
        context.launch_configurations.get('ros_namespace'))     # PushRosNamespace
    return contract.normalize_namespace(base + namespace)


class NamespacedParamsFile(Substitution):
    """
    The ``params_file`` argument; in a namespace, a copy whose node sections are moved into it.

    The copy is needed because a ``simulator:`` section matches ``/simulator`` only.
    """

    def describe(self) -> str:
        return 'NamespacedParamsFile(params_file, namespace)'

    def perform(self, context) -> str:
        path = LaunchConfiguration('params_file').perform(context)
        full = _full_namespace(context)
        if not full:
            return path
        from dodo_sim.safe_yaml import read_yaml_file
        sections = read_yaml_file(path) or {}
        return _temporary_file('dodo_params_', yaml.safe_dump(
            graph.namespaced_sections(sections, full), sort_keys=False))


class NamespacedRvizConfig(Substitution):
    """
    The ``rviz_config`` argument; in a namespace, a copy naming the namespaced topics.

    RViz subscribes to the absolute topics its configuration names (``/robot_description``,
    ``/controller/markers``, ``/foot_contact``); a namespaced robot publishes them under its
    namespace (:func:`dodo_sim.tools.layouts.namespaced_rviz_config`, docs/viewing.md).
    """

    def describe(self) -> str:
        return 'NamespacedRvizConfig(rviz_config, namespace)'

    def perform(self, context) -> str:
        from dodo_sim.safe_yaml import read_yaml_file
        from dodo_sim.tools.layouts import namespaced_rviz
        path = LaunchConfiguration('rviz_config').perform(context)
        full = _full_namespace(context)
        if not full:
            return path
        return _temporary_file('dodo_rviz_', namespaced_rviz(read_yaml_file(path), full),
                               suffix='.rviz')


#: Launch arguments a node gets through a substitution that follows the namespace.
NAMESPACED_ARGUMENTS = {'rviz_config': NamespacedRvizConfig}


class _Prefix(Substitution):
    """
    Command prefix of the hardware loop's FIFO scheduling.

    ``python -m dodo_sim.tools.supervisor fifo N --`` for the hardware loop's nodes (real-time
    scheduling where permitted); empty otherwise.
    """

    def __init__(self, profile_name: str, name: str):
        super().__init__()
        self.profile_name, self.name = profile_name, name

    def describe(self) -> str:
        return f"RealtimePrefix('{self.name}', realtime_priority)"

    def perform(self, context) -> str:
        ev = _Evaluated.of(context, self.profile_name)
        text = ev.values['realtime_priority']
        try:
            fifo = graph.realtime_priority(graph.node(self.name), ev.use_sim, int(text))
        except ValueError:
            raise ValueError(f'launch argument realtime_priority:={text!r}: expected 0 (off) '
                             f'or 1..99') from None
        if not fifo:
            return ''
        return f'{shlex.quote(sys.executable)} -m dodo_sim.tools.supervisor fifo {fifo} --'


def _robot_xml(model: str) -> str:
    if model.lstrip().startswith('<'):
        return model
    import xacro
    return xacro.process_file(model).toxml()


def _condition(spec: graph.NodeSpec, profile_name: str):
    if spec.hosted_controller:       # left out when the controller is external (controller:=none)
        return Condition(predicate=lambda context: not _Evaluated.of(
            context, profile_name).robot.external)
    if spec.sim_only:
        return IfCondition(LaunchConfiguration('use_sim'))
    if spec.hardware_only:
        return UnlessCondition(LaunchConfiguration('use_sim'))
    if spec.condition is not None:
        return IfCondition(LaunchConfiguration(spec.condition))
    return None


def _node(spec: graph.NodeSpec, profile_name: str) -> Node:
    parameters = [NamespacedParamsFile()] if spec.params_file else []
    parameters.append(GraphParameters(profile_name, spec.name))
    arguments = []
    for a in spec.arguments:
        if isinstance(a, graph.Arg):
            a = (NAMESPACED_ARGUMENTS[a.name]() if a.name in NAMESPACED_ARGUMENTS
                 else LaunchConfiguration(a.name))
        arguments.append(_share_path(a) if isinstance(a, tuple) else a)
    # exec_name: the process label stays the executable's under the SCHED_FIFO prefix
    return Node(package=spec.package, executable=spec.executable, name=spec.name,
                namespace=LaunchConfiguration('namespace'), exec_name=spec.executable,
                output='screen', parameters=parameters, arguments=arguments,
                remappings=list(contract.NAMESPACE_REMAPS) + list(spec.remappings),
                prefix=_Prefix(profile_name, spec.name),
                condition=_condition(spec, profile_name))


def launch_description(profile_name: str = 'hop') -> LaunchDescription:
    """Return the launch description of ``<profile_name>.launch.py`` (graph.PROFILES)."""
    return LaunchDescription(
        [_argument(a) for a in graph.launch_arguments(profile_name)]
        + [OpaqueFunction(function=_check, kwargs={'profile_name': profile_name})]
        + [_node(spec, profile_name) for spec in graph.NODES])


__all__ = ['launch_description', 'SWITCHES', 'GraphParameters', 'NamespacedParamsFile',
           'NamespacedRvizConfig']
