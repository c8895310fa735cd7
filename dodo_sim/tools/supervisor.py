# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
Child processes that die with their supervisor, and a single-threaded loop that watches them.

Used by ``dodo hop`` (docs/running.md). Every child

* is started in its own process group, so a terminal's Ctrl-C reaches the supervisor only and
  the supervisor stops the children in order (the ones that must see the end — the recorder —
  last);
* gets ``PR_SET_PDEATHSIG = SIGTERM`` (Linux): if the supervisor dies, even by SIGKILL, the
  kernel sends it SIGTERM, which every dodo_sim node handles as a clean stop (the recorder
  closes its bag). Set in the child between fork and exec; the supervisor is single-threaded,
  so nothing else runs at that moment. (The kernel watches the *thread* that started the child:
  start children from a thread that lives as long as the run, e.g. the main thread.);
* writes stdout and stderr into one pipe that the loop reads without threads (``selectors``);
  each line is passed to a callback.

Signals the supervisor itself receives are recorded by :class:`SignalLatch` and acted upon by the
caller's loop; nothing is done inside the handler.

Real-time scheduling of the hardware loop (``fifo_priority``): a child can be started under
``SCHED_FIFO`` (every thread it starts inherits it). The launch file gets the same through
``python -m dodo_sim.tools.supervisor fifo PRIORITY -- CMD ...`` (:func:`main`): set the policy
(or say on stderr why it could not, and go on with normal scheduling), then exec CMD.
"""
from __future__ import annotations

import ctypes
from dataclasses import dataclass, field
import os
import selectors
import signal
import subprocess
import sys
import time
from typing import Callable

PR_SET_PDEATHSIG = 1


def _libc_prctl():
    if not sys.platform.startswith('linux'):
        return None
    try:
        return ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None


_PRCTL = _libc_prctl()


def die_with_parent(signum: int = signal.SIGTERM,
                    fifo_priority: int = 0) -> Callable[[], None] | None:
    """
    Return a ``preexec_fn`` that sends ``signum`` to the child when the parent dies.

    The kernel sends it when the process that started the child dies; None where prctl is not
    available. With ``fifo_priority`` > 0 the child also runs under ``SCHED_FIFO`` at that priority
    (every thread it starts inherits it; where that is not permitted the child runs with normal
    scheduling: see :func:`fifo_permitted`).
    """
    if _PRCTL is None and fifo_priority <= 0:
        return None
    parent = os.getpid()
    prctl = _PRCTL

    def preexec() -> None:
        if fifo_priority > 0:
            try:
                os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(fifo_priority))
            except OSError:
                pass
        if prctl is not None:
            prctl(PR_SET_PDEATHSIG, int(signum), 0, 0, 0)
            if os.getppid() != parent:          # the parent died before prctl took effect
                os.kill(os.getpid(), signum)

    return preexec


def fifo_permitted(priority: int) -> str | None:
    """
    None if this process may start children under ``SCHED_FIFO`` at ``priority``, else why not.

    It is tried on a short-lived child.
    """
    if not hasattr(os, 'SCHED_FIFO'):
        return 'SCHED_FIFO is not available on this platform'
    if not 1 <= priority <= os.sched_get_priority_max(os.SCHED_FIFO):
        return f'priority {priority} is outside 1..{os.sched_get_priority_max(os.SCHED_FIFO)}'
    probe = subprocess.run([sys.executable, '-c', 'import os, sys; sys.exit(0 if '
                            'os.sched_getscheduler(0) == os.SCHED_FIFO else 1)'],
                           preexec_fn=die_with_parent(fifo_priority=priority),
                           stdin=subprocess.DEVNULL, capture_output=True, timeout=30)
    if probe.returncode != 0:
        return 'setting SCHED_FIFO was refused (needs CAP_SYS_NICE or an RLIMIT_RTPRIO)'
    return None


@dataclass
class Child:
    """One supervised process."""

    name: str
    proc: subprocess.Popen
    on_line: Callable[['Child', str], None]
    lines: list = field(default_factory=list)
    _buffer: bytes = b''
    eof: bool = False
    #: the supervisor asked it to stop (an exit after this is not "early")
    stop_requested: bool = False
    signals_sent: list = field(default_factory=list)

    @property
    def pid(self) -> int:
        return self.proc.pid

    @property
    def returncode(self) -> int | None:
        return self.proc.poll()

    def send(self, signum: int) -> None:
        """Signal the child's process group (the node and anything it started)."""
        if self.proc.poll() is not None:
            return
        self.signals_sent.append(signal.Signals(signum).name)
        try:
            os.killpg(self.proc.pid, signum)
        except ProcessLookupError:
            pass


