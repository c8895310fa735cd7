# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
``dodo plot`` of robots nobody here modelled, from bags of in-process runs (no DDS).

A floating-base quadruped (Solo-12 of example-robot-data, standing under the joint controller
after a 2 cm drop) with its base pose from ``odom``, from ``/tf`` only, or not recorded; a
fixed-base arm (UR5) tracking a set-point; the hopper's figures unchanged; a damaged bag refused
with one line.
"""
from __future__ import annotations

import shutil
import struct

from dodo_control.joint import JointController, JointControllerConfig
from dodo_sim.rollout import rollout
from dodo_sim.simulator import SimConfig, Simulator
from dodo_sim.tools.bag_writer import OfflineBagWriter
from dodo_sim.tools.plot import main, plot_bag, PlotConfig
from dodo_sim.tools.plot_data import load_run
import numpy as np
from PIL import Image
import pinocchio as pin
import public_robots as pr
import pytest
from robot_bags import write_rollout_bag

pytestmark = pytest.mark.skipif(pr.robots_dir() is None,
                                reason='example-robot-data is not installed')

GENERAL = ('trajectory.png', 'joint_positions.png', 'joint_velocities.png', 'torques.png',
           'contact_forces.png', 'cog_velocity.png')
BASE = ('base_pose.png', 'base_twist.png')
OPTIONS = PlotConfig(fps=10.0, mp4=False)


def _solo_run(duration_s=0.4):
    sim = Simulator(pr.solo12(), SimConfig(contact_frames=pr.SOLO_FEET, collisions='feet'))
    sim.reset(pr.standing_pose(sim, pr.SOLO_STAND_LEGS, gap_m=0.02))
    config = JointControllerConfig(contact_frames=pr.SOLO_FEET)
    return sim, rollout(sim, JointController(pr.solo12(), config), duration_s=duration_s), config


@pytest.fixture(scope='module')
def solo(tmp_path_factory):
    """(sim, run, bag dir) of Solo-12 with the ground-truth odom recorded every 10 ms."""
    sim, run, config = _solo_run()
    bag = write_rollout_bag(tmp_path_factory.mktemp('solo') / 'bag', sim, run,
                            controller_config=config)
    return sim, run, bag


def _names(paths):
    return sorted(p.name for p in paths)


def _is_real_png(path):
    assert path.is_file() and path.stat().st_size > 1000, path
    with Image.open(path) as image:
        assert image.format == 'PNG'
        assert np.asarray(image.convert('L'), dtype=float).std() > 1.0, f'{path.name} is blank'


def test_dodo_plot_draws_a_floating_base_bag_with_its_base_pose(solo, tmp_path, capsys):
    """
    The free flyer is not in /joint_states: the plot takes the base from odom (exit 0).

    (The 3-D animation: test_a_fixed_base_arm_is_plotted_in_3d_without_base_figures.)
    """
    _, _, bag = solo
    out = tmp_path / 'plots'
    assert main([str(bag), '--out', str(out), '--no-animation']) == 0
    written = sorted(p.name for p in out.iterdir())
    assert written == sorted(GENERAL + BASE), written
    for name in GENERAL + BASE:
        _is_real_png(out / name)
    assert str(out / 'base_pose.png') in capsys.readouterr().out


def test_floating_base_kinematics_follow_the_recorded_odometry(solo):
    """
    The CoG and feet come from the joints and the odom pose.

    Exactly at the odom stamps, within the interpolation's error between them; the base pose
    figure's samples are odom's.
    """
    sim, run, bag = solo
    data = load_run(bag)
    assert data.floating_base and data.three_d and data.base_motion.source == 'odom'
    assert len(data.joint_names) == 12 and 'root_joint' not in data.joint_names
    model, pdata = sim.robot.model, sim.robot.create_data()
    com = np.array([pin.centerOfMass(model, pdata, q) for q in run.q])
    on_odom = np.arange(0, len(run.t), 10)                  # odom every 10 ms at 1 kHz
    np.testing.assert_allclose(data.com[on_odom], com[on_odom], atol=1e-9)
    assert np.abs(data.com - com).max() < 1e-3
    np.testing.assert_allclose(data.base_motion.position, run.q[on_odom, :3], atol=1e-12)
    assert run.q[:, 2].max() - run.q[:, 2].min() > 0.01    # the base did move
    foot = sim.robot.contact_frame_ids[0]
    pin.framesForwardKinematics(model, pdata, run.q[-1])
    np.testing.assert_allclose(data.contact_pos[pr.SOLO_FEET[0]][-1],
                               pdata.oMf[foot].translation, atol=1e-9)


def test_base_pose_from_tf_when_odom_was_not_recorded(tmp_path):
    """Only the recorder's odom -> root link transforms: the pose exact at their stamps."""
    sim, run, config = _solo_run(0.2)
    bag = write_rollout_bag(tmp_path / 'tf', sim, run, controller_config=config,
                            base_source='tf')
    data = load_run(bag)
    assert data.base_motion.source == 'tf'
    np.testing.assert_allclose(data.base_motion.position, run.q[::10, :3], atol=1e-12)
    np.testing.assert_allclose(data.base_motion.orientation_xyzw, run.q[::10, 3:7], atol=1e-12)
    model, pdata = sim.robot.model, sim.robot.create_data()
    com = np.array([pin.centerOfMass(model, pdata, q) for q in run.q[::10]])
    np.testing.assert_allclose(data.com[::10], com, atol=1e-9)


