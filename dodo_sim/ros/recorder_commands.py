# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
Where the recorder writes a stamped command: applied or ignored (no rclpy).

The applied ones go to ``/joint_commands``, the others to the bag-only
``/joint_commands/ignored`` (docs/bags.md, "Applied commands"). The command consumer (the
simulator, or the hardware driver) announces on ``/simulator/controller`` the publisher whose
commands it applies, when it binds it
(:mod:`dodo_sim.ros.exchange`). A command from that publisher is recorded as applied; one from any
other publisher as ignored. Before the first announcement nothing was applied — the consumer
announces at the first command it applies — so the recorder cannot tell yet where a command goes:
it keeps it (at most ``limit``), and the announcement decides (a stray's NaN command sent before
the controller bound never lands in ``/joint_commands``, issue 27; the bag replays). Kept
commands are written with their own receive times when the announcement comes; at the end of
the bag, still undecided ones go to ``/joint_commands`` only if no announcer was ever on the graph
(a recorder beside some other graph: every command is applied there as far as it knows), else
to the ignored topic (an announcer that announced nothing applied nothing). Past ``limit``, the
oldest kept command is decided the same way at once.
"""
from __future__ import annotations

import collections

#: Commands kept while no announcement came (about 10 s at 1 kHz; ~100 bytes each).
PENDING_LIMIT = 10_000


def same_publisher(gid: bytes, applied: bytes) -> bool:
    """Return whether two publisher ids name the same publisher (an rmw may pad one)."""
    return not gid or gid[:len(applied)] == applied[:len(gid)]


class CommandRouter:
    """
    Decide, per stamped command, applied (True) or ignored (False) — or not yet (None).

    Inputs:
        announced_topic_recorded: the announcement topic is recorded (else every command is
            applied as far as the recorder knows: the rule of a recorder without it).
        limit: commands kept while undecided.
    """

    def __init__(self, announced_topic_recorded: bool, limit: int = PENDING_LIMIT):
        self.waits = announced_topic_recorded
        self.applied: bytes | None = None      # the announced publisher
        self.announcer_seen = False            # a publisher of the announcement was on the graph
        self.limit = limit
        self.pending: collections.deque = collections.deque()     # (stamp, data, gid)

    def route(self, stamp: int, data: bytes, gid: bytes) -> bool | None:
        """Return where this command goes: True applied, False ignored, None kept (undecided)."""
        applied = self.applied
        if applied is not None:
            return same_publisher(gid, applied)
        if not self.waits:
            return True
        self.pending.append((stamp, data, gid))
        return None

    def overflow(self) -> list:
        """Return ``[(applied, stamp, data)]`` of the kept commands past ``limit`` (oldest)."""
        out = []
        while len(self.pending) > self.limit:
            stamp, data, _ = self.pending.popleft()
            out.append((not self.announcer_seen, stamp, data))
        return out

    def announce(self, gid: bytes) -> list:
        """Take the announcement of ``gid``; return the kept commands decided, in order."""
        self.applied = gid
        self.announcer_seen = True
        out = [(same_publisher(g, gid), stamp, data) for stamp, data, g in self.pending]
        self.pending.clear()
        return out

    def close(self) -> list:
        """Return the commands still undecided at the end of the bag, decided (module docs)."""
        out = [(not self.announcer_seen, stamp, data) for stamp, data, _ in self.pending]
        self.pending.clear()
        return out


__all__ = ['PENDING_LIMIT', 'CommandRouter', 'same_publisher']
