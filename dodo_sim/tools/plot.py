"""``dodo plot BAG --out DIR``: figures of a recorded hopping run and an animation of the leg.

Headless (matplotlib Agg, no pyplot state).  From ``/joint_states`` (+ forward kinematics of the
bag's ``/robot_description``, else the package URDF), ``/foot_contact``,
``/effort_controller/commands`` and, when recorded, ``/controller/state`` (JointState channels of
the controller node: ``phase``, ``angle_of_attack_rad``, ``target_x``, ``apex_height``, ...).

Figures (PNG, like those of Feng, Lehner & Lutze 2021):

* ``trajectory.png``   CoG and base path in the x-z plane, touchdown points, ground z = 0
* ``cog_x.png``        x_CoG(t) with the position target
* ``cog_velocity.png`` ẋ_CoG(t), ż_CoG(t) with the velocity set-point
* ``angle_of_attack.png`` α(t) (only with ``/controller/state``)
* ``apex_heights.png`` base height at each apex (ż_CoG: + -> -, in flight) per hop, set-point
* ``phase.png``        phase (controller, or foot force > threshold) and SLIP leg/rest length
* ``torques.png``      hip and knee commands, N·m
* ``contact_force.png`` foot force x / z, N
* ``leg.gif`` (PillowWriter) and ``leg.mp4`` (only if ffmpeg is on PATH): the leg over time.

Python: ``plot_bag(bag_dir, out_dir) -> list[Path]`` (what ``dodo hop`` calls).
"""
from __future__ import annotations

import argparse
import math
import os
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

import numpy as np

from dodo_sim.tools import bag as bagio


@dataclass(frozen=True)
class PlotConfig:
    """Options of :func:`plot_bag`."""

    #: write the leg animation
    animation: bool = True
    #: frames per second of the animation (frames are sampled at this rate of sim time)
    fps: float = 25.0
    #: at most this many frames (longer runs are sampled more sparsely)
    max_frames: int = 250
    #: resolution of the PNG figures, dots per inch
    dpi: int = 110
    #: vertical foot force counted as contact when the controller's phase is not recorded, N
    contact_threshold_n: float = 1.0
    #: also write leg.mp4 when ffmpeg is available
    mp4: bool = True

    def __post_init__(self):
        if not self.fps > 0 or self.max_frames < 2 or self.dpi < 10:
            raise ValueError(f'bad plot options: {self}')


@dataclass
class RunData:
    """Everything the figures need, as arrays on the /joint_states time base (s)."""

    t: np.ndarray              # joint-state stamps, s
    q: np.ndarray              # (N, 4)
    v: np.ndarray              # (N, 4)
    com: np.ndarray            # (N, 2) CoG x, z, m (boom leg: the hip, its SLIP point)
    com_vel: np.ndarray        # (N, 2) m/s
    knee: np.ndarray           # (N, 2) knee joint position, m
    base: np.ndarray           # (N, 2) base x, z (boom leg: the hip), m
    foot: np.ndarray           # (N, 2) foot point, m
    force_t: np.ndarray        # foot force stamps, s
    force: np.ndarray          # (M, 2) fx, fz, N
    cmd_t: np.ndarray          # command times (sim time), s
    cmd: np.ndarray            # (K, 2) hip, knee, N*m
    state_t: np.ndarray | None  # /controller/state stamps, s
    state: dict                # channel -> values


