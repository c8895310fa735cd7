# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
Faults over real DDS: the controller process is killed in the middle of a ``dodo hop`` run.

Expected (docs/ros_contract.md, faults): the simulator warns, applies zero torque and keeps
stepping to
the end; the recorder's bag stays complete and readable; ``dodo hop`` reports the failure.
"""
import io
import os
import re
import signal
import time

from conftest import ros_domain_id
import numpy as np
import pytest

rclpy = pytest.importorskip('rclpy')

from dodo_sim.ros import contract  # noqa: E402
from dodo_sim.tools.hop_runner import HopRun  # noqa: E402
from rosgraph_msgs.msg import Clock  # noqa: E402

pytestmark = [pytest.mark.ros, pytest.mark.slow]

PARAMS = """
/**:
  ros__parameters:
    use_sim_time: true
simulator:
  ros__parameters:
    initial_q: [0.0, 1.3, 0.3, -0.6]
    command_timeout: 0.3
controller:
  ros__parameters:
    apex_height: 1.2
    target_x: .nan
"""


def test_controller_killed_mid_run(tmp_path):
    from dodo_sim.tools.bag import joint_states, message_counts, read_bag

    duration, kill_at = 2.5, 1.0
    params = tmp_path / 'hop.yaml'
    params.write_text(PARAMS)
    domain = ros_domain_id()
    env = dict(os.environ, ROS_DOMAIN_ID=str(domain), ROS_AUTOMATIC_DISCOVERY_RANGE='LOCALHOST')
    out = io.StringIO()
    hop = HopRun(params, duration, bag=tmp_path / 'bag', env=env, out=out)
    hop.check()
    context = rclpy.Context()
    rclpy.init(context=context, domain_id=domain)
    sim_time = {'t': -1.0}
    try:
        node = rclpy.create_node('watch', context=context)
        node.create_subscription(Clock, contract.CLOCK, lambda m: sim_time.update(
            t=m.clock.sec + 1e-9 * m.clock.nanosec), 10)
        from rclpy.executors import SingleThreadedExecutor
        executor = SingleThreadedExecutor(context=context)
        executor.add_node(node)
        hop.start()
        deadline = time.monotonic() + 120.0
        while sim_time['t'] < kill_at and time.monotonic() < deadline:
            executor.spin_once(timeout_sec=0.05)
        assert sim_time['t'] >= kill_at, out.getvalue()
        controller = hop.children['controller'].proc
        controller.send_signal(signal.SIGKILL)
        killed_at = sim_time['t']
        node.destroy_node()
        assert hop.wait(timeout=120.0), out.getvalue()
    finally:
        hop.stop()
        rclpy.try_shutdown(context=context)
    log = out.getvalue()
    assert hop.children['simulator'].proc.returncode == 0, log
    assert hop.children['recorder'].proc.returncode == 0, log
    assert any('controller exited early' in f for f in hop.failures), hop.failures
    assert re.search(r'no command for [\d.]+ s .*zero torque', log), log
    steps = int(round(duration / 0.001))
    counts = message_counts(tmp_path / 'bag')      # readable: metadata written
    assert counts[contract.JOINT_STATES] == steps + 1
    assert counts[contract.CLOCK] == steps + 1
    assert counts[contract.EFFORT_COMMANDS] < steps + 1
    js = joint_states(read_bag(tmp_path / 'bag', [contract.JOINT_STATES])[contract.JOINT_STATES])
    assert np.all(np.diff(js.stamp_ns) == 1_000_000)
    assert np.isfinite(js.q).all()
    # lockstep: no step happens while waiting for the dead controller, so zero torque starts
    # right after the kill (killed_at is the last /clock seen, a few steps behind at most)
    after = js.t > killed_at + 0.1
    assert after.sum() > 300, killed_at
    np.testing.assert_array_equal(js.effort[after, 2:], 0.0)
    before = js.t < killed_at - 0.1
    assert np.abs(js.effort[before, 2:]).max() > 1.0      # the controller was working
