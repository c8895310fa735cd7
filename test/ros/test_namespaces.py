# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
Two robots in one ROS domain, each in its own namespace with its own simulator.

Controller and bag (``dodo hop --namespace``, DESIGN.md section 3): neither sees the other's
commands, states or clock, and each bag holds its own robot only, under the resolved names.
"""
from __future__ import annotations

import os
import re
import subprocess
import sys

from conftest import ros_domain_id
from dodo_sim.ros import contract, domains, graph
from dodo_sim.tools.run_supervision import node_command
import numpy as np
import pytest

PARAMS = """
/**:
  ros__parameters:
    use_sim_time: true
simulator:
  ros__parameters:
    initial_q: [0.0, {z}, 0.3, -0.6]
controller:
  ros__parameters:
    apex_height: 1.2
    target_x: .nan
    target_velocity: 0.0
"""


def test_names_resolve_under_the_namespace():
    assert contract.resolve(contract.JOINT_STATES, 'left') == '/left/joint_states'
    assert contract.resolve(contract.RESET_SERVICE, '/a/b/') == '/a/b/simulator/reset'
    assert contract.resolve(contract.JOINT_STATES) == '/joint_states'
    assert contract.relative_name('/left/foot_contact', 'left') == 'foot_contact'
    assert contract.relative_name('/right/foot_contact', 'left') == '/right/foot_contact'
    assert contract.bag_namespace(['/left/joint_states', '/left/clock']) == '/left'
    with pytest.raises(ValueError):
        contract.normalize_namespace('2fast')


def test_node_command_puts_the_node_and_the_global_names_into_the_namespace(tmp_path):
    spec = next(s for s in graph.NODES if s.name == 'simulator')
    cmd = node_command(spec, tmp_path / 'p.yaml', tmp_path / 'g.yaml', 'left')
    ros_args = cmd[cmd.index('--ros-args'):]
    for rule in ('__ns:=/left', '/clock:=clock', '/tf:=tf', '/tf_static:=tf_static',
                 '/parameter_events:=parameter_events'):
        assert ros_args[ros_args.index(rule) - 1] == '-r', rule
    root = node_command(spec, tmp_path / 'p.yaml', tmp_path / 'g.yaml', '')
    assert not any('__ns' in a for a in root)


def test_namespaced_runs_share_an_explicit_domain_but_not_a_namespace(tmp_path, monkeypatch):
    monkeypatch.setenv('XDG_RUNTIME_DIR', str(tmp_path))
    left = domains.reserve(200, namespace='/left')
    try:
        right = domains.reserve(200, namespace='/right')
        right.release()
        with pytest.raises(domains.DomainUnavailable, match='namespace /left'):
            domains.reserve(200, namespace='/left')
        with pytest.raises(domains.DomainUnavailable, match='in use'):
            domains.reserve(200)              # a root-namespace run never shares
    finally:
        left.release()
    domains.reserve(200).release()           # free again once the namespaced run is gone


@pytest.mark.ros
def test_two_namespaced_robots_in_one_domain_do_not_see_each_other(tmp_path):
    pytest.importorskip('rclpy')
    from dodo_sim.tools.bag import message_counts, read_bag, topic_types
    from dodo_sim.tools.bag_arrays import joint_states
    duration = 1.0
    domain = ros_domain_id()
    env = dict(os.environ, ROS_AUTOMATIC_DISCOVERY_RANGE='LOCALHOST')
    env.pop('ROS_DOMAIN_ID', None)
    procs = {}
    # different start heights: each bag must hold its own robot
    for name, z in (('left', 1.3), ('right', 1.5)):
        params = tmp_path / f'{name}.yaml'
        params.write_text(PARAMS.format(z=z))
        procs[name] = subprocess.Popen(
            [sys.executable, '-m', 'dodo_sim.tools.cli', 'hop', '--params-file', str(params),
             '--duration', str(duration), '--bag', str(tmp_path / f'{name}_bag'), '--no-plots',
             '--namespace', name, '--domain-id', str(domain), '--wall-timeout', '150'],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)
    outputs = {}
    try:
        for name, proc in procs.items():
            outputs[name] = proc.communicate(timeout=240)[0]
    finally:
        for proc in procs.values():
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    steps = int(round(duration / 0.001))
    for name, z in (('left', 1.3), ('right', 1.5)):
        output = outputs[name]
        assert procs[name].returncode == 0, output
        # the simulator took commands from its own controller only
        summary = re.search(r'dodo exchange: .*', output)
        assert summary, output[-3000:]
        assert ' foreign=0 ' in summary.group(0) and ' command_publishers=1 ' in summary.group(0)
        assert ' timeouts=0 ' in summary.group(0), summary.group(0)
        bag = tmp_path / f'{name}_bag'
        from rosbags.highlevel import AnyReader
        with AnyReader([bag]) as reader:
            recorded = {c.topic for c in reader.connections}
        assert recorded and all(t.startswith(f'/{name}/') for t in recorded), recorded
        assert {f'/{name}/clock', f'/{name}/joint_states', f'/{name}/foot_contact',
                f'/{name}/parameter_events'} <= recorded, recorded
        counts = message_counts(bag)
        for topic in (contract.CLOCK, contract.JOINT_STATES, contract.FOOT_CONTACT):
            assert counts[topic] == steps + 1, (name, topic, counts)
        js = joint_states(read_bag(bag, [contract.JOINT_STATES])[contract.JOINT_STATES])
        assert js.q[0, 1] == pytest.approx(z)
        assert np.all(np.diff(js.stamp_ns) == 1_000_000)
        assert contract.CONTACT_TYPE in topic_types(bag).values()
