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
from pathlib import Path
import signal
import struct
import tracemalloc

from dodo_sim.hardware.config import DriverConfig
from dodo_sim.tools import hop_runner
from process_support import deadline
import pytest

#: nine levels of nine aliases in one flow value: 9^9 = 387 million strings in 400 bytes
ALIAS_BOMB = '[&a [' + ', '.join(['x'] * 9) + ']' + ''.join(
    f', &{name} [' + ', '.join([f'*{prev}'] * 9) + ']'
    for prev, name in zip('abcdefgh', 'bcdefghi')) + ']'


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
        code = optimize.main([str(study), '--report-only', '--out', str(study.parent / 'out')])
    captured = capsys.readouterr()
    lines = captured.err.strip().splitlines()
    assert code == 2, captured
    assert len(lines) == 1 and lines[0].startswith('dodo optimize: '), captured
    return lines[0]


STUDY = """name: bounded
robot: toy_robot_scenarios
trials: 2
parameters:
  controller:
    gain: {low: -5.0, high: 5.0}
scenarios: [{kind: faulty}]
objectives:
  - {metric: cost}
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


# -- upper bounds of the simulator configuration -------------------------------------------------

@pytest.mark.parametrize('values, words', [
    ({'command_timeout': 1e300}, ['command_timeout', '60']),        # a realtime torque held
    ({'solver_max_iterations': 10**12}, ['solver_max_iterations', '100000']),   # a step's cost
    ({'max_speed': 1e300}, ['max_speed', '1e+06']),                 # divergence never caught
])
def test_a_simulator_value_that_disarms_a_check_or_costs_without_bound_is_refused(values, words):
    from dodo_sim.simulator import SimConfig
    with pytest.raises(ValueError) as info:
        SimConfig(**values)
    assert all(w in str(info.value) for w in words), str(info.value)


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


# -- decompression, memory, processes ---------------------------------------------------------

def _record(opcode: int, body: bytes) -> bytes:
    return bytes([opcode]) + struct.pack('<Q', len(body)) + body


def _string(text: str) -> bytes:
    return struct.pack('<I', len(text)) + text.encode()


def zstd_bomb_bag(directory: Path, zeros: int, declared: int) -> Path:
    """
    Return a bag directory whose MCAP file (no footer: a crashed recording) holds one chunk.

    The chunk is a zstd frame of ``zeros`` zero bytes (a few kB) that declares ``declared``
    bytes.
    """
    from bags_support import zstd_zeros_frame
    data = zstd_zeros_frame(zeros)
    chunk = (struct.pack('<QQQI', 0, 0, declared, 0) + _string('zstd')
             + struct.pack('<Q', len(data)) + data)
    directory.mkdir()
    header = _record(0x01, _string('ros2') + _string('x'))
    (directory / 'bomb.mcap').write_bytes(b'\x89MCAP0\r\n' + header + _record(0x06, chunk))
    return directory


@pytest.mark.parametrize('zeros, declared, words', [
    (300 * 2**20, 300 * 2**20, 'more than the 268435456 read'),     # over the hard limit
    (64 * 2**20, 2**20, 'declares 1048576'),                         # the frame holds more
])
def test_a_decompression_bomb_is_refused_by_bag_recover(tmp_path, capsys, zeros, declared, words):
    from dodo_sim.tools.bag_tool import main
    bag = zstd_bomb_bag(tmp_path / 'bomb', zeros, declared)
    assert (bag / 'bomb.mcap').stat().st_size < 70_000
    tracemalloc.start()
    try:
        with deadline(30):
            code = main(['recover', str(bag), '--out', str(tmp_path / 'out')])
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    out = capsys.readouterr().out
    assert code == 0                 # what could be read is rebuilt; the bomb is reported lost
    assert peak < 32 * 2**20, f'{peak / 2**20:.0f} MiB'
    lost = [line for line in out.splitlines() if 'chunk at offset' in line]
    assert len(lost) == 1 and words in lost[0], out


def test_an_lz4_chunk_longer_than_declared_is_refused():
    import lz4.frame
    from mcap.records import Chunk
    from dodo_sim.tools.bag_recover import decompress_chunk
    data = lz4.frame.compress(bytes(8 * 2**20))
    with pytest.raises(ValueError, match='longer than the 1024 bytes declared'):
        decompress_chunk(Chunk(compression='lz4', data=data, message_end_time=0,
                               message_start_time=0, uncompressed_crc=0, uncompressed_size=1024))


def test_bag_info_memory_does_not_grow_with_the_bag(tmp_path, capsys):
    import dodo_sim.physics   # noqa: F401  (imports are not what is measured)
    from dodo_sim.tools.bag_tool import main
    from dodo_sim.tools.bag_writer import OfflineBagWriter
    import numpy as np
    bag = tmp_path / 'long'
    with OfflineBagWriter(bag) as w:
        msg = w.typestore.types['sensor_msgs/msg/JointState'](
            header=w._header(0.0), name=['base_x', 'base_z', 'hip', 'knee'],
            position=np.zeros(4), velocity=np.zeros(4), effort=np.zeros(4))
        raw = w.typestore.serialize_cdr(msg, 'sensor_msgs/msg/JointState')
        for k in range(100_000):
            w.write_raw('joint_states', 'sensor_msgs/msg/JointState', raw,
                        w.log_offset_ns + k * 1_000_000)
    main(['info', str(bag)])                   # warm: lazy imports
    capsys.readouterr()
    tracemalloc.start()
    try:
        with deadline(60):
            assert main(['info', str(bag)]) == 0
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert '100000' in capsys.readouterr().out
    # main kept every message deserialized: ~150 MB here, 1.5 GB for 1e6 messages
    assert peak < 16 * 2**20, f'{peak / 2**20:.0f} MiB'


def test_workers_beyond_a_few_per_core_are_refused_unless_asked(tmp_path, capsys, monkeypatch):
    from dodo_sim.tools import optimize
    monkeypatch.setattr(optimize, 'usable_cores', lambda: 2, raising=False)
    study = tmp_path / 'study.yaml'
    study.write_text(STUDY)
    # --report-only: were the check missing, nothing would start 1000 processes here either
    assert optimize.main([str(study), '--workers', '1000', '--report-only', '--out',
                          str(tmp_path / 'o')]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and '--workers 1000 is more than 4 per core' in err[0], err
    assert '--oversubscribe' in err[0]
    assert not (tmp_path / 'o').exists()
    # asked for: the check passes (--report-only then finds no study: nothing runs here)
    code = optimize.main([str(study), '--workers', '1000', '--oversubscribe', '--report-only',
                          '--out', str(tmp_path / 'o')])
    assert code == 2 and 'no study' in capsys.readouterr().err


def test_the_live_view_throttles_the_sdk_log_of_malformed_frames(capfd):
    pytest.importorskip('foxglove')
    import re
    import time

    from dodo_sim.tools.live_view import LiveView, LOG_LINES_PER_S
    from foxglove_client import SUBPROTOCOLS
    from websockets.sync.client import connect
    view = LiveView(host='127.0.0.1', port=0)
    view.start([('/joint_states', 'sensor_msgs/msg/JointState', 'string x\n')])
    started = time.monotonic()
    try:
        # the server answers every malformed frame with a status message after it logged it,
        # from a queue of LiveView.backlog (1024) per client that drops a client falling behind:
        # frames go in rounds of 100 and each round's answers are read before the next, so
        # every frame is handled (a deadline, not a sleep)
        with connect(view.address, subprotocols=SUBPROTOCOLS, open_timeout=10) as ws:
            answered, deadline = 0, time.monotonic() + 120.0
            for sent in range(100, 3001, 100):
                for _ in range(100):
                    ws.send('{not json')          # one SDK log line each, on main
                while answered < sent:
                    reply = ws.recv(timeout=max(deadline - time.monotonic(), 0.001))
                    answered += isinstance(reply, str) and 'Invalid message' in reply
            assert answered == 3000, answered
    finally:
        view.stop()
    seconds = time.monotonic() - started
    lines = [line for line in capfd.readouterr().err.splitlines() if line.strip()]
    assert len(lines) <= LOG_LINES_PER_S * (seconds + 2) + 1, (len(lines), seconds)
    assert lines and all(line.startswith('live view: ') for line in lines), lines[:3]
    # every malformed frame is still accounted for: shown, or counted in a later line
    said = sum(int(n) for line in lines for n in re.findall(r'(\d+) more log lines', line))
    shown = sum(1 for line in lines if 'Invalid message' in line)
    assert shown + said == 3000, (shown, said, lines[-2:])


def test_the_throttle_lets_a_few_lines_a_second_through_and_counts_the_rest():
    import logging
    from dodo_sim.tools.live_view import ThrottledLog
    now = [100.2]
    throttle = ThrottledLog(per_second=3, clock=lambda: now[0])
    records = [logging.LogRecord('foxglove', logging.ERROR, 'f', 1, 'bad %d', (i,), None)
               for i in range(10)]
    shown = [throttle(r) for r in records]
    assert shown == [True] * 3 + [False] * 7 and throttle.suppressed == 7
    now[0] = 101.0
    late = logging.LogRecord('foxglove', logging.ERROR, 'f', 1, 'bad %d', (99,), None)
    assert throttle(late) and late.getMessage() == 'bad 99 (7 more log lines suppressed)'
    assert throttle.suppressed == 0


def _processes_with(marker: str) -> list:
    """Pids of live processes whose environment holds ``marker``."""
    found = []
    for environ in Path('/proc').glob('[0-9]*/environ'):
        try:
            if marker.encode() in environ.read_bytes():
                found.append(int(environ.parent.name))
        except OSError:
            pass
    return found


def test_ctrl_c_ends_precompile_at_once_in_one_line(tmp_path):
    import os
    import subprocess
    import sys
    import time
    cache = tmp_path / 'numba-cache'                 # empty: everything is compiled
    env = {**os.environ, 'NUMBA_CACHE_DIR': str(cache)}
    proc = subprocess.Popen([sys.executable, '-m', 'dodo_sim.tools.precompile'], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 120
    while not any(cache.rglob('*.nbi')) and time.monotonic() < deadline:
        time.sleep(0.1)                              # compiling (the first kernel is cached)
    assert proc.poll() is None, 'precompile ended before it was interrupted'
    interrupted = time.monotonic()
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    waited = time.monotonic() - interrupted
    lines = [line for line in err.splitlines() if line.strip()]
    assert proc.returncode == 130, err[-2000:]
    assert waited < 3.0, f'{waited:.1f} s'
    assert len(lines) == 1 and lines[0].startswith('dodo precompile: interrupted'), lines[:5]
    time.sleep(0.5)
    assert not _processes_with(str(cache)), 'a compiling process was left running'
