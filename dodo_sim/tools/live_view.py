# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
Live view: the recorder's messages on a Foxglove WebSocket server (``foxglove-sdk``).

As ``cdr`` with their ``ros2msg`` schemas — what foxglove_bridge serves on a ROS install.

The recorder (:mod:`dodo_sim.ros.recorder`, parameter ``live``) hands every message it writes
to the bag to :meth:`LiveView.log` with the CDR bytes it already holds and the message
definition it writes to the bag; nothing is serialised again. docs/viewing.md tells how to
watch a run with the Foxglove app.

Why a run never waits for a viewer: :meth:`LiveView.log` only hands the bytes to the SDK,
whose server keeps a bounded queue per client (``backlog`` messages) and drops that client's
oldest message when it is full; a slow client loses frames on its own connection, never in
the bag and never in the run. Nothing is logged on a channel no client subscribes to.

Time: in a simulated run every message goes out with the simulated time of the last /clock
as its log time (0 before the first /clock), and the server broadcasts that time (Foxglove's
``time`` capability, at most :data:`TIME_RATE_HZ` times a second), as foxglove_bridge does with
``use_sim_time``; without /clock (hardware) the log time is the bag time.

Rate limits (wall clock, per channel): a viewer needs far less than the 1 kHz of /joint_states;
``max_rate_hz`` applies to every topic but the ones a viewer must never miss (latched
/robot_description and /tf_static, /parameter_events), ``topic_rates`` overrides it per topic
(``/diagnostics=2``; 0: no limit). A latched topic's last message is sent again when a client
subscribes to it, so a viewer that connects mid-run still gets the robot's URDF.

Acting on the run (parameters, services, client publishing) is :mod:`dodo_sim.tools.live_actions`;
this module only hands the server's requests to it.

