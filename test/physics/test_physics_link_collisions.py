# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
Link collisions (SimConfig.collisions = 'links').

URDF <collision> shapes as hard contacts against the terrain, both integrators (docs/physics.md
"Link collisions").

Checked against textbook statics and Coulomb sliding: a box at rest on two support corners of
a planar model carries m g / 2 on each (statically determinate), a box on a slope sticks while
tan(theta) < mu and slides at g (sin(theta) - mu cos(theta)) above it (any dynamics text, e.g.
Meriam & Kraige, Engineering Mechanics: Dynamics, 6/2). The collapsed hopper of issue 22 rests
on its body above the floor instead of 0.6 m under it.
"""
import math

from conftest import URDF_XACRO
from dodo_sim.physics.simulator import SimConfig, Simulator
import numpy as np
from physics_models import _inertial, BOX_MASS_KG, BOX_SIZE_M, planar_box, planar_wheel
import pinocchio as pin
import pytest

INTEGRATORS = ('timestepping', 'event')
G = 9.81


def box_sim(integrator, z0, **config):
    sim = Simulator(planar_box(), SimConfig(integrator=integrator, contact_frames=(),
                                            collisions='links', **config))
    sim.reset(np.array((0.0, z0, 0.0)), np.zeros(3))
    return sim


@pytest.mark.parametrize('integrator', INTEGRATORS)
def test_box_dropped_flat_rests_on_its_corners_with_the_static_forces(integrator):
    sim = box_sim(integrator, 0.5 * BOX_SIZE_M[2] + 0.05)
    # planar model: the two bottom edges along y are two support points, the top two unused
    assert len(sim.robot.collision_points) == 4
    for _ in range(1000):                       # 5 cm fall (0.1 s) and 0.9 s at rest
        state = sim.step(())
    q, v = state.q, state.v
    assert q[1] == pytest.approx(0.5 * BOX_SIZE_M[2], abs=1e-6)   # on the floor, not in it
    assert abs(q[0]) < 1e-9 and abs(q[2]) < 1e-9                     # no drift, no rocking
    assert np.abs(v).max() < 1e-6
    contacts = state.link_contacts
    assert sorted(round(float(c.point[0]), 6) for c in contacts) == [-0.2, 0.2]
    for c in contacts:
        assert c.link == 'box'
        assert c.force[2] == pytest.approx(0.5 * BOX_MASS_KG * G, rel=1e-6)
        assert abs(c.force[0]) <= 0.8 * c.force[2]          # inside the friction cone
    # rigid statics fixes only the sum of the two friction forces (a pair of opposite ones
    # squeezing the box is as valid a solution); the normal split is fixed by the moments
    assert abs(sum(float(c.force[0]) for c in contacts)) < 1e-6


@pytest.mark.parametrize('integrator', INTEGRATORS)
@pytest.mark.parametrize('slope_deg', (20.0, 35.0))
def test_box_on_slope_sticks_below_the_friction_angle_and_slides_at_coulomb_rate(
        integrator, slope_deg):
    mu = 0.5                                    # friction angle atan(0.5) = 26.6 deg
    theta = math.radians(-slope_deg)            # ground falls with x: the box slides to +x
    sim = Simulator(planar_box(), SimConfig(integrator=integrator, contact_frames=(),
                                            collisions='links', terrain='slope',
                                            slope_deg=-slope_deg, friction=mu))
    # box resting on the slope: pitch = theta, centre half a box height along the normal
    normal = np.array((-math.sin(theta), math.cos(theta)))
    centre = 0.5 * BOX_SIZE_M[2] * normal
    sim.reset(np.array((centre[0], centre[1], -theta)), np.zeros(3))
    speeds = []
    for _ in range(300):
        state = sim.step(())
        speeds.append(math.hypot(state.v[0], state.v[1]))
    s = math.radians(slope_deg)
    expected = G * (math.sin(s) - mu * math.cos(s))
    if expected <= 0.0:
        assert max(speeds) < 1e-6              # sticks
        assert len(state.link_contacts) == 2
    else:
        # speed grows linearly at the Coulomb rate (fit between 0.1 s and 0.3 s)
        rate = (speeds[-1] - speeds[99]) / 0.2
        assert rate == pytest.approx(expected, rel=1e-3)
        assert abs(state.v[2]) < 1e-6           # slides flat, does not tip
    gap = (state.q[1] - math.tan(theta) * state.q[0]) * math.cos(theta)
    assert gap == pytest.approx(0.5 * BOX_SIZE_M[2], abs=1e-5)


def collapse(integrator, collisions):
    """
    Issue 22: from the default start, 0.6 s of hip -40 N*m / knee -10 N*m, then zero torque.

    The zero torque lasts until 2 s. Returns the simulator and the lowest point of the robot's
    collision points.
    """
    sim = Simulator(URDF_XACRO, SimConfig(integrator=integrator, collisions=collisions))
    for step in range(2000):
        state = sim.step([-40.0, -10.0] if step < 600 else [0.0, 0.0])
    return sim, state


@pytest.mark.parametrize('integrator', INTEGRATORS)
def test_collapsed_hopper_rests_on_its_body_above_the_floor(integrator):
    sim, state = collapse(integrator, 'links')
    model = sim.robot.model
    data = model.createData()
    pin.framesForwardKinematics(model, data, state.q)
    lowest = min(data.oMf[p.frame_id].translation[2] - p.radius
                 for p in sim.robot.collision_points)
    assert lowest > -1e-5
    body_z = data.oMf[model.getFrameId('body')].translation[2]
    assert body_z > 0.0
    assert np.abs(state.v).max() < 1e-3                  # at rest
    touching = {c.link for c in state.link_contacts}
    assert touching and touching <= {'body', 'thigh', 'shank'}
    total = sum(c.force for c in state.link_contacts) + state.contact_forces.sum(axis=0)
    assert total[2] == pytest.approx(sim.robot.total_mass * G, rel=1e-4)


def test_feet_only_hopper_still_falls_through_the_floor():
    """The 'feet' mode is today's behaviour (the case issue 22 reports)."""
    sim, state = collapse('timestepping', 'feet')
    model = sim.robot.model
    data = model.createData()
    pin.framesForwardKinematics(model, data, state.q)
    assert data.oMf[model.getFrameId('body')].translation[2] < -0.5


