# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
Study files of ``dodo optimize``: read and checked completely before any trial runs.

:func:`load_study` turns a study file (docs/optimize.md) into a :class:`Study`: the robot's
scenario module, the tuned :class:`Parameter` ranges over its config dataclasses, the fixed
values, the scenarios, the perturbations, the :class:`Objective` list and the sampler. A bad
entry is one :class:`StudyError` naming the file and the entry. The module is a little over 500
lines because every check of a study file is here, where one reads what a study file may hold.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
import difflib
import itertools
import math
import os
from pathlib import Path
import re
from typing import Any, Mapping

from dodo_control.scenarios import (bound_module, build_configs, HOSTED, Perturbation,
                                    robot_module)

#: seeds of numpy/Optuna samplers are unsigned 32-bit integers
SEED_LIMIT = 2 ** 32

SAMPLERS = ('cmaes', 'tpe', 'nsga2', 'random')
MULTI_OBJECTIVE_SAMPLERS = ('tpe', 'nsga2', 'random')
AGGREGATES = ('max', 'mean', 'min', 'sum')
DIRECTIONS = ('minimize', 'maximize')
TOP_LEVEL_KEYS = ('name', 'robot', 'controller', 'model', 'sampler', 'seed', 'trials',
                  'parameters', 'fixed', 'scenarios', 'perturbations', 'objectives')


#: a parameter name: a config field, or one element of a tuple-valued field (``pulse_phase[3]``)
_ELEMENT = re.compile(r'^(\w+)\[(\d+)\]$')


class StudyError(ValueError):
    """The study file cannot be used; the message names the file and the bad entry."""


@dataclass(frozen=True)
class Parameter:
    """
    One tuned parameter of the robot's config dataclasses.

    It is a field ``section.name`` or one element ``section.name[index]`` of a tuple-valued field
    (e.g. ``controller.pulse_phase[0]``; the other elements keep their fixed or default values).

    Fields:
        section / name: params-file section and config field.
        index: element of a tuple-valued field, or None for the whole (scalar) field.
        kind: 'float', 'int' or 'categorical'.
        low / high: range (float, int); log: log-uniform; step: grid step (None: continuous).
        choices: values of a categorical parameter.
        baseline: its value in trial 0.
    """

    section: str
    name: str
    kind: str
    index: int | None = None
    low: float | None = None
    high: float | None = None
    log: bool = False
    step: float | None = None
    choices: tuple = ()
    baseline: Any = None

    @property
    def key(self) -> str:
        suffix = '' if self.index is None else f'[{self.index}]'
        return f'{self.section}.{self.name}{suffix}'


@dataclass(frozen=True)
class ScenarioEntry:
    """A scenario of the study: a kind of the robot module with its options."""

    name: str
    kind: str
    options: Mapping


@dataclass(frozen=True)
class Objective:
    """``aggregate`` of ``metric`` over the selected scenario runs (every perturbation)."""

    name: str
    metric: str
    scenarios: tuple
    aggregate: str
    direction: str
    penalty: float


@dataclass(frozen=True)
class Study:
    """A checked study file (see :func:`load_study`)."""

    path: Path
    name: str
    robot: str
    sampler: str
    sampler_options: Mapping
    seed: int
    trials: int
    parameters: tuple
    fixed: Mapping
    scenarios: tuple
    perturbations: tuple
    objectives: tuple
    module: Any = field(repr=False, compare=False, default=None)
    controller: str = ''           # the controller of a robot: hosted study, '' otherwise

    @property
    def runs_per_trial(self) -> int:
        return len(self.scenarios) * len(self.perturbations)

    def values(self, tuned: Mapping[str, Any]) -> dict:
        """
        Section -> {field: value}.

        They are the fixed values with ``tuned`` (``section.name`` keys) on top.
        """
        out = {section: dict(values) for section, values in self.fixed.items()}
        for key, value in tuned.items():
            section, name = key.split('.', 1)
            element = _ELEMENT.match(name)
            if element is None:
                out.setdefault(section, {})[name] = value
                continue
            name, index = element.group(1), int(element.group(2))
            values = out.setdefault(section, {})
            if name not in values:
                values[name] = _field_default(self.module.SECTIONS[section], name)
            values[name] = _with_element(values[name], index, value)
        return out

    def baseline(self) -> dict:
        return {p.key: p.baseline for p in self.parameters}


def _mapping(value, where: str) -> dict:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise StudyError(f'{where} must be a mapping, got {type(value).__name__}')
    return value


