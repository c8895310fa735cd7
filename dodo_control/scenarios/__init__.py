# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
Closed-loop scenarios for evaluating a controller: the robot-agnostic part.

A *scenario* builds a simulator and a controller from configuration values and a
:class:`Perturbation`, runs them with :func:`dodo_sim.rollout.rollout` (no ROS) and returns
named metrics (floats). ``dodo optimize`` (docs/optimize.md) evaluates every scenario of a study
under every perturbation for each trial; tests and benchmarks may call scenarios directly.

Each robot/controller pair is one small module (``dodo_control.scenarios.hopper`` for the SLIP
hopper); a module plugs in by defining:

``SECTIONS``
    ``{params-file section: frozen config dataclass}``, e.g. ``{'simulator': SimConfig,
    'controller': ControllerConfig}``. Tunable parameters are fields of these; the results are
    written as a params file with these sections.
``SCENARIOS``
    ``{kind: Scenario}`` (see :class:`Scenario`).
``check_perturbation(perturbation)``
    optional: raise ValueError naming what the robot cannot use (e.g. unknown xacro args).

:func:`robot_module` resolves a robot name: a key of :data:`ROBOTS` or a dotted module path
(``mypackage.my_robot_scenarios``), so a new robot needs no edit here. A module may instead
define ``for_controller(controller, model)`` returning such a module bound to any hosted
controller (:mod:`dodo_control.scenarios.hosted`, :func:`bound_module`): the scenarios of a
plugin controller's study.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
import importlib
from types import ModuleType
from typing import Callable, Mapping

#: Shipped robot scenario modules (name -> module path). Others: give the module path.
ROBOTS = {
    'hopper': 'dodo_control.scenarios.hopper',
    'boom': 'dodo_control.scenarios.boom',
    'walker': 'dodo_control.scenarios.walker',
    'ur5': 'dodo_control.scenarios.ur5',
    'hosted': 'dodo_control.scenarios.hosted',
}
#: the robot module of a study that names a controller (``controller:``) and no robot
HOSTED = 'hosted'


class ScenarioFailed(RuntimeError):
    """
    The run did not produce usable metrics.

    Raised when the robot fell, the simulation diverged or the controller refused its
    configuration; the message says which.
    """


@dataclass(frozen=True)
class Perturbation:
    """
    One variant of the conditions a scenario runs under.

    Fields:
        name: short label, e.g. 'event/body_mass=8.0'.
        overrides: section -> {field: value} applied on top of the trial's values, e.g.
            ``{'simulator': {'integrator': 'event', 'terrain': 'slope', 'slope_deg': 5.0}}``.
        xacro_args: robot description arguments (mass/length variants) for the simulator and
            the controller alike (the controller's model is exact, as on the real robot with an
            identified model).
    """

    name: str = 'nominal'
    overrides: Mapping = field(default_factory=dict)
    xacro_args: Mapping = field(default_factory=dict)


@dataclass(frozen=True)
class Scenario:
    """
    A kind of closed-loop run of one robot.

    Fields:
        run: ``run(configs, options, perturbation) -> {metric: float}`` where ``configs`` maps
            each section of ``SECTIONS`` to its config instance (perturbation overrides already
            applied) and ``options`` holds every option (defaults filled in). Raises
            :class:`ScenarioFailed` when the run is unusable.
        options: option name -> default value (the study may override these).
        metrics: names of the metrics ``run`` returns (what objectives may use).
        description: one line for the docs and error messages.
    """

    run: Callable[..., dict]
    options: Mapping
    metrics: tuple
    description: str = ''


def robot_module(name: str) -> ModuleType:
    """Return the scenario module of a robot: a :data:`ROBOTS` key or a dotted module path."""
    path = ROBOTS.get(name, name)
    try:
        module = importlib.import_module(path)
    except ImportError as exc:
        raise ValueError(f"unknown robot '{name}': not one of {sorted(ROBOTS)} and no importable "
                         f'module of that name ({exc})') from None
    if hasattr(module, 'for_controller'):
        return module            # bound to a controller by the study (bound_module)
    for attr in ('SECTIONS', 'SCENARIOS'):
        if not hasattr(module, attr):
            raise ValueError(f"robot module '{path}' has no {attr} (see dodo_control.scenarios)")
    return module


