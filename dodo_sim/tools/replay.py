"""``dodo replay BAG [--rate R] [--through-controller]``: replay a recorded run.

* Default: republish every recorded topic (incl. ``/clock`` and the latched
  ``/robot_description``) over DDS with the original timing of the bag, scaled by ``--rate``
  (2 = twice as fast).  Pacing is a 1 ms wall-clock timer that publishes every message whose
  scaled bag time has come; messages are published as the recorded CDR bytes.
* ``--through-controller``: offline regression check, no DDS.  A fresh
  :class:`dodo_control.controller.Controller` (URDF from the bag's ``/robot_description``, else the
  package's default; config from ``--params-file``, the ``controller:`` section) is fed the
  recorded ``/joint_states`` + ``/foot_contact`` exactly as the controller node feeds its core:
  one ``update(t, q, v, [fx, fz])`` per answered state, the foot force of the same stamp.  Its
  torques are compared with the recorded ones: from ``/controller/state`` (``tau_hip``,
  ``tau_knee``, stamped with the answered state) when recorded, else from
  ``/effort_controller/commands`` paired in order with consecutive states, starting at the state
  the first command answers (searched among the 50 states recorded up to it, by matching the
  first 5 commands: a command's bag time can lag its state when the simulator did not wait).  Prints max |Δτ| and RMS (N·m); exit 1 if max |Δτ| > ``--tolerance``.
  Set-points changed at run time (``ros2 param set``) are not in the bag and break the match.
"""
from __future__ import annotations

import argparse
import math
import os
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

import numpy as np

from dodo_sim.tools import bag as bagio

STATE_TOPIC = '/controller/state'
COMMAND_TOPIC = '/effort_controller/commands'


@dataclass(frozen=True)
class ControllerComparison:
    """Result of :func:`compare_with_controller` (torques in N·m)."""

    compared: int              # number of (state, recorded command) pairs
    source: str                # '/controller/state' or '/effort_controller/commands'
    max_abs_nm: float          # max over pairs and joints of |τ_replay - τ_recorded|
    rms_nm: float              # RMS over pairs and joints
    max_abs_per_joint_nm: tuple
    t_of_max_s: float          # stamp of the worst pair, s
    unmatched_states: int      # answered stamps without a recorded state / force

    def summary(self) -> str:
        return (f'compared {self.compared} commands (from {self.source}): '
                f'max |dtau| = {self.max_abs_nm:.3e} N*m (hip {self.max_abs_per_joint_nm[0]:.3e}, '
                f'knee {self.max_abs_per_joint_nm[1]:.3e}) at t = {self.t_of_max_s:.3f} s, '
                f'RMS = {self.rms_nm:.3e} N*m')


#: commands-only bags: the state answered by the first command is searched among this many
#: states up to the last one recorded before it (the bag time of a command can lag its state
#: when the simulator did not wait for it, e.g. before the controller was up)
ALIGN_WINDOW_STATES = 50
#: number of first commands used to find that state
ALIGN_COMMANDS = 5


def _recorded_torques(data: dict, js: bagio.JointStates, source: str
                      ) -> tuple[str, np.ndarray | None, np.ndarray, int]:
    """(source topic, answered state stamps ns or None, recorded torques (N, 2), first
    candidate row).  Stamps are None for commands-only pairing: the commands answer consecutive
    states starting at a row <= the returned one (see :func:`_align`)."""
    if source not in ('auto', 'state', 'commands'):
        raise ValueError(f"source must be 'auto', 'state' or 'commands', got {source!r}")
    state = data.get(STATE_TOPIC) if source in ('auto', 'state') else None
    if source == 'state' and (state is None or not len(state)):
        raise ValueError(f'the bag has no {STATE_TOPIC}')
    if state is not None and len(state) and state.msgtype == 'sensor_msgs/msg/JointState':
        stamps, taus = [], []
        for msg in state.messages:
            names = list(msg.name)
            if 'tau_hip' in names and 'tau_knee' in names:
                stamps.append(bagio.stamp_ns(msg.header.stamp))
                taus.append((msg.position[names.index('tau_hip')],
                             msg.position[names.index('tau_knee')]))
        if stamps:
            return (STATE_TOPIC, np.asarray(stamps, dtype=np.int64),
                    np.asarray(taus, dtype=float), 0)
        if source == 'state':
            raise ValueError(f'{STATE_TOPIC} has no tau_hip / tau_knee channels')
    commands = data.get(COMMAND_TOPIC)
    if commands is None or not len(commands):
        raise ValueError(f'the bag has neither {STATE_TOPIC} (with tau_hip, tau_knee) nor '
                         f'{COMMAND_TOPIC}: nothing to compare')
    tau = bagio.multiarray(commands)
    if tau.shape[1] != 2:
        raise ValueError(f'{COMMAND_TOPIC} messages must hold [hip, knee], got {tau.shape[1]} values')
    last_before = int(np.searchsorted(js.log_time_ns, commands.log_time_ns[0], side='right')) - 1
    return COMMAND_TOPIC, None, tau, max(last_before, 0)


