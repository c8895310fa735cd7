# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

r"""
``recorder``: record ROS 2 topics to a rosbag2 MCAP bag with the pure-Python ``rosbags`` library.

Run (plain machine or ROS install)::

    python -m dodo_sim.ros.recorder --ros-args -p bag:=/tmp/run1 \
        -p topics:="['/joint_states', '/effort_controller/commands', '/clock']"
    ros2 run dodo_sim recorder --ros-args -p bag:=/tmp/run1          # after colcon build

Parameters: :class:`dodo_sim.ros.recorder_config.RecorderConfig` (their meaning and defaults).

Behaviour:

* The contract topics of docs/ros_contract.md are subscribed at once with their contract types, so
  nothing published after the ``ready`` line is lost.  Other topics are subscribed when they show
  up on the graph, with the message class imported from the type name (a contract topic that
  shows up with another type, before any message was recorded, is subscribed again with that
  type).  Messages are stored as the serialized CDR bytes (``raw=True``).
* QoS: RELIABLE, KEEP_LAST(``queue_depth``); TRANSIENT_LOCAL for ``/robot_description`` (latched)
  and for any topic whose publishers all offer TRANSIENT_LOCAL; BEST_EFFORT if a publisher only
  offers that.  A publisher appearing later with incompatible QoS (e.g. BEST_EFFORT on a contract
  topic) makes the recorder subscribe again with matching QoS (warning logged).  The publishers'
  QoS are written to the bag (``offered_qos_profiles``).
* Message definitions come from the rosbags typestore (``Stores.ROS2_KILTED``); types it does not
  know are described from the generated Python message class and registered.
* Parameters: ``/parameter_events`` is recorded (runtime changes of every node, with their
  time). A node's own declaration event is published before the recorder's subscription can
  match (measured: it never arrives), so with ``parameter_snapshots`` the recorder asks every
  node it discovers for its parameters (``list_parameters`` + ``get_parameters`` services, as
  ``ros2 param dump`` does) and writes the answer as a ``ParameterEvent`` with
  ``new_parameters`` (node = the node's full name) on ``/parameter_events``: the bag holds the
  resolved configuration of every node at start (params file, ``-p`` overrides, defaults) and
  every change after it (docs/bags.md, docs/ros_contract.md).
* Prints ``dodo recorder: ready <bag>`` on stdout (flushed) once the initial subscriptions exist.
* SIGINT / SIGTERM: stops, takes the messages still queued (until 0.2 s pass without one, at
  most 4 s; a second signal ends this at once — e.g. launch's SIGTERM after SIGINT), closes the
  bag (MCAP summary and ``metadata.yaml`` written), prints the message counts and exits 0.  Exit 2
  on bad parameters
  (e.g. the bag directory exists).
* A bag that cannot be written (a full disk, a quota): one line
  (``dodo recorder: error: bag write failed: disk full while writing <file> ...``,
  :mod:`dodo_sim.tools.write_failures`), recording stops at once and the bag is left as it is on
  disk (no summary, no ``metadata.yaml``: ``dodo bag recover`` rebuilds what was written, at most
  ``flush_period_s`` of it lost); exit 1.

The node's parts: :mod:`~dodo_sim.ros.recorder_subscriptions` (what is subscribed, QoS),
:mod:`~dodo_sim.ros.recorder_bag` (the bag connections), :mod:`~dodo_sim.ros.recorder_tf` (the
computed /tf), :mod:`~dodo_sim.ros.recorder_snapshots` (the parameter snapshots); this module
wires them to the bag writer and the live view.
"""
from __future__ import annotations

from dataclasses import fields
from pathlib import Path
import signal
import sys
import time
from typing import Sequence

