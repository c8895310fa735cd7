# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
A recorded run as the figures of ``dodo plot`` read it: arrays on the /joint_states time base.

:func:`load_run` reads a bag (``docs/bags.md``) into :class:`RunData`: joints, the CoG and every
link's frame origin by pinocchio forward kinematics of the recorded ``/robot_description``, the
contact forces per frame and per colliding link, the commands and ``/controller/state``; the
boom-mounted leg in its task frame (:mod:`dodo_sim.tools.plot` explains the figures). Then the
events the figures mark: :func:`contact_phase`, :func:`apexes`, :func:`touchdowns`.
"""
from __future__ import annotations

from dataclasses import dataclass, field
import os
import xml.etree.ElementTree as ET

from dodo_sim.ros import contract
from dodo_sim.tools import bag as bagio
from dodo_sim.tools import bag_arrays, bag_parameters, bag_robot
import numpy as np


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
    Read a bag and compute CoG, base, link and contact-frame positions.

    The positions come from the URDF's kinematics.
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

    Without it the phase comes from the contact forces (any frame above the threshold).
    """
    if has_slip_channel(run, 'phase'):
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


def has_channel(run: RunData, channel: str) -> bool:
    return run.state_t is not None and channel in run.state


def has_slip_channel(run: RunData, channel: str) -> bool:
    """
    Return whether ``channel`` is a recorded channel of the SLIP controller.

    Another controller's 'phase' means something else: the walker's is its step phase.
    """
    return run.controller == 'slip_hopper' and has_channel(run, channel)
