# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
The live view's server with a client that stops reading (no ROS, no run).

A slow viewer must lose frames on its own connection, never slow the one who logs (the recorder,
whose bag write comes first): :meth:`LiveView.log` returns at once whatever the client does, the
server keeps the client's newest ``backlog`` messages and drops the oldest (foxglove-sdk's
``message_backlog_size``). The client speaks the Foxglove WebSocket protocol with ``websockets``
(test/foxglove_client.py's subprotocols and opcodes).
"""
import contextlib
import json
import struct
import time

from foxglove_client import OP_MESSAGE_DATA, SUBPROTOCOLS
import pytest

pytest.importorskip('foxglove')

TOPIC = '/joint_states'
MESSAGES, PAYLOAD_BYTES, BACKLOG = 3000, 10_000, 16


def _subscribe(ws) -> int:
    """Read until the topic is advertised, subscribe to it; return the subscription id."""
    deadline = time.monotonic() + 30.0
    while time.monotonic() < deadline:
        frame = ws.recv(timeout=5.0)
        if isinstance(frame, str) and json.loads(frame)['op'] == 'advertise':
            for channel in json.loads(frame)['channels']:
                if channel['topic'] == TOPIC:
                    ws.send(json.dumps({'op': 'subscribe', 'subscriptions': [
                        {'id': 1, 'channelId': channel['id']}]}))
                    return 1
    raise AssertionError(f'{TOPIC} was never advertised')


@contextlib.contextmanager
def _subscribed_client(view):
    """Yield a protocol client subscribed to TOPIC once the server has a sink for it."""
    from websockets.sync.client import connect
    with connect(view.address, subprotocols=SUBPROTOCOLS, open_timeout=10, max_size=None) as ws:
        _subscribe(ws)
        stream = view._streams[TOPIC]
        deadline = time.monotonic() + 30.0
        while not stream.channel.has_sinks() and time.monotonic() < deadline:
            time.sleep(0.01)
        assert stream.channel.has_sinks()
        yield ws


def test_a_client_that_stops_reading_loses_its_oldest_frames_and_never_blocks_the_logger():
    from dodo_sim.tools.live_view import LiveView
    view = LiveView(host='127.0.0.1', port=0, max_rate_hz=0.0, backlog=BACKLOG)
    view.start()
    try:
        view.add_topic(TOPIC, 'sensor_msgs/msg/JointState', 'float64[] position\n')
        with _subscribed_client(view) as ws:
            time.sleep(0.2)           # the subscription in effect on the server's side too
            # the client reads nothing while 30 MB are logged: far beyond the socket buffers
            started = time.monotonic()
            for k in range(MESSAGES):
                view.log(TOPIC, k.to_bytes(4, 'little') + bytes(PAYLOAD_BYTES - 4), bag_ns=k)
            logging_s = time.monotonic() - started
            received = []
            while True:
                try:
                    frame = ws.recv(timeout=2.0)
                except TimeoutError:
                    break
                if isinstance(frame, bytes) and frame[0] == OP_MESSAGE_DATA:
                    subscription, bag_ns = struct.unpack_from('<IQ', frame, 1)
                    assert subscription == 1
                    received.append(int.from_bytes(frame[13:17], 'little'))
                    assert bag_ns == received[-1]          # log time = bag time (no /clock)
    finally:
        view.stop()
    assert view.counts()[TOPIC] == (MESSAGES, 0)            # every message handed to the server
    assert logging_s < 10.0, logging_s                       # never waited for the client
    assert 0 < len(received) < MESSAGES, len(received)      # the client lost frames ...
    assert received == sorted(received)                      # ... in order, its oldest first
    assert received[-1] == MESSAGES - 1                      # and still got the newest


def test_topics_given_to_start_are_advertised_to_a_client_before_it_can_subscribe():
    """
    Channels created before the server listens reach a client in its first advertisement.

    foxglove-sdk (<= 0.30.3) registers a channel created while a client is connected for that
    client only after queueing its advertisement, so a client that subscribes at once can be
    told "Unknown channel ID" (seen once in five ``dodo walk --live`` runs on a loaded machine).
    A client that connects after the channel exists is registered before its messages are read:
    its subscription always takes, and it gets the messages logged next, with log time 0 until
    the first /clock in a simulated run (foxglove_bridge's clock before /clock).
    """
    from dodo_sim.tools.live_view import LiveView
    view = LiveView(host='127.0.0.1', port=0, max_rate_hz=0.0, sim_time=True)
    view.start([(TOPIC, 'sensor_msgs/msg/JointState', 'float64[] position\n')])
    statuses, received = [], []
    try:
        with _subscribed_client(view) as ws:
            view.log(TOPIC, b'before the first clock', bag_ns=123_456_789)
            deadline = time.monotonic() + 30.0
            while time.monotonic() < deadline and not received:
                try:
                    frame = ws.recv(timeout=1.0)
                except TimeoutError:
                    continue
                if isinstance(frame, str):
                    statuses.append(json.loads(frame))
                elif frame[0] == OP_MESSAGE_DATA:
                    received.append(struct.unpack_from('<IQ', frame, 1) + (frame[13:],))
    finally:
        view.stop()
    assert not [s for s in statuses if s.get('op') == 'status' and s.get('level') == 2]
    assert received == [(1, 0, b'before the first clock')]
