# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
``dodo hop --live``: a Foxglove WebSocket protocol client watches a real run (docs/viewing.md).

Two lockstep runs of the same 1.5 s hop, side by side: run A without any viewer, run B with
``--live`` and two clients speaking the Foxglove protocol (test/foxglove_client.py, with the
``websockets`` library): a normal one that stays to the end, and a slow one (50 ms per frame)
that leaves after 1 s. The client decodes what it receives with the ros2msg schema the
server advertised, as the Foxglove app does (mcap_ros2's dynamic decoder, not our code).

A third client in run B is the real one: the npm ``@foxglove/ws-protocol`` FoxgloveClient run
with node, decoding with ``@foxglove/rosmsg`` + ``@foxglove/rosmsg2-serialization``
(test/foxglove_npm_client.js). The test installs those pinned packages from the npm registry
once into ~/.cache/dodo_sim (later runs reuse them) and skips that client only when node is
missing or the registry cannot be reached.
"""
from __future__ import annotations

import json
import os
from pathlib import Path
import re
import shlex
import socket
import subprocess
import sys
import threading
import time

from conftest import REPO, ros_domain_id
from dodo_sim.ros import contract
from foxglove_client import free_port
from foxglove_npm import npm_client, start_npm_client
import numpy as np
import pytest

#: the names a viewer and the bag see (resolved in the root namespace)
R = contract.resolve

pytestmark = [pytest.mark.ros, pytest.mark.slow]

DURATION_S = 1.5
STATE_TYPE = 'sensor_msgs/msg/JointState'


def _listeners(port: int) -> list[str]:
    """Local addresses (hex, as /proc/net/tcp{,6} shows them) listening on ``port``."""
    found = []
    for table in ('/proc/net/tcp', '/proc/net/tcp6'):
        with open(table) as f:
            for line in f.readlines()[1:]:
                local, state = line.split()[1], line.split()[3]
                addr, hex_port = local.split(':')
                if state == '0A' and int(hex_port, 16) == port:
                    found.append(addr)
    return found


def _raw(bag: Path, topics) -> dict[str, list[bytes]]:
    """Topic -> CDR bytes of its messages in bag order."""
    from rosbags.rosbag2 import Reader
    out = {t: [] for t in topics}
    with Reader(bag) as reader:
        conns = [c for c in reader.connections if c.topic in out]
        for conn, _, raw in reader.messages(connections=conns):
            out[conn.topic].append(bytes(raw))
    return out


def _strict_lockstep(directory: Path) -> Path:
    """
    config/hop.yaml with a simulator command_timeout of 60 s.

    On this shared 2-core machine a controller starved for 0.5 s makes the simulator step on
    without it, and such a run is no longer the same lockstep run; the comparison is about the
    viewer, not the machine.
    """
    import yaml
    params = yaml.safe_load((REPO / 'config' / 'hop.yaml').read_text())
    params['simulator']['ros__parameters']['command_timeout'] = 60.0
    path = directory / 'hop_strict_lockstep.yaml'
    path.write_text(yaml.safe_dump(params))
    return path


def _dodo_env() -> dict:
    """Return the environment of a ``dodo`` run under test (its domain: --domain-id)."""
    env = dict(os.environ, ROS_AUTOMATIC_DISCOVERY_RANGE='LOCALHOST', PYTHONUNBUFFERED='1')
    env['PYTHONPATH'] = os.pathsep.join(filter(None, [str(REPO), env.get('PYTHONPATH')]))
    env.pop('ROS_DOMAIN_ID', None)
    return env


def _dodo_hop(bag: Path, *extra, terminal: bool = False) -> subprocess.Popen:
    """
    ``dodo hop`` with its output in a pipe or, with ``terminal``, in a pseudo-terminal.

    The pseudo-terminal comes from util-linux ``script``; the output is read from the pipe either
    way.
    """
    env = _dodo_env()
    cmd = [sys.executable, '-m', 'dodo_sim.tools.cli', 'hop', '--duration', str(DURATION_S),
           '--bag', str(bag), '--no-plots', '--domain-id', str(ros_domain_id()),
           '--wall-timeout', '240', '--params-file', str(_strict_lockstep(bag.parent)), *extra]
    if terminal:
        env['COLUMNS'] = '120'
        cmd = ['script', '-qefc', shlex.join(cmd), '/dev/null']
    # bytes: a '\r' that redraws the progress line stays a '\r' (text mode translates it)
    return subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, env=env)


def _output(proc: subprocess.Popen) -> str:
    return proc.communicate(timeout=300)[0].decode('utf-8', errors='replace')


@pytest.fixture(scope='module')
def runs(tmp_path_factory):
    from foxglove_client import watch
    tmp = tmp_path_factory.mktemp('live')
    node_modules, npm_skip = npm_client()
    plain = _dodo_hop(tmp / 'plain', terminal=True)
    plain_out = _output(plain)
    port = free_port()
    live = _dodo_hop(tmp / 'live', '--live', str(port))
    url = f'ws://127.0.0.1:{port}'
    got, listening = {}, []
    topics = {R(contract.JOINT_STATES), R(contract.ROBOT_DESCRIPTION), R(contract.TF)}

    def normal():
        got['normal'] = watch(url, topics, seconds=280.0, connect_timeout=120.0)

    def slow():
        got['slow'] = watch(url, topics, seconds=280.0, connect_timeout=120.0,
                            read_delay_s=0.05, leave_after=20)

    threads = [threading.Thread(target=normal), threading.Thread(target=slow)]
    for t in threads:
        t.start()
    npm = (None if node_modules is None else start_npm_client(
        node_modules, 'foxglove_npm_client.js', url, ','.join(sorted(topics)), '120', '280'))
    deadline = time.monotonic() + 120.0
    while not listening and time.monotonic() < deadline and live.poll() is None:
        listening = _listeners(port)
        time.sleep(0.05)
    live_out = _output(live)
    for t in threads:
        t.join(timeout=60)
    npm_result = npm_skip
    if npm is not None:
        try:
            npm_out, npm_err = npm.communicate(timeout=60)
        except subprocess.TimeoutExpired:      # e.g. a run that failed before it listened
            npm.kill()
            npm_out, npm_err = npm.communicate()
            npm_err += '\n(the npm client was still running 60 s after the run: killed)'
        npm_result = (npm.returncode, npm_out, npm_err)
    return {'plain': (plain.returncode, plain_out, tmp / 'plain'),
            'live': (live.returncode, live_out, tmp / 'live'), 'port': port,
            'listening': listening, 'clients': got, 'npm': npm_result}


def test_runs_complete_and_print_the_address(runs):
    for name in ('plain', 'live'):
        code, out, _ = runs[name]
        assert code == 0, out
    assert f"live view: ws://127.0.0.1:{runs['port']}" in runs['live'][1]


def test_server_listens_on_loopback_only(runs):
    assert runs['listening'] and set(runs['listening']) == {'0100007F'}, runs['listening']


def _assert_cdr_channels_with_ros2msg_schemas(channels: dict) -> None:
    """Check the run's topics are advertised as foxglove_bridge does: CDR, ros2msg schemas."""
    for topic in (R(contract.JOINT_STATES), R(contract.ROBOT_DESCRIPTION), R(contract.TF),
                  R(contract.CLOCK), R(contract.FOOT_CONTACT), R(contract.CONTROLLER_STATE)):
        assert topic in channels, sorted(channels)
        assert channels[topic]['encoding'] == 'cdr'
        assert channels[topic]['schemaEncoding'] == 'ros2msg'
        assert channels[topic]['schemaName'] == contract.topic_type(topic.lstrip('/'))


def test_client_sees_cdr_channels_with_ros2msg_schemas(runs):
    client = runs['clients']['normal']
    channels = {c['topic']: c for c in client.channels.values()}
    _assert_cdr_channels_with_ros2msg_schemas(channels)
    assert 'time' in client.server_info['capabilities']


def _decoder(channel: dict):
    from mcap_ros2._dynamic import generate_dynamic
    return generate_dynamic(channel['schemaName'], channel['schema'])[channel['schemaName']]


def _key(msg) -> tuple:
    return (msg.header.stamp.sec, msg.header.stamp.nanosec, tuple(msg.name),
            tuple(msg.position), tuple(msg.velocity), tuple(msg.effort))


def test_every_decoded_joint_state_is_in_the_bag(runs):
    from rosbags.typesys import get_typestore, Stores
    client = runs['clients']['normal']
    channels = {c['topic']: c for c in client.channels.values()}
    decode = _decoder(channels[R(contract.JOINT_STATES)])
    assert R(contract.JOINT_STATES) in client.messages, client.summary()
    decoded = [decode(payload) for _, payload in client.messages[R(contract.JOINT_STATES)]]
    assert len(decoded) >= 10, len(decoded)
    store = get_typestore(Stores.ROS2_KILTED)
    bag = runs['live'][2]
    in_bag = {_key(store.deserialize_cdr(raw, STATE_TYPE))
              for raw in _raw(bag, [R(contract.JOINT_STATES)])[R(contract.JOINT_STATES)]}
    missing = [m for m in decoded if _key(m) not in in_bag]
    assert not missing, missing[:3]
    # log times are simulated time (foxglove_bridge with use_sim_time): the last /clock the
    # recorder had taken, never decreasing, within the run
    log_times = [t for t, _ in client.messages[R(contract.JOINT_STATES)]]
    assert log_times == sorted(log_times)
    assert 0 <= log_times[0] and log_times[-1] <= DURATION_S * 1e9
    assert log_times[-1] - log_times[0] > 0.5 * DURATION_S * 1e9
    # the URDF reaches a viewer even though it was published before the viewer subscribed
    assert R(contract.ROBOT_DESCRIPTION) in client.messages, client.summary()
    urdf = _decoder(channels[R(contract.ROBOT_DESCRIPTION)])(
        client.messages[R(contract.ROBOT_DESCRIPTION)][0][1]).data
    assert '<robot' in urdf


def _npm_received(runs) -> dict:
    """Return what the real client (npm, node) printed; skip if it could not run."""
    if isinstance(runs['npm'], str):
        pytest.skip(runs['npm'])
    code, out, err = runs['npm']
    assert code == 0, err
    received = json.loads(out)
    assert not received['errors'], received['errors']
    return received


def test_npm_foxglove_client_sees_cdr_channels_with_ros2msg_schemas(runs):
    received = _npm_received(runs)
    channels = {c['topic']: c for c in received['channels']}
    _assert_cdr_channels_with_ros2msg_schemas(channels)
    assert 'time' in received['serverInfo']['capabilities']


def test_npm_foxglove_client_decodes_joint_states_that_are_all_in_the_bag(runs):
    """Decoded by @foxglove/rosmsg2-serialization from the advertised schema; not our code."""
    from rosbags.typesys import get_typestore, Stores
    decoded = _npm_received(runs)['decoded']
    states = [d['message'] for d in decoded[R(contract.JOINT_STATES)]]
    assert len(states) >= 10, len(states)
    store = get_typestore(Stores.ROS2_KILTED)
    in_bag = {_key(store.deserialize_cdr(raw, STATE_TYPE))
              for raw in _raw(runs['live'][2], [R(contract.JOINT_STATES)])[
                  R(contract.JOINT_STATES)]}
    keys = [(m['header']['stamp']['sec'], m['header']['stamp']['nanosec'], tuple(m['name']),
             tuple(m['position']), tuple(m['velocity']), tuple(m['effort'])) for m in states]
    missing = [k for k in keys if k not in in_bag]
    assert not missing, missing[:3]
    assert len(set(keys)) == len(keys)                     # distinct states, not one repeated
    log_times = [int(d['logTimeNs']) for d in decoded[R(contract.JOINT_STATES)]]
    assert log_times == sorted(log_times) and log_times[-1] <= DURATION_S * 1e9
    # nested types too: the URDF (latched, sent again on subscribe) and /tf's transforms
    assert '<robot' in decoded[R(contract.ROBOT_DESCRIPTION)][0]['message']['data']
    frames = {t['child_frame_id'] for d in decoded[R(contract.TF)]
              for t in d['message']['transforms']}
    assert frames, decoded[R(contract.TF)][:1]


def test_rate_limit_thins_the_stream_not_the_bag(runs):
    client = runs['clients']['normal']
    received = len(client.messages[R(contract.JOINT_STATES)])
    from dodo_sim.tools.bag import message_counts
    recorded = message_counts(runs['live'][2])[contract.JOINT_STATES]
    assert recorded == round(DURATION_S / 0.001) + 1
    assert received < recorded / 2, (received, recorded)


def test_same_messages_and_stamps_with_and_without_clients(runs):
    """Lockstep: the viewer (and a slow one that left mid-run) changes nothing in the run."""
    slow = runs['clients']['slow']
    assert sum(map(len, slow.messages.values())) == 20     # it left after 20 messages
    topics = [R(contract.CLOCK), R(contract.JOINT_STATES), R(contract.FOOT_CONTACT),
              R(contract.EFFORT_COMMANDS), R(contract.CONTROLLER_STATE)]
    plain = _raw(runs['plain'][2], topics)
    live = _raw(runs['live'][2], topics)
    for topic in topics:
        a, b = plain[topic], live[topic]
        assert a and len(a) == len(b) and a == b, (topic, len(a), len(b))


def test_port_taken_is_one_clear_error_line(tmp_path):
    with socket.socket() as taken:
        taken.bind(('127.0.0.1', 0))
        taken.listen()
        port = taken.getsockname()[1]
        proc = _dodo_hop(tmp_path / 'bag', '--live', str(port))
        out = _output(proc)
    assert proc.returncode == 2, out
    errors = [line for line in out.splitlines() if 'error' in line]
    assert len(errors) == 1 and f'port {port} on 127.0.0.1 is taken' in errors[0], out
    assert not (tmp_path / 'bag').exists()


#: ANSI escape sequences and the other C0 control characters but newline
CONTROL_RE = re.compile(r'[\x00-\x09\x0b-\x1f\x7f]')


def test_terminal_shows_a_progress_line_and_no_child_info_lines(runs):
    code, out, bag = runs['plain']
    assert code == 0, out
    assert re.search(
        r'dodo hop +\d+%\|.*\| t = [\d.]+/1\.5 s, [\d.?]+x real time, \d+ steps', out), out
    assert '\r' in out                      # redrawn in place
    assert '[INFO]' not in out and 'dodo exchange:' not in out
    log = (bag.parent / f'{bag.name}_nodes.log').read_text()
    assert '[simulator]' in log and '[INFO]' in log and 'dodo exchange:' in log
    assert out.rstrip().splitlines()[-1].startswith('dodo hop: bag: ')


def test_pipe_output_has_plain_lines_without_control_characters(runs):
    """
    Not a terminal: every node line streamed as before (tools read them), plain progress lines.

    No control characters.
    """
    code, out, _ = runs['live']
    assert not CONTROL_RE.search(out), [line for line in out.splitlines()
                                        if CONTROL_RE.search(line)][:3]
    assert re.search(r'^dodo hop: t = [\d.]+ / 1\.5 s, ', out, re.M), out
    assert '[simulator] [INFO]' in out and 'dodo hop: completed: ' in out


def test_layout_series_exist_in_a_real_bag(runs):
    """
    Every series of the shipped layouts names a signal that a real run records.

    At the index the Foxglove paths use (docs/viewing.md).
    """
    from dodo_sim.tools import layouts
    bag = runs['live'][2]
    for series in (s for group in layouts.PLOTS.values() for s in group):
        t, v = layouts.series_values(bag, series)
        # a value is NaN only before it first exists (the last apex before the first apex
        # is known: the apex solve finishes some ticks after the apex), never after
        known = np.flatnonzero(v == v)
        assert len(t) > 100 and known.size > 100 and (v[known[0]:] == v[known[0]:]).all(), series
    from dodo_sim.tools.bag import read_bag
    data = read_bag(bag, [contract.JOINT_STATES, contract.CONTROLLER_STATE])
    assert tuple(data[contract.JOINT_STATES].messages[0].name) == layouts.HOPPER_JOINTS
    assert tuple(data[contract.CONTROLLER_STATE].messages[0].name) == layouts.HOPPER_STATE


def test_dodo_walk_live_streams_the_walker(tmp_path):
    """``dodo walk --live PORT``: the walker's URDF and joint states reach a protocol client."""
    from foxglove_client import watch
    port = free_port()
    walk = subprocess.Popen(
        [sys.executable, '-m', 'dodo_sim.tools.cli', 'walk', '--duration', '1.5', '--bag',
         str(tmp_path / 'bag'), '--no-plots', '--domain-id', str(ros_domain_id()),
         '--wall-timeout', '240', '--live', str(port)],
        stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
        env=_dodo_env())
    try:
        got = watch(f'ws://127.0.0.1:{port}', {R(contract.JOINT_STATES),
                                               R(contract.ROBOT_DESCRIPTION)},
                    seconds=240.0, connect_timeout=120.0)
    finally:
        out = _output(walk)
    assert walk.returncode == 0, out
    assert f'live view: ws://127.0.0.1:{port}' in out
    channels = {c['topic']: c for c in got.channels.values()}
    assert {R(contract.ROBOT_DESCRIPTION), R(contract.JOINT_STATES)} <= set(got.messages), \
        (got.summary(), out[-3000:])
    urdf = _decoder(channels[R(contract.ROBOT_DESCRIPTION)])(
        got.messages[R(contract.ROBOT_DESCRIPTION)][0][1]).data
    assert 'left_knee' in urdf and 'right_knee' in urdf
    decode = _decoder(channels[R(contract.JOINT_STATES)])
    states = [decode(payload) for _, payload in got.messages[R(contract.JOINT_STATES)]]
    assert len(states) >= 10, len(states)
    assert {'left_hip', 'left_knee', 'right_hip', 'right_knee'} <= set(states[-1].name)
