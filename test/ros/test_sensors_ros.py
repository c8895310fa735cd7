# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
Noisy sensors over ROS: the simulator node publishes what the offline rollout computes.

The simulator and controller nodes in one process (a private domain), with encoder, foot sensor
and IMU noise, a latency and the hopper's IMU on its body: ``/joint_states``,
``/foot_contact`` and ``imu`` carry the rollout's readings bit for bit, ``ground_truth/*`` its
true states, and the controller's commands are the rollout's (it was fed the same readings).
The rollout is a function of the seed, so a ROS run is too (two ``dodo hop`` runs giving equal
bags: test_cli_sensors.py).
"""
import numpy as np
from process_support import hop_params
import public_robots
import pytest
from ros_support import in_process_ros

rclpy = pytest.importorskip('rclpy')

# These imports must follow the importorskip above (E402), so they cannot take their
# place in the sorted import block (I100).
from dodo_control.controller import Controller, ControllerConfig  # noqa: E402, I100
from dodo_sim.paths import default_urdf_path  # noqa: E402
from dodo_sim.rollout import rollout  # noqa: E402
from dodo_sim.ros import contract  # noqa: E402
from dodo_sim.ros.params import config_from_file  # noqa: E402
from dodo_sim.simulator import SimConfig, Simulator  # noqa: E402
from geometry_msgs.msg import WrenchStamped  # noqa: E402
from sensor_msgs.msg import Imu, JointState  # noqa: E402
from test_ros_graph import make_sim, ros  # noqa: E402, F401  (fixture)

pytestmark = pytest.mark.ros

DURATION_S = 0.6           # the drop and the first touchdown
SENSORS = {'mode': 'lockstep', 'command_timeout': 2.0, 'sensor_seed': 7,
           'joint_position_noise': [2e-3, 2e-3, 1e-3, 1e-3],
           'joint_position_resolution': [0.0, 0.0, 3.8e-4, 3.8e-4],
           'joint_velocity_noise': [1e-3], 'joint_state_latency': 1,
           'contact_force_noise': 0.5, 'contact_force_resolution': 0.5,
           'imu_link': 'body', 'imu_angular_velocity_noise': 0.01,
           'imu_linear_acceleration_noise': 0.05, 'imu_orientation_noise': 0.002}


@pytest.fixture
def noisy_ros(monkeypatch, tmp_path):
    monkeypatch.setenv('ROS_AUTOMATIC_DISCOVERY_RANGE', 'LOCALHOST')
    params = tmp_path / 'params.yaml'
    params.write_text(hop_params(simulator={**SENSORS, 'stop_after': DURATION_S},
                                 controller={'target_velocity': 0.0}))
    with in_process_ros(['--ros-args', '--params-file', str(params)]) as graph:
        graph.params = params
        yield graph


def stamp_ns(msg) -> int:
    return msg.header.stamp.sec * 1_000_000_000 + msg.header.stamp.nanosec


def by_stamp(messages) -> list:
    return [m for _, m in sorted((stamp_ns(m), m) for m in messages)]


def xyz(vector):
    return [vector.x, vector.y, vector.z]


def imu_rows(messages) -> np.ndarray:
    return np.array([[m.orientation.x, m.orientation.y, m.orientation.z, m.orientation.w]
                     + xyz(m.angular_velocity) + xyz(m.linear_acceleration) for m in messages])


def test_the_node_publishes_the_rollouts_readings_and_the_truth_apart(noisy_ros):
    from dodo_sim.ros.controller_node import ControllerNode
    from dodo_sim.ros.simulator_node import SimulatorNode
    graph = noisy_ros
    sim = graph.add(SimulatorNode(context=graph.context))
    graph.add(ControllerNode(context=graph.context))
    probe = graph.add(rclpy.create_node('probe', context=graph.context))
    got = {}
    topics = {contract.JOINT_STATES: JointState, contract.FOOT_CONTACT: WrenchStamped,
              contract.IMU: Imu, contract.JOINT_COMMANDS: JointState}
    for topic, kind in list(topics.items())[:3]:
        topics[contract.ground_truth_topic(topic)] = kind
    for topic, kind in topics.items():
        got[topic] = []
        probe.create_subscription(kind, topic, got[topic].append, 10000)
    steps = int(round(DURATION_S / 1e-3))
    assert graph.spin_until(lambda: sim.done.done(), timeout_s=120.0), 'run did not finish'
    assert graph.spin_until(lambda: all(len(got[t]) >= steps + 1 for t in got
                                        if t != contract.JOINT_COMMANDS), 10.0)
    assert sim.exit_code == 0

    reference_sim = Simulator(default_urdf_path(),
                              config_from_file(SimConfig, graph.params, 'simulator'))
    controller = Controller(reference_sim.leg.urdf_xml,
                            config_from_file(ControllerConfig, graph.params, 'controller'))
    run = rollout(reference_sim, controller, steps=steps)

    states = by_stamp(got[contract.JOINT_STATES])
    assert [stamp_ns(m) for m in states] == [k * 1_000_000 for k in range(steps + 1)]
    np.testing.assert_array_equal([list(m.position) for m in states], run.measured_q)
    np.testing.assert_array_equal([list(m.velocity) for m in states], run.measured_v)
    truth = by_stamp(got[contract.ground_truth_topic(contract.JOINT_STATES)])
    np.testing.assert_array_equal([list(m.position) for m in truth], run.q)
    np.testing.assert_array_equal([list(m.velocity) for m in truth], run.v)
    assert np.abs(run.measured_q - run.q).max() > 1e-3          # they do differ

    contacts = by_stamp(got[contract.FOOT_CONTACT])
    np.testing.assert_array_equal([xyz(m.wrench.force) for m in contacts],
                                  run.measured_contact_forces[:, 0])
    true_contacts = by_stamp(got[contract.ground_truth_topic(contract.FOOT_CONTACT)])
    np.testing.assert_array_equal([xyz(m.wrench.force) for m in true_contacts],
                                  run.contact_forces[:, 0])

    imu = by_stamp(got[contract.IMU])
    assert {m.header.frame_id for m in imu} == {'body'}
    np.testing.assert_array_equal(imu_rows(imu), run.imu)
    np.testing.assert_array_equal(
        imu_rows(by_stamp(got[contract.ground_truth_topic(contract.IMU)])), run.imu_truth)
    assert imu[0].angular_velocity_covariance[0] == pytest.approx(0.01 ** 2)

    # the controller was fed the readings: its commands are the rollout's
    commands = by_stamp(got[contract.JOINT_COMMANDS])[:steps]
    np.testing.assert_array_equal([list(m.effort) for m in commands], run.tau)


def test_a_floating_base_publishes_its_exact_imu_and_no_ground_truth(ros):  # noqa: F811
    """Solo-12 in flight, default sensors: imu at base_link, the rollout's rows, nothing else."""
    if public_robots.robots_dir() is None:
        pytest.skip('example-robot-data is not installed')
    initial_q = [0.0, 0.0, 0.8, 0.0, 0.0, 0.0, 1.0] + list(public_robots.SOLO_STAND_LEGS)
    initial_v = [0.5, 0.0, 1.0, 0.3, -0.2, 1.0] + [0.0] * 12
    sim = make_sim(ros, robot_description=public_robots.solo12(),
                   contact_frames=list(public_robots.SOLO_FEET), initial_q=initial_q,
                   initial_v=initial_v, min_subscribers=0)
    probe = ros.add(rclpy.create_node('imu_probe', context=ros.context))
    imu, states = [], []
    probe.create_subscription(Imu, contract.IMU, imu.append, 1000)
    commands = probe.create_publisher(JointState, contract.JOINT_COMMANDS, 100)
    names = list(sim.sim.actuated_joint_names)

    def answer(state):
        states.append(state)
        commands.publish(JointState(header=state.header, name=names,
                                    effort=[0.0] * len(names)))

    probe.create_subscription(JointState, contract.JOINT_STATES, answer, 1000)
    count = 40
    assert ros.spin_until(lambda: len(imu) >= count, 60.0)
    assert {m.header.frame_id for m in imu} == {'base_link'}
    assert probe.count_publishers(contract.ground_truth_topic(contract.IMU)) == 0
    assert probe.count_publishers(contract.ground_truth_topic(contract.JOINT_STATES)) == 0
    assert list(imu[0].linear_acceleration_covariance) == [0.0] * 9

    reference = Simulator(public_robots.solo12(), sim.config)
    run = rollout(reference, _ZeroTorque(len(names)), steps=count)
    rows = imu_rows(by_stamp(imu)[:count])
    np.testing.assert_array_equal(rows, run.imu[:count])
    np.testing.assert_array_equal(run.imu, run.imu_truth)
    # the first state reads gravity's reaction (no motion yet); in flight, nearly free fall
    np.testing.assert_allclose(rows[0, 7:10], (0.0, 0.0, 9.81), atol=1e-12)
    assert np.abs(rows[1:, 7:10]).max() < 0.1


class _ZeroTorque:

    def __init__(self, n):
        self.n = n

    def update(self, t, q, v, force):
        return np.zeros(self.n)
