# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
Launch the dodo_sim graph on a ROS 2 install: the Kneed Walker.

    ros2 launch dodo_sim walk.launch.py                      # simulator + controller + RSP
    ros2 launch dodo_sim walk.launch.py rviz:=true record:=true bag:=runs/walk1
    ros2 launch dodo_sim walk.launch.py --show-args          # documented arguments

Defaults: ``config/walk.yaml`` (controller ``kneed_walker``, model
``urdf/kneed_walker.urdf.xacro``, contact topics /left_foot_contact and /right_foot_contact),
``config/walk.rviz``. The same launch description as ``hop.launch.py``
(:func:`dodo_sim.ros.launch_description.launch_description`) and the same graph as
``dodo walk`` (docs/running.md, docs/walker.md). A fall is logged by the controller node
(``the robot fell: <reason> ...``); the graph keeps running until shut down.
"""
from dodo_sim.ros.launch_description import launch_description


def generate_launch_description():
    return launch_description('walk')
