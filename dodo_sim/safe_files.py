# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
Files the package writes where other users or a crash could interfere.

* :func:`private_dir`: a directory only this user can enter (created 0700), refused when it is a
  symlink, another user's, or writable by group or others. Under a shared ``/tmp`` another local
  user can create ``/tmp/dodo_sim-<uid>`` first and plant symlinks in it.
* :func:`open_private_file`: a file in such a directory, opened with ``O_NOFOLLOW`` (a symlink
  planted at its name is refused, never followed) and checked to be a regular file of this user
  before anything is written to it.
* :func:`write_atomic`: a file written to a temporary sibling, flushed to disk and renamed over the
  target, so a crash or a full disk leaves the old file or the new one, never a torn one that a
  later run would trust.

Every refusal is an :class:`UnsafePathError` (a ValueError) with a one-line message saying what to
do.
"""
from __future__ import annotations

import os
from pathlib import Path
import stat
import tempfile


class UnsafePathError(ValueError):
    """A path another user could control; the message names it and what to do."""


def private_dir(path: str | os.PathLike) -> Path:
    """
    Return ``path``, a directory private to this user, creating it (mode 0700) if needed.

    The parent must exist. Raises :class:`UnsafePathError` if ``path`` is a symlink or not a
    directory, belongs to another user, or is writable by group or others.
    """
    path = Path(path)
    try:
        os.mkdir(path, 0o700)
    except FileExistsError:
        pass
    info = os.lstat(path)
    if stat.S_ISLNK(info.st_mode):
        raise UnsafePathError(f'{path} is a symlink, not a directory of its own: refused (another '
                              f'user may have planted it); remove it or set XDG_RUNTIME_DIR')
    if not stat.S_ISDIR(info.st_mode):
        raise UnsafePathError(f'{path} is not a directory; remove it')
    if info.st_uid != os.getuid():
        raise UnsafePathError(f'{path} belongs to user id {info.st_uid}, not to you '
                              f'({os.getuid()}): refused; set XDG_RUNTIME_DIR to a private '
                              f'directory')
    if info.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        raise UnsafePathError(f'{path} is writable by others (mode '
                              f'{stat.S_IMODE(info.st_mode):o}): refused; chmod 700 {path}')
    return path


def open_private_file(path: str | os.PathLike, flags: int = os.O_RDWR) -> int:
    """
    Open (creating, mode 0600) ``path`` in a :func:`private_dir` and return the descriptor.

    ``O_NOFOLLOW``: a symlink at ``path`` is refused, never followed; the file must be a regular
    file of this user (checked on the open descriptor). Nothing is truncated here.
    """
    try:
        fd = os.open(path, flags | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    except OSError:
        if os.path.islink(path):
            raise UnsafePathError(f'{path} is a symlink: refused (another user may have planted '
                                  f'it); remove it') from None
        raise
    info = os.fstat(fd)
    if not stat.S_ISREG(info.st_mode) or info.st_uid != os.getuid():
        os.close(fd)
        raise UnsafePathError(f'{path} is not a regular file of yours: refused; remove it')
    return fd


def write_atomic(path: str | os.PathLike, data: str | bytes) -> None:
    """
    Replace ``path`` by ``data`` atomically.

    A temporary sibling is written, fsynced and renamed over ``path``; on any error it is removed
    and ``path`` is left as it was. A replaced file keeps its mode; a new one gets 0644.
    """
    path = Path(path)
    try:
        mode = stat.S_IMODE(os.stat(path).st_mode)      # a replaced file keeps its mode
    except FileNotFoundError:
        mode = 0o644
    fd, tmp = tempfile.mkstemp(prefix=f'.{path.name}.', suffix='.tmp', dir=path.parent)
    try:
        os.fchmod(fd, mode)
        with os.fdopen(fd, 'wb') as fh:
            fh.write(data.encode() if isinstance(data, str) else data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise


__all__ = ['private_dir', 'open_private_file', 'write_atomic', 'UnsafePathError']