class _Inputs:
    """The recorded controller inputs by state stamp."""

    def __init__(self, data: dict, js: bagio.JointStates, sync_foot_contact: bool):
        self.js = js
        self.sync = sync_foot_contact
        self.row_by_stamp = {int(s): i for i, s in enumerate(js.stamp_ns)}
        self.force_by_stamp: dict[int, np.ndarray] = {}
        self.force_stamps = np.zeros(0, dtype=np.int64)
        self.forces = np.zeros((0, 2))
        if '/foot_contact' in data:
            msgs = data['/foot_contact'].messages
            self.force_stamps = np.array([bagio.stamp_ns(m.header.stamp) for m in msgs],
                                         dtype=np.int64)
            self.forces = np.array([(m.wrench.force.x, m.wrench.force.z) for m in msgs],
                                   dtype=float).reshape(-1, 2)
            self.force_by_stamp = {int(s): f for s, f in zip(self.force_stamps, self.forces)}

    def run(self, ctrl, stamps) -> tuple[list, list, int]:
        """Feed ``ctrl`` like the controller node does: (torques, indices into stamps, skipped)."""
        replayed, kept, unmatched = [], [], 0
        for k, ns in enumerate(stamps):
            ns = int(ns)
            row = self.row_by_stamp.get(ns)
            force = self.force_by_stamp.get(ns)
            if force is None and not self.sync and len(self.force_stamps):
                i = int(np.searchsorted(self.force_stamps, ns, side='right')) - 1
                force = self.forces[i] if i >= 0 else np.zeros(2)
            if row is None or force is None:
                unmatched += 1
                continue
            tau = ctrl.update(ns * 1e-9, self.js.q[row].copy(), self.js.v[row].copy(),
                              np.array(force, dtype=float))
            replayed.append(np.asarray(tau, dtype=float))
            kept.append(k)
        return replayed, kept, unmatched


def _align(inputs: _Inputs, make_controller, recorded: np.ndarray, last_row: int) -> int:
    """Row of the state answered by the first command: the candidate among the
    ``ALIGN_WINDOW_STATES`` rows up to ``last_row`` whose fresh-controller torques match the
    first ``ALIGN_COMMANDS`` commands best (ties: the latest row)."""
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


def compare_with_controller(bag_dir: str | os.PathLike, params_file: str | os.PathLike | None = None,
                            urdf: str | os.PathLike | None = None,
                            sync_foot_contact: bool = True,
                            source: str = 'auto') -> ControllerComparison:
    """Feed the recorded states to a fresh controller and compare its torques with the bag's.

    ``source``: recorded torques from ``/controller/state`` ('state': exact pairing by stamp),
    from ``/effort_controller/commands`` ('commands': consecutive states from the one answered
    by the first command, found by :func:`_align`), or the first of these present ('auto').
    """
    from dodo_control.controller import Controller, ControllerConfig
    from dodo_sim.ros.params import config_from_file
    from dodo_sim.paths import default_params_path, default_urdf_path

    data = bagio.read_bag(bag_dir, ['/joint_states', '/foot_contact', STATE_TOPIC, COMMAND_TOPIC,
                                    '/robot_description'])
    if '/joint_states' not in data:
        raise ValueError(f'{bag_dir}: no /joint_states recorded')
    js = bagio.joint_states(data['/joint_states'])
    source, stamps, recorded, last_row = _recorded_torques(data, js, source)
    inputs = _Inputs(data, js, sync_foot_contact)

    description = urdf if urdf is not None else bagio.robot_description(data)
    if description is None:
        description = str(default_urdf_path())
    params = params_file if params_file is not None else default_params_path()
    config = config_from_file(ControllerConfig, params, 'controller')
    leg_xml = Controller(description, config).leg.urdf_xml  # parse/xacro once

    def make_controller():
        return Controller(leg_xml, config)

    if stamps is None:
        first = _align(inputs, make_controller, recorded, last_row)
        n = min(len(recorded), len(js.stamp_ns) - first)
        stamps, recorded = js.stamp_ns[first:first + n], recorded[:n]
    replayed, kept, unmatched = inputs.run(make_controller(), stamps)
    if not replayed:
        raise ValueError(f'{bag_dir}: no recorded command could be paired with a recorded state '
                         f'and foot force')
    diff = np.asarray(replayed) - recorded[kept]
    absdiff = np.abs(diff)
    worst = int(np.unravel_index(np.argmax(absdiff), absdiff.shape)[0])
    return ControllerComparison(
        compared=len(kept), source=source, max_abs_nm=float(absdiff.max()),
        rms_nm=float(math.sqrt(np.mean(diff ** 2))),
        max_abs_per_joint_nm=tuple(float(x) for x in absdiff.max(axis=0)),
        t_of_max_s=float(stamps[kept[worst]] * 1e-9), unmatched_states=unmatched)


