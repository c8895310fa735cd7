# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
The start gate names what is missing within 3 s, over real DDS (issue 28 item 2, issue 27 item 9).

``dodo hop --controller external`` with no node of the user's: the simulator's log names the
missing command publisher (topic, type, QoS) within 3 s of the node being up, instead of
waiting 60 s in silence. With a params file of ``command_convention: ros2_control`` no dodo
controller is started (before, it ran beside the controller_manager's topics and was never
listened to) and the line names the convention's command topic.
"""
import re
import signal
import sys

from conftest import REPO, ros_domain_id, ros_env
from process_support import LineProcess
import pytest

pytestmark = [pytest.mark.ros, pytest.mark.slow]

#: the ROS log line's wall stamp: ``[WARN] [1795793211.601745439] [simulator]: ...``
STAMP = r'\[(\d+\.\d+)\] \[simulator\]: '


@pytest.mark.parametrize('convention, topic', [('stamped', '/joint_commands'),
                                               ('ros2_control', '/topic_based_joint_commands')])
def test_without_a_controller_the_simulator_names_the_missing_publisher_within_3_s(
        tmp_path, convention, topic):
    params = tmp_path / 'params.yaml'
    params.write_text(f'simulator:\n  ros__parameters: {{command_convention: {convention}}}\n')
    domain = ros_domain_id()
    options = ['--controller', 'external'] if convention == 'stamped' else []
    run = LineProcess([sys.executable, '-m', 'dodo_sim.tools.cli', 'hop',
                       '--params-file', str(params), *options, '--domain-id', str(domain),
                       '--duration', '1', '--no-plots', '--runs-dir', str(tmp_path / 'runs')],
                      cwd=REPO, env=ros_env(domain))
    try:
        ready = run.wait_for(STAMP + 'simulator ready', timeout=300.0)
        named = run.wait_for(STAMP + re.escape(
            f'waiting for: a publisher of {topic} (sensor_msgs/JointState, reliable) — none '
            f'on the graph'), timeout=30.0)
    finally:
        run.proc.send_signal(signal.SIGINT)
        code = run.proc.wait(timeout=60)
    assert float(named.group(1)) - float(ready.group(1)) < 3.0, run.output[-3000:]
    assert code == 130, run.output[-3000:]
    assert '[controller]' not in run.output                 # no dodo controller node ran
