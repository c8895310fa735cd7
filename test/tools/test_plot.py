# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
``dodo plot`` on synthetic bags written with rosbags (no DDS).

The hopper with its SLIP channels, and a robot the plots know nothing about (the Kneed Walker:
seven joints, two feet).
"""
from __future__ import annotations

from dodo_sim.tools.bag_writer import OfflineBagWriter
from dodo_sim.tools.plot import ffmpeg_path, frame_indices, main, plot_bag, PlotConfig
from dodo_sim.tools.plot_data import apexes, load_run
import numpy as np
from PIL import Image
import pytest

DURATION_S = 2.0
HOP_PERIOD_S = 0.5
GENERAL = ('trajectory.png', 'joint_positions.png', 'joint_velocities.png', 'torques.png',
           'contact_forces.png', 'cog_velocity.png')
SLIP = ('cog_x.png', 'angle_of_attack.png', 'apex_heights.png', 'phase.png')
FIGURES = GENERAL + SLIP


def _write_synthetic(path, with_state=True):
    """
    Write a synthetic hopper bag: base bouncing z = 1.1 - 0.1 cos(2 pi t / 0.5).

    The apexes are 1.2 m at t = 0.25 + k 0.5; the base moves at 0.4 m/s, the leg joints are fixed
    (so the CoG moves with the base), and the foot force is on near the bottoms. Returns ``path``.
    """
    n = int(round(DURATION_S * 1000)) + 1
    omega = 2 * np.pi / HOP_PERIOD_S
    with OfflineBagWriter(path) as w:
        for k in range(n):
            t = k * 1e-3
            z, vz = 1.1 - 0.1 * np.cos(omega * t), 0.1 * omega * np.sin(omega * t)
            q = [0.4 * t, z, 0.2, -0.4]
            v = [0.4, vz, 0.0, 0.0]
            phase_in_hop = (t % HOP_PERIOD_S)
            stance = phase_in_hop < 0.05 or phase_in_hop > HOP_PERIOD_S - 0.05
            force = [5.0, 300.0] if stance else [0.0, 0.0]
            tau = [np.sin(t), np.cos(t)]
            w.step(t, q, v, [0.0, 0.0, *tau], force)
            w.command(t, tau)
            if with_state:
                w.controller_state(t, ['phase', 'angle_of_attack_rad', 'apex_height',
                                       'target_x', 'tau_hip', 'tau_knee'],
                                   [float(stance), 0.1 * np.sin(t), 1.2, 1.0, *tau])
    return path


@pytest.fixture(scope='module')
def synthetic_bag(tmp_path_factory):
    return _write_synthetic(tmp_path_factory.mktemp('plot') / 'bag')


def _is_real_png(path):
    assert path.is_file() and path.stat().st_size > 1000, path
    with Image.open(path) as image:
        assert image.format == 'PNG'
        pixels = np.asarray(image.convert('L'), dtype=float)
    assert pixels.std() > 1.0, f'{path.name} is blank'


def test_plot_bag_writes_every_figure_and_an_animation(synthetic_bag, tmp_path):
    out = tmp_path / 'plots'
    written = plot_bag(synthetic_bag, out, PlotConfig(fps=25.0))
    names = {p.name for p in written}
    assert set(FIGURES) | {'robot.gif'} <= names
    for name in FIGURES:
        _is_real_png(out / name)
    with Image.open(out / 'robot.gif') as gif:
        assert gif.n_frames == int(DURATION_S * 25) + 1
        first = np.asarray(gif.convert('L'), dtype=float)
        gif.seek(gif.n_frames - 1)
        last = np.asarray(gif.convert('L'), dtype=float)
    assert np.abs(first - last).mean() > 0.1  # the leg moved between the first and last frame


def test_mp4_is_written_with_the_packaged_ffmpeg(synthetic_bag, tmp_path):
    """
    robot.mp4 through the ffmpeg of imageio-ffmpeg (a requirement) when none is on PATH.

    The file is a real MP4 with one frame per sampled time (read back with that ffmpeg).
    """
    import subprocess
    exe = ffmpeg_path()
    assert exe is not None, 'no ffmpeg: imageio-ffmpeg is in requirements.txt'
    out = tmp_path / 'plots'
    written = {p.name for p in plot_bag(synthetic_bag, out, PlotConfig(fps=10.0))}
    assert 'robot.mp4' in written
    data = (out / 'robot.mp4').read_bytes()
    assert data[4:8] == b'ftyp'
    probe = subprocess.run([exe, '-i', str(out / 'robot.mp4'), '-map', '0:v:0', '-c', 'copy',
                            '-f', 'null', '-'], capture_output=True, text=True, timeout=120)
    frames = [line for line in probe.stderr.splitlines() if line.startswith('frame=')]
    assert frames and int(frames[-1].split('=')[1].split()[0]) == int(DURATION_S * 10) + 1


def test_apexes_and_kinematics_of_the_synthetic_run(synthetic_bag):
    run = load_run(synthetic_bag)
    t, z = apexes(run, threshold_n=1.0)
    np.testing.assert_allclose(t, np.arange(0.25, DURATION_S, HOP_PERIOD_S), atol=1.5e-3)
    np.testing.assert_allclose(z, 1.2, atol=1e-5)
    # fixed leg joints: CoG moves rigidly with the base; the foot is below the hip
    np.testing.assert_allclose(run.com[:, [0, 2]] - run.com[0, [0, 2]],
                               run.q[:, :2] - run.q[0, :2], atol=1e-9)
    np.testing.assert_allclose(run.com_vel[:, [0, 2]], run.v[:, :2], atol=1e-9)
    assert np.all(run.foot[:, 1] < run.q[:, 1] - 0.5)
    assert run.cmd.shape == (len(run.t), 2)
    assert run.joint_names == ('base_x', 'base_z', 'hip', 'knee')
    assert run.joint_units == ('m', 'm', 'rad', 'rad')
    assert run.base_name == 'body' and run.contact_frames == ('foot',)


def test_without_controller_state_phase_comes_from_the_foot_force(tmp_path):
    bag = _write_synthetic(tmp_path / 'bag', with_state=False)
    out = tmp_path / 'plots'
    written = {p.name for p in plot_bag(bag, out, PlotConfig(animation=False))}
    assert set(GENERAL) <= written and not set(SLIP) & written and 'robot.gif' not in written
    t, z = apexes(load_run(bag), threshold_n=1.0)
    assert len(t) == 4


# ---- a robot the plots know nothing about ------------------------------

def _walker_bag(path):
    """
    Kneed Walker (docs/robots.md): torso moving forward at 0.5 m/s, legs swinging in antiphase.

    Each foot is loaded while its leg is behind the hip.
    """
    from dodo_sim.paths import default_urdf_path
    from dodo_sim.physics.robot import load_robot, robot_description_xml
    xml = robot_description_xml(default_urdf_path().parent / 'kneed_walker.urdf.xacro')
    robot = load_robot(xml, contact_frames=('left_foot', 'right_foot'))
    names = robot.joint_names
    with OfflineBagWriter(path) as w:
        w.robot_description(xml)
        for k in range(1001):
            t = k * 1e-3
            swing = 0.4 * np.sin(2 * np.pi * t)
            q = dict(zip(names, robot.default_q))
            q.update(base_x=0.5 * t, left_hip=swing, right_hip=-swing, left_knee=0.0,
                     right_knee=0.0)
            forces = [[0.0, 0.0, 200.0 if swing < 0 else 0.0],
                      [0.0, 0.0, 200.0 if swing >= 0 else 0.0]]
            w.step(t, [q[n] for n in names], np.zeros(len(names)), np.zeros(len(names)),
                   forces, names=names, contact_frames=('left_foot', 'right_foot'))
            w.joint_command(t, robot.actuated_joint_names, np.full(4, np.cos(t)))
    return path, robot


def test_plots_of_a_robot_with_two_feet_and_seven_joints(tmp_path):
    bag, robot = _walker_bag(tmp_path / 'walker')
    run = load_run(bag)
    assert run.joint_names == robot.joint_names
    assert run.cmd_names == robot.actuated_joint_names and run.cmd.shape == (1001, 4)
    assert run.contact_frames == ('left_foot', 'right_foot')
    # the feet are where pinocchio puts them (the legs swing in antiphase)
    np.testing.assert_allclose(run.contact_pos['left_foot'][:, 0] - run.base[:, 0],
                               -(run.contact_pos['right_foot'][:, 0] - run.base[:, 0]),
                               atol=1e-9)
    assert {('torso', 'left_thigh'), ('left_shank', 'left_foot')} <= set(run.segments)
    out = tmp_path / 'plots'
    written = {p.name for p in plot_bag(bag, out, PlotConfig(fps=10.0, mp4=False))}
    assert set(GENERAL) | {'robot.gif'} <= written and not set(SLIP) & written
    for name in GENERAL:
        _is_real_png(out / name)
    with Image.open(out / 'robot.gif') as gif:
        assert gif.n_frames == 11
        frames = []
        for i in (0, 2):
            gif.seek(i)
            frames.append(np.asarray(gif.convert('L'), dtype=float))
    assert np.abs(frames[0] - frames[1]).mean() > 0.1


def test_frame_indices_follow_sim_time_and_cap():
    t = np.arange(0, 10.001, 0.001)
    idx = frame_indices(t, fps=25.0, max_frames=1000)
    assert len(idx) == 251 and idx[0] == 0 and idx[-1] == len(t) - 1
    np.testing.assert_allclose(np.diff(t[idx]), 0.04, atol=1e-3)
    assert len(frame_indices(t, fps=25.0, max_frames=50)) == 50


def test_cli(synthetic_bag, tmp_path, capsys):
    out = tmp_path / 'cli'
    assert main([str(synthetic_bag), '--out', str(out), '--no-animation']) == 0
    printed = capsys.readouterr().out.split()
    assert str(out / 'trajectory.png') in printed and not (out / 'leg.gif').exists()
    assert main([str(tmp_path / 'missing'), '--out', str(out)]) == 2
    assert 'not a rosbag2 bag' in capsys.readouterr().err


# ---- the boom-mounted leg in its task frame ----------------------------

def test_boom_leg_is_drawn_in_its_task_frame(tmp_path):
    """
    Boom turning at 0.5 rad/s, pitch oscillating.

    The plotted "CoG" and base are the hip in the task frame: horizontal R·ψ (independent of the
    pitch), vertical its world height.
    """
    from dodo_control.slip.task_frame import load_dynamics
    from dodo_sim.paths import default_urdf_path
    from dodo_sim.physics.robot import robot_description_xml
    import pinocchio as pin
    xml = robot_description_xml(default_urdf_path().parent / 'boom_leg.urdf.xacro')
    _, dyn = load_dynamics(xml)
    names = dyn.joint_names
    bag = tmp_path / 'boom'
    with OfflineBagWriter(bag) as w:
        w.robot_description(xml)
        for k in range(501):
            t = k * 1e-3
            q = [0.5 * t, 0.05 * np.sin(8.0 * t), -1.0, 1.5]
            v = [0.5, 0.4 * np.cos(8.0 * t), 0.0, 0.0]
            w.step(t, q, v, np.zeros(4), [[0.0, 0.0, 0.0]], names=names,
                   contact_frames=('foot',))
    run = load_run(bag)
    assert run.horizontal == 'arc' and run.com_name == 'hip (SLIP point)'
    np.testing.assert_allclose(run.com[:, 0], dyn.radius_m * 0.5 * run.t, atol=1e-9)
    heights = [dyn.base_height(q) for q in run.q]
    np.testing.assert_allclose(run.com[:, 2], heights, atol=1e-9)
    np.testing.assert_allclose(run.base, run.com, atol=0.0)
    np.testing.assert_allclose(run.com_vel[:, 0], dyn.radius_m * 0.5, atol=1e-9)
    # the foot in the same frame: its world height, and the task map of its world position
    data = dyn.model.createData()
    i = 250
    pin.framesForwardKinematics(dyn.model, data, run.q[i])
    foot_world = data.oMf[dyn.model.getFrameId('foot')].translation
    np.testing.assert_allclose(run.contact_pos['foot'][i, [0, 2]],
                               dyn.task_coordinates(run.q[i, 0], foot_world), atol=1e-9)
    assert run.segments and {seg[0] for seg in run.segments} <= {'thigh', 'shank'}, run.segments
    out = tmp_path / 'plots'
    written = {p.name for p in plot_bag(bag, out, PlotConfig(fps=10.0, mp4=False))}
    assert set(GENERAL) | {'robot.gif'} <= written
    _is_real_png(out / 'trajectory.png')


# -- sensors: the IMU and the joint sensors' errors (issue 30) --------------------------------

JOINTS = ('base_x', 'base_z', 'hip', 'knee')
POSITION_OFFSET = np.array([0.0, 0.002, -0.01, 0.03])      # measured - true, m or rad


def _write_with_sensors(path, imu=True, truth=True):
    """
    Write a hopper bag of 0.2 s with a noisy IMU and encoders and their ground truth.

    Measured joints are the truth plus POSITION_OFFSET; the truth is recorded every step, the
    measurement from t = 5 ms on (the first steps are lost); the IMU reads +g plus a known
    ramp, its truth +g.
    """
    with OfflineBagWriter(path) as w:
        for k in range(201):
            t = k * 1e-3
            q_true, v_true = np.array([0.1 * t, 1.0, 0.2, -0.4]), np.array([0.1, 0.0, 0.0, 0.0])
            if truth:
                w.joint_state(t, q_true, v_true, names=JOINTS, topic='ground_truth/joint_states')
            if k >= 5:
                w.step(t, q_true + POSITION_OFFSET, v_true + 0.5, np.zeros(4), [0.0, 0.0])
            if imu:
                w.imu(t, 'body', (0, 0, 0, 1), (0.0, 0.01 * k, 0.0), (0.0, 0.0, 9.81 + 0.001 * k))
                if truth:
                    w.imu(t, 'body', (0, 0, 0, 1), (0, 0, 0), (0, 0, 9.81),
                          topic='ground_truth/imu')
    return path


def test_the_imu_and_its_ground_truth_are_read_from_the_bag(tmp_path):
    run = load_run(_write_with_sensors(tmp_path / 'bag'))
    assert run.imu.frame_id == 'body' and len(run.imu.t) == 201
    np.testing.assert_allclose(run.imu.linear_acceleration[:, 2], 9.81 + 0.001 * np.arange(201))
    np.testing.assert_allclose(run.imu.angular_velocity[:, 1], 0.01 * np.arange(201))
    np.testing.assert_array_equal(run.imu_truth.linear_acceleration[:, 2], 9.81)
    np.testing.assert_array_equal(run.imu.orientation_xyzw, np.tile([0, 0, 0, 1], (201, 1)))


def test_sensor_errors_are_measured_minus_true_at_equal_stamps(tmp_path):
    from dodo_sim.tools.plot_data import sensor_errors
    run = load_run(_write_with_sensors(tmp_path / 'bag'))
    errors = sensor_errors(run)
    np.testing.assert_allclose(errors.t, np.arange(5, 201) * 1e-3)     # both hold these
    np.testing.assert_allclose(errors.q, np.tile(POSITION_OFFSET, (196, 1)), atol=1e-15)
    np.testing.assert_allclose(errors.v, 0.5)


def test_sensor_figures_are_drawn_when_the_bag_has_sensors(tmp_path):
    written = plot_bag(_write_with_sensors(tmp_path / 'bag'), tmp_path / 'plots',
                       PlotConfig(animation=False))
    names = {p.name for p in written}
    assert {'imu.png', 'sensor_errors.png'} <= names
    _is_real_png(tmp_path / 'plots' / 'imu.png')
    _is_real_png(tmp_path / 'plots' / 'sensor_errors.png')


def test_no_sensor_figures_without_sensor_topics(tmp_path):
    written = plot_bag(_write_with_sensors(tmp_path / 'bag', imu=False, truth=False),
                       tmp_path / 'plots', PlotConfig(animation=False))
    assert not {'imu.png', 'sensor_errors.png'} & {p.name for p in written}