def load_run(bag_dir: str | os.PathLike, urdf: str | os.PathLike | None = None) -> RunData:
    """Read a bag and compute CoG, knee and foot positions with the URDF's kinematics."""
    import pinocchio as pin

    from dodo_sim.model import Kinematics, load_leg_model
    from dodo_sim.paths import default_urdf_path

    data = bagio.read_bag(bag_dir, ['/joint_states', '/foot_contact',
                                    '/effort_controller/commands', '/clock',
                                    '/controller/state', '/robot_description'])
    if '/joint_states' not in data:
        raise ValueError(f'{bag_dir}: no /joint_states recorded, nothing to plot')
    description = urdf if urdf is not None else bagio.robot_description(data)
    if description is not None and _is_boom_leg(description):
        return _load_boom_run(bag_dir, data, description)
    js = _joint_states(bag_dir, data, bagio.JOINT_NAMES)
    leg = load_leg_model(description if description is not None else default_urdf_path())
    kin = Kinematics(leg)
    model, pdata = leg.model, leg.create_data()
    knee_id = model.getJointId('knee')
    n = len(js.t)
    com, com_vel = np.zeros((n, 2)), np.zeros((n, 2))
    knee, foot = np.zeros((n, 2)), np.zeros((n, 2))
    for i in range(n):
        q = js.q[i]
        com[i] = kin.com_position(q)
        com_vel[i] = kin.com_jacobian(q) @ js.v[i]
        pin.framesForwardKinematics(model, pdata, q)
        knee[i] = pdata.oMi[knee_id].translation[[0, 2]]
        foot[i] = pdata.oMf[leg.foot_frame_id].translation[[0, 2]]
    return _run_data(data, js, com, com_vel, knee, foot, js.q[:, :2])


def _joint_states(bag_dir, data: dict, joint_names: tuple):
    if '/joint_states' not in data:
        raise ValueError(f'{bag_dir}: no /joint_states recorded, nothing to plot')
    js = bagio.joint_states(data['/joint_states'], joint_names)
    if len(js.t) == 0:
        raise ValueError(f'{bag_dir}: /joint_states never held all of the joints '
                         f'{list(joint_names)}')
    return js


def _is_boom_leg(description) -> bool:
    from dodo_sim.physics.robot import load_robot, robot_description_xml
    from dodo_control.boom import boom_layout_problem
    robot = load_robot(robot_description_xml(description), contact_frames=())
    return boom_layout_problem(robot) is None


def _load_boom_run(bag_dir, data: dict, description) -> RunData:
    """The boom-mounted leg in its task frame (docs/control.md): horizontal = the hip's arc
    coordinate R boom_yaw, vertical = height; "CoG" and base are the hip (the SLIP point)."""
    import pinocchio as pin

    from dodo_control.dynamics import load_dynamics
    _, dyn = load_dynamics(description)
    js = _joint_states(bag_dir, data, tuple(dyn.joint_names))
    pdata = dyn.model.createData()
    knee_id = dyn.model.getJointId(dyn.joint_names[3])
    n = len(js.t)
    com, com_vel = np.zeros((n, 2)), np.zeros((n, 2))
    knee, foot = np.zeros((n, 2)), np.zeros((n, 2))
    for i in range(n):
        terms = dyn.tick_terms(js.q[i], js.v[i])
        com[i], com_vel[i], foot[i] = terms.com, terms.com_vel, terms.foot
        pin.forwardKinematics(dyn.model, pdata, js.q[i])
        knee[i] = dyn.task_coordinates(js.q[i][0], pdata.oMi[knee_id].translation)
    return _run_data(data, js, com, com_vel, knee, foot, com.copy())


def _run_data(data: dict, js, com, com_vel, knee, foot, base) -> RunData:
    if '/foot_contact' in data:
        force_t, f3 = bagio.wrenches(data['/foot_contact'])
        force = f3[:, [0, 2]]
    else:
        force_t, force = np.zeros(0), np.zeros((0, 2))
    if '/effort_controller/commands' in data:
        commands = data['/effort_controller/commands']
        cmd = bagio.multiarray(commands)
        cmd_t = bagio.sim_time(data, commands.log_time_ns)
    else:
        cmd, cmd_t = np.zeros((0, 2)), np.zeros(0)
    state_t, state = None, {}
    if '/controller/state' in data:
        state_t, state = bagio.named_values(data['/controller/state'])
        if state_t is None:
            state_t = bagio.sim_time(data, data['/controller/state'].log_time_ns)
    return RunData(t=js.t, q=js.q, v=js.v, com=com, com_vel=com_vel, knee=knee, foot=foot,
                   base=base, force_t=force_t, force=force, cmd_t=cmd_t, cmd=cmd, state_t=state_t,
                   state=state)


