# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
``launch/hop.launch.py`` under the real ROS 2 launch tooling: colcon build + ``ros2 launch``.

The launch/launch_ros/ros2cli sources beside the repository (``../shared/ros2_launch``, with
stand-ins for robot_state_publisher and rviz2) are installed once per test venv by its
``install.sh`` (about 30 s; :func:`launch_tooling`), the package is built with colcon in a
temporary workspace that links the repository, and each test runs ``ros2 launch dodo_sim
hop.launch.py`` on a private ROS domain, stopped with SIGINT to the launch process (as a
terminal's Ctrl-C; launch then stops its nodes):

* default: the nodes come up, the leg hops, SIGINT -> launch and every node exit 0;
* ``record:=true bag:=...``: the bag is complete from t = 0 and ``dodo replay --through-
  controller`` reproduces every recorded command exactly;
* ``use_sim:=false hardware:=emulated record:=true``: the driver in the simulator's place, no
  /clock; the leg hops through driver + emulated hardware over DDS, the bag has /diagnostics;
* ``ros2 param set /controller apex_height``: accepted values show in the recorded
  /controller/state, an unreachable one is refused with the feasible range.

Skipped, with the reason, only where ``../shared/ros2_launch`` is absent.
"""
import fcntl
import os
from pathlib import Path
import re
import signal
import subprocess
import sys
import threading
import time

from conftest import REPO, ros_domain_id
import numpy as np
from process_support import alive, descendants, LineProcess
import pytest

pytestmark = [pytest.mark.ros, pytest.mark.slow]

INSTALL_STAMP = 'dodo_sim-installed'


def _tooling_dir() -> Path | None:
    candidates = [Path(os.environ['DODO_ROS2_LAUNCH'])] if os.environ.get('DODO_ROS2_LAUNCH') \
        else []
    # CI: ../shared beside the clone; a git worktree under <root>/wt/<name>: <root>/shared
    candidates += [REPO.parent / 'shared' / 'ros2_launch',
                   REPO.parent.parent / 'shared' / 'ros2_launch']
    return next((c for c in candidates if (c / 'install.sh').is_file()), None)


def _install(tooling: Path) -> Path:
    """Run install.sh into this test venv once (a stamp and a lock in the venv); the WORK dir."""
    prefix = Path(sys.prefix)
    work = prefix / 'ros2_launch_work'
    work.mkdir(exist_ok=True)
    stamp = work / INSTALL_STAMP
    script = tooling / 'install.sh'
    key = f'{script.resolve()} {script.stat().st_mtime_ns}'
    with open(work / '.lock', 'w') as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (stamp.is_file() and stamp.read_text() == key
                and (prefix / 'bin' / 'ros2').is_file() and (work / 'env.sh').is_file()):
            proc = subprocess.run(['bash', str(script), str(prefix), str(work)],
                                  capture_output=True, text=True, timeout=900)
            if proc.returncode:
                pytest.fail(f'{script} failed:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}')
            stamp.write_text(key)
    return work


def _sourced_env(*scripts: Path, base: dict) -> dict:
    """Return the environment after sourcing ``scripts`` in bash."""
    command = ' && '.join(f'. "{s}"' for s in scripts) + ' && env -0'
    out = subprocess.run(['bash', '-c', command], capture_output=True, env=base, check=True,
                         timeout=60).stdout
    return dict(item.split('=', 1) for item in out.decode().split('\0') if '=' in item)


def _installed_tooling() -> tuple[Path, dict]:
    """Install the tooling into this venv once; return its WORK dir and the base environment."""
    tooling = _tooling_dir()
    if tooling is None:
        pytest.skip('ROS 2 launch tooling not found: ../shared/ros2_launch (install.sh) is not '
                    'beside the repository and DODO_ROS2_LAUNCH is not set')
    if sys.prefix == sys.base_prefix:
        pytest.skip('the launch tests install the launch tooling into the test venv; run '
                    'pytest from a venv (README test command)')
    work = _install(tooling)
    base = dict(os.environ)
    base['PATH'] = f'{Path(sys.executable).parent}{os.pathsep}{base.get("PATH", "")}'
    base['VIRTUAL_ENV'] = sys.prefix
    return work, base


def ros2_cli_env() -> dict:
    """Environment with the real ``ros2`` command line (ros2cli), no colcon build."""
    work, base = _installed_tooling()
    return _sourced_env(work / 'env.sh', base=base)


def make_launch_env(tmp_path_factory) -> dict:
    """Environment with ros2, colcon and the built dodo_sim (install/setup.bash sourced)."""
    work, base = _installed_tooling()
    workspace = tmp_path_factory.mktemp('colcon_ws')
    (workspace / 'src').mkdir()
    (workspace / 'src' / 'dodo_sim').symlink_to(REPO)
    env = _sourced_env(work / 'env.sh', base=base)
    build = subprocess.run(['colcon', 'build', '--packages-select', 'dodo_sim'], cwd=workspace,
                           capture_output=True, text=True, env=env, timeout=600)
    assert build.returncode == 0, build.stdout[-3000:] + build.stderr[-3000:]
    env = _sourced_env(work / 'env.sh', workspace / 'install' / 'setup.bash', base=base)
    # the install step after colcon build (README, docs/running.md): the installed copy's numba
    # cache, so no node compiles on its start-up path
    precompile = subprocess.run(['python3', '-m', 'dodo_sim.tools.precompile'], cwd=workspace,
                                capture_output=True, text=True, env=env, timeout=900)
    assert precompile.returncode == 0, precompile.stdout[-3000:] + precompile.stderr[-3000:]
    assert 'numba cache' in precompile.stdout, precompile.stdout
    env['ROS_AUTOMATIC_DISCOVERY_RANGE'] = 'LOCALHOST'
    env['ROS_LOG_DIR'] = str(tmp_path_factory.mktemp('ros_log'))
    env['PYTHONUNBUFFERED'] = '1'
    env.pop('ROS_DOMAIN_ID', None)
    return env


@pytest.fixture(autouse=True)
def stop_leftover_launches():
    """
    Stop the launch a failed test left running.

    A test that failed before its SIGINT would leave it running: the fixture SIGINTs it then, and
    SIGKILLs what is left of its session (only the processes the launch started).
    """
    Launch.running = []
    yield
    for launch in Launch.running:
        if launch.proc.poll() is not None:
            continue                    # ended (interrupt() checked for leftovers)
        launch.proc.send_signal(signal.SIGINT)
        try:
            launch.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            pass
        try:
            os.killpg(launch.proc.pid, signal.SIGKILL)     # its session: start_new_session
        except ProcessLookupError:
            pass


class Launch(LineProcess):
    """
    ``ros2 launch dodo_sim <launch_file> ARGS`` in its own session, output collected.

    ``launch_file`` is hop.launch.py unless given; test_walkros_launch.py runs walk.launch.py.
    """

    #: the launches of the running test (set by :func:`stop_leftover_launches`)
    running: list = []

    def __init__(self, env: dict, *args: str, launch_file: str = 'hop.launch.py'):
        self.env = dict(env, ROS_DOMAIN_ID=str(ros_domain_id()))
        self.domain = int(self.env['ROS_DOMAIN_ID'])
        super().__init__(['ros2', 'launch', 'dodo_sim', launch_file, *args], env=self.env)
        self.nodes: set[int] = set()
        Launch.running.append(self)

    def interrupt(self, timeout: float = 60.0) -> int:
        """SIGINT to the launch process only (its nodes are stopped by launch); exit code."""
        self.nodes = descendants(self.proc.pid)
        self.proc.send_signal(signal.SIGINT)
        try:
            return self.proc.wait(timeout=timeout)
        finally:
            self._reader.join(timeout=10)
            leftovers = alive(self.nodes | descendants(self.proc.pid))
            for pid in leftovers:
                os.kill(pid, signal.SIGKILL)
            assert not leftovers, f'processes left after launch ended: {leftovers}'

    def run_cli(self, *args: str, timeout: float = 90.0) -> subprocess.CompletedProcess:
        return subprocess.run(list(args), capture_output=True, text=True, env=self.env,
                              timeout=timeout)

    def finished_cleanly(self, *names: str) -> None:
        """
        Assert that the nodes ``names`` exited 0 on the launch's SIGINT.

        Only ours: the robot_state_publisher stand-in of ../shared/ros2_launch (rclpy; the real
        one is C++) can die of the SIGINT inside rclpy's take_message or while it still
        starts (a traceback, exit code 1) while 1 kHz states arrive. interrupt() has already
        checked that no process of the launch is left.
        """
        for name in names:
            assert re.search(rf'\[INFO\] \[{name}-\d+\]: process has finished cleanly',
                             self.output), (name, '\n'.join(
                                 line for line in self.output.splitlines()
                                 if name in line)[-4000:])
            assert not re.search(rf'\[{name}-\d+\]: process has died', self.output), (
                self.output[-4000:])


class Listener:
    """An rclpy node of the test on the launch's domain, spun in a thread."""

    def __init__(self, domain: int):
        import rclpy
        from rclpy.executors import SingleThreadedExecutor
        self.rclpy = rclpy
        self.context = rclpy.Context()
        rclpy.init(context=self.context, domain_id=domain)
        self.node = rclpy.create_node('launch_test', context=self.context)
        self.executor = SingleThreadedExecutor(context=self.context)
        self.executor.add_node(self.node)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._spin, daemon=True)
        self._thread.start()

    def _spin(self):
        while not self._stop.is_set() and self.context.ok():
            self.executor.spin_once(timeout_sec=0.05)

    def hop_counts(self) -> list:
        """Return a list that collects the controller's hop counter from its state topic."""
        from dodo_sim.ros import contract
        from sensor_msgs.msg import JointState
        hops = []

        def on_state(msg):
            if 'hops' in msg.name:
                hops.append(msg.position[msg.name.index('hops')])
        self.node.create_subscription(JointState, contract.CONTROLLER_STATE, on_state, 100)
        return hops

    def close(self):
        self._stop.set()
        self._thread.join(timeout=5)
        self.node.destroy_node()
        self.rclpy.try_shutdown(context=self.context)


