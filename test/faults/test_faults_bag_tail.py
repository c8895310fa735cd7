# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
The recorder gets the end of the run even when it falls behind (issue 27 item 8), real DDS.

A completed run's bag once lost its tail (``/clock`` and ``odom`` ended at 1.256 s of a 2 s run)
and ``dodo hop`` said completed. The cause: the simulator exited at ``stop_after`` at once, and
Fast DDS drops what a deleted writer's reliable subscribers have not acknowledged yet, so a
recorder that was behind (a loaded machine) never got the last samples. Here the recorder is
stopped (SIGSTOP) from the middle of the run until a second after the simulator reached its end:
the nodes now wait (bounded, ``runtime.ACK_WAIT_S``) for their subscribers' acknowledgements
before they exit, and the bag holds every step.
"""
import os
import re
import signal
import struct
import sys
import time

from conftest import REPO, ros_env
from process_support import descendants, hop_params, LineProcess
import pytest

pytestmark = [pytest.mark.ros, pytest.mark.slow]

DURATION_S = 1.0


def last_stamps(bag) -> dict:
    """Topic -> the newest stamp of its messages (header or clock time first in the CDR), s."""
    from dodo_sim.tools.bag import iter_raw_messages
    newest = {}
    for topic, _, _, data in iter_raw_messages(bag, ['clock', 'joint_states', 'foot_contact',
                                                     'joint_commands', 'odom']):
        sec, nanosec = struct.unpack_from('<iI', data, 4)
        newest[topic] = max(newest.get(topic, 0.0), sec + nanosec * 1e-9)
    return newest


def test_a_recorder_stalled_over_the_end_of_the_run_still_records_every_step(tmp_path):
    params = tmp_path / 'hop.yaml'
    params.write_text(hop_params())
    bag = tmp_path / 'bag'
    hop = LineProcess([sys.executable, '-m', 'dodo_sim.tools.cli', 'hop', '--params-file',
                       str(params), '--duration', str(DURATION_S), '--bag', str(bag),
                       '--no-plots', '--verbose'], env=ros_env(), cwd=REPO)
    try:
        hop.wait_for(r'\[simulator\].*simulation starts')
        recorder = [pid for pid in descendants(hop.proc.pid)
                    if b'dodo_sim.ros.recorder' in open(f'/proc/{pid}/cmdline', 'rb').read()]
        assert len(recorder) == 1, hop.output
        os.kill(recorder[0], signal.SIGSTOP)
        try:
            # the simulator reached its end while the recorder stood still
            hop.wait_for(r'\[simulator\].*(dodo exchange: |stop_after = )')
            time.sleep(1.0)        # the fault: the recorder stays stopped past the end
        finally:
            os.kill(recorder[0], signal.SIGCONT)
        code = hop.proc.wait(timeout=120)
    finally:
        if hop.proc.poll() is None:
            os.killpg(hop.proc.pid, signal.SIGKILL)
    assert code == 0, hop.output[-4000:]
    assert re.search(r'dodo hop: completed: t = 1\.000 s \(1000 steps\)', hop.output)
    ends = last_stamps(bag)
    for topic in ('clock', 'joint_states', 'foot_contact'):        # every step
        assert ends[topic] == pytest.approx(DURATION_S, abs=1e-6), (topic, ends)
    for topic in ('joint_commands', 'odom'):                       # answers; every 10 ms
        assert ends[topic] >= DURATION_S - 0.0105, (topic, ends)
