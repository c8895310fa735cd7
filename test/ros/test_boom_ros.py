# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
The boom-mounted leg through the ROS graph.

The params file chooses the robot (``simulator.robot_description``, config/boom.yaml), and ``dodo
hop`` runs it over real DDS.

The apexes of the DDS run are measured on the recorded /joint_states with pinocchio on the
recorded /robot_description (the hip joint's world height), not with the controller's terms.
"""
import os
import subprocess
import sys

from conftest import REPO, ros_domain_id
from dodo_sim.paths import resolve_package_uri, share_dir
from dodo_sim.ros import contract, graph
import numpy as np
import pinocchio as pin
import pytest

BOOM_YAML = REPO / 'config' / 'boom.yaml'
BOOM_XACRO = 'package://dodo_sim/urdf/boom_leg.urdf.xacro'


def test_package_uri_resolves_to_the_share_directory():
    assert resolve_package_uri(BOOM_XACRO) == str(share_dir() / 'urdf' / 'boom_leg.urdf.xacro')
    assert resolve_package_uri('urdf/x.xacro') == 'urdf/x.xacro'      # plain paths unchanged
    with pytest.raises(ValueError, match='no_such_package'):
        resolve_package_uri('package://no_such_package/urdf/x.urdf')


def test_params_file_chooses_the_robot_and_the_model_argument_overrides_it(tmp_path):
    boom = str(share_dir() / 'urdf' / 'boom_leg.urdf.xacro')
    assert graph.robot_model(BOOM_YAML) == boom
    assert graph.robot_model(BOOM_YAML, '/elsewhere/leg.xacro') == '/elsewhere/leg.xacro'
    plain = tmp_path / 'plain.yaml'
    plain.write_text('simulator:\n  ros__parameters:\n    dt: 0.001\n')
    assert graph.robot_model(plain) == str(share_dir() / 'urdf' / 'hopper.urdf.xacro')


def _hip_apexes(bag):
    from dodo_sim.tools.bag import read_bag
    from dodo_sim.tools.bag_arrays import joint_states
    from dodo_sim.tools.bag_robot import robot_description
    data = read_bag(bag, [contract.JOINT_STATES, contract.ROBOT_DESCRIPTION])
    model = pin.buildModelFromXML(robot_description(data))
    names = tuple(model.names[1:])
    assert names == ('boom_yaw', 'boom_pitch', 'hip', 'knee'), names
    js = joint_states(data[contract.JOINT_STATES], names)
    pdata = model.createData()
    hip = model.getJointId('hip')
    heights = np.empty(len(js.t))
    for i, q in enumerate(js.q):
        pin.forwardKinematics(model, pdata, _q(model, q))
        heights[i] = pdata.oMi[hip].translation[2]
    inner = slice(1, -1)
    apex = np.flatnonzero((heights[inner] >= heights[:-2]) & (heights[inner] > heights[2:])) + 1
    return heights[apex]


def _q(model, q):
    """Joint positions -> pinocchio configuration (the continuous yaw is (cos, sin))."""
    out, k = [], 0
    for joint in model.joints[1:]:
        if joint.nq == 2:
            out += [np.cos(q[k]), np.sin(q[k])]
        else:
            out.append(q[k])
        k += 1
    return np.array(out)


@pytest.mark.ros
@pytest.mark.slow
def test_dodo_hop_runs_the_boom_leg_from_its_params_file(tmp_path):
    """
    ``dodo hop --params-file config/boom.yaml``: exit 0, the boom leg's joints in the bag.

    The hip hops at the 0.25 m apex set-point.
    """
    bag = tmp_path / 'bag'
    env = dict(os.environ, ROS_AUTOMATIC_DISCOVERY_RANGE='LOCALHOST')
    proc = subprocess.run(
        [sys.executable, '-m', 'dodo_sim.tools.cli', 'hop', '--params-file', str(BOOM_YAML),
         '--duration', '4', '--bag', str(bag), '--no-plots', '--wall-timeout', '240',
         '--domain-id', str(ros_domain_id())],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env, timeout=400)
    assert proc.returncode == 0, proc.stdout
    assert "joints ['boom_yaw', 'boom_pitch', 'hip', 'knee']" in proc.stdout, proc.stdout
    # lockstep pauses simulated time while the controller is late (a starved CPU): never a
    # zero-torque step, whatever the load
    assert ' 0 timeout(s)' in proc.stdout and ' 0 zero-torque step(s)' in proc.stdout, \
        proc.stdout[-3000:]
    apexes = _hip_apexes(bag)
    assert len(apexes) >= 9, apexes                   # a hop every ~0.4 s
    steady = apexes[3:]
    assert np.ptp(steady) / steady.mean() <= 0.02, apexes
    assert np.abs(steady - 0.25).max() <= 0.005, apexes