def until(condition, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while not condition() and time.monotonic() < deadline:
        time.sleep(0.05)
    return condition()


def test_default_launch_hops_and_every_process_exits_0_on_sigint(launch_env):
    launch = Launch(launch_env)
    listener = Listener(launch.domain)
    try:
        hops = listener.hop_counts()
        launch.wait_for(r'\[simulator\]: simulation starts')
        # the leg hops: touchdowns counted by the controller keep coming
        assert until(lambda: hops and hops[-1] >= 3, 120.0), (hops[-1:], launch.output[-3000:])
    finally:
        listener.close()
    for name in ('simulator', 'controller', 'robot_state_publisher'):
        assert re.search(rf'\[{name}-\d+\]: process started', launch.output), name
    assert '[recorder' not in launch.output and '[rviz2' not in launch.output
    assert launch.interrupt() == 0, launch.output[-4000:]
    launch.finished_cleanly('simulator', 'controller')


def test_record_launch_bag_is_complete_from_t0_and_replays_exactly(launch_env, tmp_path):
    from dodo_sim.ros import contract
    from dodo_sim.tools.bag import message_counts, read_bag
    from dodo_sim.tools.bag_arrays import clock, joint_states
    bag = tmp_path / 'launch bag #1'
    launch = Launch(launch_env, 'record:=true', f'bag:={bag}')
    launch.wait_for(r'\[simulator\]: simulator ready: .*waiting for 2 subscriber')
    launch.wait_for(r'\[simulator\]: simulation starts')
    # the stand-in robot_state_publisher reports its count once per simulated second; the count at
    # that tick depends on delivery latency (1974 under load), so wait for any report past 2000
    launch.wait_for(r'\b(?:[2-9]\d{3}|\d{5,}) /joint_states messages so far')
    assert launch.interrupt() == 0, launch.output[-4000:]
    launch.finished_cleanly('simulator', 'controller', 'recorder')
    counts = message_counts(bag)
    data = read_bag(bag, [contract.JOINT_STATES, contract.CLOCK])
    js = joint_states(data[contract.JOINT_STATES])
    # complete from t = 0: the first recorded state is the initial state of config/hop.yaml
    assert js.stamp_ns[0] == 0 and clock(data[contract.CLOCK])[0] == 0.0
    np.testing.assert_array_equal(js.q[0], [0.0, 1.3, 0.3, -0.6])
    assert np.all(np.diff(js.stamp_ns) == 1_000_000)
    assert counts[contract.CLOCK] == counts[contract.JOINT_STATES] == counts[
        contract.FOOT_CONTACT] > 2000
    replay = subprocess.run([sys.executable, '-m', 'dodo_sim.tools.cli', 'replay', str(bag),
                             '--through-controller'], capture_output=True, text=True,
                            cwd=REPO, timeout=300)
    assert replay.returncode == 0, replay.stdout + replay.stderr
    assert 'max |dtau| = 0.000e+00 N*m' in replay.stdout


def test_live_launch_argument_serves_the_recorded_topics_to_a_foxglove_client(launch_env,
                                                                              tmp_path):
    """``record:=true live:=PORT``: the recorder's Foxglove server streams the run (viewing.md)."""
    from dodo_sim.ros import contract
    from foxglove_client import free_port, watch
    port = free_port()
    launch = Launch(launch_env, 'record:=true', f'bag:={tmp_path / "bag"}', f'live:={port}')
    launch.wait_for(r'\[simulator\]: simulation starts')
    topics = {'/' + contract.JOINT_STATES, '/' + contract.ROBOT_DESCRIPTION}
    got = watch(f'ws://127.0.0.1:{port}', topics, seconds=3.0, connect_timeout=60.0)
    assert launch.interrupt() == 0, launch.output[-4000:]
    launch.finished_cleanly('simulator', 'controller', 'recorder')
    assert re.search(r'\[robot_state_publisher-\d+\]: process started', launch.output)
    assert {c['topic'] for c in got.channels.values()} >= topics
    assert len(got.messages.get('/' + contract.JOINT_STATES, [])) >= 10, got.messages.keys()
    assert b'<robot' in got.messages['/' + contract.ROBOT_DESCRIPTION][0][1]


def test_emulated_hardware_launch_hops_records_and_exits_0_on_sigint(launch_env, tmp_path):
    """
    use_sim:=false hardware:=emulated record:=true.

    The driver takes the simulator's place (no /clock) and is enabled by itself once the controller
    answers; the leg hops through driver + emulator over DDS; SIGINT -> every process exits 0 and
    the bag holds /diagnostics.
    """
    from dodo_sim.ros import contract
    from dodo_sim.tools.bag import message_counts, read_bag
    from dodo_sim.tools.bag_arrays import joint_states
    bag = tmp_path / 'hardware bag'
    launch = Launch(launch_env, 'use_sim:=false', 'hardware:=emulated', 'record:=true',
                    f'bag:={bag}')
    listener = Listener(launch.domain)
    try:
        hops = listener.hop_counts()
        launch.wait_for(r'\[driver\]: enable_on_start: enabled')
        assert until(lambda: hops and hops[-1] >= 3, 60.0), (hops[-1:], launch.output[-3000:])
        assert listener.node.get_publishers_info_by_topic(contract.CLOCK) == []
    finally:
        listener.close()
    assert '[simulator' not in launch.output
    assert 'SCHED_FIFO' not in launch.output, launch.output[-3000:]     # it was permitted
    assert launch.interrupt() == 0, launch.output[-4000:]
    # ours; the robot_state_publisher stand-in of ../shared/ros2_launch can die of the SIGINT
    # inside rclpy's take_message (a traceback, exit code 1) while 1 kHz states arrive
    for name in ('driver', 'controller', 'recorder'):
        assert re.search(rf'\[INFO\] \[{name}-\d+\]: process has finished cleanly',
                         launch.output), (name, launch.output[-4000:])
        assert not re.search(rf'\[{name}-\d+\]: process has died', launch.output)
    counts = message_counts(bag)
    assert counts.get(contract.CLOCK, 0) == 0 and counts[contract.DIAGNOSTICS] >= 2, counts
    js = joint_states(read_bag(bag, [contract.JOINT_STATES])[contract.JOINT_STATES])
    assert np.all(np.diff(js.stamp_ns) > 0) and js.q[:, 1].max() > 1.1, counts


def test_runtime_param_set_shows_in_the_recorded_controller_state(launch_env, tmp_path):
    from dodo_sim.ros import contract
    from dodo_sim.tools.bag import read_bag
    from dodo_sim.tools.bag_arrays import named_values
    bag = tmp_path / 'bag'
    launch = Launch(launch_env, 'record:=true', f'bag:={bag}')
    launch.wait_for(r'\[simulator\]: simulation starts')
    set_apex = ('ros2', 'param', 'set', '--no-daemon', '--timeout', '30', '/controller',
                'apex_height')       # --timeout: wait for discovery of /controller
    accepted = launch.run_cli(*set_apex, '1.35')
    assert accepted.returncode == 0 and 'Set parameter successful' in accepted.stdout, accepted
    refused = launch.run_cli(*set_apex, '5.0')
    assert 'out of reach' in refused.stdout + refused.stderr, refused
    assert 'feasible' in refused.stdout + refused.stderr
    launch.wait_for(r'\[controller\]: set-points changed: \{.apex_height.: 1\.35\}', 10.0)
    time.sleep(1.0)
    assert launch.interrupt() == 0, launch.output[-4000:]
    _, values = named_values(read_bag(bag, [contract.CONTROLLER_STATE])[
        contract.CONTROLLER_STATE])
    apex = values['apex_height']
    assert apex[0] == 1.2 and apex[-1] == 1.35 and apex.max() == 1.35
    changed = int(np.argmax(apex == 1.35))
    assert np.all(apex[:changed] == 1.2) and np.all(apex[changed:] == 1.35)


def test_dodo_cli_runs_through_ros2_run_after_colcon_build(launch_env):
    """
    On a colcon install the CLI is ``ros2 run dodo_sim dodo`` (README, "On a ROS 2 install").

    setup.cfg installs every console script to ``lib/dodo_sim`` as ament_python packages do,
    so ``dodo`` is an executable of the package, not a command on PATH.
    """
    executables = subprocess.run(['ros2', 'pkg', 'executables', 'dodo_sim'], env=launch_env,
                                 capture_output=True, text=True, timeout=120)
    assert executables.returncode == 0, executables.stderr
    listed = {line.split()[1] for line in executables.stdout.splitlines() if line.strip()}
    assert {'dodo', 'simulator', 'controller', 'recorder', 'driver'} <= listed, listed
    usage = subprocess.run(['ros2', 'run', 'dodo_sim', 'dodo', 'hop', '--help'], env=launch_env,
                           capture_output=True, text=True, timeout=120)
    assert usage.returncode == 0, usage.stdout + usage.stderr
    assert '--duration' in usage.stdout and '--namespace' in usage.stdout


def test_controller_none_leaves_the_controller_out_and_a_users_node_answers(launch_env,
                                                                            tmp_path):
    """
    ``controller:=none record:=true``: no controller process, a node of the user's answers.

    The node is written from the contract alone (test_external_controller.py); the simulator
    names the missing publisher until it comes, then the run goes on; SIGINT ends every process
    with code 0 and the bag records the controller as external.
    """
    import json

    from dodo_sim.ros import contract
    from dodo_sim.tools.bag import read_bag
    from test_external_controller import CONTRACT_ONLY_CONTROLLER
    bag = tmp_path / 'bag'
    launch = Launch(launch_env, 'controller:=none', 'record:=true', f'bag:={bag}')
    launch.wait_for(r'\[simulator\]: waiting for: a publisher of /joint_commands', 300.0)
    script = tmp_path / 'my_pd.py'
    script.write_text(CONTRACT_ONLY_CONTROLLER)
    node = LineProcess([sys.executable, str(script)], env=launch.env, cwd=tmp_path)
    try:
        launch.wait_for(r'\[simulator\]: simulation starts', 120.0)
        launch.wait_for(r'\b(?:[1-9]\d{3}|\d{5,}) /joint_states messages so far', 120.0)
        # the launch first: the controller leaving first is a lost controller (exit 1)
        assert launch.interrupt() == 0, launch.output[-4000:]
    finally:
        node.proc.send_signal(signal.SIGINT)
        node.proc.wait(timeout=30)
    launch.finished_cleanly('simulator', 'recorder')
    assert not re.search(r'\[controller-\d+\]: process started', launch.output)
    announced = read_bag(bag, [contract.APPLIED_CONTROLLER])[contract.APPLIED_CONTROLLER]
    assert [json.loads(m.data)['kind'] for m in announced.messages] == ['external']