def floating_box() -> str:
    """Return the same box as a free body (floating base, 3-D contacts: 8 corners)."""
    a, b, c = BOX_SIZE_M
    m = BOX_MASS_KG
    inertial = _inertial(m, m * (a * a + c * c) / 12.0, m * (b * b + c * c) / 12.0,
                         m * (a * a + b * b) / 12.0)
    return f"""<robot name="box"><link name="box">{inertial}
  <collision><geometry><box size="{a} {b} {c}"/></geometry></collision></link></robot>"""


@pytest.mark.parametrize('integrator', INTEGRATORS)
def test_free_box_dropped_flat_rests_on_four_corners_without_drift(integrator):
    """
    3-D (the generic, not compiled, steps): four redundant supports.

    Their normal forces are not unique, their sum and moment are (m g at the centre).
    """
    sim = Simulator(floating_box(), SimConfig(integrator=integrator, contact_frames=(),
                                              collisions='links'))
    assert len(sim.robot.collision_points) == 8
    z0 = 0.5 * BOX_SIZE_M[2]
    sim.reset(np.array((0.0, 0.0, z0 + 0.02, 0.0, 0.0, 0.0, 1.0)), np.zeros(6))
    for _ in range(300):                        # 2 cm fall (64 ms), then at rest
        state = sim.step(())
    q, v = state.q, state.v
    assert q[2] == pytest.approx(z0, abs=1e-6)
    assert np.abs(q[:2]).max() < 1e-9 and np.abs(q[3:6]).max() < 1e-9   # no drift, no tilt
    assert np.abs(v).max() < 1e-6
    contacts = state.link_contacts
    assert len(contacts) == 4 and all(c.point[2] == pytest.approx(0.0, abs=1e-6)
                                      for c in contacts)
    total = sum(c.force for c in contacts)
    assert total == pytest.approx(np.array((0.0, 0.0, BOX_MASS_KG * G)), abs=1e-6)
    moment = sum(np.cross(c.point - q[:3], c.force) for c in contacts)
    assert np.abs(moment).max() < 1e-6


