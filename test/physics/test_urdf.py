# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""The xacro model: processes, loads in pinocchio, has the expected structure and numbers."""
import math

from dodo_sim.model import (JOINT_NAMES, Kinematics, load_leg_model, ModelError,
                            robot_description_xml)
import numpy as np
import pinocchio as pin
import pytest


def test_xacro_processes_to_urdf_with_visuals(urdf_xml):
    assert urdf_xml.lstrip().startswith('<?xml') or urdf_xml.lstrip().startswith('<robot')
    for tag in ('<visual>', '<collision>', 'name="foot"', 'name="world"'):
        assert tag in urdf_xml


def test_pinocchio_model_structure(urdf_path):
    leg = load_leg_model(urdf_path)
    model = leg.model
    assert (model.nq, model.nv) == (4, 4)
    assert [model.names[i] for i in range(1, model.njoints)] == list(JOINT_NAMES)
    assert leg.total_mass == pytest.approx(12.0)
    masses = {model.names[i]: model.inertias[i].mass for i in range(1, model.njoints)}
    assert masses == pytest.approx({'base_x': 0.0, 'base_z': 10.0, 'hip': 1.0, 'knee': 1.0})
    np.testing.assert_allclose(leg.effort_limits, [300.0, 300.0])
    np.testing.assert_allclose(leg.gravity, [0.0, -9.81])


def test_frame_positions_follow_the_link_lengths(urdf_path):
    kin = Kinematics(load_leg_model(urdf_path))
    # straight leg: foot 1 m below the hip
    np.testing.assert_allclose(kin.foot_position(np.array([0.3, 1.5, 0.0, 0.0])), [0.3, 0.5],
                               atol=1e-12)
    # positive hip swings the foot to -x; thigh = shank = 0.5 m
    hip, knee = 0.4, -0.9
    expected = [-0.5 * math.sin(hip) - 0.5 * math.sin(hip + knee),
                1.0 - 0.5 * math.cos(hip) - 0.5 * math.cos(hip + knee)]
    np.testing.assert_allclose(kin.foot_position(np.array([0.0, 1.0, hip, knee])), expected,
                               atol=1e-12)
    # CoG of the straight leg: body at the hip, link CoMs at -0.25 and -0.75
    np.testing.assert_allclose(kin.com_position(np.array([0.0, 1.0, 0.0, 0.0])),
                               [0.0, 1.0 - (0.25 + 0.75) / 12.0], atol=1e-12)


def test_xacro_arguments_change_masses_and_lengths(urdf_path):
    leg = load_leg_model(urdf_path, {'body_mass': 8.0, 'thigh_length': 0.4,
                                     'shank_length': 0.45})
    assert leg.total_mass == pytest.approx(10.0)
    kin = Kinematics(leg)
    np.testing.assert_allclose(kin.foot_position(np.zeros(4)), [0.0, -0.85], atol=1e-12)


def test_mass_matrix_inverse_matches_aba_minverse(urdf_path):
    leg = load_leg_model(urdf_path)
    data = leg.create_data()
    q = np.array([0.1, 1.0, 0.3, -0.8])
    mass = pin.crba(leg.model, data, q).copy()
    mass = np.triu(mass) + np.triu(mass, 1).T
    minv = pin.computeMinverse(leg.model, data, q).copy()
    minv = np.triu(minv) + np.triu(minv, 1).T
    np.testing.assert_allclose(minv @ mass, np.eye(4), atol=1e-10)


def test_bad_urdf_is_one_clear_error(tmp_path, urdf_xml):
    broken = tmp_path / 'broken.urdf'
    broken.write_text('<robot name="x"><link name="a"></robot>')
    with pytest.raises(ModelError, match='invalid URDF'):
        load_leg_model(broken)
    with pytest.raises(ModelError, match='not found'):
        load_leg_model(tmp_path / 'missing.urdf')


def test_missing_or_renamed_joint_is_named(urdf_xml):
    renamed = urdf_xml.replace('name="knee"', 'name="elbow"')
    with pytest.raises(ModelError, match="missing joint.*'knee'"):
        load_leg_model(renamed)


def test_wrong_joint_axis_is_named(urdf_xml):
    bad_axis = urdf_xml.replace('<axis xyz="0 0 1"/>', '<axis xyz="0 1 0"/>', 1)
    with pytest.raises(ModelError, match="joint 'base_z'"):
        load_leg_model(bad_axis)


def test_missing_foot_frame_is_named(urdf_xml):
    no_foot = urdf_xml.replace('name="foot"', 'name="toe"').replace('link="foot"', 'link="toe"')
    with pytest.raises(ModelError, match="frame 'foot'"):
        load_leg_model(no_foot)


def test_xacro_args_with_plain_xml_are_rejected(urdf_xml):
    with pytest.raises(ModelError, match='xacro arguments'):
        robot_description_xml(urdf_xml, {'body_mass': 3})
