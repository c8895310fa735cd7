# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
``dodo replay BAG [--rate R] [--through-controller]``: replay a recorded run.

* Default: republish every recorded topic (incl. ``/clock``, the latched ``/robot_description``
  and ``/tf_static``) over DDS with the original timing of the bag, scaled by ``--rate``
  (2 = twice as fast).  Pacing is a 1 ms wall-clock timer that publishes every message whose
  scaled bag time has come; messages are published as the recorded CDR bytes.  While it
  runs, one progress line (bag time replayed / the bag's span, playback speed, messages
  published, time left; :mod:`dodo_sim.tools.run_console`, as ``dodo hop``): redrawn in place
  on a terminal, a plain line every 5 s otherwise; ``--no-progress``: none.
* ``--through-controller``: offline regression check from the bag alone, no DDS
  (``docs/bags.md``).  A fresh controller is built from what the bag recorded, as the controller
  node builds it: through :mod:`dodo_control.registry` from the node's ``controller`` parameter
  (``slip_hopper`` or ``kneed_walker``; ``slip_hopper`` for bags recorded before the registry),
  with the URDF of ``/robot_description`` and the controller node's configuration
  from ``/parameter_events`` (its parameters at start, then every accepted runtime change, applied
  right before the first answered state whose ``config_revision`` channel on
  ``/controller/state`` counts it — where the controller applied it).  It is fed the recorded
  ``/joint_states`` and contact topics (``/<frame>_contact``) exactly as the controller node
  feeds its core: one ``update(t, q, v, contact)`` per answered state, ``t`` = the state's stamp
  in s from integer ns (:mod:`dodo_sim.rollout`), ``q``/``v`` in the controller's
  ``joint_names`` order, ``contact`` = one world ``[fx, fy, fz]`` row per contact frame of the
  controller (``contact_frames``) from the messages with the same stamp (or the newest, when the
  recorded controller paired contacts by arrival: ``contact_pairing`` 'latest').  Its
  torques are compared with the recorded commands: ``/joint_commands`` (stamped, effort by
  joint name: exact pairing), else the ``tau_<joint>`` channels of ``/controller/state``
  (stamped), else ``/effort_controller/commands`` paired in order with consecutive states from
  the one the first command answers (older bags).  Prints max |Δτ| and RMS (N·m); exit 1 if max
  |Δτ| > ``--tolerance``.  ``--params-file`` / ``--urdf`` override what the bag recorded (with
  a warning).