def contact_phase(run: RunData, threshold_n: float) -> tuple[np.ndarray, np.ndarray, str]:
    """(t, phase 0 flight / 1 stance, source) from the controller if recorded, else the force."""
    if run.state_t is not None and 'phase' in run.state:
        return run.state_t, run.state['phase'], 'controller phase'
    if len(run.force_t):
        return run.force_t, (run.force[:, 1] > threshold_n).astype(float), \
            f'foot force > {threshold_n:g} N'
    return run.t, np.full(len(run.t), np.nan), 'unknown'


def apexes(run: RunData, threshold_n: float) -> tuple[np.ndarray, np.ndarray]:
    """(t, base height z) at each apex: ż_CoG changes from + to - while in flight."""
    vz = run.com_vel[:, 1]
    idx = np.nonzero((vz[:-1] > 0.0) & (vz[1:] <= 0.0))[0] + 1
    pt, phase, _ = contact_phase(run, threshold_n)
    if len(pt) and not np.all(np.isnan(phase)):
        k = np.clip(np.searchsorted(pt, run.t[idx], side='right') - 1, 0, len(pt) - 1)
        idx = idx[phase[k] < 0.5]
    return run.t[idx], run.base[idx, 1]


def _figure(nrows: int = 1, figsize=(7.0, 4.0), layout: str | None = 'constrained'):
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    fig = Figure(figsize=(figsize[0], figsize[1] * (1 if nrows == 1 else 0.7 * nrows)),
                 layout=layout)
    FigureCanvasAgg(fig)
    axes = fig.subplots(nrows, 1, sharex=True) if nrows > 1 else fig.subplots()
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

    fig, ax = _figure(figsize=(8.0, 4.0))
    ax.plot(run.com[:, 0], run.com[:, 1], label='CoG')
    ax.plot(run.base[:, 0], run.base[:, 1], lw=0.8, alpha=0.7, label='base (hip)')
    td_t, td_x = _touchdowns(run, config.contact_threshold_n)
    if len(td_x):
        ax.plot(td_x, np.zeros_like(td_x), 'v', color='C3', label='touchdown foot')
    ax.axhline(0.0, color='0.4', lw=0.8)
    ax.set_xlabel('x (m)')
    ax.set_ylabel('z (m)')
    ax.set_aspect('equal', adjustable='datalim')
    ax.set_title('CoG path')
    ax.legend(loc='best', fontsize='small')
    _save(fig, out_dir / 'trajectory.png', config.dpi, written)

    fig, ax = _figure()
    ax.plot(run.t, run.com[:, 0], label='x CoG')
    _setpoint(ax, run, 'target_x', 'target x')
    ax.set_xlabel('t (s)')
    ax.set_ylabel('x (m)')
    ax.set_title('CoG x position')
    ax.legend(loc='best', fontsize='small')
    _save(fig, out_dir / 'cog_x.png', config.dpi, written)

    fig, ax = _figure()
    ax.plot(run.t, run.com_vel[:, 0], label='ẋ CoG')
    ax.plot(run.t, run.com_vel[:, 1], lw=0.8, alpha=0.6, label='ż CoG')
    _setpoint(ax, run, 'velocity_setpoint', 'velocity set-point')
    ax.set_xlabel('t (s)')
    ax.set_ylabel('v (m/s)')
    ax.set_title('CoG velocity')
    ax.legend(loc='best', fontsize='small')
    _save(fig, out_dir / 'cog_velocity.png', config.dpi, written)

    if run.state_t is not None and 'angle_of_attack_rad' in run.state:
        fig, ax = _figure()
        ax.plot(run.state_t, np.degrees(run.state['angle_of_attack_rad']))
        ax.set_xlabel('t (s)')
        ax.set_ylabel('α (deg)')
        ax.set_title('angle of attack')
        _save(fig, out_dir / 'angle_of_attack.png', config.dpi, written)

    fig, ax = _figure()
    apex_t, apex_z = apexes(run, config.contact_threshold_n)
    ax.plot(np.arange(1, len(apex_z) + 1), apex_z, 'o-', label='base height at apex')
    if run.state_t is not None and 'apex_height' in run.state and len(apex_t):
        k = np.clip(np.searchsorted(run.state_t, apex_t, side='right') - 1, 0,
                    len(run.state_t) - 1)
        ax.plot(np.arange(1, len(apex_z) + 1), run.state['apex_height'][k], 'k--', lw=1.0,
                label='set-point')
    ax.set_xlabel('apex #')
    ax.set_ylabel('z (m)')
    ax.set_title(f'apex heights ({len(apex_z)} apexes)')
    ax.legend(loc='best', fontsize='small')
    _save(fig, out_dir / 'apex_heights.png', config.dpi, written)

    fig, axes = _figure(2)
    pt, phase, source = contact_phase(run, config.contact_threshold_n)
    axes[0].step(pt, phase, where='post')
    axes[0].set_yticks([0, 1], ['flight', 'stance'])
    axes[0].set_title(f'phase ({source})')
    plotted = False
    for name, label in (('slip_leg_length_m', 'SLIP leg length l'),
                        ('slip_rest_length_m', 'rest length l0')):
        if run.state_t is not None and name in run.state:
            axes[1].plot(run.state_t, run.state[name], label=label)
            plotted = True
    if not plotted:
        axes[1].plot(run.t, np.linalg.norm(run.com - run.foot, axis=1), label='|CoG - foot|')
    axes[1].set_ylabel('m')
    axes[1].set_xlabel('t (s)')
    axes[1].legend(loc='best', fontsize='small')
    _save(fig, out_dir / 'phase.png', config.dpi, written)

    fig, ax = _figure()
    if len(run.cmd):
        ax.plot(run.cmd_t, run.cmd[:, 0], label='hip')
        if run.cmd.shape[1] > 1:
            ax.plot(run.cmd_t, run.cmd[:, 1], label='knee')
    ax.set_xlabel('t (s)')
    ax.set_ylabel('τ (N·m)')
    ax.set_title('joint torque commands')
    ax.legend(loc='best', fontsize='small')
    _save(fig, out_dir / 'torques.png', config.dpi, written)

    fig, ax = _figure()
    if len(run.force_t):
        ax.plot(run.force_t, run.force[:, 1], label='f_z')
        ax.plot(run.force_t, run.force[:, 0], label='f_x')
    ax.set_xlabel('t (s)')
    ax.set_ylabel('F (N)')
    ax.set_title('ground reaction force at the foot')
    ax.legend(loc='best', fontsize='small')
    _save(fig, out_dir / 'contact_force.png', config.dpi, written)
    return written


