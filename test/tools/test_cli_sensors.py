# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
``dodo hop`` with noisy sensors: one seed, one bag; replay through the controller stays exact.

Two real runs over DDS (separate processes, own domains) of the hopper with encoder, foot sensor
and IMU noise, the same seed: every state, sensor, ground-truth and command topic holds the same
messages, byte for byte. The bag's ``/joint_states`` and ``/foot_contact`` are what the
controller was given (the noisy readings), so ``dodo replay --through-controller`` reproduces
every recorded command exactly (|dtau| = 0).
"""
import os
import subprocess
import sys

from conftest import ros_domain_id
from dodo_sim.ros import contract
from process_support import hop_params
import pytest

pytestmark = [pytest.mark.ros, pytest.mark.slow]

DURATION_S = 1.0
SENSORS = {'sensor_seed': 3, 'joint_position_noise': [2e-3, 2e-3, 1e-3, 1e-3],
           'joint_position_resolution': [0.0, 0.0, 3.8e-4, 3.8e-4],
           'joint_velocity_noise': [1e-3], 'contact_force_noise': 0.5,
           'contact_force_resolution': 0.5, 'imu_link': 'body',
           'imu_linear_acceleration_noise': 0.05}
#: topics whose content is a function of the run's inputs (not of wall time or node ids)
COMPARED = (contract.CLOCK, contract.JOINT_STATES, contract.FOOT_CONTACT, contract.IMU,
            contract.JOINT_COMMANDS, contract.CONTROLLER_STATE,
            contract.ground_truth_topic(contract.JOINT_STATES),
            contract.ground_truth_topic(contract.FOOT_CONTACT),
            contract.ground_truth_topic(contract.IMU))


def hop(tmp_path, name: str):
    """Run ``dodo hop`` on the noisy params; return its bag."""
    params = tmp_path / 'params.yaml'
    params.write_text(hop_params(simulator=SENSORS, controller={'target_velocity': 0.0}))
    bag = tmp_path / name
    env = dict(os.environ, ROS_DOMAIN_ID=str(ros_domain_id()),
               ROS_AUTOMATIC_DISCOVERY_RANGE='LOCALHOST')
    done = subprocess.run([sys.executable, '-m', 'dodo_sim.tools.cli', 'hop', '--params-file',
                           str(params), '--duration', str(DURATION_S), '--bag', str(bag),
                           '--no-plots', '--wall-timeout', '150'],
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env,
                          timeout=200)
    assert done.returncode == 0, done.stdout
    return bag


def contents(bag) -> dict:
    """
    Return each compared topic's messages, serialized again by rosbags.

    Serialized again: the CDR alignment padding a writer leaves is unspecified (the controller's
    refilled JointState bytes carry whatever the buffer held there); the values are compared.
    """
    from dodo_sim.tools.bag import iter_messages, make_typestore
    store = make_typestore()
    out = {topic: [] for topic in COMPARED}
    for topic, msgtype, _, msg in iter_messages(bag, COMPARED):
        out[topic].append(bytes(store.serialize_cdr(msg, msgtype)))
    return out


def test_two_noisy_runs_of_one_seed_give_equal_bags_and_an_exact_replay(tmp_path):
    from dodo_sim.tools.replay_check import compare_with_controller
    first, second = contents(hop(tmp_path, 'first')), contents(hop(tmp_path, 'second'))
    steps = int(round(DURATION_S / 1e-3))
    for topic in COMPARED:
        if topic != contract.CONTROLLER_STATE:
            assert len(first[topic]) >= steps + 1, (topic, len(first[topic]))
        assert first[topic] == second[topic], topic
    assert first[contract.JOINT_STATES] != first[contract.ground_truth_topic(
        contract.JOINT_STATES)]

    result = compare_with_controller(tmp_path / 'first')
    assert result.compared >= steps and result.max_abs_nm == 0.0, result.summary()
