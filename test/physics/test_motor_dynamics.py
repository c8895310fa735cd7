# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
Motor options of the simulator (docs/physics.md, "Motors").

The back-EMF torque-speed limit (``torque_saturation`` with ``motor_supply_voltage_v``) and the
rotor inertia reflected through the gear (``motor_dynamics``: pinocchio armature G² J_rotor),
checked against the formulas, Ding & Ramos' published torque-speed polytope, a released link's
angular acceleration, and the compiled step against the generic one.
"""
import math

from conftest import REPO, URDF_XACRO
from dodo_sim.physics.contact import ContactParams
from dodo_sim.physics.timestepping import MoreauJeanIntegrator, TimeSteppingParams
from dodo_sim.simulator import SimConfig, Simulator
import numpy as np
import pinocchio as pin
import pytest

BOOM = REPO / 'urdf' / 'boom_leg.urdf.xacro'
BOOM_Q = (0.0, -0.1, -math.pi / 3.0, math.pi / 2.0)
HOPPER_Q = (0.0, 1.3, 0.3, -0.6)
# Ding & Ramos' hip motor (get_params.m): gear, torque constant, back-EMF constant, winding
# resistance; their 12 V supply
G, KT, KE, R, V = 26.9, 0.0135, 0.0186, 1.3, 12.0
NO_LOAD_SPEED = V / (KE * G)          # 23.98 rad/s


def expected_cap(speed, voltage=V, peak=math.inf):
    """Return the largest |torque| along the motion (motoring), N*m."""
    return min(max(G * KT * (voltage - KE * G * abs(speed)) / R, 0.0), peak)


def expected_braking_cap(speed, voltage=V, peak=math.inf):
    """Return the largest |torque| against the motion (braking), N*m."""
    return min(max(G * KT * (voltage + KE * G * abs(speed)) / R, 0.0), peak)


def applied_hip_torque(robot, speed, command, **motor):
    """
    Return the hip torque the simulator applies in the first step.

    The hip turns at ``speed``.
    """
    urdf, q = (URDF_XACRO, HOPPER_Q) if robot == 'hopper' else (BOOM, BOOM_Q)
    cfg = SimConfig(initial_q=q, initial_v=(0.0, 0.0, speed, 0.0), torque_saturation=True,
                    **motor)
    sim = Simulator(urdf, cfg)
    return float(sim.step([command, 0.0]).tau_applied[0])


@pytest.mark.parametrize('robot', ['hopper', 'boom'])
@pytest.mark.parametrize('speed', [0.0, 5.0, -12.0, 20.0, 0.999 * NO_LOAD_SPEED,
                                   NO_LOAD_SPEED, 1.5 * NO_LOAD_SPEED])
def test_back_emf_caps_the_torque_at_speed_as_the_formula_says(robot, speed):
    """
    Along the motion |tau| <= clip(G K_t (V - K_e G |qdot|) / R, 0, peak).

    This is 0 at and above the no-load speed V / (K_e G). Against the motion
    |tau| <= clip(G K_t (V + K_e G |qdot|) / R, 0, peak).
    """
    motor = {'motor_supply_voltage_v': (V,), 'motor_peak_torque_nm': (50.0,)}
    along = 1.0 if speed >= 0.0 else -1.0
    motoring = applied_hip_torque(robot, speed, along * 100.0, **motor)
    assert motoring == pytest.approx(along * expected_cap(speed), rel=1e-12, abs=1e-12)
    if abs(speed) >= NO_LOAD_SPEED:
        assert motoring == 0.0
    braking = applied_hip_torque(robot, speed, -along * 100.0, **motor)
    assert braking == pytest.approx(-along * expected_braking_cap(speed), rel=1e-12)
    # a command inside the cap passes unchanged
    small = 0.5 * expected_cap(speed)
    assert applied_hip_torque(robot, speed, small, **motor) == small


def test_the_peak_torque_caps_below_the_back_emf_limit():
    """At 24 V the back-EMF line starts at 6.70 N*m at rest; the peak (stall) torque caps it."""
    motor = {'motor_supply_voltage_v': (2 * V,), 'motor_peak_torque_nm': (4.3578, 4.6656)}
    assert expected_cap(0.0, 2 * V) > 6.0
    assert applied_hip_torque('boom', 0.0, 100.0, **motor) == pytest.approx(4.3578, abs=1e-12)
    assert applied_hip_torque('boom', 30.0, 100.0, **motor) == pytest.approx(
        expected_cap(30.0, 2 * V), rel=1e-12)


def test_the_default_limit_matches_ding_and_ramos_torque_speed_polytope():
    """
    The default limit matches Ding & Ramos' torque-speed polytope.

    Their hip polytope (get_params.m), |0.1391 w + tau| <= 3.3356 N*m, |tau| <= 4.3578 N*m, is
    compared with the bounds from their motor constants and the URDF's stall torque: within 1 % of
    the stall torque in both quadrants from rest to the no-load speed (their line's offset and
    slope differ from G K_t V / R = 3.352 and G^2 K_t K_e / R = 0.1398 by 0.5 %).
    """
    for speed in np.linspace(0.0, 23.0, 24):
        upper = min(3.3356 - 0.1391 * speed, 4.3578)
        lower = max(-3.3356 - 0.1391 * speed, -4.3578)
        ours = [applied_hip_torque('boom', speed, command, motor_supply_voltage_v=(V,))
                for command in (100.0, -100.0)]
        tolerance = 0.01 * 4.3578
        assert abs(ours[0] - upper) <= tolerance and abs(ours[1] - lower) <= tolerance, (
            speed, ours, upper, lower)


def released_link_urdf(mass=2.0, com_x=0.4, iyy=0.03) -> str:
    """
    One link on an actuated revolute joint about y, 2 m above the ground; its tip frame.

    A passive slider along y carries the joint: it is decoupled from the swing (M is diagonal) and
    gives the model two joints (the engine's planarity check indexes the joint jacobian as a
    matrix, which a one-joint model does not give).
    """
    return f"""<robot name="link">
  <link name="world"/><link name="carriage"/>
  <joint name="slide_y" type="prismatic"><parent link="world"/><child link="carriage"/>
    <axis xyz="0 1 0"/><limit lower="-1" upper="1" effort="0" velocity="50"/></joint>
  <link name="arm"><inertial><origin xyz="{com_x} 0 0"/><mass value="{mass}"/>
    <inertia ixx="{iyy}" iyy="{iyy}" izz="{iyy}" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <joint name="shoulder" type="revolute"><parent link="carriage"/><child link="arm"/>
    <origin xyz="0 0 2"/><axis xyz="0 1 0"/>
    <limit lower="-3" upper="3" effort="10" velocity="50"/></joint>
  <link name="tip"/><joint name="tip_joint" type="fixed"><parent link="arm"/><child link="tip"/>
    <origin xyz="0.5 0 0"/></joint>
