# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
Wire format of the hardware path.

The DBC bit layout against the MIT-mode reference layout (Ben Katz's Mini Cheetah firmware as used
by mini-cheetah-tmotor-python-can and TMotorCANControl), special frames, the float <-> count
mapping at every range edge, and the sensor board frames.
"""
import math

from dodo_sim.hardware.protocol import (BoardSample, counts_to_float, FIELD_BITS,
                                        firmware_float_to_counts, float_to_counts, lsb, MitCommand,
                                        MODELS, POSITION_BITS, WireFormat)
from hypothesis import given, settings
from hypothesis import strategies as st
import pytest

WIRE = WireFormat()
AK80_9 = MODELS['AK80-9']


def reference_pack_command(p, v, kp, kd, t):
    """
    Return the reference packing of the MIT command, written from its published description.

    The layout is [p15-8][p7-0][v11-4][v3-0 kp11-8][kp7-0][kd11-4][kd3-0 t11-8][t7-0].
    """
    return bytes([p >> 8, p & 0xFF, v >> 4, ((v & 0xF) << 4) | (kp >> 8), kp & 0xFF, kd >> 4,
                  ((kd & 0xF) << 4) | (t >> 8), t & 0xFF])


def reference_unpack_reply(data):
    """
    Unpack a reply by the reference layout.

    The layout is [id][p15-8][p7-0][v11-4][v3-0 i11-8][i7-0][temp][error].
    """
    return (data[0], (data[1] << 8) | data[2], (data[3] << 4) | (data[4] >> 4),
            ((data[4] & 0xF) << 8) | data[5], data[6], data[7])


def reference_float_to_uint(x, x_min, x_max, bits):
    """Return the firmware's float_to_uint (truncation; input already clamped)."""
    return int((x - x_min) * ((1 << bits) - 1) / (x_max - x_min))


def test_command_bit_layout_matches_reference():
    data = WIRE.encode_command_counts(0x1234, 0x567, 0x89A, 0xBCD, 0xEF0)
    assert data == bytes.fromhex('123456789abcdef0')
    assert data == reference_pack_command(0x1234, 0x567, 0x89A, 0xBCD, 0xEF0)


@given(st.integers(0, 0xFFFF), st.integers(0, 0xFFF), st.integers(0, 0xFFF),
       st.integers(0, 0xFFF), st.integers(0, 0xFFF))
def test_command_layout_any_counts(p, v, kp, kd, t):
    data = WIRE.encode_command_counts(p, v, kp, kd, t)
    assert data == reference_pack_command(p, v, kp, kd, t)
    assert WIRE.decode_command_counts(data) == (p, v, kp, kd, t)


@given(st.integers(0, 0x7F), st.integers(0, 0xFFFF), st.integers(0, 0xFFF),
       st.integers(0, 0xFFF), st.integers(-20, 127), st.integers(0, 6))
def test_reply_layout_any_counts(motor_id, p, v, i, temp, error):
    data = WIRE.encode_reply_counts(motor_id, p, v, i, temp, error)
    assert reference_unpack_reply(data) == (motor_id, p, v, i, temp & 0xFF, error)
    reply = WIRE.decode_reply(data, {motor_id: AK80_9})
    assert reply.counts == (p, v, i)
    assert (reply.motor_id, reply.temperature, reply.error_code) == (motor_id, temp, error)


def test_special_frames_are_the_documented_bytes():
    assert WIRE.special_frame('enable') == bytes.fromhex('fffffffffffffffc')
    assert WIRE.special_frame('disable') == bytes.fromhex('fffffffffffffffd')
    assert WIRE.special_frame('zero') == bytes.fromhex('fffffffffffffffe')
    assert WIRE.special_kind(bytes.fromhex('fffffffffffffffd')) == 'disable'


def test_no_command_aliases_a_special_frame():
    r = AK80_9
    data = WIRE.encode_command(MitCommand(r.p_max, r.v_max, r.kp_max, r.kd_max, r.t_max), r)
    assert WIRE.special_kind(data) is None
    assert data[:2] == b'\xff\xfe'


def test_known_physical_command_matches_reference_within_one_count():
    # AK80-9: p = 1 rad, v = -2 rad/s, kp = 20, kd = 1, t = 3 N*m
    r = AK80_9
    values = (1.0, -2.0, 20.0, 1.0, 3.0)
    ranges = ((r.p_min, r.p_max, 16), (r.v_min, r.v_max, 12), (r.kp_min, r.kp_max, 12),
              (r.kd_min, r.kd_max, 12), (r.t_min, r.t_max, 12))
    ours = WIRE.command_counts(MitCommand(*values), r)
    reference = [reference_float_to_uint(x, lo, hi, b) for x, (lo, hi, b) in zip(values, ranges)]
    assert all(0 <= a - b <= 1 for a, b in zip(ours, reference)), (ours, reference)
    assert WIRE.encode_command(MitCommand(*values), r) == reference_pack_command(*ours)


def test_firmware_truncation_equals_reference():
    for x in (-12.5, -3.3, 0.0, 0.1234, 7.77, 12.4999):
        assert firmware_float_to_counts(x, -12.5, 12.5, 16) == \
            reference_float_to_uint(x, -12.5, 12.5, 16)


