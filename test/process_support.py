# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
Processes the tests start and watch: output read line by line, process trees from /proc.

Shared by the launch tests (``ros2 launch`` in its own session) and the run-cleanup tests
(``dodo hop`` in its own session); only the processes a test started are looked at or killed.
:func:`hop_params` is the params file the ``dodo hop`` and node-graph tests run;
:func:`deadline` cuts a call that would hang (a test then fails instead).
"""
from __future__ import annotations

import contextlib
import math
import os
from pathlib import Path
import re
import signal
import subprocess
import threading
import time

import yaml


def hop_params(simulator: dict | None = None, controller: dict | None = None) -> str:
    """
    Return a params file's text: the hopper from a fixed start, hopping in place at 1.2 m.

    ``simulator``, ``controller``: further parameters of those nodes (or other values).
    """
    sim = {'initial_q': [0.0, 1.3, 0.3, -0.6], **(simulator or {})}
    ctrl = {'apex_height': 1.2, 'target_x': math.nan, **(controller or {})}
    return yaml.safe_dump({'/**': {'ros__parameters': {'use_sim_time': True}},
                           'simulator': {'ros__parameters': sim},
                           'controller': {'ros__parameters': ctrl}}, sort_keys=False)


class LineProcess:
    """A process in its own session whose output (stdout + stderr) a thread collects in lines."""

    def __init__(self, command: list[str], **popen):
        self.lines: list[str] = []
        self.proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                     text=True, start_new_session=True, **popen)
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self):
        for line in self.proc.stdout:
            self.lines.append(line.rstrip('\n'))

    @property
    def output(self) -> str:
        return '\n'.join(self.lines)

    def wait_for(self, pattern: str, timeout: float = 120.0) -> re.Match:
        """Return the first output line matching ``pattern``; AssertionError with the output."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for line in list(self.lines):
                match = re.search(pattern, line)
                if match:
                    return match
            if self.proc.poll() is not None:
                break
            time.sleep(0.05)
        raise AssertionError(f'no line matching {pattern!r}:\n{self.output}')


def _stat(pid: int):
    try:
        text = Path(f'/proc/{pid}/stat').read_text()
    except OSError:
        return None
    fields = text[text.rindex(')') + 2:].split()
    return fields[0], int(fields[1])          # state, ppid


def descendants(root: int) -> set[int]:
    """Every live process below ``root``."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir('/proc'):
        if entry.isdigit():
            stat = _stat(int(entry))
            if stat is not None:
                children.setdefault(stat[1], []).append(int(entry))
    out, todo = set(), [root]
    while todo:
        for pid in children.get(todo.pop(), []):
            out.add(pid)
            todo.append(pid)
    return out


def alive(pids) -> set[int]:
    """Those of ``pids`` still running (zombies count as gone)."""
    return {pid for pid in pids if (_stat(pid) or ('Z', 0))[0] not in ('Z', 'X')}


def gone_within(pids, timeout: float) -> set[int]:
    """Wait up to ``timeout`` s for ``pids`` to end; return those still alive."""
    deadline = time.monotonic() + timeout
    while alive(pids) and time.monotonic() < deadline:
        time.sleep(0.1)
    return alive(pids)


@contextlib.contextmanager
def deadline(seconds: int):
    """Fail (TimeoutError) a call in this process's main thread that takes over ``seconds``."""
    def expired(*_):
        raise TimeoutError(f'still running after {seconds} s')
    previous = signal.signal(signal.SIGALRM, expired)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
