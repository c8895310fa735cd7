# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
The SLIP hopper with the sensors of the real rig (config/hop_sensors.yaml) still hops.

The encoders' noise and resolution, the velocity resolution of what the devices send and the
foot force sensor's noise and resolution (datasheet numbers in the file; docs/control.md,
"Sensor noise", has the whole table from bench/hopper_sensor_noise.py). Measured on the
simulator's ground truth by the hopper scenarios: hopping in place for 10 s, seed 0, gave apex
x error 5.1 mm, apex height error 4.6 mm, 14 hops (ideal sensors: 2.0 mm, 7e-6 m, 14); running
at 1 m/s, speed error 3.9 mm/s. The bounds leave about 4x of that.
"""
from dodo_control.scenarios import build_configs, hopper, Perturbation
from dodo_sim.paths import share_dir
from dodo_sim.physics.sim_config import SENSOR_PARAMETERS
from dodo_sim.ros.params import node_parameters


def rig_sensors() -> dict:
    """Return the sensor parameters of config/hop_sensors.yaml's simulator section."""
    values = node_parameters(share_dir() / 'config' / 'hop_sensors.yaml', 'simulator')
    sensors = {k: v for k, v in values.items() if k in SENSOR_PARAMETERS}
    assert sensors['joint_position_noise'] and sensors['contact_force_noise'] > 0.0
    return sensors


def scenario(kind: str, sensors: dict) -> dict:
    configs = build_configs(hopper.SECTIONS, {'simulator': sensors})
    spec = hopper.SCENARIOS[kind]
    return spec.run(configs, dict(spec.options), Perturbation())


def test_the_hopper_holds_its_place_and_apex_with_the_rigs_sensors():
    metrics = scenario('hold', rig_sensors())
    assert metrics['hops'] >= 12
    assert metrics['apex_height_error_max_m'] < 0.02
    assert metrics['apex_x_error_max_m'] < 0.02


def test_the_hopper_tracks_its_speed_with_the_rigs_sensors():
    metrics = scenario('velocity', rig_sensors())
    assert metrics['velocity_error_max_mps'] < 0.02
    assert metrics['distance_m'] > 5.0
