# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
A run reports its outcome honestly (issue 27 items 6 and 8, no ROS needed).

What ``dodo hop`` says at the end of a run, from the nodes' summary lines and the bag: a bag
whose streams stop before the simulated end fails the run naming the topics and how much is
missing; a ``false`` in a summary line never becomes a cause; a hosted controller's task
failure (the SLIP leg that does not hop) fails the run with its one line.
"""
import io

from dodo_sim.ros.runtime import format_summary, parse_summary
from dodo_sim.tools.bag_writer import OfflineBagWriter
from dodo_sim.tools.run_supervision import HopRun
import numpy as np

DURATION_S = 2.0
STEP_S = 0.001


def make_hop(tmp_path, bag=None):
    params = tmp_path / 'p.yaml'
    params.write_text('{}\n')
    return HopRun(params, DURATION_S, bag=bag, out=io.StringIO(), err=io.StringIO())


def run_bag(path, clock_end_s=DURATION_S, odom_end_s=DURATION_S, command_end_s=DURATION_S):
    """
    Write a 2 s run as the simulator, controller and recorder write it.

    /foot_contact, /joint_states, /clock every step, /odom every 10 ms, /joint_commands
    answering each state; /clock and /odom only up to their given ends.
    """
    q, v = np.array([0.0, 1.2, 0.3, -0.6]), np.zeros(4)
    with OfflineBagWriter(path) as writer:
        for k in range(int(round(DURATION_S / STEP_S)) + 1):
            t = k * STEP_S
            writer.contact('foot', t, [0.0, 0.0])
            writer.joint_state(t, q, v)
            if t <= clock_end_s + 1e-9:
                writer.clock(t)
            if k % 10 == 0 and t <= odom_end_s + 1e-9:
                writer.write_raw('odom', 'nav_msgs/msg/Odometry', odometry(writer, t),
                                 writer._log_ns(t, None) + 3)
            if t <= command_end_s + 1e-9:
                writer.joint_command(t, ['hip', 'knee'], [0.0, 0.0])
    return path


def odometry(writer, t):
    types = writer.typestore.types
    msg = types['nav_msgs/msg/Odometry'](
        header=writer._header(t, 'odom'), child_frame_id='base',
        pose=types['geometry_msgs/msg/PoseWithCovariance'](
            pose=types['geometry_msgs/msg/Pose'](
                position=types['geometry_msgs/msg/Point'](x=0.0, y=0.0, z=1.0),
                orientation=types['geometry_msgs/msg/Quaternion'](x=0.0, y=0.0, z=0.0, w=1.0)),
            covariance=np.zeros(36)),
        twist=types['geometry_msgs/msg/TwistWithCovariance'](
            twist=types['geometry_msgs/msg/Twist'](
                linear=types['geometry_msgs/msg/Vector3'](x=0.0, y=0.0, z=0.0),
                angular=types['geometry_msgs/msg/Vector3'](x=0.0, y=0.0, z=0.0)),
            covariance=np.zeros(36)))
    return writer.typestore.serialize_cdr(msg, 'nav_msgs/msg/Odometry')


def completed(hop, **summary):
    hop.sim_summary = {'sim_time_s': DURATION_S, 'steps': 2000, 'stop_reason': 'stop_after',
                       'mode': 'lockstep', 'timeouts': 0, 'zero_torque_steps': 0, 'foreign': 0,
                       'controller': '/controller', 'duplicate_controller': False, **summary}
    return hop.result('completed')


def test_a_bag_that_lost_its_tail_fails_the_run_naming_topics_and_time(tmp_path):
    """Issue 27 item 8: /clock and odom end at 1.256 s of a 2 s run, /joint_states complete."""
    hop = make_hop(tmp_path, run_bag(tmp_path / 'bag', clock_end_s=1.256, odom_end_s=1.25))
    result = completed(hop)
    assert result.exit_code == 1 and result.outcome == 'failed'
    line = result.summary()
    assert line.startswith('FAILED at t = 2.000 s of 2 s simulated: the bag lost the end of the '
                           'run: /odom at 1.250 s, /clock at 1.256 s instead of 2.000 s (up to '
                           '0.750 s missing;'), line
    assert '/joint_states' in line.split('missing;')[1] and 'completed' not in line


def test_a_bag_that_reaches_the_simulated_end_completes(tmp_path):
    """Odom every 10 ms and the last state unanswered: both still reach the end."""
    hop = make_hop(tmp_path, run_bag(tmp_path / 'bag', odom_end_s=1.999,
                                     command_end_s=DURATION_S - STEP_S))
    result = completed(hop)
    assert result.exit_code == 0, result.summary()
    assert result.summary().endswith('every process exited cleanly')


def test_a_false_in_the_summary_line_never_names_a_second_node(tmp_path):
    """
    Issue 27 item 6: ``duplicate_controller=false`` was read back as the text 'false'.

    The foreign commands came from another publisher; the line must not say that a second node
    with the controller's name sent them, whether the parser gives False or the text 'false'.
    """
    line = format_summary('exchange', {'foreign': 3, 'controller': '/controller',
                                       'duplicate_controller': False})
    parsed = parse_summary(line, 'exchange')
    for flag in (parsed['duplicate_controller'], 'false'):
        hop = make_hop(tmp_path)
        result = completed(hop, foreign=parsed['foreign'], duplicate_controller=flag)
        assert result.exit_code == 1
        assert 'a second node named' not in result.summary()
        assert ('3 command(s) from a second publisher refused: the simulator applied only the '
                'commands of /controller' in result.summary()), result.summary()


def test_a_second_node_with_the_controllers_name_is_named(tmp_path):
    hop = make_hop(tmp_path)
    result = completed(hop, foreign=7, duplicate_controller='true')
    assert '7 command(s) from a second node named /controller refused' in result.summary()


def test_a_leg_that_never_leaves_the_ground_fails_the_run_with_one_line(tmp_path):
    """The hop monitor's verdict, through the controller's summary line, as dodo hop reads it."""
    from dodo_control.slip.outcome import HopCriteria, HopMonitor
    monitor = HopMonitor(criteria=HopCriteria(max_stance_s=1.0))
    for k in range(2001):               # falls from the start, down from t = 0.606 s for good
        monitor.update(k * STEP_S, None, [[0.0, 0.0, 40.0 if k >= 606 else 0.0]])
    line = format_summary('controller', {'updates': 2001, 'controller': 'slip_hopper',
                                         **monitor.summary()})
    hop = make_hop(tmp_path)
    hop.controller_summary = parse_summary(f'[INFO] [1.0] [controller]: {line}', 'controller')
    result = completed(hop)
    assert result.exit_code == 1
    assert result.summary() == (
        'FAILED at t = 2.000 s of 2 s simulated: the leg did not hop: on the ground from '
        't = 0.606 s for more than 1 s without a liftoff (no_liftoff at t = 1.607 s, after 0 '
        'liftoff(s)) (controller) (simulator: stop_after)')


def test_a_hopping_leg_completes_and_says_how_it_hopped(tmp_path):
    from dodo_control.slip.outcome import HopMonitor
    monitor = HopMonitor()
    for k in range(2000):
        t = k * STEP_S
        force = [[0.0, 0.0, 300.0 if (t % 0.7) < 0.14 else 0.0]]
        monitor.update(t, None, force)
    line = format_summary('controller', {'controller': 'slip_hopper', **monitor.summary()})
    hop = make_hop(tmp_path)
    hop.controller_summary = parse_summary(line, 'controller')
    result = completed(hop)
    assert result.exit_code == 0, result.summary()
    assert result.hop_summary() == 'hopped: 3 liftoff(s), longest ground contact 0.139 s'