from dodo_sim.ros import contract
from dodo_sim.ros.recorder_bag import computed_connection, topic_connection
from dodo_sim.ros.recorder_commands import ACCEPT, AnnouncementFilter, CommandRouter, UNKNOWN
from dodo_sim.ros.recorder_config import LATCHED_TOPICS, RecorderConfig
from dodo_sim.ros.recorder_snapshots import ParameterSnapshots, SNAPSHOT_POLL_S
from dodo_sim.ros.recorder_subscriptions import message_class, RecordedTopic, TopicSubscriptions
from dodo_sim.ros.recorder_tf import TfWriter
from dodo_sim.tools.bag import make_typestore
from dodo_sim.tools.bag_writer import flush_chunk
from dodo_sim.tools.live_view import clock_ns
from dodo_sim.tools.write_failures import (DISK_FULL_ERRNOS, RECORDER_WRITE_FAILED,
                                           write_failure)


class Recorder:
    """
    Node + rosbags writer.

    Create, :meth:`run` until :meth:`request_stop`, then it closes.
    """

    def __init__(self, node, config: RecorderConfig):
        from rosbags.rosbag2 import StoragePlugin, Writer

        self.node = node
        self.config = config
        self.typestore = make_typestore()
        self.topics: dict[str, RecordedTopic] = {}
        self.stop_requested = False
        self.drain_aborted = False
        #: why the bag could not be written (a full disk), None while it can
        self.write_failure: str | None = None
        self.writer = None
        self.total = 0
        self.live = None
        self._live_bridge = None
        if config.live:        # before the bag exists: a taken port leaves nothing behind
            from dodo_sim.tools.live_view import LiveView, parse_address, parse_topic_rates
            host, port = parse_address(config.live)
            latched = tuple(node.resolve_topic_name(t) for t in LATCHED_TOPICS)
            actions = None
            if config.live_actions:       # parameters, services, client publishing
                from dodo_sim.ros.live_bridge import start_live_bridge
                actions, self._live_bridge = start_live_bridge(node, node.get_logger().warning)
            self.live = LiveView(host=host, port=port, max_rate_hz=config.live_max_rate_hz,
                                 topic_rates=parse_topic_rates(config.live_topic_rates),
                                 unlimited=latched + (
                                     node.resolve_topic_name(contract.PARAMETER_EVENTS),),
                                 latched=latched, backlog=config.live_backlog,
                                 sim_time=contract.CLOCK in config.topics, actions=actions)
            try:
                self.live.start(self._live_topics())
            except BaseException:
                self.live = None
                self._stop_live_bridge()
                raise
        self._sim_time_s: float | None = None
        self._last_state: bytes | None = None
        self.writer = Writer(Path(config.bag), version=9, storage_plugin=StoragePlugin.MCAP)
        self.writer.open()
        self._tf_publishers: dict = {}      # the computed /tf and /tf_static, published live
        self._tf = None
        if (config.tf != 'record' and contract.JOINT_STATES in config.topics
                and contract.ROBOT_DESCRIPTION in config.topics
                and (contract.TF in config.topics or contract.TF_STATIC in config.topics)):
            self._tf = TfWriter(self)
            if self._tf.computing:
                self.take_over_tf()
        # applied or ignored: the consumer's announcement of the publisher it applies decides;
        # only a command consumer's announcement is believed (recorder_commands.py)
        self._commands = CommandRouter(contract.APPLIED_CONTROLLER in config.topics)
        namespace = node.get_namespace().rstrip('/')
        self._announcements = AnnouncementFilter(
            f'{namespace}/{name}' for name in contract.COMMAND_CONSUMER_NODES)
        self._with_snapshots = (config.parameter_snapshots
                                and contract.PARAMETER_EVENTS in config.topics)
        pub_configurations = None
        if self._with_snapshots:
            from std_msgs.msg import String
            pub_configurations = node.create_publisher(
                String, contract.RECORDED_CONFIGURATIONS, contract.latched_qos())
        self._snapshots = ParameterSnapshots(node, self.typestore, self._write_parameter_event,
                                             pub_configurations)
        self._subscriptions = TopicSubscriptions(
            node, config, self.topics, self._write,
            {contract.JOINT_COMMANDS: self._write_command,
             contract.APPLIED_CONTROLLER: self._write_announcement})
        self._ignored: RecordedTopic | None = None
        self._ignored_announcers: set = set()
        self._flush_warned = False
        self._discover(initial=True)
        from rclpy.clock import Clock, ClockType

        # steady clock: the node may run with use_sim_time (shared params file) and /clock may
        # stop, but discovery and re-subscription must go on
        steady = Clock(clock_type=ClockType.STEADY_TIME)
        self._timer = node.create_timer(config.discovery_period_s, self._discover, clock=steady)
        self._flush_timer = node.create_timer(config.flush_period_s, self.flush, clock=steady)
        # parameter snapshots in progress advance every 10 ms (two service round trips each):
        # the start configuration is in the bag before anyone can change it at run time
        self._snapshot_timer = node.create_timer(SNAPSHOT_POLL_S, self._snapshots.advance,
                                                 clock=steady)
        self._progress_timer = (node.create_timer(config.progress_period_s, self.print_progress,
                                                  clock=steady)
                                if config.progress_period_s > 0 else None)

    # ---- graph -------------------------------------------------------------------------------
    def _discover(self, initial: bool = False) -> None:
        if self._with_snapshots:
            self._snapshots.discover()
        self._subscriptions.discover(initial)
        router, announcements = self._commands, self._announcements
        if (router.waits and not router.announcer_seen) or announcements.pending:
            publishers = self._announcers()
            router.announcer_seen = (router.announcer_seen
                                     or announcements.consumer_present(publishers))
            if announcements.pending:
                accepted, ignored = announcements.again(lambda item: item[3], publishers)
                for topic, stamp, data, gid in accepted:
                    self._accept_announcement(topic, stamp, data)
                if ignored:
                    self._said_ignored(ignored[-1][3], publishers)

    # ---- writing -----------------------------------------------------------------------------
    def _write(self, topic: RecordedTopic, stamp: int, data: bytes) -> None:
        if topic.connection is None:
            if topic.unrecordable:
                return
            from rosbags.rosbag2 import WriterError
            from rosbags.typesys import TypesysError
            try:
                topic.connection = topic_connection(self.writer, self.typestore, self.node,
                                                    topic)
            except (ValueError, TypesysError, WriterError) as exc:
                topic.unrecordable = True
                self.node.get_logger().error(f'not recording {topic.name}: cannot describe '
                                             f'{topic.type_name} for the bag: {exc}')
                return
        if not stamp:
            stamp = time.time_ns()
        if not self._write_bag(topic.connection, int(stamp), data):
            return
        topic.count += 1
        self.total += 1
        if self.live is not None:
            self._to_live(topic.name, topic.type_name, int(stamp), data)
        if self._progress_timer is not None:
            if topic.name == contract.CLOCK:
                self._sim_time_s = clock_ns(data) * 1e-9
            elif topic.name == contract.CONTROLLER_STATE:
                self._last_state = data        # decoded only when the progress line is due
        if self._tf is not None:
            if topic.name == contract.JOINT_STATES:
                self._tf.on_joint_state(int(stamp), data)
            elif topic.name == contract.ROBOT_DESCRIPTION:
                self._tf.on_description(int(stamp), data)
            elif topic.type_name == contract.CONTACT_TYPE:
                self._tf.on_contact(topic.name)
            elif topic.name == contract.ODOM:
                self._tf.on_odom(int(stamp), data)

    def _write_command(self, topic: RecordedTopic, stamp: int, data: bytes, gid: bytes) -> None:
        """
        Record a stamped command as applied or ignored (:mod:`dodo_sim.ros.recorder_commands`).

        To JOINT_COMMANDS when it comes from the publisher the consumer announced
        (APPLIED_CONTROLLER), else to IGNORED_COMMANDS, so a replay checks the applied commands
        only; kept until the first announcement decides.
        """
        applied = self._commands.route(stamp, data, gid)
        if applied is None:
            self._write_decided(topic, self._commands.overflow())
        elif applied:
            self._write(topic, stamp, data)
        else:
            self._write(self._ignored_topic(topic.type_name), stamp, data)

    def _write_decided(self, topic: RecordedTopic | None, decided: list) -> None:
        """Write commands the router decided: ``[(applied, stamp, data)]``."""
        topic = topic or self.topics.get(contract.JOINT_COMMANDS)
        for applied, stamp, data in decided:
            self._write(topic if applied else self._ignored_topic(topic.type_name), stamp, data)

    def _ignored_topic(self, type_name: str) -> RecordedTopic:
        if self._ignored is None:
            self._ignored = RecordedTopic(contract.IGNORED_COMMANDS, type_name)
            self._ignored.computed = True
            self.topics[contract.IGNORED_COMMANDS] = self._ignored
            self.node.get_logger().warning(
                f'{contract.JOINT_COMMANDS} from a publisher the command consumer does not '
                f'apply: recorded as {contract.IGNORED_COMMANDS}')
        return self._ignored

    def _announcers(self) -> list:
        """Return ``(node, gid)`` of every publisher of the controller announcement."""
        from dodo_sim.ros import runtime
        return [(runtime.endpoint_node(e), runtime.endpoint_gid(e))
                for e in self.node.get_publishers_info_by_topic(contract.APPLIED_CONTROLLER)]

    def _write_announcement(self, topic: RecordedTopic, stamp: int, data: bytes,
                            gid: bytes) -> None:
        """
        Record the consumer's announcement of the applied controller, and only the consumer's.

        From a simulator or driver node it is written and decides where commands go; from any
        other publisher it is counted and left out (recorder_commands.AnnouncementFilter); from
        a publisher not on the graph yet it waits for the next discovery periods.
        """
        publishers = self._announcers()
        verdict = self._announcements.judge(gid, publishers)
        if verdict is ACCEPT:
            self._accept_announcement(topic, stamp, data)
        elif verdict is UNKNOWN:
            self._announcements.keep((topic, stamp, data, gid))
        else:
            self._said_ignored(gid, publishers)

    def _accept_announcement(self, topic: RecordedTopic, stamp: int, data: bytes) -> None:
        self._write(topic, stamp, data)
        self._on_applied_controller(data)

    def _said_ignored(self, gid: bytes, publishers) -> None:
        """Warn once per node that its announcement is not believed."""
        from dodo_sim.ros.recorder_commands import same_publisher
        node = next((n for n, g in publishers if gid and same_publisher(gid, g)), '')
        key = node or gid.hex()
        if key in self._ignored_announcers:
            return
        self._ignored_announcers.add(key)
        self.node.get_logger().warning(
            f'ignored an announcement on {contract.APPLIED_CONTROLLER} from '
            f'{node or "a publisher not on the graph"}: only the command consumer '
            f'({", ".join(sorted(self._announcements.consumers))}) says which controller it '
            f'applies ({self._announcements.ignored} ignored so far)')

    def _on_applied_controller(self, data: bytes) -> None:
        import json

        from rclpy.serialization import deserialize_message
        from std_msgs.msg import String
        try:
            announced = json.loads(deserialize_message(data, String).data)
            gid = bytes.fromhex(announced['gid'])
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            self.node.get_logger().error(f'unreadable {contract.APPLIED_CONTROLLER}: {exc}')
            return
        self._write_decided(None, self._commands.announce(gid))

    def _write_parameter_event(self, log_ns: int, data: bytes) -> bool:
        """Write a parameter snapshot to /parameter_events; False if that is not recorded."""
        topic = self.topics.get(contract.PARAMETER_EVENTS)
        if topic is None:
            return False
        self._write(topic, log_ns, data)
        return True

    # ---- what the recorder writes itself ------------------------------------------------------
    def take_over_tf(self) -> None:
        """
        /tf and /tf_static are computed here: drop any subscription to them, publish them live.

        Published as robot_state_publisher would (tf2_ros's QoS: ``contract.tf_qos``, and
        ``latched_qos`` for /tf_static), so RViz or Foxglove attached over DDS see the robot;
        without the tf2_msgs Python package (python -m dodo_sim.tools.build_interfaces) they go
        to the bag and the live view only.
        """
        for name in (contract.TF, contract.TF_STATIC):
            topic = self.topics.get(name)
            if topic is not None and topic.subscription is not None:
                self.node.destroy_subscription(topic.subscription)
            if topic is None or not topic.count:
                topic = RecordedTopic(name, TfWriter.TYPE)
                topic.computed = True
                self.topics[name] = topic
        if self._tf_publishers:
            return
        try:
            cls = message_class(TfWriter.TYPE)
        except ValueError:
            self.node.get_logger().warning(
                f'no tf2_msgs Python package: the computed {contract.TF} and '
                f'{contract.TF_STATIC} go to the bag only, not to DDS (python -m '
                f'dodo_sim.tools.build_interfaces; docs/interfaces.md)')
            return
        self._tf_publishers = {
            contract.TF: self.node.create_publisher(cls, contract.TF, contract.tf_qos()),
            contract.TF_STATIC: self.node.create_publisher(cls, contract.TF_STATIC,
                                                           contract.latched_qos())}

    def write_computed(self, name: str, type_name: str, log_ns: int, data: bytes) -> None:
        """
        Write a message the recorder made (QoS as robot_state_publisher offers it).

        It goes to the bag, the live view and, for /tf and /tf_static, DDS.
        """
        topic = self.topics.get(name)
        if topic is None or not topic.computed:
            topic = RecordedTopic(name, type_name)
            topic.computed = True
            self.topics[name] = topic
        if topic.connection is None:
            topic.connection = computed_connection(self.writer, self.typestore, name,
                                                   self.node.resolve_topic_name(name), type_name)
        if not self._write_bag(topic.connection, int(log_ns), data):
            return
        topic.count += 1
        self.total += 1
        if self.live is not None:
            self._to_live(name, type_name, int(log_ns), data)
        publisher = self._tf_publishers.get(name)
        if publisher is not None:
            publisher.publish(bytes(data))

    def _live_topics(self) -> list:
        """Return (resolved topic, type, msgdef) of every recorded contract topic (live view)."""
        out = []
        for name in self.config.topics:
            type_name = contract.topic_type(name)
            if type_name is not None:
                msgdef, _ = self.typestore.generate_msgdef(type_name, ros_version=2)
                out.append((self.node.resolve_topic_name(name), type_name, msgdef))
        return out

    def _to_live(self, name: str, type_name: str, stamp: int, data: bytes) -> None:
        """
        Pass the message just written to the bag on to the live view.

        The live view gets the same bytes and the same msgdef.
        """
        is_clock = name == contract.CLOCK
        name = self.node.resolve_topic_name(name)      # viewers see the bag's (resolved) names
        if not self.live.has_topic(name):
            msgdef, _ = self.typestore.generate_msgdef(type_name, ros_version=2)
            self.live.add_topic(name, type_name, msgdef)
        self.live.log(name, data, stamp, is_clock=is_clock)

    def print_progress(self) -> None:
        """One machine-readable progress line on stdout (dodo hop's progress line reads it)."""
        clock = self.topics.get(contract.CLOCK)
        states = self.topics.get(contract.JOINT_STATES)
        t = self._sim_time_s if clock is not None and clock.count else None
        hops = ''
        if self._last_state is not None:       # the hopper's controller counts its hops
            state = self.typestore.deserialize_cdr(self._last_state,
                                                   'sensor_msgs/msg/JointState')
            if 'hops' in state.name:
                hops = f' hops={int(state.position[list(state.name).index("hops")])}'
        print(f'dodo recorder: progress sim_time_s={"-" if t is None else f"{t:.3f}"} '
              f'joint_states={states.count if states is not None else 0}{hops}', flush=True)

    def _write_bag(self, connection, log_ns: int, data: bytes) -> bool:
        """Write one message to the bag; False once the bag cannot be written (a full disk)."""
        if self.writer is None or self.write_failure is not None:
            return False
        try:
            self.writer.write(connection, log_ns, data)
        except OSError as exc:
            self._write_failed(exc)
            return False
        return True

    def _write_failed(self, exc: OSError) -> None:
        """
        Stop recording when the bag cannot be written (docs/running.md, "A full disk").

        One line for ``dodo hop`` (RECORDER_WRITE_FAILED), no drain: what is on disk stays as
        it is, recoverable with ``dodo bag recover`` (the bag is left without metadata.yaml).
        """
        if self.write_failure is not None:
            return
        path = getattr(getattr(self.writer, 'storage', None), 'path', None) or self.config.bag
        self.write_failure = write_failure(path, exc)
        print(f'{RECORDER_WRITE_FAILED}{self.write_failure}; recording stopped, the bag is '
              f'incomplete: dodo bag recover {self.config.bag}', flush=True)
        self.request_stop()
        self.drain_aborted = True

    def flush(self) -> None:
        """
        Close the open MCAP chunk and hand it to the OS.

        A SIGKILL then loses only what came after.
        """
        if self.writer is None or self.write_failure is not None:
            return
        try:
            flushed = flush_chunk(self.writer)
        except OSError as exc:
            self._write_failed(exc)
            return
        if flushed or self._flush_warned:
            return
        self._flush_warned = True
        self.node.get_logger().warning('this rosbags MCAP writer cannot close chunks early: a '
                                       'killed recorder loses up to 1 MiB of messages')

    # ---- lifecycle ---------------------------------------------------------------------------
    def request_stop(self, *_args) -> None:
        """First call: stop recording after draining the queues; a second call: stop draining."""
        if self.stop_requested:
            self.drain_aborted = True
        self.stop_requested = True

    def run(self, executor, drain_timeout_s: float = 4.0) -> None:
        """
        Spin until a stop is requested.

        Then it takes what is still queued (until 0.2 s without a message, at most
        ``drain_timeout_s``, or until a second stop request) and closes the bag.
        """
        while not self.stop_requested:
            executor.spin_once(timeout_sec=0.1)
        self._timer.cancel()
        self._flush_timer.cancel()
        self._snapshot_timer.cancel()
        if self._progress_timer is not None:
            self._progress_timer.cancel()
        deadline = time.monotonic() + drain_timeout_s
        quiet_since = time.monotonic()
        last_total = self.total
        while (time.monotonic() < deadline and time.monotonic() - quiet_since < 0.2
               and not self.drain_aborted):
            executor.spin_once(timeout_sec=0.02)
            if self.total != last_total:
                last_total = self.total
                quiet_since = time.monotonic()
        self.close()

    def close(self) -> None:
        """Close the bag (summary, metadata.yaml); after a write failure leave it as it is."""
        if self.writer is not None and self.write_failure is None:
            # the commands still waiting for the consumer's announcement (recorder_commands)
            self._write_decided(None, self._commands.close())
        writer, self.writer = self.writer, None
        if writer is not None:
            try:
                if self.write_failure is None:
                    writer.close()
                else:
                    writer.abort()
            except OSError as exc:
                self._write_failed(exc)
                try:
                    writer.abort()       # closes the file (what is on disk stays recoverable)
                except OSError:
                    pass
        if self.live is not None:
            self.live.stop()
            self.live = None
        self._stop_live_bridge()

    def _stop_live_bridge(self) -> None:
        if self._live_bridge is not None:
            self._live_bridge.stop()
            self._live_bridge = None

    def ignored_announcements(self) -> tuple:
        """Return (count, nodes) of the announcements not believed (not from a consumer)."""
        return self._announcements.ignored, list(self._announcements.ignored_nodes)

    def counts(self) -> dict[str, int]:
        return {name: t.count for name, t in self.topics.items()
                if t.subscription is not None or t.count or t.computed}


