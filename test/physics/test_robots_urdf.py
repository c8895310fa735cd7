# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
The boom-mounted leg and the Kneed Walker xacro descriptions, checked with xacro + pinocchio only.

Like ros2_control_demos' URDF tests: each description processes (defaults and changed args),
loads, has the intended joints, actuation, limits, masses, frames and geometry. Forward
kinematics are checked against formulas written here by hand and against the references'
own kinematics (Ding & Ramos' gen_dyn_boom_leg.m transforms; As & Mailhot's KneedWalker.GetPos).
The engine is being rewritten, so nothing here goes through dodo_sim.

Bad args: pinocchio accepts e.g. a negative mass (test_pinocchio_alone_accepts_a_negative_mass),
so each xacro checks its own args and stops with xacro.fatal naming the arg.
"""
import functools
import math
from pathlib import Path
import xml.etree.ElementTree as ET

import numpy as np
import pinocchio as pin
import pytest
import xacro

URDF_DIR = Path(__file__).resolve().parents[2] / 'urdf'
BOOM_LEG = URDF_DIR / 'boom_leg.urdf.xacro'
WALKER = URDF_DIR / 'kneed_walker.urdf.xacro'
ROBOTS = {'boom_leg': BOOM_LEG, 'kneed_walker': WALKER}

# Ding & Ramos get_params.m (the boom leg's defaults)
HB, LB, DB, LH = 0.1965, 0.556, 0.048, 0.096
L_SHANK = 0.163016            # default shank_length_m: knee-to-toe chord of their bent shank
BOOM_MASSES = {'boom_yaw': 0.268, 'boom_pitch': 2.365, 'hip': 0.656, 'knee': 0.149}
# As & Mailhot KneedWalker() defaults
TORSO_M, TORSO_L, THIGH_M, THIGH_L, SHANK_M, SHANK_L = 5.0, 0.4, 0.3, 0.45, 0.3, 0.45
WALKER_JOINTS = ['base_x', 'base_z', 'base_pitch', 'left_hip', 'left_knee', 'right_hip',
                 'right_knee']


# ---------------------------------------------------------------------------------------------
# helpers

@functools.lru_cache(maxsize=None)
def _xml(path: Path, args: tuple) -> str:
    return xacro.process_file(str(path), mappings={k: str(v) for k, v in args}).toxml()


def urdf_xml(path: Path, **args) -> str:
    """URDF text of a xacro file with the given xacro args."""
    return _xml(path, tuple(sorted(args.items())))


def load(path: Path, **args) -> pin.Model:
    return pin.buildModelFromXML(urdf_xml(path, **args))


def movable_joints(xml: str) -> list:
    """(name, type, axis, limit element) of the non-fixed joints, in URDF order."""
    rows = []
    for joint in ET.fromstring(xml).findall('joint'):
        if joint.get('type') == 'fixed':
            continue
        axis = tuple(float(a) for a in joint.find('axis').get('xyz').split())
        rows.append((joint.get('name'), joint.get('type'), axis, joint.find('limit')))
    return rows


def config(model: pin.Model, **angles) -> np.ndarray:
    """Return q from joint values by name (continuous joints given by their angle), others zero."""
    q = pin.neutral(model)
    for name, value in angles.items():
        jid = model.getJointId(name)
        assert jid < model.njoints, name
        i = model.idx_qs[jid]
        if model.nqs[jid] == 2:         # continuous joint: (cos, sin)
            q[i:i + 2] = math.cos(value), math.sin(value)
        else:
            q[i] = value
    return q


def positions(model: pin.Model, q: np.ndarray, *frames: str) -> list:
    data = model.createData()
    pin.framesForwardKinematics(model, data, q)
    out = []
    for name in frames:
        assert model.existFrame(name), name
        out.append(data.oMf[model.getFrameId(name)].translation.copy())
    return out


def random_configs(model: pin.Model, count: int, seed: int) -> list:
    """
    Return random configurations with every bounded joint inside its limits.

    Continuous joints may take any angle.
    """
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(count):
        angles = {}
        for jid in range(1, model.njoints):
            i, iv = model.idx_qs[jid], model.idx_vs[jid]
            if model.nqs[jid] == 2:
                angles[model.names[jid]] = rng.uniform(-math.pi, math.pi)
            else:
                lo, hi = model.lowerPositionLimit[i], model.upperPositionLimit[i]
                lo, hi = max(lo, -2.0), min(hi, 2.0)      # the base sliders are +-100 m
                angles[model.names[jid]] = rng.uniform(lo, hi)
            assert model.nvs[jid] == 1 and iv >= 0
        out.append(config(model, **angles))
    return out


def rx(t):
    return np.array([[1, 0, 0], [0, math.cos(t), -math.sin(t)], [0, math.sin(t), math.cos(t)]])


def ry(t):
    return np.array([[math.cos(t), 0, math.sin(t)], [0, 1, 0], [-math.sin(t), 0, math.cos(t)]])


def rz(t):
    return np.array([[math.cos(t), -math.sin(t), 0], [math.sin(t), math.cos(t), 0], [0, 0, 1]])


# ---------------------------------------------------------------------------------------------
# processing and structure

@pytest.mark.parametrize('robot, args, nq, nv', [
    ('boom_leg', {}, 5, 4),
    ('boom_leg', {'boom_radius_m': 0.7, 'boom_offset_m': 0.0, 'thigh_mass_kg': 1.0}, 5, 4),
    ('kneed_walker', {}, 8, 7),
    ('kneed_walker', {'torso_mass_kg': 8, 'thigh_length_m': 0.5, 'shank_inertia_kgm2': 0.01},
     8, 7),
])
def test_xacro_processes_and_loads_in_pinocchio(robot, args, nq, nv):
    xml = urdf_xml(ROBOTS[robot], **args)
    assert ET.fromstring(xml).get('name') == robot
    model = pin.buildModelFromXML(xml)
    assert (model.nq, model.nv) == (nq, nv)


def test_boom_leg_joints_names_order_types_axes():
    xml = urdf_xml(BOOM_LEG)
    assert [row[:3] for row in movable_joints(xml)] == [
        ('boom_yaw', 'continuous', (0, 0, 1)),
        ('boom_pitch', 'revolute', (0, 1, 0)),
        ('hip', 'revolute', (-1, 0, 0)),
        ('knee', 'revolute', (-1, 0, 0)),
    ]
    model = pin.buildModelFromXML(xml)
    assert list(model.names)[1:] == ['boom_yaw', 'boom_pitch', 'hip', 'knee']


def test_walker_joints_names_order_types_axes():
    xml = urdf_xml(WALKER)
    y = (0, 1, 0)
    assert [row[:3] for row in movable_joints(xml)] == [
        ('base_x', 'prismatic', (1, 0, 0)),
        ('base_z', 'prismatic', (0, 0, 1)),
        ('base_pitch', 'continuous', y),
        ('left_hip', 'revolute', y), ('left_knee', 'revolute', y),
        ('right_hip', 'revolute', y), ('right_knee', 'revolute', y),
    ]
    assert list(pin.buildModelFromXML(xml).names)[1:] == WALKER_JOINTS


@pytest.mark.parametrize('robot, actuated', [
    ('boom_leg', ['hip', 'knee']),
    ('kneed_walker', ['left_hip', 'left_knee', 'right_hip', 'right_knee']),
])
def test_actuated_joints_are_those_with_effort(robot, actuated):
    xml = urdf_xml(ROBOTS[robot])
    assert [name for name, _, _, limit in movable_joints(xml)
            if float(limit.get('effort')) > 0] == actuated
    # pinocchio reads the same: passive joints 0 (a continuous joint without a
    # <limit> would be inf)
    model = pin.buildModelFromXML(xml)
    for jid in range(1, model.njoints):
        effort = model.effortLimit[model.idx_vs[jid]]
        assert (effort > 0) == (model.names[jid] in actuated), model.names[jid]


@pytest.mark.parametrize('robot, args, expected', [
    ('boom_leg', {}, {'hip': (4.3578, 23.98), 'knee': (4.6656, 22.40)}),
    ('boom_leg', {'hip_effort_nm': 7, 'knee_effort_nm': 9, 'hip_velocity_rad_s': 11,
                  'knee_velocity_rad_s': 13}, {'hip': (7, 11), 'knee': (9, 13)}),
    ('kneed_walker', {}, {'left_hip': (20, 20), 'left_knee': (20, 20),
                          'right_hip': (20, 20), 'right_knee': (20, 20)}),
    ('kneed_walker', {'hip_effort_nm': 12, 'knee_effort_nm': 8, 'hip_velocity_rad_s': 6,
                      'knee_velocity_rad_s': 5},
     {'left_hip': (12, 6), 'left_knee': (8, 5), 'right_hip': (12, 6), 'right_knee': (8, 5)}),
])
def test_motor_effort_and_velocity_limits_equal_the_args(robot, args, expected):
    model = load(ROBOTS[robot], **args)
    for name, (effort, velocity) in expected.items():
        iv = model.idx_vs[model.getJointId(name)]
        assert (
            model.effortLimit[iv],
            model.velocityLimit[iv]) == pytest.approx(
            (effort,
             velocity))


@pytest.mark.parametrize('args, knee, hip', [
    ({}, (0.0, 2.5), (-1.5708, 1.5708)),
    ({'knee_upper_rad': 2.0, 'hip_lower_rad': -1.0, 'hip_upper_rad': 1.2},
     (0.0, 2.0), (-1.0, 1.2)),
])
def test_walker_knee_stops_and_hip_ranges_are_urdf_limits(args, knee, hip):
    model = load(WALKER, **args)
    for side in ('left', 'right'):
        for joint, (lo, hi) in ((f'{side}_knee', knee), (f'{side}_hip', hip)):
            i = model.idx_qs[model.getJointId(joint)]
            assert (model.lowerPositionLimit[i], model.upperPositionLimit[i]) == \
                pytest.approx((lo, hi)), joint


@pytest.mark.parametrize('args, pitch', [
    ({}, (-0.6, 0.3)),
    ({'boom_pitch_lower_rad': -0.4, 'boom_pitch_upper_rad': 0.2}, (-0.4, 0.2)),
])
def test_boom_pitch_range_is_a_urdf_limit(args, pitch):
    model = load(BOOM_LEG, **args)
    i = model.idx_qs[model.getJointId('boom_pitch')]
    assert (model.lowerPositionLimit[i], model.upperPositionLimit[i]) == pytest.approx(pitch)


@pytest.mark.parametrize('robot, continuous', [('boom_leg', 'boom_yaw'),
                                               ('kneed_walker', 'base_pitch')])
def test_continuous_joint_has_no_position_limits(robot, continuous):
    xml = urdf_xml(ROBOTS[robot])
    limits = {name: limit for name, kind, _, limit in movable_joints(xml) if kind == 'continuous'}
    assert list(limits) == [continuous]
    assert limits[continuous].get('lower') is None and limits[continuous].get('upper') is None
    model = pin.buildModelFromXML(xml)
    assert model.nqs[model.getJointId(continuous)] == 2     # an unbounded (cos, sin) joint


# ---------------------------------------------------------------------------------------------
# mass properties

@pytest.mark.parametrize('robot, args, masses', [
    ('boom_leg', {}, BOOM_MASSES),
    ('boom_leg', {'yoke_mass_kg': 0.5, 'boom_mass_kg': 3.0, 'thigh_mass_kg': 1.1,
                  'shank_mass_kg': 0.4},
     {'boom_yaw': 0.5, 'boom_pitch': 3.0, 'hip': 1.1, 'knee': 0.4}),
    ('kneed_walker', {}, dict(zip(WALKER_JOINTS, [0, 0, TORSO_M] + [THIGH_M, SHANK_M] * 2))),
    ('kneed_walker', {'torso_mass_kg': 8.0, 'thigh_mass_kg': 0.7, 'shank_mass_kg': 0.4},
     dict(zip(WALKER_JOINTS, [0, 0, 8.0, 0.7, 0.4, 0.7, 0.4]))),
])
def test_link_masses_and_total_mass_equal_the_args(robot, args, masses):
    model = load(ROBOTS[robot], **args)
    # each joint carries the link below it (fixed, massless foot links merged in)
    assert {model.names[j]: model.inertias[j].mass for j in range(1, model.njoints)} == \
        pytest.approx(masses)
    assert pin.computeTotalMass(model) == pytest.approx(sum(masses.values()))


def test_boom_leg_total_mass_is_ding_ramos():
    assert pin.computeTotalMass(load(BOOM_LEG)) == pytest.approx(0.268 + 2.365 + 0.656 + 0.149)


def test_boom_leg_com_and_inertia_tensor_equal_the_args():
    args = {'thigh_com_x_m': 0.01, 'thigh_com_y_m': -0.02, 'thigh_com_z_m': -0.03,
            'thigh_ixx_kgm2': 0.002, 'thigh_iyy_kgm2': 0.003, 'thigh_izz_kgm2': 0.0025,
            'thigh_ixy_kgm2': 0.0001, 'thigh_ixz_kgm2': -0.0002, 'thigh_iyz_kgm2': 0.0003}
    body = load(BOOM_LEG, **args).inertias[3]          # the hip joint carries the thigh
    np.testing.assert_allclose(body.lever, [0.01, -0.02, -0.03], atol=1e-15)
    np.testing.assert_allclose(body.inertia, [[0.002, 0.0001, -0.0002],
                                              [0.0001, 0.003, 0.0003],
                                              [-0.0002, 0.0003, 0.0025]], atol=1e-15)


def test_boom_leg_default_mass_properties_are_ding_ramos_moved_to_the_link_frames():
    model = load(BOOM_LEG)
    lever = {model.names[j]: model.inertias[j].lever for j in range(1, model.njoints)}
    # get_params.m: boom CoM measured from the hip, thigh from the knee, shank from the toe
    np.testing.assert_allclose(lever['boom_pitch'], [LB - 0.50195830, DB - 0.03678363, 0.00001342],
                               atol=1e-8)
    np.testing.assert_allclose(lever['hip'], [0.04825821, 0.00027269, 0.07708701 - LH], atol=1e-8)
    np.testing.assert_allclose(lever['knee'], [0.00207136, 0.02086667, 0.14511501 - L_SHANK],
                               atol=1e-8)
    np.testing.assert_allclose(model.inertias[2].inertia[1, 1], 0.30208952)   # boom Jyy2


@pytest.mark.parametrize('args, torso, thigh, shank', [
    ({}, TORSO_M * TORSO_L ** 2 / 12, THIGH_M * THIGH_L ** 2 / 12, SHANK_M * SHANK_L ** 2 / 12),
    # an empty inertia follows the mass and length given ...
    ({'thigh_mass_kg': 0.6, 'thigh_length_m': 0.5}, TORSO_M * TORSO_L ** 2 / 12, 0.6 * 0.25 / 12,
     SHANK_M * SHANK_L ** 2 / 12),
    # ... an explicit one is used as it is
    ({'torso_inertia_kgm2': 0.2, 'shank_inertia_kgm2': 0.01}, 0.2, THIGH_M * THIGH_L ** 2 / 12,
     0.01),
])
def test_walker_inplane_inertias_default_to_rods_and_follow_their_args(args, torso, thigh, shank):
    model = load(WALKER, **args)
    iyy = {model.names[j]: model.inertias[j].inertia[1, 1] for j in range(1, model.njoints)}
    assert [iyy['base_pitch'], iyy['left_hip'], iyy['left_knee'], iyy['right_hip'],
            iyy['right_knee']] == pytest.approx([torso, thigh, shank, thigh, shank])


def test_walker_centre_of_mass_follows_the_lengths():
    args = {'torso_length_m': 0.5, 'thigh_length_m': 0.4, 'shank_length_m': 0.35}
    model = load(WALKER, **args)
    data = model.createData()
    x, z, p = 0.2, 0.9, 0.3
    hl, kl, hr, kr = -0.4, 0.6, 0.5, 0.2
    com = pin.centerOfMass(model, data, config(model, base_x=x, base_z=z, base_pitch=p,
                                               left_hip=hl, left_knee=kl,
                                               right_hip=hr, right_knee=kr))
    hip = np.array([x, 0.0, z])

    def down(angle):                      # unit vector of a leg segment at absolute pitch angle
        return np.array([-math.sin(angle), 0.0, -math.cos(angle)])

    torso = hip + 0.25 * np.array([math.sin(p), 0.0, math.cos(p)])
    parts = [(TORSO_M, torso)]
    for h, k in ((hl, kl), (hr, kr)):
        parts.append((THIGH_M, hip + 0.2 * down(p + h)))
        parts.append((SHANK_M, hip + 0.4 * down(p + h) + 0.175 * down(p + h + k)))
    expected = sum(m * r for m, r in parts) / sum(m for m, _ in parts)
    np.testing.assert_allclose(com, expected, atol=1e-12)


@pytest.mark.parametrize('robot', list(ROBOTS))
def test_inertias_are_physically_valid(robot):
    model = load(ROBOTS[robot])
    checked = 0
    for jid in range(1, model.njoints):
        body = model.inertias[jid]
        if body.mass == 0:
            continue
        moments = np.linalg.eigvalsh(body.inertia)
        assert moments.min() > 0, model.names[jid]                          # positive definite
        a, b, c = moments
        assert a + b >= c * (1 - 1e-12) and a + c >= b and b + c >= a, model.names[jid]
        checked += 1
    assert checked == {'boom_leg': 4, 'kneed_walker': 5}[robot]


@pytest.mark.parametrize('robot', list(ROBOTS))
def test_every_moving_subtree_has_mass(robot):
    model = load(ROBOTS[robot])
    data = model.createData()
    pin.computeSubtreeMasses(model, data)
    for jid in range(1, model.njoints):
        assert data.mass[jid] > 0, model.names[jid]


@pytest.mark.parametrize('robot', list(ROBOTS))
def test_mass_matrix_is_positive_definite(robot):
    model = load(ROBOTS[robot])
    data = model.createData()
    for q in random_configs(model, 5, seed=1):
        mass = pin.crba(model, data, q)
        mass = np.triu(mass) + np.triu(mass, 1).T
        assert np.linalg.eigvalsh(mass).min() > 1e-9


# ---------------------------------------------------------------------------------------------
# contact frames and geometry

@pytest.mark.parametrize('robot, feet', [
    ('boom_leg', {'foot': 'shank'}),
    ('kneed_walker', {'left_foot': 'left_shank', 'right_foot': 'right_shank'}),
])
def test_contact_frames_are_massless_links_fixed_at_the_shank_tips(robot, feet):
    root = ET.fromstring(urdf_xml(ROBOTS[robot]))
    links = {link.get('name'): link for link in root.iter('link')}
    for foot, shank in feet.items():
        assert links[foot].find('inertial') is None, foot
        joint = next(j for j in root.findall('joint') if j.find('child').get('link') == foot)
        assert joint.get('type') == 'fixed'
        assert joint.find('parent').get('link') == shank
        assert joint.find('origin').get('rpy') == '0 0 0'
        x, y, z = (float(v) for v in joint.find('origin').get('xyz').split())
        assert x == 0 and y == 0 and z < 0           # straight down the shank, at its tip


@pytest.mark.parametrize('robot, links', [
    ('boom_leg', ['boom_yoke', 'boom', 'thigh', 'shank', 'foot']),
    ('kneed_walker', ['torso', 'left_thigh', 'left_shank', 'left_foot', 'right_thigh',
                      'right_shank', 'right_foot']),
])
def test_visuals_and_collisions_present(robot, links):
    root = ET.fromstring(urdf_xml(ROBOTS[robot]))
    found = {link.get('name'): link for link in root.iter('link')}
    for name in links:
        assert found[name].find('visual/geometry') is not None, name
        assert found[name].find('collision/geometry') is not None, name
    # every link with mass is drawn
    assert {n for n, link in found.items() if link.find('inertial') is not None} <= set(links)


# ---------------------------------------------------------------------------------------------
# boom leg kinematics

@pytest.mark.parametrize('theta', [0.0, 0.7, 2.0, -2.6, 4.0])
def test_boom_leg_foot_lies_on_the_boom_circle(theta):
    radius = 0.7
    model = load(BOOM_LEG, boom_radius_m=radius, boom_offset_m=0.0)
    (foot,) = positions(model, config(model, boom_yaw=theta), 'foot')
    np.testing.assert_allclose(foot, [radius * math.cos(theta), radius * math.sin(theta),
                                      HB - LH - L_SHANK], atol=1e-12)


def test_boom_leg_leg_swings_in_the_plane_tangent_to_the_boom_circle():
    model = load(BOOM_LEG)
    for q in random_configs(model, 10, seed=2):
        data = model.createData()
        pin.framesForwardKinematics(model, data, q)
        boom = data.oMi[model.getJointId('boom_pitch')]      # the boom frame: x along the boom
        for frame in ('knee', 'foot'):
            in_boom = boom.actInv(data.oMf[model.getFrameId(frame)]).translation
            assert in_boom[0] == pytest.approx(LB, abs=1e-12), frame   # radial coordinate fixed


def test_boom_leg_hip_height_follows_boom_pitch():
    model = load(BOOM_LEG)
    for pitch in (-0.5, 0.0, 0.25):
        (hip,) = positions(model, config(model, boom_yaw=1.0, boom_pitch=pitch), 'hip')
        assert hip[2] == pytest.approx(HB - LB * math.sin(pitch), abs=1e-12)   # > 0 tips down


def test_boom_leg_positive_hip_swings_the_foot_backwards():
    """Forward = +y of the boom = the way the hip moves as boom_yaw increases."""
    model = load(BOOM_LEG, boom_offset_m=0.0)
    hip_angle = 0.4
    (foot,) = positions(model, config(model, hip=hip_angle), 'foot')
    leg = LH + L_SHANK
    np.testing.assert_allclose(foot, [LB, -leg * math.sin(hip_angle),
                                      HB - leg * math.cos(hip_angle)], atol=1e-12)


@pytest.mark.parametrize('yaw, pitch, hip, knee', [
    (0.0, 0.0, 0.0, 0.0),
    (0.8, 0.2, -math.pi / 3, math.pi / 2),         # Ding & Ramos' nominal stance posture
    (-2.4, -0.45, 0.9, -1.3),
])
def test_boom_leg_matches_ding_ramos_forward_kinematics(yaw, pitch, hip, knee):
    """Their T01*T12*T23*T3toe with (q1, q2, q3, q4) = (yaw, pitch, -hip, -knee)."""
    def transform(rot, r):
        t = np.eye(4)
        t[:3, :3] = rot
        t[:3, 3] = rot @ np.asarray(r, dtype=float)
        return t

    chord = math.sqrt(0.1545 ** 2 + 0.052 ** 2)      # their L = sqrt(LK^2 + DK^2)
    q1, q2, q3, q4 = yaw, pitch, -hip, -knee
    t02 = transform(rz(q1), [0, 0, HB]) @ transform(ry(q2), [LB, DB, 0])
    t03 = t02 @ transform(rx(q3), [0, 0, -LH])
    t0toe = t03 @ transform(rx(q4), [0, 0, -chord])
    model = load(BOOM_LEG)
    hip_p, knee_p, foot_p = positions(model, config(model, boom_yaw=yaw, boom_pitch=pitch,
                                                    hip=hip, knee=knee), 'hip', 'knee', 'foot')
    np.testing.assert_allclose(hip_p, t02[:3, 3], atol=1e-12)
    np.testing.assert_allclose(knee_p, t03[:3, 3], atol=1e-12)
    np.testing.assert_allclose(foot_p, t0toe[:3, 3], atol=1e-6)   # the default chord: 6 digits


def test_boom_leg_motion_is_not_planar():
    """The foot moves in 3-D: its translation jacobian has full rank, with y and yaw components."""
    model = load(BOOM_LEG)
    data = model.createData()
    foot = model.getFrameId('foot')
    for q in random_configs(model, 5, seed=3):
        jac = pin.computeFrameJacobian(model, data, q, foot, pin.LOCAL_WORLD_ALIGNED)
        assert np.linalg.matrix_rank(jac[:3], tol=1e-6) == 3
        assert np.abs(jac[[1, 3, 5]]).max() > 1e-3


# ---------------------------------------------------------------------------------------------
# Kneed Walker kinematics

def _walker_expected(x, z, p, legs, l_thigh, l_shank):
    hip = np.array([x, 0.0, z])
    out = {'torso': hip}
    for side, (h, k) in legs.items():
        knee = hip + l_thigh * np.array([-math.sin(p + h), 0.0, -math.cos(p + h)])
        out[f'{side}_knee'] = knee
        out[f'{side}_foot'] = knee + l_shank * np.array([-math.sin(p + h + k), 0.0,
                                                         -math.cos(p + h + k)])
    return out


@pytest.mark.parametrize('x, z, pitch, legs', [
    (0.0, 0.9, 0.0, {'left': (0.0, 0.0), 'right': (0.0, 0.0)}),
    (1.5, 0.8, 0.2, {'left': (-0.5, 0.3), 'right': (0.4, 1.2)}),
    (-0.3, 0.7, -0.6, {'left': (1.1, 2.0), 'right': (-1.2, 0.0)}),
])
def test_walker_frames_follow_the_lengths(x, z, pitch, legs):
    model = load(WALKER, thigh_length_m=0.42, shank_length_m=0.38)
    q = config(model, base_x=x, base_z=z, base_pitch=pitch,
               **{f'{s}_{j}': v for s, (h, k) in legs.items()
                  for j, v in (('hip', h), ('knee', k))})
    expected = _walker_expected(x, z, pitch, legs, 0.42, 0.38)
    for frame, position in zip(expected, positions(model, q, *expected)):
        np.testing.assert_allclose(position, expected[frame], atol=1e-12, err_msg=frame)


def test_walker_straight_legs_hang_the_feet_below_the_hip():
    model = load(WALKER)
    left, right = positions(model, config(model, base_z=1.0), 'left_foot', 'right_foot')
    np.testing.assert_allclose(left, [0, 0, 1.0 - THIGH_L - SHANK_L], atol=1e-12)
    np.testing.assert_allclose(right, left, atol=1e-12)


def test_walker_knee_flexion_swings_the_foot_backwards():
    model = load(WALKER)
    (foot,) = positions(model, config(model, base_z=1.0, left_knee=0.5), 'left_foot')
    assert foot[0] == pytest.approx(-SHANK_L * math.sin(0.5), abs=1e-12)


def test_walker_matches_as_mailhot_getpos():
    """
    Their RunScript initial state, mapped to our coordinates, matches KneedWalker.GetPos.

    It puts the feet and knees where KneedWalker.GetPos puts the ankles and knees (their y is our
    z).
    """
    x0, y0 = 0.3, 0.05
    a, bl, br, gl, gr = (math.radians(v) for v in (-30, 190, 170, 180, 120))
    s, c = math.sin, math.cos
    l_knee = np.array([x0 + SHANK_L * s(gl), y0 - SHANK_L * c(gl)])
    hip = l_knee + [THIGH_L * s(bl), -THIGH_L * c(bl)]
    r_knee = hip + [-THIGH_L * s(br), THIGH_L * c(br)]
    r_ankle = r_knee + [-SHANK_L * s(gr), SHANK_L * c(gr)]
    torso_com = hip + [-TORSO_L / 2 * s(a), TORSO_L / 2 * c(a)]

    model = load(WALKER)
    q = config(model, base_x=hip[0], base_z=hip[1], base_pitch=-a,
               left_hip=math.pi - bl + a, left_knee=bl - gl,
               right_hip=math.pi - br + a, right_knee=br - gr)
    got = positions(model, q, 'left_foot', 'left_knee', 'right_knee', 'right_foot')
    for name, position, ref in zip(('left_foot', 'left_knee', 'right_knee', 'right_foot'), got,
                                   ([x0, y0], l_knee, r_knee, r_ankle)):
        np.testing.assert_allclose(position[[0, 2]], ref, atol=1e-12, err_msg=name)
    data = model.createData()
    pin.forwardKinematics(model, data, q)
    torso = model.getJointId('base_pitch')
    np.testing.assert_allclose((data.oMi[torso].act(model.inertias[torso].lever))[[0, 2]],
                               torso_com, atol=1e-12)


def test_walker_frames_lie_in_the_xz_plane():
    model = load(WALKER)
    data = model.createData()
    for q in random_configs(model, 10, seed=4):
        pin.framesForwardKinematics(model, data, q)
        for frame, placement in zip(model.frames, data.oMf):
            assert placement.translation[1] == pytest.approx(0.0, abs=1e-12), frame.name


def test_walker_motion_is_planar():
    """Rows y, wx, wz of every frame's world-aligned jacobian are zero: motion stays in x-z."""
    model = load(WALKER)
    data = model.createData()
    for q in random_configs(model, 10, seed=5):
        pin.computeJointJacobians(model, data, q)
        pin.updateFramePlacements(model, data)
        for fid, frame in enumerate(model.frames):
            jac = pin.getFrameJacobian(model, data, fid, pin.LOCAL_WORLD_ALIGNED)
            assert np.abs(jac[[1, 3, 5]]).max(initial=0.0) < 1e-12, frame.name
        assert np.abs(pin.jacobianCenterOfMass(model, data, q)[1]).max() < 1e-12


