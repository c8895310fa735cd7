# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
Acting on a real run from the live view with Foxglove's own client (docs/viewing.md).

One ``dodo hop --namespace lv --live PORT`` run; the npm ``@foxglove/ws-protocol`` client
(test/foxglove_npm_actions.js, with Foxglove's rosmsg2 serialization; nothing of ours) sets the
controller's ``apex_height``, tries a value the node refuses and a read-only parameter, calls
``/lv/simulator/reset``, then floods the server (impulses, malformed messages, a refused
channel, malformed service calls) and waits for the simulated time to go on. The run is ended
with SIGINT once the client is done. What happened is read from the run's bag and output, not
from the live view: the controller's /lv/parameter_events and /lv/controller/state, the
simulator's /lv/joint_states and its log. The same run's viewer configurations (written for its
namespace) are compared with the topics of its bag.
"""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys

from conftest import ros_domain_id
from dodo_sim.ros import contract
from dodo_sim.tools import live_actions
from foxglove_client import free_port
from foxglove_npm import npm_client, start_npm_client
import numpy as np
import pytest

pytestmark = [pytest.mark.ros, pytest.mark.slow]

NAMESPACE = '/lv'
APEX_HEIGHT = 1.05       # m; config/hop.yaml has 1.2


def _env() -> dict:
    from conftest import REPO
    env = dict(os.environ, ROS_AUTOMATIC_DISCOVERY_RANGE='LOCALHOST', PYTHONUNBUFFERED='1')
    env['PYTHONPATH'] = os.pathsep.join(filter(None, [str(REPO), env.get('PYTHONPATH')]))
    env.pop('ROS_DOMAIN_ID', None)
    return env


@pytest.fixture(scope='module')
def run(tmp_path_factory):
    node_modules, why = npm_client()
    if node_modules is None:
        pytest.skip(why)
    bag = tmp_path_factory.mktemp('actions') / 'bag'
    port = free_port()
    hop = subprocess.Popen(
        [sys.executable, '-m', 'dodo_sim.tools.cli', 'hop', '--duration', '120', '--bag',
         str(bag), '--no-plots', '--domain-id', str(ros_domain_id()), '--namespace',
         NAMESPACE, '--live', str(port), '--wall-timeout', '240'],
        stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
        env=_env(), text=True, start_new_session=True)
    client = start_npm_client(node_modules, 'foxglove_npm_actions.js', f'ws://127.0.0.1:{port}',
                              NAMESPACE, str(APEX_HEIGHT), '120', '200')
    try:
        client_out, client_err = client.communicate(timeout=230)
    finally:
        client.kill()
        hop.send_signal(signal.SIGINT)       # the client is done: end the run
        hop_out = hop.communicate(timeout=120)[0]
    assert hop.returncode == 130, hop_out[-4000:]           # interrupted, bag closed
    assert client.returncode == 0, client_err
    got = json.loads(client_out)
    assert not got['errors'], (got['errors'], hop_out[-4000:])
    return got, bag, hop_out


def _bag(bag, *topics):
    from dodo_sim.tools.bag import read_bag
    return read_bag(bag, topics)


def test_the_live_view_offers_parameters_the_runs_services_and_client_publishing(run):
    got, _, _ = run
    assert {'time', 'parameters', 'parametersSubscribe', 'services', 'clientPublish'} <= set(
        got['serverInfo']['capabilities'])
    services = {s['name']: s for s in got['services']}
    reset = services[f'{NAMESPACE}/simulator/reset']
    assert reset['type'] == 'std_srvs/srv/Trigger'
    assert reset['response']['schema'] == 'bool success\nstring message\n'
    assert not [n for n in services if n.rsplit('/', 1)[1] in live_actions.PARAMETER_SERVICES]
    names = {p['name'] for p in got['parameters']['all']}
    assert {f'{NAMESPACE}/controller.apex_height', f'{NAMESPACE}/simulator.integrator'} <= names
    assert not [n for n in names if n.startswith(f'{NAMESPACE}/recorder.')]   # start-time only


def test_a_parameter_set_from_the_client_changes_the_controllers_set_point(run):
    got, bag, _ = run
    apex = {'name': f'{NAMESPACE}/controller.apex_height', 'value': APEX_HEIGHT,
            'type': 'float64'}
    assert got['parameters']['set'] == [apex]
    assert got['parameters']['after'] == [apex]
    data = _bag(bag, contract.PARAMETER_EVENTS, contract.CONTROLLER_STATE)
    changes = [(p.name, p.value.double_value) for e in data[contract.PARAMETER_EVENTS].messages
               if e.node == f'{NAMESPACE}/controller' for p in e.changed_parameters]
    assert changes == [('apex_height', APEX_HEIGHT)]        # once: the refused one is not
    states = data[contract.CONTROLLER_STATE].messages
    index = list(states[0].name).index('apex_height')
    assert states[0].position[index] == 1.2 and states[-1].position[index] == APEX_HEIGHT


def test_a_refused_set_comes_back_unchanged_with_the_nodes_reason(run):
    got, _, _ = run
    assert got['parameters']['bad'][0]['value'] == APEX_HEIGHT
    assert got['parameters']['readonly'] == [
        {'name': f'{NAMESPACE}/simulator.integrator', 'value': 'timestepping'}]
    statuses = [s['message'] for s in got['statuses']]
    # rclpy's own reasons (the range of the parameter's descriptor, its read_only flag)
    assert [s for s in statuses if f'refused by {NAMESPACE}/controller: Parameter apex_height '
            f'out of range' in s and 'value: -1.0' in s], statuses
    assert [s for s in statuses if f'refused by {NAMESPACE}/simulator: Trying to set a '
            f'read-only parameter: integrator.' in s], statuses


def test_reset_through_the_live_view_resets_the_simulator(run):
    got, bag, hop_out = run
    assert got['reset']['response']['success'] is True, got['reset']
    states = _bag(bag, contract.JOINT_STATES)[contract.JOINT_STATES].messages
    start = np.asarray(states[0].position)
    sent_ns = int(got['reset']['sentAtNs'])
    resets = [m.header.stamp.sec * 10**9 + m.header.stamp.nanosec for m in states[1:]
              if np.array_equal(np.asarray(m.position), start)]
    assert len(resets) == 1 and resets[0] >= sent_ns, (resets, sent_ns)
    events = [json.loads(line.split('simulation event: ', 1)[1]) for line in hop_out.splitlines()
              if 'simulation event: ' in line]
    assert [(e['event'], e['cause']) for e in events if e['event'] == 'reset'] == \
        [('reset', 'reset')], events


def test_a_flood_of_client_messages_is_bounded_and_the_run_goes_on(run):
    got, bag, hop_out = run
    flood = got['flood']
    assert flood['failures'] == flood['calls']          # every malformed call answered: failed
    pushes = hop_out.count('push on the base: [0.0, 0.0] N*s')
    rate = live_actions.LIMITS[contract.PUSH]
    assert 1 <= pushes <= rate.burst + rate.per_s * (flood['wallS'] + 1.0), (pushes, flood)
    assert int(got['times']['last']) >= int(got['times']['floodEnd']) + 500_000_000
    said = [line for line in hop_out.splitlines() if 'live view: ' in line]
    assert len(said) < 30, said[:40]                     # throttled, not a line per message
    clock = _bag(bag, contract.CLOCK)[contract.CLOCK].messages
    assert clock[-1].clock.sec * 10**9 + clock[-1].clock.nanosec >= int(got['times']['last'])


def test_a_namespaced_runs_viewer_configurations_name_only_topics_of_its_bag(run):
    import yaml
    from rosbags.rosbag2 import Reader
    _, bag, hop_out = run
    viewer = bag.parent / f'{bag.name}_viewer'
    assert f'viewer configurations for namespace {NAMESPACE}: {viewer}' in hop_out
    with Reader(bag) as reader:
        recorded = {c.topic for c in reader.connections}
    named = set()
    layout = (viewer / 'foxglove_layout.json').read_text()

    def strings(node):
        if isinstance(node, dict):
            for key, value in node.items():
                yield from strings(key)
                yield from strings(value)
        elif isinstance(node, list):
            for item in node:
                yield from strings(item)
        elif isinstance(node, str):
            yield node
    # a topic, or a message path: the topic up to the first '.'
    named |= {s.split('.')[0] for s in strings(json.loads(layout)) if s.startswith('/')}
    import xml.dom.minidom
    plotjuggler = xml.dom.minidom.parse(str(viewer / 'plotjuggler_layout.xml'))
    selected = {t.getAttribute('name') for t in plotjuggler.getElementsByTagName('topic')}
    for curve in plotjuggler.getElementsByTagName('curve'):
        assert any(curve.getAttribute('name').startswith(t + '/') for t in selected)
    named |= selected
    rviz = yaml.safe_load((viewer / 'hop.rviz').read_text())
    named |= {d['Topic']['Value'] for d in rviz['Visualization Manager']['Displays']
              if 'Topic' in d}
    named |= {d['Description Topic']['Value'] for d in rviz['Visualization Manager']['Displays']
              if 'Description Topic' in d}
    assert {f'{NAMESPACE}/joint_states', f'{NAMESPACE}/foot_contact',
            f'{NAMESPACE}/robot_description', f'{NAMESPACE}/controller/markers'} <= named
    assert named <= recorded, sorted(named - recorded)