def _touchdowns(run: RunData, threshold_n: float) -> tuple[np.ndarray, np.ndarray]:
    """(t, foot x) at each flight -> stance transition."""
    pt, phase, _ = contact_phase(run, threshold_n)
    if not len(pt) or np.all(np.isnan(phase)):
        return np.zeros(0), np.zeros(0)
    on = np.nonzero((phase[:-1] < 0.5) & (phase[1:] >= 0.5))[0] + 1
    t = pt[on]
    k = np.clip(np.searchsorted(run.t, t, side='left'), 0, len(run.t) - 1)
    return t, run.foot[k, 0]


def frame_indices(t: np.ndarray, fps: float, max_frames: int) -> np.ndarray:
    """Rows of ``t`` sampled every 1/fps s of sim time (sparser if that exceeds max_frames)."""
    if len(t) == 0:
        return np.zeros(0, dtype=int)
    span = float(t[-1] - t[0])
    count = min(max_frames, max(2, int(math.floor(span * fps)) + 1))
    targets = np.linspace(t[0], t[-1], count)
    return np.unique(np.clip(np.searchsorted(t, targets, side='left'), 0, len(t) - 1))


def _blit_writer(base):
    """A matplotlib movie writer that takes each frame from the canvas as drawn (blitted)
    instead of redrawing the whole figure (axes and ticks cost ~85 ms a frame)."""

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


