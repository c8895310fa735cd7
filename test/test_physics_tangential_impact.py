"""Slides without a consistent continuation (Painlevé's paradox) in the event-driven integrator:
the slide stops in a tangential impact instead of the contact being released while it is pushed
into the ground (docs/physics.md)."""
import math

import numpy as np
import pytest

from physics_models import painleve_rod
from dodo_sim.simulator import SimConfig, Simulator

from conftest import REPO

ROD_ANGLE_FROM_VERTICAL = 0.45      # rad: 64 deg from the ground, near atan(2)
ROD_FRICTION = 2.0                  # above the 4/3 of Painlevé's inconsistency


def _rod(integrator, tip_speed):
    """Rod of length 1 m standing on its tip, the tip sliding at tip_speed (m/s, +x: away from
    the side the rod leans to)."""
    q = (0.0, 0.5 * math.cos(ROD_ANGLE_FROM_VERTICAL), ROD_ANGLE_FROM_VERTICAL)
    return Simulator(painleve_rod(), SimConfig(integrator=integrator, contact_frames=('tip',),
                                                friction=ROD_FRICTION, initial_q=q,
                                                initial_v=(tip_speed, 0.0, 0.0)))


def test_inconsistent_slide_stops_in_a_tangential_impact_without_leaving_the_ground():
    """Sliding towards -x the friction force would push the tip into the ground whatever the
    normal force: the slide stops at once (the tip is released and touches down again, the
    spurious sequence, before the fix)."""
    state = _rod('event', -0.5).step([])
    assert state.events == ('tangential_impact',)
    assert state.in_contact


def test_consistent_slide_has_no_tangential_impact():
    state = _rod('event', 0.5).step([])
    assert state.events == ()
    assert state.in_contact


@pytest.mark.parametrize('tip_speed', (-0.5, 0.5))
def test_painleve_rod_first_step_agrees_with_time_stepping(tip_speed):
    """Time-stepping (a velocity-level problem every step) stops an inconsistent slide with an
    impulse by construction; the event integrator's tangential impact gives the same state to
    O(dt): velocities within g dt, positions within dv dt (time-stepping spreads the velocity
    jump over its step). Measured: 2e-4 m/s and 3.4e-4 m, rad."""
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
    """The acceleration-level problem of the walker's stance foot sliding (direction -1) with both
    knee stops closed: the foot's own block is Painlevé-inconsistent (G_NN - mu d G_NT < 0), so
    the block iteration keeps lambda_N = 0, but with the knee rows active the problem has a
    solution (Schur complement 0.07 > 0), which the solver must return."""
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
