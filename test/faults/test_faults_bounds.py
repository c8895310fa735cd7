# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
What input can cost is bounded, and values that must be finite have an upper bound.

Issue 27 items 12 and 15: a YAML alias bomb and a key given twice in a params or study file, a
nesting deep enough to overflow PyYAML's recursion, ``--duration 1e300``, a driver configuration
whose watchdog or temperature limit can never trip, a torque clamp no actuator can give, and a
NaN temperature in the hardware emulator. In process; a check that would hang is cut by an
alarm so the test fails instead.
"""
import contextlib
import signal

from dodo_sim.hardware.config import DriverConfig
from dodo_sim.tools import hop_runner
import pytest

#: nine levels of nine aliases in one flow value: 9^9 = 387 million strings in 400 bytes
ALIAS_BOMB = '[&a [' + ', '.join(['x'] * 9) + ']' + ''.join(
    f', &{name} [' + ', '.join([f'*{prev}'] * 9) + ']'
    for prev, name in zip('abcdefgh', 'bcdefghi')) + ']'


@contextlib.contextmanager
def deadline(seconds: int):
    """Fail (TimeoutError) a call that takes longer than ``seconds``."""
    def expired(*_):
        raise TimeoutError(f'still running after {seconds} s')
    previous = signal.signal(signal.SIGALRM, expired)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def _hop(tmp_path, capfd, args) -> str:
    """Run ``dodo hop`` in process (no_start: nothing may start); return its one error line."""
    with deadline(60):
        code = hop_runner.main(args + ['--no-plots', '--runs-dir', str(tmp_path / 'runs')])
    captured = capfd.readouterr()
    lines = captured.err.strip().splitlines()
    assert code == 2, captured
    assert len(lines) == 1 and lines[0].startswith('dodo hop: error: '), captured
    return lines[0]


# -- YAML --------------------------------------------------------------------------------------

def test_an_alias_bomb_in_a_params_file_is_refused_in_one_line(tmp_path, capfd, no_start):
    params = tmp_path / 'bomb.yaml'
    params.write_text('simulator:\n  ros__parameters:\n    push_times: ' + ALIAS_BOMB + '\n')
    line = _hop(tmp_path, capfd, ['--params-file', str(params)])
    assert 'aliases' in line and str(params) in line


def test_a_key_given_twice_in_a_params_file_is_refused_naming_it(tmp_path, capfd, no_start):
    params = tmp_path / 'twice.yaml'
    params.write_text('controller:\n  ros__parameters:\n    apex_height: 1.1\n'
                      '    target_velocity: 0.5\n    apex_height: 0.9\n')
    line = _hop(tmp_path, capfd, ['--params-file', str(params)])
    assert "key 'apex_height' is given twice (lines 3 and 5)" in line


def test_a_section_given_twice_in_a_params_file_is_refused(tmp_path, capfd, no_start):
    params = tmp_path / 'sections.yaml'
    params.write_text('controller:\n  ros__parameters: {apex_height: 1.1}\n'
                      'controller:\n  ros__parameters: {apex_height: 0.9}\n')
    assert "key 'controller' is given twice" in _hop(tmp_path, capfd,
                                                     ['--params-file', str(params)])


def test_deep_nesting_in_a_params_file_is_one_line_not_a_recursion_error(
        tmp_path, capfd, no_start):
    params = tmp_path / 'deep.yaml'
    params.write_text('controller:\n  ros__parameters:\n    apex_height: ' + '[' * 5000 +
                      ']' * 5000 + '\n')
    assert 'nested deeper than' in _hop(tmp_path, capfd, ['--params-file', str(params)])


def _optimize_error(capsys, study) -> str:
    from dodo_sim.tools import optimize
    with deadline(60):
        code = optimize.main([str(study), '--report-only'])
    captured = capsys.readouterr()
    lines = captured.err.strip().splitlines()
    assert code == 2, captured
    assert len(lines) == 1 and lines[0].startswith('dodo optimize: '), captured
    return lines[0]


STUDY = """name: bounded
robot: hopper
trials: 2
parameters:
  controller.apex_height: {low: 1.0, high: 1.2}
scenarios:
  - {kind: hop_in_place, duration: 2.0}
objectives:
  - {metric: apex_error_m, aggregate: max}