def _declare_config(node) -> RecorderConfig:
    values = {}
    defaults = RecorderConfig.__dataclass_fields__
    for f in fields(RecorderConfig):
        default = defaults[f.name].default
        if isinstance(default, tuple):        # string arrays (an empty default has no type)
            from rcl_interfaces.msg import ParameterDescriptor, ParameterType
            node.declare_parameter(f.name, list(default), ParameterDescriptor(
                type=ParameterType.PARAMETER_STRING_ARRAY))
            values[f.name] = tuple(node.get_parameter(f.name).get_parameter_value()
                                   .string_array_value)
            continue
        node.declare_parameter(f.name, default)
        values[f.name] = node.get_parameter(f.name).value
    return RecorderConfig(**values)


def main(args: Sequence[str] | None = None) -> int:
    import rclpy
    from rclpy.signals import SignalHandlerOptions

    # a stop request that arrives while starting up is kept and honoured once the bag is open
    early_stop = []
    signal.signal(signal.SIGINT, lambda *_: early_stop.append(True))
    signal.signal(signal.SIGTERM, lambda *_: early_stop.append(True))
    rclpy.init(args=args, signal_handler_options=SignalHandlerOptions.NO)
    node = rclpy.create_node('recorder')
    recorder = None
    try:
        from rosbags.rosbag2 import WriterError
        try:
            config = _declare_config(node)
            recorder = Recorder(node, config)
        except (ValueError, WriterError) as exc:
            print(f'dodo recorder: error: {exc}', file=sys.stderr)
            return 2
        except OSError as exc:
            if exc.errno not in DISK_FULL_ERRNOS:
                raise
            # a full disk while creating the bag
            print(f'{RECORDER_WRITE_FAILED}{write_failure(exc.filename or "the bag", exc)}',
                  flush=True)
            return 1
        signal.signal(signal.SIGINT, recorder.request_stop)
        signal.signal(signal.SIGTERM, recorder.request_stop)
        if early_stop:
            recorder.request_stop()
        if config.executor == 'events':
            from rclpy.experimental import EventsExecutor
            executor = EventsExecutor()
        else:
            from rclpy.executors import SingleThreadedExecutor
            executor = SingleThreadedExecutor()
        executor.add_node(node)
        if recorder.live is not None:
            print(f'dodo recorder: live view {recorder.live.address}', flush=True)
        print(f'dodo recorder: ready {config.bag}', flush=True)
        recorder.run(executor)
        counts = recorder.counts()
        executor.shutdown()
        if recorder.write_failure is not None:
            print(f'dodo recorder: NOT closed {config.bag} ({recorder.write_failure}): '
                  + ', '.join(f'{k}={v}' for k, v in counts.items()), flush=True)
            return 1
        print(f'dodo recorder: closed {config.bag}: '
              + ', '.join(f'{k}={v}' for k, v in counts.items()), flush=True)
        ignored, nodes = recorder.ignored_announcements()
        if ignored:
            print(f'dodo recorder: ignored {ignored} announcement(s) on '
                  f'{contract.APPLIED_CONTROLLER} from {", ".join(nodes) or "-"}', flush=True)
        return 0
    finally:
        if recorder is not None:
            recorder.close()
        node.destroy_node()
        if rclpy.ok():
            rclpy.shutdown()


if __name__ == '__main__':
    sys.exit(main())
