# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
The live view's actions (dodo_sim.tools.live_actions) in process, no ROS.

The rules (names, value types, client messages, rate limits, throttled log) as functions, and
the protocol path through the real foxglove-sdk server with a client speaking the Foxglove
WebSocket protocol (``websockets``; the message layouts of github.com/foxglove/ws-protocol
docs/spec.md) and a backend of plain Python standing in for the run's nodes. The real nodes
and the npm client are test_live_actions_run.py.
"""
import json
import math
import struct
import time

from dodo_sim.tools import live_actions as la
from foxglove_client import SUBPROTOCOLS
import pytest


class FakeClock:
    """A clock the test sets."""

    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now


# -- rules --------------------------------------------------------------------------------------
def test_parameter_names_split_at_the_first_dot_and_name_a_node_of_the_run():
    nodes = ['/left/controller', '/left/simulator']
    assert la.split_parameter_name('/left/controller.apex_height', nodes) == (
        '/left/controller', 'apex_height')
    assert la.split_parameter_name('/left/controller.qos.depth', nodes) == (
        '/left/controller', 'qos.depth')
    for bad in ('/left/controller', '/left/controller.', '/right/controller.x', 7, None,
                '/x.' + 'a' * 2000):
        with pytest.raises(la.LiveActionError):
            la.split_parameter_name(bad, nodes)


def test_values_take_the_nodes_type_where_lossless_and_refuse_what_ros_cannot_hold():
    v = la.ros_parameter_value
    assert v('p', 1, la.DOUBLE) == (la.DOUBLE, 1.0)             # JSON writes 1.0 as 1
    assert v('p', 2.0, la.INTEGER) == (la.INTEGER, 2)
    assert v('p', 2.5, la.INTEGER) == (la.DOUBLE, 2.5)          # the node says no
    assert v('p', True, la.INTEGER) == (la.BOOL, True)
    assert v('p', [1, 2], la.DOUBLE_ARRAY) == (la.DOUBLE_ARRAY, [1.0, 2.0])
    assert v('p', [1, 2.5], la.NOT_SET) == (la.DOUBLE_ARRAY, [1.0, 2.5])
    assert v('p', [], la.STRING_ARRAY) == (la.STRING_ARRAY, [])
    assert v('p', b'\x00\x01', la.BYTE_ARRAY) == (la.BYTE_ARRAY, b'\x00\x01')
    for bad in (None, {'a': 1}, [1, 'a'], [], 2 ** 70, 'x' * (la.MAX_PARAMETER_BYTES + 1),
                [0.0] * (la.MAX_PARAMETER_ELEMENTS + 1)):
        with pytest.raises(la.LiveActionError):
            v('p', bad, la.INTEGER)


def test_ros_values_become_foxglove_parameters_with_their_type_hints():
    from foxglove import ParameterType
    p = la.foxglove_parameter('/c.x', (la.DOUBLE, 2.0))
    assert p.type == ParameterType.Float64 and p.get_value() == 2.0
    p = la.foxglove_parameter('/c.x', (la.DOUBLE_ARRAY, [1.0]))
    assert p.type == ParameterType.Float64Array
    assert la.foxglove_parameter('/c.x', (la.INTEGER, 3)).get_value() == 3
    assert la.foxglove_parameter('/c.x', (la.NOT_SET, None)) is None
    assert math.isnan(la.foxglove_parameter('/c.x', (la.DOUBLE, math.nan)).get_value())


PUSH = la.CLIENT_TOPICS[0]
ESTOP = la.CLIENT_TOPICS[2]


def _cdr_vector3(x, y, z, little=True) -> bytes:
    return (b'\x00\x01\x00\x00' if little else b'\x00\x00\x00\x00') + struct.pack(
        '<3d' if little else '>3d', x, y, z)


def test_client_messages_are_read_as_data_and_refused_when_malformed():
    decode = la.decode_client_message
    assert decode(PUSH, 'cdr', _cdr_vector3(1.0, 0.0, -2.0)) == (1.0, 0.0, -2.0)
    assert decode(PUSH, 'cdr', _cdr_vector3(1.0, 0.0, -2.0, little=False)) == (1.0, 0.0, -2.0)
    assert decode(PUSH, 'json', b'{"x": 1, "z": 0.5}') == (1.0, 0.0, 0.5)
    assert decode(ESTOP, 'cdr', b'\x00\x01\x00\x00\x01') == (True,)
    assert decode(ESTOP, 'json', b'{"data": true}') == (True,)
    for encoding, data in (
            ('cdr', _cdr_vector3(math.inf, 0, 0)), ('cdr', _cdr_vector3(0, 0, 0)[:20]),
            ('cdr', _cdr_vector3(0, 0, 0) + b'\x01'), ('cdr', b'\x01\x02' + bytes(26)),
            ('cdr', _cdr_vector3(0, 0, 0) + bytes(2000)), ('json', b'{"x": "1"}'),
            ('json', b'{"w": 1}'), ('json', b'[1, 2, 3]'), ('json', b'\xff'),
            ('json', b'{"x": true}'), ('json', b'{"x": 1e999}'), ('protobuf', b'')):
        with pytest.raises(la.LiveActionError):
            decode(PUSH, encoding, data)
    with pytest.raises(la.LiveActionError):
        decode(ESTOP, 'cdr', b'\x00\x01\x00\x00\x02')


def test_token_bucket_allows_its_burst_then_its_rate():
    clock = FakeClock()
    bucket = la.TokenBucket(la.Rate(10.0, 3), clock)
    assert [bucket.take() for _ in range(5)] == [True, True, True, False, False]
    clock.now = 0.1
    assert [bucket.take() for _ in range(2)] == [True, False]
    clock.now = 100.0
    assert sum(bucket.take() for _ in range(100)) == 3         # never more than the burst


def test_throttled_log_says_one_line_per_reason_and_period_with_the_count_held_back():
    clock, lines = FakeClock(), []
    log = la.ThrottledLog(lines.append, period_s=5.0, clock=clock)
    for _ in range(1000):
        log('a', 'bad a')
    log('b', 'bad b')
    clock.now = 5.0
    log('a', 'bad a')
    assert lines == ['live view: bad a', 'live view: bad b',
                     'live view: bad a (999 more like it in the last 5 s)']
    assert log.counts == {'a': 1001, 'b': 1}


def test_parameter_services_are_the_parameters_capability_not_services():
    nodes = ['/ns/simulator', '/ns/controller']
    assert la.proxied_service('/ns/simulator/reset', ['std_srvs/srv/Trigger'], nodes)
    assert not la.proxied_service('/ns/simulator/set_parameters',
                                  ['rcl_interfaces/srv/SetParameters'], nodes)
    assert not la.proxied_service('/ns/simulator/reset', ['a/srv/A', 'b/srv/B'], nodes)


# -- the protocol, through foxglove-sdk's server ---------------------------------------------
READ_ONLY_REASON = 'Trying to set a read-only parameter: controller.'


class PlainBackend:
    """The run's nodes as plain Python: what their parameter services would answer."""

    def __init__(self):
        self.params = {'/ns/controller': {'apex_height': (la.DOUBLE, 1.2),
                                          'controller': (la.STRING, 'slip_hopper'),
                                          'hops': (la.INTEGER, 3)}}
        self.published = []
        self.calls = []
        self.silent = set()        # nodes whose parameter services do not answer

    def nodes(self):
        return list(self.params)

    def get_parameters(self, node, names, timeout_s):
        if node in self.silent:
            raise TimeoutError(f'{node}/get_parameters: no answer within {timeout_s:g} s')
        params = self.params[node]
        return {n: params[n] for n in (params if names is None else names) if n in params}

    def set_parameters(self, node, values, timeout_s):
        results = {}
        for name, typed in values.items():
            if name == 'controller':
                results[name] = READ_ONLY_REASON
            elif typed[0] != self.params[node][name][0]:
                results[name] = 'Wrong parameter type'
            elif name == 'apex_height' and not typed[1] > 0.0:
                results[name] = f'apex_height must be > 0 m, got {typed[1]}'
            else:
                self.params[node][name] = typed
                results[name] = ''
        return results

    def call_service(self, name, request_cdr, timeout_s):
        self.calls.append((name, request_cdr))
        return b'\x00\x01\x00\x00\x01\x00\x00\x00\x03\x00\x00\x00ok\x00'

    def publish(self, topic, values):
        self.published.append((topic.name, values))


