# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
Unit tests of the Kneed Walker controller's pieces (docs/walker.md).

Pulse generator shapes and timing, step detection from foot force rows (including chatter), torso
PD sign, torque routing to the stance/swing roles, config validation and the rollout's per-frame
force rows.
"""
import dataclasses
import math

from dodo_control.walker.controller import ROLES, torso_pd_torque, WalkerConfig, WalkerController
from dodo_control.walker.phase import StepPhaseDetector
from dodo_control.walker.pulses import Pulse, PulseGenerator
import numpy as np
import pytest

# q order of the Kneed Walker: base_x, base_z, base_pitch, left_hip,
# left_knee, right_hip, right_knee
Q_STAND = np.array([0.0, 0.89, 0.0, 0.15, 0.0, -0.15, 0.0])
LOADED = [0.0, 0.0, 40.0]
FREE = [0.0, 0.0, 0.0]


# -- pulses ------------------------------------------------------------------------------------

def test_pulse_is_rectangular_on_its_window():
    pulse = Pulse(amplitude_nm=-2.5, start=0.2, width=0.3)
    phases = np.linspace(0.0, 1.0, 1001)
    torque = np.array([pulse.torque(p) for p in phases])
    on = (phases >= 0.2) & (phases < 0.5)
    assert np.all(torque[on] == -2.5)
    assert np.all(torque[~on] == 0.0)


def test_pulse_window_edges_are_half_open():
    pulse = Pulse(3.0, 0.25, 0.5)
    assert pulse.torque(0.25) == 3.0           # on at its start
    assert pulse.torque(0.75) == 0.0           # off at start + width
    assert pulse.torque(np.nextafter(0.75, 0.0)) == 3.0


def test_pulse_reaching_past_the_nominal_step_keeps_acting_until_reset():
    pulse = Pulse(1.0, 0.8, 0.5)               # window [0.8, 1.3): the step may last longer
    assert pulse.torque(1.2) == 1.0
    assert pulse.torque(1.3) == 0.0


def test_zero_width_pulse_never_acts():
    pulse = Pulse(5.0, 0.4, 0.0)
    assert all(pulse.torque(p) == 0.0 for p in np.linspace(0, 2, 201))


def test_generator_sums_overlapping_pulses():
    gen = PulseGenerator([Pulse(1.0, 0.0, 0.5), Pulse(-3.0, 0.4, 0.2)])
    assert gen.torque(0.1) == 1.0
    assert gen.torque(0.45) == -2.0            # both on
    assert gen.torque(0.55) == -3.0
    assert gen.torque(0.7) == 0.0
    assert gen.states(0.45) == (True, True)


@pytest.mark.parametrize('field, value', [('start', -0.1), ('start', 1.5), ('width', 1.2),
                                          ('width', -0.01), ('amplitude_nm', math.nan)])
def test_pulse_rejects_bad_values_by_name(field, value):
    args = {'amplitude_nm': 1.0, 'start': 0.1, 'width': 0.2}
    args[field] = value
    with pytest.raises(ValueError, match=field):
        Pulse(**args)


# -- step detection ----------------------------------------------------------------------------

def _detector(**kw):
    args = {
        'n_feet': 2,
        'load_on_n': 5.0,
        'load_off_n': 1.0,
        'min_step_time_s': 0.1,
        'initial_stance': 1}
    args.update(kw)
    return StepPhaseDetector(**args)


def test_touchdown_of_swing_foot_switches_stance():
    det = _detector()
    det.update(0.0, [LOADED, LOADED])          # double support at start: no event
    assert det.stance == 1 and det.step_count == 0
    det.update(0.05, [FREE, LOADED])           # swing (left) foot lifts off
    assert not det.update(0.2, [FREE, LOADED])
    assert det.update(0.3, [LOADED, LOADED])   # left touches down
    assert det.stance == 0 and det.swing == 1 and det.step_count == 1
    assert det.step_start_s == 0.3


def test_foot_loaded_at_start_must_lift_before_its_touchdown_counts():
    det = _detector()
    det.update(0.0, [LOADED, LOADED])
    for t in np.arange(0.001, 0.5, 0.001):     # the swing foot never leaves the ground
        assert not det.update(t, [LOADED, LOADED])
    assert det.step_count == 0


def test_contact_chatter_gives_one_step():
    """
    Contact chatter gives exactly one step.

    A landing foot bouncing around the thresholds for 30 ms, and a stance foot dithering between
    the two thresholds, make exactly one step.
    """
    det = _detector()
    det.update(0.0, [FREE, LOADED])
    rng = np.random.default_rng(3)
    events = 0
    t = 0.0
    for k in range(400):
        t = 0.2 + 0.001 * k
        if k < 30:
            left = [0.0, 0.0, float(rng.choice([0.0, 0.5, 6.0, 12.0]))]   # bounces on landing
        else:
            left = LOADED
        right = [0.0, 0.0, float(rng.uniform(1.5, 4.5))]                 # between off and on
        events += det.update(t, [left, right])
    assert events == 1
    assert det.stance == 0


def test_chatter_after_liftoff_within_refractory_time_is_no_step():
    det = _detector(min_step_time_s=0.15)
    det.update(0.0, [FREE, LOADED])
    assert det.update(0.2, [LOADED, LOADED])   # step 1: left down, right becomes swing
    det.update(0.21, [LOADED, FREE])           # right lifts off ...
    assert not det.update(0.22, [LOADED, LOADED])   # ... and scuffs: within 0.15 s
    det.update(0.23, [LOADED, FREE])
    assert det.step_count == 1 and det.stance == 0


def test_early_landing_is_accepted_when_refractory_time_ends():
    det = _detector(min_step_time_s=0.15)
    det.update(0.0, [FREE, LOADED])
    assert det.update(0.2, [LOADED, LOADED])
    det.update(0.25, [LOADED, FREE])
    assert not det.update(0.30, [LOADED, LOADED])   # lands early, stays loaded
    assert det.update(0.36, [LOADED, LOADED])       # refractory time over: the step counts
    assert det.stance == 1


def test_load_is_force_magnitude_so_a_sloped_contact_counts():
    det = _detector()
    loads = det.loads([[3.0, 0.0, 4.0], [0.0, 0.0, 0.0]])
    assert loads == pytest.approx([5.0, 0.0])


def test_two_column_force_rows_are_accepted():
    det = _detector()
    det.update(0.0, [[0.0, 0.0], [0.0, 40.0]])
    assert det.update(0.2, [[1.0, 30.0], [0.0, 40.0]])


@pytest.mark.parametrize('kw, name', [({'load_on_n': 1.0, 'load_off_n': 2.0}, 'load_off_n'),
                                      ({'min_step_time_s': -1.0}, 'min_step_time_s'),
                                      ({'initial_stance': 2}, 'initial_stance'),
                                      ({'n_feet': 1}, 'n_feet')])
def test_detector_rejects_bad_arguments_by_name(kw, name):
    with pytest.raises(ValueError, match=name):
        _detector(**kw)


# -- torso PD ----------------------------------------------------------------------------------

def test_torso_pd_pushes_a_forward_leaning_torso_back():
    # positive pitch = leaning forward (+x); the torque on the torso about +y must be negative
    assert torso_pd_torque(0.3, 0.0, 0.1, 50.0, 5.0) == pytest.approx(-10.0)
    assert torso_pd_torque(-0.1, 0.0, 0.1, 50.0, 5.0) == pytest.approx(10.0)
    assert torso_pd_torque(0.1, 2.0, 0.1, 50.0, 5.0) == pytest.approx(-10.0)


def test_stance_hip_carries_the_torso_pd_and_cancels_the_swing_hip_reaction():
    """
    The stance hip carries the torso PD and cancels the swing hip's reaction.

    The hips' torque on the torso, -(tau_stance_hip + tau_swing_hip), equals the torso PD demand
    whatever the swing-hip pulse does.
    """
    cfg = WalkerConfig(pulse_amplitude_nm=(0.0, 0.0, -1.5, 0.0, 0.0, 0.0, 0.0, 0.0),
                       pulse_phase=(0.0,) * 8, pulse_period=(0, 0, 1.0, 0, 0, 0, 0, 0),
                       torso_pitch_ref_rad=0.0, torso_kp_nm_per_rad=40.0,
                       torso_kd_nms_per_rad=4.0, swing_leg_kp_nm_per_rad=0.0,
                       swing_leg_kd_nms_per_rad=0.0, torso_pitch_speed_gain_rad_s_per_m=0.0,
                       initial_stance_frame='right_foot')
    ctrl = WalkerController(cfg)
    q = Q_STAND.copy()
    q[2] = 0.1                                  # torso leaning forward
    v = np.zeros(7)
    v[2] = 0.5
    tau = ctrl.update(0.0, q, v, [FREE, LOADED])
    left_hip, right_hip = tau[0], tau[2]        # left is swing, right is stance
    assert left_hip == pytest.approx(-1.5)
    on_torso = -(left_hip + right_hip)
    assert on_torso == pytest.approx(torso_pd_torque(0.1, 0.5, 0.0, 40.0, 4.0))
    assert on_torso < 0.0                       # pushes the torso back


# -- role routing ------------------------------------------------------------------------------

def _role_config(**kw):
    # distinct constant torques per role (one full-step pulse each), no feedback
    amps = (1.0, 0.0, 2.0, 0.0, 3.0, 0.0, 4.0, 0.0)
    args = {'pulse_amplitude_nm': amps, 'pulse_phase': (0.0,) * 8,
            'pulse_period': (1.0, 0, 1.0, 0, 1.0, 0, 1.0, 0), 'torso_kp_nm_per_rad': 0.0,
            'torso_kd_nms_per_rad': 0.0, 'swing_leg_kp_nm_per_rad': 0.0,
            'swing_leg_kd_nms_per_rad': 0.0, 'stance_knee_lock_nm': 0.0,
            'torso_pitch_speed_gain_rad_s_per_m': 0.0, 'swing_knee_kp_nm_per_rad': 0.0,
            'initial_stance_frame': 'right_foot', 'step_frequency_hz': 2.0,
            'min_step_fraction': 0.2}
    args.update(kw)
    return WalkerConfig(**args)


def test_roles_follow_the_stance_foot_through_a_touchdown():
    ctrl = WalkerController(_role_config())
    zero = np.zeros(7)
    tau = ctrl.update(0.0, Q_STAND, zero, [FREE, LOADED])   # right stance, left swing
    # actuated order: left_hip, left_knee, right_hip, right_knee
    assert tau == pytest.approx([2.0, 4.0, 1.0 - 2.0, 3.0])
    tau = ctrl.update(0.3, Q_STAND, zero, [LOADED, LOADED])  # left touches down
    assert ctrl.telemetry.touchdown and ctrl.stance_frame == 'left_foot'
    assert tau == pytest.approx([1.0 - 2.0, 3.0, 2.0, 4.0])
    assert ctrl.telemetry.step_count == 1
    assert ctrl.telemetry.phase == 0.0


def test_phase_is_step_frequency_times_time_since_touchdown():
    ctrl = WalkerController(_role_config(step_frequency_hz=2.5))
    zero = np.zeros(7)
    ctrl.update(1.0, Q_STAND, zero, [FREE, LOADED])
    ctrl.update(1.2, Q_STAND, zero, [FREE, LOADED])
    assert ctrl.telemetry.phase == pytest.approx(0.5)
    assert ctrl.telemetry.time_in_step_s == pytest.approx(0.2)


def test_torques_are_clipped_to_max_torque():
    cfg = _role_config(torso_kp_nm_per_rad=500.0, max_torque_nm=5.0,
                       pulse_amplitude_nm=(0.0, 0.0, 2.0, 0.0, 3.0, 0.0, 4.0, 0.0))
    ctrl = WalkerController(cfg)
    q = Q_STAND.copy()
    q[2] = 0.5
    tau = ctrl.update(0.0, q, np.zeros(7), [FREE, LOADED])
    assert np.all(np.abs(tau) <= 5.0)
    assert tau[2] == 5.0


def test_reset_forgets_the_steps():
    ctrl = WalkerController(_role_config())
    zero = np.zeros(7)
    ctrl.update(0.0, Q_STAND, zero, [FREE, LOADED])
    ctrl.update(0.3, Q_STAND, zero, [LOADED, LOADED])
    assert ctrl.step_count == 1
    ctrl.reset()
    assert ctrl.step_count == 0 and ctrl.stance_frame == 'right_foot'
    assert ctrl.telemetry is None


def test_reconfigure_keeps_the_step_history_when_only_pulses_change():
    ctrl = WalkerController(_role_config())
    zero = np.zeros(7)
    ctrl.update(0.0, Q_STAND, zero, [FREE, LOADED])
    ctrl.update(0.3, Q_STAND, zero, [LOADED, LOADED])
    ctrl.reconfigure(dataclasses.replace(ctrl.config, pulse_amplitude_nm=(0.0,) * 8))
    assert ctrl.step_count == 1 and ctrl.stance_frame == 'left_foot'
    tau = ctrl.update(0.31, Q_STAND, zero, [LOADED, LOADED])
    assert tau == pytest.approx([0.0, 0.0, 0.0, 0.0])


# -- config ------------------------------------------------------------------------------------

@pytest.mark.parametrize('field, value', [
    ('step_frequency_hz', 0.0), ('pulse_amplitude_nm', (25.0,) + (0.0,) * 7),
    ('pulse_phase', (0.0,) * 7), ('pulse_period', (1.5,) + (0.0,) * 7),
    ('torso_kp_nm_per_rad', -1.0), ('initial_stance_frame', 'foot'),
    ('hip_joints', ('left_hip',)), ('knee_joints', ('left_knee', 'base_z')),
    ('load_on_n', 0.5), ('stance_knee_lock_nm', 1.0), ('min_step_fraction', 1.0)])
def test_config_rejects_bad_values_by_name(field, value):
    with pytest.raises(ValueError, match=field):
        WalkerConfig(**{field: value})


def test_config_from_dict_names_unknown_keys():
    with pytest.raises(ValueError, match='apex_height'):
        WalkerConfig.from_dict({'apex_height': 1.0})
    assert WalkerConfig.from_dict({'step_frequency_hz': 1.5}).step_frequency_hz == 1.5


def test_config_pulses_by_role():
    cfg = WalkerConfig()
    for i, role in enumerate(ROLES):
        pulses = cfg.pulses(role)
        assert [p.amplitude_nm for p in pulses] == list(cfg.pulse_amplitude_nm[2 * i:2 * i + 2])


# -- feedback terms ----------------------------------------------------------------------------

def _feedback_config(**kw):
    args = {'pulse_amplitude_nm': (0.0,) * 8, 'torso_kp_nm_per_rad': 0.0,
            'torso_kd_nms_per_rad': 0.0,
            'swing_leg_kp_nm_per_rad': 0.0, 'swing_leg_kd_nms_per_rad': 0.0,
            'torso_pitch_speed_gain_rad_s_per_m': 0.0, 'swing_knee_kp_nm_per_rad': 0.0,
            'stance_knee_lock_nm': 0.0, 'initial_stance_frame': 'right_foot'}
    args.update(kw)
    return WalkerConfig(**args)


def test_faster_than_target_leans_the_torso_reference_back():
    cfg = _feedback_config(torso_pitch_ref_rad=0.2, speed_target_m_s=0.8,
                           torso_pitch_speed_gain_rad_s_per_m=0.5, speed_filter_time_s=0.5)
    ctrl = WalkerController(cfg)
    v = np.zeros(7)
    v[0] = 1.2                                     # 0.4 m/s too fast
    ctrl.update(0.0, Q_STAND, v, [FREE, LOADED])
    assert ctrl.telemetry.torso_pitch_ref_rad == pytest.approx(0.2 - 0.5 * 0.4)
    v[0] = 0.4                                     # the filter follows with its time constant
    ctrl.update(0.5, Q_STAND, v, [FREE, LOADED])
    expected_speed = 1.2 + (1.0 - math.exp(-1.0)) * (0.4 - 1.2)
    assert ctrl.telemetry.hip_speed_m_s == pytest.approx(expected_speed)
    assert ctrl.telemetry.torso_pitch_ref_rad > 0.2   # now too slow: leans forward


def test_late_swing_knee_extension_drives_the_swing_knee_straight():
    cfg = _feedback_config(swing_knee_kp_nm_per_rad=5.0, swing_knee_kd_nms_per_rad=0.5,
                           swing_knee_extend_phase=0.5, step_frequency_hz=2.0)
    ctrl = WalkerController(cfg)
    q = Q_STAND.copy()
    q[4] = 0.8                                     # left (swing) knee flexed
    zero = np.zeros(7)
    tau = ctrl.update(0.0, q, zero, [FREE, LOADED])
    assert tau[1] == 0.0                           # phase 0: not yet
    tau = ctrl.update(0.3, q, zero, [FREE, LOADED])   # phase 0.6
    assert tau[1] == pytest.approx(-4.0)           # extension (negative) towards the stop


def test_placement_pd_swings_a_trailing_leg_forward():
    cfg = _feedback_config(swing_leg_kp_nm_per_rad=10.0, swing_leg_angle_rad=0.3,
                           swing_leg_feedback_phase=0.0, swing_leg_stance_gain=0.0)
    ctrl = WalkerController(cfg)
    q = Q_STAND.copy()                             # left (swing) thigh 0.15 rad behind
    tau = ctrl.update(0.0, q, np.zeros(7), [FREE, LOADED])
    assert tau[0] == pytest.approx(-10.0 * 0.45)   # negative hip torque swings it forward
    assert -(tau[0] + tau[2]) == pytest.approx(0.0)   # the stance hip takes the reaction


def test_telemetry_read_after_a_reconfigure_is_the_ticks_own():
    """The snapshot is built when read; a new config since the tick does not leak into it."""
    cfg = _role_config()
    ctrl = WalkerController(cfg)
    ctrl.update(0.0, Q_STAND, np.zeros(7), [FREE, LOADED])
    before = ctrl.telemetry.pulses_on
    assert any(before)
    ctrl.reconfigure(dataclasses.replace(cfg, pulse_period=(0.0,) * 8))   # every pulse off
    assert ctrl.telemetry.pulses_on == before
    ctrl.update(0.001, Q_STAND, np.zeros(7), [FREE, LOADED])
    assert not any(ctrl.telemetry.pulses_on)
