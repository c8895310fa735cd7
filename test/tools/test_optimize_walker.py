# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
``dodo optimize`` on the Kneed Walker (dodo_control.scenarios.walker).

Two worker processes sharing a journal storage improve the cost of transport on the baseline (trial
0), the params file holds the whole pulse vectors and reproduces the best trial, a fall is a
penalised run with its reason, and walker studies with an unknown parameter or a bad range are
refused before any trial.

Which worker runs which trial, and how many, depends on timing (process start-up, the machine's
load); the tests assert only what holds whatever the timing: both workers join and finish,
trial 0 is the baseline, and a search space where every other point is better by construction.
"""
import threading
import time

from conftest import REPO
from dodo_control.walker.controller import WalkerConfig
from dodo_sim.ros.params import config_from_file
from dodo_sim.tools.optimize_run import evaluate, open_study, run_worker
from dodo_sim.tools.optimize_study import load_study, StudyError
from optimize_support import (assert_refused_before_any_trial, finished_two_worker_trials,
                              two_worker_run_fixture, write)
import pytest
import yaml

# A short walker study: 2.5 s walks on flat ground (4 steps; the cost of transport over steps 1 to
# the last) from the shipped parameters (trial 0). The swing-knee flexion pulse (shipped 0.3 N*m)
# costs motor work: a weaker one walks as far for less. The shipped value is the top of the range,
# so every other trial is a weaker pulse and has a lower cost of transport, whichever worker
# draws it (measured over [0, 0.4] in steps of 0.02: 0.1177 at 0, rising at every step to 0.1590
# at the shipped 0.3, then 0.1806 at 0.4; every pulse walks).
SHORT_STUDY = """
name: short_walk
robot: walker
sampler: random
seed: 3
trials: 5
parameters:
  controller:
    pulse_amplitude_nm[6]: {low: 0.0, high: 0.3}
scenarios:
  - {kind: walk, duration_s: 2.5, settle_steps: 1, min_speed_m_s: 0.5}
objectives:
  - {name: cot, metric: cost_of_transport, aggregate: max}
"""


short_run = two_worker_run_fixture(SHORT_STUDY, 'optimize_walker')


@pytest.mark.slow
def test_two_workers_lower_the_cost_of_transport_of_the_baseline(short_run):
    opt = short_run['opt']
    trials, baseline = finished_two_worker_trials(short_run)
    assert len(trials) == len(opt.trials) == 5
    shipped = WalkerConfig().pulse_amplitude_nm[6]
    assert baseline.params == {'controller.pulse_amplitude_nm[6]': shipped}
    assert baseline.user_attrs['baseline'] is True
    assert baseline.value < 1.0            # the baseline walks (not the fall penalty 1000)
    assert all(t.value < baseline.value for t in trials if t.number != 0)
    assert opt.best_value < baseline.value


@pytest.mark.slow
def test_a_worker_that_joins_second_never_takes_trial_0(tmp_path):
    """
    Trial 0 is the baseline even when the second worker is ready first.

    The first worker enqueues the baseline right after it joins; here it has joined (number 0
    taken) but not enqueued yet when the second one starts, which before waited for nothing and
    took trial 0 with a sampled point.
    """
    from dodo_sim.tools.optimize_storage import join_study
    path = write(tmp_path, SHORT_STUDY)
    study = load_study(path)
    storage = f'journal:{tmp_path / "race.journal"}'
    opt = open_study(study, storage, create=True)
    assert join_study(opt._storage, study.name) == 0
    second = threading.Thread(target=run_worker, args=(str(path), storage, 2))
    second.start()
    deadline = time.monotonic() + 3.0
    while not opt.get_trials(deepcopy=False) and time.monotonic() < deadline:
        time.sleep(0.01)
    before_the_baseline = [t.params for t in opt.get_trials(deepcopy=False)]
    opt.enqueue_trial(study.baseline(), user_attrs={'baseline': True})     # as worker 0 does
    second.join(timeout=120)
    assert not second.is_alive()
    assert before_the_baseline == []
    trials = opt.get_trials(deepcopy=False)
    assert trials[0].params == study.baseline() and trials[0].user_attrs['baseline']
    assert [(t.state.name, t.user_attrs['worker']) for t in trials] == [('COMPLETE', 1)] * 2


@pytest.mark.slow
def test_best_params_file_holds_the_pulse_vector_and_reproduces_the_best_trial(short_run):
    study, opt = short_run['study'], short_run['opt']
    cfg = config_from_file(WalkerConfig, short_run['out'] / 'best.yaml', 'controller')
    expected = list(WalkerConfig().pulse_amplitude_nm)
    expected[6] = opt.best_params['controller.pulse_amplitude_nm[6]']
    assert cfg.pulse_amplitude_nm == tuple(expected)      # the other elements: the defaults
    assert 'over config/walk.yaml' in (short_run['out'] / 'best.yaml').read_text()
    again = evaluate(study, {'controller.pulse_amplitude_nm[6]': cfg.pulse_amplitude_nm[6]})
    assert again.values[0] == pytest.approx(opt.best_value, rel=1e-9, abs=1e-12)


FALL_STUDY = """
robot: walker
sampler: random
parameters:
  controller:
    torso_kp_nm_per_rad: {low: 0.0, high: 200.0}
