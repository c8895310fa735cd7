# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
``examples/plugin_controller``, a third-party controller package, run exactly as its README says.

The package is pip-installed into the test venv (a copy of the directory, so that the build
leaves nothing in the repository; uninstalled at the end, so a rerun installs it again), then
the README's commands run, from a temporary directory (``runs/...`` lands there), with the
example's files by their repository path:

* ``dodo hop --params-file .../hopper_pd.yaml --duration 3 --bag runs/hopper_pd`` over real DDS:
  exit 0, the hopper hops (touchdowns, apexes, measured on the recorded ``/joint_states`` and
  foot force), the bag records which controller ran (``controller_identity``) and
  ``dodo replay runs/hopper_pd --through-controller`` gives |dtau| = 0;
* ``ros2 launch dodo_sim hop.launch.py params_file:=...`` under the real launch tooling (the
  fixture of test_launch_real.py): the controller node hosts the plugin, the hopper hops
  (the plugin's ``hops`` channel), SIGINT -> exit 0;
* ``dodo optimize .../study.yaml --trials 2``: a study naming the plugin controller, two trials,
  ``best.yaml`` a params file with ``controller: hopper_pd``.
"""
from __future__ import annotations

import importlib
import json
from pathlib import Path
import re
import shlex
import shutil
import subprocess
import sys

from conftest import REPO, ros_env
import numpy as np
import pytest
from test_launch_real import Launch, Listener, until

pytestmark = [pytest.mark.ros, pytest.mark.slow]

EXAMPLE = REPO / 'examples' / 'plugin_controller'
DISTRIBUTION = 'dodo-hopper-pd'
IDENTITY = {'name': 'hopper_pd', 'class': 'dodo_hopper_pd.controller:HopperPD',
            'distribution': DISTRIBUTION, 'version': '0.1.0'}


def readme_command(prefix: str) -> list:
    """
    Return the README's command that starts with ``prefix``, as this test runs it.

    ``.venv/bin/`` is this venv's, ``examples/plugin_controller`` and ``$PWD/examples/...`` the
    repository's directory.
    """
    lines = [line.strip() for line in (EXAMPLE / 'README.md').read_text().splitlines()
             if line.strip().startswith(prefix)]
    assert len(lines) == 1, (prefix, lines)
    text = re.sub(r'(\$PWD/|\./)?\bexamples/plugin_controller', str(EXAMPLE),
                  lines[0])
    words = shlex.split(text)
    if words[0].startswith('.venv/bin/'):
        words[0] = str(Path(sys.executable).parent / words[0][len('.venv/bin/'):])
    return words


@pytest.fixture(scope='module')
def installed_plugin(tmp_path_factory):
    """``pip install ./examples/plugin_controller`` (of a copy); ``pip uninstall`` at the end."""
    where = tmp_path_factory.mktemp('plugin')
    shutil.copytree(EXAMPLE, where / 'examples' / 'plugin_controller',
                    ignore=shutil.ignore_patterns('build', '*.egg-info', '__pycache__'))
    install = readme_command('.venv/bin/pip install')
    assert install[1:] == ['install', str(EXAMPLE)], install
    pip = [sys.executable, '-m', 'pip']
    proc = subprocess.run(pip + ['install', './examples/plugin_controller'], cwd=where,
                          capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    importlib.invalidate_caches()
    try:
        yield
    finally:
        subprocess.run(pip + ['uninstall', '-y', DISTRIBUTION], capture_output=True,
                       timeout=300)
        importlib.invalidate_caches()


def hops_in_bag(bag) -> dict:
    """Touchdowns, base apexes and excursion of a hopper bag (recorded states, foot force)."""
    from dodo_sim.ros import contract
    from dodo_sim.tools.bag import read_bag
    from dodo_sim.tools.bag_arrays import joint_states
    data = read_bag(bag, [contract.JOINT_STATES, contract.FOOT_CONTACT])
    js = joint_states(data[contract.JOINT_STATES], ('base_x', 'base_z', 'hip', 'knee'))
    loaded = np.array([m.wrench.force.z for m in data[contract.FOOT_CONTACT].messages]) > 0.0
    assert len(loaded) == len(js.q)
    vz = js.v[:, 1]
    apex = np.flatnonzero((vz[:-1] > 0.0) & (vz[1:] <= 0.0) & ~loaded[1:]) + 1
    return {'touchdowns': int(np.count_nonzero(loaded[1:] & ~loaded[:-1])),
            'apex_z': js.q[apex, 1], 'x_excursion': float(np.max(np.abs(js.q[:, 0]))),
            'z_min': float(js.q[:, 1].min())}


def test_dodo_hop_runs_the_plugin_and_its_bag_replays_exactly(installed_plugin, tmp_path):
    from dodo_sim.tools import bag as bagio
    from dodo_sim.tools import bag_parameters
    env = ros_env()
    hop = subprocess.run(readme_command('.venv/bin/dodo hop'), cwd=tmp_path, env=env,
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                         timeout=900)
    assert hop.returncode == 0, hop.stdout[-4000:]
    assert 'controller ready (hopper_pd;' in hop.stdout, hop.stdout[-4000:]
    bag = tmp_path / 'runs' / 'hopper_pd'
    hops = hops_in_bag(bag)
    print('dodo hop of the plugin:', hops)
    # it hops: at least 3 touchdowns in 3 s, apexes near 1.3 m (thrust 150 N), never down
    assert hops['touchdowns'] >= 3 and len(hops['apex_z']) >= 3, hops
    assert np.all((hops['apex_z'] > 1.2) & (hops['apex_z'] < 1.4)), hops
    assert hops['z_min'] > 0.6 and hops['x_excursion'] < 0.3, hops
    recorded = bag_parameters.node_parameters(
        bagio.read_bag(bag, ['parameter_events']), 'controller').initial
    assert recorded['controller'] == 'hopper_pd'
    assert json.loads(recorded['controller_identity']) == IDENTITY
    replay = subprocess.run(readme_command('.venv/bin/dodo replay'), cwd=tmp_path, env=env,
                            capture_output=True, text=True, timeout=600)
    assert replay.returncode == 0, replay.stdout + replay.stderr
    assert 'max |dtau| = 0.000e+00 N*m' in replay.stdout, replay.stdout
    assert ('controller hopper_pd (dodo_hopper_pd.controller:HopperPD, dodo-hopper-pd 0.1.0)'
            in replay.stdout), replay.stdout
    assert replay.stderr == '', replay.stderr


def test_ros2_launch_hosts_the_plugin(installed_plugin, launch_env):
    command = readme_command('ros2 launch')
    assert command[:4] == ['ros2', 'launch', 'dodo_sim', 'hop.launch.py'], command
    launch = Launch(launch_env, *command[4:])
    try:
        listener = Listener(launch.domain)
        try:
            hops = listener.hop_counts()
            launch.wait_for(r'\[controller\]: controller ready \(hopper_pd;')
            launch.wait_for(r'\[simulator\]: simulation starts')
            hopping = until(lambda: hops and hops[-1] >= 3, 120.0)
            assert hopping, (hops[-1:], launch.output[-3000:])
        finally:
            listener.close()
        assert launch.interrupt() == 0, launch.output[-4000:]
        launch.finished_cleanly('simulator', 'controller')
    finally:
        if launch.proc.poll() is None:
            launch.interrupt()


def test_dodo_optimize_runs_a_study_of_the_plugin(installed_plugin, tmp_path):
    import yaml
    command = readme_command('.venv/bin/dodo optimize') + ['--no-progress']
    proc = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    out = next((tmp_path / 'runs').glob('optimize-hopper_pd_apex-*'))
    trials = (out / 'trials.csv').read_text().splitlines()
    assert len(trials) == 3 and all(',COMPLETE,' in row for row in trials[1:]), trials
    best = yaml.safe_load((out / 'best.yaml').read_text())
    controller = best['controller']['ros__parameters']
    assert controller['controller'] == 'hopper_pd' and 50.0 <= controller['thrust_n'] <= 300.0
    print(proc.stdout[-1500:])
