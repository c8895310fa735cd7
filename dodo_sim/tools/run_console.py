# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
What ``dodo hop`` / ``dodo walk`` / ``dodo replay`` show while they run: one progress line.

Not the nodes' logs.

* On a terminal: one tqdm progress line (simulated time / duration, real-time factor, simulator
  steps so far, hops for the hopper, time left), redrawn in place. Not a terminal (CI, a
  pipe, a file): a plain line every :data:`PLAIN_PERIOD_S` s of wall time, no control
  characters.
* The children's lines (``[node] text``) go to a log file in the run directory
  (``nodes.log``); ``verbose`` streams them as well, as before (``dodo hop``'s default when
  its output is not a terminal: CI logs and the tools that read a run's output keep every
  line). A log that cannot be written (a full disk) is closed and :attr:`RunConsole.write_failure`
  says why (``disk full while writing <path>``); ``dodo hop`` then ends the run.
* What must not wait for the end reaches the terminal at once even without ``verbose``: a
  child's warnings, errors and tracebacks (rcutils ``[WARN]``, ``[ERROR]``, ``[FATAL]``,
  ``error:``/``warning:`` lines, Python tracebacks with what follows them), and the runner's own
  lines (written through :meth:`RunConsole.stream`, which clears the progress line first).

Progress comes from the recorder's ``dodo recorder: progress sim_time_s=... joint_states=...``
lines (its ``progress_period_s`` parameter): the recorder already sees every /clock and
/joint_states, so no other process joins the graph to measure it. Without /clock (hardware)
the driver's time is taken as the wall time since the first progress line. ``dodo replay``,
which has no children, calls :meth:`RunConsole.progress` itself with the bag time replayed and
the messages published.
"""
from __future__ import annotations

from pathlib import Path
import re
import time
from typing import TextIO

from dodo_sim.tools.write_failures import write_failure

#: The recorder's progress line (dodo_sim.ros.recorder.Recorder.print_progress).
PROGRESS_RE = re.compile(r'^dodo recorder: progress sim_time_s=(\S+) joint_states=(\d+)'
                         r'(?: hops=(\d+))?')
#: The recorder's live-view line (the address a viewer connects to).
LIVE_RE = re.compile(r'^dodo recorder: live view (\S+)')
#: A child's line that reaches the terminal without --verbose.
URGENT_RE = re.compile(r'\[(WARN|WARNING|ERROR|FATAL)\]|\b(error|warning|WARNING|ERROR)\b:|'
                       r'^Traceback |Error: |^\s*File "')
#: Wall-clock period of the plain progress lines when the output is not a terminal, s.
PLAIN_PERIOD_S = 5.0
#: How often the recorder prints its progress line for the console, s (wall clock).
PROGRESS_PERIOD_S = 0.25


class _Stream:
    """A text stream whose writes first clear the progress line (tqdm.write)."""

    def __init__(self, console: 'RunConsole', target: TextIO):
        self._console = console
        self._target = target

    def write(self, text: str) -> int:
        self._console._write(self._target, text)
        return len(text)

    def flush(self) -> None:
        self._target.flush()

    def isatty(self) -> bool:
        return self._target.isatty()


class RunConsole:
    """
    Routes the children's lines and draws the progress of one run (see module docs).

    ``unit``: what the steps are called (``steps``; ``cycles`` on hardware).
    """

    def __init__(self, prog: str, duration_s: float, log_path: Path | None,
                 out: TextIO, err: TextIO, verbose: bool = False,
                 terminal: bool | None = None, unit: str = 'steps'):
        self.prog = prog
        self.duration_s = float(duration_s)
        self.verbose = verbose
        self.unit = unit
        self._out, self._err = out, err
        self.terminal = out.isatty() if terminal is None else terminal
        self.log_path = Path(log_path) if log_path is not None else None
        self._log = None
        self._bar = None
        self._first_progress: float | None = None      # wall (monotonic) s
        self._first_sim = 0.0                            # simulated s then
        self._last_plain = -float('inf')
        self._traceback_in: set[str] = set()
        self.sim_time_s: float | None = None
        self.steps = 0
        self.hops: int | None = None          # the hopper's hop count, when it reports one
        self.live_address: str | None = None
        #: why the node log could not be written (a full disk), None while it can
        #: (dodo_sim.tools.write_failures; dodo hop ends the run on it)
        self.write_failure: str | None = None

    # -- streams for the runner's own lines --------------------------------------------------
    def stream(self, target: TextIO) -> _Stream:
        return _Stream(self, target)

    def _write(self, target: TextIO, text: str) -> None:
        if self._bar is not None:
            from tqdm import tqdm
            with tqdm.external_write_mode(file=target):
                target.write(text)
                target.flush()
        else:
            target.write(text)

    # -- children's lines -------------------------------------------------------------------
    def child_line(self, name: str, text: str) -> None:
        match = PROGRESS_RE.match(text)
        if match:
            self.hops = int(match.group(3)) if match.group(3) is not None else None
            self.progress(match.group(1), int(match.group(2)))
            return
        self._log_line(f'[{name}] {text}\n')
        live = LIVE_RE.match(text)
        if live:
            self.live_address = live.group(1)
            self._write(self._out, f'{self.prog}: live view: {self.live_address} (Foxglove: '
                                   f'Open connection > Foxglove WebSocket; layout '
                                   f'config/foxglove_layout.json; docs/viewing.md)\n')
        if self.verbose:
            self._write(self._out, f'[{name}] {text}\n')
            return
        if text.startswith('Traceback '):
            self._traceback_in.add(name)
        if name in self._traceback_in or URGENT_RE.search(text):
            self._write(self._err, f'[{name}] {text}\n')

    def _log_line(self, line: str) -> None:
        """Append a line to the node log; on a full disk stop logging and say so once."""
        if self.log_path is None or self.write_failure is not None:
            return
        try:
            if self._log is None:
                self.log_path.parent.mkdir(parents=True, exist_ok=True)
                self._log = open(self.log_path, 'a', encoding='utf-8')
            self._log.write(line)
            self._log.flush()
        except OSError as exc:
            self._log_failed(exc)

    def _log_failed(self, exc: OSError) -> None:
        """Close the node log after a failed write (what is written stays); remember why."""
        self.write_failure = write_failure(self.log_path, exc)
        log, self._log = self._log, None
        if log is not None:
            try:
                log.close()
            except OSError:
                pass

    # -- progress ----------------------------------------------------------------------------
    def progress(self, sim_time: str | float, steps: int) -> None:
        """
        Show that ``sim_time`` s of ``duration_s`` are done after ``steps`` steps.

        ``'-'``: no simulated time yet (hardware: the wall time since the first call).
        """
        now = time.monotonic()
        self.steps = steps
        if sim_time == '-':
            if self.unit == 'steps':      # a simulator that has not sent /clock yet
                return
            if self._first_progress is None:     # hardware: the driver's time is wall time
                self._first_progress, self._first_sim = now, 0.0
            self.sim_time_s = now - self._first_progress
        else:
            self.sim_time_s = float(sim_time)
            if self._first_progress is None:
                self._first_progress, self._first_sim = now, self.sim_time_s
        wall = now - self._first_progress
        if self.terminal:
            self._draw(min(self.sim_time_s, self.duration_s), wall)
        elif now - self._last_plain >= PLAIN_PERIOD_S:
            self._last_plain = now
            self._out.write(self.plain_line(wall) + '\n')
            self._out.flush()

    def _hops_text(self) -> str:
        return '' if self.hops is None else f', {self.hops} hops'

    def _rates(self, wall: float) -> tuple[float | None, float | None]:
        """(real-time factor, wall s left) from the progress since the first progress line."""
        advanced = (self.sim_time_s or 0.0) - self._first_sim
        if wall <= 0.5 or advanced <= 0.0:
            return None, None
        factor = advanced / wall
        return factor, max(0.0, self.duration_s - self.sim_time_s) / factor

    def plain_line(self, wall: float) -> str:
        factor, left = self._rates(wall)
        return (f'{self.prog}: t = {self.sim_time_s:.2f} / {self.duration_s:g} s, '
                + ('?x' if factor is None else f'{factor:.2f}x') + ' real time'

                + f', {self.steps} {self.unit}' + self._hops_text()
                + ('' if left is None else f', ~{left:.0f} s left'))

    def _draw(self, t: float, wall: float) -> None:
        if self._bar is None:
            import shutil

            from tqdm import tqdm

            # get_terminal_size: COLUMNS/LINES, else the terminal's size, else 80x24 (a
            # pseudo-terminal may report 0x0, and tqdm then hides the bar)
            self._bar = tqdm(total=self.duration_s, file=self._out, leave=True,
                             ncols=shutil.get_terminal_size().columns,
                             nrows=shutil.get_terminal_size().lines,
                             bar_format=f'{self.prog} {{percentage:3.0f}}%|{{bar}}| {{desc}}')
        factor, left = self._rates(wall)
        self._bar.set_description_str(
            f't = {t:.2f}/{self.duration_s:g} s, '
            + ('?x' if factor is None else f'{factor:.2f}x') + ' real time, '
            + f'{self.steps} {self.unit}{self._hops_text()}, '
            + ('? s' if left is None else f'{left:.0f} s') + ' left', refresh=False)
        self._bar.update(t - self._bar.n)

    def close(self) -> None:
        """End the progress line (the result lines follow) and close the log file."""
        if self._bar is not None:
            self._bar.close()
            self._bar = None
        log, self._log = self._log, None
        if log is not None:
            try:
                log.close()
            except OSError as exc:           # the last lines could not be written
                self.write_failure = self.write_failure or write_failure(self.log_path, exc)


__all__ = ['RunConsole', 'PROGRESS_RE', 'PROGRESS_PERIOD_S']
