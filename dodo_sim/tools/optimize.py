# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
``dodo optimize``: tune controller (and simulator) parameters over closed-loop scenarios.

::

    dodo optimize STUDY.yaml [--workers N] [--storage URL] [--trials N] [--out DIR]
                             [--report-only] [--no-progress]

A study file (docs/optimize.md; example ``config/studies/hop_precision.yaml``) names the robot
(its scenario module, :mod:`dodo_control.scenarios`), the parameters with their ranges (fields of
the robot's config dataclasses), the scenarios and perturbations every trial runs, the
objectives and the Optuna sampler. The study is checked completely before any trial runs: a bad
study file is refused with one message and exit code 2.

Trial 0 is the baseline (the configs' defaults, or ``baseline:`` values), enqueued, so the
improvement is measured inside the study. Trials are evaluated by worker processes sharing an
Optuna storage: ``--workers N`` processes on this machine; more machines join by running the same
command with the same ``--storage`` (a journal file on a shared disk, or an RDB URL such as
``sqlite:///study.db`` / ``postgresql://...``). The study stops at ``trials`` trials in total.

Results in ``--out`` (default ``runs/optimize-<study>-<date>-<time>/``): ``best.yaml`` (a params
file with ``simulator:``/``controller:`` sections for ``dodo hop --params-file`` and
``ros2 launch dodo_sim hop.launch.py params_file:=``), ``history.png``, ``trials.csv`` and
``summary.txt`` (also printed).

Exit codes: 0 done, 1 a worker failed or no trial succeeded, 2 bad study file or options,
130 interrupted (SIGINT), 143 terminated (SIGTERM); on 1, 130 and 143 the results of the finished
trials are written.
"""
from __future__ import annotations

import argparse
import csv
import dataclasses
from dataclasses import dataclass, field
import difflib
import itertools
import math
import multiprocessing
import os
from pathlib import Path
import re
import signal
import socket
import sys
import threading
import time
from typing import Any, Mapping
import warnings

from dodo_control.scenarios import build_configs, Perturbation, robot_module, ScenarioFailed
from dodo_sim.tools.optimize_storage import (check_storage_url, join_study, Liveness, make_storage,
                                             sampler_seed, StorageError)
import yaml

EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_INTERRUPTED, EXIT_TERMINATED = 0, 1, 2, 130, 143
#: seeds of numpy/Optuna samplers are unsigned 32-bit integers
SEED_LIMIT = 2 ** 32

SAMPLERS = ('cmaes', 'tpe', 'nsga2', 'random')
MULTI_OBJECTIVE_SAMPLERS = ('tpe', 'nsga2', 'random')
AGGREGATES = ('max', 'mean', 'min', 'sum')
DIRECTIONS = ('minimize', 'maximize')
TOP_LEVEL_KEYS = ('name', 'robot', 'sampler', 'seed', 'trials', 'parameters', 'fixed',
                  'scenarios', 'perturbations', 'objectives')


#: a parameter name: a config field, or one element of a tuple-valued field (``pulse_phase[3]``)
_ELEMENT = re.compile(r'^(\w+)\[(\d+)\]$')


class StudyError(ValueError):
    """The study file cannot be used; the message names the file and the bad entry."""


class TrialFailed(RuntimeError):
    """
    Trial failure: the trial measured nothing usable.

    A trial that measured nothing usable (a run raised, a metric is missing or not finite, or every
    run failed): Optuna marks it FAIL, its reason is the trial's ``failure`` attribute, and the
    study goes on.
    """


class Terminated(KeyboardInterrupt):
    """
    SIGTERM, raised where the process is.

    A KeyboardInterrupt so that Optuna fails the running trial and re-raises, as it does for
    SIGINT.
    """


def _raise_terminated(signum, frame):
    raise Terminated()


# -- the study ------------------------------------------------------------------------------

@dataclass(frozen=True)
class Parameter:
    """
    One tuned parameter: ``section.name`` of the robot's config dataclasses.

    Or one element ``section.name[index]`` of a tuple-valued field (e.g.
    ``controller.pulse_phase[0]``; the other elements keep their fixed or default values).

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

    @property
    def runs_per_trial(self) -> int:
        return len(self.scenarios) * len(self.perturbations)

    def values(self, tuned: Mapping[str, Any]) -> dict:
        """
        Section -> {field: value}.

        The fixed values with ``tuned`` (``section.name`` keys) on top.
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


def _parse_parameter(section: str, name: str, spec, cls, fixed: Mapping,
                     index: int | None = None) -> Parameter:
    label = name if index is None else f'{name}[{index}]'
    where = f'parameters.{section}.{label}'
    spec = _mapping(spec, where)
    allowed = {'low', 'high', 'log', 'step', 'choices', 'baseline'}
    extra = sorted(set(spec) - allowed)
    if extra:
        raise StudyError(f'{where}: unknown key(s) {extra}; allowed: {sorted(allowed)}')
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
        item = _mapping(item, where)
        allowed = {'name', 'metric', 'scenarios', 'aggregate', 'direction', 'penalty'}
        extra = sorted(set(item) - allowed)
        if extra:
            raise StudyError(f'{where}: unknown key(s) {extra}; allowed: {sorted(allowed)}')
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
    path = Path(path)
    try:
        return _load_study(path)
    except StudyError as exc:
        raise StudyError(f'study file {path}: {exc}') from None


def _load_study(path: Path) -> Study:
    if not path.is_file():
        raise StudyError('file not found')
    try:
        raw = yaml.safe_load(path.read_text(encoding='utf-8'))
    except UnicodeDecodeError:
        raise StudyError('not a text file (not UTF-8): a study file is YAML') from None
    except OSError as exc:
        raise StudyError(f'cannot read it: {exc.strerror or exc}') from None
    except yaml.YAMLError as exc:
        raise StudyError(f'not valid YAML: {" ".join(str(exc).split())}') from None
    raw = _mapping(raw, 'the top level')
    for key in raw:
        if key not in TOP_LEVEL_KEYS:
            raise StudyError(_unknown('key', key, TOP_LEVEL_KEYS))
    robot = raw.get('robot')
    if not isinstance(robot, str):
        raise StudyError('robot: must name the robot scenario module (e.g. hopper)')
    try:
        module = robot_module(robot)
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
        _make_sampler(sampler, sampler_options, 0)
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
    return Study(path=path, name=name, robot=robot, sampler=sampler,
                 sampler_options=sampler_options, seed=seed, trials=trials,
                 parameters=tuple(parameters), fixed=fixed, scenarios=scenarios,
                 perturbations=perturbations, objectives=objectives, module=module)


# -- evaluation -----------------------------------------------------------------------------

@dataclass
class Evaluation:
    """
    Objective values of one parameter set and the runs behind them.

    Fields:
        values: one value per objective (penalty where a selected run failed).
        runs: [{'scenario', 'perturbation', 'metrics' or 'failure'}] in evaluation order.
        wall_s: evaluation time, s.
        failure: why the whole evaluation is unusable (a trial FAIL), or None: a run raised
            something other than ScenarioFailed, a selected metric is missing or not finite, or
            every run failed (then no value carries information).
    """

    values: tuple
    runs: list
    wall_s: float
    failure: str | None = None


def evaluate(study: Study, tuned: Mapping[str, Any]) -> Evaluation:
    """
    Run every scenario under every perturbation.

    Run every scenario under every perturbation with the fixed values plus ``tuned``
    (``section.name`` keys) and aggregate the objectives.
    """
    start = time.perf_counter()
    values = study.values(tuned)
    runs = []
    for entry in study.scenarios:
        scenario = study.module.SCENARIOS[entry.kind]
        for pert in study.perturbations:
            record = {'scenario': entry.name, 'perturbation': pert.name}
            try:
                configs = build_configs(study.module.SECTIONS, values, pert)
                record['metrics'] = scenario.run(configs, dict(entry.options), pert)
            except (ScenarioFailed, ValueError) as exc:
                record['failure'] = str(exc)
            except Exception as exc:   # noqa: BLE001 -- a bug in a scenario or controller
                # fails this trial with its reason instead of ending the whole study
                record['failure'] = f'{type(exc).__name__}: {exc}'
                record['error'] = True
            runs.append(record)
    problems = [f"{r['scenario']} / {r['perturbation']}: {r['failure']}"
                for r in runs if r.get('error')]
    out = []
    for obj in study.objectives:
        samples = [r for r in runs if r['scenario'] in obj.scenarios]
        if any('failure' in r for r in samples):
            out.append(obj.penalty)
            continue
        data = []
        for r in samples:
            value = r['metrics'].get(obj.metric)
            if not isinstance(value, (int, float)) or not math.isfinite(value):
                problems.append(f"{r['scenario']} / {r['perturbation']}: metric {obj.metric} "
                                f'is {value!r}')
                value = math.nan
            data.append(float(value))
        value = {'max': max, 'min': min, 'sum': sum,
                 'mean': lambda xs: sum(xs) / len(xs)}[obj.aggregate](data)
        out.append(value if math.isfinite(value) else obj.penalty)
    if not problems and runs and all('failure' in r for r in runs):
        problems = [f'every run failed; first: {runs[0]["scenario"]} / '
                    f'{runs[0]["perturbation"]}: {runs[0]["failure"]}']
    return Evaluation(tuple(out), runs, time.perf_counter() - start,
                      '; '.join(problems) if problems else None)


# -- optuna glue ----------------------------------------------------------------------------

def _make_sampler(name: str, options: Mapping, seed: int):
    import optuna
    classes = {'cmaes': optuna.samplers.CmaEsSampler, 'tpe': optuna.samplers.TPESampler,
               'nsga2': optuna.samplers.NSGAIISampler, 'random': optuna.samplers.RandomSampler}
    kwargs = dict(options)
    if name == 'cmaes':
        kwargs.setdefault('warn_independent_sampling', False)
    return classes[name](seed=seed, **kwargs)


def _suggest(trial, p: Parameter):
    if p.kind == 'categorical':
        return trial.suggest_categorical(p.key, list(p.choices))
    if p.kind == 'int':
        return trial.suggest_int(p.key, p.low, p.high, step=p.step or 1, log=p.log)
    return trial.suggest_float(p.key, p.low, p.high, step=p.step, log=p.log)


def _objective(study: Study):
    def objective(trial):
        tuned = {p.key: _suggest(trial, p) for p in study.parameters}
        result = evaluate(study, tuned)
        trial.set_user_attr('runs', result.runs)
        trial.set_user_attr('wall_s', result.wall_s)
        if result.failure is not None:
            trial.set_user_attr('failure', result.failure)
            raise TrialFailed(result.failure)
        return result.values if len(result.values) > 1 else result.values[0]
    return objective


def _owned_ask(ask, worker: Mapping[str, Any]):
    """
    Wrap ``Study.ask`` so that a new trial carries its worker's attributes before a signal lands.

    ``study.optimize`` creates the trial in ``ask`` (and samples in it, which takes a while with
    TPE) before the objective runs; a SIGINT/SIGTERM there used to leave a RUNNING trial with
    no ``pid``, which the main process could not fail as its worker's
    (:func:`_fail_running_trials_of`). While the trial is created and marked, SIGINT and SIGTERM
    are only noted (handlers, not a signal mask: any thread of the process may receive a
    signal); one that came meanwhile is raised again as soon as the trial is marked.
    """
    deferred = (signal.SIGINT, signal.SIGTERM)

    def owned_ask(*args, **kwargs):
        if threading.current_thread() is not threading.main_thread():
            raise RuntimeError('dodo optimize runs its trials in the main thread')
        caught = []
        previous = {signum: signal.signal(signum, lambda got, frame: caught.append(got))
                    for signum in deferred}
        try:
            trial = ask(*args, **kwargs)
            for key, value in worker.items():
                trial.set_user_attr(key, value)
        finally:
            for signum, handler in previous.items():
                signal.signal(signum, handler)
        if caught:
            signal.raise_signal(caught[0])
        return trial
    return owned_ask


def _open_study(study: Study, storage_url: str, create: bool, liveness: Liveness = Liveness(),
                report=None):
    import optuna
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    storage = make_storage(storage_url, liveness, report)
    directions = [o.direction for o in study.objectives]
    if create:
        opt = optuna.create_study(storage=storage, study_name=study.name, load_if_exists=True,
                                  directions=directions)
        if [d.name.lower() for d in opt.directions] != directions:
            raise StudyError(f"storage {storage_url} holds a study '{study.name}' with other "
                             f'objectives; choose another name or storage')
        return opt
    try:
        return optuna.load_study(storage=storage, study_name=study.name)
    except KeyError:
        raise StudyError(f"no study '{study.name}' in {storage_url}") from None


def _counted(trial) -> bool:
    """
    Count towards ``trials``: complete, failed for a reason of its own (not a worker that.

    died: such a trial is retried), or running now.
    """
    from optuna.trial import TrialState
    if trial.state == TrialState.FAIL:
        return 'failure' in trial.user_attrs
    return trial.state in (TrialState.COMPLETE, TrialState.PRUNED, TrialState.RUNNING)


def _finished(opt) -> int:
    """Trials that ended with a result (complete, or failed for a reason of their own)."""
    from optuna.trial import TrialState
    return sum(1 for t in opt.get_trials(deepcopy=False)
               if t.state != TrialState.RUNNING and _counted(t))


def run_worker(study_path: str, storage_url: str, trials: int, liveness: Liveness = Liveness(),
               on_trial=None, local_index: int = 0) -> None:
    """
    Evaluate trials of the study in ``storage_url`` until it has ``trials`` counted trials.

    (:func:`_counted`).
    """
    import optuna

    # heartbeats and the stale-trial retry are "experimental" in Optuna (since 2.8): as documented
    warnings.filterwarnings('ignore', category=optuna.exceptions.ExperimentalWarning)
    from optuna.storages import fail_stale_trials
    study = load_study(study_path)
    opt = _open_study(study, storage_url, create=False, liveness=liveness)
    number = join_study(opt._storage, study.name)
    if number == 0:
        # trial 0, the baseline, enqueued once: by the first worker to join the study (two
        # processes enqueueing it at once would both see none there and both add it)
        opt.enqueue_trial(study.baseline(), user_attrs={'baseline': True}, skip_if_exists=True)
    else:
        _wait_for_baseline(opt, study, liveness)
    seed = sampler_seed(study.seed, number)
    opt.sampler = _make_sampler(study.sampler, study.sampler_options, seed)
    worker = {'worker': number, 'worker_local': local_index, 'sampler_seed': seed,
              'host': socket.gethostname(), 'pid': os.getpid()}

    def enough(s, t):
        if sum(1 for x in s.get_trials(deepcopy=False) if _counted(x)) >= trials:
            s.stop()
        if on_trial is not None:
            on_trial()
    fail_stale_trials(opt)        # trials of workers that died before this one started
    if sum(1 for t in opt.get_trials(deepcopy=False) if _counted(t)) >= trials:
        return
    opt.ask = _owned_ask(opt.ask, worker)     # study.optimize asks through the instance
    opt.optimize(_objective(study), callbacks=[enough], gc_after_trial=False,
                 catch=(TrialFailed,))


def _wait_for_baseline(opt, study: Study, liveness: Liveness) -> None:
    """
    Wait until the study holds the baseline before this worker creates a trial of its own.

    Trial numbers follow creation order: a worker that joined second and asked for a trial
    before the first one had enqueued the baseline would take trial 0 with a sampled point, and
    trial 0 is the baseline everywhere (summary, history plot, best.yaml). The first worker
    enqueues it right after joining; if it died in between, this one enqueues it after
    ``liveness.grace_s``.
    """
    deadline = time.monotonic() + liveness.grace_s
    while not any(t.user_attrs.get('baseline') for t in opt.get_trials(deepcopy=False)):
        if time.monotonic() > deadline:
            opt.enqueue_trial(study.baseline(), user_attrs={'baseline': True},
                              skip_if_exists=True)
            return
        time.sleep(0.05)       # polling the storage (it has no notification)


def _worker_process(study_path, storage_url, trials, liveness, local_index):  # pragma: no cover
    signal.signal(signal.SIGTERM, _raise_terminated)
    try:
        run_worker(study_path, storage_url, trials, liveness, local_index=local_index)
    except KeyboardInterrupt as exc:
        sys.exit(EXIT_TERMINATED if isinstance(exc, Terminated) else EXIT_INTERRUPTED)


# -- results --------------------------------------------------------------------------------

def best_trial(opt, study: Study):
    """Return the best complete trial (several objectives: the Pareto trial best in the first)."""
    if len(study.objectives) == 1:
        return opt.best_trial
    sign = 1.0 if study.objectives[0].direction == 'minimize' else -1.0
    return min(opt.best_trials, key=lambda t: sign * t.values[0])


def params_file_text(study: Study, trial, baseline_trial=None) -> str:
    """Return a params file: the study's fixed values and the trial's parameters per section."""
    values = study.values({p.key: trial.params[p.key] for p in study.parameters})
    lines = [f'# dodo optimize: study {study.name} ({study.path.name}), robot {study.robot}',
             f'# best trial {trial.number}: '
             + ', '.join(f'{o.name} = {v:.6g}' for o, v in zip(study.objectives, trial.values))]
    if baseline_trial is not None and baseline_trial.values is not None:
        lines.append(f'# baseline trial {baseline_trial.number}: '
                     + ', '.join(f'{o.name} = {v:.6g}'
                                 for o, v in zip(study.objectives, baseline_trial.values)))
    lines.append(getattr(study.module, 'PARAMS_FILE_USE',
                         '# Use: dodo hop --params-file <this file>  |  ros2 launch dodo_sim '
                         'hop.launch.py params_file:=<this file>'))
    doc = {section: {'ros__parameters': {k: (list(v) if isinstance(v, tuple) else v)
                                         for k, v in params.items()}}
           for section, params in values.items() if params}
    return '\n'.join(lines) + '\n' + yaml.safe_dump(doc, sort_keys=False)


def plot_history(study: Study, trials: list, path: Path) -> None:
    """
    Objective value per trial, the best so far and the baseline (trial 0).

    One panel per objective; PNG.
    """
    import matplotlib
    matplotlib.use('Agg')
    import matplotlib.pyplot as plt
    n = len(study.objectives)
    fig, axes = plt.subplots(n, 1, figsize=(8, 3.2 * n), squeeze=False)
    done = [t for t in trials if t.values is not None]
    for i, (obj, ax) in enumerate(zip(study.objectives, axes[:, 0])):
        xs = [t.number for t in done]
        ys = [t.values[i] for t in done]
        ok = [(x, y) for x, y in zip(xs, ys) if y != obj.penalty]
        failed = [x for x, y in zip(xs, ys) if y == obj.penalty]
        if ok:
            ax.plot(*zip(*ok), 'o', ms=4, color='tab:blue', label='trial')
            best, line = math.inf, []
            sign = 1.0 if obj.direction == 'minimize' else -1.0
            for x, y in sorted(ok):
                best = min(best, sign * y)
                line.append((x, sign * best))
            ax.step(*zip(*line), where='post', color='tab:red', label='best so far')
        base = next((t for t in done if t.number == 0), None)
        if base is not None and base.values[i] != obj.penalty:
            ax.axhline(base.values[i], ls='--', color='gray', label='baseline (trial 0)')
        for x in failed:
            ax.axvline(x, color='tab:orange', alpha=0.3, lw=1)
        ax.set_xlabel('trial')
        ax.set_ylabel(f'{obj.name}\n({obj.aggregate} {obj.metric})')
        ax.grid(alpha=0.3)
        ax.legend(loc='upper right', fontsize=8)
    axes[0, 0].set_title(f'dodo optimize: {study.name} ({study.sampler}, '
                         f'{len(done)} trials; orange: failed runs)')
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def write_trials_csv(study: Study, trials: list, path: Path) -> None:
    with open(path, 'w', newline='') as fh:
        writer = csv.writer(fh)
        writer.writerow(['trial', 'state', *[o.name for o in study.objectives],
                         *[p.key for p in study.parameters], 'wall_s', 'worker',
                         'sampler_seed', 'host', 'failure'])
        for t in trials:
            values = list(t.values) if t.values is not None else [''] * len(study.objectives)
            failure = t.user_attrs.get('failure', '')
            if t.state.name == 'FAIL' and not failure:
                failure = 'worker stopped or died during the trial (retried)'
            writer.writerow([t.number, t.state.name, *values,
                             *[t.params.get(p.key, '') for p in study.parameters],
                             t.user_attrs.get('wall_s', ''), t.user_attrs.get('worker', ''),
                             t.user_attrs.get('sampler_seed', ''), t.user_attrs.get('host', ''),
                             failure])


def summary_text(study: Study, opt, workers: int, wall_s: float, out: Path) -> str:
    from optuna.trial import TrialState
    trials = opt.get_trials(deepcopy=False)
    complete = [t for t in trials if t.state == TrialState.COMPLETE]
    failed = [t for t in trials if t.state == TrialState.FAIL and 'failure' in t.user_attrs]
    stopped = [t for t in trials if t.state == TrialState.FAIL and 'failure' not in t.user_attrs]
    lines = [f"dodo optimize: study '{study.name}' (robot {study.robot}, sampler {study.sampler}"
             f'): {len(complete)} complete, {len(failed)} failed trials'
             + (f', {len(stopped)} stopped by a worker that died or was stopped'
                if stopped else '') + f'; {workers} worker(s) here, {wall_s:.1f} s wall']
    for t in failed[:5]:
        lines.append(f'  trial {t.number} failed: {t.user_attrs["failure"][:300]}')
    if len(failed) > 5:
        lines.append(f'  ... {len(failed) - 5} more failed trials in trials.csv')
    if not complete:
        lines.append('  no complete trial: no best.yaml')
        return '\n'.join(lines)
    best = best_trial(opt, study)
    base = next((t for t in complete if t.number == 0), None)
    for i, obj in enumerate(study.objectives):
        text = (f'  objective {obj.name} ({obj.aggregate} of {obj.metric} over '
                f'{len(obj.scenarios)} scenario(s) x {len(study.perturbations)} '
                f'perturbation(s), {obj.direction}):')
        lines.append(text)
        b = base.values[i] if base is not None else math.nan
        change = (best.values[i] - b) / abs(b) * 100.0 if base is not None and b else math.nan
        lines.append(f'    baseline (trial 0): {b:.6g}   best (trial {best.number}): '
                     f'{best.values[i]:.6g}   ({change:+.1f} %)')
    lines.append(f'  {"parameter":36s} {"baseline":>12s} {"best":>12s}')
    for p in study.parameters:
        bv = base.params.get(p.key, p.baseline) if base is not None else p.baseline
        lines.append(f'  {p.key:36s} {_fmt(bv):>12s} {_fmt(best.params[p.key]):>12s}')
    lines.append('  runs of the best trial:')
    for run in best.user_attrs.get('runs', []):
        what = run.get('failure') or ' '.join(f'{k}={_fmt(v)}' for k, v in run['metrics'].items())
        lines.append(f'    {run["scenario"]} / {run["perturbation"]}: {what}')
    eval_s = sum(t.user_attrs.get('wall_s', 0.0) for t in complete)
    n_runs = len(complete) * study.runs_per_trial
    lines.append(f'  {n_runs} scenario runs, {eval_s:.1f} s of evaluation '
                 f'({n_runs / max(eval_s, 1e-9):.2f} runs/s per worker)')
    lines.append(f'  results in {out}/: best.yaml, history.png, trials.csv, summary.txt')
    return '\n'.join(lines)


def _fmt(value) -> str:
    if isinstance(value, float):
        return f'{value:.6g}'
    return str(value)


def write_results(study: Study, opt, out: Path, workers: int, wall_s: float) -> str:
    from optuna.trial import TrialState
    out.mkdir(parents=True, exist_ok=True)
    trials = opt.get_trials(deepcopy=False)
    complete = [t for t in trials if t.state == TrialState.COMPLETE]
    if complete:
        base = next((t for t in complete if t.number == 0), None)
        (out / 'best.yaml').write_text(params_file_text(study, best_trial(opt, study), base))
        plot_history(study, trials, out / 'history.png')
    write_trials_csv(study, trials, out / 'trials.csv')
    text = summary_text(study, opt, workers, wall_s, out)
    (out / 'summary.txt').write_text(text + '\n')
    return text


# -- command line -----------------------------------------------------------------------------

class _Progress:
    """
    Trials finished of the total with the rate, the ETA (tqdm) and the best value so far.

    On stderr; the storage is the truth (other machines' trials count too).
    """

    def __init__(self, opt, study: Study, total: int):
        from tqdm import tqdm
        self._opt, self._study = opt, study
        self._bar = tqdm(total=total, initial=_finished(opt), desc='trials', unit='trial',
                         file=sys.stderr, dynamic_ncols=True)

    def update(self) -> None:
        from optuna.trial import TrialState
        trials = self._opt.get_trials(deepcopy=False)
        done = [t for t in trials if t.state == TrialState.COMPLETE]
        failed = sum(1 for t in trials if t.state == TrialState.FAIL and 'failure' in t.user_attrs)
        postfix = {'failed': failed}
        if done:
            sign = 1.0 if self._study.objectives[0].direction == 'minimize' else -1.0
            postfix['best'] = f'{min(sign * t.values[0] for t in done) * sign:.4g}'
        self._bar.set_postfix(postfix, refresh=False)
        self._bar.update(_finished(self._opt) - self._bar.n)

    def close(self) -> None:
        self.update()
        self._bar.close()


def _wait_for_running(opt, liveness: Liveness, report) -> bool:
    """
    Wait until no trial is RUNNING; True if the study needs more trials.

    Wait until no trial is RUNNING (other workers finish theirs, or a dead worker's trial turns
    stale and is failed and re-enqueued); True if the study needs more trials run.
    """
    from optuna.storages import fail_stale_trials
    from optuna.trial import TrialState
    deadline = time.monotonic() + liveness.grace_s + 2 * liveness.heartbeat_s
    reported = False
    while time.monotonic() < deadline:
        fail_stale_trials(opt)
        trials = opt.get_trials(deepcopy=False)
        if not any(t.state == TrialState.RUNNING for t in trials):
            return True
        if not reported:
            report("waiting for running trials of other workers (a dead worker's trial is "
                   f'retried after {liveness.grace_s} s without heartbeat)')
            reported = True
        time.sleep(liveness.heartbeat_s)      # poll the storage at the heartbeat rate
    return False


def run_study(study: Study, storage_url: str, workers: int, trials: int, progress: bool,
              liveness: Liveness = Liveness(), report=None):
    """
    Create/load the study, enqueue the baseline.

    Run ``workers`` workers here until the study holds ``trials`` counted trials (resuming what a
    killed worker left); the study.
    """
    report = report or (lambda text: print(f'dodo optimize: {text}', file=sys.stderr))
    import optuna
    warnings.filterwarnings('ignore', category=optuna.exceptions.ExperimentalWarning)
    opt = _open_study(study, storage_url, create=True, liveness=liveness, report=report)
    bar = _Progress(opt, study, trials) if progress else None
    try:
        # a worker that died leaves a RUNNING trial: once it is stale it is failed and its
        # parameters re-enqueued, and the workers run again for the trials still missing
        while True:
            _run_workers(opt, study, storage_url, workers, trials, liveness, bar)
            if _finished(opt) >= trials or not _wait_for_running(opt, liveness, report) \
                    or _finished(opt) >= trials:
                break
    finally:
        if bar is not None:
            bar.close()
    return opt


def _fail_running_trials_of(opt, pids) -> None:
    """
    Fail the RUNNING trials of stopped worker processes.

    Mark FAIL the RUNNING trials of stopped worker processes (a worker stopped inside a storage
    write cannot always do it itself); the same command resumes the study.
    """
    from optuna.exceptions import UpdateFinishedTrialError
    from optuna.trial import TrialState
    for t in opt.get_trials(deepcopy=False, states=(TrialState.RUNNING,)):
        if t.user_attrs.get('pid') in pids:
            try:
                opt._storage.set_trial_state_values(t._trial_id, TrialState.FAIL)
            except UpdateFinishedTrialError:
                pass                                   # it finished meanwhile


def _run_workers(opt, study, storage_url, workers, trials, liveness, bar) -> None:
    if workers == 1:
        run_worker(str(study.path), storage_url, trials, liveness,
                   on_trial=bar.update if bar else None)
        return
    ctx = multiprocessing.get_context('spawn')
    procs = [ctx.Process(target=_worker_process, name=f'dodo-optimize-{i}',
                         args=(str(study.path), storage_url, trials, liveness, i))
             for i in range(workers)]
    for proc in procs:
        proc.start()
    try:
        while any(proc.is_alive() for proc in procs):
            for proc in procs:
                proc.join(timeout=0.5)
            if bar is not None:
                bar.update()
    except BaseException:
        # SIGINT / SIGTERM here: stop every worker (each fails its running trial) and wait
        for proc in procs:
            if proc.is_alive():
                proc.terminate()
        for proc in procs:
            proc.join(timeout=10.0)
        for proc in procs:
            if proc.is_alive():
                proc.kill()
                proc.join()
        _fail_running_trials_of(opt, {proc.pid for proc in procs})
        raise
    bad = [p for p in procs if p.exitcode != 0]
    if bad:
        raise RuntimeError('worker(s) ' + ', '.join(f'{p.name} (exit {p.exitcode})'
                                                    for p in bad) + ' failed')


def _check_out_dir(out: Path) -> None:
    """Refuse an output directory that cannot be written before any trial runs."""
    probe = out / '.dodo-optimize-write-test'
    try:
        out.mkdir(parents=True, exist_ok=True)
        probe.write_text('')
        probe.unlink()
    except OSError as exc:
        raise StudyError(f'--out {out}: cannot write there ({exc.strerror or exc})') from None


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(
        prog='dodo optimize', description='Tune controller parameters over closed-loop '
        'scenarios (Optuna). See docs/optimize.md.')
    parser.add_argument('study', help='study file (YAML), e.g. config/studies/hop_precision.yaml')
    parser.add_argument('--workers', type=int, default=1,
                        help='worker processes on this machine (default 1)')
    parser.add_argument('--storage', default=None,
                        help='shared Optuna storage: a journal file path (journal:PATH) or an '
                             'RDB URL (sqlite:///study.db, postgresql+psycopg://...); default: '
                             'a journal file in the output directory')
    parser.add_argument('--trials', type=int, default=None,
                        help="total trials of the study (default: the file's trials:)")
    parser.add_argument('--out', default=None,
                        help='output directory (default runs/optimize-<study>-<date>-<time>)')
    parser.add_argument('--report-only', action='store_true',
                        help='run no trial: write the results of what the storage holds')
    parser.add_argument('--no-progress', action='store_true', help='no progress bar')
    parser.add_argument('--heartbeat-s', type=int, default=Liveness.heartbeat_s,
                        help='heartbeat interval of a running trial, s (default '
                             f'{Liveness.heartbeat_s}); a trial silent for 3 intervals is '
                             'stale (its worker died) and is retried')
    args = parser.parse_args(argv)
    try:
        study = load_study(args.study)
        if args.workers < 1:
            raise StudyError(f'--workers must be >= 1, got {args.workers}')
        trials = study.trials if args.trials is None else args.trials
        if trials < 1:
            raise StudyError(f'--trials must be >= 1, got {trials}')
        if args.heartbeat_s < 1:
            raise StudyError(f'--heartbeat-s must be >= 1, got {args.heartbeat_s}')
        out = Path(args.out) if args.out else Path('runs') / (
            f'optimize-{study.name}-{time.strftime("%Y%m%d-%H%M%S")}')
        storage_url = check_storage_url(args.storage or f'journal:{out / "study.journal"}')
        _check_out_dir(out)
    except (StudyError, StorageError) as exc:
        print(f'dodo optimize: {exc}', file=sys.stderr)
        return EXIT_USAGE
    liveness = Liveness(heartbeat_s=args.heartbeat_s, grace_s=3 * args.heartbeat_s,
                        lock_grace_s=max(3 * args.heartbeat_s, 10))
    print(f"dodo optimize: study '{study.name}': {len(study.parameters)} parameter(s), "
          f'{len(study.scenarios)} scenario(s) x {len(study.perturbations)} perturbation(s) = '
          f'{study.runs_per_trial} runs per trial, {trials} trials, sampler {study.sampler}, '
          f'{args.workers} worker(s), storage {storage_url}\n'
          f'  live view: optuna-dashboard {_dashboard_arg(storage_url)}', flush=True)
    start = time.perf_counter()
    previous = signal.signal(signal.SIGTERM, _raise_terminated)
    code = EXIT_OK
    try:
        if args.report_only:
            opt = _open_study(study, storage_url, create=False, liveness=liveness)
        else:
            opt = run_study(study, storage_url, args.workers, trials, not args.no_progress,
                            liveness)
    except (StudyError, StorageError) as exc:
        print(f'dodo optimize: {exc}', file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt as exc:        # SIGINT, or SIGTERM as Terminated
        code = EXIT_TERMINATED if isinstance(exc, Terminated) else EXIT_INTERRUPTED
        print(f'dodo optimize: {"interrupted" if code == EXIT_INTERRUPTED else "terminated"}; '
              'writing the results of the finished trials (the same command resumes the study)',
              file=sys.stderr)
    except RuntimeError as exc:
        print(f'dodo optimize: {exc}', file=sys.stderr)
        code = EXIT_FAILED
    finally:
        signal.signal(signal.SIGTERM, previous)
    if code != EXIT_OK:
        try:
            opt = _open_study(study, storage_url, create=False, liveness=liveness)
        except (StudyError, StorageError) as exc:     # stopped before the study was created
            print(f'dodo optimize: no results: {exc}', file=sys.stderr)
            return code
    print(write_results(study, opt, out, args.workers, time.perf_counter() - start))
    from optuna.trial import TrialState
    if code == EXIT_OK and not opt.get_trials(deepcopy=False, states=(TrialState.COMPLETE,)):
        print('dodo optimize: no trial succeeded (see the failures in trials.csv and '
              'summary.txt); no best.yaml written', file=sys.stderr)
        code = EXIT_FAILED
    return code


def _dashboard_arg(storage_url: str) -> str:
    return storage_url[len('journal:'):] if storage_url.startswith('journal:') else storage_url


if __name__ == '__main__':
    sys.exit(main())
