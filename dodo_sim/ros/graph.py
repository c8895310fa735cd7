"""The ROS graph of dodo_sim, in one place: nodes, executables, parameters, launch arguments.

Both ``launch/hop.launch.py`` (a ROS 2 install) and ``dodo hop`` (a plain machine, processes
over DDS) build their node set and parameters here: :func:`launch_nodes` / :func:`hop_nodes`,
:func:`node_parameters` (incl. the start gates of :func:`min_subscribers`); tests check they
agree (test/test_runs_graph.py) and run both for real (docs/running.md). This module is pure
data and functions (no rclpy, no launch imports).

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
    LaunchArg('use_sim', 'Start the simulator and use simulated time; false: no simulator, '
              'no /clock, a hardware driver publishes /joint_states and /foot_contact',
              default='true'),
    LaunchArg('rviz', 'Start rviz2 with config/hop.rviz', default='false'),
    LaunchArg('record', 'Record the graph topics to an MCAP bag (dodo_sim recorder); the '
              'simulator waits for the recorder, so the bag starts at t = 0', default='false'),
    LaunchArg('bag', 'Output directory of the bag when record:=true (must not exist)',
              default='hop_bag'),
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
        subscribes: topics it subscribes to (:func:`min_subscribers` counts them).
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


def launch_nodes(*, use_sim: bool, record: bool, rviz: bool) -> tuple:
    """Nodes ``hop.launch.py`` starts for these launch arguments (a ROS 2 install)."""
    enabled = {'record': record, 'rviz': rviz}
    return tuple(spec for spec in NODES if (use_sim or not spec.sim_only)
                 and (spec.condition is None or enabled.get(spec.condition, False)))


def hop_nodes(record: bool) -> tuple:
    """Nodes ``dodo hop`` starts (simulation on a plain machine): the launch graph with
    ``use_sim:=true`` minus the nodes that need a ROS install (module None)."""
    return tuple(spec for spec in launch_nodes(use_sim=True, record=record, rviz=False)
                 if spec.module is not None)


def subscriber_count(topic: str, running: tuple) -> int:
    """How many of the ``running`` nodes subscribe to ``topic``."""
    return sum(topic in spec.subscribes for spec in running)


def min_subscribers(name: str, running: tuple, *, use_sim: bool = True) -> int | None:
    """The start gate of node ``name`` (its ``min_subscribers`` parameter), or None if it has none.

    simulator: every state topic (/clock, /joint_states, /foot_contact) must have as many
    matched subscriptions as the running nodes that subscribe to the least subscribed of them
    (controller + recorder when recording), so no subscriber misses the first state.
    controller: the command topic must reach every running subscriber, plus the hardware driver
    (outside this graph) when ``use_sim`` is false. At least 1 either way.
    """
    if name == 'simulator':
        return max(1, min(subscriber_count(t, running) for t in SIMULATOR_STATE_TOPICS))
    if name == 'controller':
        # the stamped command topic (/joint_commands) is what the simulator and the driver pair
        return max(1, subscriber_count(JOINT_COMMANDS, running) + (0 if use_sim else 1))
    return None


#: Node name -> parameters given to it when no simulator runs (``use_sim:=false``): the hardware
#: driver stamps /joint_states and /foot_contact with its own clock, so the controller pairs them
#: by arrival (the newest of each), not by stamp.
HARDWARE_PARAMETERS = {'controller': {'contact_pairing': 'latest'}}


def node_parameters(spec: NodeSpec, running: tuple, values: dict[str, Any], *,
                    use_sim: bool = True, launch: bool = False) -> dict[str, Any]:
    """Parameters the graph gives ``spec`` on top of the params file — the same for the launch
    file and ``dodo hop``: ``use_sim_time``, the start gate (:func:`min_subscribers`), the
    node's :class:`Arg` parameters taken from ``values`` (launch arguments / ``dodo hop``
    options by name), the hardware parameters without simulator and, with ``launch``, the
    launch-only ones. Plain Python values (typed: a string stays a string)."""
    params: dict[str, Any] = {'use_sim_time': use_sim}
    for key, value in spec.parameters.items():
        params[key] = values[value.name] if isinstance(value, Arg) else value
    gate = min_subscribers(spec.name, running, use_sim=use_sim)
    if gate is not None:
        params['min_subscribers'] = gate
    if not use_sim:
        params.update(HARDWARE_PARAMETERS.get(spec.name, {}))
    if launch:
        params.update(spec.launch_parameters)
    return params


def hop_parameters(spec: NodeSpec, running: tuple, args: dict[str, Any]) -> dict[str, Any]:
    """Parameters ``dodo hop`` gives ``spec`` (params file aside): :func:`node_parameters` plus
    the simulator's ``stop_after`` (``args['stop_after']``, simulated s)."""
    params = node_parameters(spec, running, args)
    if spec.name == 'simulator' and 'stop_after' in args:
        params['stop_after'] = float(args['stop_after'])
    return params


__all__ = ['NODES', 'LAUNCH_ARGUMENTS', 'RECORDED_TOPICS', 'NodeSpec', 'LaunchArg', 'Arg',
           'node', 'launch_nodes', 'hop_nodes', 'min_subscribers', 'node_parameters',
           'hop_parameters', 'HARDWARE_PARAMETERS', 'known_parameters', 'config_classes']
