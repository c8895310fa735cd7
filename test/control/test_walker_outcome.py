# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
Fall detection and step counting of the Kneed Walker judge.

The judge (dodo_control.walker.outcome, docs/walker.md) reads the simulator's state and model only.
"""
import math

from conftest import REPO
from dodo_control.walker.outcome import (config_on_terrain, count_steps, FallCriteria,
                                         FallDetector, place_on_terrain, walk)
from dodo_sim.simulator import SimConfig, Simulator
import numpy as np
import pytest

WALKER = REPO / 'urdf' / 'kneed_walker.urdf.xacro'
FEET = ('left_foot', 'right_foot')
INTEGRATORS = ('timestepping', 'event')
# the URDF's standing pose: legs straight, split by 0.3 rad, both feet on flat ground
STAND = (0.0, 0.889894, 0.0, 0.15, 0.0, -0.15, 0.0)


def _sim(integrator='timestepping', **kw):
    return Simulator(WALKER, SimConfig(integrator=integrator, contact_frames=FEET, **kw))


def _sim_on_terrain(stance_frame='left_foot', **kw):
    """Return a simulator on a terrain, started from the URDF's standing pose placed on it."""
    config = SimConfig(contact_frames=FEET, **kw)
    return Simulator(WALKER, config_on_terrain(WALKER, config, stance_frame))


class _Torques:
    """Constant torques [left_hip, left_knee, right_hip, right_knee] on a two-foot policy."""

    contact_frames = FEET

    def __init__(self, tau):
        self.tau = np.asarray(tau, dtype=float)

    def update(self, t, q, v, contact_forces):
        return self.tau


@pytest.mark.parametrize('integrator', INTEGRATORS)
def test_zero_torques_buckle_the_knees_and_the_run_ends_at_hip_height(integrator):
    """With no motor torque the straight knees are not held: they buckle and the hip drops."""
    sim = _sim(integrator)
    outcome = walk(sim, _Torques([0.0] * 4), duration_s=3.0)
    assert outcome.fell and outcome.fall_reason == 'hip_height'
    assert outcome.rollout.stopped_early
    assert outcome.fall_time_s < 1.0
    assert outcome.duration_s == pytest.approx(outcome.fall_time_s)
    last = outcome.rollout.q[-1]
    assert last[1] < FallCriteria().min_hip_height_m + 0.01   # hip z (flat ground at 0)
    assert last[4] > 0.5 and last[6] > 0.5                     # both knees flexed


@pytest.mark.parametrize('integrator', INTEGRATORS)
def test_locked_knees_with_free_hips_let_the_torso_topple(integrator):
    """Knees pressed onto their stops, hips free: the top-heavy torso falls over the hip."""
    q = (0.0, 0.889894, 0.1, 0.05, 0.0, -0.25, 0.0)     # torso 0.1 rad forward, feet on ground
    sim = _sim(integrator, initial_q=q)
    outcome = walk(sim, _Torques([0.0, -5.0, 0.0, -5.0]), duration_s=3.0)
    assert outcome.fall_reason == 'torso_pitch'
    assert outcome.rollout.q[-1][2] > FallCriteria().max_torso_pitch_rad   # fell forward
    assert outcome.rollout.q[-1][1] > 0.85                                # hip still high


def test_detector_reasons_from_configurations():
    sim = _sim()
    detector = FallDetector(sim)
    assert detector.check(STAND) is None
    tilted = list(STAND)
    tilted[2] = -0.9
    assert detector.check(tilted) == 'torso_pitch'
    low = [0.0, 0.3, 0.0, 0.0, 0.0, 0.0, 0.0]           # hip 0.3 m up, knees 0.15 m under ground
    assert detector.check(low) == 'hip_height'
    knees_only = FallDetector(sim, FallCriteria(min_hip_height_m=0.0))
    assert knees_only.check(low) == 'knee_contact'
    # right thigh swung back almost horizontal (knee 0.03 m under the hip), left thigh 0.5 rad
    # forward (knee 0.395 m under the hip)
    one_knee = [0.0, 0.5, 0.0, -0.5, 0.0, 1.5, 0.0]
    assert knees_only.check(one_knee) is None
    one_knee[1] = 0.35
    assert knees_only.check(one_knee) == 'knee_contact'     # only the left knee is below 0


