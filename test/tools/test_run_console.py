# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
What ``dodo hop`` shows while a run goes.

The console is dodo_sim.tools.run_console. No DDS here: the node lines are fed as the supervisor
passes them; test_liveview.py checks a real run in a pseudo-terminal and in a pipe.
"""
from __future__ import annotations

import io
import re
import struct
import time

from dodo_sim.tools import hop_runner
from dodo_sim.tools.live_view import LiveViewError, parse_address, parse_topic_rates
from dodo_sim.tools.run_console import PLAIN_PERIOD_S, RunConsole
import pytest

CONTROL_RE = re.compile(r'[\x00-\x09\x0b-\x1f\x7f]')
INFO = '[INFO] [1795616195.9] [simulator]: robot hopper: 2 joints'
EXCHANGE = 'dodo exchange: sim_time_s=1.0 steps=1000 stop_reason=stop_after'
WARN = '[WARN] [1795616195.9] [controller]: no command sent for 1.0 s'
TRACEBACK = ['Traceback (most recent call last):', '  File "x.py", line 1, in <module>',
             'ZeroDivisionError: division by zero']


def _progress(t: float, steps: int) -> str:
    return f'dodo recorder: progress sim_time_s={t:.3f} joint_states={steps} hops={steps // 700}'


def _feed(console: RunConsole, monkeypatch) -> None:
    clock = iter([100.0 + i * PLAIN_PERIOD_S for i in range(100)])
    monkeypatch.setattr('dodo_sim.tools.run_console.time.monotonic', lambda: next(clock))
    console.child_line('simulator', INFO)
    for i in range(4):
        console.child_line('recorder', _progress(0.5 * i, 500 * i))
    console.child_line('controller', WARN)
    console.child_line('simulator', EXCHANGE)
    for line in TRACEBACK:
        console.child_line('controller', line)
    console.close()


def test_not_a_terminal_plain_progress_lines_and_only_warnings(tmp_path, monkeypatch):
    out, err = io.StringIO(), io.StringIO()
    log = tmp_path / 'run' / 'nodes.log'
    _feed(RunConsole('dodo hop', 2.0, log, out, err, terminal=False), monkeypatch)
    assert not CONTROL_RE.search(out.getvalue() + err.getvalue())
    lines = out.getvalue().splitlines()
    assert lines[-1] == 'dodo hop: t = 1.50 / 2 s, 0.10x real time, 1500 steps, 2 hops, ~5 s left'
    assert INFO not in out.getvalue() + err.getvalue()
    assert EXCHANGE not in out.getvalue() + err.getvalue()
    shown = err.getvalue().splitlines()
    assert shown == [f'[controller] {WARN}'] + [f'[controller] {t}' for t in TRACEBACK]
    logged = log.read_text().splitlines()
    assert f'[simulator] {INFO}' in logged and f'[simulator] {EXCHANGE}' in logged
    assert not any('progress sim_time_s' in line for line in logged)


def test_verbose_streams_every_node_line(tmp_path, monkeypatch):
    out, err = io.StringIO(), io.StringIO()
    _feed(RunConsole('dodo hop', 2.0, tmp_path / 'nodes.log', out, err, verbose=True,
                     terminal=False), monkeypatch)
    for text in (f'[simulator] {INFO}', f'[simulator] {EXCHANGE}', f'[controller] {WARN}'):
        assert text in out.getvalue().splitlines()


def test_terminal_progress_line_is_redrawn_in_place(tmp_path, monkeypatch):
    out, err = io.StringIO(), io.StringIO()
    _feed(RunConsole('dodo hop', 2.0, None, out, err, terminal=True), monkeypatch)
    text = out.getvalue()
    assert '\r' in text and 'dodo hop  75%|' in text
    assert 't = 1.50/2 s, 0.10x real time, 1500 steps, 2 hops, 5 s left' in text
    assert INFO not in text + err.getvalue()


def test_cli_options(monkeypatch, tmp_path):
    seen = {}
    monkeypatch.setattr(hop_runner, 'run', lambda *a, **k: seen.update(k) or 0)
    assert hop_runner.main(['--runs-dir', str(tmp_path), '--live']) == 0
    assert seen['live'] == '8765' and seen['verbose'] is True     # pytest: not a terminal
    assert hop_runner.main(['--runs-dir', str(tmp_path), '--no-verbose']) == 0
    assert seen['verbose'] is False
    assert seen['log_path'].name == 'nodes.log'
    assert hop_runner.main(['--bag', str(tmp_path / 'b'), '--live', '0.0.0.0:9000',
                            '--verbose']) == 0
    assert seen['live'] == '0.0.0.0:9000' and seen['verbose'] is True
    assert seen['log_path'] == tmp_path / 'b_nodes.log'
    assert hop_runner.main(['--runs-dir', str(tmp_path)]) == 0 and seen['live'] == ''


def test_live_addresses_and_rates():
    assert parse_address('9000') == ('127.0.0.1', 9000)
    assert parse_address('') == ('127.0.0.1', 8765)
    assert parse_address('0.0.0.0:9000') == ('0.0.0.0', 9000)
    assert parse_address('[::1]:9000') == ('::1', 9000)
    assert parse_address('localhost:') == ('localhost', 8765)
    assert parse_topic_rates(['/diagnostics=2', '/tf=0']) == {'/diagnostics': 2.0, '/tf': 0.0}
    for bad in ('x', '70000'):
        with pytest.raises(LiveViewError):
            parse_address(bad)
    with pytest.raises(LiveViewError):
        parse_topic_rates(['diagnostics=2'])
    with pytest.raises(LiveViewError):
        parse_topic_rates(['/tf=-1'])


class _Channel:
    """A foxglove.Channel stand-in that records what is logged on it."""

    def __init__(self):
        self.logged = []

    def log(self, data, log_time):
        self.logged.append((data, log_time))

    def has_sinks(self):
        return False                  # nothing subscribed yet as far as the server says


def _latched_view(live_view):
    view = live_view.LiveView()
    urdf, clock = _Channel(), _Channel()
    view._streams = {'/robot_description': live_view._Stream(urdf, 0, latched=True),
                     '/clock': live_view._Stream(clock, 0)}
    return view, urdf


def test_a_latched_message_is_due_again_at_each_resend_delay():
    """
    Re-send a latched message after each delay of RESEND_DELAYS_NS, once per delay.

    In CI a client subscribed to /robot_description got no URDF: the one re-send 50 ms after the
    subscription came before the SDK had made it effective on a loaded machine.
    """
    from dodo_sim.tools import live_view
    view, urdf = _latched_view(live_view)
    view._by_channel_id = {7: view._streams['/robot_description']}
    view.log('/robot_description', b'<robot/>', 5)
    view._on_subscribe(7)
    subscribed_ns = view._resend[7][0] - live_view.RESEND_DELAYS_NS[0]
    due_at = []
    for step_ms in range(0, 5000, 10):
        with view._lock:
            sends = view._take_due(subscribed_ns + step_ms * 1_000_000)
        if sends:
            assert sends == [(urdf, (b'<robot/>', 5))]
            due_at.append(step_ms)
    assert due_at == [d // 1_000_000 for d in live_view.RESEND_DELAYS_NS]
    assert not view._resend                       # nothing left scheduled


def test_a_subscription_reported_before_its_channel_is_registered_still_gets_the_message():
    """The client answered the advertisement before add_topic had registered the channel."""
    from dodo_sim.tools import live_view
    view, urdf = _latched_view(live_view)
    view._on_subscribe(7)                         # unknown channel id yet
    subscribed_ns = view._resend[7][0] - live_view.RESEND_DELAYS_NS[0]
    view._by_channel_id = {7: view._streams['/robot_description']}
    view.log('/robot_description', b'<robot/>', 5)
    with view._lock:
        assert view._take_due(subscribed_ns + 400_000_000) == [(urdf, (b'<robot/>', 5))]


def test_latched_messages_are_resent_with_no_other_message_logged(monkeypatch):
    """
    The view's own thread re-sends them.

    Before a simulation starts the recorder may log nothing for seconds (measured: 4-5 s
    between the URDF and the first /clock on a loaded machine), so re-sends cannot wait for
    the next logged message.
    """
    import threading
    from dodo_sim.tools import live_view
    monkeypatch.setattr(live_view, 'RESEND_DELAYS_NS', (10_000_000, 40_000_000))
    view, urdf = _latched_view(live_view)
    view._by_channel_id = {7: view._streams['/robot_description']}
    view.log('/robot_description', b'<robot/>', 5)
    view._resend_thread = threading.Thread(target=view._resend_loop, daemon=True)
    view._resend_thread.start()
    view._on_subscribe(7)
    deadline = time.monotonic() + 10.0
    while len(urdf.logged) < 2 and time.monotonic() < deadline:
        time.sleep(0.005)
    view.stop()
    assert urdf.logged == [(b'<robot/>', 5)] * 2
    assert view._resend_thread is None           # stop() joined it


def test_time_is_broadcast_at_display_rate_not_per_clock_message(monkeypatch):
    """
    1 kHz /clock -> at most TIME_RATE_HZ time messages per wall second.

    The SDK queues them on the client's control plane and disconnects a client whose control
    queue is full: one per /clock cut off a client that paused for about a second.
    """
    from dodo_sim.tools import live_view

    class Server:
        times = []

        def broadcast_time(self, ns):
            self.times.append(ns)

    now = [0]
    monkeypatch.setattr(live_view.time, 'monotonic_ns', lambda: now[0])
    view, _ = _latched_view(live_view)
    view._server = Server()
    view._streams['/clock'].channel.has_sinks = lambda: True
    for step_ms in range(1000):                   # 1 s of wall time, a /clock per ms
        now[0] = step_ms * 1_000_000
        sim_ns = step_ms * 1_000_000
        view.log('/clock', b'\x00\x01\x00\x00' + struct.pack('<iI', 0, sim_ns), 0,
                 is_clock=True)
    assert len(view._streams['/clock'].channel.logged) == 1000     # the channel: every one
    assert 25 <= len(Server.times) <= live_view.TIME_RATE_HZ + 1, len(Server.times)
    assert Server.times == sorted(Server.times) and Server.times[0] == 0


#: a bag of REPLAY_STEPS joint states (+ /clock, /foot_contact) 1 ms apart, replayed this fast
REPLAY_STEPS, REPLAY_RATE = 2001, 2.0


def _replay(tmp_path, terminal: bool) -> str:
    """
    Return the output of ``dodo replay`` of a 2 s bag over DDS (carriage returns kept).

    In a pseudo-terminal (util-linux ``script``) or a pipe.
    """
    import shlex
    import subprocess
    import sys

    from conftest import ros_env
    from dodo_sim.tools.bag_writer import OfflineBagWriter
    bag = tmp_path / 'bag'
    if not bag.exists():
        with OfflineBagWriter(bag) as w:
            for k in range(REPLAY_STEPS):
                w.step(k * 1e-3, [0.0, 1.0, 0.0, 0.0], [0.0] * 4, [0.0] * 4, [0.0, 0.0])
    env = dict(ros_env(), COLUMNS='120')
    cmd = [sys.executable, '-m', 'dodo_sim.tools.cli', 'replay', str(bag), '--rate',
           str(REPLAY_RATE), '--start-delay', '0.2']
    if terminal:
        cmd = ['script', '-qefc', shlex.join(cmd), '/dev/null']
    proc = subprocess.run(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, env=env, timeout=120)
    out = proc.stdout.decode('utf-8', errors='replace')
    assert proc.returncode == 0, out
    return out


@pytest.mark.ros
def test_replay_in_a_terminal_shows_a_progress_line(tmp_path):
    out = _replay(tmp_path, terminal=True)
    assert '\r' in out                      # redrawn in place
    assert re.search(r'dodo replay +\d+%\|.*\| t = [\d.]+/2 s, [\d.?]+x real time, '
                     r'\d+ messages, [\d?]+ s left', out), out
    assert 'dodo replay 100%|' in out, out
    assert out.rstrip().splitlines()[-1].startswith(
        f'dodo replay: published {3 * REPLAY_STEPS} messages'), out


@pytest.mark.ros
def test_replay_in_a_pipe_prints_plain_progress_lines(tmp_path):
    out = _replay(tmp_path, terminal=False)
    assert not CONTROL_RE.search(out), [line for line in out.splitlines()
                                        if CONTROL_RE.search(line)][:3]
    assert re.search(r'^dodo replay: t = [\d.]+ / 2 s, [\d.?]+x real time, \d+ messages',
                     out, re.M), out
    assert out.rstrip().splitlines()[-1].startswith(
        f'dodo replay: published {3 * REPLAY_STEPS} messages'), out
