# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
``dodo replay BAG --through-controller``: the offline regression check of a recorded run.

A fresh controller built from what the bag recorded is fed the recorded states and its torques
are compared with the recorded commands (the whole rule in :mod:`dodo_sim.tools.replay`, which
holds the command line and the DDS replay). Python: :func:`compare_with_controller`.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
import math
import os

from dodo_control.interface import restart
from dodo_sim.ros import contract
from dodo_sim.stamps import stamp_s
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
#: /controller/state channel: the simulator's episode the command was computed in
EPISODE_CHANNEL = 'episode'
SOURCES = ('auto', 'joint_commands', 'state', 'commands')
#: Characters of one recorded /simulator/controller announcement read (a bag is input: bounded).
MAX_ANNOUNCEMENT_CHARS = 4096


def announced_controllers(data: dict) -> list:
    """
    Return the recorded announcements of the bound controller (``/simulator/controller``).

    Each is a dict (``node``, ``gid``, ``since_ns``, ``kind``: docs/bags.md); an unreadable or
    oversized one is left out. Empty for a bag without the topic.
    """
    import json
    out = []
    for msg in getattr(data.get(contract.APPLIED_CONTROLLER), 'messages', ()):
        text = getattr(msg, 'data', '')
        if not isinstance(text, str) or len(text) > MAX_ANNOUNCEMENT_CHARS:
            continue
        try:
            announced = json.loads(text)
        except ValueError:
            continue
        if isinstance(announced, dict):
            out.append(announced)
    return out


def refuse_external_controller(data: dict) -> None:
    """
    Raise ValueError when the bag's controller was an external node (``kind: external``).

    Its control law is not in the package: a replay would compare the recorded commands with
    some other controller (docs/bags.md, "Which controller").
    """
    for announced in announced_controllers(data):
        if announced.get('kind') == 'external':
            node = str(announced.get('node') or '(unnamed)')[:200]
            raise ValueError(f"the bag's controller was an external node, {node}; it cannot "
                             f'be replayed through a controller (dodo replay BAG without '
                             f'--through-controller republishes the bag for your node)')


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
    controller: str = 'slip_hopper'   # name of the replayed controller (entry point)
    controller_source: str = ''       # its module:Class, distribution and version
    restarts: int = 0          # episodes the controller started afresh at (resets, states set)
    #: the simulator's events recorded on simulator/events (sim_events records, in order)
    simulator_events: tuple = ()

    def summary(self) -> str:
        per_joint = ', '.join(f'{name} {value:.3e}' for name, value in
                              zip(self.joint_names, self.max_abs_per_joint_nm))
        source = f' ({self.controller_source})' if self.controller_source else ''
        text = (f'compared {self.compared} commands (from {self.source}): '
                f'max |dtau| = {self.max_abs_nm:.3e} N*m ({per_joint}) at '
                f't = {self.t_of_max_s:.3f} s, RMS = {self.rms_nm:.3e} N*m; controller '
                f'{self.controller}{source}, configuration: '
                f'{self.config_source}, {self.changes_applied} runtime change(s) applied')
        if self.restarts or self.simulator_events:
            text += f', restarted for {self.restarts} new episode(s)'
        changes = [f"{', '.join(f'{k}={v}' for k, v in e['values'].items())} at "
                   f"t = {stamp_s(e['stamp_ns']):.3f} s" for e in self.simulator_events
                   if e['event'] == 'parameters' and e.get('stamp_ns') is not None
                   and isinstance(e.get('values'), dict)]
        if changes:
            text += '; simulator parameters changed: ' + '; '.join(changes)
        return text


#: commands-only bags: the state answered by the first command is searched among this many
#: states up to the last one recorded before it (the bag time of a command can lag its state
#: when the simulator did not wait for it, e.g. before the controller was up)
ALIGN_WINDOW_STATES = 50
#: number of first commands used to find that state
ALIGN_COMMANDS = 5


@dataclass
class _Recorded:
    """
    The recorded commands.

    They hold the source topic, the answered stamps (None: commands-only, paired in order), the
    torques (N, len(actuated)), the first candidate row for the alignment and the bag times.
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

        ``row`` is the state's row of the joint states; None if a contact is missing. The input is
        one world ``[fx, fy, fz]`` row per contact frame, shape (n_frames, 3) — what the controller
        node passes (``dodo_sim.ros.controller_node``), for one frame as for several. Each contact
        is the one with the state's stamp or, with contact pairing 'latest', the newest recorded
        before the joint state: arrival order as the recorder saw it, which can differ from the
        controller's (an approximate replay).
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

        ``before_update(k, ns)`` runs before the update of the k-th stamp (config changes, a
        new episode); a controller it returns replaces ``ctrl``.
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
                ctrl = before_update(k, ns) or ctrl
            tau = ctrl.update(stamp_s(ns), self.js.q[row].copy(), self.js.v[row].copy(), contact)
            replayed.append(np.asarray(tau, dtype=float))
            kept.append(k)
        return replayed, kept, unmatched


def _align(inputs: _Inputs, make_controller, recorded: np.ndarray, last_row: int) -> int:
    """
    Row of the state answered by the first command.

    It is the candidate among the ``ALIGN_WINDOW_STATES`` rows up to ``last_row`` whose
    fresh-controller torques match the first ``ALIGN_COMMANDS`` commands best (ties: the latest
    row).
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


