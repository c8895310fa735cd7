# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
``dodo walk`` over real DDS.

Simulator, controller (hosting the Kneed Walker) and recorder run as separate processes on a
private ROS domain.

* the shipped ``config/walk.yaml`` for 6 s of simulated time: exit 0, a complete bag, at least 8
  steps counted from the recorded ``/left_foot_contact`` and ``/right_foot_contact``, and the
  walker's q in the bag equal, bit for bit, to the offline ``rollout`` of the same parameters
  (the stamped lockstep exchange makes the ROS run the core loop);
* a parameter file that makes it fall (torso PD off): non-zero exit with the fall reason, the bag
  still closed, and the fall in the recorded /controller/state.
"""
import re
import subprocess
import sys

from conftest import REPO, ros_env
from dodo_control.walker.controller import WalkerConfig, WalkerController
from dodo_control.walker.outcome import count_steps, FALL_REASONS, walk
from dodo_sim.rollout import rollout
from dodo_sim.ros import contract
from dodo_sim.ros.params import config_from_file
from dodo_sim.simulator import SimConfig, Simulator
import numpy as np
import pytest

pytestmark = [pytest.mark.ros, pytest.mark.slow]

WALK_YAML = REPO / 'config' / 'walk.yaml'
WALKER_URDF = REPO / 'urdf' / 'kneed_walker.urdf.xacro'
JOINTS = WalkerConfig().joint_names
FEET = ('left_foot', 'right_foot')


def dodo_walk(*args, timeout=900):
    """Run ``dodo walk`` to the end; (exit code, output)."""
    proc = subprocess.run([sys.executable, '-m', 'dodo_sim.tools.cli', 'walk', '--no-plots',
                           *args], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                          env=ros_env(), cwd=REPO, timeout=timeout)
    return proc.returncode, proc.stdout


def recorded(bag):
    """(joint states, contact forces per foot (n, 2, 3), their stamps in s) of a bag."""
    from dodo_sim.tools.bag import read_bag
    from dodo_sim.tools.bag_arrays import joint_states, wrenches
    topics = [contract.JOINT_STATES] + [contract.contact_topic(f) for f in FEET]
    data = read_bag(bag, topics + [contract.CONTROLLER_STATE])
    js = joint_states(data[contract.JOINT_STATES], JOINTS)
    feet = [wrenches(data[contract.contact_topic(f)]) for f in FEET]
    for t, _ in feet:
        np.testing.assert_array_equal(t, js.t)       # one contact message per state
    return js, np.stack([f for _, f in feet], axis=1), data


@pytest.fixture(scope='module')
def walked(tmp_path_factory):
    """``dodo walk`` with the shipped parameters, 6 s simulated (offline: 9 steps)."""
    bag = tmp_path_factory.mktemp('walk') / 'bag'
    duration = 6.0
    code, output = dodo_walk('--duration', str(duration), '--bag', str(bag),
                             '--wall-timeout', '800')
    return code, output, bag, duration


def test_dodo_walk_exits_0_with_a_complete_bag(walked):
    code, output, bag, duration = walked
    assert code == 0, output[-4000:]
    from dodo_sim.tools.bag import message_counts
    counts = message_counts(bag)
    ticks = int(round(duration / 0.001))
    for topic in (contract.CLOCK, contract.JOINT_STATES, 'left_foot_contact',
                  'right_foot_contact', contract.JOINT_COMMANDS):
        assert counts[topic] == ticks + 1, (topic, counts)
    # telemetry at the controller's state_period (default 10 ms of simulated time)
    assert counts[contract.CONTROLLER_STATE] == ticks // 10 + 1, counts
    assert contract.FOOT_CONTACT not in counts
    assert f'dodo walk: bag: {bag.resolve()} (closed)' in output


def test_steps_from_the_recorded_feet_match_the_summary(walked):
    code, output, bag, _ = walked
    js, forces, _ = recorded(bag)
    in_contact = np.any(forces != 0.0, axis=2)
    ticks, feet = count_steps(in_contact, js.t)
    assert len(ticks) >= 8, ticks
    assert np.all(np.diff(feet) != 0)                        # left, right, left, ...
    assert np.all(np.diff(js.q[list(ticks), 0]) > 0.2)        # each step moves the hip on
    line = re.search(r'dodo walk: walked (\d+) steps, ([\d.]+) m, speed ([\d.]+) m/s', output)
    assert line, output[-3000:]
    assert int(line.group(1)) == len(ticks)
    assert float(line.group(2)) == pytest.approx(js.q[-1, 0] - js.q[0, 0], abs=1e-3)
    assert float(line.group(3)) > 0.5


def test_recorded_walk_equals_the_offline_rollout_bit_for_bit(walked):
    code, output, bag, duration = walked
    js, forces, _ = recorded(bag)
    sim = Simulator(WALKER_URDF, config_from_file(SimConfig, WALK_YAML, 'simulator'))
    ctrl = WalkerController(config_from_file(WalkerConfig, WALK_YAML, 'controller'))
    run = rollout(sim, ctrl, steps=int(round(duration / sim.config.control_period)))
    assert js.q.shape == run.q.shape
    np.testing.assert_array_equal(js.q, run.q)
    np.testing.assert_array_equal(js.v, run.v)
    np.testing.assert_array_equal(forces, run.contact_forces)
    np.testing.assert_array_equal(js.effort[1:, 3:], run.tau)    # applied = commanded


def test_walk_plots_from_the_recorded_bag(walked, tmp_path):
    """
    ``dodo plot`` (what dodo walk runs) draws the walker from its bag.

    The figures show every joint, both feet, the four actuated joints' torques and the walk
    monitor's outcome.
    """
    from dodo_sim.tools.plot import plot_bag, PlotConfig
    from dodo_sim.tools.plot_data import load_run
    code, output, bag, _ = walked
    run = load_run(bag)
    assert run.joint_names == JOINTS and run.contact_frames == FEET
    assert run.cmd.shape[1] == 4 and len(run.cmd) >= len(run.t) - 1
    written = plot_bag(bag, tmp_path / 'plots', PlotConfig(animation=False))
    assert sorted(p.name for p in written) == sorted([
        'trajectory.png', 'joint_positions.png', 'joint_velocities.png', 'torques.png',
        'contact_forces.png', 'cog_velocity.png', 'walk.png'])
    assert all(p.stat().st_size > 10_000 for p in written)


@pytest.fixture(scope='module')
def fell(tmp_path_factory):
    """``dodo walk`` with the torso PD off: the torso topples (offline: torso_pitch at 0.111 s)."""
    tmp = tmp_path_factory.mktemp('fall')
    params = tmp / 'fall.yaml'
    params.write_text(WALK_YAML.read_text().replace(
        '    torso_kp_nm_per_rad: 140.0\n    torso_kd_nms_per_rad: 18.0\n',
        '    torso_kp_nm_per_rad: 0.0\n    torso_kd_nms_per_rad: 0.0\n'))
    assert 'torso_kp_nm_per_rad: 0.0' in params.read_text()
    bag = tmp / 'bag'
    code, output = dodo_walk('--params-file', str(params), '--duration', '0.5', '--bag',
                             str(bag), '--wall-timeout', '400')
    return code, output, bag, params


def test_a_fall_is_a_non_zero_exit_with_the_reason(fell):
    code, output, bag, params = fell
    sim = Simulator(WALKER_URDF, config_from_file(SimConfig, params, 'simulator'))
    offline = walk(sim, WalkerController(config_from_file(WalkerConfig, params, 'controller')),
                   duration_s=0.5)
    assert offline.fell and offline.fall_reason == 'torso_pitch'
    assert code == 1, output[-4000:]
    assert (f'the robot fell: torso_pitch at t = {offline.fall_time_s:.3f} s'
            in output), output[-4000:]
    assert 'FELL: torso_pitch' in output
    assert (bag / 'metadata.yaml').is_file()                  # the bag was closed all the same


def test_the_fall_is_in_the_recorded_controller_state(fell):
    code, output, bag, params = fell
    from dodo_sim.tools.bag_arrays import named_values
    _, _, data = recorded(bag)
    t, values = named_values(data[contract.CONTROLLER_STATE])
    fallen = values['fallen']
    first = int(np.argmax(fallen == 1.0))
    assert fallen[0] == 0.0 and fallen[-1] == 1.0 and np.all(fallen[first:] == 1.0)
    assert np.all(values['fall_reason'][first:] == FALL_REASONS.index('torso_pitch'))