"""


def test_an_alias_bomb_in_a_study_file_is_refused_in_one_line(tmp_path, capsys):
    study = tmp_path / 'bomb.yaml'
    study.write_text(STUDY + 'fixed:\n  controller:\n    apex_height: ' + ALIAS_BOMB + '\n')
    assert 'aliases' in _optimize_error(capsys, study)


def test_a_key_given_twice_in_a_study_file_is_refused_naming_it(tmp_path, capsys):
    study = tmp_path / 'twice.yaml'
    study.write_text(STUDY + 'trials: 50\n')
    assert "key 'trials' is given twice (lines 3 and 10)" in _optimize_error(capsys, study)


def test_the_yaml_loader_keeps_merge_keys_and_small_aliases():
    from dodo_sim.safe_yaml import load_yaml
    data = load_yaml('base: &b {kp: 1, kd: 2}\nleft: {<<: *b, kp: 3}\nright: *b\n', 'f')
    assert data == {'base': {'kp': 1, 'kd': 2}, 'left': {'kp': 3, 'kd': 2},
                    'right': {'kp': 1, 'kd': 2}}


def test_a_recursive_alias_is_refused():
    from dodo_sim.safe_yaml import load_yaml, YamlInputError
    with pytest.raises(YamlInputError, match='its own anchor'):
        load_yaml('a: &a [1, *a]\n', 'f')


# -- --duration --------------------------------------------------------------------------------

@pytest.mark.parametrize('duration, words', [('1e300', ['1e+300', 'longer than']),
                                             ('nan', ['nan']), ('inf', ['inf']),
                                             ('-2', ['-2'])])
def test_a_duration_no_run_can_stamp_is_refused(tmp_path, capfd, no_start, duration, words):
    line = _hop(tmp_path, capfd, ['--duration', duration])
    assert '--duration' in line and all(w in line for w in words), line


@pytest.mark.parametrize('duration', ['inf', '1e300', 'nan'])
def test_dodo_demo_refuses_a_duration_it_cannot_run(capsys, duration):
    from dodo_sim.tools import demo
    assert demo.main(['--duration', duration]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith('dodo demo: error: --duration'), err


# -- upper bounds of the driver configuration ----------------------------------------------------

@pytest.mark.parametrize('values, words', [
    ({'max_torques': (1e300, 1e300)}, ['max_torques', 'AK10-9', '260 N*m']),
    ({'max_torques': (300.0, 100.0)}, ['max_torques', 'hip']),
    ({'command_timeout': 1e300}, ['command_timeout', '(0, 1]']),
    ({'command_timeout': 5.0}, ['command_timeout']),
    ({'temperature_limit': 1e9}, ['temperature_limit', '127']),
    ({'max_consecutive_missed': 10**9}, ['max_consecutive_missed']),
    ({'stuck_reading_time': 1e6}, ['stuck_reading_time']),
])
def test_a_driver_value_that_disarms_a_protection_is_refused(values, words):
    with pytest.raises(ValueError) as info:
        DriverConfig(**values)
    assert all(w in str(info.value) for w in words), str(info.value)


def test_the_example_driver_values_stay_valid():
    config = DriverConfig(max_torques=(250.0, 250.0), command_timeout=0.05,
                          temperature_limit=85.0)
    assert config.max_torques == (250.0, 250.0)


def test_the_cog_path_marker_is_bounded():
    from dodo_sim.ros.node_config import ControllerNodeConfig
    with pytest.raises(ValueError, match='cog_path_points'):
        ControllerNodeConfig(cog_path_points=10**9)


# -- the hardware emulator on a NaN temperature -------------------------------------------------

def _rig(urdf_xml, protocols=None):
    from dodo_sim.hardware.emulated_rig import EmulatedRig
    from dodo_sim.hardware.emulator import EmulatorConfig
    from dodo_sim.simulator import SimConfig, Simulator
    sim = Simulator(urdf_xml, SimConfig(initial_q=(0.0, 1.2, 0.3, -0.6)))
    driver = {'hardware': 'emulated'}
    if protocols == 'odrive':
        driver.update(protocols=('odrive_can_simple',) * 2, can_ids=(0, 1),
                      models=('ODrivePro-M8325s',) * 2, gear_ratios=(9.0, 9.0),
                      torque_constants=(0.0827, 0.0827))
    return EmulatedRig(sim, DriverConfig(**driver), EmulatorConfig())


@pytest.mark.parametrize('protocols', ['mit', 'odrive'])
def test_a_nan_temperature_faults_the_actuator_instead_of_crashing(urdf_xml, protocols):
    from dodo_sim.hardware.safety import SafetyState
    rig = _rig(urdf_xml, protocols)
    try:
        for _ in range(150):
            rig.step([0.0, 0.0])
        assert rig.driver.safety.state is SafetyState.ENABLED
        rig.emulator.set_temperature('hip', float('nan'))
        for _ in range(150):
            rig.step([0.0, 0.0])
        assert rig.driver.safety.state is SafetyState.FAULT
        reason = rig.driver.safety.reason.lower()
        assert 'hip' in reason and ('over temperature' in reason or 'over_temp' in reason)
    finally:
        rig.close()


def test_a_nan_ambient_temperature_is_refused():
    from dodo_sim.hardware.emulator import EmulatorConfig
    with pytest.raises(ValueError, match='ambient_temperature'):
        EmulatorConfig(ambient_temperature=float('nan'))
