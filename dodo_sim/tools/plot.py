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
``imageio-ffmpeg`` package): the robot seen from the side (x-z projection of the forward
kinematics): one segment per URDF joint whose parent link has mass (from the parent link's frame
to the child's: joint origin to joint origin), the base, the contact frames and the CoG with its
trail.

Python: ``plot_bag(bag_dir, out_dir) -> list[Path]`` (what ``dodo hop`` calls).
"""
from __future__ import annotations

import argparse
from dataclasses import dataclass, field
import math
import os
from pathlib import Path
import shutil
import sys
from typing import Sequence
import xml.etree.ElementTree as ET

from dodo_sim.ros import contract
from dodo_sim.tools import bag as bagio
from dodo_sim.tools import bag_arrays, bag_parameters, bag_robot
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


@dataclass
class RunData:
    """
    Everything the figures need, as arrays on the /joint_states time base (s).

    Positions are world x, y, z (m).
    """

    t: np.ndarray              # joint-state stamps, s
    joint_names: tuple
    joint_units: tuple         # 'm' (prismatic) or 'rad' per joint
    q: np.ndarray              # (N, joints)
    v: np.ndarray              # (N, joints)
    effort: np.ndarray         # (N, joints) applied effort from /joint_states (NaN: none)
    com: np.ndarray            # (N, 3) CoG
    com_vel: np.ndarray        # (N, 3)
    base_name: str             # the heaviest link
    base: np.ndarray           # (N, 3) its frame origin
    links: dict                # link -> (N, 3) frame origin
    segments: tuple            # (parent link, child link) drawn by the animation
    contact_frames: tuple
    contact_pos: dict          # frame -> (N, 3)
    force_t: dict              # frame -> stamps, s
    force: dict                # frame -> (M, 3) force x, y, z, N
    cmd_t: np.ndarray          # command times (sim time), s
    cmd_names: tuple           # actuated joints
    cmd: np.ndarray            # (K, actuated)
    state_t: np.ndarray | None  # /controller/state stamps, s
    state: dict = field(default_factory=dict)   # channel -> values
    #: horizontal axis of the positions: 'x' (world) or 'arc' (the boom leg's task frame,
    #: R·ψ; positions are then [arc, 0, height] and "CoG" is the hip)
    horizontal: str = 'x'
    com_name: str = 'CoG'
    #: the recorded controller (the controller node's ``controller`` parameter, registry name;
    #: 'slip_hopper' for bags without it): the SLIP figures read its channels only
    controller: str = 'slip_hopper'
    #: link collisions (``/<link>_contact`` of links that are no contact frame): link -> stamps, s
    link_force_t: dict = field(default_factory=dict)
    #: link -> (M, 3) resultant contact force x, y, z on the link, N
    link_force: dict = field(default_factory=dict)

    @property
    def horizontal_label(self) -> str:
        return 'x (m)' if self.horizontal == 'x' else 'arc R·ψ (m)'

    @property
    def foot(self) -> np.ndarray:
        """x, z of the first contact frame (the hopper's foot)."""
        frame = self.contact_frames[0]
        return self.contact_pos[frame][:, [0, 2]]


def _link_masses(urdf_xml: str) -> dict:
    text = urdf_xml.encode() if urdf_xml.lstrip().startswith('<?xml') else urdf_xml
    out = {}
    for link in ET.fromstring(text).findall('link'):
        mass = link.find('inertial/mass')
        out[link.get('name')] = float(mass.get('value')) if mass is not None else 0.0
    return out


def load_run(bag_dir: str | os.PathLike, urdf: str | os.PathLike | None = None) -> RunData:
    """
    Read a bag and compute CoG, base.

    Link and contact-frame positions with the URDF's kinematics.
    """
    from dodo_sim.paths import default_urdf_path
    from dodo_sim.physics.robot import load_robot
    from dodo_sim.ros.tf_frames import urdf_joints
    import pinocchio as pin

    types = bagio.topic_types(bag_dir)
    recorded_contacts = bag_robot.contact_topics(types)      # frame or link -> /<name>_contact
    wanted = [contract.JOINT_STATES, contract.JOINT_COMMANDS, contract.EFFORT_COMMANDS,
              contract.CLOCK, contract.CONTROLLER_STATE, contract.ROBOT_DESCRIPTION,
              contract.PARAMETER_EVENTS] + list(recorded_contacts.values())
    data = bagio.read_bag(bag_dir, [t for t in wanted if t in types])
    if contract.JOINT_STATES not in data:
        raise ValueError(f'{bag_dir}: no {contract.JOINT_STATES} recorded, nothing to plot')
    if urdf is None and bag_robot.robot_description(data) is None:
        urdf = default_urdf_path()
    robot = bag_robot.robot_info(data, urdf)
    model_info = load_robot(robot.urdf_xml, contact_frames=())
    js = bag_arrays.joint_states(data[contract.JOINT_STATES], robot.joint_names)
    if len(js.t) == 0:
        raise ValueError(f'{bag_dir}: {contract.JOINT_STATES} never held all of the joints '
                         f'{list(robot.joint_names)}')
    model, pdata = model_info.model, model_info.model.createData()
    masses = _link_masses(robot.urdf_xml)
    joints = urdf_joints(robot.urdf_xml)
    segments = tuple((j.parent, j.child) for j in joints if masses.get(j.parent, 0.0) > 0.0)
    link_names = sorted({link for seg in segments for link in seg})
    frames = {name: model.getFrameId(name, pin.FrameType.BODY) for name in link_names}
    contact_frames = tuple(f for f in robot.contact_frames if model.existFrame(f))
    contact_ids = {f: model.getFrameId(f) for f in contact_frames}
    base_id = model_info.push_frame_id
    n = len(js.t)
    com, com_vel, base = np.zeros((n, 3)), np.zeros((n, 3)), np.zeros((n, 3))
    links = {name: np.zeros((n, 3)) for name in frames}
    contact_pos = {f: np.zeros((n, 3)) for f in contact_frames}
    q_full = model_info.default_q.copy()
    idx_q = [model_info.joint_idx_q[model_info.joint_names.index(name)]
             for name in robot.joint_names]
    idx_v = [model_info.joint_idx_v[model_info.joint_names.index(name)]
             for name in robot.joint_names]
    v_full = np.zeros(model.nv)
    for i in range(n):
        q_full[idx_q] = js.q[i]
        v_full[idx_v] = js.v[i]
        pin.framesForwardKinematics(model, pdata, q_full)
        com[i] = pin.centerOfMass(model, pdata, q_full)
        com_vel[i] = pin.jacobianCenterOfMass(model, pdata, q_full) @ v_full
        base[i] = pdata.oMf[base_id].translation
        for name, fid in frames.items():
            links[name][i] = pdata.oMf[fid].translation
        for frame, fid in contact_ids.items():
            contact_pos[frame][i] = pdata.oMf[fid].translation
    horizontal, com_name, base_name = 'x', 'CoG', model.frames[base_id].name
    boom = _boom_dynamics(model_info, robot.urdf_xml)
    if boom is not None:
        com, com_vel, base, links, contact_pos, segments = _boom_task_frame(
            boom, js, links, contact_pos, segments, joints, robot.actuated_joint_names[0])
        horizontal, com_name, base_name = 'arc', 'hip (SLIP point)', 'hip'
    force_t, force = {}, {}
    for frame in contact_frames:
        topic = contract.contact_topic(frame)
        if topic in data:
            force_t[frame], force[frame] = bag_arrays.wrenches(data[topic], frame)
    link_force_t, link_force = {}, {}           # collisions: links (docs/ros_contract.md)
    for link, topic in recorded_contacts.items():
        if link not in robot.contact_frames and topic in data and model.existFrame(link):
            link_force_t[link], link_force[link] = bag_arrays.wrenches(data[topic], link)
    cmd_names = tuple(robot.actuated_joint_names)
    cmd, cmd_t = np.zeros((0, len(cmd_names))), np.zeros(0)
    if contract.JOINT_COMMANDS in data and len(data[contract.JOINT_COMMANDS]):
        commands = bag_arrays.joint_commands(data[contract.JOINT_COMMANDS], cmd_names)
        cmd, cmd_t = commands.effort, commands.stamp_ns * 1e-9
    elif contract.EFFORT_COMMANDS in data:
        commands = data[contract.EFFORT_COMMANDS]
        cmd = bag_arrays.multiarray(commands)
        cmd_t = bag_arrays.sim_time(data, commands.log_time_ns)
    recorded = bag_parameters.node_parameters(data, 'controller')
    controller = str((recorded.initial if recorded is not None else {}).get('controller')
                     or 'slip_hopper')
    state_t, state = None, {}
    if contract.CONTROLLER_STATE in data:
        state_t, state = bag_arrays.named_values(data[contract.CONTROLLER_STATE])
        if state_t is None:
            state_t = bag_arrays.sim_time(data, data[contract.CONTROLLER_STATE].log_time_ns)
    units = []
    for name in robot.joint_names:
        joint = model.joints[model.getJointId(name)]
        units.append('m' if 'P' in joint.shortname().replace('JointModel', '')[:1] else 'rad')
    return RunData(t=js.t, joint_names=tuple(robot.joint_names), joint_units=tuple(units),
                   q=js.q, v=js.v, effort=js.effort, com=com, com_vel=com_vel,
                   base_name=base_name, base=base, links=links,
                   segments=segments, contact_frames=contact_frames, contact_pos=contact_pos,
                   force_t=force_t, force=force, cmd_t=cmd_t, cmd_names=cmd_names, cmd=cmd,
                   state_t=state_t, state=state, horizontal=horizontal, com_name=com_name,
                   controller=controller, link_force_t=link_force_t, link_force=link_force)


def _boom_dynamics(model_info, urdf_xml: str):
    """Return the boom-mounted leg's task-frame dynamics if the robot is one, else None."""
    from dodo_control.slip.boom import boom_layout_problem
    if boom_layout_problem(model_info) is not None:
        return None
    from dodo_control.slip.task_frame import load_dynamics
    return load_dynamics(urdf_xml)[1]


def _boom_task_frame(dyn, js, links: dict, contact_pos: dict, segments: tuple, joints: list,
                     hip_joint: str):
    """
    World positions -> the boom's task frame [arc, 0, height] (module docs).

    CoG and base become the hip (the SLIP point, with its task velocity); segments from the hip
    down.
    """
    n = len(js.t)
    yaw = js.q[:, 0]

    def task(points):
        out = np.zeros((n, 3))
        for i in range(n):
            out[i, [0, 2]] = dyn.task_coordinates(yaw[i], points[i])
        return out

    com, com_vel = np.zeros((n, 3)), np.zeros((n, 3))
    for i in range(n):
        terms = dyn.tick_terms(js.q[i], js.v[i])
        com[i, [0, 2]], com_vel[i, [0, 2]] = terms.com, terms.com_vel
    leg_links = {next(j.child for j in joints if j.name == hip_joint)}
    for joint in joints:                 # URDF order: parents before children
        if joint.parent in leg_links:
            leg_links.add(joint.child)
    leg_segments = tuple(seg for seg in segments if seg[0] in leg_links)
    leg = {name: task(points) for name, points in links.items()
           if any(name in seg for seg in leg_segments)}
    return (com, com_vel, com.copy(), leg, {f: task(p) for f, p in contact_pos.items()},
            leg_segments)


def contact_phase(run: RunData, threshold_n: float) -> tuple[np.ndarray, np.ndarray, str]:
    """
    (t, phase 0 flight / 1 stance, source) from the SLIP controller if recorded.

    Else from the contact forces (any frame above the threshold).
    """
    if _has_slip(run, 'phase'):
        return run.state_t, run.state['phase'], 'controller phase'
    frames = [f for f in run.contact_frames if f in run.force_t and len(run.force_t[f])]
    if frames:
        t = run.force_t[frames[0]]
        on = np.zeros(len(t), dtype=bool)
        for frame in frames:
            if len(run.force_t[frame]) == len(t):
                on |= run.force[frame][:, 2] > threshold_n
        return t, on.astype(float), f'contact force > {threshold_n:g} N'
    return run.t, np.full(len(run.t), np.nan), 'unknown'


def apexes(run: RunData, threshold_n: float) -> tuple[np.ndarray, np.ndarray]:
    """(t, base height z) at each apex: ż_CoG changes from + to - while in flight."""
    vz = run.com_vel[:, 2]
    idx = np.nonzero((vz[:-1] > 0.0) & (vz[1:] <= 0.0))[0] + 1
    pt, phase, _ = contact_phase(run, threshold_n)
    if len(pt) and not np.all(np.isnan(phase)):
        k = np.clip(np.searchsorted(pt, run.t[idx], side='right') - 1, 0, len(pt) - 1)
        idx = idx[phase[k] < 0.5]
    return run.t[idx], run.base[idx, 2]


def touchdowns(run: RunData, threshold_n: float) -> dict:
    """
    Touchdown and lift-off times and positions of each contact frame.

    Contact frame -> (t, x of the frame) at each transition of its vertical force above the
    threshold.
    """
    out = {}
    for frame in run.contact_frames:
        if frame not in run.force_t or not len(run.force_t[frame]):
            continue
        t, fz = run.force_t[frame], run.force[frame][:, 2]
        on = np.nonzero((fz[:-1] <= threshold_n) & (fz[1:] > threshold_n))[0] + 1
        k = np.clip(np.searchsorted(run.t, t[on], side='left'), 0, len(run.t) - 1)
        out[frame] = (t[on], run.contact_pos[frame][k, 0])
    return out


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


def _has(run: RunData, channel: str) -> bool:
    return run.state_t is not None and channel in run.state


def _has_slip(run: RunData, channel: str) -> bool:
    """
    Return a channel of the SLIP controller.

    (another controller's 'phase' means something else: the walker's is its step phase).
    """
    return run.controller == 'slip_hopper' and _has(run, channel)


def write_figures(run: RunData, out_dir: Path, config: PlotConfig) -> list[Path]:
    written: list[Path] = []
    _general_figures(run, out_dir, config, written)
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
                 + (' (boom task frame)' if run.horizontal == 'arc' else ''))
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


def _slip_figures(run: RunData, out_dir: Path, config: PlotConfig, written: list) -> None:
    """
    Plot the hopper's SLIP figures whose channels were recorded.

    The hopper's SLIP figures, each only when its channels were recorded.
    """
    if _has_slip(run, 'target_x'):
        fig, ax = _figure()
        ax.plot(run.t, run.com[:, 0], label=f'{run.horizontal} {run.com_name}')
        _setpoint(ax, run, 'target_x', f'target {run.horizontal}')
        ax.set_xlabel('t (s)')
        ax.set_ylabel(run.horizontal_label)
        ax.set_title(f'{run.com_name} {run.horizontal} position')
        ax.legend(loc='best', fontsize='small')
        _save(fig, out_dir / 'cog_x.png', config.dpi, written)

    if _has_slip(run, 'angle_of_attack_rad'):
        fig, ax = _figure()
        ax.plot(run.state_t, np.degrees(run.state['angle_of_attack_rad']))
        ax.set_xlabel('t (s)')
        ax.set_ylabel('α (deg)')
        ax.set_title('angle of attack')
        _save(fig, out_dir / 'angle_of_attack.png', config.dpi, written)

    if _has_slip(run, 'apex_height'):
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

    if _has_slip(run, 'phase'):
        fig, axes = _figure(2)
        pt, phase, source = contact_phase(run, config.contact_threshold_n)
        axes[0].step(pt, phase, where='post')
        axes[0].set_yticks([0, 1], ['flight', 'stance'])
        axes[0].set_title(f'phase ({source})')
        plotted = False
        for name, label in (('slip_leg_length_m', 'SLIP leg length l'),
                            ('slip_rest_length_m', 'rest length l0')):
            if _has_slip(run, name):
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
    """
    Plot the walk monitor's outcome when recorded.

    The walk monitor's outcome (steps, distance walked, fall flag) when recorded.
    """
    channels = [(name, label) for name, label in WALK_CHANNELS if _has(run, name)]
    if not channels:
        return
    fig, axes = _figure(max(2, len(channels)))
    for ax, (name, label) in zip(axes, channels):
        ax.plot(run.state_t, run.state[name], lw=1.0)
        ax.set_ylabel(label, fontsize='small')
    axes[-1].set_xlabel('t (s)')
    axes[0].set_title('walk monitor')
    _save(fig, out_dir / 'walk.png', config.dpi, written)


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

    A matplotlib movie writer that takes each frame from the canvas as drawn (blitted) instead of
    redrawing the whole figure (axes and ticks cost ~85 ms a frame).
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

    From PATH, else the one the ``imageio-ffmpeg`` package ships.
    """
    found = shutil.which('ffmpeg')
    if found:
        return found
    try:
        import imageio_ffmpeg
        return imageio_ffmpeg.get_ffmpeg_exe()
    except (ImportError, RuntimeError):
        return None


def write_animation(run: RunData, out_dir: Path, config: PlotConfig) -> list[Path]:
    """robot.gif (and robot.mp4 with an ffmpeg): the robot from the side (module docs)."""
    import matplotlib
    from matplotlib.animation import FFMpegWriter, PillowWriter

    frames = frame_indices(run.t, config.fps, config.max_frames)
    dpi = 80
    fig, ax = _figure(figsize=(6.0, 4.0), layout=None)  # no layout engine: blitted frames
    fig.set_dpi(dpi)
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

    writers = [(out_dir / 'robot.gif', _blit_writer(PillowWriter), None)]
    ffmpeg = ffmpeg_path() if config.mp4 else None
    if ffmpeg is not None:
        writers.append((out_dir / 'robot.mp4', _blit_writer(FFMpegWriter), ffmpeg))
    written = []
    for path, writer_class, executable in writers:
        rc = {'animation.ffmpeg_path': executable} if executable else {}
        with matplotlib.rc_context(rc):
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
    parser.add_argument('--no-animation', action='store_true', help='skip robot.gif / robot.mp4')
    parser.add_argument('--fps', type=float, default=defaults.fps,
                        help=f'animation frames per second of sim time (default {defaults.fps:g})')
    parser.add_argument('--max-frames', type=int, default=defaults.max_frames,
                        help=f'at most this many animation frames (default {defaults.max_frames})')
    parser.add_argument('--urdf', default=None,
                        help="URDF/xacro for the kinematics (default: the bag's "
                             '/robot_description, else the package default)')
    args = parser.parse_args(argv)
    try:
        bagio.topic_types(args.bag)
    except FileNotFoundError as exc:
        print(f'dodo plot: error: {exc}', file=sys.stderr)
        return 2
    from dodo_sim.physics.robot import ModelError
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
