# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
The SLIP controller's compiled tick (dodo_control/slip/tick.py; docs/control.md "Per-tick cost").

The tick applies the one definition of each SLIP law (slip/template.py, slip/flight.py,
slip/stance.py), bit for bit, on the controller's own terms; its leg length is CPython's
``math.hypot`` bit for bit.
"""
import math

from dodo_control.controller import Controller
from dodo_control.slip import tick
from dodo_control.slip.dynamics import COM, COM_VEL, FOOT, FOOT_VEL
from dodo_control.slip.flight import foot_target, posture_acceleration
from dodo_control.slip.phase import IN_FLIGHT, IN_STANCE, PHASE
from dodo_control.slip.stance import flight_foot_torque_tick, slip_torque_tick
from dodo_control.slip.template import regulated_rest_length, slip_acceleration
import numpy as np
import pytest


def test_leg_length_is_cpythons_hypot_bit_for_bit():
    rng = np.random.default_rng(4)
    dx = rng.normal(scale=0.3, size=20000)
    dz = rng.uniform(0.05, 1.5, size=20000)
    tiny = np.ldexp(rng.uniform(0.5, 1.0, 200), rng.integers(-1074, -1000, 200))
    xs, zs = np.concatenate([dx, tiny]).tolist(), np.concatenate([dz, tiny[::-1]]).tolist()
    for x, z in zip(xs, zs):
        assert tick.leg_length(x, z) == math.hypot(x, z), (x, z)
    assert tick.leg_length(0.0, -0.0) == 0.0
    assert tick.leg_length(math.nan, math.inf) == math.inf
    assert math.isnan(tick.leg_length(math.nan, 1.0))


@pytest.fixture(scope='module')
def ctrl(urdf_path):
    return Controller(urdf_path)


def _arrays(ctrl, q, v):
    terms, phase, state, params, out = tick.new_arrays()
    ctrl.dyn.tick_terms_into(q, v, terms)
    tick.write_params(params, ctrl.config, ctrl.dyn, ctrl.rest_length, ctrl.max_rest_length)
    return terms, phase, state, params, out


def _geometry(terms):
    x = terms.tolist()
    return (x[COM], x[COM + 1], x[COM_VEL], x[COM_VEL + 1], x[FOOT], x[FOOT + 1], x[FOOT_VEL],
            x[FOOT_VEL + 1])


def test_the_stance_tick_applies_the_regulated_rest_length_and_the_slip_law(ctrl):
    q, v = np.array([0.1, 0.78, 0.7, -1.4]), np.array([0.3, 0.9, -0.8, 1.6])
    terms, phase, state, params, out = _arrays(ctrl, q, v)
    phase[PHASE] = IN_STANCE
    state[tick.S_DECOMPRESSING] = 1.0
    state[tick.S_APEX_TARGET] = 1.1
    state[tick.S_FOOTHOLD_X], state[tick.S_FOOTHOLD_Z] = 0.05, 0.01
    state[tick.S_ENERGY_TD] = 140.0
    tick.tick_begin(0.5, 200.0, terms, phase, state, params, out)
    cx, cz, vx, vz, px, pz, _, _ = _geometry(terms)
    length = math.hypot(cx - px, cz - pz)
    assert out[tick.O_LENGTH] == length
    rest = regulated_rest_length(length, cz - 0.01, vz, 1.1, params[tick.P_STIFFNESS],
                                 ctrl.mass, ctrl.dyn.weight, ctrl.max_rest_length)
    assert state[tick.S_REST] == rest
    tau = tick.tick_law(terms, phase, state, params, out)
    accel = slip_acceleration(cx - px, cz - pz, length, rest, params[tick.P_STIFFNESS],
                              ctrl.mass, *ctrl.dyn.gravity_xz)
    assert tuple(out[tick.O_ACCEL:tick.O_ACCEL + 2]) == accel
    assert tau == slip_torque_tick(terms, *accel)
    assert tuple(out[tick.O_TARGET:tick.O_TARGET + 2]) == (0.05, 0.01)   # the foothold
    energy = 0.5 * ctrl.mass * (vx * vx + vz * vz) + ctrl.dyn.weight * (cz - 0.01)
    assert state[tick.S_ENERGY_INJECTED] == energy - 140.0


def test_the_flight_tick_applies_the_posture_law_towards_the_foot_target(ctrl):
    q, v = np.array([0.0, 1.1, 0.3, -0.6]), np.array([0.5, -1.0, 2.0, -1.0])
    terms, phase, state, params, out = _arrays(ctrl, q, v)
    phase[PHASE] = IN_FLIGHT
    state[tick.S_ALPHA] = 0.12
    tick.tick_begin(0.5, 0.0, terms, phase, state, params, out)
    tau = tick.tick_law(terms, phase, state, params, out)
    cx, cz, vx, vz, px, pz, pvx, pvz = _geometry(terms)
    tx, tz = foot_target(0.12, ctrl.rest_length)
    assert tuple(out[tick.O_TARGET:tick.O_TARGET + 2]) == (cx + tx, cz + tz)
    accel = posture_acceleration(px - cx, pz - cz, pvx - vx, pvz - vz, tx, tz,
                                 ctrl.config.posture_kp, ctrl.config.posture_kd)
    assert tau == flight_foot_torque_tick(terms, *accel)
    assert np.isnan(out[tick.O_ACCEL:tick.O_ACCEL + 2]).all()


def test_the_tick_clips_at_the_effort_limits_and_remembers_the_velocity(ctrl):
    terms, phase, state, params, out = _arrays(ctrl, np.zeros(4), np.zeros(4))
    phase[PHASE] = IN_FLIGHT
    v = np.array([1.0, 2.0, 3.0, 4.0])
    tick.tick_end(v, 1e6, -1e6, phase, state, params, out)
    assert tuple(out[tick.O_TAU:tick.O_TAU + 2]) == (params[tick.P_LIMIT0], -params[tick.P_LIMIT1])
    assert out[tick.O_SATURATED] == 1.0
    assert state[tick.S_PREV_V:tick.S_PREV_V + 4].tolist() == v.tolist()
    assert state[tick.S_PREV_PHASE] == IN_FLIGHT


def test_a_non_finite_input_changes_nothing_and_is_refused(urdf_path):
    hit, clean = Controller(urdf_path), Controller(urdf_path)
    q, v, force = np.array([0.0, 1.2, 0.3, -0.6]), np.zeros(4), np.zeros(2)
    for k in range(60):
        t = 0.001 * k
        if k % 7 == 3:
            with pytest.raises(ValueError, match='non-finite controller input'):
                hit.update(t, np.array([0.0, math.nan, 0.3, -0.6]), v, force)
            assert hit.telemetry.t == clean.telemetry.t          # the last good tick's
        q[1] -= 0.001
        assert hit.update(t, q, v, force).tolist() == clean.update(t, q, v, force).tolist()


def test_telemetry_read_after_a_set_point_change_is_the_ticks_own(urdf_path):
    """The snapshot is built when read; a set-point changed since the tick does not leak in."""
    ctrl = Controller(urdf_path)
    assert math.isnan(ctrl.config.target_x)
    ctrl.update(0.0, np.array([0.0, 1.2, 0.3, -0.6]), np.zeros(4), np.zeros(2))
    ctrl.set_setpoints(target_x=1.0)
    assert math.isnan(ctrl.telemetry.target_x) and ctrl.telemetry.t == 0.0
    ctrl.update(0.001, np.array([0.0, 1.2, 0.3, -0.6]), np.zeros(4), np.zeros(2))
    assert ctrl.telemetry.target_x == 1.0
