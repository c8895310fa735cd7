# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
The controllers the controller node can host: Python entry points, open to any installed package.

A controller is a class implementing :class:`dodo_control.interface.HostedController` with a
frozen config dataclass (``config_class``; every field a ROS parameter of the node). It is made
known by an entry point of the group :data:`GROUP` (``dodo_sim.controllers``) in the package that
ships it; dodo_sim ships its own three that way (``setup.py``)::

    [project.entry-points."dodo_sim.controllers"]        # a plugin's pyproject.toml
    hopper_pd = "dodo_hopper_pd.controller:HopperPD"

One node parameter selects the controller (``controller``, a field of
:class:`dodo_sim.ros.node_config.ControllerNodeConfig`; default ``slip_hopper``): an entry point
name, or ``module:Class`` of an importable class given by the user (params file, ``-p``, launch
argument, study file)::

    from dodo_control.registry import controller_entry, controller_names
    controller_names()                             # ('joint_hold', 'kneed_walker', ...)
    entry = controller_entry('kneed_walker')       # unknown name -> ValueError with the list
    entry.config_class()                           # WalkerConfig
    ctrl = entry.build(urdf_xml, config)           # the controller for that robot description
    entry.parameter_classes()                      # what the node declares as ROS parameters
    entry.identity()                               # what the bag records (docs/bags.md)

Loading is safe against what a bag says: ``controller_entry(name, class_references=False)``
(``dodo replay``, for a name read from a bag) resolves installed entry points only and never
imports a ``module:Class`` (docs/bags.md, "Which controller ran").

