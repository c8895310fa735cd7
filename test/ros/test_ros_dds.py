# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
Faults over real DDS: the controller process is killed in the middle of a ``dodo hop`` run.

Expected (docs/ros_contract.md, faults): lockstep never steps without the controller's answer, so
``dodo hop`` (which sees the controller's process exit) ends the run at once with a reason naming
the controller and exit code 1; the bag is closed and readable and holds no zero-torque step.
"""
import io
import os
import signal
import time

from conftest import ros_domain_id
import numpy as np
from process_support import hop_params
import pytest

rclpy = pytest.importorskip('rclpy')

# These imports must follow the importorskip above (E402), so they cannot take their
# place in the sorted import block (I100).
from dodo_sim.ros import contract  # noqa: E402, I100
from dodo_sim.tools.run_supervision import HopRun  # noqa: E402
from rosgraph_msgs.msg import Clock  # noqa: E402

pytestmark = [pytest.mark.ros, pytest.mark.slow]

PARAMS = hop_params(simulator={'command_timeout': 0.3})


def test_controller_killed_mid_run(tmp_path):
    from dodo_sim.tools.bag import message_counts, read_bag
    from dodo_sim.tools.bag_arrays import joint_states

    duration, kill_at = 5.0, 1.0
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
        node.destroy_node()
        killed = time.monotonic()
        # the run ends at once (the supervisor sees the exit), not at its duration
        assert not hop.wait(timeout=120.0), out.getvalue()
        assert time.monotonic() - killed < 10.0
    finally:
        hop.stop()
        rclpy.try_shutdown(context=context)
    result = hop.result('failed')
    log = out.getvalue()
    assert result.exit_code == 1, result.summary()
    assert 'controller lost: the controller process exited early with code -9 (killed by ' \
        'SIGKILL)' in result.summary(), result.summary()
    assert hop.children['recorder'].proc.returncode == 0, log
    assert result.bag_closed
    counts = message_counts(tmp_path / 'bag')      # readable: metadata written
    js = joint_states(read_bag(tmp_path / 'bag', [contract.JOINT_STATES])[contract.JOINT_STATES])
    assert counts[contract.JOINT_STATES] == len(js.t) < int(round(duration / 0.001))
    assert np.all(np.diff(js.stamp_ns) == 1_000_000)
    assert np.isfinite(js.q).all()
    # lockstep: simulated time stopped at the kill; every step applied a controller answer
    assert kill_at <= js.t[-1] < kill_at + 0.5, js.t[-1]
    assert hop.sim_summary['zero_torque_steps'] == 0, hop.sim_summary
    assert hop.sim_summary['unconverged_steps'] == hop.sim_summary['accumulation_steps'] == 0
    assert hop.sim_summary['steps'] == len(js.t) - 1, hop.sim_summary
    assert 'zero torque' not in log