# ---------------------------------------------------------------------------------------------
# bad args

@pytest.mark.parametrize('robot, arg, value, message', [
    ('boom_leg', 'thigh_mass_kg', -1.0, 'thigh_mass_kg must be a number > 0'),
    ('boom_leg', 'boom_mass_kg', 0.0, 'boom_mass_kg must be a number > 0'),
    ('boom_leg', 'boom_radius_m', -0.5, 'boom_radius_m must be a number > 0'),
    ('boom_leg', 'shank_length_m', 'long', 'shank_length_m must be a number > 0'),
    ('boom_leg', 'hip_effort_nm', 0.0, 'hip_effort_nm must be a number > 0'),
    ('boom_leg', 'shank_ixx_kgm2', -1e-4, 'inertia of shank is not positive definite'),
    ('boom_leg', 'shank_ixx_kgm2', 0.01, 'inertia of shank violates the triangle inequality'),
    ('boom_leg', 'boom_pitch_lower_rad', 0.5, 'boom_pitch_upper_rad - boom_pitch_lower_rad'),
    ('kneed_walker', 'torso_mass_kg', -5.0, 'torso_mass_kg must be a number > 0'),
    ('kneed_walker', 'thigh_length_m', 0.0, 'thigh_length_m must be a number > 0'),
    ('kneed_walker', 'shank_inertia_kgm2', -0.01, 'shank_inertia_kgm2 must be a number > 0'),
    ('kneed_walker', 'thigh_inertia_kgm2', 1e-6, 'inertia of thigh violates the triangle'),
    ('kneed_walker', 'knee_effort_nm', -1.0, 'knee_effort_nm must be a number > 0'),
    ('kneed_walker', 'knee_upper_rad', -0.2, 'knee_upper_rad - knee_lower_rad'),
])
def test_bad_arg_is_rejected_naming_it(robot, arg, value, message):
    with pytest.raises(xacro.XacroException, match=message):
        urdf_xml(ROBOTS[robot], **{arg: value})


def test_pinocchio_alone_accepts_a_negative_mass():
    """
    Why the xacro files check their args.

    Pinocchio does not (if this starts failing, pinocchio validates by itself and the xacro checks
    are a second line).
    """
    xml = urdf_xml(WALKER).replace('<mass value="5.0"/>', '<mass value="-5.0"/>')
    assert '<mass value="-5.0"/>' in xml
    assert pin.computeTotalMass(pin.buildModelFromXML(xml)) == pytest.approx(-5.0 + 4 * 0.3)
