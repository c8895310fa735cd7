# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
Issue 31's test: client processes drive a ``dodo hop`` run through simulation_interfaces.

One recorded run (module fixture): ``test/sim_client.py`` calls GetSimulatorFeatures, pauses,
steps 100, resumes, sets a runtime parameter, resets and sets the robot's state; then
``examples/sim_episodes/run_episodes.py`` runs as its README says and ends the run (``--quit``).
The bag replays through the controller with |dtau| = 0 across all of it
(docs/simulation_interfaces.md).
"""
from __future__ import annotations

import json
from pathlib import Path
import subprocess
import sys

from conftest import REPO, ros_domain_id, ros_env
from dodo_sim.ros import sim_control as sc, sim_values as sv
from dodo_sim.tools import bag as bagio
from dodo_sim.tools import bag_arrays, bag_parameters
from dodo_sim.tools.replay_check import compare_with_controller
import numpy as np
from process_support import LineProcess
import pytest

pytestmark = [pytest.mark.ros, pytest.mark.slow]

PERIOD_NS = 1_000_000
EPISODE_STEPS = 200


def run(command, env, timeout):
    return subprocess.run(command, env=env, capture_output=True, text=True, timeout=timeout,
                          cwd=REPO)


@pytest.fixture(scope='module')
def driven_run(tmp_path_factory):
    """Run dodo hop, the issue's client and the example; return their outputs and the bag."""
    bag = tmp_path_factory.mktemp('driven') / 'bag'
    domain = ros_domain_id()
    env = ros_env(domain)
    bin_dir = Path(sys.executable).parent
    # the README's two commands (dodo hop with a bag directory of the test's)
    hop = LineProcess([str(bin_dir / 'dodo'), 'hop', '--domain-id', str(domain),
                       '--duration', '600', '--no-plots', '--bag', str(bag)], env=env, cwd=REPO)
    try:
        hop.wait_for('simulation starts', 180)
        client = run([sys.executable, str(REPO / 'test' / 'sim_client.py'), '/simulator'],
                     env, 300)
        assert client.returncode == 0, client.stdout + client.stderr
        example = run([sys.executable, 'examples/sim_episodes/run_episodes.py', '--episodes',
                       '2', '--steps', str(EPISODE_STEPS), '--quit'], env, 300)
        assert example.returncode == 0, example.stdout + example.stderr
        code = hop.proc.wait(timeout=120)
    finally:
        if hop.proc.poll() is None:
            hop.proc.kill()
    return {'hop': (code, hop.output), 'client': json.loads(client.stdout.splitlines()[-1]),
            'episodes': [json.loads(line) for line in example.stdout.splitlines()],
            'bag': bag}


def test_a_client_drives_the_run_and_the_bag_replays_through_the_controller_exactly(
        driven_run):
    code, output = driven_run['hop']
    assert code == 0 and 'completed' in output and 'simulator: quit' in output, output[-3000:]
    client = driven_run['client']
    assert sorted(client['features']) == sorted(sc.FEATURES)
    assert client['paused'] == client['stepped'] == client['playing'] == sv.RESULT_OK
    assert client['step_ns'] == 100 * PERIOD_NS          # exactly 100 control periods
    assert client['friction'] and client['reset'] == sv.RESULT_OK
    assert client['set_entity_state'] == [sv.RESULT_OK, '']
    bag = driven_run['bag']
    result = compare_with_controller(bag)
    # the reset, the entity state, the example's two resets
    assert result.restarts == 4, result.summary()
    assert result.max_abs_nm == 0.0 and result.unmatched_states == 0, result.summary()
    # the runtime change: on /parameter_events and, with the stamp it took effect at, in events
    assert 'friction=0.5' in result.summary()
    changes = bag_parameters.node_parameters(
        bagio.read_bag(bag, ['parameter_events']), 'simulator').changes
    assert [c.values for c in changes] == [{'friction': 0.5}]
    events = result.simulator_events
    assert [e['values'] for e in events if e['event'] == 'parameters'] == [{'friction': 0.5}]
    stepping = next(e for e in events if e['event'] == 'stepping' and e['steps'] == 100)
    playing = next(e for e in events if e['event'] == 'playing')
    assert playing['stamp_ns'] - stepping['stamp_ns'] == 100 * PERIOD_NS
    # every state the simulator published was answered, and the clock never went back
    data = bagio.read_bag(bag, ['joint_states', 'joint_commands', 'controller/state'])
    # the controller restarted exactly at each episode's first state (told before it)
    episode_at = {}
    for m in data['controller/state'].messages:
        names = list(m.name)
        episode_at[bag_arrays.stamp_ns(m.header.stamp)] = m.position[names.index('episode')]
    starts = [e for e in events if e['event'] in ('reset', 'entity_state')]
    assert len(starts) == 4
    for e in starts:
        assert episode_at[e['stamp_ns']] == e['episode']
        assert episode_at[max(s for s in episode_at if s < e['stamp_ns'])] == e['episode'] - 1
    states = bag_arrays.joint_states(data['joint_states'], ('base_x', 'base_z', 'hip', 'knee'))
    answered = {bag_arrays.stamp_ns(m.header.stamp) for m in data['joint_commands'].messages}
    assert np.all(np.diff(states.stamp_ns) == PERIOD_NS)
    assert set(states.stamp_ns.tolist()) <= answered


def test_the_episode_example_runs_against_dodo_sim_as_its_readme_says(driven_run):
    episodes = driven_run['episodes']
    assert [e['episode'] for e in episodes] == [0, 1]
    for e in episodes:
        assert e['entity'] == 'hopper' and e['steps'] == EPISODE_STEPS
        assert e['sim_time_s'] == pytest.approx(EPISODE_STEPS * 1e-3, abs=1e-9)
    assert episodes[0]['distance_m'] > 0.01

    def pose(e, which):
        return {k: v for k, v in e[which].items() if k != 'stamp_s'}
    assert pose(episodes[0], 'start') == pose(episodes[1], 'start')   # from the start state
    assert pose(episodes[0], 'end') == pytest.approx(pose(episodes[1], 'end'), abs=1e-9)