RESET = la.ServiceInfo('/ns/simulator/reset', 'std_srvs/srv/Trigger', '',
                       'bool success\nstring message\n')


@pytest.fixture
def served():
    """Yield a live view with actions on a plain backend, a connected client, the warnings."""
    from dodo_sim.tools.live_view import LiveView
    from websockets.sync.client import connect
    backend = PlainBackend()
    warnings = []
    actions = la.LiveActions(backend, namespace='/ns', warn=warnings.append)
    view = LiveView(host='127.0.0.1', port=0, actions=actions)
    view.start()
    actions.set_services([RESET])
    try:
        with connect(view.address, subprotocols=SUBPROTOCOLS, open_timeout=10,
                     max_size=None) as ws:
            yield view, backend, ws, warnings
    finally:
        view.stop()


def _until(ws, predicate, timeout_s=10.0):
    """Frames until one satisfies ``predicate`` (JSON decoded); the ones seen before it too."""
    seen = []
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        try:
            frame = ws.recv(timeout=max(0.01, deadline - time.monotonic()))
        except TimeoutError:
            break
        msg = json.loads(frame) if isinstance(frame, str) else frame
        seen.append(msg)
        if predicate(msg):
            return msg, seen
    raise AssertionError(f'not received within {timeout_s} s; seen: {seen[-10:]}')


