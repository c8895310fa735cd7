# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
The ROS graph of dodo_sim, in one place: nodes, executables, parameters, launch arguments.

Both launch files (``launch/hop.launch.py``, ``launch/walk.launch.py``: a ROS 2 install) and
``dodo hop`` / ``dodo walk`` (a plain machine, processes over DDS) build their node set and
parameters here: :func:`launch_nodes` / :func:`hop_nodes`, :func:`node_parameters` (incl. the
start gates of :func:`min_subscribers`); tests check they agree (test/tools/test_runs_graph.py) and
run both for real (docs/running.md). This module is pure data and functions (no rclpy, no
launch imports).

The robot comes from the params file (:func:`robot_from_params`): the controller the
controller node hosts (its ``controller`` parameter, ``dodo_control.registry``; the ``controller``
launch argument / ``dodo hop --controller`` overrides it, and ``external`` or ``none`` leaves the
controller node out: the user's own node answers, docs/ros_contract.md "Any controller"), the robot
description (the ``model`` launch argument / ``--model``; empty: that controller's default
model) and the contact frames (the simulator's ``contact_frames``), which name the contact
topics the controller and the recorder subscribe to.

Topic names, message types and QoS are the ROS contract of :mod:`dodo_sim.ros.contract`.

Longer than ~500 lines on purpose: it is the one source of the node set that the launch files,
``dodo hop`` and ``dodo walk`` share (launch arguments, node specs, the robot from the params
file and each node's parameters and start gates depend on each other and are read together).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from dodo_control.registry import RESERVED_NAMES
from dodo_sim.ros.contract import (CLOCK, COMMAND_CONSUMER_NODES, contact_topic,
                                   CONTROLLER_IDENTITY, CONTROLLER_MARKERS, DRIVER_NODE,
                                   EFFORT_COMMANDS, ESTOP, FORCE, hardware_recorded_topics,
                                   HOSTED_CONTROLLER_NODE, JOINT_COMMANDS, JOINT_STATES, PACKAGE,
                                   PUSH, RECORDED_TOPICS, recorded_topics, ROBOT_DESCRIPTION)

#: Stands for every contact topic of the robot (``/<frame>_contact`` per contact frame) in
#: :attr:`NodeSpec.subscribes`: the controller and the recorder subscribe to all of them.
CONTACT_TOPICS = '/<frame>_contact'


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
    """
    A ``hop.launch.py`` argument.

    ``share_path``: default is that path in the package share.
    """

    name: str
    description: str
    default: str = ''
    share_path: tuple = ()
    choices: tuple = ()


@dataclass(frozen=True)
class Arg:
    """A parameter value taken from a launch argument (``dodo hop``: from its options)."""

    name: str


@dataclass(frozen=True)
class FromRobot:
    """A parameter value taken from the :class:`Robot` of the run (an attribute name)."""

    name: str


@dataclass(frozen=True)
class LaunchProfile:
    """
    Defaults of one launch file and its ``dodo`` subcommand (``hop``, ``walk``).

    Fields:
        name: launch file ``<name>.launch.py``, subcommand ``dodo <name>``.
        params_file: default params file, path in the package share directory.
        rviz_config: default rviz2 configuration, path in the package share directory.
    """

    name: str
    params_file: tuple
    rviz_config: tuple


PROFILES = (LaunchProfile('hop', ('config', 'hop.yaml'), ('config', 'hop.rviz')),
            LaunchProfile('walk', ('config', 'walk.yaml'), ('config', 'walk.rviz')))


def profile(name: str) -> LaunchProfile:
    for p in PROFILES:
        if p.name == name:
            return p
    raise KeyError(f'no launch profile {name!r}; profiles: {[p.name for p in PROFILES]}')


#: Values of the ``controller`` launch argument / ``dodo hop --controller`` that leave the
#: controller node out: the controller is the user's own node (docs/ros_contract.md); no
#: controller plugin can take these names (dodo_control.registry refuses them).
EXTERNAL_CONTROLLERS = RESERVED_NAMES

#: Values of the ``hardware`` launch argument / ``dodo hop --hardware``.
HARDWARE_KINDS = ('emulated', 'can')
#: Values of the on/off launch arguments (use_sim, record, rviz).
SWITCH_CHOICES = ('true', 'false')


def launch_arguments(profile_name: str = 'hop') -> tuple:
    """Return the arguments of ``<profile>.launch.py`` (same names, profile defaults)."""
    p = profile(profile_name)
    return (
        LaunchArg('params_file', 'Parameters file: simulator:/controller: sections with '
                  'ros__parameters, shared keys under /**:; its controller section selects the '
                  'controller (parameter controller)', share_path=p.params_file),
        LaunchArg('model', 'Robot description xacro (robot_state_publisher and simulator); '
                  "empty: the params file's simulator robot_description (e.g. "
                  'package://dodo_sim/urdf/boom_leg.urdf.xacro), else the default model of its '
                  'controller (slip_hopper: urdf/hopper.urdf.xacro, kneed_walker: '
                  'urdf/kneed_walker.urdf.xacro)'),
        LaunchArg('controller', 'The controller: empty: the one the params file selects '
                  "(its controller section's controller parameter); a controller name (e.g. "
                  'slip_hopper, kneed_walker, joint_hold): the controller node hosts it; '
                  f'{" or ".join(EXTERNAL_CONTROLLERS)}: no controller node, your own node '
                  'answers (docs/ros_contract.md, "Any controller"); the simulator waits for it '
                  'and names what is missing', default=''),
        LaunchArg('use_sim', 'Start the simulator and use simulated time; false: the hardware '
                  'driver instead (params file driver: section), no /clock, every node on wall '
                  'time', default='true', choices=SWITCH_CHOICES),
        LaunchArg('hardware', 'With use_sim:=false, what the driver drives: emulated (the '
                  'physics answers on an in-process virtual CAN bus; enabled once the '
                  'controller is up) or can (the real bus, ids and calibration of the params '
                  'file driver: section; stays disabled until: ros2 service call /driver/enable '
                  'std_srvs/srv/Trigger)', default='emulated', choices=HARDWARE_KINDS),
        LaunchArg('realtime_priority', 'With use_sim:=false, the SCHED_FIFO priority (1..99) of '
                  'the hardware loop nodes (driver, controller), as on a real robot; 0: normal '
                  'scheduling. Where it is refused (no CAP_SYS_NICE / rtprio limit) they run '
                  'with normal scheduling and say so', default=str(DEFAULT_REALTIME_PRIORITY)),
        LaunchArg('rviz', 'Start rviz2 with rviz_config', default='false',
                  choices=SWITCH_CHOICES),
        LaunchArg('rviz_config', 'rviz2 configuration file', share_path=p.rviz_config),
        LaunchArg('record', 'Record the graph topics to an MCAP bag (dodo_sim recorder); the '
                  'simulator waits for the recorder, so the bag starts at t = 0',
                  default='false', choices=SWITCH_CHOICES),
        LaunchArg('bag', 'Output directory of the bag when record:=true (must not exist)',
                  default=f'{p.name}_bag'),
        LaunchArg('live', 'With record:=true, a live Foxglove WebSocket view of what is '
                  'recorded on PORT or HOST:PORT (host default 127.0.0.1; docs/viewing.md); '
                  'empty: none (the recorder parameter live, set only when given)',
                  default=''),
        LaunchArg('namespace', 'ROS namespace of the robot: every node, topic and service under '
                  'it, /clock /tf /tf_static /parameter_events remapped into it (two robots '
                  'share a domain); empty: the root namespace', default=''),
    )


LAUNCH_ARGUMENTS = launch_arguments('hop')


# -- nodes ------------------------------------------------------------------------------------

@dataclass(frozen=True)
class NodeSpec:
    """
    One node of the graph.

    Fields:
        name: node name and params-file section.
        package / executable: what ``ros2 run`` / launch starts.
        module: Python module ``dodo hop`` runs with ``python -m``; None: needs a ROS install
            (started by the launch file only).
        sim_only: only under simulation (launch: ``use_sim:=true``).
        hardware_only: only without simulation (launch: ``use_sim:=false``).
        condition: launch argument that enables the node (None: always); ``dodo hop`` enables
            'record' when ``--bag`` is given and never starts nodes with module None.
        hosted_controller: the node hosting the run's controller: left out when the controller
            is external (:data:`EXTERNAL_CONTROLLERS`, ``command_convention: ros2_control``).
        params_file: the node reads the params file.
        robot_description: launch passes the xacro output as its robot_description parameter.
        parameters: extra parameters (values may be :class:`Arg`), launch and ``dodo hop``.
        launch_parameters: extra parameters only in the launch file.
        subscribes: topics it subscribes to (:func:`min_subscribers` counts them).
        arguments: extra command-line arguments (share-relative paths as tuples, launch
            arguments as :class:`Arg`).
        remappings: (from, to) topic remappings.
    """

    name: str
    package: str
    executable: str
    module: str | None
    sim_only: bool = False
    hardware_only: bool = False
    condition: str | None = None
    hosted_controller: bool = False
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
    NodeSpec(HOSTED_CONTROLLER_NODE, PACKAGE, 'controller', 'dodo_sim.ros.controller_node',
             hosted_controller=True,
             subscribes=(JOINT_STATES, CONTACT_TOPICS, ROBOT_DESCRIPTION, CLOCK)),
    # a robot_state_publisher publishing the absolute /robot_description (the plain-machine
    # stand-in) lands in the robot's namespace too; the real one publishes the relative name
    NodeSpec('robot_state_publisher', 'robot_state_publisher', 'robot_state_publisher', None,
             params_file=False, robot_description=True, subscribes=(JOINT_STATES, CLOCK),
             remappings=(('/' + ROBOT_DESCRIPTION, ROBOT_DESCRIPTION),)),
    NodeSpec('rviz2', 'rviz2', 'rviz2', None, condition='rviz', params_file=False,
             arguments=('-d', Arg('rviz_config')),
             subscribes=(CONTROLLER_MARKERS, ROBOT_DESCRIPTION, CLOCK)),
    NodeSpec('recorder', PACKAGE, 'recorder', 'dodo_sim.ros.recorder', condition='record',
             params_file=False,
             parameters={'bag': Arg('bag'), 'topics': FromRobot('recorded_topics')},
             subscribes=tuple(CONTACT_TOPICS if t.endswith('_contact') and '/' not in t else t
                              for t in RECORDED_TOPICS)),
)

#: Node name -> config dataclasses ("module:Class") whose fields are its parameters; the
#: controller node has those of the controller it hosts too (:func:`config_classes`).
NODE_CONFIGS = {
    'simulator': ('dodo_sim.simulator:SimConfig', 'dodo_sim.ros.node_config:SimulatorNodeConfig'),
    'controller': ('dodo_sim.ros.node_config:ControllerNodeConfig',),
    DRIVER_NODE: ('dodo_sim.hardware.config:DriverConfig',),
}

#: The node that publishes /tf and /tf_static on a ROS install. Where the node set has none
#: (``dodo hop``, ``dodo walk``: it needs a ROS install) the recorder computes them and publishes
#: them live (its parameter ``tf``: ``compute``; docs/bags.md).
TF_PUBLISHER = 'robot_state_publisher'

SIMULATOR_STATE_TOPICS = (CLOCK, JOINT_STATES, CONTACT_TOPICS)
#: What the hardware driver publishes every cycle (no /clock: wall time).
DRIVER_STATE_TOPICS = (JOINT_STATES, CONTACT_TOPICS)
#: The node that owns the run's time and ends it (``dodo hop`` waits for it): the simulator, or
#: without simulation the driver.
CLOCK_NODES = COMMAND_CONSUMER_NODES


@dataclass(frozen=True)
class Robot:
    """
    What the graph needs to know of the robot of a run (:func:`robot_from_params`).

    Fields:
        controller: the controller the controller node hosts (``dodo_control.registry``).
        model: robot description the simulator and robot_state_publisher load: a path (xacro
            or URDF) or URDF XML.
        contact_frames: the simulator's contact frames; one ``/<frame>_contact`` topic each.
        sim_mode: the simulator's mode (lockstep or realtime); the controller's state readers
            are reliable in lockstep.
        terrain: the simulator's terrain parameters from the params file (name -> value), for
            a controller whose outcome monitor judges heights above the ground.
        external: the controller is not the graph's controller node but the user's own node
            (``external``/``none``, or a controller_manager under ``command_convention:
            ros2_control``): the graph leaves the controller node out.
        command_convention: the simulator's ``command_convention`` (its command and state
            topics; the recorder records the convention's).
    """

    controller: str = 'slip_hopper'
    model: str = ''
    contact_frames: tuple = ('foot',)
    terrain: tuple = ()            # ((name, value), ...) : hashable, frozen
    sim_mode: str = 'lockstep'     # the simulator's mode (the controller's state QoS follows it)
    external: bool = False
    command_convention: str = 'stamped'

    @property
    def contact_topics(self) -> tuple:
        return tuple(contact_topic(f) for f in self.contact_frames)

    @property
    def recorded_topics(self) -> list:
        return list(recorded_topics(self.contact_frames, self.command_convention))

    @property
    def hardware_recorded_topics(self) -> list:
        """
        Return what the recorder records on hardware: no /clock.

        The driver's /diagnostics and the /estop input.
        """
        return list(hardware_recorded_topics(self.contact_frames, self.command_convention))


def namespaced_sections(sections: dict, namespace: str) -> dict:
    """
    Return a params file's sections for nodes in ``namespace``.

    A section named after a node (``simulator:``) matches only ``/simulator``, so it becomes
    ``/left/simulator``; sections that are already fully qualified or wildcards (``/**``) stay.
    """
    if not namespace:
        return dict(sections)
    return {(key if str(key).startswith('/') else f'{namespace}/{key}'): value
            for key, value in sections.items()}


def robot_from_params(params_file, model: str | None = None,
                      controller: str | None = None) -> Robot:
    """
    Return the :class:`Robot` of a params file.

    It holds the controller: ``controller`` if given (a controller name, validated by
    ``dodo_control.registry``; :data:`EXTERNAL_CONTROLLERS`: the user's own node), else the
    controller section's ``controller`` (default ``slip_hopper``); the model: ``model`` if given,
    else the simulator section's ``robot_description`` (a path or URDF XML) if set, else the
    ``default_model`` of that controller's class (dodo_control.registry); and the
    simulator's ``contact_frames``, terrain parameters, ``mode`` and ``command_convention``. A
    simulator reading ros2_control's topics (``command_convention: ros2_control``) is answered
    by the user's controller_manager: external. ValueError (ParamsFileError) naming a bad file,
    an unknown controller or a hosted controller under the ros2_control convention.
    """
    from dodo_control import registry
    from dodo_sim.paths import resolve_package_uri
    from dodo_sim.ros.params import node_parameters as file_parameters
    file_controller = str(file_parameters(params_file, 'controller').get(
        'controller', registry.DEFAULT_CONTROLLER))
    chosen = str(controller or '').strip()
    external = chosen in EXTERNAL_CONTROLLERS
    entry = registry.controller_entry(chosen if chosen and not external else file_controller)
    sim = file_parameters(params_file, 'simulator')
    convention = str(sim.get('command_convention', 'stamped'))
    if convention == 'ros2_control':
        if chosen and not external:
            raise ValueError(f'controller {chosen!r}: the simulator of {params_file} reads '
                             f"ros2_control's topics (command_convention: ros2_control), which "
                             f'a controller_manager answers, not the dodo controller node; '
                             f'choose external (your controller_manager) or the stamped '
                             f'convention')
        external = True
    frames = sim.get('contact_frames')
    if frames is None:
        import dataclasses

        from dodo_sim.simulator import SimConfig
        frames = next(f.default for f in dataclasses.fields(SimConfig)
                      if f.name == 'contact_frames')
    if isinstance(frames, str):
        frames = (frames,)
    terrain = tuple((name, sim[name]) for name in registry.TERRAIN_PARAMETERS
                    if name in sim and sim[name] != [])
    path = resolve_package_uri(str(model) if model else str(sim.get('robot_description') or '')
                               or entry.model)
    return Robot(controller=entry.name, model=path,
                 contact_frames=tuple(str(f) for f in frames), terrain=terrain,
                 sim_mode=str(sim.get('mode', 'lockstep')), external=external,
                 command_convention=convention)


def robot_model(params_file, model: str = '') -> str:
    """
    Return the robot description the simulator and robot_state_publisher load (a path or URDF XML).

    It is :attr:`Robot.model` of :func:`robot_from_params` (``package://dodo_sim/...`` resolved).
    """
    return robot_from_params(params_file, model or None).model


def node(name: str) -> NodeSpec:
    for spec in NODES:
        if spec.name == name:
            return spec
    raise KeyError(f'no node {name!r} in the graph; nodes: {[n.name for n in NODES]}')


def config_classes(node_name: str, controller: str = 'slip_hopper') -> tuple:
    """
    Return the config dataclasses of a node (imported on demand).

    For the controller node: those of the hosted ``controller`` (and its outcome monitor) first,
    then ControllerNodeConfig.
    """
    import importlib
    out = []
    if node_name == 'controller':
        from dodo_control import registry
        out += registry.controller_entry(controller).parameter_classes()
    for ref in NODE_CONFIGS.get(node_name, ()):
        module, cls = ref.split(':')
        out.append(getattr(importlib.import_module(module), cls))
    return tuple(out)


def known_parameters(controller: str = 'slip_hopper') -> dict[str, set]:
    """
    Node name -> names of its parameters when the controller node hosts ``controller``.

    Used to check params files.
    """
    import dataclasses
    known = {}
    for spec in NODES:
        names = set()
        for cls in config_classes(spec.name, controller):
            names |= {f.name for f in dataclasses.fields(cls)}
        names |= set(spec.parameters) | set(spec.launch_parameters)
        if spec.name == 'controller':
            # read-only, set by the node (a params file's value, e.g. from ros2 param dump, is
            # ignored): docs/bags.md "Which controller ran"
            names.add(CONTROLLER_IDENTITY)
        known[spec.name] = names
    return known


def check_params_file(params_file, controller: str | None = None) -> Robot:
    """
    Check a params file against the parameters of the nodes.

    The nodes are those for the controller the file selects (or ``controller``, as in
    :func:`robot_from_params`). An unknown section or key (e.g. a hopper key in a walker file)
    raises ParamsFileError naming it. Returns the file's :class:`Robot` (default model).
    """
    from dodo_sim.ros import params
    robot = robot_from_params(params_file, controller=controller)
    params.check_params_file(params_file, known_parameters(robot.controller))
    return robot


def check_hardware(params_file, robot: Robot, hardware: str) -> None:
    """
    Without simulation the driver takes the simulator's place.

    ``hardware`` must be one of :data:`HARDWARE_KINDS`, and the driver (one sensor board, one
    measured contact frame: its ``contact_frame``) must publish every contact topic the controller
    of ``robot`` waits for. ValueError naming the mismatch (e.g. the Kneed Walker's two feet on the
    driver).
    """
    if hardware not in HARDWARE_KINDS:
        raise ValueError(f'hardware {hardware!r}: expected one of {HARDWARE_KINDS}')
    import dataclasses

    from dodo_sim.hardware.config import DriverConfig
    from dodo_sim.ros.params import node_parameters as file_parameters
    frame = file_parameters(params_file, DRIVER_NODE).get('contact_frame', next(
        f.default for f in dataclasses.fields(DriverConfig) if f.name == 'contact_frame'))
    driven = (str(frame),) if frame else ()
    if tuple(robot.contact_frames) != driven:
        raise ValueError(
            f'the hardware driver measures contact frame(s) {list(driven)} (driver: '
            f'contact_frame in {params_file}) but the robot of the run ({robot.controller}) '
            f'has contact frames {list(robot.contact_frames)}: the driver cannot stand in for '
            f'its simulator')


def launch_nodes(*, use_sim: bool, record: bool, rviz: bool, hosted: bool = True) -> tuple:
    """
    Nodes ``hop.launch.py`` starts for these launch arguments (a ROS 2 install).

    That is the simulator with ``use_sim``, else the hardware driver in its place; the controller
    node unless the controller is external (``hosted`` False: :attr:`Robot.external`).
    """
    enabled = {'record': record, 'rviz': rviz}
    return tuple(spec for spec in NODES
                 if (use_sim or not spec.sim_only) and (not use_sim or not spec.hardware_only)
                 and (hosted or not spec.hosted_controller)
                 and (spec.condition is None or enabled.get(spec.condition, False)))


def hop_nodes(record: bool, hardware: str | None = None, hosted: bool = True) -> tuple:
    """
    Nodes ``dodo hop`` starts on a plain machine.

    They are the launch graph with ``use_sim:=true`` (``hardware`` None) or ``use_sim:=false``
    (``hardware`` 'emulated' or 'can') minus the nodes that need a ROS install (module None).
    """
    return tuple(spec for spec in launch_nodes(use_sim=hardware is None, record=record,
                                               rviz=False, hosted=hosted)
                 if spec.module is not None)


def realtime_priority(spec: NodeSpec, use_sim: bool, priority: int) -> int:
    """
    SCHED_FIFO priority ``spec`` runs with (0: normal scheduling).

    Without simulation the hardware loop's nodes get ``priority`` (the simulator's lockstep needs
    none).
    """
    if priority < 0 or priority > 99:
        raise ValueError(f'realtime priority {priority}: expected 0 (off) or 1..99')
    return priority if not use_sim and spec.name in REALTIME_NODES else 0


def clock_node(running: tuple) -> NodeSpec:
    """Return the node of ``running`` that owns the run's time (simulator or driver)."""
    for spec in running:
        if spec.name in CLOCK_NODES:
            return spec
    raise KeyError(f'no simulator or driver among {[s.name for s in running]}')


def subscriber_count(topic: str, running: tuple) -> int:
    """How many of the ``running`` nodes subscribe to ``topic``."""
    return sum(topic in spec.subscribes for spec in running)


def min_subscribers(name: str, running: tuple, *, use_sim: bool = True) -> int | None:
    """
    Return the start gate of node ``name``, or None if it has none.

    The gate is the node's ``min_subscribers`` parameter.

    simulator: every state topic (/clock, /joint_states, each contact topic) must have as many
    matched subscriptions as the running nodes that subscribe to the least subscribed of them
    (controller + recorder when recording), so no subscriber misses the first state; 0 when
    none of the graph's nodes does (an external controller without a recorder: the start gate
    waits for what the controller node itself subscribes to, dodo_sim.ros.start_gate).
    driver (hardware): the same for its state topics (/joint_states, /foot_contact); the gate
    of its ``enable_on_start`` (emulated hardware), so the bag holds the run from the enable.
    controller: the command topic must reach every running subscriber (simulator or driver,
    recorder). At least 1 either way.
    """
    if name == 'simulator':
        return min(subscriber_count(t, running) for t in SIMULATOR_STATE_TOPICS)
    if name == DRIVER_NODE:
        return max(1, min(subscriber_count(t, running) for t in DRIVER_STATE_TOPICS))
    if name == 'controller':
        # the stamped command topic (/joint_commands) is what the simulator and the driver pair
        return max(1, subscriber_count(JOINT_COMMANDS, running))
    return None


#: Node name -> parameters given to it when no simulator runs (``use_sim:=false``): a hardware
#: driver's sensors may have their own clocks, so the controller pairs /joint_states and
#: the contact topics by arrival (the newest of each), not by stamp; the recorder records the
#: driver's /diagnostics and /estop instead of /clock (for the robot's contact frames).
HARDWARE_PARAMETERS = {'controller': {'contact_pairing': 'latest'},
                       'recorder': {'topics': FromRobot('hardware_recorded_topics')}}
#: Node name -> parameters on emulated hardware only (``hardware: emulated``): the driver enables
#: itself once its start gate is open. Never on a real bus (DriverConfig refuses it there): real
#: motors are enabled by an explicit ``/driver/enable``.
EMULATED_PARAMETERS = {DRIVER_NODE: {'enable_on_start': True}}


def node_parameters(spec: NodeSpec, running: tuple, values: dict[str, Any], *,
                    use_sim: bool = True, launch: bool = False,
                    robot: Robot = Robot()) -> dict[str, Any]:
    """
    Parameters the graph gives ``spec`` on top of the params file.

    They are the same for the launch file and ``dodo hop``: ``use_sim_time``, the start gate
    (:func:`min_subscribers`), the node's :class:`Arg` parameters taken from ``values`` (launch
    arguments / ``dodo hop`` options by name) and :class:`FromRobot` ones from ``robot``, the
    hardware parameters without simulator (:data:`HARDWARE_PARAMETERS`, and
    :data:`EMULATED_PARAMETERS` when ``values['hardware']`` is 'emulated'), the recorder's ``tf``
    (``compute`` when no :data:`TF_PUBLISHER` runs), the simulator's terrain
    for a controller whose monitor judges the ground and, with ``launch``, the launch-only ones.
    Plain Python values (typed: a string stays a string).
    """

    def resolved(value):
        if isinstance(value, Arg):
            return values[value.name]
        if isinstance(value, FromRobot):
            return getattr(robot, value.name)
        return value

    params: dict[str, Any] = {'use_sim_time': use_sim}
    for key, value in spec.parameters.items():
        params[key] = resolved(value)
    gate = min_subscribers(spec.name, running, use_sim=use_sim)
    if gate is not None:
        params['min_subscribers'] = gate
    if spec.name in CLOCK_NODES:
        # the announcement's kind: the graph's controller node, or none (an external one)
        params['hosted_controller_node'] = next(
            (s.name for s in running if s.hosted_controller), '')
    if spec.hosted_controller:
        params['controller'] = robot.controller
    if spec.name == 'controller':
        # lockstep: every state waits for its answer, so none may be lost (reliable reader)
        params['reliable_states'] = use_sim and robot.sim_mode == 'lockstep'
    if spec.name == 'recorder' and all(s.name != TF_PUBLISHER for s in running):
        params['tf'] = 'compute'           # no robot_state_publisher: the recorder owns /tf
    if spec.name == 'controller' and use_sim and robot.terrain:
        from dodo_control import registry
        if registry.controller_entry(robot.controller).monitor_judges_ground():
            params.update(dict(robot.terrain))     # the monitor judges the simulated ground
    if not use_sim:
        for key, value in HARDWARE_PARAMETERS.get(spec.name, {}).items():
            params[key] = resolved(value)
        if values.get('hardware') == 'emulated':
            params.update(EMULATED_PARAMETERS.get(spec.name, {}))
    if launch:
        params.update(spec.launch_parameters)
    return params


def hop_parameters(spec: NodeSpec, running: tuple, args: dict[str, Any],
                   robot: Robot = Robot()) -> dict[str, Any]:
    """
    Parameters ``dodo hop`` gives ``spec`` (params file aside).

    They are :func:`node_parameters` (without simulation when ``args['hardware']`` is given) plus
    the ``stop_after`` of the node that owns the run's time (``args['stop_after']``: simulated s,
    or driver s since the driver's first enable) and, for the nodes that load the robot description
    (simulator or driver), ``robot_description`` = the model path (launch passes the xacro output
    instead).
    """
    use_sim = args.get('hardware') is None
    params = node_parameters(spec, running, args, use_sim=use_sim, robot=robot)
    if spec.name in CLOCK_NODES and 'stop_after' in args:
        params['stop_after'] = float(args['stop_after'])
    if spec.robot_description and robot.model:
        params['robot_description'] = robot.model
    return params


__all__ = ['NODES', 'LAUNCH_ARGUMENTS', 'RECORDED_TOPICS', 'CONTACT_TOPICS', 'NodeSpec',
           'LaunchArg', 'Arg', 'FromRobot', 'Robot', 'LaunchProfile', 'PROFILES', 'profile',
           'launch_arguments', 'robot_from_params', 'check_params_file', 'node',
           'launch_nodes', 'hop_nodes', 'clock_node', 'min_subscribers', 'node_parameters',
           'hop_parameters', 'HARDWARE_PARAMETERS', 'EMULATED_PARAMETERS', 'HARDWARE_KINDS',
           'CLOCK_NODES', 'REALTIME_NODES', 'EXTERNAL_CONTROLLERS', 'realtime_priority',
           'DEFAULT_REALTIME_PRIORITY',
           'check_hardware', 'known_parameters', 'config_classes', 'robot_model']
