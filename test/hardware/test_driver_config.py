# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
Driver configuration: parameter validation names the bad value, the example params file builds.

A bus that cannot be opened and joints the robot lacks are clear errors.
"""
from dodo_sim.hardware.build import build_driver
from dodo_sim.hardware.config import DriverConfig, urdf_joints
from dodo_sim.paths import share_dir
from dodo_sim.ros.params import config_from_file
import pytest


def test_example_params_file_is_a_valid_driver_config():
    config = config_from_file(DriverConfig, share_dir() / 'config' / 'hardware.yaml', 'driver')
    assert config.joints == ('hip', 'knee') and config.can_ids == (1, 2)
    assert config.hardware == 'can'


@pytest.mark.parametrize('values,field', [
    ({'can_ids': (1, 1)}, 'can_ids'),
    ({'can_ids': (0, 2)}, 'can_ids'),
    ({'models': ('AK80-9', 'XYZ')}, 'models'),
    ({'directions': (1, 2)}, 'directions'),
    ({'gear_ratios': (4.0,)}, 'gear_ratios'),
    ({'reply_timeout': 0.002}, 'reply_timeout'),
    ({'temperature_warn': 90.0}, 'temperature_warn'),
    ({'estop_mode': 'brake'}, 'estop_mode'),
    ({'boom_joints': ('hip', 'base_z')}, 'boom_joints'),
])
def test_bad_parameter_is_named(values, field):
    with pytest.raises(ValueError, match=f'DriverConfig.{field}'):
        DriverConfig(**values)


def test_unknown_parameter_is_named():
    with pytest.raises(ValueError, match='unknown driver parameter'):
        DriverConfig.from_dict({'can_idz': [1, 2]})


def test_actuated_joint_missing_from_the_robot(urdf_xml):
    with pytest.raises(ValueError, match="'ankle' is not a movable joint"):
        build_driver(DriverConfig(hardware='emulated', joints=('hip', 'ankle')), urdf_xml)


def test_unmeasured_joint_is_an_error(urdf_xml):
    config = DriverConfig(hardware='emulated', boom_joints=('base_x', ''))
    with pytest.raises(ValueError, match=r"joints \['base_z'\] of the robot description"):
        build_driver(config, urdf_xml)


def test_bus_that_cannot_be_opened_names_interface_and_channel(urdf_xml):
    config = DriverConfig(bus_interface='socketcan', bus_channel='nocan7',
                          calibration_file='/nonexistent/calibration.yaml')
    with pytest.raises(ValueError, match="cannot open CAN bus interface='socketcan' "
                                         "channel='nocan7'"):
        build_driver(config, urdf_xml)


def test_urdf_limits_of_the_hopper(urdf_xml):
    names, limits = urdf_joints(urdf_xml)
    assert names == ('base_x', 'base_z', 'hip', 'knee')
    assert (limits['knee'].lower, limits['knee'].upper, limits['knee'].effort) == (-2.8, 2.8,
                                                                                   300.0)
