# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
``dodo optimize`` storages under a full disk, a kill mid-write and a database that stops.

Issue 27 items 4 and 13: a journal whose last record a full disk or a kill cut mid-line made
resuming write a record onto the torn one (a line no reader parses again: resuming and
``--report-only`` then died with ``JSONDecodeError`` for good); a full disk during a study, a
read-only journal and a PostgreSQL server that stops mid-study ended in 100-line tracebacks (the
database one saying "invalid data in the commit"). The robot is the toy module
(test/toy_robot_scenarios.py), so the cost is the storage's.
"""
import errno
import os
from pathlib import Path
import subprocess
import sys
import textwrap
import time

from dodo_sim.tools import optimize
from dodo_sim.tools.optimize_run import open_study
from dodo_sim.tools.optimize_study import load_study
import pytest

TEST_DIR = Path(__file__).resolve().parents[1]     # the toy robot module


def toy_study(tmp_path, trials=4, delay_s=0.0) -> Path:
    path = tmp_path / 'study.yaml'
    path.write_text(textwrap.dedent(f"""
        name: toy
        robot: toy_robot_scenarios
        sampler: random
        seed: 3
        trials: {trials}
        parameters:
          controller:
            gain: {{low: -5.0, high: 5.0}}
        scenarios: [{{kind: faulty, delay_s: {delay_s}}}]
        objectives:
          - {{metric: cost}}
        """))
    return path


def run(capsys, study, journal, *extra) -> tuple:
    """Run ``dodo optimize`` in process; return (exit code, stdout, stderr lines)."""
    code = optimize.main([str(study), '--storage', f'journal:{journal}', '--out',
                          str(journal.parent / f'out{time.monotonic_ns()}'), '--no-progress',
                          '--heartbeat-s', '1', *extra])
    captured = capsys.readouterr()
    return code, captured.out, [line for line in captured.err.splitlines() if line.strip()]


def complete_trials(study, journal) -> int:
    opt = open_study(load_study(study), f'journal:{journal}', create=False)
    return sum(1 for t in opt.get_trials(deepcopy=False) if t.state.name == 'COMPLETE')


def tear_last_record(journal: Path, cut: int = 40) -> None:
    """Cut the journal's last record mid-line (a full disk or a kill during its write)."""
    size = journal.stat().st_size
    os.truncate(journal, size - cut)
    assert not journal.read_bytes().endswith(b'\n')


def test_resuming_a_journal_with_a_torn_last_record_works(tmp_path, capsys):
    study, journal = toy_study(tmp_path), tmp_path / 'study.journal'
    assert run(capsys, study, journal)[0] == 0
    tear_last_record(journal)
    code, _, err = run(capsys, study, journal, '--trials', '6')
    assert code == 0, err
    assert any('dropped a torn last record' in line for line in err), err
    assert not any('Traceback' in line or 'JSONDecodeError' in line for line in err), err
    assert complete_trials(study, journal) >= 6
    assert journal.read_bytes().endswith(b'\n')
    # the journal stays readable for good: the report of it works too
    code, out, err = run(capsys, study, journal, '--report-only')
    assert code == 0, err
    assert '6 complete' in out or '7 complete' in out


def test_report_only_on_a_torn_journal_says_so_in_one_line(tmp_path, capsys):
    study, journal = toy_study(tmp_path), tmp_path / 'study.journal'
    assert run(capsys, study, journal)[0] == 0
    tear_last_record(journal)
    code, out, err = run(capsys, study, journal, '--report-only')
    assert code == 0, err
    assert len(err) == 1 and 'dropped a torn last record' in err[0], err


