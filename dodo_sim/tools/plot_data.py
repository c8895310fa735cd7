# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
A recorded run as the figures of ``dodo plot`` read it: arrays on the /joint_states time base.

:func:`load_run` reads a bag (``docs/bags.md``) into :class:`RunData`: joints, the CoG and every
link's frame origin by pinocchio forward kinematics of the recorded ``/robot_description``, the
contact forces per frame and per colliding link, the commands and ``/controller/state``; the
boom-mounted leg in its task frame (:mod:`dodo_sim.tools.plot` explains the figures). Then the
events the figures mark: :func:`contact_phase`, :func:`apexes`, :func:`touchdowns`.

A floating base (free flyer) is never in ``/joint_states`` (docs/ros_contract.md): its pose and
twist come from the recorded ground-truth ``odom`` (nav_msgs/Odometry: pose in ``odom``, twist in
the base link's axes), else from the ``odom`` -> root link transforms on ``/tf`` (pose only)
(:func:`base_motion`). The kinematics of each joint state use the base pose interpolated at its
stamp (position and twist linearly, orientation by normalised linear interpolation of the
quaternions; ``odom`` comes every 10 ms by default); before the first and after the last sample
the nearest is held. Without either, the robot is drawn with its base at the origin (``base
frame``).
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
class BaseMotion:
    """
    Recorded pose (and twist) of a floating base, one row per sample.

    Fields:
        t: stamps, s.
        position: (M, 3) root link origin in ``odom``, m.
        orientation_xyzw: (M, 4) unit quaternions of the root link in ``odom``.
        linear / angular: (M, 3) twist in the root link's own axes, m/s and rad/s (from ``/tf``:
            the difference of consecutive poses, SE(3) logarithm over their time step).
        source: the topic it came from ('odom' or 'tf').
        link: the root link.
    """

    t: np.ndarray
    position: np.ndarray
    orientation_xyzw: np.ndarray
    linear: np.ndarray
    angular: np.ndarray
    source: str
    link: str


@dataclass
class Scene:
    """World-frame geometry of a run for the 3-D animation (rows on the /joint_states times)."""

    links: dict                # link -> (N, 3) frame origin, m
    segments: tuple            # (parent link, child link)
    contact_pos: dict          # frame -> (N, 3), m
    com: np.ndarray            # (N, 3), m
    base: np.ndarray           # (N, 3), m


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
    #: the robot has a free flyer (its base pose is not in /joint_states)
    floating_base: bool = False
    #: the floating base's recorded pose and twist (None: fixed base, or nothing recorded)
    base_motion: BaseMotion | None = None
    #: the robot moves out of the x-z plane (the animation is drawn in 3-D projection)
    three_d: bool = False
    #: world-frame geometry when the positions above are in a task frame (the boom leg)
    world: Scene | None = None
    #: the IMU as measured (``/imu``) and its ground truth (``/ground_truth/imu``), if recorded
    imu: bag_arrays.ImuReadings | None = None
    imu_truth: bag_arrays.ImuReadings | None = None
    #: the joint-state stamps of ``t``, ns (exact: stamps are compared, not seconds)
    stamp_ns: np.ndarray | None = None
    #: ``/ground_truth/joint_states`` in the columns of ``joint_names`` (None: not recorded;
    #: then ``q`` and ``v`` are what the encoders measured, or the truth without sensor noise)
    truth: bag_arrays.JointStates | None = None

    @property
    def scene(self) -> Scene:
        """World-frame geometry (for the 3-D animation)."""
        if self.world is not None:
            return self.world
        return Scene(self.links, self.segments, self.contact_pos, self.com, self.base)

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
              contract.PARAMETER_EVENTS, contract.ODOM, contract.IMU,
              contract.ground_truth_topic(contract.IMU),
              contract.ground_truth_topic(contract.JOINT_STATES)]
    wanted += list(recorded_contacts.values())
    data = bagio.read_bag(bag_dir, [t for t in wanted if t in types])
    if contract.JOINT_STATES not in data:
        raise ValueError(f'{bag_dir}: no {contract.JOINT_STATES} recorded, nothing to plot')
    if urdf is None and bag_robot.robot_description(data) is None:
        urdf = default_urdf_path()
    robot = bag_robot.robot_info(data, urdf)
    model_info = load_robot(robot.urdf_xml, contact_frames=(), base=robot.base)
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
    motion, base_q, base_v = None, None, None
    if model_info.floating_base:
        if contract.ODOM not in data and contract.TF in types:
            data.update(bagio.read_bag(bag_dir, [contract.TF]))
        motion = base_motion(data, model_info.root_link)
        if motion is not None:
            base_q, base_v = _base_at(motion, js.t)
    for i in range(n):
        q_full[idx_q] = js.q[i]
        v_full[idx_v] = js.v[i]
        if base_q is not None:          # the free flyer: first 7 coordinates, 6 velocities
            q_full[:7] = base_q[i]
            v_full[:6] = base_v[i]
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
    world = None
    if boom is not None:
        world = Scene(links, segments, contact_pos, com.copy(), base.copy())
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
    readings = {topic: bag_arrays.imu(data[topic]) for topic in
                (contract.IMU, contract.ground_truth_topic(contract.IMU))
                if topic in data and len(data[topic])}
    truth_topic = contract.ground_truth_topic(contract.JOINT_STATES)
    truth = (bag_arrays.joint_states(data[truth_topic], robot.joint_names)
             if truth_topic in data else None)
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
                   controller=controller, link_force_t=link_force_t, link_force=link_force,
                   floating_base=model_info.floating_base, base_motion=motion,
                   three_d=not model_info.planar, world=world,
                   imu=readings.get(contract.IMU),
                   imu_truth=readings.get(contract.ground_truth_topic(contract.IMU)),
                   stamp_ns=js.stamp_ns, truth=truth)