def test_without_any_base_pose_the_robot_is_drawn_in_its_base_frame(tmp_path):
    """No odom, no /tf (a hardware bag): the joints alone, the base at the origin."""
    sim, run, config = _solo_run(0.2)
    bag = write_rollout_bag(tmp_path / 'none', sim, run, controller_config=config,
                            base_source=None)
    data = load_run(bag)
    assert data.floating_base and data.base_motion is None
    root = sim.robot.model.getFrameId(sim.robot.root_link)
    model, pdata = sim.robot.model, sim.robot.create_data()
    q = run.q[-1].copy()
    q[:7] = [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0]
    pin.framesForwardKinematics(model, pdata, q)
    np.testing.assert_allclose(data.contact_pos[pr.SOLO_FEET[0]][-1],
                               pdata.oMf[sim.robot.contact_frame_ids[0]].translation,
                               atol=1e-9)
    assert np.allclose(pdata.oMf[root].translation, 0.0)


def test_a_fixed_base_arm_is_plotted_in_3d_without_base_figures(tmp_path):
    """UR5 (root link 'world') in the air, tracking a set-point of its elbow."""
    sim = Simulator(pr.robots_dir() / 'ur_description/urdf/ur5_robot.urdf',
                    SimConfig(contact_frames=('tool0',), collisions='feet',
                              terrain_height_m=-10.0))
    sim.reset([0.0, -1.0, 1.0, 0.0, 0.0, 0.0])
    config = JointControllerConfig(contact_frames=('tool0',), target_joints=('elbow_joint',),
                                   target_positions=(2.0,))
    run = rollout(sim, JointController(sim.robot.urdf_xml, config), duration_s=0.5)
    bag = write_rollout_bag(tmp_path / 'ur5', sim, run, controller_config=config)
    data = load_run(bag)
    assert not data.floating_base and data.three_d and data.base_motion is None
    out = tmp_path / 'plots'
    written = _names(plot_bag(bag, out, OPTIONS))
    assert written == sorted(GENERAL + ('robot.gif',)), written
    with Image.open(out / 'robot.gif') as gif:
        assert gif.size == (480, 400)          # the 3-D view (the side view is 480 x 320)
        frames = []
        for i in (0, gif.n_frames - 1):
            gif.seek(i)
            frames.append(np.asarray(gif.convert('L'), dtype=float))
    assert np.abs(frames[0] - frames[1]).mean() > 0.1      # the arm moved


def test_the_hopper_bag_gives_the_same_figures_as_before(tmp_path):
    """A planar robot keeps its names, count and side view (the figures of main)."""
    from test_plot import _write_synthetic
    bag = _write_synthetic(tmp_path / 'hop')
    out = tmp_path / 'plots'
    written = _names(plot_bag(bag, out, OPTIONS))
    assert written == sorted(['trajectory.png', 'joint_positions.png', 'joint_velocities.png',
                              'torques.png', 'contact_forces.png', 'cog_velocity.png',
                              'cog_x.png', 'angle_of_attack.png', 'apex_heights.png',
                              'phase.png', 'robot.gif'])
    with Image.open(out / 'robot.gif') as gif:
        assert gif.size == (480, 320)
    assert not load_run(bag).three_d


def _corrupt_chunk_index(bag):
    """Add 1000 to the uncompressed size the summary's first chunk index gives its chunk."""
    mcap = next(bag.glob('*.mcap'))
    data = bytearray(mcap.read_bytes())
    pos = 8                                    # after the magic: op (1), length (8), body
    while pos < len(data) - 8:
        op, length = data[pos], struct.unpack_from('<Q', data, pos + 1)[0]
        if op == 0x08:                         # ChunkIndex: uncompressed_size is its last field
            end = pos + 9 + length
            struct.pack_into('<Q', data, end - 8, struct.unpack_from('<Q', data, end - 8)[0]
                             + 1000)
            mcap.write_bytes(bytes(data))
            return
        pos += 9 + length
    raise AssertionError('no chunk index in the bag')


def test_a_chunk_size_mismatch_is_one_line_and_exit_2(tmp_path, capsys):
    bag = tmp_path / 'bad'
    with OfflineBagWriter(bag) as w:
        for k in range(100):
            w.step(k * 1e-3, [0.0, 1.0, 0.2, -0.4], np.zeros(4), np.zeros(4), [0.0, 0.0])
    shutil.copytree(bag, tmp_path / 'good')
    _corrupt_chunk_index(bag)
    assert main([str(bag), '--out', str(tmp_path / 'plots'), '--no-animation']) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith('dodo plot: error: '), err
    assert 'damaged' in err[0] and 'Chunk size mismatch' in err[0] and 'Traceback' not in err[0]
    assert main([str(tmp_path / 'good'), '--out', str(tmp_path / 'plots'),
                 '--no-animation']) == 0