"""
from __future__ import annotations

import argparse
import dataclasses
from dataclasses import dataclass, field
import math
import os
import sys
import time
from typing import Sequence

from dodo_sim.ros import contract
from dodo_sim.tools import bag as bagio
from dodo_sim.tools import bag_arrays, bag_parameters, bag_robot
import numpy as np

STATE_TOPIC = contract.CONTROLLER_STATE
COMMAND_TOPIC = contract.EFFORT_COMMANDS
JOINT_COMMAND_TOPIC = contract.JOINT_COMMANDS
#: node whose recorded configuration drives the replayed controller
CONTROLLER_NODE = 'controller'
#: /controller/state channel counting accepted runtime parameter changes
REVISION_CHANNEL = 'config_revision'
SOURCES = ('auto', 'joint_commands', 'state', 'commands')


@dataclass(frozen=True)
class ControllerComparison:
    """Result of :func:`compare_with_controller` (torques in N·m)."""

    compared: int              # number of (state, recorded command) pairs
    source: str                # topic of the recorded commands
    max_abs_nm: float          # max over pairs and joints of |τ_replay - τ_recorded|
    rms_nm: float              # RMS over pairs and joints
    max_abs_per_joint_nm: tuple
    t_of_max_s: float          # stamp of the worst pair, s
    unmatched_states: int      # answered stamps without a recorded state / contact force
    joint_names: tuple = ('hip', 'knee')
    config_source: str = ''    # where the controller configuration came from
    changes_applied: int = 0   # runtime parameter changes replayed
    warnings: tuple = ()
    controller: str = 'slip_hopper'   # registry name of the replayed controller

    def summary(self) -> str:
        per_joint = ', '.join(f'{name} {value:.3e}' for name, value in
                              zip(self.joint_names, self.max_abs_per_joint_nm))
        return (f'compared {self.compared} commands (from {self.source}): '
                f'max |dtau| = {self.max_abs_nm:.3e} N*m ({per_joint}) at '
                f't = {self.t_of_max_s:.3f} s, RMS = {self.rms_nm:.3e} N*m; controller '
                f'{self.controller}, configuration: '
                f'{self.config_source}, {self.changes_applied} runtime change(s) applied')


#: commands-only bags: the state answered by the first command is searched among this many
#: states up to the last one recorded before it (the bag time of a command can lag its state
#: when the simulator did not wait for it, e.g. before the controller was up)
ALIGN_WINDOW_STATES = 50
#: number of first commands used to find that state
ALIGN_COMMANDS = 5


@dataclass
class _Recorded:
    """
    The recorded commands: source topic, answered stamps (None: commands-only, paired in order).

    Torques (N, len(actuated)), first candidate row for the alignment, bag times.
    """

    source: str
    stamps: np.ndarray | None
    tau: np.ndarray
    last_row: int
    log_time_ns: np.ndarray


def _recorded_torques(data: dict, js: bag_arrays.JointStates, actuated: tuple, source: str
                      ) -> _Recorded:
    if source not in SOURCES:
        raise ValueError(f'source must be one of {SOURCES}, got {source!r}')
    commands = data.get(JOINT_COMMAND_TOPIC)
    if source in ('auto', 'joint_commands') and commands is not None and len(commands):
        jc = bag_arrays.joint_commands(commands, actuated)
        if np.isnan(jc.effort).any():
            missing = [n for i, n in enumerate(actuated) if np.isnan(jc.effort[:, i]).any()]
            raise ValueError(f'{JOINT_COMMAND_TOPIC}: commands without an effort for {missing}')
        return _Recorded(JOINT_COMMAND_TOPIC, jc.stamp_ns, jc.effort, 0, jc.log_time_ns)
    if source == 'joint_commands':
        raise ValueError(f'the bag has no {JOINT_COMMAND_TOPIC}')
    state = data.get(STATE_TOPIC) if source in ('auto', 'state') else None
    if source == 'state' and (state is None or not len(state)):
        raise ValueError(f'the bag has no {STATE_TOPIC}')
    channels = [f'tau_{name}' for name in actuated]
    if state is not None and len(state) and state.msgtype == 'sensor_msgs/msg/JointState':
        stamps, taus, logs = [], [], []
        for log_ns, msg in zip(state.log_time_ns, state.messages):
            names = list(msg.name)
            if all(c in names for c in channels):
                stamps.append(bag_arrays.stamp_ns(msg.header.stamp))
                taus.append([msg.position[names.index(c)] for c in channels])
                logs.append(log_ns)
        if stamps:
            return _Recorded(STATE_TOPIC, np.asarray(stamps, dtype=np.int64),
                             np.asarray(taus, dtype=float), 0, np.asarray(logs, dtype=np.int64))
        if source == 'state':
            raise ValueError(f'{STATE_TOPIC} has no {", ".join(channels)} channels')
    commands = data.get(COMMAND_TOPIC)
    if commands is None or not len(commands):
        raise ValueError(f'the bag has neither {JOINT_COMMAND_TOPIC}, nor {STATE_TOPIC} with '
                         f'{", ".join(channels)}, nor {COMMAND_TOPIC}: nothing to compare')
    tau = bag_arrays.multiarray(commands)
    if tau.shape[1] != len(actuated):
        raise ValueError(f'{COMMAND_TOPIC} messages must hold one torque per actuated joint '
                         f'{list(actuated)}, got {tau.shape[1]} values')
    last_before = int(np.searchsorted(js.log_time_ns, commands.log_time_ns[0], side='right')) - 1
    return _Recorded(COMMAND_TOPIC, None, tau, max(last_before, 0), commands.log_time_ns)


class _Inputs:
    """The recorded controller inputs by state stamp: joint states and contact forces."""

    def __init__(self, data: dict, js: bag_arrays.JointStates, frames: tuple,
                 pair_by_stamp: bool | None):
        self.js = js
        self.row_by_stamp = {int(s): i for i, s in enumerate(js.stamp_ns)}
        self.frames = frames
        # per frame: (bag times, forces (M, 3), force by stamp)
        self.contacts = []
        for frame in frames:
            topic = contract.contact_topic(frame)
            if topic not in data:
                raise ValueError(f'the bag has no {topic} (contact frame {frame!r})')
            bag_arrays.check_world_axes(data[topic], frame)    # as the controller node does
            msgs = data[topic].messages
            stamps = [bag_arrays.stamp_ns(m.header.stamp) for m in msgs]
            forces = np.array([(m.wrench.force.x, m.wrench.force.y, m.wrench.force.z)
                               for m in msgs], dtype=float).reshape(-1, 3)
            self.contacts.append((np.asarray(data[topic].log_time_ns, dtype=np.int64), forces,
                                  {int(s): f for s, f in zip(stamps, forces)}))
        if pair_by_stamp is None:
            # contact_pairing 'auto' as the node decides it: by stamp when contact messages
            # carry the joint-state stamps, else the newest contact
            pair_by_stamp = all(any(s in self.row_by_stamp for s in by_stamp)
                                for _, _, by_stamp in self.contacts)
        self.pair_by_stamp = pair_by_stamp

    def contact(self, ns: int, row: int):
        """
        Return the controller's contact input for the state stamped ``ns``.

        The controller's contact input for the state stamped ``ns`` (``row`` of the joint states;
        None if missing): one world ``[fx, fy, fz]`` row per contact frame, shape (n_frames, 3) —
        what the controller node passes (``dodo_sim.ros.controller_node``), for one frame as for
        several. By stamp, or (contact pairing 'latest') the newest contact recorded before the
        joint state: arrival order as the recorder saw it, which can differ from the controller's
        (an approximate replay).
        """
        rows = []
        for log_ns, forces, by_stamp in self.contacts:
            if self.pair_by_stamp:
                force = by_stamp.get(ns)
            else:
                i = int(np.searchsorted(log_ns, self.js.log_time_ns[row], side='right')) - 1
                force = forces[i] if i >= 0 else None
            if force is None:
                return None
            rows.append(force)
        return np.array(rows, dtype=float).reshape(len(rows), 3)

    def run(self, ctrl, stamps, before_update=None) -> tuple[list, list, int]:
        """
        Feed ``ctrl`` like the controller node does: (torques, indices into stamps, skipped).

        ``before_update(k, ns)`` runs before the update of the k-th stamp (config changes).
        """
        replayed, kept, unmatched = [], [], 0
        for k, ns in enumerate(stamps):
            ns = int(ns)
            row = self.row_by_stamp.get(ns)
            contact = None if row is None else self.contact(ns, row)
            if contact is None:
                unmatched += 1
                continue
            if before_update is not None:
                before_update(k, ns)
            tau = ctrl.update(ns * 1e-9, self.js.q[row].copy(), self.js.v[row].copy(), contact)
            replayed.append(np.asarray(tau, dtype=float))
            kept.append(k)
        return replayed, kept, unmatched


def _align(inputs: _Inputs, make_controller, recorded: np.ndarray, last_row: int) -> int:
    """
    Row of the state answered by the first command.

    The candidate among the ``ALIGN_WINDOW_STATES`` rows up to ``last_row`` whose fresh-controller
    torques match the first ``ALIGN_COMMANDS`` commands best (ties: the latest row).
    """
    stamps = inputs.js.stamp_ns
    best_row, best_err = last_row, math.inf
    for row in range(last_row, max(-1, last_row - ALIGN_WINDOW_STATES), -1):
        n = min(ALIGN_COMMANDS, len(recorded), len(stamps) - row)
        replayed, kept, _ = inputs.run(make_controller(), stamps[row:row + n])
        if not kept:
            continue
        err = float(np.max(np.abs(np.asarray(replayed) - recorded[kept])))
        if err < best_err:
            best_row, best_err = row, err
        if err == 0.0:
            break
    return best_row


@dataclass
class ControllerSetup:
    """What the replayed controller is built from (see :func:`controller_setup`)."""

    config: object                              # the controller's config at start
    changes: list = field(default_factory=list)  # [(ParameterRecord, config after)]
    entry: object = None                        # dodo_control.registry.ControllerEntry
    source: str = ''
    pair_by_stamp: bool | None = True   # None: 'auto', decided from the recorded stamps
    warnings: list = field(default_factory=list)


def _config_values(cls, values: dict) -> dict:
    fields = {f.name for f in dataclasses.fields(cls)}
    return {k: v for k, v in values.items() if k in fields}


def controller_name(recorded, params_file=None, node: str = CONTROLLER_NODE) -> str:
    """
    Return the registry name of the run's controller.

    The params file's ``controller`` parameter (an override), else the recorded one, else
    ``slip_hopper`` (bags recorded before the controller node hosted several controllers).
    """
    from dodo_control.registry import DEFAULT_CONTROLLER
    from dodo_sim.ros.params import node_parameters
    if params_file is not None:
        name = node_parameters(params_file, node).get('controller')
        if name is not None:
            return str(name)
    if recorded is not None and recorded.initial.get('controller') is not None:
        return str(recorded.initial['controller'])
    return DEFAULT_CONTROLLER


def _package_default_configures(name: str) -> bool:
    """Whether the package default params file (config/hop.yaml) configures controller ``name``."""
    from dodo_control.registry import DEFAULT_CONTROLLER
    from dodo_sim.paths import default_params_path
    from dodo_sim.ros.params import node_parameters
    return node_parameters(default_params_path(), CONTROLLER_NODE).get(
        'controller', DEFAULT_CONTROLLER) == name


def controller_setup(data: dict, params_file=None, node: str = CONTROLLER_NODE
                     ) -> ControllerSetup:
    """
    Return the controller of a run (:func:`controller_name`) and its configuration.

    Recorded start values and runtime changes (or ``params_file``, an override), and its contact
    pairing.
    """
    from dodo_control.registry import controller_entry
    from dodo_sim.paths import default_params_path
    from dodo_sim.ros.params import (coerce_value, config_defaults, config_from_file,
                                     config_from_parameters)

    recorded = bag_parameters.node_parameters(data, node)
    entry = controller_entry(controller_name(recorded, params_file, node))
    ControllerConfig = entry.config_class()
    setup = ControllerSetup(config=None, entry=entry)
    if params_file is not None:
        setup.config = config_from_file(ControllerConfig, params_file, node)
        setup.source = f'params file {params_file}'
        if recorded is not None:
            setup.warnings.append(f'--params-file {params_file} overrides the configuration '
                                  f'recorded in the bag')
    elif recorded is not None and _config_values(ControllerConfig, recorded.initial):
        setup.config = config_from_parameters(
            ControllerConfig, _config_values(ControllerConfig, recorded.initial))
        setup.source = f'recorded ({contract.PARAMETER_EVENTS} of /{node.lstrip("/")})'
        if recorded.changed_before_declared:
            setup.warnings.append(
                f'parameters {sorted(set(recorded.changed_before_declared))} of /{node} were '
                f'changed before the recorder saw their start values')
    elif _package_default_configures(entry.name):
        setup.config = config_from_file(ControllerConfig, default_params_path(), node)
        setup.source = f'package default {default_params_path()}'
        setup.warnings.append(f'the bag has no recorded configuration of /{node} (recorded '
                              f'without {contract.PARAMETER_EVENTS}): using '
                              f'{default_params_path()}; pass --params-file if the run used '
                              f'another one')
    else:
        setup.config = ControllerConfig()
        setup.source = f'{ControllerConfig.__name__} defaults'
        setup.warnings.append(f'the bag has no recorded configuration of /{node}: using the '
                              f'defaults of {ControllerConfig.__name__}; pass --params-file if '
                              f'the run used another one')
    if recorded is not None:
        pairing = recorded.initial.get('contact_pairing')
        if pairing is None and 'sync_foot_contact' in recorded.initial:
            pairing = 'stamp' if recorded.initial['sync_foot_contact'] else 'latest'
        setup.pair_by_stamp = {'latest': False, 'auto': None}.get(pairing, True)
        defaults = config_defaults(ControllerConfig)
        config = setup.config
        for record in recorded.changes:
            changes = _config_values(ControllerConfig, record.values)
            if not changes:
                continue        # e.g. use_sim_time: the controller counts no revision for it
            values = {n: getattr(config, n) for n in defaults}
            for name, value in changes.items():
                values[name] = coerce_value(ControllerConfig, name, value, defaults[name])
            config = config_from_parameters(ControllerConfig, values)
            setup.changes.append((record, config))
    return setup


def _revisions(data: dict) -> dict | None:
    """State stamp (ns) -> config_revision from /controller/state (None without the channel)."""
    state = data.get(STATE_TOPIC)
    if state is None or state.msgtype != 'sensor_msgs/msg/JointState':
        return None
    out = {}
    for msg in state.messages:
        names = list(msg.name)
        if REVISION_CHANNEL in names:
            out[bag_arrays.stamp_ns(msg.header.stamp)] = int(round(msg.position[
                names.index(REVISION_CHANNEL)]))
    return out or None


def controller_names(ctrl, robot: bag_robot.RobotInfo) -> tuple:
    """
    (joint names, actuated joint names, contact frames) the replayed controller takes.

    In its order: the controller's own ``joint_names`` / ``actuated_joint_names`` /
    ``contact_frames`` (what the controller node sizes its inputs and commands from,
    ``dodo_sim.ros.controller_node.robot_names``), else what the bag says about the robot.
    """
    return (tuple(getattr(ctrl, 'joint_names', None) or robot.joint_names),
            tuple(getattr(ctrl, 'actuated_joint_names', None) or robot.actuated_joint_names),
            tuple(getattr(ctrl, 'contact_frames', None) or robot.contact_frames))


def compare_with_controller(bag_dir: str | os.PathLike,
                            params_file: str | os.PathLike | None = None,
                            urdf: str | os.PathLike | None = None,
                            sync_foot_contact: bool | None = None,
                            source: str = 'auto') -> ControllerComparison:
    """
    Feed the recorded states to a fresh controller built from the bag.

    Feed the recorded states to a fresh controller built from the bag and compare its torques with
    the recorded ones (module docs).

    ``sync_foot_contact``: pair contact forces by stamp (True) or take the newest recorded
    before the state (False); None: as the recorded controller did (its ``contact_pairing``;
    'auto': by stamp when the contact messages carry joint-state stamps; stamp when unknown).
    ``source``: 'joint_commands', 'state', 'commands' or 'auto' (the first of these recorded).
    """
    types = bagio.topic_types(bag_dir)
    topics = [contract.JOINT_STATES, JOINT_COMMAND_TOPIC, STATE_TOPIC, COMMAND_TOPIC,
              contract.ROBOT_DESCRIPTION, contract.PARAMETER_EVENTS]
    topics += list(bag_robot.contact_topics(types).values())
    data = bagio.read_bag(bag_dir, [t for t in topics if t in types])
    if contract.JOINT_STATES not in data:
        raise ValueError(f'{bag_dir}: no {contract.JOINT_STATES} recorded')
    warnings = []
    if urdf is not None and bag_robot.robot_description(data) is not None:
        warnings.append(f'--urdf {urdf} overrides the recorded {contract.ROBOT_DESCRIPTION}')
    if urdf is None and bag_robot.robot_description(data) is None:
        from dodo_sim.paths import default_urdf_path
        urdf = default_urdf_path()
        warnings.append(f'the bag has no {contract.ROBOT_DESCRIPTION}: using {urdf}')
    robot = bag_robot.robot_info(data, urdf)
    setup = controller_setup(data, params_file)
    warnings += setup.warnings
    probe = setup.entry.build(robot.urdf_xml, setup.config)
    leg = getattr(probe, 'leg', None)                              # SLIP: parse/xacro once
    leg_xml = leg.urdf_xml if leg is not None else robot.urdf_xml
    joint_names, actuated, frames = controller_names(probe, robot)
    js = bag_arrays.joint_states(data[contract.JOINT_STATES], joint_names)
    pair_by_stamp = setup.pair_by_stamp if sync_foot_contact is None else sync_foot_contact
    inputs = _Inputs(data, js, frames, pair_by_stamp)
    rec = _recorded_torques(data, js, actuated, source)

    def make_controller():
        return setup.entry.build(leg_xml, setup.config)

    stamps, recorded = rec.stamps, rec.tau
    if stamps is None:
        first = _align(inputs, make_controller, recorded, rec.last_row)
        n = min(len(recorded), len(js.stamp_ns) - first)
        stamps, recorded = js.stamp_ns[first:first + n], recorded[:n]

    ctrl = make_controller()
    revisions = _revisions(data)
    applied = [0]
    if setup.changes and revisions is None:
        warnings.append(f'{STATE_TOPIC} has no {REVISION_CHANNEL} channel: runtime changes '
                        f'are applied at the first command recorded after them (approximate)')
    if setup.changes and revisions is not None and max(revisions.values()) > len(setup.changes):
        warnings.append(f'{STATE_TOPIC} counts {max(revisions.values())} runtime changes but '
                        f'the bag holds {len(setup.changes)}')
    command_log = rec.log_time_ns
    current = [0]

    def before_update(k, ns):
        if revisions is not None:
            target = revisions.get(ns, current[0])
        else:
            log_ns = command_log[k] if command_log is not None and k < len(command_log) else None
            target = current[0]
            while (log_ns is not None and target < len(setup.changes)
                   and setup.changes[target][0].log_time_ns <= log_ns):
                target += 1
        target = min(target, len(setup.changes))
        while current[0] < target:
            record, config = setup.changes[current[0]]
            try:
                ctrl.reconfigure(config)
            except ValueError as exc:
                raise ValueError(f'recorded change {record.values} of {record.node} (bag time '
                                 f'{record.log_time_ns}) is refused by the controller: {exc}; '
                                 f'the bag is inconsistent') from exc
            current[0] += 1
            applied[0] += 1

    replayed, kept, unmatched = inputs.run(ctrl, stamps, before_update)
    if not replayed:
        raise ValueError(f'{bag_dir}: no recorded command could be paired with a recorded state '
                         f'and contact force')
    diff = np.asarray(replayed) - recorded[kept]
    absdiff = np.abs(diff)
    worst = int(np.unravel_index(np.argmax(absdiff), absdiff.shape)[0])
    return ControllerComparison(
        compared=len(kept), source=rec.source, max_abs_nm=float(absdiff.max()),
        rms_nm=float(math.sqrt(np.mean(diff ** 2))),
        max_abs_per_joint_nm=tuple(float(x) for x in absdiff.max(axis=0)),
        t_of_max_s=float(stamps[kept[worst]] * 1e-9), unmatched_states=unmatched,
        joint_names=tuple(actuated), config_source=setup.source, changes_applied=applied[0],
        controller=setup.entry.name,
        warnings=tuple(warnings))


# ---- DDS replay ---------------------------------------------------------------------------------
def _qos_for(connection):
    from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy
    offered = list(getattr(connection.ext, 'offered_qos_profiles', []) or [])
    latched = contract.relative_name(connection.topic) in (contract.ROBOT_DESCRIPTION,
                                                           contract.TF_STATIC) or any(
        int(getattr(q.durability, 'value', q.durability)) == 1 for q in offered)
    best_effort = any(int(getattr(q.reliability, 'value', q.reliability)) == 2 for q in offered)
    return QoSProfile(history=HistoryPolicy.KEEP_LAST, depth=1 if latched else 1000,
                      reliability=(ReliabilityPolicy.BEST_EFFORT if best_effort
                                   else ReliabilityPolicy.RELIABLE),
                      durability=(DurabilityPolicy.TRANSIENT_LOCAL if latched
                                  else DurabilityPolicy.VOLATILE))


def replay_over_dds(bag_dir: str | os.PathLike, rate: float = 1.0,
                    topics: Sequence[str] | None = None, start_delay_s: float = 1.0,
                    min_subscribers: int = 0, wait_timeout_s: float = 30.0,
                    on_progress=None, progress_period_s: float = 0.25) -> int:
    """
    Republish the bag; returns the number of messages published.

    Topics whose message type has no Python package here (tf2_msgs, diagnostic_msgs on a plain
    machine) are skipped with a warning on stderr. ``on_progress(bag_s, span_s, published)``,
    if given, is called from the first message on every ``progress_period_s`` of wall time and
    once at the end: bag time replayed and the bag's span (first to last message), s.
    """
    from dodo_sim.ros.recorder_subscriptions import message_class
    import rclpy
    from rclpy.clock import Clock, ClockType
    from rclpy.experimental import EventsExecutor

    if not rate > 0.0:
        raise ValueError(f'--rate must be > 0, got {rate}')
    reader = bagio.open_reader(bag_dir)
    with reader:
        wanted = None if topics is None else {contract.relative_name(t) for t in topics}
        conns = [c for c in reader.connections
                 if wanted is None or contract.relative_name(c.topic) in wanted]
        skipped = []
        for conn in conns:
            try:
                message_class(conn.msgtype)
            except ValueError:
                skipped.append(conn)
        for conn in skipped:
            print(f'dodo replay: warning: not replaying {conn.topic}: no Python message package '
                  f'for {conn.msgtype} here', file=sys.stderr)
        conns = [c for c in conns if c not in skipped]
        qos = {c.topic: (_qos_for(c), c.msgtype) for c in conns}
        messages = [(c.topic, ts, bytes(raw)) for c, ts, raw in reader.messages(connections=conns)]
    if not messages:
        return 0

    rclpy.init()
    node = rclpy.create_node('replay')
    try:
        publishers = {topic: node.create_publisher(message_class(msgtype), topic, profile)
                      for topic, (profile, msgtype) in qos.items()}
        steady = Clock(clock_type=ClockType.STEADY_TIME)
        log0 = messages[0][1]
        span_s = (messages[-1][1] - log0) * 1e-9
        state = {'next': 0, 'start_ns': None, 'progress_ns': 0}
        created_ns = steady.now().nanoseconds

        def ready(now_ns: int) -> bool:
            if now_ns - created_ns < start_delay_s * 1e9:
                return False
            if min_subscribers <= 0:
                return True
            matched = min(p.get_subscription_count() for p in publishers.values())
            if matched >= min_subscribers:
                return True
            if now_ns - created_ns > wait_timeout_s * 1e9:
                raise TimeoutError(f'fewer than {min_subscribers} subscribers on every replayed '
                                   f'topic after {wait_timeout_s} s')
            return False

        def tick():
            now_ns = steady.now().nanoseconds
            if state['start_ns'] is None:
                if not ready(now_ns):
                    return
                state['start_ns'] = now_ns
            due = log0 + (now_ns - state['start_ns']) * rate
            i = state['next']
            while i < len(messages) and messages[i][1] <= due:
                topic, _, raw = messages[i]
                publishers[topic].publish(raw)
                i += 1
            state['next'] = i
            if on_progress is not None and i > 0 and now_ns >= state['progress_ns']:
                state['progress_ns'] = now_ns + int(progress_period_s * 1e9)
                on_progress((messages[i - 1][1] - log0) * 1e-9, span_s, i)

        node.create_timer(0.001, tick, clock=steady)
        executor = EventsExecutor()
        executor.add_node(node)
        while state['next'] < len(messages):
            executor.spin_once(timeout_sec=0.1)
        if on_progress is not None:
            on_progress(span_s, span_s, state['next'])
        for publisher in publishers.values():
            from rclpy.duration import Duration
            publisher.wait_for_all_acked(Duration(seconds=2.0))
        executor.shutdown()
        return state['next']
    finally:
        node.destroy_node()
        if rclpy.ok():
            rclpy.shutdown()


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog='dodo replay', description=__doc__.split('\n\n')[0],
        formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('bag', help='rosbag2 bag directory')
    parser.add_argument('--rate', type=float, default=1.0,
                        help='playback speed factor (default 1 = original timing)')
    parser.add_argument('--topics', nargs='+', default=None, help='replay only these topics')
    parser.add_argument('--start-delay', type=float, default=1.0,
                        help='seconds to wait for discovery before the first message (default 1)')
    parser.add_argument('--min-subscribers', type=int, default=0,
                        help='wait until every topic has this many subscribers (default 0)')
    parser.add_argument('--no-progress', action='store_true',
                        help='no progress line (default: one line redrawn in place on a '
                             'terminal, a plain line every 5 s otherwise)')
    parser.add_argument('--through-controller', action='store_true',
                        help='offline: feed the recorded states to a fresh controller built '
                             'from the bag (URDF, recorded parameters and their runtime '
                             'changes) and compare its torques with the recorded commands')
    parser.add_argument('--params-file', default=None,
                        help='override the controller configuration recorded in the bag with '
                             "this params file's controller: section")
    parser.add_argument('--urdf', default=None,
                        help="override the bag's /robot_description with this URDF/xacro")
    parser.add_argument('--tolerance', type=float, default=1e-6,
                        help='max |dtau| in N*m accepted by --through-controller (default 1e-6)')
    parser.add_argument('--compare-with', choices=SOURCES, default='auto',
                        help='recorded torques to compare with: /joint_commands (stamped), '
                             '/controller/state (tau_<joint> channels, stamped), '
                             '/effort_controller/commands (paired in order) or auto (the first '
                             'of these recorded; default)')
    parser.add_argument('--latest-foot-contact', action='store_true',
                        help="use the latest contact force instead of the one with the state's "
                             'stamp (default: as the recorded controller paired them)')
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        bagio.topic_types(args.bag)
    except FileNotFoundError as exc:
        print(f'dodo replay: error: {exc}', file=sys.stderr)
        return 2
    if args.through_controller:
        try:
            result = compare_with_controller(
                args.bag, args.params_file, args.urdf,
                sync_foot_contact=False if args.latest_foot_contact else None,
                source=args.compare_with)
        except (ValueError, FileNotFoundError) as exc:
            print(f'dodo replay: error: {exc}', file=sys.stderr)
            return 2
        for warning in result.warnings:
            print(f'dodo replay: warning: {warning}', file=sys.stderr)
        print(f'dodo replay: {result.summary()}')
        if result.unmatched_states:
            print(f'dodo replay: {result.unmatched_states} recorded commands had no recorded '
                  f'state/foot force with their stamp (skipped)')
        if result.max_abs_nm > args.tolerance:
            print(f'dodo replay: FAIL: max |dtau| {result.max_abs_nm:.3e} N*m > tolerance '
                  f'{args.tolerance:g} N*m', file=sys.stderr)
            return 1
        print(f'dodo replay: OK (tolerance {args.tolerance:g} N*m)')
        return 0
    from dodo_sim.tools.run_console import RunConsole
    consoles = []          # one, made at the first message, when the bag's span is known

    def on_progress(bag_s: float, span_s: float, published: int) -> None:
        if not consoles:
            consoles.append(RunConsole('dodo replay', span_s, None, sys.stdout, sys.stderr,
                                       unit='messages'))
        consoles[0].progress(bag_s, published)

    try:
        started = time.monotonic()
        count = replay_over_dds(args.bag, rate=args.rate, topics=args.topics,
                                start_delay_s=args.start_delay,
                                min_subscribers=args.min_subscribers,
                                on_progress=None if args.no_progress else on_progress)
    except (ValueError, TimeoutError) as exc:
        print(f'dodo replay: error: {exc}', file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    finally:
        for console in consoles:
            console.close()
    print(f'dodo replay: published {count} messages in {time.monotonic() - started:.2f} s '
          f'(rate {args.rate:g})')
    return 0


if __name__ == '__main__':
    sys.exit(main())
