# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
What the command consumers (simulator, hardware driver) say about their exchange.

:class:`ExchangeReports` receives the events of the exchange core (:mod:`dodo_sim.ros.exchange`)
and turns them into log lines naming nodes (a graph lookup, only on the rare events: a binding,
the first command of a refused publisher), the ``/simulator/controller`` announcement the
recorder reads (docs/bags.md) and immediate /diagnostics updates. The node it is given supplies
the graph (``get_publishers_info_by_topic``) and the logger; nothing here runs per step.
"""
from __future__ import annotations

import json

from dodo_sim import stamps
from dodo_sim.ros import contract, runtime
from dodo_sim.ros.exchange import ExchangeEvents, FAR_AHEAD_NS, MAX_PUBLISHERS


def publisher_node(node, topics, publisher: bytes) -> str | None:
    """
    Return the full name of the node whose publisher on ``topics`` has this id.

    '' when no such publisher is on the graph; None when it is but the graph has not named its
    node yet (runtime.endpoint_node).
    """
    for topic in topics:
        for endpoint in node.get_publishers_info_by_topic(topic):
            if runtime.endpoint_gid(endpoint)[:len(publisher)] == publisher:
                return runtime.endpoint_node(endpoint) or None
    return ''


def announcement(node_name: str, publisher: bytes, since_ns: int, hosted_node: str = '') -> str:
    """
    Return the JSON the ``/simulator/controller`` topic carries (docs/ros_contract.md).

    ``kind`` is ``hosted`` when the bound node is ``hosted_node`` (the full name of the graph's
    controller node; '' none), else ``external`` (docs/bags.md: replay refuses it).
    """
    kind = 'hosted' if hosted_node and node_name == hosted_node else 'external'
    return json.dumps({'node': node_name, 'gid': publisher.hex(), 'since_ns': since_ns,
                       'kind': kind})


def hosted_node_name(node, name: str) -> str:
    """Return the full name of the graph's controller node ``name`` beside ``node`` ('' none)."""
    return f'{node.get_namespace().rstrip("/")}/{name}' if name else ''


