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

from dodo_sim.ros.contract import (CLOCK, CONTROLLER_MARKERS, DRIVER_NODE, EFFORT_COMMANDS,
                                   ESTOP, FOOT_CONTACT, FORCE, HARDWARE_RECORDED_TOPICS,
                                   JOINT_COMMANDS, JOINT_STATES, PACKAGE, PUSH, RECORDED_TOPICS,
                                   ROBOT_DESCRIPTION)


# -- launch arguments -------------------------------------------------------------------------

#: The nodes of the hardware control loop: on hardware they run under SCHED_FIFO real-time
#: scheduling (``dodo hop --realtime-priority``, launch ``realtime_priority:=``), as a real
#: robot's driver and controller would (docs/hardware.md, "Timing").
REALTIME_NODES = (DRIVER_NODE, 'controller')
#: Their default SCHED_FIFO priority (0: normal scheduling). A Python driver and controller on a
#: shared, loaded machine do not hold 1 kHz with normal scheduling (docs/hardware.md, "Timing").
DEFAULT_REALTIME_PRIORITY = 40


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
    LaunchArg('use_sim', 'Start the simulator and use simulated time; false: the hardware '
              'driver instead (params file driver: section), no /clock, every node on wall time',
              default='true'),
    LaunchArg('hardware', 'With use_sim:=false, what the driver drives: emulated (the physics '
              'answers on an in-process virtual CAN bus; enabled once the controller is up) or '
              'can (the real bus, ids and calibration of the params file driver: section; '
              'stays disabled until: ros2 service call /driver/enable std_srvs/srv/Trigger)',
              default='emulated'),
    LaunchArg('realtime_priority', 'With use_sim:=false, the SCHED_FIFO priority (1..99) of the '
              'hardware loop nodes (driver, controller), as on a real robot; 0: normal '
              'scheduling. Where it is refused (no CAP_SYS_NICE / rtprio limit) they run with '
              'normal scheduling and say so', default=str(DEFAULT_REALTIME_PRIORITY)),
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
        hardware_only: only without simulation (launch: ``use_sim:=false``).
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
    hardware_only: bool = False
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
    NodeSpec(DRIVER_NODE, PACKAGE, 'driver', 'dodo_sim.ros.driver_node', hardware_only=True,
             robot_description=True, parameters={'hardware': Arg('hardware')},
             launch_parameters={'publish_robot_description': False},
             subscribes=(JOINT_COMMANDS, EFFORT_COMMANDS, ESTOP)),
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
    DRIVER_NODE: ('dodo_sim.hardware.config:DriverConfig',),
}

SIMULATOR_STATE_TOPICS = (CLOCK, JOINT_STATES, FOOT_CONTACT)
#: What the hardware driver publishes every cycle (no /clock: wall time).
DRIVER_STATE_TOPICS = (JOINT_STATES, FOOT_CONTACT)
#: Values of the ``hardware`` launch argument / ``dodo hop --hardware``.
HARDWARE_KINDS = ('emulated', 'can')
#: The node that owns the run's time and ends it (``dodo hop`` waits for it): the simulator, or
#: without simulation the driver.
CLOCK_NODES = ('simulator', DRIVER_NODE)


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
    """Nodes ``hop.launch.py`` starts for these launch arguments (a ROS 2 install): the
    simulator with ``use_sim``, else the hardware driver in its place."""
    enabled = {'record': record, 'rviz': rviz}
    return tuple(spec for spec in NODES
                 if (use_sim or not spec.sim_only) and (not use_sim or not spec.hardware_only)
                 and (spec.condition is None or enabled.get(spec.condition, False)))


def hop_nodes(record: bool, hardware: str | None = None) -> tuple:
    """Nodes ``dodo hop`` starts on a plain machine: the launch graph with ``use_sim:=true``
    (``hardware`` None) or ``use_sim:=false`` (``hardware`` 'emulated' or 'can') minus the nodes
    that need a ROS install (module None)."""
    return tuple(spec for spec in launch_nodes(use_sim=hardware is None, record=record,
                                               rviz=False)
                 if spec.module is not None)


def realtime_priority(spec: NodeSpec, use_sim: bool, priority: int) -> int:
    """SCHED_FIFO priority ``spec`` runs with (0: normal scheduling): ``priority`` for the
    hardware loop's nodes without simulation (the simulator's lockstep needs none)."""
    if priority < 0 or priority > 99:
        raise ValueError(f'realtime priority {priority}: expected 0 (off) or 1..99')
    return priority if not use_sim and spec.name in REALTIME_NODES else 0


def clock_node(running: tuple) -> NodeSpec:
    """The node of ``running`` that owns the run's time (simulator or driver)."""
    for spec in running:
        if spec.name in CLOCK_NODES:
            return spec
    raise KeyError(f'no simulator or driver among {[s.name for s in running]}')


