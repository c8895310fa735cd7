# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
Ground-truth odometry from the simulator over DDS (REP-105, nav_msgs/Odometry).

nav_msgs/Odometry: pose in ``header.frame_id``, twist "in the coordinate frame given by the
child_frame_id". Checked independently of the publisher's code: the twist must equal the finite
difference of the published poses rotated into the base link's axes (a twist in world axes
fails by ~|v| on the rotated, spinning Solo-12 below). The floating base is Solo-12 from the
``example-robot-data`` package (installed from the registry, test/public_robots.py).
"""
from __future__ import annotations

from conftest import ros_domain_id  # noqa: F401  (the ros fixture's domain helper)
from dodo_sim.ros import contract
import numpy as np
import pinocchio as pin
import public_robots
import pytest
import rclpy  # noqa: F401
from test_ros_graph import make_sim, ros  # noqa: F401  (fixture)

pytestmark = pytest.mark.ros

STEPS = 60


def _run(ros, sim, count=STEPS):  # noqa: F811
    """Answer every state with zero torques (lockstep); return the odometry and joint states."""
    from nav_msgs.msg import Odometry
    from sensor_msgs.msg import JointState
    node = ros.add(rclpy.create_node('odom_probe', context=ros.context))
    odoms, states = [], []
    node.create_subscription(Odometry, contract.ODOM, odoms.append, 1000)
    pub = node.create_publisher(JointState, contract.JOINT_COMMANDS, 100)
    names = list(sim.sim.actuated_joint_names)

    def answer(state):
        states.append(state)
        pub.publish(JointState(header=state.header, name=names, effort=[0.0] * len(names)))

    node.create_subscription(JointState, contract.JOINT_STATES, answer, 1000)
    assert ros.spin_until(lambda: len(odoms) >= count and len(states) >= count, 60.0)
    return odoms[:count], states


def _check_twist_is_in_the_child_frame(odoms, period):
    """Finite differences of the poses equal the twists rotated into the child frame."""
    poses = [pin.XYZQUATToSE3(np.array([
        m.pose.pose.position.x, m.pose.pose.position.y, m.pose.pose.position.z,
        m.pose.pose.orientation.x, m.pose.pose.orientation.y, m.pose.pose.orientation.z,
        m.pose.pose.orientation.w])) for m in odoms]
    linear = [np.array([m.twist.twist.linear.x, m.twist.twist.linear.y, m.twist.twist.linear.z])
              for m in odoms]
    angular = [np.array([m.twist.twist.angular.x, m.twist.twist.angular.y,
                         m.twist.twist.angular.z]) for m in odoms]
    worst = 0.0
    for k in range(len(odoms) - 1):
        a, b = poses[k], poses[k + 1]
        # position: world velocity = R v_child, trapezoid over the step
        fd_world = (b.translation - a.translation) / period
        mean_world = 0.5 * (a.rotation @ linear[k] + b.rotation @ linear[k + 1])
        # orientation: log(R_a^T R_b) / dt is the angular velocity in the child's axes
        fd_angular = pin.log3(a.rotation.T @ b.rotation) / period
        mean_angular = 0.5 * (angular[k] + angular[k + 1])
        worst = max(worst, np.abs(fd_world - mean_world).max(),
                    np.abs(fd_angular - mean_angular).max())
    assert worst < 2e-3, worst
    return worst


def test_floating_base_odometry_is_rep105_ground_truth(ros):  # noqa: F811
    """Solo-12 thrown spinning: odom -> base_link, twist in base_link, free flyer not a joint."""
    if public_robots.robots_dir() is None:
        pytest.skip('example-robot-data is not installed')
    yaw, roll = 1.0, 0.3
    quat = pin.Quaternion(pin.rpy.rpyToMatrix(roll, 0.0, yaw)).coeffs()
    initial_q = [0.2, -0.1, 0.8] + list(quat) + list(public_robots.SOLO_STAND_LEGS)
    initial_v = [1.0, 0.5, 0.3, 0.4, -0.2, 2.0] + [0.0] * 12     # base twist in its own axes
    sim = make_sim(ros, robot_description=public_robots.solo12(),
                   contact_frames=list(public_robots.SOLO_FEET), initial_q=initial_q,
                   initial_v=initial_v, min_subscribers=0, odom_period=0.0)
    odoms, states = _run(ros, sim)
    assert {(m.header.frame_id, m.child_frame_id) for m in odoms} == \
        {(contract.ODOM_FRAME, 'base_link')}
    assert 'root_joint' not in states[0].name and len(states[0].name) == 12
    first = odoms[0]
    assert np.linalg.norm([first.twist.twist.angular.z]) > 1.0     # really spinning
    _check_twist_is_in_the_child_frame(odoms, sim.config.control_period)


def test_hopper_odometry_is_its_body_in_world(ros):  # noqa: F811
    """
    The hopper hangs from ``world`` by base_x, base_z: odometry of ``body`` in ``world``.

    robot_state_publisher gives world -> ... -> body from /joint_states, so nothing publishes a
    second transform to ``body``; the odometry's pose is where that chain puts it.
    """
    from dodo_sim.ros.tf_frames import compose, TfTree
    sim = make_sim(ros, initial_q=[0.0, 1.3, 0.3, -0.6], initial_v=[0.7, 0.4, 0.0, 0.0],
                   min_subscribers=0, odom_period=0.0)
    odoms, states = _run(ros, sim)
    assert {(m.header.frame_id, m.child_frame_id) for m in odoms} == \
        {(contract.WORLD_FRAME, 'body')}
    _check_twist_is_in_the_child_frame(odoms, sim.config.control_period)
    tree = TfTree(sim.sim.leg.urdf_xml)
    by_stamp = {(s.header.stamp.sec, s.header.stamp.nanosec): s for s in states}
    for m in odoms[::10]:
        js = by_stamp[(m.header.stamp.sec, m.header.stamp.nanosec)]
        q = tree.configuration(dict(zip(js.name, js.position)))
        edges = tree.static_transforms() + tree.moving_transforms(q)
        position, _ = compose(edges, 'body')
        p = m.pose.pose.position
        np.testing.assert_allclose([p.x, p.y, p.z], position, atol=1e-9)
        assert abs(m.twist.twist.linear.x - js.velocity[0]) < 1e-9     # body does not rotate
        assert abs(m.twist.twist.linear.z - js.velocity[1]) < 1e-9


def test_odometry_is_decimated_on_the_state_stamps(ros):  # noqa: F811
    """odom_period = 5 ms: every fifth state's stamp, whatever the wall clock does."""
    sim = make_sim(ros, min_subscribers=0, odom_period=0.005)
    odoms, states = _run(ros, sim, count=12)
    stamps = [m.header.stamp.sec * 1_000_000_000 + m.header.stamp.nanosec for m in odoms]
    assert stamps == [k * 5_000_000 for k in range(12)]
