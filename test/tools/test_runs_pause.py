# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
``dodo hop`` runs that a stalled, loaded or duplicated controller cannot change.

This is the lockstep pause semantics (docs/ros_contract.md "Timing"; issue 15).

* Two ``dodo hop --duration 5`` runs, one undisturbed and one whose controller process is
  stopped (SIGSTOP) for 0.8 s and for 2.5 s — both longer than ``command_timeout`` (0.5 s):
  both exit 0 and their bags' ``/joint_states`` are identical, bit for bit. The same for a stalled
  run beside a CPU hog on both cores (bounded processes this test starts and kills).
* A second ``controller`` node (``-r __node:=controller``) started by hand mid-run: reported
  at once, the run exits 1 naming it, and the bag's ``dodo replay --through-controller`` check
  passes (|dtau| = 0): the bag keeps the applied commands apart from the ignored ones.
"""
from __future__ import annotations

import os
from pathlib import Path
import signal
import subprocess
import sys
import time

from conftest import REPO, ros_domain_id
import numpy as np
from process_support import hop_params
import pytest

pytest.importorskip('rclpy')

# These imports must follow the importorskip above (E402), so they cannot take their
# place in the sorted import block (I100).
from dodo_sim.ros import contract  # noqa: E402, I100
from dodo_sim.ros.runtime import parse_summary  # noqa: E402

pytestmark = [pytest.mark.ros, pytest.mark.slow]

DURATION = 5.0
PARAMS = hop_params(simulator={'command_timeout': 0.5}, controller={'target_velocity': 0.0})
HOG = ('import time\nend = time.monotonic() + 240.0\n'
       'while time.monotonic() < end:\n    pass\n')


class Hop:
    """``dodo hop --duration 5 --bag DIR`` in a subprocess, output in a file."""

    def __init__(self, tmp_path: Path, name: str):
        self.params = tmp_path / 'hop.yaml'
        self.params.write_text(PARAMS)
        self.bag = tmp_path / name
        self.log = tmp_path / f'{name}.log'
        self.env = dict(os.environ, ROS_DOMAIN_ID=str(ros_domain_id()),
                        ROS_AUTOMATIC_DISCOVERY_RANGE='LOCALHOST', PYTHONUNBUFFERED='1')
        with open(self.log, 'w') as out:
            self.proc = subprocess.Popen(
                [sys.executable, '-m', 'dodo_sim.tools.cli', 'hop', '--params-file',
                 str(self.params), '--duration', str(DURATION), '--bag', str(self.bag),
                 '--no-plots', '--wall-timeout', '300', '--domain-id', self.env['ROS_DOMAIN_ID']],
                stdout=out, stderr=subprocess.STDOUT, env=self.env, cwd=REPO)

    def output(self) -> str:
        return self.log.read_text()

    def wait_for(self, text: str, timeout_s: float = 120.0) -> None:
        deadline = time.monotonic() + timeout_s
        while text not in self.output():
            assert self.proc.poll() is None and time.monotonic() < deadline, self.output()
            time.sleep(0.02)        # polling a log file; no pacing of the run depends on it

    def child(self, module: str) -> int:
        """Pid of the node process ``dodo hop`` started from ``module``."""
        for entry in Path('/proc').iterdir():
            if not entry.name.isdigit():
                continue
            try:
                ppid = int((entry / 'stat').read_text().rsplit(')', 1)[1].split()[1])
                cmdline = (entry / 'cmdline').read_bytes().split(b'\0')
            except (OSError, IndexError, ValueError):
                continue
            if ppid == self.proc.pid and module.encode() in cmdline:
                return int(entry.name)
        raise AssertionError(f'no {module} child of dodo hop')

    def finish(self, timeout_s: float = 300.0) -> int:
        try:
            return self.proc.wait(timeout_s)
        finally:
            if self.proc.poll() is None:
                self.proc.send_signal(signal.SIGINT)
                self.proc.wait(60)

    def joint_states(self):
        from dodo_sim.tools.bag import read_bag
        from dodo_sim.tools.bag_arrays import joint_states
        return joint_states(read_bag(self.bag, [contract.JOINT_STATES])[contract.JOINT_STATES])


def stall(pid: int, seconds: float) -> None:
    os.kill(pid, signal.SIGSTOP)
    try:
        time.sleep(seconds)         # the fault itself: a controller stopped this long
    finally:
        os.kill(pid, signal.SIGCONT)


def stalled_run(tmp_path: Path, name: str) -> Hop:
    hop = Hop(tmp_path, name)
    hop.wait_for('controller: node /controller')      # the exchange runs (first answer in)
    controller = hop.child('dodo_sim.ros.controller_node')
    stall(controller, 0.8)
    time.sleep(0.3)
    stall(controller, 2.5)
    assert hop.finish() == 0, hop.output()[-4000:]
    exchange = parse_summary(hop.output(), 'exchange')
    # both stalls were waits past command_timeout, inside the run; no zero torque, no timeout
    assert exchange['waits'] >= 2 and exchange['wait_s_max'] >= 2.3, exchange
    assert exchange['zero_torque_steps'] == 0 and exchange['timeouts'] == 0, exchange
    return hop


@pytest.fixture(scope='module')
def undisturbed(tmp_path_factory):
    hop = Hop(tmp_path_factory.mktemp('undisturbed'), 'bag')
    assert hop.finish() == 0, hop.output()[-4000:]
    return hop


def assert_identical(a, b) -> None:
    assert len(a.stamp_ns) == len(b.stamp_ns) == int(round(DURATION / 0.001)) + 1
    np.testing.assert_array_equal(a.stamp_ns, b.stamp_ns)
    np.testing.assert_array_equal(a.q, b.q)
    np.testing.assert_array_equal(a.v, b.v)
    np.testing.assert_array_equal(a.effort, b.effort)


def test_controller_stalls_of_0_8_and_2_5_s_leave_the_run_unchanged(undisturbed, tmp_path):
    hop = stalled_run(tmp_path, 'stalled')
    assert_identical(hop.joint_states(), undisturbed.joint_states())


def test_the_bag_holds_every_nodes_configuration_before_the_first_state(undisturbed):
    from dodo_sim.tools.bag import read_bag
    hop = undisturbed
    data = read_bag(hop.bag, [contract.PARAMETER_EVENTS, contract.JOINT_STATES])
    events = data[contract.PARAMETER_EVENTS]
    first_state = data[contract.JOINT_STATES].log_time_ns[0]
    snapshots = {msg.node: log for log, msg in zip(events.log_time_ns, events.messages)
                 if msg.new_parameters}
    assert {'/simulator', '/controller'} <= set(snapshots), sorted(snapshots)
    assert snapshots['/simulator'] < first_state and snapshots['/controller'] < first_state


def test_a_stalled_run_beside_a_cpu_hog_on_both_cores_is_unchanged(undisturbed, tmp_path):
    hogs = [subprocess.Popen([sys.executable, '-c', HOG]) for _ in range(2)]
    try:
        hop = stalled_run(tmp_path, 'hogged')
    finally:
        for hog in hogs:
            hog.kill()
            hog.wait(10)
    assert_identical(hop.joint_states(), undisturbed.joint_states())


def test_a_second_controller_node_is_reported_and_the_bag_replays_exactly(tmp_path):
    from dodo_sim.tools.bag import message_counts
    from dodo_sim.tools.replay_check import compare_with_controller
    hop = Hop(tmp_path, 'bag')
    hop.wait_for('controller: node /controller')
    # started by hand under the controller's name, as a user might
    second = subprocess.Popen(
        [sys.executable, '-m', 'dodo_sim.ros.controller_node', '--ros-args', '-r',
         '__node:=controller', '--params-file', str(hop.params)],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=hop.env, cwd=REPO)
    try:
        code = hop.finish()
    finally:
        second.send_signal(signal.SIGINT)
        try:
            second.wait(20)
        except subprocess.TimeoutExpired:
            second.kill()
            second.wait(10)
    out = hop.output()
    exchange = parse_summary(out, 'exchange')
    assert exchange['foreign'] > 0 and exchange['duplicate_controller'] is True, exchange
    assert 'a second node named /controller sends commands' in out, out[-4000:]
    assert code == 1, out[-4000:]
    assert 'command(s) from a second node named /controller' in out, out[-4000:]
    counts = message_counts(hop.bag)
    assert counts[contract.IGNORED_COMMANDS] > 0, counts
    assert counts[contract.JOINT_COMMANDS] == int(round(DURATION / 0.001)) + 1, counts
    comparison = compare_with_controller(hop.bag)
    assert comparison.source == contract.JOINT_COMMANDS
    assert comparison.compared == int(round(DURATION / 0.001)) + 1
    assert comparison.max_abs_nm == 0.0, comparison.summary()
