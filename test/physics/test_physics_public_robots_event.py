# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
The event integrator on example-robot-data: it runs a robot, or refuses it in one line.

Issue 30 item 3: it diverged on ANYmal-with-arm (its Kinova arm starts outside its joint
limits at the URDF zero: now refused by ``reset``), on iCub at its first step (a point-mass head
on a three-axis neck: a singular mass matrix, refused at load), and ran Talos and Tiago at minutes
per simulated 0.1 s. A 3-D robot with more than ``EVENT_MAX_CONTACTS_3D`` contact points (feet
and link support points) is refused at construction with one line saying why and to use
time-stepping (docs/physics.md "Robots the event integrator refuses"); the others run.
bench/sweep_public_robots.py --integrator event runs every URDF 0.5 s.
"""
from dodo_sim.physics.event import EVENT_MAX_CONTACTS_3D
from dodo_sim.physics.robot import ModelError
from dodo_sim.simulator import SimConfig, Simulator
import numpy as np
import public_robots as pr
import pytest

pytestmark = pytest.mark.skipif(pr.robots_dir() is None,
                                reason='example-robot-data is not installed')


def test_talos_is_refused_by_the_event_integrator_in_one_line_naming_the_alternative():
    with pytest.raises(ValueError) as error:
        Simulator(str(pr.robots_dir() / 'talos_data/robots/talos_reduced_box.urdf'),
                  SimConfig(contact_frames=(), integrator='event'))
    message = str(error.value)
    assert '\n' not in message and '448 contact points' in message
    assert 'integrator: timestepping' in message and 'collisions: feet' in message
    Simulator(str(pr.robots_dir() / 'talos_data/robots/talos_reduced_box.urdf'),
              SimConfig(contact_frames=(), integrator='event', collisions='feet'))


@pytest.mark.slow
def test_every_published_robot_is_taken_or_refused_in_one_line():
    """Refused: the 3-D robots over the limit, and the three URDFs the loader refuses."""
    taken, refused = [], []
    for urdf in pr.published_urdfs():
        try:
            sim = Simulator(str(pr.robots_dir() / urdf),
                            SimConfig(contact_frames=(), integrator='event'))
        except ModelError as error:        # the loader's refusals: not the integrator's
            assert '\n' not in str(error)
            continue
        except ValueError as error:
            assert '\n' not in str(error) and 'integrator: timestepping' in str(error)
            refused.append(urdf)
            continue
        taken.append(urdf)
        assert sim.robot.planar or len(sim.integrator.geometry.frame_ids) <= EVENT_MAX_CONTACTS_3D
    assert len(taken) >= 40 and len(refused) >= 20
    assert 'ur_description/urdf/ur5_robot.urdf' in taken
    assert 'go2_description/urdf/go2.urdf' in taken
    assert 'talos_data/robots/talos_reduced.urdf' in refused


@pytest.mark.slow
@pytest.mark.parametrize('urdf', ['ur_description/urdf/ur5_robot.urdf',
                                  'solo_description/robots/solo12.urdf',
                                  'bolt_description/robots/bolt.urdf'])
def test_a_robot_it_takes_falls_half_a_second_without_lapack_warnings(urdf, capfd):
    sim = Simulator(str(pr.robots_dir() / urdf), SimConfig(contact_frames=(), integrator='event'))
    state = sim.reset(pr.resting_start(sim, pr.start_joints(urdf)))
    for _ in range(500):
        state = sim.step(np.zeros(len(sim.robot.actuated_joint_names)))
    assert state.t == pytest.approx(0.5)
    assert pr.support_gaps(sim, state.q).min() >= -1e-5
    captured = capfd.readouterr()      # LAPACK's xerbla prints to stdout
    assert 'illegal value' not in captured.out + captured.err


def test_a_step_that_makes_energy_is_taken_by_time_stepping():
    """
    The Allegro hand fell 0.136 s, then one RK4 segment made 843 J: SimulationDiverged.

    Two fingertip points sliding near Painleve's singularity (docs/physics.md "Steps that make
    energy"); that step now goes to time-stepping and the hand lies on the floor at 0.15 s.
    """
    urdf = 'allegro_hand_description/urdf/allegro_left_hand.urdf'
    sim = Simulator(str(pr.robots_dir() / urdf), SimConfig(contact_frames=(), integrator='event'))
    state = sim.reset(pr.resting_start(sim))
    for _ in range(150):
        state = sim.step(np.zeros(len(sim.robot.actuated_joint_names)))
    assert state.t == pytest.approx(0.15)
    assert np.abs(state.v).max() < 10.0       # 361 rad/s in the step that diverged
    assert pr.support_gaps(sim, state.q).min() >= -1e-5
