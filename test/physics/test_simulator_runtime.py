# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
The simulator changed at a step boundary: ``reconfigure`` (runtime parameters) and ``set_state``.

A reconfigured simulator steps exactly as a simulator built with the new values from the same
state; the fields fixed for a run are refused with their reason; a change that would put the
robot under the terrain changes nothing.
"""
from __future__ import annotations

import dataclasses

from conftest import pd_hold, URDF_XACRO
from dodo_sim.physics.sim_config import RUNTIME_FIELDS, SENSOR_PARAMETERS, STARTUP_ONLY
from dodo_sim.simulator import SimConfig, Simulator
import numpy as np
import pytest

START_Q = (0.0, 1.3, 0.3, -0.6)


def run(sim, steps):
    for _ in range(steps):
        sim.step(pd_hold(sim.state, START_Q, kp=60.0, kd=2.0))
    return sim.state


def test_every_field_is_runtime_settable_or_fixed_with_a_reason():
    fields = [f.name for f in dataclasses.fields(SimConfig)]
    assert sorted(RUNTIME_FIELDS + tuple(STARTUP_ONLY)) == sorted(fields)
    assert all(len(reason) > 20 for reason in STARTUP_ONLY.values())
    for name in ('friction', 'restitution', 'terrain', 'slope_deg', 'motor_time_constant',
                 'motor_peak_torque_nm', 'push_times', 'initial_q'):
        assert name in RUNTIME_FIELDS


@pytest.mark.parametrize('integrator', ['timestepping', 'event'])
@pytest.mark.parametrize('change', [{'friction': 0.2, 'restitution': 0.3},
                                    {'terrain': 'slope', 'slope_deg': 3.0,
                                     'terrain_height_m': -0.05},
                                    {'torque_saturation': True, 'motor_peak_torque_nm': (3.0,),
                                     'motor_time_constant': 0.002}])
def test_a_reconfigured_run_equals_a_run_built_with_the_new_values(integrator, change):
    config = SimConfig(initial_q=START_Q, integrator=integrator)
    sim = Simulator(URDF_XACRO, config)
    run(sim, 300)                    # landed: the contact law and the terrain matter now
    q, v = sim.state.q.copy(), sim.state.v.copy()
    applied = sim.motor.applied.copy()
    sim.reconfigure(dataclasses.replace(config, **change))
    fresh = Simulator(URDF_XACRO, dataclasses.replace(config, **change))
    fresh.set_state(q, v)
    fresh.motor.applied = applied
    a, b = run(sim, 200), run(fresh, 200)
    assert np.array_equal(a.q, b.q) and np.array_equal(a.v, b.v)
    assert a.t == pytest.approx(0.5) and b.t == pytest.approx(0.2)


def test_a_field_fixed_for_a_run_is_refused_with_its_reason():
    config = SimConfig(initial_q=START_Q)
    sim = Simulator(URDF_XACRO, config)
    with pytest.raises(ValueError, match='control_period is fixed for a run: the exchange'):
        sim.reconfigure(dataclasses.replace(config, control_period=0.002, dt=0.001))
    assert sim.config is config


def test_the_sensors_are_fixed_for_a_run():
    # the simulator node builds the sensors' noise and delay lines once (sensor_output)
    assert set(SENSOR_PARAMETERS) <= set(STARTUP_ONLY)
    config = SimConfig(initial_q=START_Q)
    sim = Simulator(URDF_XACRO, config)
    with pytest.raises(ValueError, match='imu_latency is fixed for a run: the simulator node'):
        sim.reconfigure(dataclasses.replace(config, imu_latency=3))


def test_a_terrain_over_the_robot_changes_nothing():
    config = SimConfig(initial_q=START_Q)
    sim = Simulator(URDF_XACRO, config)
    run(sim, 400)                    # standing or hopping near the ground
    foot_z = sim.contact_positions()[0, 2]
    integrator = sim.integrator
    with pytest.raises(ValueError, match='below the flat terrain'):
        sim.reconfigure(dataclasses.replace(config, terrain_height_m=foot_z + 0.05))
    assert sim.config is config and sim.integrator is integrator


def test_a_new_push_schedule_applies_from_now_on():
    config = SimConfig(initial_q=START_Q)
    sim = Simulator(URDF_XACRO, config)
    run(sim, 100)                    # t = 0.1 s
    sim.reconfigure(dataclasses.replace(config, push_times=(0.05, 0.15),
                                        push_impulses_x=(100.0, 2.0),
                                        push_impulses_z=(0.0, 0.0)))
    before = sim.state.v[0]
    run(sim, 49)
    assert abs(sim.state.v[0] - before) < 0.05        # the push at 0.05 s is past
    run(sim, 2)
    assert sim.state.v[0] - before > 0.05             # the push at 0.15 s came


def test_set_state_teleports_and_time_goes_on():
    sim = Simulator(URDF_XACRO, SimConfig(initial_q=START_Q))
    run(sim, 50)
    q = np.array((0.5, 1.4, 0.2, -0.5))
    state = sim.set_state(q, np.zeros(4))
    assert state.t == pytest.approx(0.05) and np.array_equal(state.q, q)
    assert run(sim, 1).t == pytest.approx(0.051)
    with pytest.raises(ValueError, match='below the flat terrain'):
        sim.set_state(np.array((0.0, 0.1, 0.3, -0.6)), np.zeros(4))
