# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
Contact with the steps terrain (docs/physics.md, terrain).

The signed distance to a profile of horizontal treads and vertical risers, with the normal of the
nearest feature, is checked for both integrators: a point mass flying into a riser stops or bounces
off the vertical face, a ball rolling off a step-down edge falls freely onto the lower tread.
"""
import math

from dodo_sim.physics.contact import contact_basis
from dodo_sim.physics.terrain import make_terrain, StepsTerrain
from dodo_sim.simulator import SimConfig, Simulator
import numpy as np
from physics_models import ball, point_mass_3d
import pytest

INTEGRATORS = ('timestepping', 'event')
G = 9.81
# up 5 cm at x = 1, down 2 cm at x = 2, up 1 cm at x = 2.004 (a 4 mm tread between two risers)
EDGES, RISES = (1.0, 2.0, 2.004), (0.05, -0.02, 0.01)


def terrain() -> StepsTerrain:
    return make_terrain('steps', step_edges_x_m=EDGES, step_rises_m=RISES)


def profile_segments():
    """Return the profile as segments (a, b), treads extended 10 m beyond the outer edges."""
    heights = [0.0]
    for rise in RISES:
        heights.append(heights[-1] + rise)
    xs = [EDGES[0] - 10.0, *EDGES, EDGES[-1] + 10.0]
    segments = []
    for i, h in enumerate(heights):
        segments.append(((xs[i], h), (xs[i + 1], h)))
        if i < len(EDGES):
            segments.append(((EDGES[i], h), (EDGES[i], heights[i + 1])))
    return segments


def brute_distance(x, z) -> float:
    """Signed distance by projection on every segment; inside: under the tread at x."""
    best = math.inf
    for (ax, az), (bx, bz) in profile_segments():
        dx, dz = bx - ax, bz - az
        s = min(1.0, max(0.0, ((x - ax) * dx + (z - az) * dz) / (dx * dx + dz * dz)))
        best = min(best, math.hypot(x - ax - s * dx, z - az - s * dz))
    return -best if z < terrain().height(x) else best


# -- the gap function ------------------------------------------------------------------------

def test_signed_distance_matches_projection_on_every_segment():
    rng = np.random.default_rng(3)
    t = terrain()
    points = np.column_stack((rng.uniform(0.8, 2.2, 4000), rng.uniform(-0.08, 0.12, 4000)))
    for x, z in points:
        assert t.signed_distance(x, z)[0] == pytest.approx(brute_distance(x, z), abs=1e-15)


def test_normal_is_the_gradient_of_the_signed_distance():
    rng = np.random.default_rng(4)
    t, h = terrain(), 1e-7
    for x, z in np.column_stack((rng.uniform(0.9, 2.1, 500), rng.uniform(-0.05, 0.1, 500))):
        d, nx, nz = t.signed_distance(x, z)
        gx = (t.signed_distance(x + h, z)[0] - t.signed_distance(x - h, z)[0]) / (2 * h)
        gz = (t.signed_distance(x, z + h)[0] - t.signed_distance(x, z - h)[0]) / (2 * h)
        if abs(gx * gx + gz * gz - 1.0) < 1e-6:     # off the ridges where d has a kink
            assert (nx, nz) == pytest.approx((gx, gz), abs=1e-6)
        assert nx * nx + nz * nz == pytest.approx(1.0, abs=1e-15)


def test_treads_keep_the_height_field_gap_and_normal():
    t = terrain()
    for x, z in ((0.5, 0.03), (1.5, 0.051), (1.5, 0.02), (3.0, 0.1)):
        assert t.signed_distance(x, z) == (z - t.height(x), 0.0, 1.0)


def test_riser_faces_have_horizontal_normals():
    t = terrain()
    assert t.signed_distance(0.99, 0.02) == pytest.approx((0.01, -1.0, 0.0))    # up: faces -x
    assert t.signed_distance(1.003, 0.02) == pytest.approx((-0.003, -1.0, 0.0))  # in the solid
    assert t.signed_distance(2.001, 0.045) == pytest.approx((0.001, 1.0, 0.0))   # down: faces +x
    assert t.signed_distance(1.0, 0.02) == (0.0, -1.0, 0.0)                       # on the face


def test_convex_corner_normal_turns_from_the_tread_to_the_riser():
    """
    Around the corner (1, 0.05) of the upper tread.

    The distance is r, the normal the direction from the corner, continuous between the riser's
    (-1, 0) and the tread's (0, 1).
    """
    t, r = terrain(), 0.004
    for angle in np.linspace(0.0, math.pi / 2, 7):
        n = (-math.cos(angle), math.sin(angle))
        d, nx, nz = t.signed_distance(1.0 + r * n[0], 0.05 + r * n[1])
        # the input coordinates are rounded to ~1e-17 m, so the normal to ~1e-17 / r
        assert (d, nx, nz) == pytest.approx((r, *n), abs=1e-13)


def test_concave_corner_goes_to_the_nearer_face_and_ties_to_the_tread():
    t = terrain()
    assert t.signed_distance(0.99, 0.005) == pytest.approx((0.005, 0.0, 1.0))    # tread nearer
    assert t.signed_distance(0.995, 0.01) == pytest.approx((0.005, -1.0, 0.0))   # riser nearer
    assert t.signed_distance(0.99, 0.01) == pytest.approx((0.01, 0.0, 1.0))      # bisector
    assert t.signed_distance(1.0, 0.0) == (0.0, 0.0, 1.0)                        # the corner


def test_gap_is_continuous_across_an_edge():
    """The height field jumped by the rise at an edge; the signed distance is 1-Lipschitz."""
    t, eps = terrain(), 1e-9
    for edge in EDGES:
        for z in np.linspace(-0.03, 0.08, 23):
            jump = abs(t.signed_distance(edge + eps, z)[0] - t.signed_distance(edge - eps, z)[0])
            assert jump <= 2 * eps * (1 + 1e-6)


def test_contact_basis_uses_the_feature_normal():
    gap, basis = contact_basis(terrain(), 0.99, 0.02, radius=0.004)
    assert gap == pytest.approx(0.006)
    np.testing.assert_array_equal(basis, [[-1, 0, 0], [0, 0, 1], [0, 1, 0]])


# -- dynamics --------------------------------------------------------------------------------

T_HIT = 0.04975     # inside the 1 ms step [0.049, 0.050], past its midpoint


def flight_into_riser(integrator, restitution, seconds=0.12):
    """
    Return the states of a point mass (friction 0) flying into the 5 cm riser at x = 1.

    It starts 4 cm over the ground, 1 m/s * T_HIT before the riser, flying at 1 m/s in +x: it meets
    the face at T_HIT, 1.2 cm lower.
    """
    sim = Simulator(point_mass_3d(), SimConfig(
        integrator=integrator, friction=0.0, restitution=restitution, terrain='steps',
        step_edges_x_m=EDGES, step_rises_m=RISES, initial_q=(1.0 - T_HIT, 0.0, 0.04),
        initial_v=(1.0, 0.0, 0.0)))
    return [sim.step([]) for _ in range(int(round(seconds / sim.config.control_period)))]


@pytest.mark.parametrize('integrator', INTEGRATORS)
def test_mass_flying_into_a_riser_stops_at_the_face(integrator):
    """
    Plastic: x stays at the face from T_HIT, x velocity 0.

    The fall goes on (friction 0) down the face onto the lower tread at t = sqrt(2 * 0.04 / g) =
    0.0903 s.
    """
    states = flight_into_riser(integrator, 0.0)
    t_hit, t_land = T_HIT, math.sqrt(2 * 0.04 / G)
    for s in states:
        if s.t < t_hit - 1e-9:
            assert s.q[0] == pytest.approx(1.0 - t_hit + s.t, abs=1e-12)
        elif s.t > t_hit + 1e-3:
            assert s.q[0] == pytest.approx(1.0, abs=1e-9)
            assert s.v[0] == pytest.approx(0.0, abs=1e-9)
        if s.t < t_land - 1e-9:
            assert s.v[2] == pytest.approx(-G * s.t, abs=1e-9)
        elif s.t > t_land + 1e-3:
            # event: the landing is located 1e-9 m deep (the touchdown offset of a contact
            # that left the face at gap 0, event.py) and closed by the drift control (rate w
            # = 200/s), so the velocity is within w * 1e-9
            assert s.q[2] == pytest.approx(0.0, abs=1e-9)
            assert s.v[2] == pytest.approx(0.0, abs=1e-9 if integrator == 'timestepping'
                                           else 200 * 1e-9)
    # between the impact and the landing the face carries no force (friction 0)
    assert not any(s.in_contact for s in states if t_hit + 1e-3 < s.t < t_land - 1e-3)
    assert states[-1].in_contact


@pytest.mark.parametrize('integrator', INTEGRATORS)
def test_mass_flying_into_a_riser_bounces_off_the_face(integrator):
    """
    With e = 0.5: x velocity -0.5 m/s after T_HIT, x = 1 - 0.5 (t - T_HIT).

    Time-stepping (Moreau-Jean) applies the impact at the midpoint t_M of the step holding T_HIT,
    so its position is off by (1 + e) u |T_HIT - t_M| <= (1 + e) u dt / 2.
    """
    e, u, dt = 0.5, 1.0, 1e-3
    states = flight_into_riser(integrator, e, seconds=0.08)
    t_mid = 0.0495
    error = 1e-9 if integrator == 'event' else (1 + e) * u * abs(T_HIT - t_mid) + 1e-12
    after = [s for s in states if s.t > T_HIT + dt]
    for s in after:
        assert s.v[0] == pytest.approx(-e * u, abs=1e-9)
        assert s.q[0] == pytest.approx(1.0 - e * u * (s.t - T_HIT), abs=error)
    for s in states:
        if s.t < T_HIT - dt:
            assert s.v[0] == pytest.approx(u, abs=1e-12)
    assert len(after) > 20


@pytest.mark.parametrize('integrator', INTEGRATORS)
def test_ball_rolling_off_a_step_down_falls_onto_the_lower_tread(integrator):
    """
    A ball rolling over a step too fast to pivot round the edge.

    The ball (r = 5 cm) rolls at u = 1 m/s (u^2 > g r: it cannot pivot round the corner) over the
    edge at x = 2, 2 cm down: a free parabola from x = 2, landing at t = sqrt(2 * 0.02 / g) after
    the edge, where it keeps rolling at u (the landing impulse is normal and through the centre) at
    rest vertically.
    """
    r, u, top = 0.05, 1.0, 0.05
    x0 = 1.9
    sim = Simulator(ball(radius=r), SimConfig(
        integrator=integrator, contact_frames=('ball',), contact_radii=(r,), terrain='steps',
        step_edges_x_m=EDGES[:2], step_rises_m=RISES[:2], initial_q=(x0, top + r, 0.0),
        initial_v=(u, 0.0, u / r)))
    t_edge = (2.0 - x0) / u
    t_land = t_edge + math.sqrt(2 * 0.02 / G)
    dt = sim.config.control_period
    states = [sim.step([]) for _ in range(int(round((t_land + 0.05) / dt)))]
    for s in states:
        if t_edge + dt < s.t < t_land - dt:
            fall = s.t - t_edge
            assert not s.in_contact
            assert s.q[0] == pytest.approx(2.0 + u * fall, abs=1e-6)
            assert s.q[1] == pytest.approx(top + r - 0.5 * G * fall ** 2, abs=1e-6)
        elif s.t > t_land + dt:
            assert s.in_contact
            assert s.q[1] == pytest.approx(0.03 + r, abs=1e-9)
            assert s.v[0] == pytest.approx(u, abs=1e-6) and s.v[1] == pytest.approx(0, abs=1e-9)
            assert s.v[2] * r == pytest.approx(u, abs=1e-6)