def test_a_journal_already_damaged_by_a_resume_on_a_torn_record_is_repaired(tmp_path, capsys):
    # what main wrote when it resumed on a torn journal: the torn record with the next one
    # appended on the same line
    study, journal = toy_study(tmp_path), tmp_path / 'study.journal'
    assert run(capsys, study, journal)[0] == 0
    lines = journal.read_bytes().splitlines(keepends=True)
    lines[-2] = lines[-2][:len(lines[-2]) // 2] + lines[-1]
    journal.write_bytes(b''.join(lines[:-1]))
    code, out, err = run(capsys, study, journal, '--trials', '6')
    assert code == 0, err
    assert any('repaired 1 record' in line for line in err), err
    assert complete_trials(study, journal) >= 6


def test_a_journal_damaged_beyond_repair_is_one_line(tmp_path, capsys):
    study, journal = toy_study(tmp_path), tmp_path / 'study.journal'
    assert run(capsys, study, journal)[0] == 0
    lines = journal.read_bytes().splitlines(keepends=True)
    lines[2] = b'garbage\n'
    journal.write_bytes(b''.join(lines))
    code, _, err = run(capsys, study, journal, '--report-only')
    assert code == 2
    assert len(err) == 1 and 'line 3 is not a journal record' in err[0], err


def _fill_the_disk_after(monkeypatch, journal: Path, free_bytes: int):
    """Make writes to ``journal`` fail with ENOSPC once ``free_bytes`` more were written."""
    real_write = os.write
    left = [free_bytes]

    def write(fd, data):
        try:
            target = os.readlink(f'/proc/self/fd/{fd}')
        except OSError:
            target = ''
        if target != str(journal):
            return real_write(fd, data)
        if left[0] <= 0:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        n = real_write(fd, bytes(data[:left[0]]))    # a short write, as a filling disk gives
        left[0] -= n
        return n
    monkeypatch.setattr(os, 'write', write)


def test_a_full_disk_mid_study_is_one_line_and_leaves_the_journal_whole(
        tmp_path, capsys, monkeypatch):
    study, journal = toy_study(tmp_path, trials=40), tmp_path / 'study.journal'
    assert run(capsys, study, journal, '--trials', '2')[0] == 0
    _fill_the_disk_after(monkeypatch, journal, free_bytes=2500)
    code, _, err = run(capsys, study, journal)
    monkeypatch.undo()
    assert code == 1
    assert len(err) == 1, err
    assert 'could not be written (No space left on device): free some space' in err[0]
    assert str(journal) in err[0]
    assert journal.read_bytes().endswith(b'\n')         # no torn record left behind
    done = complete_trials(study, journal)
    # space again: the same command resumes the study
    code, _, err = run(capsys, study, journal, '--trials', str(done + 2))
    assert code == 0, err
    assert complete_trials(study, journal) >= done + 2


@pytest.fixture
def small_disk(tmp_path):
    """Yield a 64 KiB tmpfs (needs root and CAP_SYS_ADMIN, else the test is skipped)."""
    mount = tmp_path / 'small'
    mount.mkdir()
    if subprocess.run(['mount', '-t', 'tmpfs', '-o', 'size=64k', 'tmpfs', str(mount)],
                      capture_output=True).returncode != 0:
        pytest.skip('cannot mount a tmpfs here (needs root)')
    try:
        yield mount
    finally:
        subprocess.run(['umount', '-l', str(mount)], check=True)


def test_a_real_full_disk_is_one_line_and_the_study_resumes_after(
        tmp_path, capsys, small_disk):
    study, journal = toy_study(tmp_path, trials=5000), small_disk / 'study.journal'
    code, _, err = run(capsys, study, journal)
    assert code == 1
    assert len(err) == 1 and 'No space left on device' in err[0], err
    assert journal.read_bytes().endswith(b'\n')
    done = complete_trials(study, journal)
    assert done > 10
    subprocess.run(['mount', '-o', 'remount,size=1m', str(small_disk)], check=True)
    code, _, err = run(capsys, study, journal, '--trials', str(done + 3))
    assert code == 0, err
    assert complete_trials(study, journal) >= done + 3


def test_a_read_only_journal_is_refused_before_any_trial_and_still_reported(
        tmp_path, capsys, monkeypatch):
    study, journal = toy_study(tmp_path), tmp_path / 'study.journal'
    assert run(capsys, study, journal)[0] == 0
    real_open = os.open

    def read_only(path, flags, *args, **kwargs):
        if str(path) == str(journal) and flags & (os.O_WRONLY | os.O_RDWR):
            raise OSError(errno.EROFS, os.strerror(errno.EROFS), str(path))
        return real_open(path, flags, *args, **kwargs)
    monkeypatch.setattr(os, 'open', read_only)        # root ignores chmod: a read-only mount
    code, _, err = run(capsys, study, journal, '--trials', '6')
    assert code == 2
    assert len(err) == 1 and 'cannot be written (Read-only file system)' in err[0], err
    code, out, err = run(capsys, study, journal, '--report-only')
    assert code == 0, err
    assert '4 complete' in out


@pytest.mark.slow
def test_postgresql_stopping_mid_study_is_one_line_naming_the_storage(tmp_path):
    from optimize_support import postgres_server, postgres_url
    server = postgres_server()
    pg = next(server)
    try:
        url = postgres_url(pg, 'stops').replace('postgres:@', 'postgres:s3cret@')
        study = toy_study(tmp_path, trials=200, delay_s=0.2)
        env = {**os.environ, 'PYTHONPATH': os.pathsep.join(
            [str(TEST_DIR), os.environ.get('PYTHONPATH', '')])}
        proc = subprocess.Popen([sys.executable, '-m', 'dodo_sim.tools.cli', 'optimize',
                                 str(study), '--storage', url, '--out', str(tmp_path / 'out'),
                                 '--no-progress', '--heartbeat-s', '1', '--workers', '2'],
                                env=env,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            try:
                if complete_trials_rdb(study, url) >= 2:
                    break
            except Exception:           # the study is not created yet
                pass
            time.sleep(0.2)
        else:
            raise AssertionError('no trial completed')
    finally:
        next(server, None)              # stop the server mid-study
    out, err = proc.communicate(timeout=120)
    lines = [line for line in err.splitlines() if line.strip()]
    assert proc.returncode == 1, err
    assert len(lines) == 1, err
    assert lines[0].startswith('dodo optimize: storage postgresql+psycopg://postgres:***@')
    assert 'failed' in lines[0] and 'resumes' in lines[0]
    assert 'invalid data in the commit' not in err
    assert 's3cret' not in out + err


def complete_trials_rdb(study, url) -> int:
    import optuna
    optuna.logging.set_verbosity(optuna.logging.ERROR)
    opt = optuna.load_study(study_name='toy', storage=url)
    return sum(1 for t in opt.get_trials(deepcopy=False) if t.state.name == 'COMPLETE')


def test_a_storage_failure_in_optunas_heartbeat_thread_prints_no_traceback(monkeypatch):
    """Before: PostgreSQL stopping mid-study printed the heartbeat thread's 90-line traceback."""
    import threading

    import sqlalchemy.exc
    from dodo_sim.tools.optimize_storage import quiet_storage_failures_in_optuna_logs
    printed = []          # what Python's own hook (here a stand-in) was given to print
    monkeypatch.setattr(threading, 'excepthook', lambda args: printed.append(args.exc_value))
    quiet_storage_failures_in_optuna_logs('postgresql+psycopg://u:s3cret@/db')

    def raise_in_thread(exc):
        def run():
            raise exc
        thread = threading.Thread(target=run)
        thread.start()
        thread.join()

    raise_in_thread(sqlalchemy.exc.OperationalError('UPDATE trials', {}, Exception('gone')))
    assert printed == []
    bug = ValueError('a bug of our own')
    raise_in_thread(bug)                # any other error is printed as before
    assert printed == [bug]
