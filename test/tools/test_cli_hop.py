# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
``dodo`` CLI and ``dodo hop``: argument handling, and one real run over DDS.

The run: ``python -m dodo_sim.tools.cli hop --duration 3 --bag DIR`` (separate processes, own ROS
domain, localhost discovery) while this test publishes malformed commands (wrong length, NaN)
on /effort_controller/commands the whole time. The bag must hold exactly duration x rate + 1
states, as many valid commands, hops at the apex set-point, and the rejected commands must not
have touched the run.
"""
import io
import itertools
import math
import os
import re
import signal
import subprocess
import sys
import time

from conftest import ros_domain_id
from dodo_sim.paths import default_params_path
from dodo_sim.ros import contract
from dodo_sim.tools import cli, hop_runner
import numpy as np
from process_support import hop_params
import pytest

APEX_SETPOINT = 1.2
PARAMS = hop_params(controller={'apex_height': APEX_SETPOINT, 'target_velocity': 0.0})


def test_cli_lists_subcommands_and_rejects_unknown(capsys):
    assert cli.main(['--help']) == 0
    out = capsys.readouterr().out
    for name in cli.SUBCOMMANDS:                 # each name stands apart from its text
        assert re.search(rf'^  {name} +\S', out, re.M), name
    assert cli.main(['fly']) == 2
    assert "unknown subcommand 'fly'" in capsys.readouterr().err
    assert set(cli.SUBCOMMANDS) == {
        'demo', 'hop', 'walk', 'sim', 'replay', 'plot', 'optimize', 'bag'}
    assert cli.SUBCOMMANDS['hop'][0] == 'dodo_sim.tools.hop_runner'


def test_cli_dispatches_to_the_module(monkeypatch):
    seen = []
    monkeypatch.setattr(hop_runner, 'main', lambda argv: seen.append(argv) or 7)
    assert cli.main(['hop', '--duration', '1']) == 7
    assert seen == [['--duration', '1']]


def test_hop_refuses_an_existing_bag(tmp_path, monkeypatch):
    monkeypatch.setenv('XDG_RUNTIME_DIR', str(tmp_path))
    (tmp_path / 'bag').mkdir()
    out, err = io.StringIO(), io.StringIO()
    assert hop_runner.run(default_params_path(), 1.0, bag=tmp_path / 'bag',
                          out=out, err=err) == 2
    assert 'exists' in err.getvalue() and out.getvalue() == ''


def test_hop_default_run_directory(tmp_path, monkeypatch):
    seen = {}
    monkeypatch.setattr(hop_runner, 'run', lambda *a, **k: seen.update(args=a) or 0)
    assert hop_runner.main(['--runs-dir', str(tmp_path / 'runs')]) == 0
    params, duration, bag, plots, _ = seen['args']
    assert params == default_params_path() and duration == 10.0
    assert bag.parent.parent == tmp_path / 'runs' and bag.parent.name.startswith('hop-')
    assert bag.name == 'bag' and plots == bag.parent / 'plots' and not bag.exists()
    assert hop_runner.main(['--bag', str(tmp_path / 'b'), '--no-plots']) == 0
    assert seen['args'][2:4] == (tmp_path / 'b', None)


def apex_heights(z, vz):
    idx = np.nonzero((vz[:-1] > 0.0) & (vz[1:] <= 0.0))[0] + 1
    return z[idx]


@pytest.mark.ros
@pytest.mark.slow
def test_dodo_hop_writes_a_complete_bag_despite_bad_commands(tmp_path):
    rclpy = pytest.importorskip('rclpy')
    from dodo_sim.tools.bag import message_counts, read_bag
    from dodo_sim.tools.bag_arrays import joint_states, multiarray
    from std_msgs.msg import Float64MultiArray

    duration = 3.0
    params = tmp_path / 'hop.yaml'
    params.write_text(PARAMS)
    bag = tmp_path / 'bag'
    domain = ros_domain_id()
    env = dict(os.environ, ROS_DOMAIN_ID=str(domain), ROS_AUTOMATIC_DISCOVERY_RANGE='LOCALHOST')
    proc = subprocess.Popen([sys.executable, '-m', 'dodo_sim.tools.cli', 'hop', '--params-file',
                             str(params), '--duration', str(duration), '--bag', str(bag),
                             '--no-plots', '--wall-timeout', '150'],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)
    # a stray publisher of malformed commands in the same domain, during the whole run
    context = rclpy.Context()
    rclpy.init(context=context, domain_id=domain)
    sent = 0
    try:
        node = rclpy.create_node('stray', context=context)
        pub = node.create_publisher(Float64MultiArray, contract.EFFORT_COMMANDS, 10)
        bad = itertools.cycle([[1.0], [math.nan, 0.0], [0.0, 1.0, 2.0], [math.inf, 0.0]])
        from rclpy.executors import SingleThreadedExecutor
        executor = SingleThreadedExecutor(context=context)
        executor.add_node(node)
        deadline = time.monotonic() + 200.0
        while proc.poll() is None and time.monotonic() < deadline:
            executor.spin_once(timeout_sec=0.02)   # paces the stray publisher at ~50 Hz
            if pub.get_subscription_count() > 0:
                pub.publish(Float64MultiArray(data=next(bad)))
                sent += 1
        node.destroy_node()
    finally:
        rclpy.try_shutdown(context=context)
        if proc.poll() is None:             # dodo hop stops its own processes on SIGINT
            proc.send_signal(signal.SIGINT)
            try:
                proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                proc.kill()
    output = proc.communicate(timeout=60)[0]
    assert proc.returncode == 0, output
    assert f'bag: {bag.resolve()}' in output
    steps = int(round(duration / 0.001))
    counts = message_counts(bag)
    for topic in (contract.CLOCK, contract.JOINT_STATES, contract.FOOT_CONTACT):
        assert counts[topic] == steps + 1, (topic, counts)
    data = read_bag(bag, [contract.JOINT_STATES, contract.EFFORT_COMMANDS])
    commands = multiarray(data[contract.EFFORT_COMMANDS])
    valid = np.array([row for row in commands
                      if np.isfinite(row[:2]).all() and np.isnan(row[2:]).all()])
    assert len(valid) == steps + 1
    assert sent > 10 and counts[contract.EFFORT_COMMANDS] > steps + \
        1    # the stray ones were recorded
    rejected = re.findall(r'(\d+) command\(s\) rejected, (\d+) timeout', output)
    assert rejected and int(rejected[-1][0]) > 0 and int(rejected[-1][1]) == 0, rejected
    js = joint_states(data[contract.JOINT_STATES])
    assert np.all(np.diff(js.stamp_ns) == 1_000_000)
    apexes = apex_heights(js.q[:, 1], js.v[:, 1])
    assert len(apexes) >= 3, apexes
    np.testing.assert_allclose(apexes[2:], APEX_SETPOINT, rtol=0.01)
