# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
``dodo plot BAG --out DIR``: figures of a recorded run and an animation of the robot.

Robot-agnostic and headless (matplotlib Agg, no pyplot state). Everything comes from the bag
(``docs/bags.md``): joints from ``/joint_states`` and the recorded ``/robot_description``
(pinocchio forward kinematics; ``--urdf`` overrides), contact forces from the contact topics
``/<frame>_contact``, commands from ``/joint_commands`` (else ``/effort_controller/commands``),
and, when recorded, the channels of ``/controller/state``.

Figures (PNG) for any robot:

* ``trajectory.png``      CoG and base (heaviest link) path in the x-z plane, touchdowns per
  contact frame, ground z = 0 (the boom-mounted leg: its task frame, below)
* ``joint_positions.png`` / ``joint_velocities.png``   every joint (m or rad, m/s or rad/s)
* ``torques.png``         commands per actuated joint (N·m) with the applied effort of
  ``/joint_states`` when published
* ``contact_forces.png``  force per contact frame (world x / y / z, N)
* ``link_contacts.png``  normal force on each colliding link (bags of ``collisions: links``)
* ``cog_velocity.png``    ẋ_CoG, ż_CoG (with the ``velocity_setpoint`` channel when recorded)
* ``base_pose.png`` / ``base_twist.png``   a floating base: the root link's position in ``odom``
  and roll, pitch, yaw; its linear and angular velocity in its own axes (from ``odom``, else
  the ``odom`` -> root link transforms of ``/tf``: :func:`dodo_sim.tools.plot_data.base_motion`)
* ``imu.png``             the IMU (``/imu``): specific force (m/s², +g at rest) and angular
  velocity in its axes, with ``/ground_truth/imu`` dashed when recorded (docs/control.md,
  "Sensor noise")
* ``sensor_errors.png``   measured minus true joint positions and velocities (``/joint_states``
  minus ``/ground_truth/joint_states`` at equal stamps: noise, bias, latency, quantisation)

The hopper's SLIP figures (Feng, Lehner & Lutze 2021), written when ``/controller/state`` has
their channels: ``cog_x.png`` (``target_x``), ``angle_of_attack.png``
(``angle_of_attack_rad``), ``apex_heights.png`` (``apex_height``: base height at each apex,
ż_CoG + -> - in flight, with the set-point), ``phase.png`` (``phase``; SLIP leg and rest length).
The Kneed Walker's figure (As & Mailhot 2018), written when ``/controller/state`` has the walk
monitor's channels (``dodo_control.walker.monitor``): ``walk.png`` (``steps``, ``distance_m``,
``fallen`` against time).

The boom-mounted leg (Ding & Ramos; ``dodo_control.slip.boom``) is drawn in its task frame
(``docs/control.md``): horizontal = the hip's arc coordinate R·ψ along the boom circle,
vertical = height; "CoG" and base are the hip (the SLIP point the controller works with), links
and contact frames are mapped into the same frame, and the animation draws the leg from the hip
down (the boom itself would be seen edge-on).

Animation: ``robot.gif`` (PillowWriter) and ``robot.mp4`` (ffmpeg from PATH or the
``imageio-ffmpeg`` package), from the forward kinematics: one segment per URDF joint whose parent
link has mass (from the parent link's frame to the child's: joint origin to joint origin), the
base, the contact frames and the CoG with its trail. A planar robot (the hopper, the Kneed
Walker) is seen from the side (x-z projection); any other (a quadruped, an arm, the boom leg with
its boom) in 3-D projection of the world frame.

