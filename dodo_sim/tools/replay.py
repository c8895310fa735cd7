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
  node builds it: through :mod:`dodo_control.registry` from the node's ``controller`` parameter,
  resolved through installed entry points only (``slip_hopper`` for bags recorded before the
  registry; ``--controller module:Class`` names a class the bag's entry point does not provide),
  refused when the bag's recorded ``controller_identity`` names another class, with the URDF
  of ``/robot_description`` and the controller node's configuration from ``/parameter_events``
  (its parameters at start, then every accepted runtime change, applied right before the first
  answered state whose ``config_revision`` channel on ``/controller/state`` counts it — where
  the controller applied it).  It is fed the recorded
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
import os
import sys
import time
from typing import Sequence

from dodo_sim.ros import contract
from dodo_sim.tools import bag as bagio
from dodo_sim.tools.replay_check import compare_with_controller, SOURCES


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

    Topics whose message type has no Python package here (e.g. tf2_msgs on a plain machine
    before ``python -m dodo_sim.tools.build_interfaces`` ran) are skipped with a warning on
    stderr. ``on_progress(bag_s, span_s, published)``,
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
    parser.add_argument('--controller', default=None,
                        help='with --through-controller: the controller to build, an installed '
                             'entry point name or module:Class (default: the one the bag '
                             'recorded, resolved through installed entry points only: a bag '
                             'never makes replay import a module; docs/bags.md)')
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
    if args.controller is not None and not args.through_controller:
        print('dodo replay: error: --controller chooses the controller of --through-controller',
              file=sys.stderr)
        return 2
    if args.through_controller:
        try:
            result = compare_with_controller(
                args.bag, args.params_file, args.urdf,
                sync_foot_contact=False if args.latest_foot_contact else None,
                source=args.compare_with, controller=args.controller)
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
