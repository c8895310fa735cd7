# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
``dodo hop`` refuses bad input before anything starts: exit code 2 and one clear line.

Table-driven over every kind of input a user gives (options, params file, URDF, set-points,
directories, ROS domain). In-process, with process start-up replaced by a failure, so a row that
got past the checks would show; two rows also go through the real entry point.
"""
import os
from pathlib import Path
import subprocess
import sys

from dodo_sim.ros import domains
from dodo_sim.tools import hop_runner
import pytest

VALID = """
/**:
  ros__parameters:
    use_sim_time: true
controller:
  ros__parameters:
    apex_height: 1.2
"""


def params(text):
    return lambda tmp: _write(tmp / 'p.yaml', text)


def _write(path, text):
    path.write_text(text)
    return path


def read_only_dir(tmp: Path) -> Path:
    """
    Return a directory nobody can create entries in.

    As root, chmod does not stop writes: then it is a read-only pseudo file system.
    """
    ro = tmp / 'ro'
    ro.mkdir()
    ro.chmod(0o555)
    probe = ro / 'probe'
    try:
        probe.mkdir()
    except OSError:
        return ro
    probe.rmdir()
    return Path('/sys')          # sysfs: mkdir fails with EPERM, even for root


# (id, argv builder(tmp) -> list, env changes, words the one line must contain)
ROWS = [
    ('duration-inf', lambda t: ['--duration', 'inf'], {}, ['--duration', 'inf']),
    ('duration-nan', lambda t: ['--duration', 'nan'], {}, ['--duration', 'nan']),
    ('duration-zero', lambda t: ['--duration', '0'], {}, ['--duration', '> 0']),
    ('duration-negative', lambda t: ['--duration', '-1'], {}, ['--duration']),
    ('duration-not-a-number', lambda t: ['--duration', 'abc'], {}, ['--duration', 'abc']),
    ('unknown-option', lambda t: ['--frobnicate'], {}, ['--frobnicate']),
    ('plots-and-no-plots', lambda t: ['--plots', str(t / 'p'), '--no-plots'], {},
     ['--no-plots']),
    ('wall-timeout-inf', lambda t: ['--wall-timeout', 'inf'], {}, ['--wall-timeout']),
    ('bag-exists', lambda t: (t / 'b').mkdir() or ['--bag', str(t / 'b')], {},
     ['exists already']),
    ('bag-parent-is-a-file', lambda t: _write(t / 'f', '') and ['--bag', str(t / 'f' / 'b')],
     {}, ['not a directory']),
    ('bag-parent-read-only', lambda t: ['--bag', str(read_only_dir(t) / 'sub' / 'b')], {},
     ['cannot write']),
    ('runs-dir-is-a-file', lambda t: _write(t / 'f', '') and ['--runs-dir', str(t / 'f')], {},
     ['not a directory']),
    ('plots-parent-is-a-file',
     lambda t: _write(t / 'f', '') and ['--bag', str(t / 'b'), '--plots', str(t / 'f' / 'p')],
     {}, ['plots directory', 'not a directory']),
    ('params-file-missing', lambda t: ['--params-file', str(t / 'nope.yaml')], {},
     ['not found']),
    ('params-file-not-yaml', lambda t: ['--params-file', str(params('simulator: [1, 2\n')(t))],
     {}, ['not valid YAML']),
    ('params-unknown-key',
     lambda t: ['--params-file',
                str(params('simulator:\n  ros__parameters: {frction: 0.5}\n')(t))],
     {}, ['frction']),
    ('params-bad-integrator',
     lambda t: ['--params-file',
                str(params('simulator:\n  ros__parameters: {integrator: rk45}\n')(t))],
     {}, ['integrator']),
    ('params-bad-type',
     lambda t: ['--params-file',
                str(params('controller:\n  ros__parameters: {apex_height: high}\n')(t))],
     {}, ['apex_height']),
    ('params-bad-policy',
     lambda t: ['--params-file',
                str(params('controller:\n  ros__parameters: {flight_policy: teleport}\n')(t))],
     {}, ['flight_policy']),
    ('apex-too-high',
     lambda t: ['--params-file',
                str(params('controller:\n  ros__parameters: {apex_height: 5.0}\n')(t))],
     {}, ['apex_height', '5.0', 'feasible']),
    ('apex-too-low',
     lambda t: ['--params-file',
                str(params('controller:\n  ros__parameters: {apex_height: 0.3}\n')(t))],
     {}, ['apex_height', '0.3', 'feasible']),
    ('urdf-not-a-robot',
     lambda t: ['--params-file', str(params(
         "simulator:\n  ros__parameters: {robot_description: '<robot name=\"x\"/>'}\n")(t))],
     {}, ['URDF']),
    ('urdf-file-missing',
     lambda t: ['--params-file', str(params(
         f"simulator:\n  ros__parameters: {{robot_description: '{t}/none.urdf'}}\n")(t))],
     {}, ['not found']),
    ('domain-id-out-of-range', lambda t: ['--domain-id', '999'], {}, ['999', 'outside']),
    ('ros-domain-id-not-a-number', lambda t: [], {'ROS_DOMAIN_ID': 'abc'}, ['ROS_DOMAIN_ID',
                                                                            'abc']),
    ('auto-domain-range-bad', lambda t: [], {'DODO_HOP_DOMAINS': '9'}, ['DODO_HOP_DOMAINS']),
]


@pytest.mark.parametrize('argv, env, words', [r[1:] for r in ROWS], ids=[r[0] for r in ROWS])
def test_bad_input_is_one_clear_line_and_exit_2(tmp_path, monkeypatch, capfd, no_start,
                                                argv, env, words):
    monkeypatch.chdir(tmp_path)
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    args = argv(tmp_path)
    if '--bag' not in args and '--runs-dir' not in args:
        args += ['--runs-dir', str(tmp_path / 'runs')]
    code = hop_runner.main(args + ['--no-plots'] if '--plots' not in args else args)
    captured = capfd.readouterr()          # file-descriptor level: C++ output counts too
    lines = captured.err.strip().splitlines()
    assert code == 2, captured
    assert len(lines) == 1 and lines[0].startswith('dodo hop: error: '), captured
    for word in words:
        assert word in lines[0], (word, lines[0])
    assert captured.out == ''
    assert not (tmp_path / 'runs').exists()        # nothing was created either


def test_a_domain_held_by_another_run_is_refused(tmp_path, capsys, no_start):
    domain = 40 + os.getpid() % 30
    with domains.reserve(domain):
        code = hop_runner.main(['--domain-id', str(domain), '--bag', str(tmp_path / 'b'),
                                '--no-plots'])
    line = capsys.readouterr().err.strip()
    assert code == 2 and line.count('\n') == 0
    assert f'ROS domain {domain} is in use by another run' in line


def test_a_good_command_line_passes_the_checks(tmp_path, monkeypatch, capsys, no_start):
    """Control row: the same path with valid input gets as far as starting a process."""
    path = _write(tmp_path / 'p.yaml', VALID)
    with pytest.raises(AssertionError, match='a process was started'):
        hop_runner.main(['--params-file', str(path), '--bag', str(tmp_path / 'b'),
                         '--no-plots', '--duration', '0.5'])
    assert 'ROS domain' in capsys.readouterr().out


@pytest.mark.parametrize('args, words', [
    (['--duration', 'inf'], ['--duration']),
    (['--domain-id', '-3'], ['--domain-id']),
])
def test_the_real_entry_point_prints_no_traceback(tmp_path, args, words):
    proc = subprocess.run([sys.executable, '-m', 'dodo_sim.tools.cli', 'hop', *args,
                           '--runs-dir', str(tmp_path)],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2, proc
    assert proc.stdout == '' and 'Traceback' not in proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith('dodo hop: error:')
    for word in words:
        assert word in lines[0]
