# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
Launch the dodo_sim graph on a ROS 2 install (Jazzy / Kilted / Rolling): the SLIP hopper.

    ros2 launch dodo_sim hop.launch.py                       # simulator + controller + RSP
    ros2 launch dodo_sim hop.launch.py rviz:=true record:=true bag:=runs/hop1
    ros2 launch dodo_sim hop.launch.py use_sim:=false        # the driver on emulated hardware
                                                             # (hardware:=emulated, the default)
    ros2 launch dodo_sim hop.launch.py use_sim:=false hardware:=can params_file:=my_robot.yaml
                                                             # a real CAN bus: the driver stays
                                                             # disabled until /driver/enable
    ros2 launch dodo_sim hop.launch.py params_file:=<share>/config/boom.yaml   # boom leg
    ros2 launch dodo_sim hop.launch.py --show-args           # documented arguments

Defaults: ``config/hop.yaml`` (controller ``slip_hopper``, model ``urdf/hopper.urdf.xacro``; a
params file's simulator ``robot_description`` chooses another robot, e.g. ``config/boom.yaml``),
``config/hop.rviz``. The launch description is :func:`dodo_sim.ros.launch_description.
launch_description`, shared with ``walk.launch.py``; it builds the node set and parameters from
``dodo_sim.ros.graph``, like ``dodo hop`` (docs/running.md); with ``use_sim:=false`` the
hardware ``driver`` in the simulator's place (docs/hardware.md).
"""
from dodo_sim.ros.launch_description import launch_description


def generate_launch_description():
    return launch_description('hop')
