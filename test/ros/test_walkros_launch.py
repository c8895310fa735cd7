# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
``launch/walk.launch.py`` under the real ROS 2 launch tooling (colcon build + ``ros2 launch``).

It uses the fixture and helpers of test_launch_real.py (``../shared/ros2_launch``, stand-ins for
robot_state_publisher and rviz2; skipped with the reason where it is absent):

* ``record:=true rviz:=true``: the controller node hosts the Kneed Walker, the walker steps
  (the controller's ``steps`` channel), rviz2 gets config/walk.rviz, robot_state_publisher the
  walker's description; SIGINT -> launch and every node exit 0; the bag holds both contact
  topics from t = 0 (the initial state of config/walk.yaml) and the steps counted from them are
  the controller's count;
* ``params_file:=`` a file with the torso PD off: the controller logs the fall with the reason
  and the time of the offline run, and the graph keeps running until SIGINT.
"""
import re

from conftest import REPO
import numpy as np
import pytest
from test_launch_real import Launch, Listener, until

pytestmark = [pytest.mark.ros, pytest.mark.slow]

WALK_YAML = REPO / 'config' / 'walk.yaml'
WALKER_URDF = REPO / 'urdf' / 'kneed_walker.urdf.xacro'
FEET = ('left_foot', 'right_foot')


def walk_launch(env, *args) -> Launch:
    return Launch(env, *args, launch_file='walk.launch.py')


def controller_channels(listener, names) -> dict:
    """Subscribe to /controller/state; name -> list of the received values."""
    from dodo_sim.ros import contract
    from sensor_msgs.msg import JointState
    got = {name: [] for name in names}

    def on_state(msg):
        for name in names:
            if name in msg.name:
                got[name].append(msg.position[msg.name.index(name)])
    listener.node.create_subscription(JointState, contract.CONTROLLER_STATE, on_state, 100)
    return got


def test_walk_launch_walks_records_both_feet_and_exits_0_on_sigint(launch_env, tmp_path):
    from dodo_control.walker.controller import WalkerConfig
    from dodo_control.walker.outcome import count_steps
    from dodo_sim.ros import contract
    from dodo_sim.ros.params import node_parameters
    from dodo_sim.tools.bag import message_counts, read_bag
    from dodo_sim.tools.bag_arrays import joint_states, named_values, wrenches
    bag = tmp_path / 'walk bag'
    launch = walk_launch(launch_env, 'record:=true', f'bag:={bag}', 'rviz:=true')
    listener = Listener(launch.domain)
    try:
        got = controller_channels(listener, ('steps', 'fallen'))
        launch.wait_for(r'\[controller\]: controller ready \(kneed_walker;')
        launch.wait_for(r'\[simulator\]: simulation starts')
        assert until(lambda: got['steps'] and got['steps'][-1] >= 3, 240.0), (
            got['steps'][-1:], launch.output[-3000:])
    finally:
        listener.close()
    assert max(got['fallen']) == 0.0
    launch.wait_for(r'\[STAND-IN\] /joint_states joint names: .*left_knee.*right_knee')
    launch.wait_for(r'\[STAND-IN rviz2\] -d \S+/config/walk\.rviz exists=True')
    assert launch.interrupt() == 0, launch.output[-4000:]
    launch.finished_cleanly('simulator', 'controller', 'recorder')   # ours (not the stand-ins)
    assert 'the robot fell' not in launch.output

    counts = message_counts(bag)
    contacts = [contract.contact_topic(f) for f in FEET]
    assert contract.FOOT_CONTACT not in counts
    assert counts[contract.JOINT_STATES] == counts[contacts[0]] == counts[contacts[1]]
    data = read_bag(bag, [contract.JOINT_STATES, contract.CONTROLLER_STATE, *contacts])
    js = joint_states(data[contract.JOINT_STATES], WalkerConfig().joint_names)
    assert js.stamp_ns[0] == 0
    np.testing.assert_array_equal(js.q[0], node_parameters(WALK_YAML, 'simulator')['initial_q'])
    forces = np.stack([wrenches(data[topic])[1] for topic in contacts], axis=1)
    ticks, _ = count_steps(np.any(forces != 0.0, axis=2), js.t)
    _, values = named_values(data[contract.CONTROLLER_STATE])
    assert len(ticks) >= 3
    assert values['steps'][-1] == len(ticks)
    assert np.all(values['fallen'] == 0.0)


def test_walk_launch_reports_a_fall_with_its_reason_and_keeps_running(launch_env, tmp_path):
    from dodo_control.walker.controller import WalkerConfig, WalkerController
    from dodo_control.walker.outcome import walk
    from dodo_sim.ros.params import config_from_file
    from dodo_sim.simulator import SimConfig, Simulator
    params = tmp_path / 'fall.yaml'
    params.write_text(WALK_YAML.read_text().replace(
        '    torso_kp_nm_per_rad: 140.0\n    torso_kd_nms_per_rad: 18.0\n',
        '    torso_kp_nm_per_rad: 0.0\n    torso_kd_nms_per_rad: 0.0\n'))
    assert 'torso_kp_nm_per_rad: 0.0' in params.read_text()
    offline = walk(Simulator(WALKER_URDF, config_from_file(SimConfig, params, 'simulator')),
                   WalkerController(config_from_file(WalkerConfig, params, 'controller')),
                   duration_s=1.0)
    assert offline.fell
    launch = walk_launch(launch_env, f'params_file:={params}')
    launch.wait_for(re.escape(f'[controller]: the robot fell: {offline.fall_reason} at t = '
                              f'{offline.fall_time_s:.3f} s'), 240.0)
    launch.wait_for(r'\[STAND-IN\] \d{4,} /joint_states messages so far')   # runs on
    assert launch.interrupt() == 0, launch.output[-4000:]
    launch.finished_cleanly('simulator', 'controller')
