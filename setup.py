# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""ament_python package dodo_sim (also installable with pip on a plain machine)."""
from glob import glob

from setuptools import find_packages, setup

package_name = 'dodo_sim'

setup(
    name=package_name,
    version='0.1.0',
    packages=find_packages(exclude=['test', 'bench']),
    data_files=[
        ('share/ament_index/resource_index/packages', ['resource/' + package_name]),
        ('share/' + package_name, ['package.xml']),
        ('share/' + package_name + '/launch', glob('launch/*.launch.py')),
        ('share/' + package_name + '/config', glob('config/*.yaml') + glob('config/*.rviz')
         + glob('config/*_layout.json') + glob('config/*_layout.xml')
         + glob('config/fastdds_*.xml')),
        ('share/' + package_name + '/config/ros2_control', glob('config/ros2_control/*.yaml')),
        ('share/' + package_name + '/config/studies', glob('config/studies/*.yaml')),
        ('share/' + package_name + '/urdf', glob('urdf/*.xacro')),
        # the interface packages dodo_sim.tools.build_interfaces builds (docs/interfaces.md)
        ('share/' + package_name + '/interfaces', glob('interfaces/*.cmake')
         + ['interfaces/COLCON_IGNORE']),
    ] + [('share/' + package_name + '/' + folder.rstrip('/'), glob(folder + '*.*'))
         for folder in sorted(glob('interfaces/*/') + glob('interfaces/*/*/'))],
    # ROS packages (rclpy, messages) come from rosdep or from requirements.txt, never from here.
    install_requires=['setuptools', 'numpy', 'scipy', 'pyyaml', 'python-can', 'cantools'],
    package_data={'dodo_sim.hardware': ['*.dbc']},
    zip_safe=True,
    maintainer='dodo_sim developers',
    maintainer_email='dodo-sim@example.org',
    description='Planar hopping leg with hard contact and a hybrid SLIP controller for ROS 2',
    license='BSD-3-Clause',
    tests_require=['pytest'],
    entry_points={
        'console_scripts': [
            'dodo = dodo_sim.tools.cli:main',
            'simulator = dodo_sim.ros.simulator_node:main',
            'controller = dodo_sim.ros.controller_node:main',
            'recorder = dodo_sim.ros.recorder:main',
            'driver = dodo_sim.ros.driver_node:main',
        ],
        # the controllers the controller node can host (dodo_control/registry.py): the shipped
        # ones exactly as a plugin package declares its own (docs/control.md)
        'dodo_sim.controllers': [
            'slip_hopper = dodo_control.controller:Controller',
            'kneed_walker = dodo_control.walker.controller:WalkerController',
            'joint_hold = dodo_control.joint.controller:JointController',
        ],
    },
)
