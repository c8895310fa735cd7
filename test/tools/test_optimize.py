# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
``dodo optimize``: study files are checked before any trial runs.

Two worker processes share a journal storage and improve on the baseline (trial 0), and the written
params file is usable (``dodo hop``'s checks, ``config_from_file``) and reproduces the best trial's
objective.
"""
import math
import subprocess
import sys

from conftest import REPO
from dodo_control.slip.config import ControllerConfig
from dodo_sim.ros import graph
from dodo_sim.ros.params import check_params_file, config_from_file
from dodo_sim.tools import optimize
from dodo_sim.tools.optimize_run import evaluate
from dodo_sim.tools.optimize_study import load_study, StudyError
from optimize_support import (assert_refused_before_any_trial, finished_two_worker_trials,
                              two_worker_run_fixture, write)
import pytest
import yaml

# A short hopper study: the baseline position gain is deliberately slow (baseline: 0.3), so a
# handful of trials finds better ones; 3 s of a 0.25 m target step per trial.
SHORT_STUDY = """
name: short
robot: hopper
sampler: random
seed: 5
trials: 6
parameters:
  controller:
    position_kp: {low: 0.3, high: 1.4, baseline: 0.3}
scenarios:
  - {kind: target_step, duration_s: 3.5, at_s: 0.6, step_m: 0.25, skip_hops: 3, final_hops: 1}
perturbations:
  simulator.integrator: [timestepping]
objectives:
  - {name: final_error, metric: final_error_m, aggregate: max}
"""


short_run = two_worker_run_fixture(SHORT_STUDY, 'optimize')


@pytest.mark.slow
def test_two_workers_improve_on_the_baseline(short_run):
    trials, baseline = finished_two_worker_trials(short_run)
    assert len(trials) >= 6
    assert baseline.params == {'controller.position_kp': 0.3}
    assert short_run['opt'].best_value < 0.5 * baseline.value


@pytest.mark.slow
def test_results_are_a_params_file_a_plot_and_a_table(short_run):
    out = short_run['out']
    assert (out / 'history.png').read_bytes()[:8] == b'\x89PNG\r\n\x1a\n'
    rows = (out / 'trials.csv').read_text().splitlines()
    assert rows[0].startswith('trial,state,final_error') and len(rows) >= 7
    check_params_file(out / 'best.yaml', graph.known_parameters())   # what dodo hop checks
    assert set(yaml.safe_load((out / 'best.yaml').read_text())) == {'controller'}
    assert 'baseline (trial 0)' in (out / 'summary.txt').read_text()


@pytest.mark.slow
def test_best_params_file_reproduces_the_best_trial(short_run):
    study, opt = short_run['study'], short_run['opt']
    cfg = config_from_file(ControllerConfig, short_run['out'] / 'best.yaml', 'controller')
    assert cfg.position_kp == opt.best_params['controller.position_kp']
    again = evaluate(study, {p.key: getattr(cfg, p.name) for p in study.parameters})
    assert again.values[0] == pytest.approx(opt.best_value, rel=1e-9, abs=1e-12)


# -- bad study files: refused before any trial, exit code 2, no traceback -------------------

GOOD = {
    'robot': 'hopper',
    'parameters': {'controller': {'position_kp': {'low': 0.4, 'high': 1.6}}},
    'scenarios': [{'kind': 'hold', 'duration_s': 2.0}],
    'objectives': [{'metric': 'apex_x_error_max_m'}],
}


def _with(**changes):
    doc = yaml.safe_load(yaml.safe_dump(GOOD))
    for path, value in changes.items():
        node = doc
        keys = path.split('__')
        for key in keys[:-1]:
            node = node[int(key)] if key.isdigit() else node.setdefault(key, {})
        if value is _DELETE:
            del node[keys[-1]]
        else:
            node[keys[-1]] = value
    return yaml.safe_dump(doc)


_DELETE = object()

BAD_STUDIES = [
    ('unknown parameter',
     _with(parameters={'controller': {'position_kpp': {'low': 0, 'high': 1}}}),
     "unknown ControllerConfig parameter 'position_kpp'; did you mean 'position_kp'"),
    ('unknown section', _with(parameters={'ctrl': {'position_kp': {'low': 0, 'high': 1}}}),
     "unknown section 'ctrl'"),
    ('low not below high', _with(parameters__controller__position_kp={'low': 1.0, 'high': 1.0}),
     'low (1.0) must be below high (1.0)'),
    ('log scale from zero', _with(parameters__controller__position_kp={'low': 0.0, 'high': 2.0,
                                                                       'log': True}),
     'a log scale needs low > 0'),
    ('outside the valid values', _with(parameters={'controller': {
        'leg_stiffness': {'low': -100.0, 'high': 9000.0}}}),
     'leg_stiffness.low = -100.0 is outside the valid values'),
    ('integer field, fractional bound', _with(parameters={'controller': {
        'liftoff_samples': {'low': 1.5, 'high': 8}}}),
     'is an integer'),
    ('baseline outside the range', _with(parameters__controller__position_kp={'low': 1.2,
                                                                              'high': 2.0}),
     'baseline (trial 0) value 1.0'),
    ('missing high', _with(parameters__controller__position_kp={'low': 1.0}),
     'needs low and high'),
    ('no range, and the field has none closed', _with(parameters__controller__position_kp={}),
     'position_kp needs low and high (or choices): ControllerConfig.position_kp allows >= 0 '
     '1/s, not a closed range to search'),
    ('unknown objective metric', _with(objectives=[{'metric': 'happiness'}]),
     "unknown metric 'happiness'"),
    ('unknown aggregate', _with(objectives=[{'metric': 'apex_x_error_max_m',
                                             'aggregate': 'median'}]),
     "unknown aggregate 'median'"),
    ('unknown sampler', _with(sampler='annealing'), "unknown sampler 'annealing'"),
    ('cmaes with two objectives', _with(objectives=[{'metric': 'apex_x_error_max_m'},
                                                    {'metric': 'hops'}]),
     "sampler 'cmaes' optimises one objective"),
    ('unknown scenario kind', _with(scenarios=[{'kind': 'dance'}]),
     "unknown scenario kind 'dance'"),
    ('unknown scenario option', _with(scenarios=[{'kind': 'hold', 'duraton_s': 2.0}]),
     "unknown option 'duraton_s'; did you mean 'duration_s'"),
    ('unknown perturbation axis', _with(perturbations={'gravity': [9.81]}),
     'perturbations.gravity: unknown axis'),
    ('bad integrator', _with(perturbations={'simulator.integrator': ['euler']}),
     "SimConfig.integrator = 'euler'"),
    ('unknown xacro arg', _with(perturbations={'xacro_args': [{'body_mas': 8.0}]}),
     "unknown xacro arg(s) ['body_mas']"),
    ('unknown top-level key', _with(objective=[]), "unknown key 'objective'"),
    ('unknown robot', _with(robot='unicorn'), "unknown robot 'unicorn'"),
    ('not YAML', 'robot: [hopper\n', 'not valid YAML'),
]


@pytest.mark.parametrize('text, message', [c[1:] for c in BAD_STUDIES],
                         ids=[c[0] for c in BAD_STUDIES])
def test_bad_study_files_are_refused_before_any_trial(tmp_path, capsys, text, message):
    assert_refused_before_any_trial(tmp_path, capsys, text, message)


def test_a_parameter_without_a_range_is_searched_over_its_fields_bounds(tmp_path):
    """A field's allowed values and closed bounds (its metadata) are its default search space."""
    study = load_study(write(tmp_path, _with(parameters={
        'controller': {'flight_policy': {}}, 'simulator': {'restitution': {}}})))
    by_name = {p.name: p for p in study.parameters}
    assert by_name['flight_policy'].kind == 'categorical'
    assert set(by_name['flight_policy'].choices) == {'cascade', 'raibert', 'deadbeat'}
    assert (by_name['restitution'].kind, by_name['restitution'].low,
            by_name['restitution'].high) == ('float', 0.0, 1.0)


def test_good_study_file_is_accepted():
    study = load_study(REPO / 'config' / 'studies' / 'hop_precision.yaml')
    assert study.robot == 'hopper' and study.runs_per_trial == len(study.scenarios) * 4
    assert {p.name for p in study.perturbations} == {
        'timestepping/nominal', 'event/nominal',
        'timestepping/body_mass=8.0,thigh_length=0.4,shank_length=0.45',
        'event/body_mass=8.0,thigh_length=0.4,shank_length=0.45'}


def test_the_dodo_command_refuses_a_bad_study_with_exit_code_2(tmp_path):
    study = write(tmp_path, _with(sampler='annealing'))
    proc = subprocess.run([sys.executable, '-m', 'dodo_sim.tools.cli', 'optimize', str(study)],
                          capture_output=True, text=True, cwd=tmp_path, timeout=120)
    assert proc.returncode == 2
    assert "unknown sampler 'annealing'" in proc.stderr and 'Traceback' not in proc.stderr


# -- other robots plug in ---------------------------------------------------------------------

TOY_STUDY = """
robot: toy_robot_scenarios          # test/toy_robot_scenarios.py (a module path)
sampler: cmaes
seed: 2
trials: 12
parameters:
  controller:
    gain: {low: -5.0, high: 5.0}
scenarios:
  - {kind: quadratic, optimum: 2.0}
perturbations:
  xacro_args: [{offset: 0.0}, {offset: 0.5}]
objectives:
  - {metric: cost, aggregate: mean}
"""


def test_another_robot_module_plugs_in(tmp_path):
    study = load_study(write(tmp_path, TOY_STUDY))
    assert [p.name for p in study.perturbations] == ['offset=0.0', 'offset=0.5']
    # mean over the perturbations of (gain + offset - 2)^2: at gain 0 it is (4 + 2.25) / 2
    assert evaluate(study, {'controller.gain': 0.0}).values[0] == pytest.approx(3.125)
    out = tmp_path / 'out'
    assert optimize.main([str(tmp_path / 'study.yaml'), '--out', str(out), '--no-progress']) == 0
    cfg = yaml.safe_load((out / 'best.yaml').read_text())['controller']['ros__parameters']
    assert abs(cfg['gain'] - 1.75) < 0.5            # the optimum of the mean is 1.75
    with pytest.raises(StudyError, match="unknown ToyConfig parameter 'gian'"):
        load_study(write(tmp_path, TOY_STUDY.replace('gain: {', 'gian: {'), 'bad.yaml'))


def test_a_failing_run_gets_the_penalty_not_a_crash(tmp_path):
    """A configuration the controller refuses (rest length beyond the leg) is a failed run."""
    study = load_study(write(tmp_path, _with(parameters={'controller': {
        'leg_rest_length_fraction': {'low': 0.5, 'high': 0.99}}})))
    result = evaluate(study, {'controller.leg_rest_length_fraction': 0.98})
    assert result.values == (study.objectives[0].penalty,)
    assert 'configuration refused' in result.runs[0]['failure']
    assert math.isfinite(result.values[0])
