# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
The simulator's start gate as a rule (:mod:`dodo_sim.ros.start_gate`), on fake graph facts.

It asks only what the exchange needs and names what is missing (issue 28): a matched command
publisher, a controller that reads the state topic, every subscription of a state topic matched
(a topic the external node never subscribes to is not waited for), and the recorder's copy of
every configuration.
"""
from dodo_sim.ros.start_gate import (configurations_recorded, CONVENTION_NEEDS, Endpoint,
                                     GraphFacts, NEEDS, StartGate, TopicFacts, waiting_text)

JS, CMD, WRENCH, CLOCK = ('sensor_msgs/msg/JointState', 'sensor_msgs/msg/JointState',
                          'geometry_msgs/msg/WrenchStamped', 'rosgraph_msgs/msg/Clock')


def facts(states=None, publishers=(), command_matched=None, recorder=False, recorded=()):
    """
    Return the graph of an external controller ``/my_ctrl`` beside a recorder.

    ``states``: topic -> (subscriber nodes, matched count), defaults: everything matched.
    """
    default = {'/joint_states': (['/recorder', '/my_ctrl'], 2),
               '/clock': (['/recorder'], 1), '/foot_contact': (['/recorder'], 1)}
    default.update(states or {})
    types = {'/joint_states': JS, '/clock': CLOCK, '/foot_contact': WRENCH}
    topics = tuple(TopicFacts(name, types[name], tuple(
        e if isinstance(e, Endpoint) else Endpoint(e, types[name]) for e in nodes), matched)
        for name, (nodes, matched) in default.items())
    pubs = tuple(p if isinstance(p, Endpoint) else Endpoint(p, CMD) for p in publishers)
    matched = len(pubs) if command_matched is None else command_matched
    return GraphFacts(states=topics, command=TopicFacts('/joint_commands', CMD, pubs, matched),
                      node='/simulator', recorder=recorder, recorded=frozenset(recorded))


def test_without_a_command_publisher_it_names_the_topic_type_and_qos():
    missing = StartGate(min_subscribers=1).missing(facts())
    assert missing == ['a publisher of /joint_commands (sensor_msgs/JointState, reliable) — '
                       'none on the graph']
    assert waiting_text(missing).startswith('waiting for: a publisher of /joint_commands')


def test_an_external_node_that_never_subscribes_to_clock_or_the_foot_is_not_waited_for():
    assert StartGate(min_subscribers=1).missing(facts(publishers=['/my_ctrl'])) == []


def test_a_topic_the_controller_subscribes_to_waits_until_matched_and_says_who():
    graph = facts(publishers=['/my_ctrl'],
                  states={'/foot_contact': (['/recorder', '/my_ctrl'], 1)})
    assert StartGate(min_subscribers=1).missing(graph) == [
        '/foot_contact (geometry_msgs/WrenchStamped): /my_ctrl, /recorder subscribe, not '
        'matched yet (1 of 2 matched)']


def test_the_controller_must_read_the_state_topic():
    graph = facts(publishers=['/my_ctrl'], states={'/joint_states': (['/recorder'], 1)})
    (missing,) = StartGate(min_subscribers=1).missing(graph)
    assert missing == ('a subscriber of /joint_states (sensor_msgs/JointState) for the '
                       'controller: /my_ctrl publish(es) /joint_commands but does not '
                       'subscribe to it (a controller answers each state)')
    split = facts(publishers=['/my_ctrl'],
                  states={'/joint_states': (['/recorder', '/my_reader'], 2)})
    assert StartGate(min_subscribers=1).missing(split) == []      # read by another node


def test_nodes_the_graph_does_not_name_yet_are_not_taken_for_the_controller_reading():
    # '' is an endpoint whose node the graph has not named yet (runtime.endpoint_node): an
    # unnamed state reader is not the unnamed command publisher
    graph = facts(publishers=[''], states={'/joint_states': (['/recorder', ''], 1)})
    assert StartGate(min_subscribers=2).missing(graph)[0].startswith(
        'a subscriber of /joint_states')


def test_a_stray_publisher_beside_the_controller_is_not_waited_for():
    graph = facts(publishers=['/my_ctrl', '/stray'])
    assert StartGate(min_subscribers=1).missing(graph) == []


def test_wrong_type_and_best_effort_publishers_are_named_as_never_matching():
    graph = facts(publishers=[Endpoint('/a', 'std_msgs/msg/Float64MultiArray'),
                              Endpoint('/b', CMD, reliable=False)], command_matched=0,
                  states={'/joint_states': (['/recorder', '/a', '/b'], 3)})
    (missing,) = StartGate(min_subscribers=1).missing(graph)
    assert '/a publishes std_msgs/Float64MultiArray: another type' in missing
    assert '/b publishes best effort: the simulator reads reliably' in missing


def test_a_publisher_on_the_graph_but_not_matched_yet_is_waited_for():
    (missing,) = StartGate(min_subscribers=1).missing(facts(publishers=['/my_ctrl'],
                                                            command_matched=0))
    assert missing.endswith('— /my_ctrl publishes, not matched yet')


def test_realtime_does_not_wait_for_a_command_publisher():
    assert StartGate(min_subscribers=1, lockstep=False).missing(facts()) == []


def test_min_subscribers_counts_the_graphs_own_nodes_not_on_the_graph_yet():
    graph = facts(publishers=['/my_ctrl'], states={'/clock': ([], 0)})
    assert StartGate(min_subscribers=1).missing(graph) == [
        '/clock (rosgraph_msgs/Clock): 1 more subscriber(s) (min_subscribers = 1; subscribed '
        'now: nobody)']
    assert StartGate(min_subscribers=0).missing(graph) == []


def test_a_transient_local_subscription_is_not_waited_for_but_named_for_the_controller():
    stuck = Endpoint('/my_ctrl', WRENCH, transient_local=True)
    echo = Endpoint('/echo', WRENCH, transient_local=True)
    graph = facts(publishers=['/my_ctrl'], states={'/foot_contact': (['/recorder', echo], 1)})
    assert StartGate(min_subscribers=1).missing(graph) == []
    graph = facts(publishers=['/my_ctrl'], states={'/foot_contact': (['/recorder', stuck], 1)})
    (missing,) = StartGate(min_subscribers=1).missing(graph)
    assert 'transient-local durability' in missing and '/my_ctrl' in missing


def test_the_recorder_must_hold_the_configuration_of_the_simulator_and_the_controller():
    graph = facts(publishers=['/my_ctrl'], recorder=True, recorded=['/simulator'])
    assert StartGate(min_subscribers=1).missing(graph) == [
        'the recorder to hold the parameters of /my_ctrl (every configuration is in the bag '
        'before t = 0)']
    done = facts(publishers=['/my_ctrl'], recorder=True, recorded=['/simulator', '/my_ctrl'])
    assert StartGate(min_subscribers=1).missing(done) == []


def test_a_convention_adds_its_own_need():
    def clock_followed(gate, graph):
        clock = next(t for t in graph.states if t.name == '/clock')
        readers = {e.node for e in clock.endpoints}
        return [f'{node} to subscribe to /clock' for node in graph.controllers()
                if node not in readers]

    gate = StartGate(min_subscribers=1, needs=NEEDS + (clock_followed,))
    assert gate.missing(facts(publishers=['/my_ctrl'])) == ['/my_ctrl to subscribe to /clock']
    assert configurations_recorded in NEEDS
    from dodo_sim.ros.node_config import COMMAND_CONVENTIONS
    assert set(CONVENTION_NEEDS) == set(COMMAND_CONVENTIONS)      # one entry per convention


def test_an_optional_contact_topic_waits_only_for_its_own_subscriptions():
    """ros2_control: a controller_manager reads no contact topic (docs/ros2_control.md)."""
    def graph(contact_nodes, matched):
        plain = facts(publishers=['/my_ctrl'], states={'/foot_contact': (contact_nodes, matched)})
        states = tuple(TopicFacts(t.name, t.type_name, t.endpoints, t.matched,
                                  optional=t.name == '/foot_contact') for t in plain.states)
        return GraphFacts(states=states, command=plain.command)
    gate = StartGate(min_subscribers=1)
    assert gate.missing(graph([], 0)) == []                   # nobody reads it: not waited for
    assert gate.missing(graph(['/recorder'], 0)) == [         # a reader it has: matched first
        '/foot_contact (geometry_msgs/WrenchStamped): /recorder subscribes, not matched yet '
        '(0 of 1 matched)']
    assert gate.missing(graph(['/recorder'], 1)) == []
