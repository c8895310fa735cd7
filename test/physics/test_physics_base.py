# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
The URDF base convention (issue 14 item 1, docs/robots.md).

A URDF whose root link is not a link named 'world' gets a floating base (a free flyer), as in
Gazebo; one attached to 'world' keeps the URDF's own joints; SimConfig.base forces either. The
constructor accepts the model's default pose (a floating base at the origin is half under the
ground); reset(q) checks the pose it is given.
"""
import logging

from dodo_sim.physics.robot import FLOATING_BASE_JOINT, load_robot, ModelError, root_link
from dodo_sim.simulator import SimConfig, Simulator
import numpy as np
from physics_models import free_box, planar_chain
import pytest

CORNERS = ('c0', 'c1', 'c2', 'c3')
# the pendulum of physics_models with its world link renamed and given a mass: a robot not
# attached to the world (a massless base would turn with the hinge: a motion moving no inertia,
# which the loader refuses, docs/physics.md "Model inputs")
BASE_INERTIAL = ('<inertial><mass value="2"/>'
                 '<inertia ixx="0.01" iyy="0.01" izz="0.01" ixy="0" ixz="0" iyz="0"/></inertial>')
WEIGHTED_PENDULUM = planar_chain(1).replace('<link name="world"/>',
                                            f'<link name="world">{BASE_INERTIAL}</link>')
LOOSE_PENDULUM = WEIGHTED_PENDULUM.replace('"world"', '"base"')


def test_a_root_link_not_named_world_floats_by_default(caplog):
    with caplog.at_level(logging.INFO, logger='dodo_sim.physics.robot'):
        robot = load_robot(LOOSE_PENDULUM, contact_frames=('tip',))
    assert robot.floating_base and robot.root_link == 'base'
    assert robot.joint_names == (FLOATING_BASE_JOINT, 'hinge0')
    assert (robot.nq, robot.nv) == (8, 7) and not robot.vector_space and not robot.planar
    assert robot.actuated_joint_names == ('hinge0',)
    messages = [r.getMessage() for r in caplog.records]
    assert len(messages) == 1
    assert 'floating base' in messages[0] and "'base' is not attached" in messages[0]


def test_a_robot_attached_to_world_keeps_its_joints(caplog):
    with caplog.at_level(logging.INFO, logger='dodo_sim.physics.robot'):
        robot = load_robot(planar_chain(1), contact_frames=('tip',))
    assert not robot.floating_base and robot.root_link == 'world'
    assert (robot.nq, robot.nv) == (1, 1)
    assert 'fixed base' in caplog.records[0].getMessage()


@pytest.mark.parametrize('base, nq', [('fixed', 1), ('floating', 8)])
def test_the_base_can_be_forced(base, nq):
    xml = LOOSE_PENDULUM if base == 'fixed' else WEIGHTED_PENDULUM
    sim = Simulator(xml, SimConfig(base=base, contact_frames=('tip',)))
    assert sim.robot.nq == nq
    assert sim.robot.floating_base == (base == 'floating')


def test_an_unknown_base_is_refused():
    with pytest.raises(ValueError, match="SimConfig.base = 'wobbly'"):
        SimConfig(base='wobbly')
    with pytest.raises(ModelError, match='base'):
        load_robot(planar_chain(1), contact_frames=('tip',), base='wobbly')


def test_a_urdf_with_two_root_links_is_refused():
    xml = planar_chain(1).replace('<link name="world"/>', '<link name="world"/><link name="x"/>')
    with pytest.raises(ModelError, match=r"root link.*\['world', 'x'\]"):
        root_link(xml)


def test_construction_accepts_the_default_pose_under_the_ground_and_reset_refuses_it():
    sim = Simulator(free_box(), SimConfig(contact_frames=CORNERS))
    q = sim.robot.default_q
    np.testing.assert_array_equal(sim.state.q, q)   # [0 0 0 0 0 0 1]: corners 5 cm deep
    with pytest.raises(ValueError, match=r'0\.05 m below.*root_joint\[2\] >= 0\.05 m'):
        sim.reset(q)
    q = q.copy()
    q[2] = 0.05
    assert sim.reset(q).q[2] == 0.05


def test_an_initial_q_under_the_ground_is_still_refused_at_construction():
    with pytest.raises(ValueError, match='below the flat terrain'):
        Simulator(free_box(), SimConfig(contact_frames=CORNERS,
                                        initial_q=(0, 0, 0.01, 0, 0, 0, 1)))


@pytest.mark.parametrize('integrator', ['timestepping', 'event'])
def test_a_dropped_free_box_rests_on_its_four_corners(integrator):
    """
    A free box dropped 2 cm flat rests on its four corners.

    It carries its weight with no net moment (four points under a rigid body are statically
    indeterminate by one force pattern, the twist c0 + c3 - c1 - c2: only the resultant is the
    static solution's), and the base does not drift.
    """
    mass, g = 2.0, 9.81
    sim = Simulator(free_box(mass), SimConfig(integrator=integrator, contact_frames=CORNERS,
                                              initial_q=(0, 0, 0.07, 0, 0, 0, 1)))
    for _ in range(300):
        state = sim.step([])
    assert all(state.in_contacts)
    forces, points = state.contact_forces, state.foot_positions
    np.testing.assert_allclose(forces.sum(axis=0), (0.0, 0.0, mass * g), rtol=0, atol=1e-6)
    moment = np.cross(points - points.mean(axis=0), forces).sum(axis=0)
    np.testing.assert_allclose(moment, 0.0, atol=1e-6)
    assert state.q[2] == pytest.approx(0.05, abs=1e-6)
    np.testing.assert_allclose(state.q[3:7], (0, 0, 0, 1), atol=1e-9)
    assert np.abs(state.v).max() < 1e-6