def _bag_entry(recorded):
    """
    Return the entry of the controller a bag names, through installed entry points only.

    A bag is outside input: its ``controller`` parameter (and the class of its recorded
    ``controller_identity``) selects an installed entry point of ``dodo_sim.controllers`` or
    nothing; no module it names is imported (docs/bags.md, "Which controller ran").
    """
    from dodo_control import registry
    if recorded is None or recorded.initial.get('controller') is None:
        return registry.controller_entry(registry.DEFAULT_CONTROLLER, class_references=False)
    name = str(recorded.initial['controller'])
    identity = recorded_identity(recorded)
    if name in registry.controller_names():
        return registry.controller_entry(name, class_references=False)
    reference = identity['class'] if identity is not None else name
    installed = registry.entry_point_of_class(reference)
    if installed is not None:
        return registry.controller_entry(installed, class_references=False)
    package = (f'{identity["distribution"]} {identity["version"]}'.strip()
               if identity is not None and identity['distribution'] else '')
    source = (f' ({reference} of {package})' if package
              else f' ({reference})' if reference != name else '')
    remedies = [f'install {package}' if package else 'install the package that provides it']
    if registry.is_class_reference(reference):
        remedies.append(f'name its class on the command line: --controller {reference}')
    hint = ' or '.join(remedies)
    raise ValueError(f"the bag's controller {name!r}{source} is not installed here (entry "
                     f'points of {registry.GROUP}: {registry.installed_text()}); a bag selects '
                     f'installed entry points only: {hint}')


def recorded_identity(recorded) -> dict | None:
    """Return the controller identity the bag recorded (``controller_identity``), or None."""
    from dodo_control.registry import parse_identity
    if recorded is None or recorded.initial.get(contract.CONTROLLER_IDENTITY) is None:
        return None
    return parse_identity(recorded.initial[contract.CONTROLLER_IDENTITY])


def _package_text(distribution: str, version: str) -> str:
    return f'{distribution} {version}'.strip() or 'no installed distribution'


def replayed_entry(recorded, params_file=None, controller: str | None = None,
                   node: str = CONTROLLER_NODE) -> tuple:
    """
    Return (entry, warnings): the controller a replay builds, checked against the bag's record.

    The controller is ``controller`` (the user's ``--controller``: an entry point name or
    ``module:Class``), else the params file's ``controller`` parameter (an override), else what
    the bag recorded, resolved through installed entry points only (:func:`_bag_entry`), else
    ``slip_hopper`` (bags recorded before the controller node hosted several controllers).
    When the bag recorded which controller ran (``controller_identity``), a different class is
    refused (ValueError: never compared against another controller) and another distribution
    or version is a warning.
    """
    from dodo_control import registry
    from dodo_sim.ros.params import node_parameters
    chosen = controller
    if chosen is None and params_file is not None:
        chosen = node_parameters(params_file, node).get('controller')
    entry = (registry.controller_entry(str(chosen)) if chosen is not None
             else _bag_entry(recorded))
    identity = recorded_identity(recorded)
    warnings = []
    if identity is not None:
        if identity['class'] != entry.controller:
            raise ValueError(f"the bag recorded controller {identity['name']!r} = "
                             f"{identity['class']}; {entry.name!r} is {entry.controller}, a "
                             f'different controller: not compared')
        recorded_package = (identity['distribution'], identity['version'])
        if recorded_package != (entry.distribution, entry.version):
            ran = _package_text(identity['distribution'], identity['version'])
            here = _package_text(entry.distribution, entry.version)
            warnings.append(f"the bag's controller {identity['class']} ran from {ran}; here it "
                            f'comes from {here}: torques may differ')
    return entry, warnings


def _package_default_configures(name: str) -> bool:
    """Whether the package default params file (config/hop.yaml) configures controller ``name``."""
    from dodo_control.registry import DEFAULT_CONTROLLER
    from dodo_sim.paths import default_params_path
    from dodo_sim.ros.params import node_parameters
    return node_parameters(default_params_path(), CONTROLLER_NODE).get(
        'controller', DEFAULT_CONTROLLER) == name