Python: ``plot_bag(bag_dir, out_dir) -> list[Path]`` (what ``dodo hop`` calls). The bag read into
arrays and the events the figures mark: :mod:`dodo_sim.tools.plot_data`.
"""
from __future__ import annotations

import argparse
from dataclasses import dataclass
import math
import os
from pathlib import Path
import shutil
import sys
from typing import Sequence

from dodo_sim.ros.runtime import EXIT_CONFIG, EXIT_FAILED
from dodo_sim.tools import bag as bagio
from dodo_sim.tools.plot_data import (apexes, contact_phase, has_channel, has_slip_channel,
                                      load_run, RunData, sensor_errors, touchdowns)
from dodo_sim.tools.write_failures import write_failure
import numpy as np


@dataclass(frozen=True)
class PlotConfig:
    """Options of :func:`plot_bag`."""

    #: write the robot animation
    animation: bool = True
    #: frames per second of the animation (frames are sampled at this rate of sim time)
    fps: float = 25.0
    #: at most this many frames (longer runs are sampled more sparsely)
    max_frames: int = 250
    #: resolution of the PNG figures, dots per inch
    dpi: int = 110
    #: vertical contact force counted as contact when the controller's phase is not recorded, N
    contact_threshold_n: float = 1.0
    #: also write robot.mp4 when an ffmpeg is available
    mp4: bool = True

    def __post_init__(self):
        if not self.fps > 0 or self.max_frames < 2 or self.dpi < 10:
            raise ValueError(f'bad plot options: {self}')


def _figure(nrows: int = 1, figsize=(7.0, 4.0), layout: str | None = 'constrained'):
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    fig = Figure(figsize=(figsize[0], figsize[1] * (1 if nrows == 1 else 0.45 * nrows + 0.4)),
                 layout=layout)
    FigureCanvasAgg(fig)
    axes = fig.subplots(nrows, 1, sharex=True, squeeze=False)[:, 0] if nrows > 1 \
        else fig.subplots()
    return fig, axes


def _setpoint(ax, run: RunData, name: str, label: str, scale: float = 1.0) -> None:
    if run.state_t is not None and name in run.state:
        values = run.state[name] * scale
        if np.isfinite(values).any():
            ax.plot(run.state_t, values, 'k--', lw=1.0, label=label)


def _save(fig, path: Path, dpi: int, written: list) -> None:
    fig.savefig(path, dpi=dpi)
    written.append(path)


def write_figures(run: RunData, out_dir: Path, config: PlotConfig) -> list[Path]:
    written: list[Path] = []
    _general_figures(run, out_dir, config, written)
    _base_figures(run, out_dir, config, written)
    _sensor_figures(run, out_dir, config, written)
    _slip_figures(run, out_dir, config, written)
    _walker_figures(run, out_dir, config, written)
    return written


def _general_figures(run: RunData, out_dir: Path, config: PlotConfig, written: list) -> None:
    fig, ax = _figure(figsize=(8.0, 4.0))
    ax.plot(run.com[:, 0], run.com[:, 2], label=run.com_name)
    ax.plot(run.base[:, 0], run.base[:, 2], lw=0.8, alpha=0.7, label=f'base ({run.base_name})')
    for i, (frame, (_, x)) in enumerate(touchdowns(run, config.contact_threshold_n).items()):
        if len(x):
            ax.plot(x, np.zeros_like(x), 'v', color=f'C{3 + i}', label=f'touchdown {frame}')
    ax.axhline(0.0, color='0.4', lw=0.8)
    ax.set_xlabel(run.horizontal_label)
    ax.set_ylabel('z (m)')
    ax.set_aspect('equal', adjustable='datalim')
    ax.set_title(f'{run.com_name} and base path'
                 + (' (boom task frame)' if run.horizontal == 'arc' else '')
                 + (' (base frame: no odom or /tf of the base recorded)'
                    if run.floating_base and run.base_motion is None else ''))
    ax.legend(loc='best', fontsize='small')
    _save(fig, out_dir / 'trajectory.png', config.dpi, written)

    for values, name, unit_suffix, title in ((run.q, 'joint_positions.png', '', 'positions'),
                                             (run.v, 'joint_velocities.png', '/s',
                                              'velocities')):
        fig, axes = _figure(max(2, len(run.joint_names)))
        for i, joint in enumerate(run.joint_names):
            axes[i].plot(run.t, values[:, i], lw=1.0)
            axes[i].set_ylabel(f'{joint}\n({run.joint_units[i]}{unit_suffix})', fontsize='small')
        axes[-1].set_xlabel('t (s)')
        axes[0].set_title(f'joint {title}')
        _save(fig, out_dir / name, config.dpi, written)

    fig, axes = _figure(max(2, len(run.cmd_names)))
    for i, joint in enumerate(run.cmd_names):
        if len(run.cmd):
            axes[i].plot(run.cmd_t, run.cmd[:, i], label='command')
        j = run.joint_names.index(joint) if joint in run.joint_names else None
        if j is not None and np.isfinite(run.effort[:, j]).any():
            axes[i].plot(run.t, run.effort[:, j], lw=0.8, alpha=0.7, label='applied')
        axes[i].set_ylabel(f'{joint} (N·m)', fontsize='small')
        axes[i].legend(loc='upper right', fontsize='x-small')
    axes[-1].set_xlabel('t (s)')
    axes[0].set_title('joint torques')
    _save(fig, out_dir / 'torques.png', config.dpi, written)

    frames = [f for f in run.contact_frames if f in run.force_t]
    fig, axes = _figure(max(2, len(frames)))
    for i, frame in enumerate(frames):
        t, f = run.force_t[frame], run.force[frame]
        axes[i].plot(t, f[:, 2], label='f_z')
        axes[i].plot(t, f[:, 0], label='f_x')
        if np.abs(f[:, 1]).max(initial=0.0) > 0.0:
            axes[i].plot(t, f[:, 1], label='f_y')
        axes[i].set_ylabel(f'{frame} (N)', fontsize='small')
        axes[i].legend(loc='upper right', fontsize='x-small')
    axes[-1].set_xlabel('t (s)')
    axes[0].set_title('contact forces (world frame)')
    _save(fig, out_dir / 'contact_forces.png', config.dpi, written)

    if run.link_force:
        fig, ax = _figure()
        for link, t in run.link_force_t.items():
            ax.plot(t, run.link_force[link][:, 2], label=link)
        ax.set_xlabel('t (s)')
        ax.set_ylabel('f_z (N)')
        ax.set_title('link contacts: normal force on each link (collisions: links)')
        ax.legend(loc='upper right', fontsize='small')
        _save(fig, out_dir / 'link_contacts.png', config.dpi, written)

    fig, ax = _figure()
    dot = 'ẋ' if run.horizontal == 'x' else 'ṡ (arc)'
    ax.plot(run.t, run.com_vel[:, 0], label=f'{dot} {run.com_name}')
    ax.plot(run.t, run.com_vel[:, 2], lw=0.8, alpha=0.6, label=f'ż {run.com_name}')
    _setpoint(ax, run, 'velocity_setpoint', 'velocity set-point')
    ax.set_xlabel('t (s)')
    ax.set_ylabel('v (m/s)')
    ax.set_title(f'{run.com_name} velocity')
    ax.legend(loc='best', fontsize='small')
    _save(fig, out_dir / 'cog_velocity.png', config.dpi, written)


def _base_figures(run: RunData, out_dir: Path, config: PlotConfig, written: list) -> None:
    """
    Plot a floating base's pose and twist (``odom``, else ``/tf``) when recorded.

    base_pose.png: position in ``odom`` and roll, pitch, yaw (rad, the URDF's fixed-axis
    x-y-z convention); base_twist.png: linear and angular velocity in the base link's axes.
    """
    import pinocchio as pin
    motion = run.base_motion
    if motion is None:
        return
    rpy = np.array([pin.rpy.matrixToRpy(pin.Quaternion(*q[[3, 0, 1, 2]]).matrix())
                    for q in motion.orientation_xyzw]).reshape(-1, 3)
    rpy = np.unwrap(rpy, axis=0) if len(rpy) else rpy
    fig, axes = _figure(2)
    for k, axis in enumerate('xyz'):
        axes[0].plot(motion.t, motion.position[:, k], label=axis)
        axes[1].plot(motion.t, rpy[:, k], label=('roll', 'pitch', 'yaw')[k])
    axes[0].set_ylabel('position (m)', fontsize='small')
    axes[1].set_ylabel('orientation (rad)', fontsize='small')
    axes[1].set_xlabel('t (s)')
    axes[0].set_title(f'base pose: {motion.link} in odom (from {motion.source})')
    for ax in axes:
        ax.legend(loc='upper right', fontsize='x-small')
    _save(fig, out_dir / 'base_pose.png', config.dpi, written)

    fig, axes = _figure(2)
    for k, axis in enumerate('xyz'):
        axes[0].plot(motion.t, motion.linear[:, k], label=f'v_{axis}')
        axes[1].plot(motion.t, motion.angular[:, k], label=f'ω_{axis}')
    axes[0].set_ylabel('linear (m/s)', fontsize='small')
    axes[1].set_ylabel('angular (rad/s)', fontsize='small')
    axes[1].set_xlabel('t (s)')
    source = 'odom' if motion.source == 'odom' else 'differenced /tf poses'
    axes[0].set_title(f'base twist in {motion.link} axes (from {source})')
    for ax in axes:
        ax.legend(loc='upper right', fontsize='x-small')
    _save(fig, out_dir / 'base_twist.png', config.dpi, written)


def _sensor_figures(run: RunData, out_dir: Path, config: PlotConfig, written: list) -> None:
    """Plot the IMU (with its ground truth) and the joint sensors' errors when recorded."""
    if run.imu is not None:
        fig, axes = _figure(2)
        for k, axis in enumerate('xyz'):
            for readings, style, label in ((run.imu, '-', ''), (run.imu_truth, '--', ' true')):
                if readings is None:
                    continue
                axes[0].plot(readings.t, readings.linear_acceleration[:, k], style, lw=0.8,
                             color=f'C{k}', label=f'a_{axis}{label}')
                axes[1].plot(readings.t, readings.angular_velocity[:, k], style, lw=0.8,
                             color=f'C{k}', label=f'ω_{axis}{label}')
        axes[0].set_ylabel('specific force (m/s²)', fontsize='small')
        axes[1].set_ylabel('angular velocity (rad/s)', fontsize='small')
        axes[1].set_xlabel('t (s)')
        axes[0].set_title(f'IMU on {run.imu.frame_id or "?"} (its axes)'
                          + (': measured, ground truth dashed' if run.imu_truth else ''))
        for ax in axes:
            ax.legend(loc='upper right', fontsize='x-small', ncol=2)
        _save(fig, out_dir / 'imu.png', config.dpi, written)
    if run.truth is None or not len(run.truth.t):
        return
    errors = sensor_errors(run)
    fig, _ = _figure(figsize=(9.0, 1.0 + 1.3 * len(run.joint_names)))
    fig.clear()
    # positions left, velocities right: a velocity error is ~1/dt larger than its position's
    axes = fig.subplots(len(run.joint_names), 2, sharex=True, squeeze=False)
    for i, joint in enumerate(run.joint_names):
        unit = run.joint_units[i]
        axes[i, 0].plot(errors.t, errors.q[:, i], lw=0.8)
        axes[i, 1].plot(errors.t, errors.v[:, i], lw=0.8, color='C1')
        axes[i, 0].set_ylabel(f'{joint} ({unit})', fontsize='small')
        axes[i, 1].set_ylabel(f'({unit}/s)', fontsize='small')
    axes[-1, 0].set_xlabel('t (s)')
    axes[-1, 1].set_xlabel('t (s)')
    axes[0, 0].set_title('position: measured − true', fontsize='medium')
    axes[0, 1].set_title('velocity: measured − true', fontsize='medium')
    fig.suptitle('joint sensors at equal stamps (/joint_states − /ground_truth/joint_states)')
    _save(fig, out_dir / 'sensor_errors.png', config.dpi, written)


