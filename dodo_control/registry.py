# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
The controllers the controller node can host: name -> controller class, config dataclass.

One node parameter selects the controller (``controller``, a field of
:class:`dodo_sim.ros.node_config.ControllerNodeConfig`; default ``slip_hopper``; also
``kneed_walker`` and ``joint_hold``, the joint PD of any robot)::

    from dodo_control.registry import controller_entry, controller_names
    entry = controller_entry('kneed_walker')       # unknown name -> ValueError with the known list
    entry.config_class()                           # WalkerConfig
    ctrl = entry.build(urdf_xml, config)           # the controller for that robot description
    entry.parameter_classes()                      # what the node declares as ROS parameters

Every hosted controller implements :class:`dodo_control.interface.HostedController`:
``update(t, q, v, contact_forces) -> tau``, ``telemetry``, ``reconfigure(config)`` and the robot
it drives: ``joint_names`` (order of q, v), ``actuated_joint_names`` (order of tau),
``contact_frames`` (one ``[fx, fy, fz]`` row each in ``contact_forces``). The node sizes its
topics from these; :meth:`ControllerEntry.build` refuses a builder whose result lacks one.

An entry may name an *outcome monitor* (the walker's:
:class:`dodo_control.walker.monitor.WalkMonitor`; the SLIP leg's:
:class:`dodo_control.slip.outcome.HopMonitor`):
a judge of the run that looks at the measured state only (falls, steps, distance, liftoffs),
never at the controller's telemetry; a failure it finds fails a ``dodo hop`` / ``dodo walk`` run.
Its configuration dataclasses are parameters of the node too. A monitor that judges heights above
the ground (one of its configs has the fields :data:`TERRAIN_PARAMETERS`) gets the ground the
simulator simulates: the graph (``dodo_sim.ros.graph``) hands the simulator's values to such a
controller node (:meth:`ControllerEntry.monitor_judges_ground`).

Pure data and lazy imports (``module:Class`` strings): the graph, the launch files and the
params-file checks import this module without importing the controllers.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass
import importlib

#: SimConfig fields that describe the ground (``dodo_sim.simulator.SimConfig``). A monitor that
#: judges heights above the ground declares these; the graph copies the simulator's values.
TERRAIN_PARAMETERS = ('terrain', 'terrain_height_m', 'slope_deg', 'step_edges_x_m',
                      'step_rises_m', 'sine_amplitude_m', 'sine_wavelength_m')

#: The controller the node hosts when its ``controller`` parameter is not set.
DEFAULT_CONTROLLER = 'slip_hopper'


def _load(ref: str):
    module, _, name = ref.partition(':')
    return getattr(importlib.import_module(module), name)


@dataclass(frozen=True)
class ControllerEntry:
    """
    One hostable controller.

    Fields:
        name: value of the controller node's ``controller`` parameter.
        controller: ``module:Class`` of the controller.
        config: ``module:Class`` of its frozen config dataclass (every field a ROS parameter).
        builder: ``module:function`` ``(urdf_xml, config) -> controller``; raises ValueError
            naming what the robot description lacks.
        model: default robot description of this controller, a path in the package share
            directory (``dodo hop``/``dodo walk`` without ``--model``, launch without ``model:=``).
        startup_only: config fields fixed while running (the node sized its topics from them);
            every other field is settable at runtime through ``reconfigure``.
        monitor: ``module:Class`` of the outcome monitor, or '' (none).
        monitor_configs: ``module:Class`` of each config dataclass of the monitor (read-only
            parameters of the node).
        description: one line.
    """

    name: str
    controller: str
    config: str
    builder: str
    model: tuple
    startup_only: tuple = ()
    monitor: str = ''
    monitor_configs: tuple = ()
    description: str = ''

    def controller_class(self):
        return _load(self.controller)

    def config_class(self):
        return _load(self.config)

    def monitor_class(self):
        return _load(self.monitor) if self.monitor else None

    def monitor_config_classes(self) -> tuple:
        return tuple(_load(ref) for ref in self.monitor_configs)

    def monitor_judges_ground(self) -> bool:
        """Return whether a config of the monitor holds the ground (:data:`TERRAIN_PARAMETERS`)."""
        return any(set(TERRAIN_PARAMETERS) <= {f.name for f in dataclasses.fields(cls)}
                   for cls in self.monitor_config_classes())

    def parameter_classes(self) -> tuple:
        """
        Config dataclasses whose fields are the node's control parameters.

        They are the controller's, then the monitor's (a field name shared by two of them is one
        parameter).
        """
        return (self.config_class(),) + self.monitor_config_classes()

    def runtime_parameters(self) -> tuple:
        """Return the controller config fields a running node accepts changes of."""
        return tuple(f.name for f in dataclasses.fields(self.config_class())
                     if f.name not in self.startup_only)

    def build(self, urdf_xml: str, config):
        """Return the controller for the robot description ``urdf_xml`` (XML or a path)."""
        if not isinstance(config, self.config_class()):
            raise TypeError(f'controller {self.name!r} needs a {self.config_class().__name__}, '
                            f'got {type(config).__name__}')
        controller = _load(self.builder)(urdf_xml, config)
        from dodo_control.interface import missing_members
        missing = missing_members(controller)
        if missing:
            raise TypeError(f'controller {self.name!r}: {self.builder} returned a '
                            f'{type(controller).__name__} without {missing} (the interface of '
                            f'dodo_control.interface.HostedController)')
        return controller


