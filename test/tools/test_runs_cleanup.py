# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
``dodo hop`` runs clean up after themselves, over real DDS, with injected faults.

Each test starts ``dodo hop`` as a user would (its own session, like a terminal's foreground job)
and then: Ctrl-C once, Ctrl-C twice, SIGTERM, or SIGKILL. Afterwards no process of the run is
left, the bag is closed (readable, ``metadata.yaml``) and holds one graph's messages from t = 0,
and the exit status and last line say what happened. Two runs at once get two domains and two
clean bags; a run after a killed one on the same domain is not crossed by leftovers.
"""
import os
from pathlib import Path
import signal
import sys
import time

from conftest import REPO, ros_domain_id, ros_env
import numpy as np
from process_support import descendants, gone_within, hop_params, LineProcess
import pytest

pytestmark = [pytest.mark.ros, pytest.mark.slow]

PARAMS = hop_params()
STEP_S = 0.001


class Hop(LineProcess):
    """A ``dodo hop`` process in its own session, its output collected by a thread."""

    def __init__(self, tmp_path: Path, duration: float, env: dict, bag_name: str = 'bag'):
        params = tmp_path / 'hop.yaml'
        params.write_text(PARAMS)
        self.bag = tmp_path / bag_name
        super().__init__(
            [sys.executable, '-m', 'dodo_sim.tools.cli', 'hop', '--params-file', str(params),
             '--duration', str(duration), '--bag', str(self.bag), '--no-plots'],
            env=env, cwd=REPO)
        self.children: set[int] = set()

    def stepping(self, seconds: float = 0.5) -> None:
        """Wait until the simulation runs, note the run's processes, let it step a while."""
        self.wait_for(r'\[simulator\].*simulation starts')
        time.sleep(seconds)
        self.children = descendants(self.proc.pid)
        assert len(self.children) >= 3, self.children

    def finish(self, timeout: float = 120.0) -> int:
        try:
            code = self.proc.wait(timeout=timeout)
        finally:
            if self.proc.poll() is None:
                os.killpg(self.proc.pid, signal.SIGKILL)
        self._reader.join(timeout=10)
        return code

    def domain(self) -> int:
        return int(self.wait_for(r'dodo hop: ROS domain (\d+)').group(1))


def check_bag(bag: Path, *, steps: int | None = None) -> np.ndarray:
    """
    Check that the bag is closed and holds one graph from t = 0; return its /clock times.

    One graph means strictly rising stamps and one robot description. With ``steps``, the bag must
    hold exactly that many steps.
    """
    from dodo_sim.ros import contract
    from dodo_sim.tools.bag import message_counts, read_bag
    from dodo_sim.tools.bag_arrays import clock, joint_states
    assert (bag / 'metadata.yaml').is_file(), f'{bag} not closed'
    counts = message_counts(bag)
    data = read_bag(bag, [contract.CLOCK, contract.JOINT_STATES])
    times = clock(data[contract.CLOCK])
    js = joint_states(data[contract.JOINT_STATES])
    assert times[0] == 0.0 and js.stamp_ns[0] == 0
    assert np.all(np.diff(times) > 0) and np.all(np.diff(js.stamp_ns) == 1_000_000)
    assert counts[contract.ROBOT_DESCRIPTION] == 1
    if steps is not None:
        assert counts[contract.CLOCK] == steps + 1 and counts[contract.JOINT_STATES] == steps + 1
    return times


def interrupted_at(hop: Hop, signal_name: str) -> float:
    match = hop.wait_for(rf'dodo hop: (?:interrupted|terminated) \({signal_name}\) at '
                         rf't = ([\d.]+) s of 60 s simulated')
    return float(match.group(1))


def test_ctrl_c_is_an_interruption_not_a_failure(tmp_path):
    hop = Hop(tmp_path, 60.0, ros_env())
    hop.stepping()
    os.killpg(hop.proc.pid, signal.SIGINT)          # the terminal sends it to the whole job
    assert hop.finish() == 130, hop.output
    t = interrupted_at(hop, 'SIGINT')
    assert 'every process stopped cleanly' in hop.output and 'FAILED' not in hop.output
    assert gone_within(hop.children, 5.0) == set()
    times = check_bag(hop.bag)
    assert 0.0 < t < 60.0 and times[-1] == pytest.approx(t, abs=1e-9)
    assert f'bag: {hop.bag.resolve()} (closed)' in hop.output


def test_ctrl_c_twice_still_stops_everything_and_closes_the_bag(tmp_path):
    hop = Hop(tmp_path, 60.0, ros_env())
    hop.stepping()
    os.killpg(hop.proc.pid, signal.SIGINT)
    time.sleep(0.3)
    os.killpg(hop.proc.pid, signal.SIGINT)
    assert hop.finish() == 130, hop.output
    interrupted_at(hop, 'SIGINT')
    assert gone_within(hop.children, 5.0) == set()
    check_bag(hop.bag)


def test_sigterm_stops_every_child_and_closes_the_bag(tmp_path):
    hop = Hop(tmp_path, 60.0, ros_env())
    hop.stepping()
    hop.proc.send_signal(signal.SIGTERM)             # `kill PID`, a service manager
    assert hop.finish() == 143, hop.output
    t = interrupted_at(hop, 'SIGTERM')
    assert gone_within(hop.children, 5.0) == set()
    times = check_bag(hop.bag)
    assert times[-1] == pytest.approx(t, abs=1e-9)


def test_sigkill_leaves_no_process_a_closed_bag_and_a_clean_domain(tmp_path):
    domain = ros_domain_id()
    env = ros_env(domain)
    hop = Hop(tmp_path, 60.0, env)
    hop.stepping()
    hop.proc.send_signal(signal.SIGKILL)
    assert hop.finish() == -signal.SIGKILL
    assert gone_within(hop.children, 15.0) == set(), 'children outlived dodo hop'
    check_bag(hop.bag)              # the recorder got SIGTERM from the kernel and closed it
    # a new run on the same domain is not crossed by anything the killed run left
    again = Hop(tmp_path, 1.0, env, bag_name='bag2')
    assert again.finish() == 0, again.output
    assert again.domain() == domain
    check_bag(again.bag, steps=int(round(1.0 / STEP_S)))


def test_two_runs_at_once_get_two_domains_and_do_not_mix(tmp_path):
    env = ros_env()
    del env['ROS_DOMAIN_ID']         # the default: dodo hop picks a private domain per run
    env['DODO_HOP_DOMAINS'] = os.environ.get('DODO_TEST_DOMAINS', '1:100')
    duration = 2.0
    (tmp_path / 'a').mkdir()
    (tmp_path / 'b').mkdir()
    runs = [Hop(tmp_path / 'a', duration, env), Hop(tmp_path / 'b', duration, env)]
    codes = [run.finish() for run in runs]
    assert codes == [0, 0], '\n\n'.join(run.output for run in runs)
    assert runs[0].domain() != runs[1].domain()
    for run in runs:
        match = run.wait_for(r'ROS domain \d+ .*watch it with ROS_DOMAIN_ID=(\d+) .*ros2 topic '
                             r'echo /joint_states')
        assert int(match.group(1)) == run.domain()
        assert 'completed: t = 2.000 s' in run.output
        check_bag(run.bag, steps=int(round(duration / STEP_S)))