def _slip_figures(run: RunData, out_dir: Path, config: PlotConfig, written: list) -> None:
    """Plot the hopper's SLIP figures, each only when its channels were recorded."""
    if has_slip_channel(run, 'target_x'):
        fig, ax = _figure()
        ax.plot(run.t, run.com[:, 0], label=f'{run.horizontal} {run.com_name}')
        _setpoint(ax, run, 'target_x', f'target {run.horizontal}')
        ax.set_xlabel('t (s)')
        ax.set_ylabel(run.horizontal_label)
        ax.set_title(f'{run.com_name} {run.horizontal} position')
        ax.legend(loc='best', fontsize='small')
        _save(fig, out_dir / 'cog_x.png', config.dpi, written)

    if has_slip_channel(run, 'angle_of_attack_rad'):
        fig, ax = _figure()
        ax.plot(run.state_t, np.degrees(run.state['angle_of_attack_rad']))
        ax.set_xlabel('t (s)')
        ax.set_ylabel('α (deg)')
        ax.set_title('angle of attack')
        _save(fig, out_dir / 'angle_of_attack.png', config.dpi, written)

    if has_slip_channel(run, 'apex_height'):
        fig, ax = _figure()
        apex_t, apex_z = apexes(run, config.contact_threshold_n)
        ax.plot(np.arange(1, len(apex_z) + 1), apex_z, 'o-',
                label=f'{run.base_name} height at apex')
        if len(apex_t):
            k = np.clip(np.searchsorted(run.state_t, apex_t, side='right') - 1, 0,
                        len(run.state_t) - 1)
            ax.plot(np.arange(1, len(apex_z) + 1), run.state['apex_height'][k], 'k--', lw=1.0,
                    label='set-point')
        ax.set_xlabel('apex #')
        ax.set_ylabel('z (m)')
        ax.set_title(f'apex heights ({len(apex_z)} apexes)')
        ax.legend(loc='best', fontsize='small')
        _save(fig, out_dir / 'apex_heights.png', config.dpi, written)

    if has_slip_channel(run, 'phase'):
        fig, axes = _figure(2)
        pt, phase, source = contact_phase(run, config.contact_threshold_n)
        axes[0].step(pt, phase, where='post')
        axes[0].set_yticks([0, 1], ['flight', 'stance'])
        axes[0].set_title(f'phase ({source})')
        plotted = False
        for name, label in (('slip_leg_length_m', 'SLIP leg length l'),
                            ('slip_rest_length_m', 'rest length l0')):
            if has_slip_channel(run, name):
                axes[1].plot(run.state_t, run.state[name], label=label)
                plotted = True
        if not plotted and run.contact_frames:
            frame = run.contact_frames[0]
            axes[1].plot(run.t, np.linalg.norm(run.com - run.contact_pos[frame], axis=1),
                         label=f'|{run.com_name} - {frame}|')
        axes[1].set_ylabel('m')
        axes[1].set_xlabel('t (s)')
        axes[1].legend(loc='best', fontsize='small')
        _save(fig, out_dir / 'phase.png', config.dpi, written)


