# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
``dodo replay --through-controller`` rebuilds the recorded controller.

It builds it through ``dodo_control.registry`` (the controller node's ``controller`` parameter): a
``dodo walk`` bag (Kneed Walker) and a ``dodo hop --params-file config/boom.yaml`` bag
(boom-mounted leg) replay with |Δτ| = 0 from the bag alone, over real DDS; so does a ``dodo hop
--params-file config/hold.yaml`` bag (the joint controller of any robot on the hopper).
"""
from __future__ import annotations

from pathlib import Path
import subprocess
import sys

from conftest import ros_env
from dodo_sim.tools import bag as bagio
from dodo_sim.tools import bag_parameters
from dodo_sim.tools.replay import main as replay_main
from dodo_sim.tools.replay_check import compare_with_controller, controller_setup
import pytest

REPO = Path(__file__).resolve().parents[2]
DURATION_S = 2.0


def _dodo(*args, timeout=900):
    proc = subprocess.run([sys.executable, '-m', 'dodo_sim.tools.cli', *args, '--no-plots',
                           '--wall-timeout', '600'], stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True, env=ros_env(), cwd=REPO,
                          timeout=timeout)
    return proc.returncode, proc.stdout


def _replays_exactly(bag, controller: str, capsys, duration_s: float = DURATION_S):
    result = compare_with_controller(bag)
    print('dodo replay:', result.summary())
    assert result.controller == controller, result.summary()
    assert 'recorded' in result.config_source, result.summary()
    assert result.source == 'joint_commands', result.summary()
    assert result.unmatched_states == 0, result.summary()
    assert result.compared >= duration_s / 0.001 - 1, result.summary()
    assert result.max_abs_nm == 0.0, result.summary()
    assert replay_main([str(bag), '--through-controller']) == 0
    out = capsys.readouterr().out
    assert 'max |dtau| = 0.000e+00' in out and f'controller {controller}' in out, out


@pytest.mark.ros
@pytest.mark.slow
def test_walk_bag_replays_through_the_kneed_walker_exactly(tmp_path, capsys):
    bag = tmp_path / 'walk'
    code, output = _dodo('walk', '--duration', str(DURATION_S), '--bag', str(bag))
    assert code == 0, output[-4000:]
    data = bagio.read_bag(bag, ['parameter_events'])
    initial = bag_parameters.node_parameters(data, 'controller').initial
    assert initial['controller'] == 'kneed_walker'
    _replays_exactly(bag, 'kneed_walker', capsys)


@pytest.mark.ros
@pytest.mark.slow
def test_boom_bag_replays_through_the_slip_controller_exactly(tmp_path, capsys):
    bag = tmp_path / 'boom'
    code, output = _dodo('hop', '--params-file', str(REPO / 'config' / 'boom.yaml'),
                         '--duration', str(DURATION_S), '--bag', str(bag))
    assert code == 0, output[-4000:]
    _replays_exactly(bag, 'slip_hopper', capsys)


@pytest.mark.ros
@pytest.mark.slow
def test_hold_params_file_runs_joint_hold_over_ros_and_its_bag_replays_exactly(tmp_path, capsys):
    """
    ``controller: joint_hold`` in a params file: the registry path end to end.

    ``dodo hop --params-file config/hold.yaml`` (the shipped hopper standing under the joint
    controller of any robot) exits 0; the bag replays through it with |dtau| = 0.
    """
    bag = tmp_path / 'hold'
    duration_s = 0.5
    code, output = _dodo('hop', '--params-file', str(REPO / 'config' / 'hold.yaml'),
                         '--duration', str(duration_s), '--bag', str(bag))
    assert code == 0, output[-4000:]
    assert 'controller ready (joint_hold' in output, output[-4000:]
    _replays_exactly(bag, 'joint_hold', capsys, duration_s)


def test_a_bag_without_the_controller_parameter_replays_the_slip_hopper():
    """Bags recorded before the registry: no ``controller`` parameter -> slip_hopper."""
    from dodo_control.slip.config import ControllerConfig
    setup = controller_setup({})
    assert setup.entry.name == 'slip_hopper'
    assert isinstance(setup.config, ControllerConfig)


def test_a_params_file_override_chooses_its_controller():
    from dodo_control.walker.controller import WalkerConfig
    setup = controller_setup({}, params_file=REPO / 'config' / 'walk.yaml')
    assert setup.entry.name == 'kneed_walker' and isinstance(setup.config, WalkerConfig)
