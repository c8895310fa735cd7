# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
examples/external_controller run exactly as its README says (issue 28 items 2 and 4).

The two commands of the README's "Run it" block — ``dodo hop --controller external ...`` and the
example node on the same domain — run as written (only the domain, the test's private one, and
the bag directory, in a temporary folder, are replaced). The run completes (exit 0, the bag, its
figures), the hopper hops, every command answered the state of its stamp (age 0), and the
bag's states and commands equal the offline rollout of the same law bit for bit.
"""
import os
from pathlib import Path
import re
import shlex
import signal
import subprocess
import sys

from conftest import REPO, ros_domain_id, ros_env
import numpy as np
import pytest

pytestmark = [pytest.mark.ros, pytest.mark.slow]

EXAMPLE = REPO / 'examples' / 'external_controller'
README = EXAMPLE / 'README.md'
#: what the README's commands name and the test replaces: the domain and the bag directory
README_DOMAIN, README_BAG = '42', 'runs/my_hop'


def readme_commands() -> list:
    """Return the command lines of the README's block marked as run by this test."""
    text = README.read_text()
    block = text.split('<!-- the commands below are run')[1].split('```bash')[1].split('```')[0]
    return [line.strip() for line in block.splitlines()
            if line.strip() and not line.lstrip().startswith('#')]


def as_run_here(line: str, domain: int, bag: Path) -> tuple:
    """Return (environment additions, argv) of a README line, on ``domain`` with ``bag``."""
    line = line.replace(f'--domain-id {README_DOMAIN}', f'--domain-id {domain}')
    line = line.replace(f'ROS_DOMAIN_ID={README_DOMAIN}', f'ROS_DOMAIN_ID={domain}')
    line = line.replace(README_BAG, str(bag))
    words = shlex.split(line)
    env = {}
    while '=' in words[0]:
        key, _, value = words.pop(0).partition('=')
        env[key] = value
    executables = {'python': sys.executable, 'dodo': str(Path(sys.executable).parent / 'dodo')}
    return env, [executables.get(words[0], words[0])] + words[1:]


def test_the_example_node_hops_the_hopper_under_dodo_hop_as_the_readme_says(tmp_path):
    from dodo_sim.physics.robot import load_robot
    from dodo_sim.paths import default_urdf_path
    from dodo_sim.rollout import rollout
    from dodo_sim.ros import contract
    from dodo_sim.ros.params import config_from_file
    from dodo_sim.ros.runtime import parse_summary
    from dodo_sim.simulator import SimConfig, Simulator
    from dodo_sim.tools.bag import read_bag
    from dodo_sim.tools.bag_arrays import joint_commands, joint_states
    hop_line, node_line = readme_commands()
    assert hop_line.startswith('dodo hop --controller external'), hop_line
    domain = ros_domain_id()
    bag = tmp_path / 'my_hop'
    base = ros_env(domain)
    hop_env, hop_argv = as_run_here(hop_line, domain, bag)
    node_env, node_argv = as_run_here(node_line, domain, bag)
    hop = subprocess.Popen(hop_argv, cwd=REPO, env={**base, **hop_env}, text=True,
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    node = subprocess.Popen(node_argv, cwd=REPO, env={**base, **node_env}, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    try:
        hop_out, _ = hop.communicate(timeout=600)
        node_out, _ = node.communicate(timeout=60)      # it ends by itself after the run
    finally:
        for proc in (hop, node):
            if proc.poll() is None:
                os.kill(proc.pid, signal.SIGINT)
                proc.wait(timeout=30)
    assert hop.returncode == 0, hop_out[-4000:] + node_out[-2000:]
    assert node.returncode == 0, node_out[-3000:]
    assert re.search(r'dodo hop: completed: t = 3\.000 s', hop_out), hop_out[-3000:]
    assert 'the controller is your own node' in hop_out
    exchange = parse_summary(hop_out, 'exchange')
    assert exchange['controller'] == '/hop_controller' and exchange['age_ms_max'] == 0.0
    assert exchange['foreign'] == 0 and exchange['rejected'] == 0
    assert list((tmp_path / 'my_hop_plots').glob('*.png')), hop_out[-2000:]
    # the same law offline, from the same state: the ROS run is the core loop, bit for bit
    sim = Simulator(str(default_urdf_path()), config_from_file(
        SimConfig, REPO / 'config' / 'hop.yaml', 'simulator'))
    sys.path.insert(0, str(EXAMPLE))
    try:
        from hop_controller import HopLaw
    finally:
        sys.path.remove(str(EXAMPLE))
    run = rollout(sim, HopLaw.for_robot(load_robot(str(default_urdf_path()))), steps=3000)
    data = read_bag(bag, [contract.JOINT_STATES, contract.JOINT_COMMANDS])
    js = joint_states(data[contract.JOINT_STATES], ('base_x', 'base_z', 'hip', 'knee'))
    commands = joint_commands(data[contract.JOINT_COMMANDS], ('hip', 'knee'))
    assert np.array_equal(js.q, run.q) and np.array_equal(js.v, run.v)
    assert np.array_equal(commands.effort[:run.ticks], run.tau)
    assert js.q[:, 1].max() > 1.35            # it hops: apexes above the 1.3 m start