#: the Kneed Walker's walk monitor channels (dodo_control.walker.monitor) and their axis labels
WALK_CHANNELS = (('steps', 'steps'), ('distance_m', 'distance (m)'), ('fallen', 'fallen'))


def _walker_figures(run: RunData, out_dir: Path, config: PlotConfig, written: list) -> None:
    """Plot the walk monitor's outcome (steps, distance walked, fall flag) when recorded."""
    channels = [(name, label) for name, label in WALK_CHANNELS if has_channel(run, name)]
    if not channels:
        return
    fig, axes = _figure(max(2, len(channels)))
    for ax, (name, label) in zip(axes, channels):
        ax.plot(run.state_t, run.state[name], lw=1.0)
        ax.set_ylabel(label, fontsize='small')
    axes[-1].set_xlabel('t (s)')
    axes[0].set_title('walk monitor')
    _save(fig, out_dir / 'walk.png', config.dpi, written)


#: resolution of the animation frames, dots per inch
ANIMATION_DPI = 80


def frame_indices(t: np.ndarray, fps: float, max_frames: int) -> np.ndarray:
    """Rows of ``t`` sampled every 1/fps s of sim time (sparser if that exceeds max_frames)."""
    if len(t) == 0:
        return np.zeros(0, dtype=int)
    span = float(t[-1] - t[0])
    count = min(max_frames, max(2, int(math.floor(span * fps)) + 1))
    targets = np.linspace(t[0], t[-1], count)
    return np.unique(np.clip(np.searchsorted(t, targets, side='left'), 0, len(t) - 1))