def subscriber_count(topic: str, running: tuple) -> int:
    """How many of the ``running`` nodes subscribe to ``topic``."""
    return sum(topic in spec.subscribes for spec in running)


def min_subscribers(name: str, running: tuple, *, use_sim: bool = True) -> int | None:
    """The start gate of node ``name`` (its ``min_subscribers`` parameter), or None if it has none.

    simulator: every state topic (/clock, /joint_states, /foot_contact) must have as many
    matched subscriptions as the running nodes that subscribe to the least subscribed of them
    (controller + recorder when recording), so no subscriber misses the first state.
    driver (hardware): the same for its state topics (/joint_states, /foot_contact); the gate
    of its ``enable_on_start`` (emulated hardware), so the bag holds the run from the enable.
    controller: the command topic must reach every running subscriber (simulator or driver,
    recorder). At least 1 either way.
    """
    if name == 'simulator':
        return max(1, min(subscriber_count(t, running) for t in SIMULATOR_STATE_TOPICS))
    if name == DRIVER_NODE:
        return max(1, min(subscriber_count(t, running) for t in DRIVER_STATE_TOPICS))
    if name == 'controller':
        # the stamped command topic (/joint_commands) is what the simulator and the driver pair
        return max(1, subscriber_count(JOINT_COMMANDS, running))
    return None


#: Node name -> parameters given to it when no simulator runs (``use_sim:=false``): a hardware
#: driver's sensors may have their own clocks, so the controller pairs /joint_states and
#: /foot_contact by arrival (the newest of each), not by stamp; the recorder records the
#: driver's /diagnostics and /estop instead of /clock.
HARDWARE_PARAMETERS = {'controller': {'contact_pairing': 'latest'},
                       'recorder': {'topics': list(HARDWARE_RECORDED_TOPICS)}}
#: Node name -> parameters on emulated hardware only (``hardware: emulated``): the driver enables
#: itself once its start gate is open. Never on a real bus (DriverConfig refuses it there): real
#: motors are enabled by an explicit ``/driver/enable``.
EMULATED_PARAMETERS = {DRIVER_NODE: {'enable_on_start': True}}


def node_parameters(spec: NodeSpec, running: tuple, values: dict[str, Any], *,
                    use_sim: bool = True, launch: bool = False) -> dict[str, Any]:
    """Parameters the graph gives ``spec`` on top of the params file — the same for the launch
    file and ``dodo hop``: ``use_sim_time``, the start gate (:func:`min_subscribers`), the
    node's :class:`Arg` parameters taken from ``values`` (launch arguments / ``dodo hop``
    options by name), the hardware parameters without simulator (:data:`HARDWARE_PARAMETERS`,
    and :data:`EMULATED_PARAMETERS` when ``values['hardware']`` is 'emulated') and, with
    ``launch``, the launch-only ones. Plain Python values (typed: a string stays a string)."""
    params: dict[str, Any] = {'use_sim_time': use_sim}
    for key, value in spec.parameters.items():
        params[key] = values[value.name] if isinstance(value, Arg) else value
    gate = min_subscribers(spec.name, running, use_sim=use_sim)
    if gate is not None:
        params['min_subscribers'] = gate
    if not use_sim:
        params.update(HARDWARE_PARAMETERS.get(spec.name, {}))
        if values.get('hardware') == 'emulated':
            params.update(EMULATED_PARAMETERS.get(spec.name, {}))
    if launch:
        params.update(spec.launch_parameters)
    return params


def hop_parameters(spec: NodeSpec, running: tuple, args: dict[str, Any]) -> dict[str, Any]:
    """Parameters ``dodo hop`` gives ``spec`` (params file aside): :func:`node_parameters`
    (without simulation when ``args['hardware']`` is given) plus the ``stop_after`` of the node
    that owns the run's time (``args['stop_after']``: simulated s, or driver s since the
    driver's first enable)."""
    use_sim = args.get('hardware') is None
    params = node_parameters(spec, running, args, use_sim=use_sim)
    if spec.name in CLOCK_NODES and 'stop_after' in args:
        params['stop_after'] = float(args['stop_after'])
    return params


__all__ = ['NODES', 'LAUNCH_ARGUMENTS', 'RECORDED_TOPICS', 'NodeSpec', 'LaunchArg', 'Arg',
           'node', 'launch_nodes', 'hop_nodes', 'clock_node', 'min_subscribers',
           'node_parameters', 'hop_parameters', 'HARDWARE_PARAMETERS', 'EMULATED_PARAMETERS',
           'HARDWARE_KINDS', 'CLOCK_NODES', 'REALTIME_NODES', 'realtime_priority', 'DEFAULT_REALTIME_PRIORITY',
           'known_parameters', 'config_classes']
