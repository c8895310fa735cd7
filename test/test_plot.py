"""``dodo plot`` on synthetic bags written with rosbags (no DDS)."""
from __future__ import annotations

import shutil

import numpy as np
import pytest
from PIL import Image

from dodo_sim.tools.bag import OfflineBagWriter
from dodo_sim.tools.plot import PlotConfig, apexes, frame_indices, load_run, main, plot_bag

DURATION_S = 2.0
HOP_PERIOD_S = 0.5
FIGURES = ('trajectory.png', 'cog_x.png', 'cog_velocity.png', 'angle_of_attack.png',
           'apex_heights.png', 'phase.png', 'torques.png', 'contact_force.png')


def _write_synthetic(path, with_state=True):
    """Base bouncing z = 1.1 - 0.1 cos(2 pi t / 0.5) (apexes 1.2 m at t = 0.25 + k 0.5),
    moving at 0.4 m/s, leg joints fixed (so the CoG moves with the base); foot force on near
    the bottoms."""
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
    assert set(FIGURES) | {'leg.gif'} <= names
    for name in FIGURES:
        _is_real_png(out / name)
    with Image.open(out / 'leg.gif') as gif:
        assert gif.n_frames == int(DURATION_S * 25) + 1
        first = np.asarray(gif.convert('L'), dtype=float)
        gif.seek(gif.n_frames - 1)
        last = np.asarray(gif.convert('L'), dtype=float)
    assert np.abs(first - last).mean() > 0.1  # the leg moved between the first and last frame
    if shutil.which('ffmpeg'):
        assert (out / 'leg.mp4').stat().st_size > 1000


def test_apexes_and_kinematics_of_the_synthetic_run(synthetic_bag):
    run = load_run(synthetic_bag)
    t, z = apexes(run, threshold_n=1.0)
    np.testing.assert_allclose(t, np.arange(0.25, DURATION_S, HOP_PERIOD_S), atol=1.5e-3)
    np.testing.assert_allclose(z, 1.2, atol=1e-5)
    # fixed leg joints: CoG moves rigidly with the base; the foot is below the hip
    np.testing.assert_allclose(run.com - run.com[0], run.q[:, :2] - run.q[0, :2], atol=1e-9)
    np.testing.assert_allclose(run.com_vel, run.v[:, :2], atol=1e-9)
    assert np.all(run.foot[:, 1] < run.q[:, 1] - 0.5)
    assert run.cmd.shape == (len(run.t), 2)


def test_without_controller_state_phase_comes_from_the_foot_force(tmp_path):
    bag = _write_synthetic(tmp_path / 'bag', with_state=False)
    out = tmp_path / 'plots'
    written = {p.name for p in plot_bag(bag, out, PlotConfig(animation=False))}
    assert 'angle_of_attack.png' not in written and 'leg.gif' not in written
    assert set(FIGURES) - {'angle_of_attack.png'} <= written
    t, z = apexes(load_run(bag), threshold_n=1.0)
    assert len(t) == 4


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