def _blit_writer(base):
    """
    Return a matplotlib movie writer that takes each frame from the canvas.

    It takes the frame as drawn (blitted) instead of redrawing the whole figure (axes and ticks
    cost ~85 ms a frame).
    """

    class BlitWriter(base):

        def grab_frame(self, **savefig_kwargs):
            canvas = self.fig.canvas
            rgba = bytes(canvas.buffer_rgba())
            if hasattr(self, '_frames'):  # PillowWriter
                from PIL import Image
                image = Image.frombuffer('RGBA', canvas.get_width_height(), rgba, 'raw',
                                         'RGBA', 0, 1).convert('RGB')
                # one palette (from the first frame, which shows every artist) for all frames:
                # 1 ms per frame instead of ~30 ms of adaptive quantization in the GIF encoder
                if getattr(self, '_palette', None) is None:
                    self._palette = image.quantize(colors=256)
                self._frames.append(image.quantize(palette=self._palette,
                                                   dither=Image.Dither.NONE))
            else:  # pipe-based writers (FFMpegWriter, frame_format 'rgba')
                self._proc.stdin.write(rgba)

    BlitWriter.__name__ = f'Blit{base.__name__}'
    return BlitWriter


def ffmpeg_path() -> str | None:
    """
    Return an ffmpeg executable.

    It is the one on PATH, else the one the ``imageio-ffmpeg`` package ships.
    """
    found = shutil.which('ffmpeg')
    if found:
        return found
    try:
        import imageio_ffmpeg
        return imageio_ffmpeg.get_ffmpeg_exe()
    except (ImportError, RuntimeError):
        return None


