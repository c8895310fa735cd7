# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
Exact references for the robot-agnostic engine, both integrators.

The lever rule on two feet, Coulomb sliding on a slope and on flat ground in 3-D, a joint stop, the
rimless wheel of Coleman, Chatterjee & Ruina 1997, and model loading (docs/physics.md).
"""
import math

from dodo_sim.physics import load_robot, ModelError
from dodo_sim.simulator import SimConfig, Simulator
import numpy as np
from physics_models import horizontal_double_pendulum, point_mass_3d, rimless_wheel, two_foot_body
import pytest

INTEGRATORS = ('timestepping', 'event')
G = 9.81
FEET = ('left', 'right')


# -- model loading ---------------------------------------------------------------------------

def test_model_sizes_and_planarity_come_from_the_urdf():
    body = load_robot(two_foot_body(), contact_frames=FEET)
    assert (body.nq, body.nv, body.planar, body.contact_dim) == (3, 3, True, 2)
    assert body.actuated_joint_names == ()
    mass = load_robot(point_mass_3d())
    assert (mass.planar, mass.contact_dim) == (False, 3)


def test_a_one_joint_model_loads_and_is_planar():
    """A single revolute joint about y (pinocchio gives its joint jacobian as one column)."""
    xml = """<robot name="arm"><link name="world"/><link name="arm">
      <inertial><origin xyz="0.3 0 0"/><mass value="1"/>
      <inertia ixx="0.01" iyy="0.01" izz="0.01" ixy="0" ixz="0" iyz="0"/></inertial></link>
      <joint name="shoulder" type="revolute"><parent link="world"/><child link="arm"/>
      <origin xyz="0 0 1"/><axis xyz="0 1 0"/><limit lower="-3" upper="3" effort="5" velocity="9"/>
      </joint></robot>"""
    robot = load_robot(xml, contact_frames=())
    assert (robot.nq, robot.nv, robot.planar) == (1, 1, True)


def test_continuous_joint_is_one_unlimited_angle():
    robot = load_robot(horizontal_double_pendulum(), contact_frames=())
    assert (robot.nq, robot.nv) == (2, 2)            # not pinocchio's (cos, sin) pair
    assert [lim.name for lim in robot.limits] == ['elbow']
    assert 'continuous' in robot.urdf_xml            # the published description is unchanged


def test_free_flyer_keeps_pinocchio_coordinates():
    xml = """<robot name="box"><link name="world"/><link name="box">
      <inertial><mass value="1"/><inertia ixx="0.1" iyy="0.1" izz="0.1" ixy="0" ixz="0" iyz="0"/>
      </inertial></link><joint name="root" type="floating"><parent link="world"/>
      <child link="box"/></joint></robot>"""
    sim = Simulator(xml, SimConfig(contact_frames=('box',), contact_radii=(0.1,),
                                   initial_q=(0, 0, 0.5, 0, 0, 0, 1)))
    assert (sim.robot.nq, sim.robot.nv, sim.robot.planar) == (7, 6, False)
    for _ in range(600):
        state = sim.step([])
    # a ball of radius 0.1 m dropped from 0.5 m rests on the ground with its weight on it
    assert state.q[2] == pytest.approx(0.1, abs=1e-6)
    np.testing.assert_allclose(state.contact_forces[0], [0.0, 0.0, G], atol=1e-6)


def test_unknown_contact_frame_and_actuated_joint_are_named():
    with pytest.raises(ModelError, match="no frame 'toe'"):
        load_robot(two_foot_body(), contact_frames=('toe',))
    with pytest.raises(ModelError, match=r"\['wrist'\] not in the URDF"):
        load_robot(two_foot_body(), contact_frames=FEET, actuated_joints=('wrist',))


def test_actuated_joints_take_one_torque_each():
    sim = Simulator(horizontal_double_pendulum(), SimConfig(contact_frames=()))
    assert sim.actuated_joint_names == ('shoulder', 'elbow')
    with pytest.raises(ValueError, match=r"2 finite values \['shoulder', 'elbow'\]"):
        sim.step([1.0])


# -- two feet: lever rule and sliding down a slope -------------------------------------------

@pytest.mark.parametrize('integrator', INTEGRATORS)
@pytest.mark.parametrize('com_x', [0.0, 0.1])
def test_two_feet_at_rest_share_the_weight_by_the_lever_rule(integrator, com_x):
    mass, left_x, right_x = 10.0, -0.3, 0.4
    sim = Simulator(two_foot_body(mass=mass, com_x=com_x, feet_x=(left_x, right_x)),
                    SimConfig(integrator=integrator, contact_frames=FEET,
                              initial_q=(0.0, 0.2, 0.0)))
    for _ in range(200):
        state = sim.step([])
    weight = mass * G
    expected = [weight * (right_x - com_x) / (right_x - left_x),
                weight * (com_x - left_x) / (right_x - left_x)]
    # exact at rest (both integrators, measured 3e-16): the tolerance is rounding
    np.testing.assert_allclose(state.contact_forces[:, 2], expected, rtol=1e-9)
    assert state.in_contacts == (True, True)


def slope_slide(integrator, slope_deg, mu, seconds=0.5):
    theta = math.radians(slope_deg)
    sim = Simulator(two_foot_body(feet_z=-0.2),
                    SimConfig(integrator=integrator, contact_frames=FEET, friction=mu,
                              terrain='slope', slope_deg=slope_deg, initial_q=(0.0, 1.0, 0.0)))
    # pitch -theta lines the feet up with the slope; lift the base until they touch it
    q = np.array([0.0, 0.0, -theta])
    feet = sim.contact_positions(q)
    q[1] = max(sim.terrain.height(p[0]) - p[2] for p in feet)
    state = sim.reset(q, np.zeros(3))
    times, along = [], []
    for _ in range(int(round(seconds / sim.config.control_period))):
        state = sim.step([])
        times.append(state.t)
        along.append(state.q[0] * math.cos(theta) + state.q[1] * math.sin(theta))
    return np.array(times), np.array(along), state


@pytest.mark.parametrize('integrator', INTEGRATORS)
def test_two_feet_slide_down_a_slope_at_the_coulomb_acceleration(integrator):
    slope_deg, mu = 25.0, 0.3
    theta = math.radians(slope_deg)
    assert mu < math.tan(theta)
    times, along, state = slope_slide(integrator, slope_deg, mu)
    acceleration = 2.0 * np.polyfit(times, along, 2)[0]
    expected = -G * (math.sin(theta) - mu * math.cos(theta))  # down the slope = -x
    # constant acceleration: the midpoint step and RK4 are exact (measured 3e-15)
    assert acceleration == pytest.approx(expected, rel=1e-9)
    assert state.in_contacts == (True, True) and state.unconverged_steps == 0


@pytest.mark.parametrize('integrator', INTEGRATORS)
def test_two_feet_stick_on_a_slope_when_friction_suffices(integrator):
    _, along, _ = slope_slide(integrator, 25.0, 0.5, seconds=0.3)
    assert np.abs(along - along[0]).max() < 1e-12


# -- 3-D: isotropic Coulomb cone -------------------------------------------------------------

@pytest.mark.parametrize('integrator', INTEGRATORS)
def test_3d_oblique_slide_decelerates_along_its_velocity_at_mu_g(integrator):
    mu, v0 = 0.5, np.array([1.2, -0.9, 0.0])
    sim = Simulator(point_mass_3d(), SimConfig(integrator=integrator, friction=mu,
                                               initial_q=(0.0, 0.0, 0.0),
                                               initial_v=tuple(v0)))
    direction = v0 / np.linalg.norm(v0)
    t_stop = np.linalg.norm(v0) / (mu * G)
    for _ in range(int(0.2 / sim.config.control_period)):
        state = sim.step([])
    t = state.t
    assert t < t_stop
    np.testing.assert_allclose(state.v, v0 - mu * G * t * direction, atol=1e-9)
    np.testing.assert_allclose(state.q, v0 * t - 0.5 * mu * G * t * t * direction, atol=1e-9)
    np.testing.assert_allclose(state.contact_forces[0],
                               2.0 * G * np.r_[-mu * direction[:2], 1.0], rtol=1e-9)


@pytest.mark.parametrize('integrator', INTEGRATORS)
def test_3d_slide_stops_and_sticks(integrator):
    mu, v0 = 0.5, np.array([0.3, 0.4, 0.0])
    sim = Simulator(point_mass_3d(), SimConfig(integrator=integrator, friction=mu,
                                               initial_q=(0.0, 0.0, 0.0),
                                               initial_v=tuple(v0)))
    for _ in range(300):
        state = sim.step([])
    distance = 0.25 / (2 * mu * G)  # |v0|^2 / (2 mu g)
    np.testing.assert_allclose(state.q, distance * np.r_[0.6, 0.8, 0.0], atol=2e-6)
    np.testing.assert_allclose(state.v, 0.0, atol=1e-9)


# -- joint limits ----------------------------------------------------------------------------

def pendulum_momentum(sim, q, v):
    """
    Angular momentum of the horizontal double pendulum about the shoulder axis, [M(q) v]_0.

    The internal stop impulse and gravity (vertical axes) cannot change it.
    """
    import pinocchio as pin
    model = sim.robot.model
    mass = pin.crba(model, sim.robot.create_data(), np.asarray(q, float))
    return float((np.triu(mass) + np.triu(mass, 1).T)[0] @ v)


def elbow_into_its_stop(integrator, dt=1e-3, periods=500):
    sim = Simulator(horizontal_double_pendulum(elbow_upper=0.0),
                    SimConfig(integrator=integrator, contact_frames=(), dt=dt,
                              control_period=1e-3))
    state = sim.reset([0.0, -0.5], [0.0, 3.0])
    h0 = pendulum_momentum(sim, state.q, state.v)
    states = [sim.step([0.0, 0.0]) for _ in range(periods)]
    return sim, h0, states


@pytest.mark.parametrize('integrator', INTEGRATORS)
def test_joint_stop_is_a_plastic_impact(integrator):
    """
    The elbow swings into its stop at 0 (links in line).

    It never passes it by more than 1e-6 rad and stops dead (plastic: velocity 0 after, and it
    stays, the links being in line).
    """
    _, _, states = elbow_into_its_stop(integrator)
    assert max(s.q[1] for s in states) <= 1e-6
    assert states[-1].q[1] == pytest.approx(0.0, abs=1e-6)
    assert abs(states[-1].v[1]) < 1e-9


def test_event_driven_joint_stop_conserves_angular_momentum():
    sim, h0, states = elbow_into_its_stop('event')
    assert pendulum_momentum(sim, states[-1].q, states[-1].v) == pytest.approx(h0, rel=1e-9)


def test_timestepping_joint_stop_step_satisfies_its_discrete_impact_law():
    """
    The Moreau-Jean impact step matches its defining equation.

    That equation is M(q_M) (v+ - v) = -dt h(q_M, v) + W^T Lambda with the midpoint q_M: the
    shoulder row (no constraint acts on it) holds to rounding, the elbow row is the stop impulse
    Lambda >= 0, and the elbow ends at rest (plastic).
    """
    import pinocchio as pin
    sim = Simulator(horizontal_double_pendulum(elbow_upper=0.0), SimConfig(contact_frames=()))
    model, data = sim.robot.model, sim.robot.create_data()
    q, v, dt = np.array([0.0, -0.5]), np.array([0.0, 3.0]), 1e-3
    zero = np.zeros(2)
    for _ in range(1000):
        q_next, v_next, _ = sim.integrator.step(q, v, zero, dt)
        if v_next[1] < 0.5 * v[1]:
            break  # the impact step
        q, v = q_next, v_next
    else:
        pytest.fail('the elbow never reached its stop')
    q_mid = q + 0.5 * dt * v
    mass = pin.crba(model, data, q_mid)
    mass = np.triu(mass) + np.triu(mass, 1).T
    bias = pin.rnea(model, data, q_mid, v, zero)
    impulse = mass @ (v_next - v) + dt * bias
    momentum = abs(mass[0] @ v)
    assert abs(impulse[0]) <= 1e-12 * momentum
    assert impulse[1] < 0.0                  # the upper stop pushes the elbow back (-e_1 row)
    assert abs(v_next[1]) < 1e-12


def test_timestepping_joint_stop_momentum_error_is_first_order_in_dt():
    """
    The midpoint step's error against the continuous impact law is first order in dt.

    The continuous law conserves angular momentum; halving dt halves the error (ratio within 10 %
    of 2).
    """
    errors = []
    for dt in (1e-3, 5e-4):
        sim, h0, states = elbow_into_its_stop('timestepping', dt=dt)
        errors.append(abs(pendulum_momentum(sim, states[-1].q, states[-1].v) - h0) / abs(h0))
    assert errors[0] > 1e-6                  # the O(dt) error is there ...
    assert errors[0] / errors[1] == pytest.approx(2.0, rel=0.1)   # ... and first order


def test_joint_limits_can_be_switched_off():
    sim = Simulator(horizontal_double_pendulum(elbow_upper=0.5),
                    SimConfig(contact_frames=(), joint_limits=False))
    state = sim.reset([0.0, 0.0], [0.0, 3.0])
    for _ in range(500):
        state = sim.step([0.0, 0.0])
    assert state.q[1] > 0.5


# -- rimless wheel (Coleman, Chatterjee & Ruina 1997) -----------------------------------------

SPOKES = 8
ALPHA = math.pi / SPOKES          # half the angle between spokes
GYRATION, LENGTH, MASS = 0.3, 1.0, 1.0


def wheel_fixed_point(beta):
    """
    Post-impact angular speed of steady rolling down a slope beta (rad).

    Impact on the new spoke: angular momentum about its tip is conserved,
    (I + m l^2 cos 2 alpha) w- = (I + m l^2) w+, so w+ = eta w- with
    eta = (cos 2 alpha + r^2/l^2) / (1 + r^2/l^2) (I = m r^2). Stance: an inverted pendulum about
    the tip from (beta - alpha) to (beta + alpha) off the vertical (the slope normal is tilted
    by beta downhill), so w-^2 = w+^2 + (2 m g l / I_foot)(cos(beta - alpha) - cos(beta + alpha)),
    I_foot = I + m l^2. Fixed point: w+^2 = eta^2 K / (1 - eta^2) with K the bracket term.
    """
    ratio = (GYRATION / LENGTH) ** 2
    eta = (math.cos(2 * ALPHA) + ratio) / (1 + ratio)
    i_foot = MASS * GYRATION ** 2 + MASS * LENGTH ** 2
    gain = 2 * MASS * G * LENGTH / i_foot * (math.cos(beta - ALPHA) - math.cos(beta + ALPHA))
    return math.sqrt(eta * eta * gain / (1 - eta * eta)), 2 * MASS * G * LENGTH / i_foot


def wheel_run(integrator, beta, seconds, omega0=1.5, dt=2e-4):
    # spoke 0 on the ground at the slope normal, rolling downhill (+x) at omega0
    q = np.array([LENGTH * math.sin(beta), LENGTH * math.cos(beta), -beta])
    v = np.array([LENGTH * omega0 * math.cos(beta), -LENGTH * omega0 * math.sin(beta), omega0])
    sim = Simulator(rimless_wheel(MASS, GYRATION, LENGTH, SPOKES),
                    SimConfig(integrator=integrator, dt=dt, control_period=1e-3,
                              contact_frames=tuple(f'spoke{k}' for k in range(SPOKES)),
                              terrain='slope', slope_deg=-math.degrees(beta),
                              initial_q=tuple(q), initial_v=tuple(v)))
    state = sim.state
    for _ in range(int(round(seconds / 1e-3))):
        state = sim.step([])
    return sim, state


def post_impact_equivalent_speed(state, beta, gain):
    """
    w+ of the current stance from energy.

    The stance spoke at angle theta off the vertical (hub downhill of the tip > 0) has w+^2 = w^2 +
    gain (cos theta - cos(beta - alpha)).
    """
    pitch, omega = state.q[2], state.v[2]
    k = int(np.argmin(state.foot_positions[:, 2] - (-math.tan(beta) * state.foot_positions[:, 0])))
    theta = math.remainder(pitch + 2 * math.pi * k / SPOKES, 2 * math.pi)
    return math.sqrt(omega * omega + gain * (math.cos(theta) - math.cos(beta - ALPHA)))


@pytest.mark.parametrize('integrator', INTEGRATORS)
def test_rimless_wheel_settles_on_the_analytic_limit_cycle(integrator):
    """
    After 8 s (about 15 spokes) the post-impact speed is the fixed point.

    Event-driven: exact impacts, so only the geometric approach to the cycle is left (1e-4).
    Time-stepping: the impact acts at a step midpoint instead of the touchdown instant, an O(dt)
    error relative to the stance time 2 alpha / omega ~ 0.5 s, so the tolerance is dt / 0.5 s =
    2e-3.
    """
    beta, dt = 0.15, 1e-3
    expected, gain = wheel_fixed_point(beta)
    sim, state = wheel_run(integrator, beta, seconds=8.0, dt=dt)
    assert state.unconverged_steps == 0
    measured = post_impact_equivalent_speed(state, beta, gain)
    stance_time = 2 * ALPHA / expected
    tolerance = {'event': 1e-4, 'timestepping': dt / stance_time}[integrator]
    assert measured == pytest.approx(expected, rel=tolerance)


@pytest.mark.parametrize('integrator', INTEGRATORS)
def test_rimless_wheel_on_a_too_shallow_slope_comes_to_rest(integrator):
    """
    Rocking between two spokes is a Zeno sequence that both integrators stop.

    Time-stepping stops it by construction, the event-driven integrator by its accumulation rule
    (docs/physics.md).
    """
    beta = 0.02
    expected, gain = wheel_fixed_point(beta)
    # rolling on needs the post-impact energy to carry the hub over the vertical
    assert expected ** 2 < gain * (1 - math.cos(ALPHA - beta))
    sim, state = wheel_run(integrator, beta, seconds=5.0, omega0=1.0, dt=1e-3)
    assert np.abs(state.v).max() < 1e-6
    assert state.unconverged_steps == 0


def test_event_driven_bouncing_ball_stops_at_the_accumulation_time():
    """
    A bouncing point mass comes to rest at the Zeno time.

    Dropped from h with restitution e, it bounces infinitely often before
    t_inf = t1 (1 + 2 e / (1 - e)), t1 = sqrt(2 h / g) (a Zeno sequence). With the accumulation
    rule it rests on the ground after finitely many impacts, at t_inf less the skipped tail of
    flights, 2 u_acc / (g (1 - e)) < 0.1 ms (u_acc the accumulation speed).
    """
    h, e = 0.1, 0.5
    sim = Simulator(point_mass_3d(), SimConfig(integrator='event', restitution=e,
                                               initial_q=(0.0, 0.0, h)))
    t1 = math.sqrt(2.0 * h / G)
    t_inf = t1 * (1.0 + 2.0 * e / (1.0 - e))
    impacts, closed_at = 0, None
    for _ in range(600):
        state = sim.step([])
        impacts += state.events.count('touchdown')
        if closed_at is None and sim.integrator.mode == ['stick']:
            closed_at = state.t
    assert impacts < 60
    # the control period (1 ms) resolves the closing time
    assert closed_at == pytest.approx(t_inf, abs=1e-3 + 1e-4)
    assert state.in_contact and abs(state.v[2]) < 1e-9
    assert state.contact_forces[0, 2] == pytest.approx(2.0 * G, rel=1e-9)


@pytest.mark.parametrize('integrator', INTEGRATORS)
def test_frictionless_contact_at_rest_carries_the_weight(integrator):
    """
    A frictionless point mass dropped 1 cm rests on the ground with force m g.

    With mu = 0 the event integrator divided by a zero friction force to find a sliding direction:
    NaN.
    """
    sim = Simulator(point_mass_3d(), SimConfig(integrator=integrator, friction=0.0,
                                               initial_q=(0.0, 0.0, 0.01)))
    for _ in range(100):
        state = sim.step([])
    assert state.in_contact and np.all(np.isfinite(state.q))
    assert abs(state.q[2]) < 1e-9 and np.abs(state.v).max() < 1e-6
    np.testing.assert_allclose(state.contact_forces[0], (0.0, 0.0, 2.0 * G), atol=1e-6)