class SignalLatch:
    """Records SIGINT / SIGTERM / SIGHUP for the supervisor loop; restores handlers on exit."""

    SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)

    def __init__(self):
        self.received: list[int] = []
        self._saved: dict = {}

    def _handler(self, signum, frame) -> None:
        self.received.append(signum)

    def __enter__(self):
        for signum in self.SIGNALS:
            try:
                self._saved[signum] = signal.signal(signum, self._handler)
            except ValueError:       # not the main thread: signals stay with the caller
                break
        return self

    def __exit__(self, *exc):
        for signum, handler in self._saved.items():
            signal.signal(signum, handler)
        self._saved.clear()

    def count(self, *signums: int) -> int:
        return sum(s in signums for s in self.received) if signums else len(self.received)


class ProcessGroup:
    """Start children, pump their output, reap them; no threads."""

    def __init__(self, env: dict):
        self.env = env
        self.children: dict[str, Child] = {}
        self._selector = selectors.DefaultSelector()

    def start(self, name: str, cmd: list, on_line: Callable[[Child, str], None],
              fifo_priority: int = 0) -> Child:
        """Start ``cmd``; ``fifo_priority`` > 0: under SCHED_FIFO at that priority."""
        proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, env=self.env, process_group=0,
                                preexec_fn=die_with_parent(fifo_priority=fifo_priority),
                                bufsize=0)
        os.set_blocking(proc.stdout.fileno(), False)
        child = Child(name, proc, on_line)
        self.children[name] = child
        self._selector.register(proc.stdout, selectors.EVENT_READ, child)
        return child

    def pump(self, timeout: float) -> None:
        """Read whatever the children printed (waiting at most ``timeout`` s for output)."""
        if not self._selector.get_map():
            time.sleep(timeout)
            return
        for key, _ in self._selector.select(timeout):
            self._read(key.data)

    def _read(self, child: Child) -> None:
        try:
            data = os.read(child.proc.stdout.fileno(), 65536)
        except BlockingIOError:
            return
        if not data:
            child.eof = True
            self._selector.unregister(child.proc.stdout)
            if child._buffer:
                child.on_line(child, child._buffer.decode(errors='replace'))
                child._buffer = b''
            return
        *complete, child._buffer = (child._buffer + data).split(b'\n')
        for raw in complete:
            child.on_line(child, raw.decode(errors='replace').rstrip('\r'))

    def running(self) -> list[Child]:
        return [c for c in self.children.values() if c.proc.poll() is None]

    def drain(self, child: Child, timeout: float = 2.0) -> None:
        """Read the rest of a finished child's output."""
        deadline = time.monotonic() + timeout
        while not child.eof and time.monotonic() < deadline:
            ready = self._selector.select(0.05)
            for key, _ in ready:
                self._read(key.data)

    def close(self) -> None:
        for child in self.children.values():
            if not child.eof:
                try:
                    self._selector.unregister(child.proc.stdout)
                except (KeyError, ValueError):
                    pass
            child.proc.stdout.close()
        self._selector.close()


def set_fifo(priority: int) -> str | None:
    """Put this process under SCHED_FIFO at ``priority``; None, or why it was refused."""
    try:
        os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(priority))
    except (OSError, AttributeError) as exc:
        return f'{exc}'
    return None


def main(argv=None) -> int:
    """
    ``python -m dodo_sim.tools.supervisor fifo PRIORITY -- CMD ...``.

    Exec CMD under SCHED_FIFO at PRIORITY (normal scheduling, with a note on stderr, where that is
    refused).
    """
    argv = list(sys.argv[1:] if argv is None else argv)
    if len(argv) < 4 or argv[0] != 'fifo' or argv[2] != '--':
        print('usage: python -m dodo_sim.tools.supervisor fifo PRIORITY -- CMD ...',
              file=sys.stderr)
        return 2
    priority = int(argv[1])
    why = set_fifo(priority) if priority > 0 else None
    if why is not None:
        print(f'dodo: SCHED_FIFO {priority} refused for {argv[3]} ({why}); running with normal '
              f'scheduling', file=sys.stderr, flush=True)
    os.execvp(argv[3], argv[3:])
    return 1          # not reached


if __name__ == '__main__':
    sys.exit(main())


__all__ = ['Child', 'ProcessGroup', 'SignalLatch', 'die_with_parent', 'fifo_permitted',
           'set_fifo']