def write_animation(run: RunData, out_dir: Path, config: PlotConfig) -> list[Path]:
    """leg.gif (and leg.mp4 with ffmpeg): body, thigh, shank, CoG and its trail."""
    from matplotlib.animation import FFMpegWriter, PillowWriter

    frames = frame_indices(run.t, config.fps, config.max_frames)
    dpi = 80
    fig, ax = _figure(figsize=(6.0, 4.0), layout=None)  # no layout engine: blitted frames
    fig.set_dpi(dpi)
    fig.subplots_adjust(left=0.1, right=0.97, bottom=0.12, top=0.97)
    xs = np.concatenate([run.base[:, 0], run.foot[:, 0], run.knee[:, 0]])
    zs = np.concatenate([run.base[:, 1], run.foot[:, 1], run.knee[:, 1], [0.0]])
    pad = 0.3
    ax.set_xlim(xs.min() - pad, xs.max() + pad)
    ax.set_ylim(min(zs.min(), 0.0) - 0.1, zs.max() + pad)
    ax.set_aspect('equal', adjustable='box')
    ax.axhline(0.0, color='0.4', lw=1.0)
    ax.set_xlabel('x (m)')
    ax.set_ylabel('z (m)')
    (trail,) = ax.plot([], [], '-', color='C3', lw=0.8, alpha=0.6, animated=True)
    (leg_line,) = ax.plot([], [], '-o', lw=3, color='C0', markersize=4, animated=True)
    (body,) = ax.plot([], [], 's', color='C1', markersize=12, animated=True)
    (com_dot,) = ax.plot([], [], 'o', color='C3', markersize=6, animated=True)
    label = ax.text(0.02, 0.95, '', transform=ax.transAxes, va='top', animated=True)
    artists = (trail, leg_line, body, com_dot, label)
    canvas = fig.canvas
    canvas.draw()
    background = canvas.copy_from_bbox(fig.bbox)

    def draw(k):
        canvas.restore_region(background)
        base = run.base[k]
        leg_line.set_data([base[0], run.knee[k, 0], run.foot[k, 0]],
                          [base[1], run.knee[k, 1], run.foot[k, 1]])
        body.set_data([base[0]], [base[1]])
        com_dot.set_data([run.com[k, 0]], [run.com[k, 1]])
        trail.set_data(run.com[:k + 1, 0], run.com[:k + 1, 1])
        label.set_text(f't = {run.t[k]:.2f} s')
        for artist in artists:
            ax.draw_artist(artist)

    writers = [(out_dir / 'leg.gif', _blit_writer(PillowWriter))]
    if config.mp4 and shutil.which('ffmpeg'):
        writers.append((out_dir / 'leg.mp4', _blit_writer(FFMpegWriter)))
    written = []
    for path, writer_class in writers:
        writer = writer_class(fps=config.fps)
        with writer.saving(fig, path, dpi):
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
    parser.add_argument('--no-animation', action='store_true', help='skip leg.gif / leg.mp4')
    parser.add_argument('--fps', type=float, default=defaults.fps,
                        help=f'animation frames per second of sim time (default {defaults.fps:g})')
    parser.add_argument('--max-frames', type=int, default=defaults.max_frames,
                        help=f'at most this many animation frames (default {defaults.max_frames})')
    parser.add_argument('--urdf', default=None,
                        help="URDF/xacro for the kinematics (default: the bag's "
                             "/robot_description, else the package default)")
    args = parser.parse_args(argv)
    if not (Path(args.bag) / 'metadata.yaml').is_file():
        print(f'dodo plot: error: {args.bag} is not a rosbag2 bag (no metadata.yaml)',
              file=sys.stderr)
        return 2
    from dodo_sim.model import ModelError
    try:
        config = PlotConfig(animation=not args.no_animation, fps=args.fps,
                            max_frames=args.max_frames)
        written = plot_bag(args.bag, args.out, config, args.urdf)
    except (ValueError, ModelError) as exc:
        print(f'dodo plot: error: {exc}', file=sys.stderr)
        return 2
    for path in written:
        print(path)
    return 0


if __name__ == '__main__':
    sys.exit(main())