def _side_scene(run: RunData):
    """Return the side view (x-z projection) of the animation: (figure, draw(k))."""
    fig, ax = _figure(figsize=(6.0, 4.0), layout=None)  # no layout engine: blitted frames
    fig.set_dpi(ANIMATION_DPI)
    fig.subplots_adjust(left=0.1, right=0.97, bottom=0.12, top=0.97)
    points = [run.base, run.com] + list(run.links.values()) + list(run.contact_pos.values())
    xs = np.concatenate([p[:, 0] for p in points])
    zs = np.concatenate([p[:, 2] for p in points] + [[0.0]])
    pad = 0.3
    ax.set_xlim(xs.min() - pad, xs.max() + pad)
    ax.set_ylim(min(zs.min(), 0.0) - 0.1, zs.max() + pad)
    ax.set_aspect('equal', adjustable='box')
    ax.axhline(0.0, color='0.4', lw=1.0)
    ax.set_xlabel(run.horizontal_label)
    ax.set_ylabel('z (m)')
    (trail,) = ax.plot([], [], '-', color='C3', lw=0.8, alpha=0.6, animated=True)
    (links,) = ax.plot([], [], '-o', lw=3, color='C0', markersize=4, animated=True)
    (body,) = ax.plot([], [], 's', color='C1', markersize=12, animated=True)
    (contacts,) = ax.plot([], [], 'o', color='C2', markersize=5, animated=True)
    (com_dot,) = ax.plot([], [], 'o', color='C3', markersize=6, animated=True)
    label = ax.text(0.02, 0.95, '', transform=ax.transAxes, va='top', animated=True)
    artists = (trail, links, body, contacts, com_dot, label)
    canvas = fig.canvas
    canvas.draw()
    background = canvas.copy_from_bbox(fig.bbox)

    def draw(k):
        canvas.restore_region(background)
        xs, zs = [], []
        for parent, child in run.segments:     # NaN breaks the line between segments
            a, b = run.links[parent][k], run.links[child][k]
            xs += [a[0], b[0], np.nan]
            zs += [a[2], b[2], np.nan]
        links.set_data(xs, zs)
        body.set_data([run.base[k, 0]], [run.base[k, 2]])
        contacts.set_data([p[k, 0] for p in run.contact_pos.values()],
                          [p[k, 2] for p in run.contact_pos.values()])
        com_dot.set_data([run.com[k, 0]], [run.com[k, 2]])
        trail.set_data(run.com[:k + 1, 0], run.com[:k + 1, 2])
        label.set_text(f't = {run.t[k]:.2f} s')
        for artist in artists:
            ax.draw_artist(artist)

    return fig, draw


