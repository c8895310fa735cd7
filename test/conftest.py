# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""Shared fixtures of the dodo_sim test suite."""
import itertools
import os
from pathlib import Path

import numpy as np
import pytest

REPO = Path(__file__).resolve().parent.parent
#: this folder: the tests' helper modules (conftest, *_support, toy robots), importable by the
#: processes a test starts (ros_env)
TEST_DIR = Path(__file__).resolve().parent
URDF_XACRO = REPO / 'urdf' / 'hopper.urdf.xacro'

# one counter for the whole pytest process, so no two tests of a run share a ROS domain
_ROS_DOMAINS = itertools.count()


def ros_domain_id() -> int:
    """
    Return a private ROS_DOMAIN_ID for one test (docs/ros_contract.md).

    A pid-based offset keeps concurrent test runs apart, the session-wide counter keeps the tests
    of one run apart. Range 1..100 (``DODO_TEST_DOMAINS=lo:hi`` narrows it, e.g. to give two
    test runs on one machine disjoint ranges): 0 is everybody's default domain, and ids above
    ~100 risk colliding with ephemeral ports. A run's tests take more ids than the range holds,
    so the counter wraps: an id on which a DDS participant of this machine is still seen (a
    process another test left, another run's) is skipped while a free one is left, else a
    test's nodes would meet strangers (CI: a walker run found a stale driver and controller on
    its domain and waited for their parameters).
    """
    from dodo_sim.ros.domains import bound_udp_ports, sockets_in_domain
    low, high = 1, 100
    if os.environ.get('DODO_TEST_DOMAINS'):
        low, high = (int(x) for x in os.environ['DODO_TEST_DOMAINS'].split(':'))
    size = high - low + 1
    ports = bound_udp_ports()
    first = None
    for _ in range(size):
        candidate = low + (os.getpid() * 7 + next(_ROS_DOMAINS)) % size
        first = candidate if first is None else first
        if not sockets_in_domain(candidate, ports):
            return candidate
    return first


def ros_env(domain_id: int | None = None) -> dict:
    """
    Environment for ROS processes a test starts: private domain, localhost discovery.

    The repository and the tests' helper modules importable, unbuffered output.
    """
    env = dict(os.environ)
    env['ROS_DOMAIN_ID'] = str(ros_domain_id() if domain_id is None else domain_id)
    env['ROS_AUTOMATIC_DISCOVERY_RANGE'] = 'LOCALHOST'
    env['PYTHONPATH'] = os.pathsep.join(filter(None, [str(REPO), str(TEST_DIR),
                                                      env.get('PYTHONPATH')]))
    env['PYTHONUNBUFFERED'] = '1'
    return env


@pytest.fixture(scope='session')
def urdf_path() -> Path:
    return URDF_XACRO


@pytest.fixture(scope='session')
def urdf_xml() -> str:
    from dodo_sim.model import robot_description_xml
    return robot_description_xml(URDF_XACRO)


@pytest.fixture(scope='session', autouse=True)
def compiled_physics_step():
    """
    Compile the simulator's numba step once before any test (or load it from numba's cache).

    Node subprocesses started by the ROS tests then load it instead of compiling it each.
    """
    from dodo_sim.physics.fast import warm_up
    warm_up()


@pytest.fixture
def no_start(monkeypatch, tmp_path):
    """Make starting a process fail the test; domain locks go to a private directory."""
    from dodo_sim.tools import supervisor

    def refuse(*args, **kwargs):
        raise AssertionError(f'a process was started despite bad input: {args}')
    monkeypatch.setattr(supervisor.subprocess, 'Popen', refuse)
    monkeypatch.setenv('XDG_RUNTIME_DIR', str(tmp_path / 'run'))
    (tmp_path / 'run').mkdir()
    monkeypatch.delenv('ROS_DOMAIN_ID', raising=False)
    monkeypatch.delenv('DODO_HOP_DOMAINS', raising=False)


@pytest.fixture(scope='session')
def launch_env(tmp_path_factory) -> dict:
    """Environment with ros2, colcon and the built dodo_sim (test_launch_real.py)."""
    from test_launch_real import make_launch_env
    return make_launch_env(tmp_path_factory)


@pytest.fixture
def graph(tmp_path):
    """Yield the emulated driver and a probe node (driver_support.py)."""
    from driver_support import driver_graph
    yield from driver_graph(tmp_path)


def pytest_collection_modifyitems(items):
    """
    Rerun a failed real-DDS test once.

    Tests over real DDS (marker ``ros``) race process start-up and scheduling on a shared 2-core
    machine. pytest's summary counts every rerun ("N rerun"), so a flake stays visible; the core
    and scenario tests are never rerun.
    """
    for item in items:
        if item.get_closest_marker('ros'):
            item.add_marker(pytest.mark.flaky(reruns=1))


def pd_hold(state, q_ref, kp=300.0, kd=20.0):
    """[hip, knee] torques holding the joints at q_ref[2:] (N*m)."""
    return -kp * (state.q[2:] - np.asarray(q_ref)[2:]) - kd * state.v[2:]