class ExchangeReports(ExchangeEvents):
    """
    The exchange events of a node, said in its log.

    Inputs:
        node: the rclpy node (graph, logger).
        throttle: its :class:`~dodo_sim.ros.runtime.WarnThrottle`.
        command_topics: the topics whose publishers can be the controller (name lookups).
        announce: ``f(text)`` publishing the announcement of a binding (None: not announced).
        far_ahead_hint: said after a refused command stamped far ahead (another clock).
        on_change: called when /diagnostics should show a change at once (None: nothing).
        hosted_node: full name of the graph's controller node ('' none): the announcement's
            ``kind``.
    """

    def __init__(self, node, throttle, command_topics, *, announce=None, far_ahead_hint='',
                 on_change=None, hosted_node: str = ''):
        self.node = node
        self.exchange = None            # set by the node once the exchange is built
        self._log = node.get_logger()
        self._throttle = throttle
        self._topics = tuple(command_topics)
        self._announce = announce
        self._far_hint = far_ahead_hint
        self._on_change = on_change
        self._hosted_node = hosted_node
        self._early_said = False
        self._nodes: dict = {}          # publisher id -> node name ('' not in the graph)

    def who(self, publisher: bytes | None) -> str:
        """Return 'node /x' (or 'publisher <id>') for a publisher id, '(none yet)' for None."""
        if publisher is None:
            return '(none yet)'
        name = self.exchange.names.get(publisher) if self.exchange is not None else ''
        return f'node {name}' if name else f'publisher {publisher.hex()}'

    def node_of(self, publisher: bytes) -> str:
        """Return the node of a publisher id, looked up in the graph once per id ('' unknown)."""
        name = self._nodes.get(publisher)
        if name is None:
            name = publisher_node(self.node, self._topics, publisher)
            if name is None:            # on the graph, not named yet: looked up again later
                return ''
            if name or len(self._nodes) < MAX_PUBLISHERS:
                self._nodes[publisher] = name
            if name and self.exchange is not None:
                self.exchange.name_publisher(publisher, name)
        return name

    def same_node(self, a: bytes, b: bytes) -> bool:
        """Return whether two publisher ids belong to one node (the same id, or one name)."""
        if a == b:
            return True
        name = self.node_of(a)
        return bool(name) and name == self.node_of(b)

    def _changed(self) -> None:
        if self._on_change is not None:
            self._on_change()

    def bound(self, publisher, previous, stamp_ns) -> None:
        name = self.node_of(publisher)
        if previous is not None:
            self._log.warning(f'commands now come from {self.who(publisher)} (the previous '
                              f'controller, {self.who(previous)}, sent nothing applicable for '
                              f'command_timeout)')
        else:
            self._log.info(f'controller: {self.who(publisher)} (the first publisher whose '
                           f'command answered a state; commands of any other are refused)')
        if self._announce is not None:
            self._announce(announcement(name, publisher, stamp_ns, self._hosted_node))
        self._changed()

    def foreign(self, publisher, stamp_ns, first) -> None:
        exchange = self.exchange
        if not first:
            self._throttle.warn('foreign', f'{exchange.counts.foreign} command(s) from '
                                f'publishers other than the controller refused (from '
                                f'{", ".join(exchange.foreign_nodes)})')
            return
        name = self.node_of(publisher)
        controller = exchange.controller
        if name and name == exchange.controller_node:
            self._log.warning(
                f'a second node named {name} sends commands (publisher {publisher.hex()}; the '
                f'controller is publisher {controller.hex()}): two controllers under one name. '
                f'Its commands are refused and recorded apart ({contract.IGNORED_COMMANDS} in '
                f"a bag); the run is the first one's")
        else:
            self._log.warning(
                f'commands from a second publisher, {self.who(publisher)} (stamp '
                f'{stamps.stamp_s(stamp_ns):.6f} s), refused: commands are taken from the '
                f'controller {self.who(controller)} only')
        self._changed()

    def future(self, publisher, stamp_ns, ahead_ns) -> None:
        exchange = self.exchange
        hint = self._far_hint if ahead_ns >= FAR_AHEAD_NS else ''
        self._throttle.warn('future', (
            f'refused a command of {self.who(publisher)} stamped {stamps.stamp_s(stamp_ns):.6f} '
            f's, {stamps.stamp_s(ahead_ns):.6f} s ahead of the newest state (t = '
            f'{stamps.stamp_s(exchange.newest_ns):.6f} s): it answers no state published '
            f'({exchange.counts.future} refused as future so far)' + hint))

    def early(self, publisher) -> None:
        if not self._early_said:
            self._early_said = True
            self.node_of(publisher)
            self._log.info(f'commands of {self.who(publisher)} before the first state are not '
                           f'applied (counted as early, not as foreign)')

    def paused(self, waited_s) -> None:
        self._changed()

    def resumed(self, waited_s, stamp_ns) -> None:
        self._log.info(f'the answer to the state of t = {stamps.stamp_s(stamp_ns):.3f} s came '
                       f'after {waited_s:.2f} s: simulated time resumes')

    def zero_torque(self) -> None:
        self._log.warning(f'no command computed within command_timeout = '
                          f'{self.exchange.command_timeout_s} s: zero torque')

    def commands_back(self) -> None:
        self._log.info('commands are back')

    def stale(self, age_ns, stale_steps) -> None:
        self._throttle.warn('stale', f'applied a command computed from a state '
                            f'{age_ns * 1e-6:.1f} ms old (max_command_age = '
                            f'{self.exchange.max_age_ns * 1e-6:.1f} ms); {stale_steps} stale '
                            f'step(s) so far')


__all__ = ['ExchangeReports', 'announcement', 'hosted_node_name', 'publisher_node']