def base_motion(bag: dict, root_link: str) -> BaseMotion | None:
    """
    Return a floating base's recorded pose and twist, or None if the bag has neither source.

    From ``odom`` (nav_msgs/Odometry, the simulator's ground truth) when recorded, else from the
    ``odom`` -> ``root_link`` transforms of ``/tf`` (the recorder computes them from ``odom``;
    robot_state_publisher never publishes them). Samples in stamp order, repeated stamps once.
    """
    rows = []
    if contract.ODOM in bag and len(bag[contract.ODOM]):
        for msg in bag[contract.ODOM].messages:
            p, o = msg.pose.pose.position, msg.pose.pose.orientation
            lin, ang = msg.twist.twist.linear, msg.twist.twist.angular
            rows.append((bag_arrays.stamp_ns(msg.header.stamp), (p.x, p.y, p.z),
                         (o.x, o.y, o.z, o.w), (lin.x, lin.y, lin.z), (ang.x, ang.y, ang.z)))
        source = 'odom'
    elif contract.TF in bag:
        for msg in bag[contract.TF].messages:
            for tf in msg.transforms:
                if tf.child_frame_id == root_link and tf.header.frame_id == contract.ODOM_FRAME:
                    p, o = tf.transform.translation, tf.transform.rotation
                    rows.append((bag_arrays.stamp_ns(tf.header.stamp), (p.x, p.y, p.z),
                                 (o.x, o.y, o.z, o.w), None, None))
        source = 'tf'
    if not rows:
        return None
    rows.sort(key=lambda row: row[0])
    rows = [row for i, row in enumerate(rows) if i == 0 or row[0] != rows[i - 1][0]]
    quat = np.array([row[2] for row in rows], dtype=float)
    norms = np.linalg.norm(quat, axis=1)
    if not (np.isfinite(quat).all() and (norms > 0.0).all()):
        raise ValueError(f'{source}: the recorded base orientation is not a rotation '
                         f'(a zero or non-finite quaternion)')
    t = np.array([row[0] for row in rows], dtype=float) * 1e-9
    position = np.array([row[1] for row in rows], dtype=float)
    quat /= norms[:, None]
    if source == 'odom':
        linear = np.array([row[3] for row in rows], dtype=float)
        angular = np.array([row[4] for row in rows], dtype=float)
    else:
        linear, angular = _differenced_twist(t, position, quat)
    return BaseMotion(t=t, position=position, orientation_xyzw=quat, linear=linear,
                      angular=angular, source=source, link=root_link)


def _differenced_twist(t, position, quat) -> tuple[np.ndarray, np.ndarray]:
    """Twist in the body's axes between consecutive poses: log6(M_k^-1 M_k+1) / dt."""
    import pinocchio as pin
    linear, angular = np.zeros((len(t), 3)), np.zeros((len(t), 3))
    poses = [pin.XYZQUATToSE3(np.concatenate([p, q])) for p, q in zip(position, quat)]
    for k in range(len(t) - 1):
        twist = pin.log6(poses[k].actInv(poses[k + 1])) / (t[k + 1] - t[k])
        linear[k], angular[k] = twist.linear, twist.angular
    if len(t) > 1:
        linear[-1], angular[-1] = linear[-2], angular[-2]
    return linear, angular


def _base_at(motion: BaseMotion, t: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """
    Return the free flyer's q (N, 7) and v (N, 6) at the times ``t``.

    Positions and twist are interpolated linearly, orientations by normalised linear
    interpolation of the quaternions (the shorter way); the ends are held.
    """
    src = motion.t
    position = np.column_stack([np.interp(t, src, motion.position[:, k]) for k in range(3)])
    k = np.clip(np.searchsorted(src, t, side='right') - 1, 0, len(src) - 1)
    k1 = np.minimum(k + 1, len(src) - 1)
    span = src[k1] - src[k]
    w = np.where(span > 0.0, (np.clip(t, src[0], src[-1]) - src[k]) / np.where(
        span > 0.0, span, 1.0), 0.0)[:, None]
    q0, q1 = motion.orientation_xyzw[k], motion.orientation_xyzw[k1]
    q1 = np.where(np.sum(q0 * q1, axis=1, keepdims=True) < 0.0, -q1, q1)
    quat = (1.0 - w) * q0 + w * q1
    quat /= np.linalg.norm(quat, axis=1, keepdims=True)
    v = np.column_stack([np.interp(t, src, motion.linear[:, i]) for i in range(3)]
                        + [np.interp(t, src, motion.angular[:, i]) for i in range(3)])
    return np.hstack([position, quat]), v


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


@dataclass
class SensorErrors:
    """Measured minus true joint states at the stamps both hold."""

    t: np.ndarray          # s
    q: np.ndarray          # (N, joints), m or rad
    v: np.ndarray          # (N, joints), m/s or rad/s


def sensor_errors(run: RunData) -> SensorErrors:
    """``/joint_states`` minus ``/ground_truth/joint_states`` (``run.truth``) at equal stamps."""
    _, mine, theirs = np.intersect1d(run.stamp_ns, run.truth.stamp_ns, return_indices=True)
    return SensorErrors(t=run.t[mine], q=run.q[mine] - run.truth.q[theirs],
                        v=run.v[mine] - run.truth.v[theirs])


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
