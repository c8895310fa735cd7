# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
The joint controller of any robot (``joint_hold``, docs/joint.md), in process.

The gain rule against the discrete closed loop it must keep stable; the shipped hopper on its boom,
a published fixed-base arm (UR5) held in the air and tracking set-points, and a published
quadruped (Go2) standing, all from example-robot-data and run by :func:`dodo_sim.rollout.rollout`
as the controller node would host the controller; the registry entry; a bag of its run replayed
through it.
"""
import dataclasses

from conftest import REPO
from dodo_control import registry
from dodo_control.interface import HostedController
from dodo_control.joint import JointController, JointControllerConfig
from dodo_control.joint.controller import model_gains
from dodo_sim.rollout import rollout
from dodo_sim.simulator import SimConfig, Simulator
import numpy as np
import pinocchio as pin
import public_robots as pr
import pytest

HOPPER = REPO / 'urdf' / 'hopper.urdf.xacro'
needs_robots = pytest.mark.skipif(pr.robots_dir() is None,
                                  reason='example-robot-data is not installed')
#: UR5's elbow-up pose of issue 30, rad
UR5_POSE = np.array([0.0, -1.0, 1.0, 0.0, 0.0, 0.0])
#: Go2 standing under joint_hold: the shipped params file (simulator and controller sections)
GO2_PARAMS = REPO / 'config' / 'go2_hold.yaml'
#: Go2 leg angles [hip, thigh, calf] x 4 of a stand, rad
GO2_STAND_LEGS = np.array([0.0, 0.8, -1.5] * 4)


def ur5() -> str:
    return str(pr.robots_dir() / 'ur_description/urdf/ur5_robot.urdf')


def go2() -> str:
    return str(pr.robots_dir() / 'go2_description/urdf/go2.urdf')


def ur5_in_the_air(**config):
    """
    UR5 (root link 'world': a fixed base) in UR5_POSE with the ground 10 m below.

    No shape comes near the terrain, so no contact (issue 30 item 3 is another one's work).
    """
    sim = Simulator(ur5(), SimConfig(contact_frames=('tool0',), collisions='feet',
                                     terrain_height_m=-10.0))
    sim.reset(UR5_POSE)
    return sim, JointController(ur5(), JointControllerConfig(contact_frames=('tool0',),
                                                             **config))


# -- the gain rule --------------------------------------------------------------------------------

def _closed_loop_radius(block, kp, kd, period_s):
    """
    Spectral radius of the discrete loop the engine and the controller make.

    It is the joints' M q'' = -Kp q - Kd q' with the torque held for a period and the
    semi-implicit step v+ = v + T M^-1 tau, q+ = q + T v+.
    """
    n = len(kp)
    inv = np.linalg.inv(block)
    a_v = np.eye(n) - period_s * inv @ np.diag(kd)
    a_q = -period_s * inv @ np.diag(kp)
    step = np.block([[np.eye(n) + period_s * a_q, period_s * a_v], [a_q, a_v]])
    return float(np.max(np.abs(np.linalg.eigvals(step))))


def test_gain_rule_of_one_joint_is_a_critically_damped_oscillator():
    gains = model_gains(np.array([[2.0]]), bandwidth_hz=10.0, damping_ratio=1.0,
                        control_period_s=1e-3)
    omega = 2 * np.pi * 10.0
    np.testing.assert_allclose(gains.kp, [2.0 * omega ** 2])
    np.testing.assert_allclose(gains.kd, [2.0 * 2.0 * omega])
    assert gains.coupling == 1.0 and gains.omega_rad_s == pytest.approx(omega)


def test_gain_rule_keeps_strongly_coupled_joints_stable_at_the_control_period():
    """M = [[1, 0.9], [0.9, 1]]: lambda = 10; 100 Hz at 1 kHz would diverge, the rule lowers it."""
    block = np.array([[1.0, 0.9], [0.9, 1.0]])
    gains = model_gains(block, bandwidth_hz=100.0, damping_ratio=1.0, control_period_s=1e-3)
    assert gains.coupling == pytest.approx(10.0)
    assert gains.omega_rad_s == pytest.approx(1.0 / (2 * 10.0 * 1e-3))
    assert _closed_loop_radius(block, gains.kp, gains.kd, 1e-3) < 0.999
    omega = 2 * np.pi * 100.0                      # the same rule without the limits
    naive_kp, naive_kd = np.diag(block) * omega ** 2, 2 * np.diag(block) * omega
    assert _closed_loop_radius(block, naive_kp, naive_kd, 1e-3) > 1.0


@needs_robots
@pytest.mark.parametrize('urdf', ['ur5', 'go2', 'hopper'])
def test_rule_gains_are_stable_at_1_khz_on_published_robots(urdf):
    """The rule's gains on each robot's joint-space inertia at its start pose: a stable loop."""
    path, pose = {'ur5': (ur5, UR5_POSE), 'go2': (go2, GO2_STAND_LEGS),
                  'hopper': (lambda: HOPPER, np.array([0.0, 1.0, 0.3, -0.6]))}[urdf]
    ctrl = JointController(path())
    ctrl.update(0.0, pose, np.zeros(len(pose)), np.zeros((1, 3)))
    model, data = ctrl.robot.model, ctrl.robot.create_data()
    mass = pin.crba(model, data, pose)
    mass = np.triu(mass) + np.triu(mass, 1).T
    idx = [ctrl.joint_names.index(j) for j in ctrl.actuated_joint_names]
    block = mass[np.ix_(idx, idx)]
    assert _closed_loop_radius(block, ctrl.gains.kp, ctrl.gains.kd, 1e-3) < 1.0


# -- configuration --------------------------------------------------------------------------------

@pytest.mark.parametrize('values, words', [
    ({'joints': ('auto', 'hip')}, ['joints', 'auto']),
    ({'target_joints': ('hip', 'knee'), 'target_positions': (0.1,)}, ['target_positions']),
    ({'kp': (-1.0,)}, ['kp', '>= 0']),
    ({'bandwidth_hz': 0.0}, ['bandwidth_hz']),
    ({'contact_frames': ('foot', 'foot')}, ['contact_frames']),
])
def test_bad_configuration_is_refused_naming_the_field(values, words):
    with pytest.raises(ValueError) as info:
        JointControllerConfig(**values)
    for word in words:
        assert word in str(info.value)


@pytest.mark.parametrize('values, words', [
    ({'joints': ('hip', 'base_x')}, ['base_x', 'actuated']),
    ({'target_joints': ('ankle',), 'target_positions': (0.1,)}, ['ankle']),
    ({'kp': (1.0, 2.0, 3.0)}, ['kp', 'one or 2']),
    ({'target_positions': (0.1,)}, ['target_positions', '1 values', '2 target joints']),
])
def test_the_robot_refuses_joints_it_lacks_and_lists_of_the_wrong_length(values, words):
    ctrl = JointController(HOPPER)
    with pytest.raises(ValueError) as info:
        ctrl.reconfigure(JointControllerConfig(**values))
    for word in words:
        assert word in str(info.value)
    assert ctrl.config == JointControllerConfig()          # the running config is kept


def test_a_set_point_change_keeps_the_start_pose_of_the_other_joints():
    ctrl = JointController(HOPPER)
    q0 = np.array([0.0, 1.0, 0.3, -0.6])
    ctrl.update(0.0, q0, np.zeros(4), np.zeros((1, 3)))
    ctrl.reconfigure(JointControllerConfig(target_joints=('knee',), target_positions=(-1.0,)))
    ctrl.update(0.001, q0 + 0.01, np.zeros(4), np.zeros((1, 3)))
    assert ctrl.telemetry.target == (0.3, -1.0)
    np.testing.assert_allclose(ctrl.telemetry.error, (0.01, 0.4 + 0.01))
    np.testing.assert_array_equal(ctrl.start_q, q0)
    ctrl.reconfigure(JointControllerConfig(joints=('knee',)))    # other joints: a reset
    assert ctrl.start_q is None and ctrl.actuated_joint_names == ('knee',)


# -- robots -------------------------------------------------------------------------------------

@needs_robots
def test_ur5_holds_its_start_pose_exactly_with_gravity_compensation():
    """2 s in the air: |q - q0| < 1e-9 rad; without the compensation it sags by g(q) / kp."""
    sim, ctrl = ur5_in_the_air()
    run = rollout(sim, ctrl, duration_s=2.0)
    assert np.abs(run.q - UR5_POSE).max() < 1e-9
    assert np.abs(run.tau).max() > 10.0                 # it does carry the arm (39 N*m)

    sim, ctrl = ur5_in_the_air(gravity_compensation=False)
    run = rollout(sim, ctrl, duration_s=2.0)
    robot = sim.robot
    gravity = pin.computeGeneralizedGravity(robot.model, robot.create_data(), run.q[-1])
    sag = run.q[-1] - UR5_POSE
    assert np.abs(sag).max() > 1e-4
    np.testing.assert_allclose(sag, -gravity / ctrl.gains.kp, atol=1e-8)


@needs_robots
def test_ur5_tracks_set_points_changed_at_runtime_within_its_urdf_torque_limits():
    """
    Hold 0.2 s, then new targets for two joints.

    The wrist's step needs far more than its 28 N*m; the torques stay within the URDF efforts,
    saturate, and the arm still reaches the targets exactly.
    """
    sim, ctrl = ur5_in_the_air()
    first = rollout(sim, ctrl, duration_s=0.2)
    ctrl.reconfigure(dataclasses.replace(ctrl.config, target_joints=(
        'shoulder_lift_joint', 'wrist_1_joint'), target_positions=(-0.5, 1.0)))
    run = rollout(sim, ctrl, duration_s=3.0)
    target = UR5_POSE + [0.0, 0.5, 0.0, 1.0, 0.0, 0.0]
    np.testing.assert_allclose(run.q[-1], target, atol=1e-6)
    tau = np.vstack([first.tau, run.tau])
    effort = sim.robot.effort_limits
    assert (np.abs(tau) <= effort).all()
    assert np.isclose(np.abs(tau[:, 3]), effort[3]).any()   # the wrist was at its limit
    assert ctrl.telemetry.saturated == 0


@needs_robots
def test_hopper_on_its_boom_carries_its_weight_with_the_error_the_pd_needs():
    """
    The shipped hopper standing on its foot (the boom's base_x, base_z passive).

    After 4 s at rest the foot carries the weight and each joint's error is what the PD needs
    for the contact load: kp e = (J^T f)_joint (gravity compensated exactly).
    """
    sim = Simulator(HOPPER, SimConfig())
    q = sim.state.q.copy()
    q[1] -= sim.contact_positions(q)[:, 2].min()
    sim.reset(q)
    ctrl = JointController(HOPPER, JointControllerConfig())
    assert ctrl.joint_names == ('base_x', 'base_z', 'hip', 'knee')
    run = rollout(sim, ctrl, duration_s=4.0)
    robot = sim.robot
    model, data = robot.model, robot.create_data()
    pin.computeJointJacobians(model, data, run.q[-1])
    pin.updateFramePlacements(model, data)
    jac = pin.getFrameJacobian(model, data, robot.contact_frame_ids[0], pin.LOCAL_WORLD_ALIGNED)
    force = run.contact_forces[-1, 0]
    assert force[2] == pytest.approx(robot.total_mass * 9.81, rel=1e-3)
    error = run.q[-1, 2:] - q[2:]
    np.testing.assert_allclose(ctrl.gains.kp * error, (jac[:3].T @ force)[2:], atol=0.05)
    assert np.abs(error).max() < 0.05 and abs(run.q[-1, 1] - q[1]) < 0.01


@needs_robots
def test_go2_stands_two_seconds_under_the_hold_controller():
    """
    A published 16 kg quadruped from the stand of config/go2_hold.yaml (feet 4 mm up).

    Base within 3 cm below its start height (never above it by 5 mm), roll and pitch under 0.1
    rad, its weight on the four feet. The controller reads the 12 leg joints only.
    """
    from dodo_sim.ros.params import config_from_file
    sim = Simulator(go2(), config_from_file(SimConfig, GO2_PARAMS, 'simulator'))
    ctrl = registry.controller_entry('joint_hold').build(
        go2(), config_from_file(JointControllerConfig, GO2_PARAMS, 'controller'))
    q = sim.state.q.copy()
    assert 0.0 < sim.contact_positions(q)[:, 2].min() < 0.005
    run = rollout(sim, ctrl, duration_s=2.0)
    assert len(ctrl.joint_names) == 12 and len(ctrl.start_q) == 12
    height = run.q[:, 2]
    assert q[2] - 0.03 < height.min(), height.min()
    assert height.max() < q[2] + 0.005, height.max()
    rpy = np.array([pin.rpy.matrixToRpy(pin.Quaternion(*x[[6, 3, 4, 5]]).matrix())
                    for x in run.q[:, :7]])
    assert np.abs(rpy[:, :2]).max() < 0.1
    feet = run.contact_forces[-1, :4, 2]
    assert (feet > 0.1 * sim.robot.total_mass * 9.81 / 4).all()
    assert feet.sum() == pytest.approx(sim.robot.total_mass * 9.81, rel=0.02)


# -- hosted like every controller ---------------------------------------------------------------

@needs_robots
@pytest.mark.parametrize('urdf, frames', [(str(HOPPER), ('foot',)), ('ur5', ('tool0',)),
                                          ('solo', pr.SOLO_FEET)])
def test_registry_builds_joint_hold_for_any_robot(urdf, frames):
    path = {'ur5': ur5, 'solo': pr.solo12}.get(urdf, lambda: urdf)()
    entry = registry.controller_entry('joint_hold')
    ctrl = entry.build(path, entry.config_class()(contact_frames=frames))
    assert isinstance(ctrl, HostedController) and ctrl.contact_frames == frames
    robot = Simulator(path, SimConfig(contact_frames=frames)).robot
    assert 'root_joint' not in ctrl.joint_names         # never in /joint_states
    assert ctrl.actuated_joint_names == robot.actuated_joint_names
    assert set(ctrl.joint_names) <= set(robot.joint_names)


def test_the_go2_params_file_passes_the_params_file_checks():
    from dodo_sim.ros import graph
    robot = graph.robot_from_params(GO2_PARAMS, 'go2.urdf')
    assert robot.controller == 'joint_hold' and len(robot.contact_frames) == 4
    graph.check_params_file(GO2_PARAMS)


def test_registry_refuses_a_robot_without_the_contact_frames():
    entry = registry.controller_entry('joint_hold')
    with pytest.raises(ValueError, match="'joint_hold'.*left_foot"):
        entry.build(str(HOPPER), entry.config_class()(contact_frames=('left_foot',)))


@needs_robots
def test_a_quadruped_bag_of_joint_hold_replays_through_the_controller_exactly(tmp_path):
    """Replay a Solo-12 run's bag through the controller (dodo replay's core): |dtau| = 0."""
    from dodo_sim.tools.replay_check import compare_with_controller
    from robot_bags import write_rollout_bag
    sim = Simulator(pr.solo12(), SimConfig(contact_frames=pr.SOLO_FEET, collisions='feet'))
    sim.reset(pr.standing_pose(sim, pr.SOLO_STAND_LEGS, gap_m=0.02))
    config = JointControllerConfig(contact_frames=pr.SOLO_FEET, bandwidth_hz=15.0)
    run = rollout(sim, JointController(pr.solo12(), config), duration_s=0.3)
    bag = write_rollout_bag(tmp_path / 'solo', sim, run, controller_config=config)
    result = compare_with_controller(bag)
    assert result.controller == 'joint_hold' and result.compared == len(run.tau)
    assert result.max_abs_nm == 0.0
