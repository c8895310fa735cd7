# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
Slides without a consistent continuation (Painlevé's paradox) in the event-driven integrator.

The slide stops in a tangential impact instead of the contact being released while it is pushed
into the ground (docs/physics.md).
"""
import math

from conftest import REPO
from dodo_sim.simulator import SimConfig, Simulator
import numpy as np
from physics_models import painleve_rod
import pytest

ROD_ANGLE_FROM_VERTICAL = 0.45      # rad: 64 deg from the ground, near atan(2)
ROD_FRICTION = 2.0                  # above the 4/3 of Painlevé's inconsistency


def _rod(integrator, tip_speed):
    """
    Rod of length 1 m standing on its tip, the tip sliding at tip_speed.

    ``tip_speed`` is in m/s, +x: away from the side the rod leans to.
    """
    q = (0.0, 0.5 * math.cos(ROD_ANGLE_FROM_VERTICAL), ROD_ANGLE_FROM_VERTICAL)
    return Simulator(painleve_rod(), SimConfig(integrator=integrator, contact_frames=('tip',),
                                               friction=ROD_FRICTION, initial_q=q,
                                               initial_v=(tip_speed, 0.0, 0.0)))


def test_inconsistent_slide_stops_in_a_tangential_impact_without_leaving_the_ground():
    """
    Sliding towards -x, friction would push the tip into the ground.

    It would do so whatever the normal force: the slide stops at once. Before the fix the tip was
    released and touched down again (the spurious sequence).
    """
    state = _rod('event', -0.5).step([])
    assert state.events == ('tangential_impact',)
    assert state.in_contact


def test_consistent_slide_has_no_tangential_impact():
    state = _rod('event', 0.5).step([])
    assert state.events == ()
    assert state.in_contact


@pytest.mark.parametrize('tip_speed', (-0.5, 0.5))
def test_painleve_rod_first_step_agrees_with_time_stepping(tip_speed):
    """
    Painlevé's rod: the first step agrees with time-stepping.

    Time-stepping (a velocity-level problem every step) stops an inconsistent slide with an impulse
    by construction; the event integrator's tangential impact gives the same state to O(dt):
    velocities within g dt, positions within dv dt (time-stepping spreads the velocity jump over
    its step). Measured: 2e-4 m/s and 3.4e-4 m, rad.
    """
    dt = SimConfig().dt
    event = _rod('event', tip_speed).step([])
    stepping = _rod('timestepping', tip_speed).step([])
    assert event.unconverged_steps == stepping.unconverged_steps == 0
    jump = np.abs(event.v - np.array((tip_speed, 0.0, 0.0))).max()
    assert np.abs(event.v - stepping.v).max() < 9.81 * dt
    assert np.abs(event.q - stepping.q).max() < jump * dt


# A state of the Kneed Walker's flat-ground walk (config/walk.yaml, event integrator): the stance
# knee held on its 0 stop by -10 N*m, the stance foot sticking, the swing knee 22 um from its stop
# and about to lock at -0.23 rad/s. That impact separates the stance foot slowly with a tangential
# velocity of 2.7e-4 m/s; before the fix the foot was released in a Painlevé-inconsistent slide
# and the stance foot and stance knee stop closed each other alternately (> 50 events per step).
WALKER_Q = (3.8974861925928495, 0.8986100457466649, 0.32534700465484395, -0.2697630301457236,
            -9.973690224786376e-10, -0.6677819935353266, 2.1912925419236318e-05)
WALKER_V = (0.7150746812911454, -0.03978767069786138, 0.09704428245068267, 0.6987120990295607,
            2.974667936512357e-09, -3.3627198719617417, 0.06945879755354271)
WALKER_TAU = (-6.92146851812834, -10.0, 12.014748246463375, -0.520947203893159)


def test_walker_knee_lock_during_stance_is_one_step_with_few_events():
    sim = Simulator(REPO / 'urdf' / 'kneed_walker.urdf.xacro',
                    SimConfig(integrator='event', contact_frames=('left_foot', 'right_foot'),
                              initial_q=WALKER_Q, initial_v=WALKER_V))
    state = sim.step(WALKER_TAU)
    assert len(state.events) < 20
    assert state.unconverged_steps == 0
    assert state.in_contacts == (True, False)
    assert state.q[6] == pytest.approx(0.0, abs=1e-6)      # the swing knee locked
    assert state.q[4] == pytest.approx(0.0, abs=1e-6)      # the stance knee still locked


def test_solver_finds_a_slide_made_consistent_by_the_other_constraints():
    """
    The acceleration-level problem of the walker's sliding stance foot.

    The foot slides in direction -1 with both knee stops closed. Its own block is
    Painlevé-inconsistent (G_NN - mu d G_NT < 0), so the block iteration keeps lambda_N = 0, but
    with the knee rows active the problem has a solution (Schur complement 0.07 > 0), which the
    solver must return.
    """
    from dodo_sim.physics import solver as ncp
    G = np.array([[0.2001, -0.4352, 1.767, 0.0456],
                  [-0.4352, 11.424, -38.382, -0.2831],
                  [1.767, -38.382, 234.444, 7.5903],
                  [0.0456, -0.2831, 7.5903, 232.7294]])
    b = np.array([-27.317111, 344.379607, -1950.757764, -1084.877644])
    blocks = [ncp.Block(0, 2, 0.8, (-1.0,)), ncp.Block(2, 1), ncp.Block(3, 1)]
    assert G[0, 0] - 0.8 * (-1.0) * G[0, 1] < 0.0
    assert not ncp.solve(G, b, blocks).converged           # the block iteration alone
    sol = ncp.solve(G, b, blocks, enumerate_modes=True)
    assert sol.converged
    assert sol.lam[0] > 0.0
    assert ncp.residual(G, b, sol.lam, blocks) <= 1e-10


# The tick of the Kneed Walker's walk on steps (test_walker_walks.py's steps terrain, event
# integrator) that diverged at t = 2.538 s: the right (stance) foot mid-tread at x = 2.138 m,
# sliding forwards at the start of the tick. Within the 1 ms the slide stops, the foot touches
# down again and sticks, and the left (swing) knee hits its stop; that impact leaves the stance
# foot sliding backwards at 3.3e-5 m/s. The slide's acceleration-level problem is consistent but
# near Painlevé's singularity (W_N M^-1 (W_N - mu d W_T)^T = 0.00126 m/s^2/N): lambda_N = 1.6e4 N,
# and friction stops the slide 2.3e-10 s later. One RK4 step over the rest of the tick passed that
# stop and diverged (q ~ 1e17, then LinAlgError) before the fix.
STEPS_Q = (2.1557035581376933, 0.879823981642561, 0.31116007827595227, -0.6634472064761457,
           6.254691403944667e-07, -0.2913839369007654, 3.3707491984198723e-06)
STEPS_V = (0.6202412005948966, -0.012201677933776288, 0.18371920323614485, -3.4337682412995085,
           0.007250722883582989, 0.518204746832466, -0.032783872816992035)
STEPS_TAU = (11.844938186259892, -0.5021783442107769, -6.659475149141917, -10.0)
STEPS_EDGES = tuple(round(1.2 * i, 6) for i in range(1, 30))
STEPS_RISES = tuple(-0.02 if i % 2 == 0 else 0.02 for i in range(len(STEPS_EDGES)))


def test_walker_slide_stopped_within_nanoseconds_is_located_not_stepped_over():
    sim = Simulator(REPO / 'urdf' / 'kneed_walker.urdf.xacro',
                    SimConfig(integrator='event', contact_frames=('left_foot', 'right_foot'),
                              friction=0.8, restitution=0.0, terrain='steps',
                              step_edges_x_m=STEPS_EDGES, step_rises_m=STEPS_RISES,
                              initial_q=STEPS_Q, initial_v=STEPS_V))
    # the integrator's modes at the start of that tick of the walk (a fresh simulator classifies
    # the start state itself, with a touchdown): the right foot sliding in +x
    integrator = sim.integrator
    integrator.mode[1] = 'slip'
    integrator.slip_dir[1] = np.array((1.0,))
    integrator._classify = False
    state = sim.step(STEPS_TAU)
    events = list(state.events)
    assert 'limit' in events and 'slip_stop' in events[events.index('limit'):]
    assert state.in_contacts == (False, True)
    assert state.q[4] == pytest.approx(0.0, abs=1e-6)      # the swing knee on its stop
    weight = sim.robot.total_mass * 9.81
    assert 0.0 < state.contact_forces[1, 2] < 2.0 * weight