scenarios:
  - {kind: walk, duration_s: 2.0}
objectives:
  - {metric: cost_of_transport}
"""


@pytest.mark.slow
def test_a_fall_is_the_penalty_with_its_reason(tmp_path):
    """Without the torso PD the passive torso tips over: a failed run, not a crash."""
    study = load_study(write(tmp_path, FALL_STUDY))
    result = evaluate(study, {'controller.torso_kp_nm_per_rad': 0.0})
    assert result.values == (study.objectives[0].penalty,)
    assert result.runs[0]['failure'].startswith('the walker fell (')


def test_shipped_walker_study_is_accepted():
    study = load_study(REPO / 'config' / 'studies' / 'walk_cot.yaml')
    assert study.robot == 'walker'
    assert 'controller.pulse_amplitude_nm[0]' in {p.key for p in study.parameters}
    assert [p.name for p in study.perturbations] == ['terrain=flat',
                                                     'terrain=slope,slope_deg=-3.0']
    # the baseline is the shipped walk
    assert study.values(study.baseline())['controller']['pulse_amplitude_nm'] == \
        WalkerConfig().pulse_amplitude_nm


GOOD = {
    'robot': 'walker',
    'parameters': {'controller': {'pulse_phase[0]': {'low': 0.1, 'high': 0.4}}},
    'scenarios': [{'kind': 'walk', 'duration_s': 2.0}],
    'objectives': [{'metric': 'cost_of_transport'}],
}


def _with(parameters=None, **changes):
    doc = yaml.safe_load(yaml.safe_dump(GOOD))
    if parameters is not None:
        doc['parameters'] = {'controller': parameters}
    doc.update(changes)
    return yaml.safe_dump(doc)


BAD_STUDIES = [
    ('unknown parameter', _with({'pulse_amplitud_nm[0]': {'low': -5.0, 'high': -1.0}}),
     "unknown WalkerConfig parameter 'pulse_amplitud_nm'; did you mean 'pulse_amplitude_nm'"),
    ('unknown scalar parameter', _with({'step_frequency': {'low': 1.0, 'high': 2.0}}),
     "unknown WalkerConfig parameter 'step_frequency'; did you mean 'step_frequency_hz'"),
    ('phase beyond the step', _with({'pulse_phase[0]': {'low': 0.1, 'high': 1.5}}),
     'pulse_phase[0].high = 1.5 is outside the valid values of WalkerConfig.pulse_phase[0]'),
    ('amplitude beyond the motor', _with({'pulse_amplitude_nm[0]': {'low': -30.0,
                                                                    'high': -1.0}}),
     'pulse_amplitude_nm[0].low = -30.0 is outside the valid values of '
     'WalkerConfig.pulse_amplitude_nm[0]'),
    ('index beyond the vector', _with({'pulse_phase[8]': {'low': 0.1, 'high': 0.4}}),
     'index 8 is out of range; WalkerConfig.pulse_phase has 8 elements (0 to 7)'),
    ('a whole vector', _with({'pulse_phase': {'low': 0.1, 'high': 0.4}}),
     'tune its elements as pulse_phase[0], pulse_phase[1]'),
    ('index of a scalar', _with({'step_frequency_hz[0]': {'low': 1.0, 'high': 2.0}}),
     'WalkerConfig.step_frequency_hz is not a vector'),
    ('baseline outside the range', _with({'pulse_phase[0]': {'low': 0.3, 'high': 0.5}}),
     'baseline (trial 0) value 0.26'),
    ('unknown walk option', _with(scenarios=[{'kind': 'walk', 'duraton_s': 2.0}]),
     "unknown option 'duraton_s'; did you mean 'duration_s'"),
    ('hopper metric', _with(objectives=[{'metric': 'apex_x_error_max_m'}]),
     "unknown metric 'apex_x_error_max_m'"),
    ('unknown xacro arg', _with(perturbations={'xacro_args': [{'torso_mass': 6.0}]}),
     "unknown xacro arg(s) ['torso_mass']"),
]


@pytest.mark.parametrize('text, message', [c[1:] for c in BAD_STUDIES],
                         ids=[c[0] for c in BAD_STUDIES])
def test_bad_walker_study_files_are_refused_before_any_trial(tmp_path, capsys, text, message):
    assert_refused_before_any_trial(tmp_path, capsys, text, message)


def test_a_vector_element_and_the_whole_vector_are_not_both_tuned(tmp_path):
    text = _with({'pulse_phase[0]': {'low': 0.1, 'high': 0.4},
                  'pulse_phase': {'choices': [list(WalkerConfig().pulse_phase)]}})
    with pytest.raises(StudyError, match=r'pulse_phase\[0\] and the whole pulse_phase'):
        load_study(write(tmp_path, text))