def test_feet_rule_keeps_the_foot_point_contact_only():
    """
    Check the link collision points the foot point makes redundant.

    The foot sphere and the shank cylinder's end at the foot are dropped (they would touch ~2 cm
    before the foot point); the shank's knee end, thigh and body stay.
    """
    sim = Simulator(URDF_XACRO, SimConfig(collisions='links'))
    links = [p.link for p in sim.robot.collision_points]
    assert 'foot' not in links
    assert links.count('shank') == 2 and links.count('thigh') == 4 and links.count('body') == 4
    excluded = Simulator(URDF_XACRO, SimConfig(collisions='links',
                                               collision_exclude_links='body, thigh'))
    assert {p.link for p in excluded.robot.collision_points} == {'shank'}


@pytest.mark.parametrize('integrator', INTEGRATORS)
def test_hopper_landing_on_its_foot_is_unchanged_by_link_collisions(integrator):
    """Only the foot touches in a drop and a held stance: bit-identical to 'feet'."""
    runs = []
    for collisions in ('feet', 'links'):
        sim = Simulator(URDF_XACRO, SimConfig(integrator=integrator, collisions=collisions))
        qs = []
        for _ in range(600):
            state = sim.step([-5.0, 2.0])
            qs.append(state.q)
            assert state.link_contacts == ()
        assert state.in_contact
        runs.append(np.array(qs))
    assert np.array_equal(runs[0], runs[1])


def test_event_broad_phase_checks_impacts_only_near_touchdown_and_changes_nothing(monkeypatch):
    """
    The event integrator's per-contact impact check runs only when a free point may touch.

    The check is in EventDrivenIntegrator._start_segment. A hopper drop with link collisions checks
    in the few steps around the touchdown, not in the flight or the stance before and after, and
    its trajectory is the one the check at every step gives (bit for bit).
    """
    from dodo_sim.physics import event

    def drop(broad_phase: bool):
        if not broad_phase:
            monkeypatch.setattr(event.EventDrivenIntegrator, '_free_may_touch',
                                lambda self, values: True)
        sim = Simulator(URDF_XACRO, SimConfig(integrator='event', collisions='links'))
        assert sim.integrator.n_contacts > 5           # the foot and the links' points
        checked = []
        check = sim.integrator._impact_if_approaching

        def counted(q, v, impulses, events):
            checked.append(len(qs))
            return check(q, v, impulses, events)

        sim.integrator._impact_if_approaching = counted
        qs = []
        for _ in range(600):
            qs.append(sim.step([-5.0, 2.0]).q)
        monkeypatch.undo()
        return np.array(qs), sorted(set(checked)), sim.state

    fast, checked_steps, state = drop(True)
    every, all_steps, _ = drop(False)
    assert state.in_contact
    assert np.array_equal(fast, every)
    assert len(all_steps) == 600
    assert 0 < len(checked_steps) < 30, checked_steps


@pytest.mark.parametrize('integrator', INTEGRATORS)
def test_cylinder_rolls_down_a_slope_at_two_thirds_g_sin_theta(integrator):
    """
    A solid cylinder rolling without slipping.

    A = g sin(theta) / (1 + I / (m r^2)) = (2/3) g sin(theta) (tan(theta) = 0.36 < 3 mu: it rolls).
    """
    r, slope_deg = 0.1, 20.0
    theta = math.radians(-slope_deg)
    sim = Simulator(planar_wheel(r), SimConfig(integrator=integrator, contact_frames=(),
                                               collisions='links', terrain='slope',
                                               slope_deg=-slope_deg, friction=0.8))
    # a wheel: one support point, its axis centre with radius r (the two disks coincide in x-z)
    assert [p.radius for p in sim.robot.collision_points] == [r]
    centre = r * np.array((-math.sin(theta), math.cos(theta)))
    sim.reset(np.array((centre[0], centre[1], 0.0)), np.zeros(3))
    speeds = []
    for _ in range(300):
        state = sim.step(())
        speeds.append(math.hypot(state.v[0], state.v[1]))
    rate = (speeds[-1] - speeds[99]) / 0.2
    assert rate == pytest.approx(2.0 / 3.0 * G * math.sin(math.radians(slope_deg)), rel=1e-3)
    assert state.v[2] * r == pytest.approx(speeds[-1], rel=1e-6)      # no slip: omega r = v


