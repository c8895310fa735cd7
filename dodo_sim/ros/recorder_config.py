# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
Parameters of the recorder node (:mod:`dodo_sim.ros.recorder`): :class:`RecorderConfig` (no rclpy).

ROS parameters of the same names override the defaults:

* ``bag`` (string, required): bag directory to create; it must not exist yet.
* ``topics`` (string array): topics to record; default :data:`DEFAULT_TOPICS`
  (:func:`dodo_sim.ros.contract.recorded_topics`: ``/clock``, ``/joint_states``,
  ``/foot_contact``, ``/joint_commands``, ``/effort_controller/commands``, ``/controller/state``,
  ``/controller/markers``, ``/robot_description``, ``/tf``, ``/tf_static``,
  ``/parameter_events``, ``/diagnostics``). Missing topics are fine.
* ``tf`` (``auto`` | ``compute`` | ``record``): where ``/tf`` and ``/tf_static`` come from.
  ``compute``: the recorder computes them from ``/joint_states`` and ``/robot_description``
  (:mod:`dodo_sim.ros.tf_frames`, robot_state_publisher's frames), writes them to the bag and
  publishes them live on DDS; ``record``: only what other nodes publish; ``auto`` (default):
  ``compute`` unless a ``/tf`` publisher (e.g. robot_state_publisher) is on the graph when the
  first joint state with a known robot description arrives. ``dodo hop`` and ``dodo walk``, whose
  node set has no robot_state_publisher, give ``compute``
  (:func:`dodo_sim.ros.graph.node_parameters`).
* ``tf_max_jump_s`` (double, s): a joint state stamped further ahead of the last ``/tf`` is a stray
  left out of ``/tf`` unless the next one continues from it.
* ``tf_period_s`` (double, s of sim time): at most one computed ``/tf`` message per period of the
  joint-state stamps (0: one per joint state).
* ``parameter_snapshots`` (bool): write every node's parameters into the bag (below).
* ``contact_topics`` (bool): also record every ``/<frame>_contact`` topic (WrenchStamped) that
  shows up on the graph, so any robot's contact frames are recorded with the default topics.
* ``flush_period_s`` (double, s): the open MCAP chunk is closed and flushed to disk at least this
  often, so a recorder killed with SIGKILL loses at most this much (``dodo bag recover``).
* ``queue_depth`` (int, messages): subscription history depth (KEEP_LAST, RELIABLE), big enough
  that no message is lost at 1 kHz when the recorder falls behind for a few seconds.
* ``discovery_period_s`` (double, s): how often topics not yet subscribed are looked up on the
    graph.
* ``executor`` (``events`` | ``single``): rclpy executor.  ``events`` (default,
  ``rclpy.experimental.EventsExecutor``) needs less than half the CPU of ``single`` at 1 kHz; it
  takes messages in arrival order and the bag time is the wall time (ns) at which the message is
  taken (rclpy 9.1's EventsExecutor cannot pass the DDS timestamps).
* ``timestamp`` (``send`` | ``receive``, only with ``executor: single``): the bag time is the
  publisher's DDS source timestamp (``send``: causal order across topics on one host) or the DDS
  reception time (``receive``, like ``ros2 bag record``).

"""
from __future__ import annotations

from dataclasses import dataclass

from dodo_sim.ros import contract

#: Topics recorded by default (the ROS contract, :mod:`dodo_sim.ros.contract`).
DEFAULT_TOPICS = contract.RECORDED_TOPICS

#: Message types fixed by the ROS graph contract (a ground-truth contact topic has none: it is
#: recorded once it shows up on the graph).
CONTRACT_TYPES = {topic: contract.topic_type(topic) for topic in DEFAULT_TOPICS
                  if contract.topic_type(topic) is not None}


@dataclass(frozen=True)
class RecorderConfig:
    """Recorder parameters (ROS parameters of the same names override them)."""

    #: bag directory to create (must not exist)
    bag: str = ''
    #: topics to record
    topics: tuple[str, ...] = DEFAULT_TOPICS
    #: subscription history depth, messages (KEEP_LAST, RELIABLE)
    queue_depth: int = 20000
    #: period of the graph lookup for topics not yet subscribed, s
    discovery_period_s: float = 0.2
    #: rclpy executor: 'events' (rclpy.experimental.EventsExecutor; bag time = wall time when
    #: the message is taken) or 'single' (SingleThreadedExecutor; bag time per ``timestamp``)
    executor: str = 'events'
    #: with executor 'single': 'send' (publisher source timestamp) or 'receive' (DDS reception)
    timestamp: str = 'send'
    #: source of /tf and /tf_static: 'auto', 'compute' (from /joint_states, also published
    #: live) or 'record'
    tf: str = 'auto'
    #: at most one computed /tf message per this period of joint-state stamps, s (0: every one)
    tf_period_s: float = 0.01
    #: a joint state stamped more than this ahead of the newest one used for /tf is taken as a
    #: stray (a stale publisher, a wrong clock) unless the next one continues from it, s
    tf_max_jump_s: float = 1.0
    #: write every discovered node's parameters to /parameter_events (new_parameters)
    parameter_snapshots: bool = True
    #: also record every contact topic (/<frame>_contact, WrenchStamped) seen on the graph
    contact_topics: bool = True
    #: the open MCAP chunk is written to disk at least this often, s (wall clock)
    flush_period_s: float = 0.25
    #: live view (dodo_sim.tools.live_view, docs/viewing.md): '' off, else 'PORT' or
    #: 'HOST:PORT' of a Foxglove WebSocket server streaming what is recorded (host default
    #: 127.0.0.1; port 0: any free one)
    live: str = ''
    #: live view: at most this many messages per wall-clock second on each channel, Hz (0: all)
    live_max_rate_hz: float = 60.0
    #: live view: per-topic limits overriding live_max_rate_hz, '/topic=HZ' (0: all)
    live_topic_rates: tuple[str, ...] = ('/diagnostics=5', '/controller/markers=30')
    #: live view: messages queued per client before its oldest are dropped
    live_backlog: int = 1024
    #: live view: also offer the run's parameters and services and accept client messages on
    #: simulator/push, simulator/force and estop (dodo_sim.tools.live_actions); false: watch only
    live_actions: bool = True
    #: print 'dodo recorder: progress sim_time_s=... joint_states=...' this often, s (wall
    #: clock; 0: never); dodo hop reads it for its progress line
    progress_period_s: float = 0.0

    def __post_init__(self):
        if not self.bag:
            raise ValueError("parameter 'bag' (bag directory to create) is required")
        if self.timestamp not in ('send', 'receive'):
            raise ValueError(
                f"parameter 'timestamp' must be 'send' or 'receive', got {self.timestamp!r}")
        if self.executor not in ('events', 'single'):
            raise ValueError(
                f"parameter 'executor' must be 'events' or 'single', got {self.executor!r}")
        if self.queue_depth < 1:
            raise ValueError(f"parameter 'queue_depth' must be >= 1, got {self.queue_depth}")
        if not self.discovery_period_s > 0.0:
            raise ValueError(
                f"parameter 'discovery_period_s' must be > 0, got {self.discovery_period_s}")
        if self.tf not in ('auto', 'compute', 'record'):
            raise ValueError(
                f"parameter 'tf' must be 'auto', 'compute' or 'record', got {self.tf!r}")
        if not self.tf_period_s >= 0.0:
            raise ValueError(f"parameter 'tf_period_s' must be >= 0 s, got {self.tf_period_s}")
        if not self.tf_max_jump_s > 0.0:
            raise ValueError(f"parameter 'tf_max_jump_s' must be > 0 s, got {self.tf_max_jump_s}")
        if not self.flush_period_s > 0.0:
            raise ValueError(
                f"parameter 'flush_period_s' must be > 0 s, got {self.flush_period_s}")
        if not self.live_max_rate_hz >= 0.0:
            raise ValueError(f"parameter 'live_max_rate_hz' must be >= 0 Hz, "
                             f'got {self.live_max_rate_hz}')
        if self.live_backlog < 1:
            raise ValueError(f"parameter 'live_backlog' must be >= 1, got {self.live_backlog}")
        if not self.progress_period_s >= 0.0:
            raise ValueError(f"parameter 'progress_period_s' must be >= 0 s, "
                             f'got {self.progress_period_s}')
        if self.live:
            from dodo_sim.tools.live_view import parse_address, parse_topic_rates
            parse_address(self.live)
            parse_topic_rates(self.live_topic_rates)


#: topics that publishers latch (TRANSIENT_LOCAL) by contract
LATCHED_TOPICS = (contract.ROBOT_DESCRIPTION, contract.TF_STATIC, contract.APPLIED_CONTROLLER)
