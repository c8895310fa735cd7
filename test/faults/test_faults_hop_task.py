# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
A SLIP leg that never leaves the ground fails the run.

Issue 27: "a weak leg with max_torques 5 N*m exited 0 with 0 hops". The rule is the
controller's task outcome (``dodo_control.slip.outcome``): on the ground longer than
``max_stance_s`` without a liftoff. One definition serves the scenarios (offline rollouts) and
the controller node (``dodo hop``); the shipped hopper and boom runs keep passing.
"""
import subprocess
import sys

from conftest import REPO, ros_env
from dodo_control.scenarios import Perturbation
from dodo_sim.model import robot_description_xml
from dodo_sim.ros.params import config_from_file
from dodo_sim.simulator import SimConfig, Simulator
import pytest

HOPPER = REPO / 'urdf' / 'hopper.urdf.xacro'
BOOM = REPO / 'urdf' / 'boom_leg.urdf.xacro'
#: the hopper with its hip and knee torque limited to 5 N*m (URDF effort limits, which the
#: simulator applies): it falls, bounces twice and stays down with the knee folded
WEAK = {'hip_effort': '5.0', 'knee_effort': '5.0'}


def rollout_of(urdf, params_file, duration_s, xacro_args=None):
    from dodo_control.controller import Controller, ControllerConfig
    from dodo_sim.rollout import rollout
    xml = robot_description_xml(urdf, xacro_args)
    sim = Simulator(xml, config_from_file(SimConfig, params_file, 'simulator'))
    ctrl = Controller(xml, config_from_file(ControllerConfig, params_file, 'controller'))
    return rollout(sim, ctrl, duration_s=duration_s)


def test_a_weak_leg_that_stays_on_the_ground_fails_its_task():
    from dodo_control.slip.outcome import judge_rollout
    judge = judge_rollout(rollout_of(HOPPER, REPO / 'config' / 'hop.yaml', 2.0, WEAK))
    assert judge.failure == 'no_liftoff'
    assert 1.0 < judge.failure_time_s < 2.0 and judge.liftoffs <= 2
    assert judge.message().startswith('the leg did not hop: on the ground from t = ')


@pytest.mark.slow
@pytest.mark.parametrize('urdf, params', [(HOPPER, 'hop.yaml'), (BOOM, 'boom.yaml')])
def test_the_shipped_runs_hop_for_10_s(urdf, params):
    """config/hop.yaml (with its push at 6 s) and config/boom.yaml: stances of 0.13-0.14 s."""
    from dodo_control.slip.outcome import HopCriteria, judge_rollout
    judge = judge_rollout(rollout_of(urdf, REPO / 'config' / params, 10.0))
    assert judge.failure is None
    assert judge.liftoffs >= 10
    assert judge.longest_stance_s < 0.2 * HopCriteria().max_stance_s


def test_the_scenarios_fail_a_leg_that_does_not_hop_with_the_same_line():
    """The hopper's hold scenario with the weak leg: the rule dodo hop fails a run with."""
    from dodo_control.scenarios import build_configs, ScenarioFailed
    from dodo_control.scenarios import hopper
    scenario = hopper.SCENARIOS['hold']
    configs = build_configs(hopper.SECTIONS, {})
    with pytest.raises(ScenarioFailed, match='the leg did not hop: on the ground from t = '):
        scenario.run(configs, {**scenario.options, 'duration_s': 2.0},
                     Perturbation('weak', xacro_args=WEAK))


def test_the_controller_node_hosts_the_hop_judge_for_the_slip_controller():
    from dodo_control.registry import controller_entry
    from dodo_control.slip.outcome import HopCriteria, HopMonitor
    from dodo_sim.ros.graph import node, node_parameters, NODES, Robot
    entry = controller_entry('slip_hopper')
    assert entry.monitor_class() is HopMonitor
    assert HopCriteria in entry.parameter_classes()
    # the hop judge reads contact forces only: the graph gives it no terrain parameters
    assert not entry.monitor_judges_ground()
    assert controller_entry('kneed_walker').monitor_judges_ground()
    sloped = (('terrain', 'slope'), ('slope_deg', 5.0))
    hopper = node_parameters(node('controller'), NODES, {}, robot=Robot(terrain=sloped))
    walker = node_parameters(node('controller'), NODES, {},
                             robot=Robot(controller='kneed_walker', terrain=sloped))
    assert 'terrain' not in hopper and walker['terrain'] == 'slope'


@pytest.mark.ros
@pytest.mark.slow
def test_dodo_hop_with_a_leg_too_weak_to_hop_exits_1_saying_why(tmp_path):
    model = tmp_path / 'weak_hopper.urdf'
    model.write_text(robot_description_xml(HOPPER, WEAK))
    proc = subprocess.run(
        [sys.executable, '-m', 'dodo_sim.tools.cli', 'hop', '--model', str(model),
         '--duration', '2', '--bag', str(tmp_path / 'bag'), '--no-plots'],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=ros_env(), cwd=REPO,
        timeout=600)
    output = proc.stdout
    assert proc.returncode == 1, output[-3000:]
    last = [line for line in output.splitlines() if line.startswith('dodo hop: FAILED')]
    assert len(last) == 1 and 'the leg did not hop: on the ground from t = ' in last[0], last
    assert 'without a liftoff (no_liftoff at t = ' in last[0]
    assert 'Traceback' not in output


@pytest.mark.ros
@pytest.mark.slow
def test_dodo_hop_on_emulated_hardware_with_5_nm_motors_exits_1_saying_why(tmp_path):
    """The issue's case: the driver's max_torques 5 N*m, 0 hops, and dodo hop said exit 0."""
    import yaml
    params = yaml.safe_load((REPO / 'config' / 'hop.yaml').read_text())
    params['driver']['ros__parameters']['max_torques'] = [5.0, 5.0]
    path = tmp_path / 'weak.yaml'
    path.write_text(yaml.safe_dump(params, sort_keys=False))
    proc = subprocess.run(
        [sys.executable, '-m', 'dodo_sim.tools.cli', 'hop', '--hardware', 'emulated',
         '--params-file', str(path), '--duration', '3', '--no-plots'],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=ros_env(),
        cwd=tmp_path, timeout=600)
    output = proc.stdout
    assert proc.returncode == 1, output[-3000:]
    last = [line for line in output.splitlines() if line.startswith('dodo hop: FAILED')]
    assert len(last) == 1 and 'the leg did not hop: on the ground from t = ' in last[0], last