def test_every_shipped_robot_collides_its_links_by_default():
    """Issue 22: 'links' is the default, so a shipped robot's body, thigh... touch the floor."""
    for urdf, feet in ((URDF_XACRO, ('foot',)),
                       (URDF_XACRO.parent / 'kneed_walker.urdf.xacro',
                        ('left_foot', 'right_foot')),
                       (URDF_XACRO.parent / 'boom_leg.urdf.xacro', ('foot',))):
        sim = Simulator(urdf, SimConfig(contact_frames=feet))
        assert sim.config.collisions == 'links'
        assert len(sim.robot.collision_points) > 0, urdf


def test_bad_collision_settings_are_named():
    with pytest.raises(ValueError, match='collisions'):
        SimConfig(collisions='all')
    with pytest.raises(ValueError, match='nose'):
        Simulator(URDF_XACRO, SimConfig(collisions='links', collision_exclude_links='nose'))


def test_published_quadruped_collapses_onto_its_body_not_through_the_floor():
    """
    Drop Solo-12 from 0.4 m with zero torque under 'feet' and 'links'.

    Solo-12 (example-robot-data, mesh collisions as STL bounding boxes) dropped from 0.4 m with
    zero torque: with 'feet' its base ends under the floor; with 'links' it rests on its base and
    upper legs, nothing under the floor (time-stepping; the 3-D event integrator with 84 support
    points is too slow for the default run).
    """
    from public_robots import solo12
    feet = ('FL_FOOT', 'FR_FOOT', 'HL_FOOT', 'HR_FOOT')
    sim = Simulator(solo12(), SimConfig(contact_frames=feet, collisions='links'))
    q = sim.robot.default_q.copy()
    q[2] = 0.4
    sim.reset(q, np.zeros(sim.robot.nv))
    for _ in range(800):                        # falls, folds its legs, rests by 0.8 s
        state = sim.step(np.zeros(12))
    model = sim.robot.model
    data = model.createData()
    pin.framesForwardKinematics(model, data, state.q)
    lowest = min(data.oMf[p.frame_id].translation[2] for p in sim.robot.collision_points)
    assert lowest > -1e-6
    assert state.q[2] > 0.0
    assert np.abs(state.v).max() < 1e-3
    assert 'base_link' in {c.link for c in state.link_contacts}


def test_quadruped_dropped_on_its_side_never_gains_energy():
    """
    Solo-12 dropped 5 cm on its side, legs straight, zero torque: its legs swing onto the floor.

    Before: nearly dependent support points (a straight leg, two corners of one box) made the
    position correction ill posed; it turned a knee by 23 rad in one step, the joint angles
    wound up to 1800 rad and the robot gained 5.6 J in one step, jumping 0.27 m up. Now the
    mechanical energy never exceeds the start's (the contacts are inelastic) by more than the
    midpoint rule's error with legs swinging at 10 rad/s (mJ), and no joint moves further in
    a step than its velocity takes it.
    """
    from public_robots import solo12, SOLO_FEET
    sim = Simulator(solo12(), SimConfig(contact_frames=SOLO_FEET, collisions='links'))
    model = sim.robot.model
    data = model.createData()
    q = sim.robot.default_q.copy()
    q[7:] = 0.0
    q[3:7] = (math.sin(math.pi / 4), 0.0, 0.0, math.cos(math.pi / 4))     # roll 90 deg
    pin.framesForwardKinematics(model, data, q)
    lowest = min(data.oMf[p.frame_id].translation[2] for p in sim.robot.collision_points)
    q[2] += 0.05 - lowest
    sim.reset(q, np.zeros(sim.robot.nv))

    def energy(state):
        return (pin.computeKineticEnergy(model, data, state.q, state.v)
                + pin.computePotentialEnergy(model, data, state.q))
    start = energy(sim.state)
    previous = sim.state
    most, jump = -math.inf, 0.0
    for _ in range(200):                        # the legs land at 0.1-0.15 s
        state = sim.step(np.zeros(12))
        most = max(most, energy(state) - start)
        moved = np.abs(state.q[7:] - previous.q[7:]) - sim.config.dt * np.abs(state.v[6:])
        jump = max(jump, moved.max())
        previous = state
    assert most < 0.01, most                    # J; before: +0.22 J by 0.15 s, +5.1 J later
    assert jump < 0.02, jump                    # rad; before: 23 rad in one step
    assert {c.link for c in state.link_contacts}, 'it rests on its links'


