# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
The optimiser's scenarios of a robot that does not hop: UR5 under the joint controller.

``dodo_control.scenarios.ur5`` (docs/joint.md, "Optimisation studies"): the shipped study loads,
its metrics follow the controller's damping, and what the arm cannot take is refused.
"""
from conftest import REPO
from dodo_control.scenarios import build_configs, Perturbation, robot_module
from dodo_sim.tools.optimize_run import evaluate
from dodo_sim.tools.optimize_study import load_study, StudyError
from optimize_support import write
import public_robots as pr
import pytest

pytestmark = pytest.mark.skipif(pr.robots_dir() is None,
                                reason='example-robot-data is not installed')
STUDY = REPO / 'config' / 'studies' / 'ur5_reach.yaml'


def _reach(**controller):
    module = robot_module('ur5')
    scenario = module.SCENARIOS['reach']
    configs = build_configs(module.SECTIONS, {'controller': controller})
    return scenario.run(configs, dict(scenario.options), Perturbation())


def test_reach_settles_exactly_and_underdamped_gains_overshoot():
    """The gain rule (zeta 1) reaches the target; zeta 0.3 overshoots more and settles later."""
    nominal, ringing = _reach(), _reach(damping_ratio=0.3)
    assert nominal['final_error_rad'] < 1e-9
    assert nominal['settle_time_s'] < 0.5 and nominal['overshoot_rad'] < 0.02
    assert ringing['overshoot_rad'] > 5 * nominal['overshoot_rad']
    assert ringing['settle_time_s'] > nominal['settle_time_s']
    assert nominal['peak_torque_ratio'] == pytest.approx(1.0)   # the elbow's 150 N*m limit


def test_shipped_ur5_study_evaluates_its_baseline():
    study = load_study(STUDY)
    assert study.robot == 'ur5' and len(study.scenarios) == 2
    result = evaluate(study, study.baseline())
    assert all('failure' not in run for run in result.runs), result.runs
    assert 0.0 < result.values[0] < 0.5


def test_an_arm_study_with_xacro_args_is_refused(tmp_path):
    text = STUDY.read_text() + 'perturbations:\n  xacro_args:\n    - {body_mass: 8.0}\n'
    with pytest.raises(StudyError, match=r"xacro arg\(s\) \['body_mass'\].*plain URDF"):
        load_study(write(tmp_path, text))