def _op(name, **fields):
    return lambda m: isinstance(m, dict) and m.get('op') == name and all(
        m.get(k) == v for k, v in fields.items())


def test_server_advertises_parameters_services_and_client_publishing(served):
    _, _, ws, _ = served
    info, _ = _until(ws, _op('serverInfo'))
    assert {'time', 'parameters', 'parametersSubscribe', 'services', 'clientPublish'} <= set(
        info['capabilities'])
    assert 'cdr' in info['supportedEncodings']
    services, _ = _until(ws, _op('advertiseServices'))
    (reset,) = services['services']
    assert reset['name'] == '/ns/simulator/reset' and reset['type'] == 'std_srvs/srv/Trigger'
    assert reset['request']['schemaName'] == 'std_srvs/srv/Trigger_Request'
    assert reset['response'] == {'encoding': 'cdr', 'schemaName': 'std_srvs/srv/Trigger_Response',
                                 'schemaEncoding': 'ros2msg',
                                 'schema': 'bool success\nstring message\n'}


def test_get_and_set_parameters_reach_the_node_and_a_refusal_says_the_nodes_reason(served):
    _, backend, ws, warnings = served
    ws.send(json.dumps({'op': 'getParameters', 'parameterNames': [], 'id': 'all'}))
    got, _ = _until(ws, _op('parameterValues', id='all'))
    values = {p['name']: p for p in got['parameters']}
    assert values['/ns/controller.apex_height'] == {
        'name': '/ns/controller.apex_height', 'value': 1.2, 'type': 'float64'}
    assert values['/ns/controller.controller']['value'] == 'slip_hopper'
    # an integer from JSON goes to the double parameter as a double
    ws.send(json.dumps({'op': 'setParameters', 'id': 'set', 'parameters': [
        {'name': '/ns/controller.apex_height', 'value': 1}]}))
    got, _ = _until(ws, _op('parameterValues', id='set'))
    assert got['parameters'] == [{'name': '/ns/controller.apex_height', 'value': 1.0,
                                  'type': 'float64'}]
    assert backend.params['/ns/controller']['apex_height'] == (la.DOUBLE, 1.0)
    # refused by the node: its reason to the clients, the value unchanged
    for name, value, reason in (('apex_height', -1.0, 'apex_height must be > 0 m, got -1.0'),
                                ('controller', 'x', READ_ONLY_REASON)):
        ws.send(json.dumps({'op': 'setParameters', 'id': name, 'parameters': [
            {'name': f'/ns/controller.{name}', 'value': value}]}))
        got, seen = _until(ws, _op('parameterValues', id=name))
        statuses = [m['message'] for m in seen if isinstance(m, dict) and m['op'] == 'status']
        assert any(reason in s and 'refused by /ns/controller' in s for s in statuses), seen
    assert backend.params['/ns/controller']['apex_height'] == (la.DOUBLE, 1.0)
    assert backend.params['/ns/controller']['controller'] == (la.STRING, 'slip_hopper')
    assert any('refused by /ns/controller' in w for w in warnings)