This module imports no rclpy.
"""
from __future__ import annotations

from dataclasses import dataclass, field
import errno
import logging
import socket
import struct
import sys
import threading
import time

#: Foxglove's default WebSocket port (foxglove_bridge's too).
DEFAULT_PORT = 8765
#: Loopback only unless another address is asked for.
DEFAULT_HOST = '127.0.0.1'
#: A latched topic's last message goes to a new subscriber again after each of these delays, ns
#: (the SDK may report a subscription before it takes effect, later still on a loaded machine:
#: a single re-send after 50 ms missed the client once in a CI run; a viewer takes a repeated
#: latched message, e.g. the URDF, as the same message again). Sent from the view's own thread:
#: before a simulation starts the recorder may log nothing for seconds.
RESEND_DELAYS_NS = (50_000_000, 300_000_000, 1_000_000_000, 3_000_000_000)
#: Time broadcasts (the ``time`` capability) per wall-clock second at most. The SDK queues them
#: on a client's control plane, whose overflow disconnects the client (foxglove-sdk
#: connected_client.rs ``send_control_msg``): one per /clock (1 kHz) cut off a client that
#: paused for about one second (measured: a loaded CI run). The app's clock needs display rate.
TIME_RATE_HZ = 30.0


#: Most log lines of the Foxglove SDK shown per second. It logs one line per malformed frame a
#: client sends (~32k lines/s from one client); the rest are counted and the count is said.
LOG_LINES_PER_S = 3


class ThrottledLog:
    """
    A logging filter (any callable is one): at most ``per_second`` records per wall second.

    The records it drops are counted; the next one it lets through says how many
    (``... (N more log lines suppressed)``), and :attr:`suppressed` holds those not said yet.
    """

    def __init__(self, per_second: int = LOG_LINES_PER_S, clock=time.monotonic):
        self.per_second = per_second
        self.clock = clock
        self.suppressed = 0
        self._second = None
        self._passed = 0

    def __call__(self, record: logging.LogRecord) -> bool:
        """Return whether ``record`` is shown; a shown one carries the count of the dropped."""
        second = int(self.clock())
        if second != self._second:
            self._second, self._passed = second, 0
        if self._passed >= self.per_second:
            self.suppressed += 1
            return False
        self._passed += 1
        if self.suppressed:
            record.msg = f'{record.getMessage()} ({self.suppressed} more log lines suppressed)'
            record.args = ()
            self.suppressed = 0
        return True


class LiveViewError(ValueError):
    """The live view cannot start (bad address, port taken); the message is one line."""


def parse_address(text: str) -> tuple[str, int]:
    """
    ``'PORT'``, ``'HOST:PORT'`` or ``''`` (default port) -> (host, port); port 0: any free one.

    LiveViewError on anything else.
    """
    text = str(text).strip()
    host, port_text = DEFAULT_HOST, text
    if ':' in text:
        host, _, port_text = text.rpartition(':')
        host = host.strip('[]') or DEFAULT_HOST
    if not port_text:
        return host, DEFAULT_PORT
    try:
        port = int(port_text)
    except ValueError:
        raise LiveViewError(f'live view address {text!r}: expected PORT or HOST:PORT') from None
    if not 0 <= port <= 65535:
        raise LiveViewError(f'live view port {port}: expected 0..65535')
    return host, port


def check_port_free(host: str, port: int) -> None:
    """
    Raise LiveViewError (one line) if ``host:port`` cannot be listened on now.

    That is when it is taken, or not an address of this machine. Port 0 is always free.
    """
    if port == 0:
        return
    family = socket.AF_INET6 if ':' in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((host, port))
        except OSError as exc:
            raise LiveViewError(_bind_error(host, port, exc)) from None


def _bind_error(host: str, port: int, exc: OSError) -> str:
    if exc.errno == errno.EADDRINUSE:
        return (f'live view: port {port} on {host} is taken (another dodo run or a Foxglove '
                f'bridge?); choose another with --live PORT, or --live 0 for any free port')
    return f'live view: cannot listen on {host}:{port} ({exc.strerror or exc})'


def parse_topic_rates(items) -> dict[str, float]:
    """``['/diagnostics=2', ...]`` -> ``{'/diagnostics': 2.0}`` (Hz, >= 0)."""
    rates = {}
    for item in items:
        topic, sep, value = str(item).partition('=')
        try:
            hz = float(value)
        except ValueError:
            hz = -1.0
        if not sep or not topic.startswith('/') or not hz >= 0.0:
            raise LiveViewError(f'live view rate {item!r}: expected /topic=HZ with HZ >= 0')
        rates[topic] = hz
    return rates


def clock_ns(cdr: bytes) -> int:
    """
    Return the time of a CDR ``rosgraph_msgs/msg/Clock`` in ns.

    The message has a 4-byte encapsulation header, int32 sec and uint32 nanosec.
    """
    sec, nanosec = struct.unpack_from('<iI' if cdr[1] == 1 else '>iI', cdr, 4)
    return sec * 1_000_000_000 + nanosec


@dataclass
class _Stream:
    channel: object
    min_period_ns: int           # 0: every message
    next_ns: int = 0             # wall time (monotonic) the next message may go out
    latched: bool = False
    last: tuple | None = None    # latched: (data, log_time) sent again to new subscribers
    sent: int = 0
    skipped: int = 0


@dataclass
class LiveView:
    """
    A Foxglove WebSocket server streaming what it is given (see module docs).

    Fields:
        host: address to listen on (127.0.0.1: this machine only).
        port: TCP port (0: any free one; :attr:`port` holds the one taken after start).
        max_rate_hz: per-channel limit, messages per wall-clock second (0: none).
        topic_rates: per-topic limits overriding ``max_rate_hz``, Hz (0: none).
        unlimited: topics never rate-limited.
        latched: topics whose last message a new subscriber gets at once.
        backlog: messages queued per client before its oldest are dropped.
        sim_time: the run has a /clock: every log time is the last /clock's time, 0 before the
            first one (foxglove_bridge with use_sim_time: a ROS clock that has not received
            /clock reads 0); else the bag time.
        actions: parameters, services and client publishing offered besides the topics
            (:class:`dodo_sim.tools.live_actions.LiveActions`); None: watch only.
    """

    host: str = DEFAULT_HOST
    port: int = DEFAULT_PORT
    max_rate_hz: float = 60.0
    topic_rates: dict = field(default_factory=dict)
    unlimited: tuple = ()
    latched: tuple = ()
    backlog: int = 1024
    name: str = 'dodo_sim'
    sim_time: bool = False
    actions: object = None

    def __post_init__(self):
        self._streams: dict[str, _Stream] = {}
        self._by_channel_id: dict[int, _Stream] = {}
        self._lock = threading.Lock()      # the server's thread re-sends latched messages
        self._sim_ns: int | None = None
        self._resend: dict[int, list] = {}    # channel id -> when (monotonic ns) to re-send
        self._resend_wakeup = threading.Condition(self._lock)
        self._resend_thread: threading.Thread | None = None
        self._stopping = False
        self._next_time_ns = 0          # wall time (monotonic) the next time broadcast may go
        self._server = None
        self._context = None
        self._log_handler: logging.Handler | None = None
        self._log_throttle = ThrottledLog()

    def _take_sdk_log(self) -> None:
        """
        Show the SDK's log lines (logger ``foxglove``) on stderr, throttled (ThrottledLog).

        Without a handler they reach logging's last resort, one line per malformed frame.
        """
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter('live view: %(message)s'))
        handler.addFilter(self._log_throttle)
        sdk = logging.getLogger('foxglove')
        sdk.addHandler(handler)
        sdk.propagate = False
        self._log_handler = handler

    def _release_sdk_log(self) -> None:
        if self._log_handler is None:
            return
        sdk = logging.getLogger('foxglove')
        sdk.removeHandler(self._log_handler)
        sdk.propagate = True
        if self._log_throttle.suppressed:
            self._log_handler.stream.write(f'live view: {self._log_throttle.suppressed} more log '
                                           f'lines of the Foxglove SDK suppressed\n')
            self._log_throttle.suppressed = 0
        self._log_handler = None

    # -- lifecycle ------------------------------------------------------------------------
    def start(self, topics=()) -> str:
        """
        Listen; returns the address to connect to (``ws://host:port``).

        ``topics``: (topic, type name, ros2msg definition) advertised before the server
        listens. A channel created while a client is connected reaches it in a race of
        foxglove-sdk (<= 0.30.3, ``connected_client.rs`` ``advertise_channels`` queues the
        advertisement before it registers the channel for that client): a client that subscribes
        at once can be told "Unknown channel ID" and gets nothing on that topic (measured: 1 run
        in 5 of ``dodo walk --live`` beside a CI run). Channels that exist when a client
        connects are registered before its messages are read. LiveViewError (one line) if the
        port is taken.
        """
        import foxglove
        from foxglove.websocket import Capability
        check_port_free(self.host, self.port)
        self._take_sdk_log()
        self._context = foxglove.Context()
        for topic, type_name, msgdef in topics:
            self.add_topic(topic, type_name, msgdef)
        try:
            self._server = foxglove.start_server(
                name=self.name, host=self.host, port=self.port, context=self._context,
                capabilities=[Capability.Time] + self._action_capabilities(),
                supported_encodings=['cdr'],
                server_listener=_listener_class()(self), message_backlog_size=self.backlog)
        except RuntimeError as exc:
            self._release_sdk_log()
            raise LiveViewError(f'live view: cannot listen on {self.host}:{self.port} '
                                f'({" ".join(str(exc).split())})') from None
        self.port = self._server.port
        if self.actions is not None:
            self.actions.attach(self._server)
        self._stopping = False
        self._resend_thread = threading.Thread(target=self._resend_loop, name='live-view-resend',
                                               daemon=True)
        self._resend_thread.start()
        return self.address

    def _action_capabilities(self) -> list:
        return self.actions.capabilities() if self.actions is not None else []

    @property
    def address(self) -> str:
        host = f'[{self.host}]' if ':' in self.host else self.host
        return f'ws://{host}:{self.port}'

    def stop(self) -> None:
        with self._lock:
            self._stopping = True
            self._resend_wakeup.notify()
        if self._resend_thread is not None:
            self._resend_thread.join()
            self._resend_thread = None
        if self.actions is not None:
            self.actions.detach()
        if self._server is not None:
            self._server.stop()
            self._server = None
        self._release_sdk_log()

    # -- messages -------------------------------------------------------------------------
    def add_topic(self, topic: str, type_name: str, msgdef: str) -> None:
        """Advertise ``topic`` (``pkg/msg/Name`` with its ros2msg definition, as in the bag)."""
        import foxglove
        if topic in self._streams or self._context is None:
            return
        schema = foxglove.Schema(name=type_name, encoding='ros2msg', data=msgdef.encode())
        channel = foxglove.Channel(topic, schema=schema, message_encoding='cdr',
                                   context=self._context)
        hz = self.topic_rates.get(topic, 0.0 if topic in self.unlimited else self.max_rate_hz)
        stream = _Stream(channel, int(1e9 / hz) if hz > 0 else 0,
                         latched=topic in self.latched)
        with self._lock:
            self._streams[topic] = stream
            self._by_channel_id[channel.id()] = stream

    def has_topic(self, topic: str) -> bool:
        return topic in self._streams

    def log(self, topic: str, data: bytes, bag_ns: int, is_clock: bool = False) -> None:
        """
        Hand one message to the server.

        It may be dropped here by the rate limit, or by the server for a client that is behind.
        ``bag_ns``: its bag time; ``is_clock``: a /clock message, whose time becomes the log time
        of what follows.
        """
        stream = self._streams.get(topic)
        if stream is None:
            return
        if is_clock:
            self._sim_ns = clock_ns(data)
        if self._sim_ns is not None:
            log_time = self._sim_ns
        else:
            log_time = 0 if self.sim_time else int(bag_ns)
        if stream.latched:
            with self._lock:
                stream.last = (bytes(data), log_time)
        if not stream.channel.has_sinks():
            return
        if stream.min_period_ns:
            now = time.monotonic_ns()
            if now < stream.next_ns:
                stream.skipped += 1
                return
            stream.next_ns = now + stream.min_period_ns
        stream.channel.log(bytes(data), log_time=log_time)
        stream.sent += 1
        if is_clock and self._server is not None:
            now = time.monotonic_ns()
            if now >= self._next_time_ns:
                self._next_time_ns = now + int(1e9 / TIME_RATE_HZ)
                self._server.broadcast_time(log_time)

    def _on_subscribe(self, channel_id: int) -> None:
        """
        Server thread: a client subscribed.

        A latched topic's last message goes out again from the view's thread after each of
        :data:`RESEND_DELAYS_NS` (the SDK may tell the listener before the subscription takes
        effect; measured: a message logged from here at once can miss the new subscriber). A
        channel not registered yet (the client answered the advertisement before
        :meth:`add_topic` returned) is scheduled too and looked up when due.
        """
        with self._lock:
            stream = self._by_channel_id.get(channel_id)
            if stream is None or stream.latched:
                now = time.monotonic_ns()
                self._resend[channel_id] = [now + delay for delay in RESEND_DELAYS_NS]
                self._resend_wakeup.notify()

    def _resend_loop(self) -> None:
        """Re-send latched messages when due, on the view's thread (see :meth:`_on_subscribe`)."""
        with self._lock:
            while not self._stopping:
                next_due = min((times[0] for times in self._resend.values()), default=None)
                if next_due is None:
                    self._resend_wakeup.wait()
                    continue
                wait_ns = next_due - time.monotonic_ns()
                if wait_ns > 0:
                    self._resend_wakeup.wait(wait_ns * 1e-9)
                    continue
                sends = self._take_due(time.monotonic_ns())
                self._lock.release()            # the SDK's log may wait on its server thread
                try:
                    for channel, (data, log_time) in sends:
                        channel.log(data, log_time=log_time)
                finally:
                    self._lock.acquire()

    def _take_due(self, now_ns: int) -> list:
        """
        Under the lock: the (channel, last message) pairs due at ``now_ns``; each once.

        Drops the delays that have passed. A channel that is not latched (known by now) is
        forgotten; one not registered yet or without a message yet waits for its next delay.
        """
        sends = []
        for cid, times in list(self._resend.items()):
            if times[0] > now_ns:
                continue
            rest = [at for at in times if at > now_ns]
            stream = self._by_channel_id.get(cid)
            if rest and (stream is None or stream.latched):
                self._resend[cid] = rest
            else:
                del self._resend[cid]
            if stream is not None and stream.latched and stream.last is not None:
                sends.append((stream.channel, stream.last))
        return sends

    def counts(self) -> dict[str, tuple[int, int]]:
        """Topic -> (messages handed to the server, messages skipped by the rate limit)."""
        return {t: (s.sent, s.skipped) for t, s in self._streams.items()}


def _listener_class():
    """foxglove-sdk's ServerListener (imported only when a live view starts)."""
    from foxglove.websocket import ServerListener

    class Listener(ServerListener):
        """Subscriptions here; parameters and client messages to the view's actions, if any."""

        def __init__(self, view: LiveView):
            self._view = view
            self._actions = view.actions

        def on_subscribe(self, client, channel) -> None:
            self._view._on_subscribe(channel.id)

        def on_get_parameters(self, client, param_names, request_id=None) -> list:
            return self._actions.get_parameters(param_names) if self._actions else []

        def on_set_parameters(self, client, parameters, request_id=None) -> list:
            return self._actions.set_parameters(parameters) if self._actions else []

        def on_client_advertise(self, client, channel) -> None:
            if self._actions:
                self._actions.on_client_advertise(client.id, channel)

        def on_client_unadvertise(self, client, client_channel_id) -> None:
            if self._actions:
                self._actions.on_client_unadvertise(client.id, client_channel_id)

        def on_message_data(self, client, client_channel_id, data) -> None:
            if self._actions:
                self._actions.on_message_data(client.id, client_channel_id, data)

    return Listener


__all__ = ['LiveView', 'LiveViewError', 'parse_address', 'parse_topic_rates', 'check_port_free',
           'clock_ns', 'DEFAULT_PORT', 'DEFAULT_HOST']