</robot>"""


@pytest.mark.parametrize('integrator', ['timestepping', 'event'])
@pytest.mark.parametrize('rotor_inertia', [7e-6, 1e-4])
def test_armature_changes_a_released_links_acceleration_as_the_inertia_says(integrator,
                                                                            rotor_inertia):
    """
    A horizontal link released from rest: qddot = m g l / (I_c + m l^2 + G^2 J_rotor).

    This holds with and without the rotor (the gravity torque is stationary at the horizontal, so
    one step measures qddot(0) to ~1e-11).
    """
    mass, com_x, iyy, dt = 2.0, 0.4, 0.03, 1e-3
    g = 9.81
    link_inertia = iyy + mass * com_x ** 2
    measured = {}
    for motor in (False, True):
        sim = Simulator(released_link_urdf(mass, com_x, iyy),
                        SimConfig(integrator=integrator, contact_frames=('tip',), dt=dt,
                                  control_period=dt, initial_q=(0.0, 0.0), motor_dynamics=motor,
                                  motor_gear_ratio=(G,),
                                  motor_rotor_inertia_kgm2=(rotor_inertia,)))
        g = abs(float(sim.robot.model.gravity.linear[2]))
        assert sim.actuated_joint_names == ('shoulder',)
        state = sim.step([0.0])
        assert state.v[0] == 0.0                       # the slider stays at rest
        measured[motor] = float(state.v[1]) / dt
    rotor = G * G * rotor_inertia
    assert measured[False] == pytest.approx(mass * g * com_x / link_inertia, rel=1e-9)
    assert measured[True] == pytest.approx(mass * g * com_x / (link_inertia + rotor), rel=1e-9)
    assert measured[False] / measured[True] == pytest.approx(1.0 + rotor / link_inertia,
                                                             rel=1e-9)


def test_armature_sits_on_the_actuated_joints_only():
    sim = Simulator(BOOM, SimConfig(initial_q=BOOM_Q, motor_dynamics=True,
                                    motor_gear_ratio=(26.9, 28.8)))
    np.testing.assert_allclose(sim.robot.model.armature,
                               [0.0, 0.0, 26.9 ** 2 * 7e-6, 28.8 ** 2 * 7e-6], rtol=1e-15)
    with pytest.raises(ValueError, match='motor_gear_ratio'):
        Simulator(BOOM, SimConfig(initial_q=BOOM_Q, motor_dynamics=True,
                                  motor_gear_ratio=(1.0, 2.0, 3.0)))


def test_compiled_mass_matrix_includes_the_armature():
    pytest.importorskip('numba')
    from dodo_sim.physics import fast
    sim = Simulator(URDF_XACRO, SimConfig(initial_q=HOPPER_Q, motor_dynamics=True))
    model, data = sim.robot.model, sim.robot.create_data()
    assert sim.integrator.packed is not None and model.armature[2] > 0.0
    rng = np.random.default_rng(3)
    for _ in range(10):
        q = rng.normal(size=model.nq)
        mass, _ = fast.dynamics(sim.integrator.packed, q, rng.normal(size=model.nv))
        reference = pin.crba(model, data, q)
        reference = np.triu(reference) + np.triu(reference, 1).T
        np.testing.assert_allclose(mass, reference, rtol=0, atol=1e-12)


def test_compiled_run_with_motors_equals_the_generic_one():
    """
    A compiled run with motors equals the generic one.

    Over 0.6 s of the PD-held hopper dropped on the ground, with rotor inertia and the back-EMF
    limit (the PD saturates it), the Simulator's compiled lane and the generic step agree.
    """
    pytest.importorskip('numba')
    runs = []
    for compiled in (True, False):
        sim = Simulator(URDF_XACRO, SimConfig(
            initial_q=(0.0, 1.1, 0.3, -0.6), motor_dynamics=True, torque_saturation=True,
            motor_supply_voltage_v=(V,), motor_gear_ratio=(G,)))
        if compiled:
            assert sim._fast is not None
        else:
            sim.integrator = MoreauJeanIntegrator(sim.robot, sim.terrain, ContactParams(),
                                                  TimeSteppingParams(compiled=False))
            sim._fast = None
        state = sim.reset()
        qs, saturated = [], 0
        for _ in range(600):
            command = [300.0 * (0.3 - state.q[2]) - 20.0 * state.v[2],
                       300.0 * (-0.6 - state.q[3]) - 20.0 * state.v[3]]
            state = sim.step(command)
            saturated += abs(state.tau_applied[0]) < abs(command[0]) - 1e-9
            qs.append(state.q)
        runs.append((np.array(qs), state, saturated))
    (qa, sa, na), (qb, sb, nb) = runs
    assert sa.in_contact and na > 10 and na == nb
    np.testing.assert_allclose(qa, qb, rtol=0, atol=1e-9)
