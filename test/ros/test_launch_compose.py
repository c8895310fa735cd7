# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
Check the shipped launch file under the real ROS 2 launch tooling.

The tooling is ../shared/ros2_launch, with the fixtures of test_launch_real.py. The file must be
readable and composable: ``--print`` shows one node action per node, and a launch file of the
user's includes ``hop.launch.py`` and overrides the ``namespace`` argument: the robot runs under
it and hops, rviz2 gets a configuration naming the namespaced topics (docs/viewing.md), and SIGINT
ends everything with code 0.
"""
from pathlib import Path
import subprocess
import textwrap
import threading

from conftest import ros_domain_id
import pytest
# stop_leftover_launches: test_launch_real.py's autouse fixture, imported to apply here too (F401)
from test_launch_real import (Launch, Listener, stop_leftover_launches,  # noqa: F401
                              until)
import yaml

pytestmark = [pytest.mark.ros, pytest.mark.slow]


def test_print_shows_a_node_action_per_node(launch_env):
    proc = Launch(launch_env, '--print')
    assert proc.proc.wait(timeout=120) == 0, proc.output
    proc._reader.join(timeout=10)
    for executable in ('simulator', 'driver', 'controller', 'robot_state_publisher', 'rviz2',
                       'recorder'):
        assert f"exec='{executable}'" in proc.output, proc.output


class FileLaunch(Launch):
    """``ros2 launch <file>``: a launch file of the user's, not of the package."""

    def __init__(self, env: dict, path):
        self.env = dict(env, ROS_DOMAIN_ID=str(ros_domain_id()))
        self.domain = int(self.env['ROS_DOMAIN_ID'])
        self.lines = []
        self.proc = subprocess.Popen(['ros2', 'launch', str(path)], stdout=subprocess.PIPE,
                                     stderr=subprocess.STDOUT, text=True, env=self.env,
                                     start_new_session=True)
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()
        self.nodes = set()
        Launch.running.append(self)


INCLUDING = """
from launch import LaunchDescription
from launch.actions import IncludeLaunchDescription
from launch.launch_description_sources import PythonLaunchDescriptionSource
from launch.substitutions import PathJoinSubstitution
from launch_ros.substitutions import FindPackageShare


def generate_launch_description():
    return LaunchDescription([IncludeLaunchDescription(
        PythonLaunchDescriptionSource(PathJoinSubstitution(
            [FindPackageShare('dodo_sim'), 'launch', 'hop.launch.py'])),
        launch_arguments={'namespace': 'robot1', 'rviz': 'true'}.items())])
"""


def test_an_including_launch_file_overrides_the_namespace(launch_env, tmp_path):
    from rosgraph_msgs.msg import Clock
    from sensor_msgs.msg import JointState
    path = tmp_path / 'outer.launch.py'
    path.write_text(textwrap.dedent(INCLUDING))
    launch = FileLaunch(launch_env, path)
    listener = Listener(launch.domain)
    try:
        states, clocks, root = [], [], []
        listener.node.create_subscription(JointState, '/robot1/joint_states', states.append, 10)
        listener.node.create_subscription(Clock, '/robot1/clock', clocks.append, 10)
        listener.node.create_subscription(JointState, '/joint_states', root.append, 10)
        # the node's logger carries the namespace; start-up (numba, model) is slow under load
        launch.wait_for(r'\[robot1\.simulator\]: simulation starts', timeout=600.0)
        assert until(lambda: len(states) > 500, 180.0), launch.output[-4000:]
        assert clocks and not root                 # everything under the namespace
        heights = [s.position[1] for s in states]
        assert max(heights) - min(heights) > 0.05   # it moves (hops): a controller answers
    finally:
        listener.close()
    # rviz2 (../shared/ros2_launch's stand-in) gets hop.rviz with the topics in the namespace
    path = launch.wait_for(r'\[STAND-IN rviz2\] -d (\S+) exists=True').group(1)
    rviz = yaml.safe_load(Path(path).read_text())['Visualization Manager']['Displays']
    topics = {d[key]['Value'] for d in rviz for key in ('Topic', 'Description Topic')
              if key in d}
    assert topics == {'/robot1/robot_description', '/robot1/controller/markers',
                      '/robot1/foot_contact'}, topics
    assert 'rviz_default_plugins/Wrench' in {d['Class'] for d in rviz}
    # launch ends with 0 (each node's clean exit on SIGINT: test_launch_real.py; under heavy
    # load launch may escalate a slow node to SIGTERM after its 5 s)
    assert launch.interrupt() == 0, launch.output[-4000:]
