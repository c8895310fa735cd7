# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
``dodo sim URDF``: any published robot over ROS with one command (issue 30 item 1).

In process: the default rules (contact frames = leaf links named like feet, else leaf links with
a collision shape; start pose = URDF zero, a floating base lifted onto the terrain, a fixed base
bolted with the terrain under its lowest contact) on example-robot-data's Go2, Talos and UR5,
checked against pinocchio's own URDF loader; bad input is one line and exit 2. Over DDS: one
short run of the Go2 under the hold controller gives a bag and plots with the base pose.
"""
from __future__ import annotations

from pathlib import Path
import subprocess
import sys

from conftest import ros_env
from dodo_sim.tools import cli, sim_runner
from dodo_sim.tools.run_checks import UsageError
import numpy as np
import pinocchio as pin
import public_robots as pr
import pytest

pytestmark = pytest.mark.skipif(pr.robots_dir() is None,
                                reason='example-robot-data is not installed')
REPO = Path(__file__).resolve().parents[2]


def _robot(relative: str) -> str:
    return str(pr.robots_dir() / relative)


GO2 = 'go2_description/urdf/go2.urdf'
TALOS = 'talos_data/robots/talos_reduced.urdf'
UR5 = 'ur_description/urdf/ur5_robot.urdf'
#: how far joint_hold lets the UR5's joints move under gravity in 0.5 s, rad: its gravity
#: compensation (docs/joint.md) comes from the same model as the simulator's dynamics, so the arm
#: at rest stays at rest up to rounding (measured 3.9e-17 rad over DDS)
HOLD_TOLERANCE_RAD = 1e-9


def _frame_heights(path: str, q, frames, floating: bool) -> np.ndarray:
    """World z of ``frames`` at ``q`` by pinocchio's URDF loader (not dodo_sim's)."""
    model = (pin.buildModelFromUrdf(path, pin.JointModelFreeFlyer()) if floating
             else pin.buildModelFromUrdf(path))
    data = model.createData()
    pin.framesForwardKinematics(model, data, np.asarray(q))
    return np.array([data.oMf[model.getFrameId(f)].translation[2] for f in frames])


def test_quadruped_defaults_are_its_four_feet_resting_on_the_ground():
    setup = sim_runner.sim_setup(_robot(GO2))
    assert setup.contact_frames == ('FL_foot', 'FR_foot', 'RL_foot', 'RR_foot')
    assert setup.floating_base and setup.terrain_height_m == 0.0
    q = np.array(setup.initial_q)
    model = pin.buildModelFromUrdf(_robot(GO2), pin.JointModelFreeFlyer())
    zero_in_limits = np.clip(0.0, model.lowerPositionLimit[7:], model.upperPositionLimit[7:])
    assert np.array_equal(q[3:7], [0, 0, 0, 1]) and np.array_equal(q[7:], zero_in_limits)
    assert np.count_nonzero(q[7:]) == 4                  # the knees' zero is beyond their stop
    heights = _frame_heights(_robot(GO2), q, setup.contact_frames, floating=True)
    assert abs(heights.min()) < 1e-12 and q[2] > 0.3               # on the ground
    assert 'lifted to z = ' in setup.summary and '4 joints clipped' in setup.summary


def test_biped_defaults_are_its_soles_resting_on_the_ground():
    setup = sim_runner.sim_setup(_robot(TALOS))
    assert setup.contact_frames == ('left_sole_link', 'right_sole_link')
    q = np.array(setup.initial_q)
    heights = _frame_heights(_robot(TALOS), q, setup.contact_frames, floating=True)
    assert np.allclose(heights, 0.0, atol=1e-12)                 # both soles flat on the ground
    assert setup.floating_base and q[2] > 0.9


def test_fixed_base_arm_stays_bolted_with_the_ground_under_its_tool():
    setup = sim_runner.sim_setup(_robot(UR5))
    assert setup.contact_frames == ('ee_link',)          # no foot: the leaf with a shape
    assert not setup.floating_base and not any(setup.initial_q)
    height = _frame_heights(_robot(UR5), setup.initial_q, ['ee_link'], floating=False)[0]
    assert height < 0.0 and setup.terrain_height_m == pytest.approx(height, abs=1e-12)


def test_a_xacro_of_ones_own_loads_with_its_foot_as_default_contact():
    setup = sim_runner.sim_setup(REPO / 'urdf' / 'kneed_walker.urdf.xacro')
    assert setup.contact_frames == ('left_foot', 'right_foot')


def test_given_contact_frames_and_pose_are_kept_and_a_missing_frame_is_refused():
    setup = sim_runner.sim_setup(_robot(GO2), contact_frames=['FL_foot', 'RR_foot'])
    assert setup.contact_frames == ('FL_foot', 'RR_foot')
    with pytest.raises(UsageError, match="no frame 'paw'"):
        sim_runner.sim_setup(_robot(GO2), contact_frames=['paw'])
    with pytest.raises(UsageError, match='nq = 19'):
        sim_runner.sim_setup(_robot(GO2), initial_q=[0.0, 0.0, 0.4])


def test_params_hold_the_derived_setup_and_the_hold_controller():
    import yaml
    setup = sim_runner.sim_setup(_robot(GO2))
    params = yaml.safe_load(sim_runner.params_yaml(setup, hold=True))
    sim = params['simulator']['ros__parameters']
    assert sim['contact_frames'] == list(setup.contact_frames)
    assert sim['initial_q'] == list(setup.initial_q) and sim['collisions'] == 'feet'
    assert params['controller']['ros__parameters']['controller'] == 'joint_hold'
    assert 'controller' not in yaml.safe_load(sim_runner.params_yaml(setup, hold=False))


@pytest.mark.parametrize('argv', [['no/such/robot.urdf'],
                                  [GO2, '--contact-frames', 'paw'],
                                  [GO2, '--params-file', 'x.yaml']])
def test_bad_input_is_one_error_line_and_exit_2(argv, capsys, tmp_path):
    if argv[0] == GO2:
        argv = [_robot(GO2)] + argv[1:]
    assert cli.main(['sim', *argv, '--bag', str(tmp_path / 'b')]) == 2
    err = capsys.readouterr().err
    assert err.startswith('dodo sim: error: ') and err.count('\n') == 1, err
    assert not (tmp_path / 'b').exists()


def test_help_does_not_list_the_options_it_refuses(capsys):
    with pytest.raises(SystemExit) as exited:
        cli.main(['sim', '-h'])
    assert exited.value.code == 0
    out = capsys.readouterr().out
    assert 'robot description' in out
    assert '--params-file PARAMS' not in out and '--model' not in out


@pytest.mark.ros
@pytest.mark.slow
def test_go2_runs_over_ros_with_one_command_bag_and_base_pose_plot(tmp_path):
    bag, plots = tmp_path / 'go2', tmp_path / 'go2_plots'
    proc = subprocess.run([sys.executable, '-m', 'dodo_sim.tools.cli', 'sim', _robot(GO2),
                           '--controller', 'hold', '--duration', '0.5', '--bag', str(bag),
                           '--plots', str(plots), '--wall-timeout', '600'],
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                          env=ros_env(), cwd=REPO, timeout=900)
    assert proc.returncode == 0, proc.stdout[-4000:]
    assert 'dodo sim: contact frames' in proc.stdout and 'lifted to z = ' in proc.stdout
    assert 'controller ready (joint_hold' in proc.stdout, proc.stdout[-4000:]
    assert (bag / 'metadata.yaml').is_file()
    assert (plots / 'base_pose.png').is_file(), sorted(p.name for p in plots.iterdir())


@pytest.mark.ros
@pytest.mark.slow
def test_ur5_arm_runs_over_ros_with_one_command_and_holds_its_pose(tmp_path):
    """
    The docs' fixed-base arm (docs/robots.md, "Run any robot over ROS") over DDS.

    The joint_hold controller holds the derived start pose under gravity: every joint stays
    within HOLD_TOLERANCE_RAD of where it started, as the recorded /joint_states show.
    """
    from dodo_sim.tools.bag import read_bag
    from dodo_sim.tools.bag_arrays import joint_states
    bag = tmp_path / 'ur5'
    proc = subprocess.run([sys.executable, '-m', 'dodo_sim.tools.cli', 'sim', _robot(UR5),
                           '--duration', '0.5', '--bag', str(bag), '--no-plots',
                           '--wall-timeout', '600'],
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                          env=ros_env(), cwd=REPO, timeout=900)
    assert proc.returncode == 0, proc.stdout[-4000:]
    assert 'fixed base' in proc.stdout and 'ee_link' in proc.stdout, proc.stdout[-4000:]
    js = joint_states(read_bag(bag, ['joint_states'])['joint_states'])
    assert len(js.t) == 501 and len(js.names) == 6
    drift = np.abs(js.q - js.q[0]).max()
    assert drift < HOLD_TOLERANCE_RAD, drift