def _box_3d(points: list) -> tuple[np.ndarray, np.ndarray]:
    """(low, high) corners of a box around ``points`` and the ground, equal scale on each axis."""
    every = np.vstack([p.reshape(-1, 3) for p in points])
    low = np.minimum(every.min(axis=0), [np.inf, np.inf, 0.0])
    high = np.maximum(every.max(axis=0), [-np.inf, -np.inf, 0.0])
    centre, half = (low + high) / 2.0, max(float((high - low).max()) / 2.0, 0.05) + 0.1
    return centre - half, centre + half


def _scene_3d(run: RunData):
    """
    Return the 3-D view of the animation: (figure, draw(k)).

    World frame (a task frame's robot in the world: the boom leg with its boom), the ground
    z = 0 as a square outline, equal scale on the three axes, a fixed camera.
    """
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    scene = run.scene
    fig = Figure(figsize=(6.0, 5.0))
    FigureCanvasAgg(fig)
    fig.set_dpi(ANIMATION_DPI)
    ax = fig.add_axes((0.0, 0.0, 1.0, 1.0), projection='3d')
    low, high = _box_3d([scene.base, scene.com] + list(scene.links.values())
                        + list(scene.contact_pos.values()))
    ax.set_xlim(low[0], high[0])
    ax.set_ylim(low[1], high[1])
    ax.set_zlim(low[2], high[2])
    ax.set_box_aspect((1.0, 1.0, 1.0))
    ax.view_init(elev=20.0, azim=-60.0)
    ax.plot([low[0], high[0], high[0], low[0], low[0]], [low[1], low[1], high[1], high[1], low[1]],
            [0.0] * 5, color='0.4', lw=1.0)
    ax.set_xlabel('x (m)')
    ax.set_ylabel('y (m)')
    ax.set_zlabel('z (m)')
    (trail,) = ax.plot([], [], [], '-', color='C3', lw=0.8, alpha=0.6, animated=True)
    (links,) = ax.plot([], [], [], '-o', lw=3, color='C0', markersize=3, animated=True)
    (body,) = ax.plot([], [], [], 's', color='C1', markersize=10, animated=True)
    (contacts,) = ax.plot([], [], [], 'o', color='C2', markersize=4, animated=True)
    (com_dot,) = ax.plot([], [], [], 'o', color='C3', markersize=5, animated=True)
    label = ax.text2D(0.02, 0.95, '', transform=ax.transAxes, va='top', animated=True)
    artists = (trail, links, body, contacts, com_dot, label)
    canvas = fig.canvas
    canvas.draw()                       # also sets the projection the artists use
    background = canvas.copy_from_bbox(fig.bbox)

    def draw(k):
        canvas.restore_region(background)
        xyz = [[], [], []]
        for parent, child in scene.segments:   # NaN breaks the line between segments
            a, b = scene.links[parent][k], scene.links[child][k]
            for i in range(3):
                xyz[i] += [a[i], b[i], np.nan]
        links.set_data_3d(*(np.asarray(c, dtype=float) for c in xyz))
        body.set_data_3d(*scene.base[k:k + 1].T)
        feet = np.array([p[k] for p in scene.contact_pos.values()]).reshape(-1, 3)
        contacts.set_data_3d(feet[:, 0], feet[:, 1], feet[:, 2])
        com_dot.set_data_3d(*scene.com[k:k + 1].T)
        trail.set_data_3d(*scene.com[:k + 1].T)
        label.set_text(f't = {run.t[k]:.2f} s')
        for artist in artists:
            ax.draw_artist(artist)

    return fig, draw