def test_a_service_call_goes_to_the_node_and_hostile_calls_fail_with_a_reason(served):
    _, backend, ws, _ = served
    services, _ = _until(ws, _op('advertiseServices'))
    service_id = services['services'][0]['id']

    def call(call_id, payload, encoding=b'cdr'):
        ws.send(struct.pack('<BIII', 0x02, service_id, call_id, len(encoding)) + encoding
                + payload)

    call(1, b'\x00\x01\x00\x00\x00')
    response, _ = _until(ws, lambda m: isinstance(m, bytes) and m[0] == 0x03)
    _, sid, cid, enc_len = struct.unpack_from('<BIII', response)
    assert (sid, cid, response[13:13 + enc_len]) == (service_id, 1, b'cdr')
    assert response[13 + enc_len:] == backend.call_service('', b'', 0)
    assert backend.calls[0] == ('/ns/simulator/reset', b'\x00\x01\x00\x00\x00')
    call(2, bytes(la.MAX_SERVICE_REQUEST_BYTES + 1))
    failure, _ = _until(ws, _op('serviceCallFailure', callId=2))
    assert 'at most' in failure['message']
    call(3, b'{}', encoding=b'json')
    failure, _ = _until(ws, _op('serviceCallFailure', callId=3))
    assert 'encoding' in failure['message'].lower()
    assert len(backend.calls) == 2                  # the refused ones never reached ROS


def test_client_messages_are_checked_rate_limited_and_published(served):
    _, backend, ws, warnings = served
    ws.send(json.dumps({'op': 'advertise', 'channels': [
        {'id': 1, 'topic': '/ns/simulator/push', 'encoding': 'cdr',
         'schemaName': 'geometry_msgs/msg/Vector3'},
        {'id': 2, 'topic': '/ns/joint_commands', 'encoding': 'cdr',
         'schemaName': 'sensor_msgs/msg/JointState'},
        {'id': 3, 'topic': '/ns/estop', 'encoding': 'json', 'schemaName': 'std_msgs/msg/Bool'}]}))
    status, _ = _until(ws, _op('status'))
    assert '/ns/joint_commands' in status['message'] and 'refused' in status['message']
    started = time.monotonic()
    ws.send(b'\x01' + struct.pack('<I', 1) + _cdr_vector3(0.0, 0.0, 1.5))
    ws.send(b'\x01' + struct.pack('<I', 1) + b'\x00\x01\x00\x00garbage')
    ws.send(b'\x01' + struct.pack('<I', 3) + b'{"data": true}')
    for _ in range(2000):                           # a flood on an accepted channel
        ws.send(b'\x01' + struct.pack('<I', 1) + _cdr_vector3(0.0, 0.0, 0.0))
    for _ in range(500):                            # and on the refused one
        ws.send(b'\x01' + struct.pack('<I', 2) + bytes(64))
    ws.send(json.dumps({'op': 'getParameters', 'parameterNames': [], 'id': 'sync'}))
    _until(ws, _op('parameterValues', id='sync'))   # every frame before it was handled
    elapsed = time.monotonic() - started
    pushes = [v for t, v in backend.published if t == 'simulator/push']
    assert pushes[0] == (0.0, 0.0, 1.5)
    rate = la.LIMITS['simulator/push']
    assert 2 <= len(pushes) <= rate.burst + rate.per_s * elapsed + 1, (len(pushes), elapsed)
    assert ('estop', (True,)) in backend.published
    assert any('malformed simulator/push' in w for w in warnings)
    assert len(warnings) < 20, warnings             # throttled, not one line per message


def test_parameter_changes_reach_the_clients_subscribed_to_them(served):
    view, _, ws, _ = served
    ws.send(json.dumps({'op': 'subscribeParameterUpdates',
                        'parameterNames': ['/ns/controller.apex_height']}))
    ws.send(json.dumps({'op': 'getParameters', 'parameterNames': [], 'id': 'sync'}))
    _until(ws, _op('parameterValues', id='sync'))       # the subscription is in effect
    view.actions.parameter_values('/ns/controller', [('hops', (la.INTEGER, 4)),
                                                     ('apex_height', (la.DOUBLE, 0.9))])
    update, _ = _until(ws, lambda m: isinstance(m, dict) and m.get('op') == 'parameterValues'
                       and 'id' not in m)
    assert update['parameters'] == [{'name': '/ns/controller.apex_height', 'value': 0.9,
                                     'type': 'float64'}]


def test_a_node_that_does_not_answer_costs_only_its_own_parameters(served):
    _, backend, ws, warnings = served
    backend.params['/ns/simulator'] = {'dt': (la.DOUBLE, 0.001)}
    backend.silent.add('/ns/controller')
    ws.send(json.dumps({'op': 'getParameters', 'parameterNames': [], 'id': 'all'}))
    got, _ = _until(ws, _op('parameterValues', id='all'))
    assert [p['name'] for p in got['parameters']] == ['/ns/simulator.dt']
    assert any('get parameters of /ns/controller: no answer' in w for w in warnings), warnings