@pytest.mark.parametrize('integrator', INTEGRATORS)
def test_kneed_walker_without_torque_falls_onto_its_torso(integrator):
    """
    The Kneed Walker from its default pose with zero torque.

    With 'links' it ends at rest with its torso on the floor, no support point below it. The
    event integrator used to stop at 0.65 s here (EventLimitExceeded: a thigh point alternating
    stick -> slip -> zero-length slide while a knee sat on its stop; see docs/physics.md).
    """
    walker = URDF_XACRO.parent / 'kneed_walker.urdf.xacro'
    sim = Simulator(walker, SimConfig(integrator=integrator,
                                      contact_frames=('left_foot', 'right_foot'),
                                      collisions='links'))
    q = sim.robot.default_q.copy()
    q[1] += 0.1                   # the URDF default has its feet 17 um under the ground
    sim.reset(q, sim.robot.default_v)
    for _ in range(3000):
        state = sim.step(np.zeros(len(sim.robot.actuated_idx_v)))
    model = sim.robot.model
    data = model.createData()
    pin.framesForwardKinematics(model, data, state.q)
    lowest = min(data.oMf[p.frame_id].translation[2] - p.radius
                 for p in sim.robot.collision_points)
    assert lowest > -1e-6
    assert np.abs(state.v).max() < 1e-6
    assert 'torso' in {c.link for c in state.link_contacts}


def _lowest_above_terrain(sim, state) -> float:
    """Smallest height of any collision shape's lowest point above the terrain under it, m."""
    model = sim.robot.model
    data = model.createData()
    pin.framesForwardKinematics(model, data, state.q)
    return min(data.oMf[p.frame_id].translation[2] - p.radius
               - sim.terrain.height(data.oMf[p.frame_id].translation[0])
               for p in sim.robot.collision_points)


@pytest.mark.parametrize('integrator', INTEGRATORS)
def test_box_dropped_on_a_step_tread_rests_on_it(integrator):
    """A box dropped wholly over the upper tread of a 5 cm step rests on it with m g."""
    rise = 0.05
    sim = Simulator(planar_box(), SimConfig(integrator=integrator, contact_frames=(),
                                            collisions='links', terrain='steps',
                                            step_edges_x_m=(-0.5,), step_rises_m=(rise,)))
    sim.reset(np.array((0.0, rise + 0.5 * BOX_SIZE_M[2] + 0.03, 0.0)), np.zeros(3))
    for _ in range(800):
        state = sim.step(())
    assert state.q[1] == pytest.approx(rise + 0.5 * BOX_SIZE_M[2], abs=1e-6)
    assert np.abs(state.v).max() < 1e-6
    weight = sum(c.force[2] for c in state.link_contacts)
    assert weight == pytest.approx(BOX_MASS_KG * G, rel=1e-6)


@pytest.mark.parametrize('integrator', INTEGRATORS)
def test_collapsed_hopper_on_a_sinusoid_stays_above_it(integrator):
    """Issue 22's collapse on 2 cm waves of 0.5 m: no shape ends under the ground."""
    sim = Simulator(URDF_XACRO, SimConfig(integrator=integrator, collisions='links',
                                          terrain='sinusoid', sine_amplitude_m=0.02,
                                          sine_wavelength_m=0.5))
    lowest = math.inf
    for step in range(2000):
        state = sim.step([-40.0, -10.0] if step < 600 else [0.0, 0.0])
        lowest = min(lowest, _lowest_above_terrain(sim, state))
    # time-stepping: a landing point sinks 5.5e-6 m within its step before position correction
    # lifts it (event: -1.3e-14); at rest both are on the ground
    assert lowest > -1e-5
    assert _lowest_above_terrain(sim, state) > -1e-9
    assert np.abs(state.v).max() < 1e-3
    assert {c.link for c in state.link_contacts} & {'body', 'thigh'}