def write_animation(run: RunData, out_dir: Path, config: PlotConfig) -> list[Path]:
    """
    robot.gif (and robot.mp4 with an ffmpeg): the robot moving (module docs).

    A planar robot is seen from the side (x-z), any other in 3-D projection.
    """
    import matplotlib
    from matplotlib.animation import FFMpegWriter, PillowWriter

    frames = frame_indices(run.t, config.fps, config.max_frames)
    fig, draw = (_scene_3d if run.three_d else _side_scene)(run)
    writers = [(out_dir / 'robot.gif', _blit_writer(PillowWriter), None)]
    ffmpeg = ffmpeg_path() if config.mp4 else None
    if ffmpeg is not None:
        writers.append((out_dir / 'robot.mp4', _blit_writer(FFMpegWriter), ffmpeg))
    written = []
    for path, writer_class, executable in writers:
        rc = {'animation.ffmpeg_path': executable} if executable else {}
        with matplotlib.rc_context(rc):
            writer = writer_class(fps=config.fps)
            with writer.saving(fig, path, ANIMATION_DPI):
                for k in frames:
                    draw(k)
                    writer.grab_frame()
        written.append(path)
    return written


def plot_bag(bag_dir: str | os.PathLike, out_dir: str | os.PathLike,
             config: PlotConfig | None = None, urdf: str | os.PathLike | None = None
             ) -> list[Path]:
    """Write the figures (and the animation) of a bag into ``out_dir``; return the files."""
    config = config or PlotConfig()
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    run = load_run(bag_dir, urdf)
    written = write_figures(run, out, config)
    if config.animation:
        written += write_animation(run, out, config)
    return written


def main(argv: Sequence[str] | None = None) -> int:
    defaults = PlotConfig()
    parser = argparse.ArgumentParser(prog='dodo plot', description=__doc__.split('\n\n')[0])
    parser.add_argument('bag', help='rosbag2 bag directory')
    parser.add_argument('--out', required=True, help='output directory for the figures')
    parser.add_argument('--no-animation', action='store_true', help='skip robot.gif / robot.mp4')
    parser.add_argument('--fps', type=float, default=defaults.fps,
                        help=f'animation frames per second of sim time (default {defaults.fps:g})')
    parser.add_argument('--max-frames', type=int, default=defaults.max_frames,
                        help=f'at most this many animation frames (default {defaults.max_frames})')
    parser.add_argument('--urdf', default=None,
                        help="URDF/xacro for the kinematics (default: the bag's "
                             '/robot_description, else the package default)')
    args = parser.parse_args(argv)
    from rosbags.highlevel import AnyReaderError
    from rosbags.rosbag2 import ReaderError
    try:
        bagio.topic_types(args.bag)
    except (FileNotFoundError, NotADirectoryError, AnyReaderError, ReaderError) as exc:
        print(f'dodo plot: error: {exc}', file=sys.stderr)
        return EXIT_CONFIG
    from dodo_sim.physics.robot import ModelError
    try:
        config = PlotConfig(animation=not args.no_animation, fps=args.fps,
                            max_frames=args.max_frames)
        written = plot_bag(args.bag, args.out, config, args.urdf)
    except (ValueError, ModelError) as exc:
        print(f'dodo plot: error: {exc}', file=sys.stderr)
        return EXIT_CONFIG
    except OSError as exc:
        # a full disk (or a folder not writable) while writing a figure: one line, not a
        # traceback (docs/running.md, "A full disk"); a file that cannot be read is named
        out = Path(args.out).resolve()
        name = exc.filename
        if name is not None and not Path(name).resolve().is_relative_to(out):
            print(f'dodo plot: error: {name}: {exc.strerror or exc}', file=sys.stderr)
        else:
            print(f'dodo plot: error: {write_failure(name or f"the figures in {out}", exc)}: '
                  f'not every figure was written', file=sys.stderr)
        return EXIT_FAILED
    for path in written:
        print(path)
    return 0


if __name__ == '__main__':
    sys.exit(main())
