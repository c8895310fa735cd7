# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
Files the package writes cannot be turned against the user (issue 27 item 5).

Without ``XDG_RUNTIME_DIR`` the domain locks live in ``<tmp>/dodo_sim-<uid>``: another local user
can create that directory first, or plant a symlink at a lock's name, and the lock was opened
following symlinks, truncated and written (``victim.txt`` became ``dodo hop pid N``). Here the
temporary directory is a test folder; "another user" is uid 65534 (the tests run as root, or the
chown is skipped).
"""
import os
from pathlib import Path
import stat
import tempfile

from dodo_sim.ros import domains
from dodo_sim.tools import hop_runner
import pytest

VICTIM_TEXT = 'precious data\n'
OTHER_UID = 65534


@pytest.fixture
def shared_tmp(tmp_path, monkeypatch):
    """Return a stand-in for /tmp (sticky, world-writable), with XDG_RUNTIME_DIR unset."""
    tmp = tmp_path / 'tmp'
    tmp.mkdir()
    tmp.chmod(0o1777)
    monkeypatch.setattr(tempfile, 'tempdir', str(tmp))
    monkeypatch.delenv('XDG_RUNTIME_DIR', raising=False)
    monkeypatch.delenv('ROS_DOMAIN_ID', raising=False)
    return tmp


def _victim(tmp_path: Path) -> Path:
    victim = tmp_path / 'victim.txt'
    victim.write_text(VICTIM_TEXT)
    return victim


def _lock_dir(shared_tmp: Path) -> Path:
    return shared_tmp / f'dodo_sim-{os.getuid()}'


def _refused(explicit=5, victim: Path | None = None) -> str:
    """Reserve ``explicit``; check ``victim`` is untouched, then that it was refused."""
    try:
        domains.reserve(explicit).release()
        message = None
    except domains.DomainUnavailable as exc:
        message = str(exc)
    if victim is not None:
        assert victim.read_text() == VICTIM_TEXT, 'the lock overwrote the file a symlink named'
    assert message is not None, 'an unsafe lock directory or file was used'
    return message


def test_a_symlink_planted_at_the_lock_never_overwrites_its_target(tmp_path, shared_tmp):
    victim = _victim(tmp_path)
    directory = _lock_dir(shared_tmp)
    directory.mkdir(mode=0o700)
    (directory / 'domain-5.lock').symlink_to(victim)
    message = _refused(5, victim)
    assert 'symlink' in message and 'domain-5.lock' in message


def test_a_lock_dir_made_by_another_user_is_refused(tmp_path, shared_tmp):
    if os.getuid() != 0:
        pytest.skip('needs root to give the directory to another user')
    victim = _victim(tmp_path)
    directory = _lock_dir(shared_tmp)
    directory.mkdir(mode=0o777)
    directory.chmod(0o777)
    (directory / 'domain-5.lock').symlink_to(victim)
    os.chown(directory, OTHER_UID, OTHER_UID)
    message = _refused(5, victim)
    assert f'belongs to user id {OTHER_UID}' in message


def test_a_world_writable_lock_dir_is_refused(tmp_path, shared_tmp):
    directory = _lock_dir(shared_tmp)
    directory.mkdir()
    directory.chmod(0o777)
    assert 'writable by others' in _refused(5)


def test_a_lock_dir_that_is_a_symlink_is_refused(tmp_path, shared_tmp):
    elsewhere = tmp_path / 'attacker'
    elsewhere.mkdir(mode=0o700)
    _lock_dir(shared_tmp).symlink_to(elsewhere)
    assert 'is a symlink' in _refused(5)
    assert not any(elsewhere.iterdir())


def test_a_fresh_lock_dir_is_private_and_the_lock_works(shared_tmp):
    with domains.reserve(7) as lease:
        directory = _lock_dir(shared_tmp)
        assert stat.S_IMODE(directory.stat().st_mode) == 0o700
        assert lease.path.read_text().startswith('dodo hop pid ')
        assert stat.S_IMODE(lease.path.stat().st_mode) == 0o600
    with domains.reserve(7):      # released, reusable
        pass


def test_dodo_hop_refuses_a_planted_lock_in_one_line(tmp_path, shared_tmp, monkeypatch, capfd):
    from dodo_sim.tools import supervisor

    def refuse(*args, **kwargs):
        raise AssertionError(f'a process was started: {args}')
    monkeypatch.setattr(supervisor.subprocess, 'Popen', refuse)
    victim = _victim(tmp_path)
    directory = _lock_dir(shared_tmp)
    directory.mkdir(mode=0o700)
    (directory / 'domain-9.lock').symlink_to(victim)
    code = hop_runner.main(['--domain-id', '9', '--no-plots', '--runs-dir',
                            str(tmp_path / 'runs')])
    captured = capfd.readouterr()
    lines = captured.err.strip().splitlines()
    assert code == 2, captured
    assert len(lines) == 1 and lines[0].startswith('dodo hop: error: '), captured
    assert 'symlink' in lines[0]
    assert victim.read_text() == VICTIM_TEXT


# -- atomic writes --------------------------------------------------------------------------------

def test_write_atomic_leaves_the_old_file_when_the_write_fails(tmp_path, monkeypatch):
    from dodo_sim import safe_files
    target = tmp_path / 'best.yaml'
    target.write_text('old: 1\n')
    target.chmod(0o640)

    def full(fd):
        raise OSError(28, 'No space left on device')
    monkeypatch.setattr(safe_files.os, 'fsync', full)
    with pytest.raises(OSError):
        safe_files.write_atomic(target, 'new: 2\n' * 1000)
    assert target.read_text() == 'old: 1\n'
    assert [p.name for p in tmp_path.iterdir()] == ['best.yaml']
    monkeypatch.undo()
    safe_files.write_atomic(target, 'new: 2\n')
    assert target.read_text() == 'new: 2\n'
    assert stat.S_IMODE(target.stat().st_mode) == 0o640