def test_hip_height_is_measured_above_the_terrain_under_the_hip():
    sim = _sim_on_terrain(terrain='slope', slope_deg=-10.0)
    detector = FallDetector(sim)
    q = list(STAND)
    q[0] = 5.0                                         # ground at x = 5 m is 0.88 m lower
    q[1] = 0.889894 + math.tan(math.radians(-10.0)) * 5.0
    assert detector.check(q) is None
    q[1] -= 0.4
    assert detector.check(q) == 'hip_height'


def test_criteria_and_detector_reject_bad_values():
    with pytest.raises(ValueError, match='max_torso_pitch_rad'):
        FallCriteria(max_torso_pitch_rad=4.0)
    with pytest.raises(ValueError, match='min_hip_height_m'):
        FallCriteria(min_hip_height_m=-1.0)
    with pytest.raises(ValueError, match='ankle'):
        FallDetector(_sim(), FallCriteria(knee_joints=('ankle',)))


def test_count_steps_takes_alternating_feet_only():
    t = np.arange(12) * 0.1
    flags = np.array([[0, 0],      # reset state: no contact solved yet (ignored)
                      [1, 1],      # start in double support
                      [1, 0],      # right lifts
                      [1, 1],      # right lands: step 1
                      [0, 1],
                      [0, 1],
                      [1, 1],      # left lands: step 2
                      [1, 0],
                      [0, 0],
                      [1, 0],      # left again (a hop): no step
                      [1, 1],      # right lands: step 3
                      [1, 1]], dtype=bool)
    ticks, feet = count_steps(flags, t)
    assert ticks == (3, 6, 10)
    assert feet == (1, 0, 1)


def test_count_steps_ignores_a_scuff_right_after_a_touchdown():
    t = np.arange(8) * 0.01
    flags = np.array([[0, 0], [0, 1], [1, 1], [1, 0], [1, 1], [1, 0], [1, 0], [1, 0]],
                     dtype=bool)
    ticks, _ = count_steps(flags, t, min_step_time_s=0.1)
    assert ticks == (2,)                               # the right foot's scuff at 0.04 s


def test_place_on_terrain_puts_both_feet_of_a_standing_pose_on_a_slope():
    sim = _sim_on_terrain(terrain='slope', slope_deg=-4.0)
    q, v = place_on_terrain(sim, STAND, [0.5, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0], 'right_foot')
    feet = sim.contact_positions(q)
    for foot in feet:
        assert foot[2] == pytest.approx(sim.terrain.height(foot[0]), abs=1e-12)
    assert q[2] == pytest.approx(math.radians(4.0))    # the torso turned with the ground
    assert math.hypot(v[0], v[1]) == pytest.approx(0.5)
    assert v[1] < 0.0                                  # moving down the slope


def test_config_on_terrain_starts_a_simulator_on_a_slope_without_a_flat_ground_simulator():
    """
    The Simulator refuses a start state under its terrain.

    :func:`config_on_terrain` moves the config's start state onto the config's terrain before
    anything is built.
    """
    config = SimConfig(contact_frames=FEET, terrain='slope', slope_deg=-4.0, initial_q=STAND,
                       initial_v=(0.5, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0))
    with pytest.raises(ValueError, match='below the slope terrain'):
        Simulator(WALKER, config)
    placed = config_on_terrain(WALKER, config, 'right_foot')
    sim = Simulator(WALKER, placed)
    reference_q, reference_v = place_on_terrain(sim, STAND, config.initial_v, 'right_foot')
    np.testing.assert_array_equal(placed.initial_q, reference_q)
    np.testing.assert_array_equal(placed.initial_v, reference_v)
    for foot in sim.contact_positions():
        assert foot[2] == pytest.approx(sim.terrain.height(foot[0]), abs=1e-12)
