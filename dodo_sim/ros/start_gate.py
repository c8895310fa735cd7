# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
The simulator's start gate: what must be on the graph before the first state, and what is missing.

No rclpy: the simulator node looks the graph up (:class:`GraphFacts`: the endpoints of its state
and command topics, the matched counts of its own writers and reader, the recorder's list of
recorded configurations) and asks :meth:`StartGate.missing`; an empty answer opens the gate. Each
missing item is one phrase naming the topic, the expected type and QoS and who is on it, e.g.::

    a publisher of /joint_commands (sensor_msgs/JointState, reliable) — none on the graph
    /foot_contact (geometry_msgs/WrenchStamped): /my_ctrl subscribes, not matched yet (1 of 2)

The rule (docs/ros_contract.md, "Any controller: the checklist"): the gate asks only what the
exchange needs, so an external node is waited for exactly as far as it takes part —

1. (lockstep) a publisher of the command topic, of the contract's type, with QoS the simulator's
   reader matches, matched;
2. the controller reads the state topic (``/joint_states``, or the convention's): a node
   publishing the command topic subscribes to it (or a subscriber beyond the graph's own
   ``min_subscribers`` does);
3. on every state topic (``/clock``, ``/joint_states``, each ``/<frame>_contact``) every
   subscription on the graph is matched, and at least ``min_subscribers`` (the graph's own
   nodes: a hosted controller, the recorder) — a topic nobody subscribes to (an external node
   that does not follow ``/clock`` or never reads the foot force) is not waited for; an
   *optional* topic (a contact topic beside a controller_manager, whose topic-based system reads
   joints only: docs/ros2_control.md) waits only for the subscriptions it has, never for
   ``min_subscribers``;
4. when a recorder announces the configurations it holds, it holds this node's and every command
   publisher's (the bag has every configuration before t = 0).
5. when a recorder runs, the sensor topics the simulator adds (``imu``, ``ground_truth/...``:
   docs/ros_contract.md "Sensors") have every subscription matched, one at least (the bag holds
   every reading from the first state on, so two runs of one seed give the same bag).

Each rule is a function ``need(gate, facts) -> [phrase, ...]`` in :data:`NEEDS`; a convention
that needs more (a controller_manager's started clock) has its own tuple in
:data:`CONVENTION_NEEDS` (``NEEDS + (its_need,)``), which the simulator hands to
:class:`StartGate`.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Sequence


@dataclass(frozen=True)
class Endpoint:
    """
    A publisher or subscription on the graph.

    Fields:
        node: full name of its node (``/ns/name``).
        type_name: message type as the graph lists it (``sensor_msgs/msg/JointState``).
        reliable: reliability RELIABLE (else BEST_EFFORT).
        transient_local: durability TRANSIENT_LOCAL (else VOLATILE).
    """

    node: str
    type_name: str
    reliable: bool = True
    transient_local: bool = False


@dataclass(frozen=True)
class TopicFacts:
    """
    One topic of the exchange as the graph shows it.

    Fields:
        name: resolved topic name (``/joint_states``).
        type_name: the contract's message type.
        endpoints: the other side on the graph: subscriptions of a state topic the simulator
            writes, publishers of the command topic it reads.
        matched: how many of them the simulator's own writer (reader) is matched with.
        optional: a state topic no reader is needed for (rule 3 without ``min_subscribers``).
    """

    name: str
    type_name: str
    endpoints: tuple = ()
    matched: int = 0
    optional: bool = False


@dataclass(frozen=True)
class GraphFacts:
    """
    What the simulator node saw on the graph at one look.

    Fields:
        states: the state topics it publishes, the one the controller must read first
            (``/joint_states`` or the convention's), then ``/clock`` and the contact topics.
        command: the command topic it reads (the controller publishes it).
        node: the simulator's full node name.
        recorder: a recorder announces the configurations it holds (``/recorder/configurations``
            has a publisher).
        recorded: the full names of the nodes whose configuration the recorder holds.
        sensors: the sensor topics beyond the states (``imu``, ``ground_truth/...``), written
            only when the robot has them (rule 5).
    """

    states: tuple
    command: TopicFacts
    node: str = '/simulator'
    recorder: bool = False
    recorded: frozenset = frozenset()
    sensors: tuple = ()

    def controllers(self) -> list:
        """Return the nodes publishing the command topic, sorted, each once."""
        return sorted({e.node for e in self.command.endpoints})


def short_type(type_name: str) -> str:
    """Return ``pkg/Name`` of ``pkg/msg/Name`` (as the contract document writes types)."""
    parts = type_name.split('/')
    return f'{parts[0]}/{parts[-1]}' if len(parts) == 3 else type_name


def _qos_text(reliable: bool) -> str:
    return 'reliable' if reliable else 'best effort'


@dataclass(frozen=True)
class StartGate:
    """
    The rule of the simulator's start gate (module docs).

    Inputs:
        min_subscribers: matched subscriptions every state topic needs at least (the graph's
            own nodes, counted by ``dodo_sim.ros.graph.min_subscribers``).
        lockstep: the first state waits for its answer, so a command publisher must be there.
        command_reliable: the simulator reads commands reliably (lockstep): a best-effort
            publisher never matches it.
        needs: the rules asked in order (:data:`NEEDS`).
    """

    min_subscribers: int = 1
    lockstep: bool = True
    command_reliable: bool = True
    needs: tuple = ()

    def missing(self, facts: GraphFacts) -> list:
        """Return what the gate still waits for, one phrase each (empty: open)."""
        out = []
        for need in self.needs or NEEDS:
            out += need(self, facts)
        return out


def command_publisher(gate: StartGate, facts: GraphFacts) -> list:
    """Rule 1: a matched publisher of the command topic, of the right type and QoS."""
    if not gate.lockstep:
        return []
    command = facts.command
    wanted = (f'a publisher of {command.name} ({short_type(command.type_name)}, '
              f'{_qos_text(gate.command_reliable)})')
    publishers = command.endpoints
    if not publishers:
        return [f'{wanted} — none on the graph']
    usable = [e for e in publishers if e.type_name == command.type_name
              and (e.reliable or not gate.command_reliable)]
    if usable and command.matched >= 1:
        return []
    said = []
    for e in publishers:
        if e.type_name != command.type_name:
            said.append(f'{e.node} publishes {short_type(e.type_name)}: another type, never '
                        f'matched')
        elif gate.command_reliable and not e.reliable:
            said.append(f'{e.node} publishes best effort: the simulator reads reliably, never '
                        f'matched')
        else:
            said.append(f'{e.node} publishes, not matched yet')
    return [f'{wanted} — ' + '; '.join(said)]


def controller_reads_states(gate: StartGate, facts: GraphFacts) -> list:
    """
    Rule 2: the controller reads the state topic.

    Met when a node publishing the command topic subscribes to it, or when it has a subscriber
    beyond the graph's own ``min_subscribers`` (a controller split into a reading and a
    publishing node); a stray publisher beside the controller is not waited for.
    """
    controllers = facts.controllers()
    if not facts.states or not controllers:
        return []
    state = facts.states[0]
    readers = {e.node for e in state.endpoints}
    if (readers & set(controllers)) - {''} or len(state.endpoints) > gate.min_subscribers:
        return []
    return [f'a subscriber of {state.name} ({short_type(state.type_name)}) for the '
            f'controller: {", ".join(controllers)} publish(es) {facts.command.name} but does '
            f'not subscribe to it (a controller answers each state)']


def subscribers_matched(gate: StartGate, facts: GraphFacts) -> list:
    """
    Rule 3: every compatible subscription of a state topic is matched, min_subscribers at least.

    A subscription the simulator's writer (reliable, volatile) can never match — one asking for
    transient-local durability — is not waited for, except a controller's, which is named.
    """
    controllers = set(facts.controllers())
    out = []
    for topic in facts.states:
        kind = short_type(topic.type_name)
        compatible = [e for e in topic.endpoints if not e.transient_local]
        for e in topic.endpoints:
            if e.transient_local and e.node in controllers:
                out.append(f'{topic.name} ({kind}): {e.node} subscribes with transient-local '
                           f"durability, which the simulator's volatile writer never matches")
        need = max(0 if topic.optional else gate.min_subscribers, len(compatible))
        if topic.matched >= need:
            continue
        nodes = sorted({e.node for e in compatible})
        if len(compatible) > topic.matched:
            who = ', '.join(nodes)
            verb = 'subscribes' if len(nodes) == 1 else 'subscribe'
            out.append(f'{topic.name} ({kind}): {who} {verb}, not matched yet '
                       f'({topic.matched} of {need} matched)')
        else:
            listed = ', '.join(nodes) if nodes else 'nobody'
            out.append(f'{topic.name} ({kind}): {need - topic.matched} more subscriber(s) '
                       f'(min_subscribers = {gate.min_subscribers}; subscribed now: {listed})')
    return out


def configurations_recorded(gate: StartGate, facts: GraphFacts) -> list:
    """Rule 4: the recorder holds this node's and every command publisher's configuration."""
    if not facts.recorder:
        return []
    missing = sorted(({facts.node} | set(facts.controllers())) - set(facts.recorded))
    return [f'the recorder to hold the parameters of {node} (every configuration is in the '
            f'bag before t = 0)' for node in missing]


def sensor_topics_recorded(gate: StartGate, facts: GraphFacts) -> list:
    """
    Rule 5: while a recorder runs, every sensor topic's subscriptions are matched, one at least.

    Nothing waits for them without a recorder (a controller reads the states, not the truth).
    """
    if not facts.recorder:
        return []
    out = []
    for topic in facts.sensors:
        compatible = [e for e in topic.endpoints if not e.transient_local]
        need = max(1, len(compatible))
        if topic.matched < need:
            listed = ', '.join(sorted({e.node for e in compatible})) or 'nobody'
            out.append(f'{topic.name} ({short_type(topic.type_name)}): the recorder to read it '
                       f'({topic.matched} of {need} matched; subscribed now: {listed})')
    return out


#: The rules of the stamped contract, asked in this order.
NEEDS: tuple = (command_publisher, controller_reads_states, subscribers_matched,
                configurations_recorded, sensor_topics_recorded)

#: The rules per ``command_convention`` of the simulator (a convention that needs more, e.g. a
#: controller_manager's started clock, adds its rule to its own entry).
CONVENTION_NEEDS: dict = {'stamped': NEEDS, 'ros2_control': NEEDS}

#: What a rule is: ``need(gate, facts) -> [phrase, ...]``.
Need = Callable[[StartGate, GraphFacts], Sequence[str]]


def waiting_text(missing: Sequence[str]) -> str:
    """Return the log line of what the gate waits for."""
    return 'waiting for: ' + '; '.join(missing)


__all__ = ['Endpoint', 'TopicFacts', 'GraphFacts', 'StartGate', 'NEEDS', 'CONVENTION_NEEDS',
           'Need', 'command_publisher', 'controller_reads_states', 'subscribers_matched',
           'configurations_recorded', 'sensor_topics_recorded', 'short_type', 'waiting_text']