# ---- DDS replay ---------------------------------------------------------------------------------
def _qos_for(connection):
    from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy
    offered = list(getattr(connection.ext, 'offered_qos_profiles', []) or [])
    latched = connection.topic == '/robot_description' or any(
        int(getattr(q.durability, 'value', q.durability)) == 1 for q in offered)
    best_effort = any(int(getattr(q.reliability, 'value', q.reliability)) == 2 for q in offered)
    return QoSProfile(history=HistoryPolicy.KEEP_LAST, depth=1 if latched else 1000,
                      reliability=(ReliabilityPolicy.BEST_EFFORT if best_effort
                                   else ReliabilityPolicy.RELIABLE),
                      durability=(DurabilityPolicy.TRANSIENT_LOCAL if latched
                                  else DurabilityPolicy.VOLATILE))


def replay_over_dds(bag_dir: str | os.PathLike, rate: float = 1.0,
                    topics: Sequence[str] | None = None, start_delay_s: float = 1.0,
                    min_subscribers: int = 0, wait_timeout_s: float = 30.0) -> int:
    """Republish the bag; returns the number of messages published."""
    import rclpy
    from rclpy.clock import Clock, ClockType
    from rclpy.experimental import EventsExecutor

    from dodo_sim.ros.recorder import message_class

    if not rate > 0.0:
        raise ValueError(f'--rate must be > 0, got {rate}')
    reader = bagio._reader(bag_dir)
    with reader:
        conns = [c for c in reader.connections if topics is None or c.topic in topics]
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
        state = {'next': 0, 'start_ns': None}
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

        node.create_timer(0.001, tick, clock=steady)
        executor = EventsExecutor()
        executor.add_node(node)
        while state['next'] < len(messages):
            executor.spin_once(timeout_sec=0.1)
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
    parser.add_argument('--through-controller', action='store_true',
                        help='offline: feed the recorded states to a fresh controller and '
                             'compare its torques with the recorded commands')
    parser.add_argument('--params-file', default=None,
                        help='params file of the run (default: the package config/hop.yaml)')
    parser.add_argument('--urdf', default=None,
                        help='URDF/xacro (default: the bag\'s /robot_description, else the '
                             'package default)')
    parser.add_argument('--tolerance', type=float, default=1e-6,
                        help='max |dtau| in N*m accepted by --through-controller (default 1e-6)')
    parser.add_argument('--compare-with', choices=('auto', 'state', 'commands'), default='auto',
                        help='recorded torques to compare with: /controller/state (tau_hip, '
                             'tau_knee; exact pairing by stamp), /effort_controller/commands '
                             '(paired in order) or auto (state if recorded; default)')
    parser.add_argument('--latest-foot-contact', action='store_true',
                        help='use the latest foot force instead of the one with the state\'s '
                             'stamp (like the controller node with sync_foot_contact: false)')
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if not (Path(args.bag) / 'metadata.yaml').is_file():
        print(f'dodo replay: error: {args.bag} is not a rosbag2 bag (no metadata.yaml)',
              file=sys.stderr)
        return 2
    if args.through_controller:
        try:
            result = compare_with_controller(args.bag, args.params_file, args.urdf,
                                             sync_foot_contact=not args.latest_foot_contact,
                                             source=args.compare_with)
        except (ValueError, FileNotFoundError) as exc:
            print(f'dodo replay: error: {exc}', file=sys.stderr)
            return 2
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
    try:
        started = time.monotonic()
        count = replay_over_dds(args.bag, rate=args.rate, topics=args.topics,
                                start_delay_s=args.start_delay,
                                min_subscribers=args.min_subscribers)
    except (ValueError, TimeoutError) as exc:
        print(f'dodo replay: error: {exc}', file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    print(f'dodo replay: published {count} messages in {time.monotonic() - started:.2f} s '
          f'(rate {args.rate:g})')
    return 0


if __name__ == '__main__':
    sys.exit(main())
