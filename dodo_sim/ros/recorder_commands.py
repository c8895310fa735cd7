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

Only the consumer is believed (:class:`AnnouncementFilter`): anyone can publish on
``/simulator/controller``, so the recorder takes an announcement only from a publisher that the
graph shows on a command consumer node (``simulator`` or ``driver`` in the recorder's
namespace, ``contract.COMMAND_CONSUMER_NODES``); any other is counted, named once and left out
of the bag (a stray's announcement would otherwise route its own commands to
``/joint_commands``, or mark a bag as the work of an external controller).
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


ACCEPT, IGNORE, UNKNOWN = 'accept', 'ignore', 'unknown'
#: Discovery periods an announcement whose publisher is not on the graph yet is kept before it
#: is ignored (the graph lists a publisher at the latest when its messages match).
UNKNOWN_PERIODS = 25
#: Announcements kept while their publisher is not on the graph yet.
UNKNOWN_LIMIT = 16


class AnnouncementFilter:
    """
    Believe an announcement of the applied controller only from a command consumer node.

    Inputs:
        consumers: full names of the nodes whose announcements count (``/simulator``,
            ``/driver`` in the recorder's namespace).
    """

    def __init__(self, consumers, unknown_periods: int = UNKNOWN_PERIODS,
                 unknown_limit: int = UNKNOWN_LIMIT):
        self.consumers = frozenset(consumers)
        self.ignored = 0                        # announcements not believed
        self.ignored_nodes: list = []           # their nodes, each once (at most 16)
        self.pending: collections.deque = collections.deque(maxlen=unknown_limit)
        self._unknown_periods = unknown_periods

    def judge(self, gid: bytes, publishers) -> str:
        """
        Return ACCEPT, IGNORE or UNKNOWN for an announcement from publisher ``gid``.

        ``publishers``: ``(node, gid)`` of every publisher of the announcement topic on the
        graph (node '': not known yet). UNKNOWN: its publisher or its node is not on the graph
        (yet).
        """
        for node, endpoint_gid in publishers:
            if gid and same_publisher(gid, endpoint_gid):
                if not node:
                    return UNKNOWN
                if node in self.consumers:
                    return ACCEPT
                self.ignored += 1
                if node not in self.ignored_nodes and len(self.ignored_nodes) < 16:
                    self.ignored_nodes.append(node)
                return IGNORE
        return UNKNOWN

    def keep(self, item) -> None:
        """Keep an UNKNOWN announcement (any object) to judge again later."""
        self.pending.append([self._unknown_periods, item])

    def again(self, gid_of, publishers) -> tuple:
        """
        Judge the kept announcements once more: one discovery period passed.

        Returns ``(accepted, ignored)`` items in arrival order; ``gid_of`` gives the publisher
        of an item. One kept past its periods is ignored (counted).
        """
        accepted, ignored, kept = [], [], collections.deque(maxlen=self.pending.maxlen)
        for entry in self.pending:
            verdict = self.judge(gid_of(entry[1]), publishers)
            entry[0] -= 1
            if verdict is ACCEPT:
                accepted.append(entry[1])
            elif verdict is IGNORE:
                ignored.append(entry[1])
            elif entry[0] <= 0:
                self.ignored += 1
                ignored.append(entry[1])
            else:
                kept.append(entry)
        self.pending = kept
        return accepted, ignored

    def consumer_present(self, publishers) -> bool:
        """Return whether a command consumer publishes announcements on the graph."""
        return any(node in self.consumers for node, _ in publishers)


__all__ = ['PENDING_LIMIT', 'CommandRouter', 'same_publisher', 'AnnouncementFilter', 'ACCEPT',
           'IGNORE', 'UNKNOWN', 'UNKNOWN_PERIODS']
