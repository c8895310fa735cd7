# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
What a run says when a file it writes cannot be written: a full disk, a quota, an I/O error.

One line naming the file (``disk full while writing <path>``), never a traceback. Used by the
recorder (its bag), ``dodo hop``'s node log and its plots (docs/running.md, "A full disk"). The
recorder tells ``dodo hop`` with one line starting with :data:`RECORDER_WRITE_FAILED`; the bag it
leaves is recovered with ``dodo bag recover`` (docs/bags.md). No rclpy.
"""
from __future__ import annotations

import errno
from pathlib import Path

#: errno values that mean "no room left" (ENOSPC: the file system; EDQUOT: the user's quota)
DISK_FULL_ERRNOS = (errno.ENOSPC, errno.EDQUOT)

#: The recorder's line when its bag cannot be written (then it stops recording and exits 1);
#: what follows is :func:`write_failure`'s text. ``dodo hop`` ends the run on it.
RECORDER_WRITE_FAILED = 'dodo recorder: error: bag write failed: '


def write_failure(path, exc: OSError) -> str:
    """Return what went wrong writing ``path``: ``disk full while writing <path>`` or why not."""
    if exc.errno in DISK_FULL_ERRNOS:
        return f'disk full while writing {path}'
    return f'cannot write {path}: {exc.strerror or exc}'


def incomplete_bag(bag) -> str:
    """Return what to do with a bag whose recording could not be written to its end."""
    return (f'the bag is incomplete; `dodo bag recover {Path(bag)}` rebuilds what was written '
            f'(free some space first, or add --out DIR on another disk)')


__all__ = ['DISK_FULL_ERRNOS', 'RECORDER_WRITE_FAILED', 'incomplete_bag', 'write_failure']