def _entry(value, where: str, allowed: set) -> dict:
    """Return ``value``, a mapping of the keys ``allowed`` at most."""
    value = _mapping(value, where)
    extra = sorted(set(value) - allowed)
    if extra:
        raise StudyError(f'{where}: unknown key(s) {extra}; allowed: {sorted(allowed)}')
    return value


def _unknown(kind: str, name: str, known) -> str:
    close = difflib.get_close_matches(str(name), [str(k) for k in known], n=1)
    hint = f"; did you mean '{close[0]}'?" if close else ''
    return f"unknown {kind} '{name}'{hint} (known: {', '.join(sorted(map(str, known)))})"


def _number(value, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise StudyError(f'{where} must be a finite number, got {value!r}')
    return value


def _field_default(cls, name):
    f = {f.name: f for f in dataclasses.fields(cls)}[name]
    if f.default is not dataclasses.MISSING:
        return f.default
    return f.default_factory()  # type: ignore[misc]


def _with_element(vector, index: int, value) -> tuple:
    """``vector`` (a tuple or list) with element ``index`` replaced by ``value``."""
    out = list(vector)
    out[index] = value
    return tuple(out)


def _check_value(cls, fixed: Mapping, name: str, value, where: str,
                 index: int | None = None) -> None:
    """
    Refuse a value the config dataclass does not accept (with the study's fixed values).

    With ``index``, ``value`` is that element of the tuple-valued field ``name``.
    """
    field_value = value
    if index is not None:
        field_value = _with_element(fixed.get(name, _field_default(cls, name)), index, value)
    label = name if index is None else f'{name}[{index}]'
    try:
        cls(**{**fixed, name: field_value})
    except (ValueError, TypeError) as exc:
        raise StudyError(f'{where} = {value!r} is outside the valid values of '
                         f'{cls.__name__}.{label}: {exc}') from None


def _search_space_of_field(cls, name: str, where: str) -> dict:
    """
    Return the search space a parameter given without range gets: its field's (metadata).

    A field with allowed values (``one_of``) is searched over them; a bounded field with a
    closed, finite range over that range (:mod:`dodo_sim.parameter`: the bounds the config
    itself enforces). Any other field needs its range in the study.
    """
    from dodo_sim.parameter import CHOICES, describe_range, OPEN, RANGE, UNIT
    metadata = next((f.metadata for f in dataclasses.fields(cls) if f.name == name), {})
    if metadata.get(CHOICES):
        return {'choices': list(metadata[CHOICES])}
    bounds = metadata.get(RANGE)
    if bounds is not None and None not in bounds and not any(metadata.get(OPEN, ())):
        return {'low': bounds[0], 'high': bounds[1]}
    allowed = (f': {cls.__name__}.{name} allows {describe_range(metadata)} '
               f"{metadata.get(UNIT, '')}".rstrip() + ', not a closed range to search'
               if bounds is not None else '')
    raise StudyError(f'{where} needs low and high (or choices){allowed}')


def _parse_parameter(section: str, name: str, spec, cls, fixed: Mapping,
                     index: int | None = None) -> Parameter:
    label = name if index is None else f'{name}[{index}]'
    where = f'parameters.{section}.{label}'
    spec = _entry(spec, where, {'low', 'high', 'log', 'step', 'choices', 'baseline'})
    default = fixed.get(name, _field_default(cls, name))
    if index is not None:
        if isinstance(default, (tuple, list)):     # as the dataclass holds it (converted)
            default = getattr(cls(**fixed), name)
        if not isinstance(default, (tuple, list)):
            raise StudyError(f'{where}: {cls.__name__}.{name} is not a vector (default '
                             f'{default!r}); tune it as {name} without an index')
        if index >= len(default):
            raise StudyError(f'{where}: index {index} is out of range; {cls.__name__}.{name} '
                             f'has {len(default)} elements (0 to {len(default) - 1})')
        default = default[index]
    baseline = spec.get('baseline', default)
    if 'choices' not in spec and not {'low', 'high'} & set(spec):
        spec = {**spec, **_search_space_of_field(cls, name, where)}
    if 'choices' in spec:
        choices = spec['choices']
        if not isinstance(choices, list) or not choices:
            raise StudyError(f'{where}.choices must be a non-empty list')
        if set(spec) & {'low', 'high', 'log', 'step'}:
            raise StudyError(f'{where}: give either choices or low/high, not both')
        for value in choices:
            _check_value(cls, fixed, name, value, f'{where}.choices entry', index)
        if baseline not in choices:
            raise StudyError(f'{where}: the baseline (trial 0) value {baseline!r} is not one of '
                             f'the choices; add it or give baseline:')
        return Parameter(section, name, 'categorical', index, choices=tuple(choices),
                         baseline=baseline)
    if 'low' not in spec or 'high' not in spec:
        raise StudyError(f'{where} needs low and high (or choices)')
    if isinstance(default, bool) or not isinstance(default, (int, float)):
        hint = (f'; tune its elements as {name}[0], {name}[1], ...'
                if isinstance(default, (tuple, list)) else '; use choices: [...]')
        raise StudyError(f'{where}: {cls.__name__}.{name} is not numeric '
                         f'(default {default!r}){hint}')
    kind = 'int' if isinstance(default, int) else 'float'
    low, high = _number(spec['low'], f'{where}.low'), _number(spec['high'], f'{where}.high')
    if not low < high:
        raise StudyError(f'{where}: low ({low}) must be below high ({high})')
    log = spec.get('log', False)
    if not isinstance(log, bool):
        raise StudyError(f'{where}.log must be true or false')
    if log and low <= 0.0:
        raise StudyError(f'{where}: a log scale needs low > 0, got low = {low}')
    step = spec.get('step')
    if step is not None:
        step = _number(step, f'{where}.step')
        if not step > 0.0 or log:
            raise StudyError(f'{where}.step must be > 0 and cannot be combined with log')
        if step > high - low:
            raise StudyError(f'{where}.step ({step}) is larger than the range [{low}, {high}]: '
                             f'the search would be the single point {low}')
    if kind == 'int':
        if int(low) != low or int(high) != high or (step is not None and int(step) != step):
            raise StudyError(f'{where}: {cls.__name__}.{label} is an integer; low, high and '
                             f'step must be integers')
        low, high = int(low), int(high)
        step = int(step) if step is not None else None
    else:
        low, high = float(low), float(high)
    _check_value(cls, fixed, name, low, f'{where}.low', index)
    _check_value(cls, fixed, name, high, f'{where}.high', index)
    if isinstance(baseline, bool) or not isinstance(baseline, (int, float)) \
            or not (math.isfinite(baseline) and low <= baseline <= high):
        raise StudyError(f'{where}: the baseline (trial 0) value {baseline!r} (the default unless '
                         f'baseline: is given) is not within [{low}, {high}]; widen the range or '
                         f'give baseline: inside it')
    return Parameter(section, name, kind, index, low, high, log, step, baseline=baseline)


def _parse_scenarios(raw, scenarios_of_robot) -> tuple:
    if not isinstance(raw, list) or not raw:
        raise StudyError('scenarios must be a non-empty list of {kind: ..., <options>}')
    entries, names = [], set()
    for i, item in enumerate(raw):
        where = f'scenarios[{i}]'
        item = dict(_mapping(item, where))
        kind = item.pop('kind', None)
        if kind not in scenarios_of_robot:
            raise StudyError(f'{where}: ' + _unknown('scenario kind', kind, scenarios_of_robot))
        name = str(item.pop('name', kind))
        if name in names:
            name = f'{name}{i}'
        names.add(name)
        defaults = scenarios_of_robot[kind].options
        for key, value in item.items():
            if key not in defaults:
                raise StudyError(f'{where} ({kind}): ' + _unknown('option', key, defaults))
            if isinstance(defaults[key], (int, float)) and not isinstance(defaults[key], bool):
                _number(value, f'{where}.{key}')
                if isinstance(defaults[key], int) and int(value) != value:
                    raise StudyError(f'{where}.{key} must be an integer, got {value!r}')
                if isinstance(defaults[key], int):
                    item[key] = int(value)
            elif isinstance(defaults[key], bool) and not isinstance(value, bool):
                raise StudyError(f'{where}.{key} must be true or false, got {value!r}')
        entries.append(ScenarioEntry(name, kind, {**defaults, **item}))
    return tuple(entries)


def _parse_perturbations(raw, sections, module) -> tuple:
    """Axes -> their cartesian product as Perturbation objects."""
    raw = _mapping(raw, 'perturbations')
    axes = []
    for key, values in raw.items():
        where = f'perturbations.{key}'
        if not isinstance(values, list) or not values:
            raise StudyError(f'{where} must be a non-empty list')
        if key == 'xacro_args':
            variants = []
            for v in values:
                args = _mapping(v, f'{where} entry')
                label = ','.join(f'{k}={a}' for k, a in args.items()) or 'nominal'
                variants.append((label, {}, args))
        elif key in sections:
            variants = []
            for v in values:
                overrides = _mapping(v, f'{where} entry')
                label = ','.join(f'{k}={a}' for k, a in overrides.items()) or key
                variants.append((label, {key: overrides}, {}))
        elif '.' in key and key.split('.', 1)[0] in sections:
            section, name = key.split('.', 1)
            variants = [(str(v), {section: {name: v}}, {}) for v in values]
        else:
            raise StudyError(f'{where}: unknown axis; use xacro_args, a section '
                             f'({", ".join(sorted(sections))}) or <section>.<field>')
        axes.append(variants)
    out = []
    for combo in itertools.product(*axes) if axes else [()]:
        overrides: dict = {}
        xacro: dict = {}
        for _, o, x in combo:
            for section, values in o.items():
                overrides.setdefault(section, {}).update(values)
            xacro.update(x)
        name = '/'.join(label for label, _, _ in combo) or 'nominal'
        out.append(Perturbation(name, overrides, xacro))
    return tuple(out)


def _parse_objectives(raw, scenarios: tuple, module) -> tuple:
    if not isinstance(raw, list) or not raw:
        raise StudyError('objectives must be a non-empty list of {metric: ..., aggregate: ..., '
                         'direction: ...}')
    objectives, names = [], set()
    for i, item in enumerate(raw):
        where = f'objectives[{i}]'
        item = _entry(item, where,
                      {'name', 'metric', 'scenarios', 'aggregate', 'direction', 'penalty'})
        selected = item.get('scenarios', [s.name for s in scenarios])
        if isinstance(selected, str):
            selected = [selected]
        known = [s.name for s in scenarios]
        for name in selected:
            if name not in known:
                raise StudyError(f'{where}: ' + _unknown('scenario', name, known))
        metric = item.get('metric')
        produced = {m for s in scenarios if s.name in selected
                    for m in module.SCENARIOS[s.kind].metrics}
        if metric not in produced:
            raise StudyError(f'{where}: ' + _unknown('metric', metric, produced or ['(none)'])
                             + f' of the scenario(s) {selected}')
        selected = [s.name for s in scenarios if s.name in selected
                    and metric in module.SCENARIOS[s.kind].metrics]
        aggregate = item.get('aggregate', 'max')
        if aggregate not in AGGREGATES:
            raise StudyError(f'{where}: ' + _unknown('aggregate', aggregate, AGGREGATES))
        direction = item.get('direction', 'minimize')
        if direction not in DIRECTIONS:
            raise StudyError(f'{where}: ' + _unknown('direction', direction, DIRECTIONS))
        penalty = item.get('penalty', 1.0e3 if direction == 'minimize' else -1.0e3)
        penalty = float(_number(penalty, f'{where}.penalty'))
        name = str(item.get('name', metric))
        if name in names:
            raise StudyError(f"{where}: objective name '{name}' used twice; give name:")
        names.add(name)
        objectives.append(Objective(name, metric, tuple(selected), aggregate, direction, penalty))
    return tuple(objectives)


def load_study(path: str | os.PathLike) -> Study:
    """Read and check a study file completely; raise :class:`StudyError` naming the problem."""
    from dodo_sim.safe_yaml import read_yaml_file, YamlInputError
    path = Path(path)
    if not path.is_file():
        raise StudyError(f'study file {path}: file not found')
    try:
        raw = read_yaml_file(path, f'study file {path}')   # no alias bomb, no key given twice
    except YamlInputError as exc:
        raise StudyError(str(exc)) from None
    except OSError as exc:
        raise StudyError(f'study file {path}: cannot read it: {exc.strerror or exc}') from None
    try:
        return _load_study(path, raw)
    except StudyError as exc:
        raise StudyError(f'study file {path}: {exc}') from None


def _load_study(path: Path, raw) -> Study:
    raw = _mapping(raw, 'the top level')
    for key in raw:
        if key not in TOP_LEVEL_KEYS:
            raise StudyError(_unknown('key', key, TOP_LEVEL_KEYS))
    controller, model = raw.get('controller'), raw.get('model')
    for key, value in (('controller', controller), ('model', model)):
        if value is not None and (not isinstance(value, str) or not value):
            raise StudyError(f'{key}: must be a name, got {value!r}')
    robot = raw.get('robot', HOSTED if controller is not None else None)
    if not isinstance(robot, str):
        raise StudyError('robot: must name the robot scenario module (e.g. hopper), or '
                         'controller: name the controller (robot: hosted)')
    try:
        module = bound_module(robot_module(robot), controller, model)
    except ValueError as exc:
        raise StudyError(str(exc)) from None
    sections = module.SECTIONS
    # fixed values: checked by building every config
    fixed = {}
    for section, values in _mapping(raw.get('fixed'), 'fixed').items():
        if section not in sections:
            raise StudyError('fixed: ' + _unknown('section', section, sections))
        fixed[section] = dict(_mapping(values, f'fixed.{section}'))
        known = {f.name for f in dataclasses.fields(sections[section])}
        for name in fixed[section]:
            if name not in known:
                raise StudyError(f'fixed.{section}: ' + _unknown('parameter', name, known))
        try:
            sections[section](**fixed[section])
        except (ValueError, TypeError) as exc:
            raise StudyError(f'fixed.{section}: {exc}') from None
    # tuned parameters
    parameters = []
    raw_params = _mapping(raw.get('parameters'), 'parameters')
    if not raw_params:
        raise StudyError('parameters: give at least one parameter to tune')
    for section, specs in raw_params.items():
        if section not in sections:
            raise StudyError('parameters: ' + _unknown('section', section, sections))
        cls = sections[section]
        known = {f.name for f in dataclasses.fields(cls)}
        specs = _mapping(specs, f'parameters.{section}')
        indexed = {m.group(1): key for key in specs if (m := _ELEMENT.match(str(key)))}
        for name in sorted(set(indexed) & set(specs)):
            raise StudyError(f'parameters.{section}: {indexed[name]} and the whole {name} are '
                             f'both tuned; give one')
        for key, spec in specs.items():
            element = _ELEMENT.match(str(key))
            name, index = (element.group(1), int(element.group(2))) if element else (key, None)
            if name not in known:
                raise StudyError(f'parameters.{section}: '
                                 + _unknown(f'{cls.__name__} parameter', name, known))
            if index is None and name in fixed.get(section, {}):
                raise StudyError(f'parameters.{section}.{name} is also in fixed.{section}')
            parameters.append(_parse_parameter(section, name, spec, cls,
                                               fixed.get(section, {}), index))
    if not parameters:
        raise StudyError('parameters: give at least one parameter to tune')
    scenarios = _parse_scenarios(raw.get('scenarios'), module.SCENARIOS)
    perturbations = _parse_perturbations(raw.get('perturbations'), sections, module)
    for pert in perturbations:
        try:
            build_configs(sections, fixed, pert)
            check = getattr(module, 'check_perturbation', None)
            if check is not None:
                check(pert)
        except (ValueError, TypeError) as exc:
            raise StudyError(f"perturbation '{pert.name}': {exc}") from None
    objectives = _parse_objectives(raw.get('objectives'), scenarios, module)
    sampler_raw = raw.get('sampler', 'cmaes')
    if isinstance(sampler_raw, str):
        sampler, sampler_options = sampler_raw, {}
    else:
        sampler_options = dict(_mapping(sampler_raw, 'sampler'))
        sampler = sampler_options.pop('name', None)
    if sampler not in SAMPLERS:
        raise StudyError('sampler: ' + _unknown('sampler', sampler, SAMPLERS))
    if len(objectives) > 1 and sampler not in MULTI_OBJECTIVE_SAMPLERS:
        raise StudyError(f"sampler '{sampler}' optimises one objective; with "
                         f'{len(objectives)} objectives use one of {MULTI_OBJECTIVE_SAMPLERS}')
    try:
        make_sampler(sampler, sampler_options, 0)
    except (TypeError, ValueError) as exc:
        raise StudyError(f'sampler options {sampler_options}: {exc}') from None
    seed = raw.get('seed', 0)
    trials = raw.get('trials', 20)
    for key, value in (('seed', seed), ('trials', trials)):
        if isinstance(value, bool) or not isinstance(value, int) or value < (key == 'trials'):
            raise StudyError(f'{key} must be an integer >= {int(key == "trials")}, got {value!r}')
    if seed >= SEED_LIMIT:
        raise StudyError(f'seed must be below 2**32 = {SEED_LIMIT}, got {seed}')
    name = str(raw.get('name', path.stem))
    return Study(path=path, name=name, robot=robot, controller=controller or '',
                 sampler=sampler,
                 sampler_options=sampler_options, seed=seed, trials=trials,
                 parameters=tuple(parameters), fixed=fixed, scenarios=scenarios,
                 perturbations=perturbations, objectives=objectives, module=module)


def make_sampler(name: str, options: Mapping, seed: int):
    """Return the Optuna sampler ``name`` with the study's ``options`` and ``seed``."""
    import optuna
    classes = {'cmaes': optuna.samplers.CmaEsSampler, 'tpe': optuna.samplers.TPESampler,
               'nsga2': optuna.samplers.NSGAIISampler, 'random': optuna.samplers.RandomSampler}
    kwargs = dict(options)
    if name == 'cmaes':
        kwargs.setdefault('warn_independent_sampling', False)
    return classes[name](seed=seed, **kwargs)
