# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
A Foxglove WebSocket protocol client for the tests.

It speaks ``foxglove.websocket.v1`` with the ``websockets`` library and is written from the
protocol spec, not from our server's code.

Protocol (github.com/foxglove/ws-protocol, docs/spec.md): the client connects with the
subprotocol ``foxglove.websocket.v1``; the server sends JSON ``serverInfo`` and ``advertise``
(``channels``: id, topic, encoding, schemaName, schema, schemaEncoding); the client sends JSON
``subscribe`` (``subscriptions``: id, channelId); the server sends binary ``messageData``:
opcode 0x01, uint32 subscription id, uint64 log time (ns), payload (little-endian); and binary
``time`` (opcode 0x02, uint64 ns) with the ``time`` capability.
"""
from __future__ import annotations

from dataclasses import dataclass, field
import json
import socket
import struct
import time

#: the Foxglove app offers both; foxglove-sdk >= 0.30 accepts only the newer name
SUBPROTOCOLS = ['foxglove.sdk.v1', 'foxglove.websocket.v1']
OP_MESSAGE_DATA, OP_TIME = 0x01, 0x02


def free_port() -> int:
    """Return a TCP port on 127.0.0.1 that nothing listens on now (for a server under test)."""
    with socket.socket() as probe:
        probe.bind(('127.0.0.1', 0))
        return probe.getsockname()[1]


@dataclass
class Received:
    server_info: dict | None = None
    channels: dict = field(default_factory=dict)          # channel id -> advertised channel
    messages: dict = field(default_factory=dict)          # topic -> [(log_time_ns, payload)]
    times: list = field(default_factory=list)
    remote_address: tuple | None = None
    closed: str = ''                                      # why the connection ended

    def summary(self) -> str:
        """Messages per topic, time messages, how it ended: for assertion messages."""
        counts = {topic: len(m) for topic, m in self.messages.items()}
        return f'{counts}, {len(self.times)} time message(s), ended: {self.closed}'


def watch(url: str, topics, seconds: float, connect_timeout: float = 30.0,
          read_delay_s: float = 0.0, leave_after: int | None = None) -> Received:
    """
    Connect (retrying until ``connect_timeout``).

    Subscribe to ``topics`` as soon as they are advertised, and collect for ``seconds`` or until
    the server closes the connection. ``read_delay_s``: sleep this long after each received frame
    (a slow client); ``leave_after``: disconnect after this many messages.
    """
    from websockets.exceptions import ConnectionClosed
    from websockets.sync.client import connect
    deadline = time.monotonic() + connect_timeout
    while True:
        try:
            ws = connect(url, subprotocols=SUBPROTOCOLS, open_timeout=5, max_size=None)
            break
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.1)
    got = Received(remote_address=ws.socket.getpeername())
    subscribed: dict[int, str] = {}
    end = time.monotonic() + seconds
    with ws:
        while time.monotonic() < end:
            try:
                frame = ws.recv(timeout=max(0.01, end - time.monotonic()))
            except TimeoutError:
                got.closed = f'nothing for {seconds} s'
                break
            except ConnectionClosed as exc:
                got.closed = f'closed by the server ({exc})'
                break
            if isinstance(frame, str):
                msg = json.loads(frame)
                if msg['op'] == 'serverInfo':
                    got.server_info = msg
                elif msg['op'] == 'advertise':
                    subs = []
                    for ch in msg['channels']:
                        got.channels[ch['id']] = ch
                        if ch['topic'] in topics:
                            sub_id = len(subscribed) + 1
                            subscribed[sub_id] = ch['topic']
                            subs.append({'id': sub_id, 'channelId': ch['id']})
                    if subs:
                        ws.send(json.dumps({'op': 'subscribe', 'subscriptions': subs}))
                continue
            if frame[0] == OP_MESSAGE_DATA:
                sub_id, log_time = struct.unpack_from('<IQ', frame, 1)
                got.messages.setdefault(subscribed[sub_id], []).append((log_time, frame[13:]))
                if leave_after is not None and sum(map(len, got.messages.values())) >= leave_after:
                    break
            elif frame[0] == OP_TIME:
                got.times.append(struct.unpack_from('<Q', frame, 1)[0])
            if read_delay_s:
                time.sleep(read_delay_s)
    return got