def build_slip_hopper(urdf_xml, config):
    """Return the SLIP hopper controller (it builds its own model of the leg from the URDF)."""
    from dodo_control.controller import Controller
    return Controller(urdf_xml, config)


def build_kneed_walker(urdf_xml, config):
    """
    Return the Kneed Walker controller.

    Refuses a robot description without its joints or feet.
    """
    from dodo_control.walker.controller import WalkerController
    check_robot(urdf_xml, 'kneed_walker', joints=config.joint_names,
                contact_frames=config.contact_frames)
    return WalkerController(config)


def build_joint_hold(urdf_xml, config):
    """
    Return the joint controller of any robot (hold the start pose or track set-points).

    Refuses a robot description without its contact frames (the node subscribes to their
    topics) or joints (the controller names them).
    """
    from dodo_control.joint.controller import JointController
    check_robot(urdf_xml, 'joint_hold', contact_frames=config.contact_frames)
    return JointController(urdf_xml, config)


def check_robot(urdf_xml, controller: str, *, joints=(), contact_frames=()) -> None:
    """Raise ValueError naming the joints or frames of ``controller`` the robot lacks."""
    from dodo_sim.physics.robot import load_robot
    robot = load_robot(urdf_xml, contact_frames=())
    missing = [j for j in joints if j not in robot.joint_names]
    if missing:
        raise ValueError(f'controller {controller!r} needs joint(s) {missing}, which the robot '
                         f'description does not have; its joints are {list(robot.joint_names)}')
    frames = [f for f in contact_frames if not robot.model.existFrame(f)]
    if frames:
        raise ValueError(f'controller {controller!r} needs contact frame(s) {frames}, which the '
                         f'robot description does not have')


CONTROLLERS = (
    ControllerEntry(
        'slip_hopper', 'dodo_control.controller:Controller',
        'dodo_control.slip.config:ControllerConfig', 'dodo_control.registry:build_slip_hopper',
        model=('urdf', 'hopper.urdf.xacro'), startup_only=('control_period',),
        monitor='dodo_control.slip.outcome:HopMonitor',
        monitor_configs=('dodo_control.slip.outcome:HopCriteria',),
        description='hybrid SLIP hopping controller (Hutter et al. 2010), docs/control.md'),
    ControllerEntry(
        'kneed_walker', 'dodo_control.walker.controller:WalkerController',
        'dodo_control.walker.controller:WalkerConfig', 'dodo_control.registry:build_kneed_walker',
        model=('urdf', 'kneed_walker.urdf.xacro'),
        startup_only=('contact_frames', 'joint_names', 'pitch_joint', 'forward_joint',
                      'hip_joints', 'knee_joints', 'actuated_joints', 'initial_stance_frame'),
        monitor='dodo_control.walker.monitor:WalkMonitor',
        monitor_configs=('dodo_control.walker.outcome:FallCriteria',
                         'dodo_control.walker.monitor:TerrainConfig'),
        description='Kneed Walker pulse controller (As & Mailhot 2018), docs/walker.md'),
    ControllerEntry(
        'joint_hold', 'dodo_control.joint.controller:JointController',
        'dodo_control.joint.controller:JointControllerConfig',
        'dodo_control.registry:build_joint_hold', model=('urdf', 'hopper.urdf.xacro'),
        startup_only=('contact_frames', 'joints'),
        description='PD hold of the start pose or joint set-points of any robot, gravity '
                    'compensation, URDF torque limits, docs/joint.md'),
)


def controller_names() -> tuple:
    return tuple(entry.name for entry in CONTROLLERS)


def controller_entry(name: str) -> ControllerEntry:
    """
    Return the entry of controller ``name``.

    An unknown name raises ValueError naming the known controllers.
    """
    for entry in CONTROLLERS:
        if entry.name == name:
            return entry
    raise ValueError(f'unknown controller {name!r}; known controllers: '
                     f'{list(controller_names())}')


__all__ = ['ControllerEntry', 'CONTROLLERS', 'DEFAULT_CONTROLLER', 'TERRAIN_PARAMETERS',
           'controller_entry', 'controller_names', 'check_robot']
