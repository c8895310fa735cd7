# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
A full disk loses nothing that was written and crashes nothing (issue 27 item 10).

``dodo hop --bag`` on a real 1 MiB tmpfs (root may mount one; elsewhere the test is skipped and
says why): one line naming the file, the summary, exit 1, no traceback, and a bag that
``dodo bag recover`` rebuilds. Without a mount the same ENOSPC comes from the kernel through
``/dev/full`` (the node log, a figure) or is injected into the recorder's MCAP file object after
a given number of bytes (the recorder in process, with real rclpy).
"""
import errno
import io
import os
from pathlib import Path
import subprocess
import sys
import textwrap

from conftest import REPO, ros_env
import pytest

DEV_FULL = Path('/dev/full')


def dodo(*args, env=None, timeout=600):
    proc = subprocess.run([sys.executable, '-m', 'dodo_sim.tools.cli', *args],
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                          env=env or ros_env(), cwd=REPO, timeout=timeout)
    return proc.returncode, proc.stdout


@pytest.fixture
def small_disk(tmp_path):
    """Yield a directory on a 1 MiB tmpfs (about 1 s of the hopper's bag); skip if not allowed."""
    mount = tmp_path / 'disk'
    mount.mkdir()
    done = subprocess.run(['mount', '-t', 'tmpfs', '-o', 'size=1m', 'tmpfs', str(mount)],
                          capture_output=True, text=True)
    if done.returncode != 0:
        pytest.skip(f'cannot mount a tmpfs here ({done.stderr.strip() or done.returncode}); '
                    f'the in-process ENOSPC tests of this file still run')
    try:
        yield mount
    finally:
        subprocess.run(['umount', '-l', str(mount)], capture_output=True)


@pytest.mark.ros
@pytest.mark.slow
def test_dodo_hop_on_a_full_disk_says_so_in_one_line_and_the_bag_is_recoverable(
        small_disk, tmp_path):
    bag = small_disk / 'bag'
    code, output = dodo('hop', '--duration', '3', '--bag', str(bag))
    assert code == 1, output[-3000:]
    assert 'Traceback' not in output and 'Errno' not in output, output[-3000:]
    failed = [line for line in output.splitlines() if line.startswith('dodo hop: FAILED at t = ')]
    assert len(failed) == 1, output[-3000:]
    assert (f'disk full while writing {bag}' in failed[0]
            and f'the bag is incomplete; `dodo bag recover {bag}` rebuilds what was written'
            in failed[0]), failed[0]
    assert f'dodo hop: bag: {bag} (NOT closed' in output
    # what reached the disk comes back, on a disk with room
    recovered = tmp_path / 'recovered'
    code, report = dodo('bag', 'recover', str(bag), '--out', str(recovered))
    assert code == 0, report
    from dodo_sim.ros import contract
    from dodo_sim.tools.bag import message_counts
    counts = message_counts(recovered)
    assert counts[contract.JOINT_STATES] > 200 and counts[contract.ROBOT_DESCRIPTION] == 1


def test_a_full_disk_under_the_node_log_is_one_reason_not_a_traceback(tmp_path):
    """ENOSPC from the kernel (/dev/full) while dodo hop writes nodes.log."""
    from dodo_sim.tools.run_console import RunConsole
    log = tmp_path / 'nodes.log'
    log.symlink_to(DEV_FULL)
    console = RunConsole('dodo hop', 2.0, log, io.StringIO(), io.StringIO(), verbose=False,
                         terminal=False)
    console.child_line('simulator', 'simulation starts')      # the write fails: no exception
    console.child_line('simulator', 'another line')
    console.close()
    assert console.write_failure == f'disk full while writing {log}'


def test_a_full_disk_under_the_node_log_ends_the_run_and_says_so(tmp_path):
    from dodo_sim.tools.run_console import RunConsole
    from dodo_sim.tools.run_supervision import HopRun
    params = tmp_path / 'p.yaml'
    params.write_text('{}\n')
    console = RunConsole('dodo hop', 2.0, tmp_path / 'nodes.log', io.StringIO(), io.StringIO())
    console.write_failure = f'disk full while writing {tmp_path / "nodes.log"}'
    hop = HopRun(params, 2.0, out=io.StringIO(), err=io.StringIO(), console=console)
    hop.sim_summary = {'sim_time_s': 0.8, 'steps': 800, 'stop_reason': 'signal'}
    result = hop.result('failed')
    assert result.exit_code == 1
    assert result.summary() == (f'FAILED at t = 0.800 s of 2 s simulated: disk full while writing '
                                f'{tmp_path / "nodes.log"}: the run was stopped there '
                                f'(simulator: signal)')


class FillingFile:
    """The recorder's MCAP file object on a disk with ``room`` bytes left (then ENOSPC)."""

    def __init__(self, inner, room: int):
        self._inner, self.room = inner, room

    def write(self, data) -> int:
        data = bytes(data)
        if len(data) > self.room:
            self._inner.write(data[:self.room])
            self.room = 0
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        self.room -= len(data)
        return self._inner.write(data)

    def __getattr__(self, name):
        return getattr(self._inner, name)


def test_the_recorder_stops_on_a_full_disk_and_leaves_a_recoverable_bag(
        tmp_path, monkeypatch, capsys):
    """The recorder in process (real rclpy); ENOSPC injected into its MCAP file after 20 kB."""
    import rclpy
    from rclpy.serialization import serialize_message
    from rosgraph_msgs.msg import Clock

    from dodo_sim.ros import contract
    from dodo_sim.ros.recorder import Recorder
    from dodo_sim.ros.recorder_config import RecorderConfig
    from dodo_sim.tools.bag import message_counts
    from dodo_sim.tools.bag_recover import recover
    for key, value in ros_env().items():
        monkeypatch.setenv(key, value)
    context = rclpy.Context()
    rclpy.init(context=context)
    node = rclpy.create_node('recorder', context=context)
    bag = tmp_path / 'bag'
    try:
        recorder = Recorder(node, RecorderConfig(bag=str(bag), topics=(contract.CLOCK,),
                                                 parameter_snapshots=False,
                                                 contact_topics=False))
        clock = recorder.topics[contract.CLOCK]
        message = Clock()

        def record(n, start):
            for i in range(start, start + n):
                message.clock.sec, message.clock.nanosec = divmod(i * 1_000_000, 10**9)
                recorder._write(clock, 10**18 + i, serialize_message(message))
            recorder.flush()

        record(1000, 0)                  # on disk (flushed like every flush_period_s)
        storage = recorder.writer.storage
        storage.bio = FillingFile(storage.bio, room=20_000)
        record(3000, 1000)               # the disk fills: no exception, recording stops
        assert recorder.write_failure == f'disk full while writing {bag / "bag.mcap"}'
        assert recorder.stop_requested and recorder.drain_aborted
        recorder.close()                 # no summary, no metadata.yaml: nothing more written
    finally:
        node.destroy_node()
        rclpy.shutdown(context=context)
    said = capsys.readouterr().out
    assert (f'dodo recorder: error: bag write failed: disk full while writing {bag / "bag.mcap"}'
            in said)
    assert not (bag / 'metadata.yaml').exists()
    report = recover(bag, out_dir=tmp_path / 'recovered')
    assert report.output == tmp_path / 'recovered'
    assert message_counts(tmp_path / 'recovered')[contract.CLOCK] >= 1000


def test_a_full_disk_while_plotting_is_one_line(tmp_path, monkeypatch):
    """ENOSPC from the kernel (/dev/full) while a figure is written after a completed run."""
    from dodo_sim.tools.run_report import EXIT_FAILED, make_plots
    plots = tmp_path / 'plots'
    module = tmp_path / 'full_disk_plotter.py'
    module.write_text(textwrap.dedent(f"""
        from pathlib import Path

        def main(argv):
            out = Path(argv[argv.index('--out') + 1])
            out.mkdir()
            (out / 'trajectory.png').symlink_to({str(DEV_FULL)!r})
            with open(out / 'trajectory.png', 'wb') as figure:
                figure.write(b'x' * 100_000)
            return 0
        """))
    monkeypatch.syspath_prepend(str(tmp_path))
    out = io.StringIO()
    assert make_plots(tmp_path / 'bag', plots, out, plotter='full_disk_plotter') == EXIT_FAILED
    # (a failed write() does not carry the file name: the directory is named)
    assert out.getvalue() == (f'dodo hop: plots: disk full while writing the figures in '
                              f'{plots.resolve()}: not every figure was written\n')


def test_dodo_plot_alone_on_a_full_disk_is_one_line_and_exit_1(tmp_path, capsys):
    """
    ENOSPC from the kernel (/dev/full) under a figure of a standalone ``dodo plot``.

    Before: a traceback (only ``dodo hop``'s plotting step caught it).
    """
    from dodo_sim.tools.bag_writer import OfflineBagWriter
    from dodo_sim.tools.plot import main
    bag = tmp_path / 'bag'
    with OfflineBagWriter(bag) as w:
        for k in range(50):
            w.step(k * 1e-3, [0.0, 1.0, 0.2, -0.4], [0.0] * 4, [0.0] * 4, [0.0, 0.0])
    out = tmp_path / 'plots'
    out.mkdir()
    (out / 'trajectory.png').symlink_to(DEV_FULL)
    assert main([str(bag), '--out', str(out), '--no-animation']) == 1
    err = capsys.readouterr().err
    assert err.startswith('dodo plot: error: disk full while writing ') and \
        err.endswith(': not every figure was written\n') and err.count('\n') == 1, err