def test_decoding_is_the_reference_uint_to_float():
    for counts in (0, 1, 2047, 2048, 4094, 4095):
        assert counts_to_float(counts, -18.0, 18.0, 12) == pytest.approx(
            counts * 36.0 / 4095 - 18.0, abs=1e-12)


FIELDS = [(name, lo, hi, bits) for model in MODELS.values() for name, lo, hi, bits in (
    ('position', model.p_min, model.p_max, POSITION_BITS),
    ('velocity', model.v_min, model.v_max, FIELD_BITS),
    ('kp', model.kp_min, model.kp_max, FIELD_BITS),
    ('kd', model.kd_min, model.kd_max, FIELD_BITS),
    ('torque', model.t_min, model.t_max, FIELD_BITS))]


@pytest.mark.parametrize('name,lo,hi,bits', FIELDS)
def test_range_edges_map_to_the_end_counts(name, lo, hi, bits):
    top = (1 << bits) - 1
    assert float_to_counts(lo, lo, hi, bits) == 0
    assert float_to_counts(hi, lo, hi, bits) == top
    assert float_to_counts(lo - 1e3, lo, hi, bits) == 0          # clamped
    assert float_to_counts(hi + 1e3, lo, hi, bits) == top
    assert counts_to_float(0, lo, hi, bits) == lo
    assert counts_to_float(top, lo, hi, bits) == pytest.approx(hi, abs=1e-12)


@settings(max_examples=300)
@given(st.sampled_from(FIELDS), st.floats(0.0, 1.0))
def test_round_trip_error_is_at_most_half_a_count(field, fraction):
    _, lo, hi, bits = field
    x = lo + fraction * (hi - lo)
    back = counts_to_float(float_to_counts(x, lo, hi, bits), lo, hi, bits)
    assert abs(back - x) <= 0.5 * lsb(lo, hi, bits) * (1 + 1e-9)


@settings(max_examples=300)
@given(st.sampled_from(FIELDS), st.floats(0.0, 1.0))
def test_firmware_round_trip_is_below_by_less_than_a_count(field, fraction):
    _, lo, hi, bits = field
    x = lo + fraction * (hi - lo)
    back = counts_to_float(firmware_float_to_counts(x, lo, hi, bits), lo, hi, bits)
    assert -lsb(lo, hi, bits) * (1 + 1e-9) < back - x <= 1e-9


def test_zero_torque_is_half_a_count_off():
    r = AK80_9
    counts = float_to_counts(0.0, r.t_min, r.t_max, 12)
    assert abs(counts_to_float(counts, r.t_min, r.t_max, 12)) == pytest.approx(
        0.5 * lsb(r.t_min, r.t_max, 12), rel=1e-9)


@given(st.integers(-(1 << 23), (1 << 23) - 1), st.integers(-(1 << 23), (1 << 23) - 1),
       st.integers(0, 255), st.floats(-6.5, 6.5), st.floats(-6.5, 6.5),
       st.floats(-16000, 16000), st.floats(-16000, 16000), st.booleans(), st.booleans())
def test_board_frames_round_trip(yaw, pitch, seq, yaw_rate, pitch_rate, fx, fz, switch, err):
    sample = BoardSample(seq, yaw, pitch, yaw_rate, pitch_rate, fx, fz, switch, False, err,
                         False)
    (id_a, angles), (id_b, rates) = WIRE.encode_board(sample)
    assert (id_a, id_b) == (WIRE.boom_angles_id, WIRE.boom_rates_id)
    back = WIRE.board_sample(WIRE.decode_boom_angles(angles), WIRE.decode_boom_rates(rates))
    assert (back.sequence, back.yaw_counts, back.pitch_counts) == (seq, yaw, pitch)
    assert (back.foot_switch, back.yaw_encoder_error) == (switch, err)
    assert back.yaw_rate == pytest.approx(yaw_rate, abs=1e-4 + 1e-9)
    assert back.pitch_rate == pytest.approx(pitch_rate, abs=1e-4 + 1e-9)
    assert back.foot_force_x == pytest.approx(fx, abs=0.25 + 1e-9)
    assert back.foot_force_z == pytest.approx(fz, abs=0.25 + 1e-9)


def test_board_force_saturates_instead_of_failing():
    sample = BoardSample(1, 0, 0, 0.0, 0.0, 0.0, 1e6, True, True, False, False)
    _, (_, rates) = WIRE.encode_board(sample)
    assert WIRE.decode_boom_rates(rates)['foot_force_z'] == pytest.approx(32767 * 0.5)


def test_dbc_is_installed_with_the_package():
    import importlib.resources
    assert importlib.resources.files('dodo_sim.hardware').joinpath('dodo_can.dbc').is_file()
    assert math.isclose(WIRE.database.get_message_by_name('BoomRatesFoot')
                        .get_signal_by_name('yaw_rate').scale, 0.0002)


def test_hardware_modules_import_no_rclpy():
    import subprocess
    import sys
    code = ('import sys\n'
            'import dodo_sim.hardware.protocol, dodo_sim.hardware.config, '
            'dodo_sim.hardware.safety, dodo_sim.hardware.backend, dodo_sim.hardware.driver, '
            'dodo_sim.hardware.emulator, dodo_sim.hardware.odrive\n'
            'assert "rclpy" not in sys.modules, "a hardware core module imported rclpy"')
    subprocess.run([sys.executable, '-c', code], check=True)