What the class declares (docs/control.md, "Your own controller"): ``config_class`` (required);
optionally ``startup_only`` (config fields fixed while the node runs, e.g. joint names that sized
its topics), ``default_model`` (the robot description ``dodo hop`` and launch load without
``--model``: a path or ``package://dodo_sim/...``; default the hopper), ``monitor`` (an outcome
monitor class with ``config_classes``) and ``for_robot(robot_description, config)`` (a
classmethod building it; default ``Class(robot_description, config)``). The class is checked when
it is selected (``update`` and ``reconfigure`` methods, the config dataclass's fields) and the
built controller again (its joint and frame names, which the robot must have).

An *outcome monitor* (the walker's :class:`dodo_control.walker.monitor.WalkMonitor`; the SLIP
leg's :class:`dodo_control.slip.outcome.HopMonitor`) is a judge of the run that looks at the
measured state only (falls, steps, distance, liftoffs), never at the controller's telemetry; a
failure it finds fails a ``dodo hop`` / ``dodo walk`` run. Its configuration dataclasses are
parameters of the node too. A monitor that judges heights above the ground (one of its configs
has the fields :data:`TERRAIN_PARAMETERS`) gets the ground the simulator simulates: the graph
(``dodo_sim.ros.graph``) hands the simulator's values to such a controller node
(:meth:`ControllerEntry.monitor_judges_ground`).
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass
import importlib
from importlib import metadata
import json
import re

from dodo_sim.parameter import parameter_kind

#: The entry point group of hostable controllers.
GROUP = 'dodo_sim.controllers'
#: Names no controller can take: as ``dodo hop --controller`` or the ``controller`` launch
#: argument they leave the controller node out (your own node answers: docs/ros_contract.md,
#: "Any controller"), so an entry point of that name could never be chosen there
RESERVED_NAMES = ('external', 'none')

#: SimConfig fields that describe the ground (``dodo_sim.simulator.SimConfig``). A monitor that
#: judges heights above the ground declares these; the graph copies the simulator's values.
TERRAIN_PARAMETERS = ('terrain', 'terrain_height_m', 'slope_deg', 'step_edges_x_m',
                      'step_rises_m', 'sine_amplitude_m', 'sine_wavelength_m')

#: The controller the node hosts when its ``controller`` parameter is not set.
DEFAULT_CONTROLLER = 'slip_hopper'

#: The robot description of a controller class without ``default_model``.
DEFAULT_MODEL = 'package://dodo_sim/urdf/hopper.urdf.xacro'

#: ``module.path:Class`` (dotted identifiers on both sides)
_CLASS_REFERENCE = re.compile(r'[A-Za-z_]\w*(\.[A-Za-z_]\w*)*:[A-Za-z_]\w*(\.[A-Za-z_]\w*)*')


def is_class_reference(name: str) -> bool:
    """Whether ``name`` has the form ``module.path:Class``."""
    return _CLASS_REFERENCE.fullmatch(str(name)) is not None


def installed_entry_points() -> dict:
    """
    Return the installed entry points of :data:`GROUP`: name -> list of EntryPoint.

    An entry point named like :data:`RESERVED_NAMES` is left out (:func:`controller_entry`
    says why when that name is asked for).
    """
    out: dict = {}
    for ep in metadata.entry_points(group=GROUP):
        if ep.name not in RESERVED_NAMES:
            out.setdefault(ep.name, []).append(ep)
    return out


def controller_names() -> tuple:
    """Return the names of the installed controllers (entry points of :data:`GROUP`), sorted."""
    return tuple(sorted(installed_entry_points()))


def installed_text() -> str:
    """Return the installed controllers as the one-line list error messages give."""
    names = controller_names()
    if not names:
        return (f'none: no package declares an entry point of {GROUP} (dodo_sim itself is not '
                f'installed here? pip install -e <dodo_sim>)')
    return ', '.join(names)


def class_reference(cls) -> str:
    """Return ``module:Class`` of a class (where it is defined)."""
    return f'{cls.__module__}:{cls.__qualname__}'


def _dist_of_module(module: str) -> tuple:
    """(distribution name, version) providing the top-level package of ``module``, or ('', '')."""
    top = module.split('.')[0]
    names = metadata.packages_distributions().get(top, [])
    if len(names) != 1:
        return '', ''
    try:
        return names[0], metadata.version(names[0])
    except metadata.PackageNotFoundError:
        return names[0], ''


def _config_problem(config_class) -> str | None:
    """Return what keeps ``config_class`` from being a controller's config dataclass, or None."""
    if not (isinstance(config_class, type) and dataclasses.is_dataclass(config_class)):
        return f'its config_class {config_class!r} is not a dataclass'
    if not config_class.__dataclass_params__.frozen:
        return f'its config_class {config_class.__name__} is not frozen (@dataclass(frozen=True))'
    for f in dataclasses.fields(config_class):
        if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
            return (f'its config_class {config_class.__name__}.{f.name} has no default (every '
                    f'field is a ROS parameter and needs one)')
        default = (f.default if f.default is not dataclasses.MISSING
                   else f.default_factory())
        try:
            parameter_kind(default)
        except TypeError:
            return (f'its config_class {config_class.__name__}.{f.name} has the default '
                    f'{default!r}, not a ROS parameter type (bool, int, float, str or a tuple '
                    f'of one of them)')
    return None


def check_controller_class(cls, name: str) -> None:
    """
    Raise ValueError (one line) when ``cls`` cannot be hosted.

    It names the missing method or attribute of :class:`dodo_control.interface.HostedController`
    or what is wrong with its config dataclass.
    """
    from dodo_control.interface import CLASS_METHODS
    where = f'controller {name!r}' + (f' ({class_reference(cls)})' if isinstance(cls, type)
                                      and class_reference(cls) != name else '')
    if not isinstance(cls, type):
        raise ValueError(f'{where} is a {type(cls).__name__}, not a class implementing '
                         f'dodo_control.interface.HostedController')
    missing = [m for m in CLASS_METHODS if not callable(getattr(cls, m, None))]
    if missing:
        raise ValueError(f'{where} does not implement dodo_control.interface.HostedController: '
                         f'no method {", ".join(m + "()" for m in missing)}')
    if not hasattr(cls, 'config_class'):
        raise ValueError(f'{where} does not implement dodo_control.interface.HostedController: '
                         f'no config_class (its frozen config dataclass)')
    problem = _config_problem(cls.config_class)
    if problem is not None:
        raise ValueError(f'{where}: {problem}')


@dataclass(frozen=True)
class ControllerEntry:
    """
    One hostable controller: a checked controller class and where it came from.

    Fields:
        name: value of the controller node's ``controller`` parameter (an entry point name or
            ``module:Class``).
        cls: the controller class (:func:`check_controller_class` passed).
        distribution / version: the installed distribution that provides it ('' if none: a
            module on PYTHONPATH).
        entry_point: ``module:Class`` as the entry point names it ('' for a ``module:Class``
            name).
    """

    name: str
    cls: type
    distribution: str = ''
    version: str = ''
    entry_point: str = ''

    @property
    def controller(self) -> str:
        """Return ``module:Class`` of the controller class (where it is defined)."""
        return class_reference(self.cls)

    @property
    def model(self) -> str:
        """Return its default robot description (a path or ``package://`` URI)."""
        return str(getattr(self.cls, 'default_model', '') or DEFAULT_MODEL)

    @property
    def startup_only(self) -> tuple:
        """Return the config fields fixed while running (the node sized its topics from them)."""
        return tuple(getattr(self.cls, 'startup_only', ()))

    @property
    def monitor(self) -> str:
        """Return ``module:Class`` of its outcome monitor, or ''."""
        monitor = self.monitor_class()
        return class_reference(monitor) if monitor is not None else ''

    @property
    def description(self) -> str:
        return (self.cls.__doc__ or '').strip().split('\n')[0]

    def controller_class(self):
        return self.cls

    def config_class(self):
        return self.cls.config_class

    def monitor_class(self):
        return getattr(self.cls, 'monitor', None)

    def monitor_config_classes(self) -> tuple:
        monitor = self.monitor_class()
        return tuple(getattr(monitor, 'config_classes', ())) if monitor is not None else ()

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

    def identity(self) -> dict:
        """
        Return which controller this is, as the bag records it.

        ``name`` (the node's ``controller`` parameter), ``class`` (``module:Class`` where it is
        defined), ``distribution`` and ``version`` ('' when not from an installed distribution).
        """
        return {'name': self.name, 'class': self.controller, 'distribution': self.distribution,
                'version': self.version}

    def build(self, urdf_xml: str, config):
        """
        Return the controller for the robot description ``urdf_xml`` (XML or a path).

        ValueError names what the robot description lacks (a joint or contact frame the built
        controller names); TypeError a controller that lacks a member of the interface.
        """
        if not isinstance(config, self.config_class()):
            raise TypeError(f'controller {self.name!r} needs a {self.config_class().__name__}, '
                            f'got {type(config).__name__}')
        make = getattr(self.cls, 'for_robot', None) or self.cls
        controller = make(urdf_xml, config)
        from dodo_control.interface import missing_members
        missing = missing_members(controller)
        if missing:
            raise TypeError(f'controller {self.name!r}: {self.controller} built a '
                            f'{type(controller).__name__} without {missing} (the interface of '
                            f'dodo_control.interface.HostedController)')
        check_robot(urdf_xml, self.name, joints=tuple(controller.joint_names),
                    contact_frames=tuple(controller.contact_frames))
        return controller


def _load_entry_point(name: str, ep) -> ControllerEntry:
    try:
        cls = ep.load()
    except Exception as exc:  # noqa: BLE001 -- third-party code: any error is its own one line
        raise ValueError(f'controller {name!r}: loading the entry point {ep.value} of '
                         f'{_dist_label(ep)} failed: {type(exc).__name__}: {exc}') from None
    check_controller_class(cls, name)
    dist = getattr(ep, 'dist', None)
    return ControllerEntry(name, cls, dist.name if dist is not None else '',
                           dist.version if dist is not None else '', ep.value)


def _dist_label(ep) -> str:
    dist = getattr(ep, 'dist', None)
    return f'{dist.name} {dist.version}' if dist is not None else 'an unknown distribution'


def _load_class_reference(name: str) -> ControllerEntry:
    module, _, attr = name.partition(':')
    try:
        obj = importlib.import_module(module)
    except ImportError as exc:
        raise ValueError(f'controller {name!r}: cannot import module {module!r} ({exc}); '
                         f'installed controllers: {installed_text()}') from None
    except Exception as exc:  # noqa: BLE001 -- the user's module: any error is its one line
        raise ValueError(f'controller {name!r}: importing module {module!r} failed: '
                         f'{type(exc).__name__}: {exc}') from None
    for part in attr.split('.'):
        if not hasattr(obj, part):
            raise ValueError(f'controller {name!r}: module {module!r} has no {attr!r}')
        obj = getattr(obj, part)
    check_controller_class(obj, name)
    distribution, version = _dist_of_module(obj.__module__)
    return ControllerEntry(name, obj, distribution, version)


def controller_entry(name: str, *, class_references: bool = True) -> ControllerEntry:
    """
    Return the entry of controller ``name``: an installed entry point, or ``module:Class``.

    ``class_references=False`` (a name read from a bag): installed entry points only, nothing
    else is imported. An unknown name raises ValueError naming the installed controllers; a
    class that is not a hosted controller ValueError naming what it lacks.
    """
    name = str(name)
    if name in RESERVED_NAMES:
        shadowed = [ep for ep in metadata.entry_points(group=GROUP) if ep.name == name]
        raise ValueError(
            f'controller {name!r} is no controller: it means your own node answers, without '
            f'the controller node (dodo hop --controller {name}; docs/ros_contract.md)'
            + (f'; the entry point {name!r} of {", ".join(_dist_label(ep) for ep in shadowed)} '
               f'can never be chosen: rename it' if shadowed else ''))
    found = installed_entry_points().get(name, [])
    if len(found) > 1:
        raise ValueError(f'controller {name!r} is declared by several installed distributions '
                         f'({", ".join(_dist_label(ep) for ep in found)}); uninstall one or give '
                         f'module:Class')
    if found:
        return _load_entry_point(name, found[0])
    if class_references and is_class_reference(name):
        return _load_class_reference(name)
    how = ' or module:Class of an importable class' if class_references else ''
    raise ValueError(f'unknown controller {name!r}; installed controllers (entry points of '
                     f'{GROUP}): {installed_text()}{how}')


def entry_point_of_class(reference: str) -> str | None:
    """
    Return the name of an installed entry point whose value is ``reference`` (``module:Class``).

    None if there is none. Nothing is imported (the entry points' values are compared as text).
    """
    names = sorted(name for name, eps in installed_entry_points().items()
                   if any(ep.value.replace(' ', '') == reference for ep in eps))
    return names[0] if names else None


#: the keys of a controller identity (:meth:`ControllerEntry.identity`)
IDENTITY_KEYS = ('name', 'class', 'distribution', 'version')
#: the longest identity text read from a bag, characters (four names and a version)
IDENTITY_MAX_CHARS = 2048


def identity_text(identity: dict) -> str:
    """Return an identity as the controller node's ``controller_identity`` parameter holds it."""
    return json.dumps({key: str(identity.get(key, '')) for key in IDENTITY_KEYS},
                      sort_keys=True)


def parse_identity(text) -> dict:
    """
    Return the identity a bag recorded (``controller_identity``), read as data only.

    ValueError (one line) for anything but a JSON object of at most :data:`IDENTITY_MAX_CHARS`
    characters whose :data:`IDENTITY_KEYS` are strings; other keys are ignored.
    """
    if not isinstance(text, str) or len(text) > IDENTITY_MAX_CHARS:
        raise ValueError(f'the recorded controller_identity is not a JSON text of at most '
                         f'{IDENTITY_MAX_CHARS} characters')
    try:
        value = json.loads(text)
    except ValueError:
        raise ValueError('the recorded controller_identity is not valid JSON') from None
    if not isinstance(value, dict) or not all(isinstance(value.get(k), str)
                                              for k in IDENTITY_KEYS):
        raise ValueError(f'the recorded controller_identity is not an object of the strings '
                         f'{list(IDENTITY_KEYS)}')
    return {key: value[key] for key in IDENTITY_KEYS}


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


__all__ = ['GROUP', 'ControllerEntry', 'DEFAULT_CONTROLLER', 'DEFAULT_MODEL', 'IDENTITY_KEYS',
           'TERRAIN_PARAMETERS', 'check_controller_class', 'check_robot', 'class_reference',
           'controller_entry', 'controller_names', 'entry_point_of_class', 'identity_text',
           'installed_text', 'is_class_reference', 'parse_identity']