def bound_module(module, controller: str | None, model: str | None):
    """
    Return the scenario module a study runs: ``module``, or it bound to ``controller``.

    A module with ``for_controller(controller, model)`` (:mod:`dodo_control.scenarios.hosted`)
    runs any hosted controller and needs one; any other module has its own controller and takes
    neither. ValueError names what is wrong.
    """
    binds = hasattr(module, 'for_controller')
    if binds and not controller:
        raise ValueError(f"robot module '{module.__name__}' runs the study's controller: give "
                         f'controller: <entry point name or module:Class>')
    if not binds and (controller or model):
        key = 'controller' if controller else 'model'
        raise ValueError(f"{key}: robot module '{module.__name__}' has its own controller and "
                         f'robot; {key}: goes with robot: {HOSTED} (or no robot:)')
    return module.for_controller(str(controller), str(model or '')) if binds else module


def build_configs(sections: Mapping[str, type], values: Mapping[str, Mapping],
                  perturbation: Perturbation | None = None) -> dict:
    """
    Config instances per section.

    Each starts from the dataclass defaults, overridden by ``values[section]``, then by the
    perturbation's overrides. Raises ValueError naming a bad value.
    """
    perturbation = perturbation or Perturbation()
    unknown_sections = sorted(set(perturbation.overrides) - set(sections))
    if unknown_sections:
        raise ValueError(f'unknown section(s) {unknown_sections}; known: {sorted(sections)}')
    configs = {}
    for section, cls in sections.items():
        merged = {**dict(values.get(section, {})), **dict(perturbation.overrides.get(section, {}))}
        known = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(set(merged) - known)
        if unknown:
            raise ValueError(f'unknown {section} parameter(s) {unknown}')
        configs[section] = cls(**merged)
    return configs


# -- helpers the robot modules share -----------------------------------------------------------

def xacro_arg_names(urdf) -> tuple:
    """Arguments a xacro file declares (``<xacro:arg name=...>``)."""
    from pathlib import Path
    import re
    return tuple(re.findall(r'<xacro:arg\s+name="(\w+)"', Path(urdf).read_text()))


def check_xacro_args(urdf, perturbation: Perturbation) -> None:
    """
    Raise ValueError naming xacro args ``urdf`` does not declare.

    Raise ModelError if ``urdf`` cannot be built with them.
    """
    from pathlib import Path

    from dodo_sim.model import robot_description_xml
    names = set(xacro_arg_names(urdf))
    unknown = sorted(set(perturbation.xacro_args) - names)
    if unknown:
        raise ValueError(f'unknown xacro arg(s) {unknown} of {Path(urdf).name}; known: '
                         f'{sorted(names)}')
    robot_description_xml(urdf, perturbation.xacro_args or None)   # raises ModelError


def config_fields(config) -> dict:
    """Return a config dataclass as {field: value}."""
    return {name: getattr(config, name) for name in config.__dataclass_fields__}


def settle_hop(errors, tolerance: float) -> int:
    """1-based hop from which |error| < tolerance holds to the end; len + 1 if never."""
    import numpy as np
    ok = np.abs(np.asarray(errors)) < tolerance
    if ok.size == 0 or not ok[-1]:
        return int(ok.size) + 1
    bad = np.flatnonzero(~ok)
    return int(bad[-1]) + 2 if bad.size else 1


def max_abs(values) -> float:
    """Return max |value|; ScenarioFailed for no values (no apex in the measured window)."""
    import numpy as np
    values = np.asarray(values, dtype=float)
    if values.size == 0:
        raise ScenarioFailed('no apex in the measured window (run too short?)')
    return float(np.max(np.abs(values)))


__all__ = ['ROBOTS', 'Perturbation', 'Scenario', 'ScenarioFailed', 'robot_module',
           'xacro_arg_names', 'check_xacro_args', 'config_fields', 'settle_hop', 'max_abs',
           'build_configs', 'bound_module', 'HOSTED']
