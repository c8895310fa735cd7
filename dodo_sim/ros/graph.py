"""The ROS graph of dodo_sim, in one place: nodes, executables, parameters, launch arguments.

Both ``launch/hop.launch.py`` (a ROS 2 install) and ``dodo hop`` (a plain machine, processes
over DDS) build their node set from :data:`NODES` and :data:`LAUNCH_ARGUMENTS`; a test checks
they agree. This module is pure data (no rclpy, no launch imports).

Topic names, message types and QoS are the ROS contract of :mod:`dodo_sim.ros.contract`.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from dodo_sim.ros.contract import (CLOCK, CONTROLLER_MARKERS, EFFORT_COMMANDS, FOOT_CONTACT,
                                   FORCE, JOINT_COMMANDS, JOINT_STATES, PACKAGE, PUSH,
                                   RECORDED_TOPICS, ROBOT_DESCRIPTION)


# -- launch arguments -------------------------------------------------------------------------

@dataclass(frozen=True)
class LaunchArg:
    """A ``hop.launch.py`` argument. ``share_path``: default is that path in the package share."""

    name: str
    description: str
    default: str = ''
    share_path: tuple = ()


@dataclass(frozen=True)
class Arg:
    """A parameter value taken from a launch argument (``dodo hop``: from its options)."""

    name: str


LAUNCH_ARGUMENTS = (
    LaunchArg('params_file', 'Parameters file: simulator:/controller: sections with '
              'ros__parameters, shared keys under /**:', share_path=('config', 'hop.yaml')),
    LaunchArg('model', 'Robot description xacro (robot_state_publisher and simulator)',
              share_path=('urdf', 'hopper.urdf.xacro')),
    LaunchArg('use_sim', 'Start the simulator and use simulated time; false: a hardware '
              'driver publishes /joint_states and /foot_contact', default='true'),
    LaunchArg('rviz', 'Start rviz2 with config/hop.rviz', default='false'),
    LaunchArg('record', 'Record the graph topics to an MCAP bag (dodo_sim recorder)',
              default='false'),
    LaunchArg('bag', 'Output directory of the bag when record:=true', default='hop_bag'),
)


# -- nodes ------------------------------------------------------------------------------------

@dataclass(frozen=True)
class NodeSpec:
    """One node of the graph.

    Attributes:
        name: node name and params-file section.
        package / executable: what ``ros2 run`` / launch starts.
        module: Python module ``dodo hop`` runs with ``python -m``; None: needs a ROS install
            (started by the launch file only).
        sim_only: only under simulation (launch: ``use_sim:=true``).
        condition: launch argument that enables the node (None: always); ``dodo hop`` enables
            'record' when ``--bag`` is given and never starts nodes with module None.
        params_file: the node reads the params file.
        robot_description: launch passes the xacro output as its robot_description parameter.
        parameters: extra parameters (values may be :class:`Arg`), launch and ``dodo hop``.
        launch_parameters: extra parameters only in the launch file.
        subscribes: topics it subscribes to (``dodo hop`` derives ``min_subscribers``).
        arguments: extra command-line arguments (share-relative paths as tuples).
        remappings: (from, to) topic remappings.
    """

    name: str
    package: str
    executable: str
    module: str | None
    sim_only: bool = False
    condition: str | None = None
    params_file: bool = True
    robot_description: bool = False
    parameters: dict = field(default_factory=dict)
    launch_parameters: dict = field(default_factory=dict)
    subscribes: tuple = ()
    arguments: tuple = ()
    remappings: tuple = ()


NODES = (
    NodeSpec('simulator', PACKAGE, 'simulator', 'dodo_sim.ros.simulator_node', sim_only=True,
             robot_description=True,
             launch_parameters={'publish_robot_description': False},
             subscribes=(JOINT_COMMANDS, EFFORT_COMMANDS, PUSH, FORCE)),
    NodeSpec('controller', PACKAGE, 'controller', 'dodo_control.controller_node',
             subscribes=(JOINT_STATES, FOOT_CONTACT, ROBOT_DESCRIPTION, CLOCK)),
    NodeSpec('robot_state_publisher', 'robot_state_publisher', 'robot_state_publisher', None,
             params_file=False, robot_description=True, subscribes=(JOINT_STATES, CLOCK)),
    NodeSpec('rviz2', 'rviz2', 'rviz2', None, condition='rviz', params_file=False,
             arguments=('-d', ('config', 'hop.rviz')),
             subscribes=(CONTROLLER_MARKERS, ROBOT_DESCRIPTION, CLOCK)),
    NodeSpec('recorder', PACKAGE, 'recorder', 'dodo_sim.ros.recorder', condition='record',
             params_file=False,
             parameters={'bag': Arg('bag'), 'topics': list(RECORDED_TOPICS)},
             subscribes=RECORDED_TOPICS),
)

#: Node name -> config dataclasses ("module:Class") whose fields are its parameters.
NODE_CONFIGS = {
    'simulator': ('dodo_sim.simulator:SimConfig', 'dodo_sim.ros.node_config:SimulatorNodeConfig'),
    'controller': ('dodo_control.controller:ControllerConfig',
                   'dodo_sim.ros.node_config:ControllerNodeConfig'),
}

SIMULATOR_STATE_TOPICS = (CLOCK, JOINT_STATES, FOOT_CONTACT)


def node(name: str) -> NodeSpec:
    for spec in NODES:
        if spec.name == name:
            return spec
    raise KeyError(f'no node {name!r} in the graph; nodes: {[n.name for n in NODES]}')


def config_classes(node_name: str) -> tuple:
    """The config dataclasses of a node (imported on demand)."""
    import importlib
    out = []
    for ref in NODE_CONFIGS.get(node_name, ()):
        module, cls = ref.split(':')
        out.append(getattr(importlib.import_module(module), cls))
    return tuple(out)


def known_parameters() -> dict[str, set]:
    """Node name -> names of its parameters (for checking params files)."""
    import dataclasses
    known = {}
    for spec in NODES:
        names = set()
        for cls in config_classes(spec.name):
            names |= {f.name for f in dataclasses.fields(cls)}
        names |= set(spec.parameters) | set(spec.launch_parameters)
        known[spec.name] = names
    return known


def hop_nodes(record: bool) -> tuple:
    """Nodes ``dodo hop`` starts (simulation on a plain machine), in start order."""
    enabled = {'record': record}
    return tuple(spec for spec in NODES if spec.module is not None
                 and (spec.condition is None or enabled.get(spec.condition, False)))


def subscriber_count(topic: str, running: tuple) -> int:
    """How many of the ``running`` nodes subscribe to ``topic``."""
    return sum(topic in spec.subscribes for spec in running)


def hop_parameters(spec: NodeSpec, running: tuple, args: dict[str, Any]) -> dict[str, Any]:
    """Command-line parameters ``dodo hop`` gives ``spec`` (params file aside)."""
    params: dict[str, Any] = {'use_sim_time': True}
    for key, value in spec.parameters.items():
        params[key] = args[value.name] if isinstance(value, Arg) else value
    if spec.name == 'simulator':
        params['min_subscribers'] = max(1, min(subscriber_count(t, running)
                                               for t in SIMULATOR_STATE_TOPICS))
        if 'stop_after' in args:
            params['stop_after'] = args['stop_after']
    elif spec.name == 'controller':
        # the controller holds its first command until the stamped command topic is matched
        params['min_subscribers'] = max(1, subscriber_count(JOINT_COMMANDS, running))
    return params


__all__ = ['NODES', 'LAUNCH_ARGUMENTS', 'RECORDED_TOPICS', 'NodeSpec', 'LaunchArg', 'Arg',
           'node', 'hop_nodes', 'hop_parameters',
           'known_parameters', 'config_classes']