def controller_setup(data: dict, params_file=None, node: str = CONTROLLER_NODE,
                     controller: str | None = None) -> ControllerSetup:
    """
    Return the controller of a run (:func:`replayed_entry`) and its configuration.

    The configuration is the recorded start values and runtime changes (or ``params_file``, an
    override); the controller's contact pairing is returned with them.
    """
    from dodo_sim.paths import default_params_path
    from dodo_sim.parameter import config_defaults
    from dodo_sim.ros.params import coerce_value, config_from_file, config_from_parameters

    recorded = bag_parameters.node_parameters(data, node)
    entry, warnings = replayed_entry(recorded, params_file, controller, node)
    ControllerConfig = entry.config_class()
    setup = ControllerSetup(config=None, entry=entry, warnings=warnings)
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


def _revisions(data: dict, channel: str = REVISION_CHANNEL) -> dict | None:
    """
    State stamp (ns) -> the value of ``channel`` in /controller/state (None without it).

    ``config_revision`` (the default) or ``episode``.
    """
    state = data.get(STATE_TOPIC)
    if state is None or state.msgtype != 'sensor_msgs/msg/JointState':
        return None
    out = {}
    for msg in state.messages:
        names = list(msg.name)
        if channel in names:
            out[bag_arrays.stamp_ns(msg.header.stamp)] = int(round(msg.position[
                names.index(channel)]))
    return out or None


def simulator_events(data: dict) -> tuple:
    """Return the simulator's event records of the bag (simulator/events), in order."""
    from dodo_sim.ros.sim_events import decode
    topic = data.get(contract.SIM_EVENTS)
    if topic is None:
        return ()
    records = [decode(getattr(msg, 'data', None)) for msg in topic.messages]
    return tuple(sorted((r for r in records if r is not None), key=lambda r: r['seq']))


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
                            source: str = 'auto',
                            controller: str | None = None) -> ControllerComparison:
    """
    Feed the recorded states to a fresh controller built from the bag.

    Its torques are then compared with the recorded ones (module docs). ``controller``: the
    user's choice of the controller (an entry point name or ``module:Class``; the bag's own is
    resolved through installed entry points only, :func:`replayed_entry`).

    ``sync_foot_contact``: pair contact forces by stamp (True) or take the newest recorded
    before the state (False); None: as the recorded controller did (its ``contact_pairing``;
    'auto': by stamp when the contact messages carry joint-state stamps; stamp when unknown).
    ``source``: 'joint_commands', 'state', 'commands' or 'auto' (the first of these recorded).
    """
    types = bagio.topic_types(bag_dir)
    if contract.APPLIED_CONTROLLER in types:
        refuse_external_controller(bagio.read_bag(bag_dir, [contract.APPLIED_CONTROLLER]))
    topics = [contract.JOINT_STATES, JOINT_COMMAND_TOPIC, STATE_TOPIC, COMMAND_TOPIC,
              contract.ROBOT_DESCRIPTION, contract.PARAMETER_EVENTS, contract.SIM_EVENTS]
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
    setup = controller_setup(data, params_file, controller=controller)
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
    episodes = _revisions(data, EPISODE_CHANNEL) or {}
    episode = [None, 0]        # the replayed controller's episode, restarts
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
        controller = None
        while current[0] < target:
            record, config = setup.changes[current[0]]
            try:
                live[0].reconfigure(config)
                live_config[0] = config
            except ValueError as exc:
                raise ValueError(f'recorded change {record.values} of {record.node} (bag time '
                                 f'{record.log_time_ns}) is refused by the controller: {exc}; '
                                 f'the bag is inconsistent') from exc
            current[0] += 1
            applied[0] += 1
        # a new episode: restarted as the controller node restarted it, after the changes
        # made before the state (dodo_control.interface.restart)
        number = episodes.get(ns, episode[0])
        if episode[0] is None:
            episode[0] = number
        elif number is not None and number > episode[0]:
            episode[0] = number
            episode[1] += 1
            controller = restart(live[0],
                                 lambda: setup.entry.build(leg_xml, live_config[0]))
            live[0] = controller
        return controller

    live, live_config = [ctrl], [setup.config]
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
        t_of_max_s=stamp_s(int(stamps[kept[worst]])), unmatched_states=unmatched,
        joint_names=tuple(actuated), config_source=setup.source, changes_applied=applied[0],
        controller=setup.entry.name,
        controller_source=', '.join(x for x in (
            setup.entry.controller if setup.entry.controller != setup.entry.name else '',
            f'{setup.entry.distribution} {setup.entry.version}'.strip()) if x),
        restarts=episode[1], simulator_events=simulator_events(data), warnings=tuple(warnings))
