"""The hardware path in the graph, in closed loop over real DDS: the SLIP controller of the
simulation (same node, same params file config/hop.yaml) hops the leg through the ``driver`` node
and the emulated hardware (realtime: the emulated physics follows the wall clock), started as
``dodo hop --hardware emulated`` starts them (driver and controller under SCHED_FIFO).

* ``dodo hop --hardware emulated --duration 5`` (the real CLI): exit 0, a readable bag with
  /diagnostics, every /joint_states the driver published;
* apex heights from the recorded /joint_states within 2 % of each other after hop 3; then an
  e-stop turns the emulated motors off from the driver's next cycle;
* the controller killed mid-run: the driver holds its last command for command_timeout, then
  zero torque plus damping, reported on /diagnostics.
"""
import os
import re
import signal
import subprocess
import sys
import time

import numpy as np
import pytest
from conftest import REPO, ros_domain_id, ros_env

rclpy = pytest.importorskip('rclpy')

from diagnostic_msgs.msg import DiagnosticArray  # noqa: E402
from sensor_msgs.msg import JointState  # noqa: E402
from std_srvs.srv import Trigger  # noqa: E402

from dodo_sim.ros import contract  # noqa: E402
from dodo_sim.tools.bag import joint_states, message_counts, read_bag, wrenches  # noqa: E402
from dodo_sim.tools.hop_runner import HopRun  # noqa: E402

pytestmark = [pytest.mark.ros, pytest.mark.slow]

PARAMS = REPO / 'config' / 'hop.yaml'
PERIOD = 0.001              # s, config/hop.yaml driver control_period
COMMAND_TIMEOUT = 0.05      # s, config/hop.yaml driver command_timeout
DAMPING = (4.0, 4.0)        # N*m*s/rad, DriverConfig default
#: one count of the 12-bit torque field of an AK10-9 (+-65 N*m) behind a 4:1 gear, joint side
TORQUE_COUNT = 130.0 / 4095.0 * 4.0
#: a driver log line: [LEVEL] [wall time s] [driver]: text
LOG_RE = re.compile(r'\[(\w+)\] \[(\d+\.\d+)\] \[driver\]: (.*)')


def apex_heights(bag) -> np.ndarray:
    """Base heights at the apexes (vertical speed + -> -, foot off the ground, after the first
    touchdown) from the recorded /joint_states and /foot_contact (one stamp per driver cycle)."""
    data = read_bag(bag, [contract.JOINT_STATES, contract.FOOT_CONTACT])
    js = joint_states(data[contract.JOINT_STATES])
    t_contact, force = wrenches(data[contract.FOOT_CONTACT])
    by_stamp = dict(zip(np.round(t_contact, 9), force[:, 2]))
    contact = np.array([by_stamp.get(round(t, 9), 0.0) > 10.0 for t in js.t])
    vz = js.v[:, 1]
    touched = np.cumsum(contact) > 0
    idx = np.flatnonzero((vz[:-1] > 0) & (vz[1:] <= 0) & ~contact[1:] & touched[1:]) + 1
    return js.q[idx, 1]


class Probe:
    """The test's node on the run's domain: joint states, diagnostics, the driver's e-stop."""

    def __init__(self, domain: int):
        self.context = rclpy.Context()
        rclpy.init(context=self.context, domain_id=domain)
        self.node = rclpy.create_node('hwint_probe', context=self.context)
        from rclpy.executors import SingleThreadedExecutor
        self.executor = SingleThreadedExecutor(context=self.context)
        self.executor.add_node(self.node)
        self.hops = 0
        self.diagnostics = []       # (receive time s, {name: (level, {key: value})})
        self.node.create_subscription(JointState, contract.CONTROLLER_STATE, self._on_state,
                                      contract.input_qos())
        self.node.create_subscription(DiagnosticArray, contract.DIAGNOSTICS, self._on_diag, 50)
        self.estop = self.node.create_client(Trigger, contract.DRIVER_ESTOP)

    def _on_state(self, msg):
        if 'hops' in msg.name:
            self.hops = msg.position[msg.name.index('hops')]

    def _on_diag(self, msg):
        self.diagnostics.append((time.time(), {
            s.name: (s.level[0] if isinstance(s.level, bytes) else s.level,
                     {kv.key: kv.value for kv in s.values}) for s in msg.status}))

    def spin_until(self, hop: HopRun, predicate, timeout: float, what: str):
        deadline = time.monotonic() + timeout
        while not predicate():
            if time.monotonic() > deadline:
                tail = '\n'.join(hop.children['driver'].lines[-15:]) if 'driver' in \
                    hop.children else ''
                raise AssertionError(f'timed out waiting for {what} (load average '
                                     f'{os.getloadavg()[0]:.1f}); driver:\n{tail}')
            hop.pump(0.0)
            self.executor.spin_once(timeout_sec=0.01)

    def close(self):
        self.node.destroy_node()
        rclpy.try_shutdown(context=self.context)


@pytest.fixture
def hardware_run(tmp_path):
    """(start(duration) -> (HopRun, Probe)): an emulated-hardware run of the graph with a bag;
    stopped (in order, SIGINT) at the end whatever happened."""
    runs = []

    def start(duration: float, params=PARAMS):
        domain = ros_domain_id()
        hop = HopRun(params, duration, bag=tmp_path / 'bag', env=ros_env(domain),
                     keep_lines=True, domain_id=domain, hardware='emulated',
                     out=open(os.devnull, 'w'))
        hop.check()
        probe = Probe(domain)
        runs.append((hop, probe))
        hop.start()
        return hop, probe

    yield start
    for hop, probe in runs:
        probe.close()
        if any(c.proc.poll() is None for c in hop.children.values()):
            hop.stop()
        hop.group.close()
        hop.release()


def driver_log(hop: HopRun, text: str) -> list:
    """(wall time s, message) of the driver's log lines containing ``text``."""
    out = []
    for line in hop.children['driver'].lines:
        match = LOG_RE.search(line)
        if match and text in match.group(3):
            out.append((float(match.group(2)), match.group(3)))
    return out


def test_dodo_hop_hardware_emulated_completes_with_a_complete_bag(tmp_path):
    bag = tmp_path / 'bag'
    proc = subprocess.run([sys.executable, '-m', 'dodo_sim.tools.cli', 'hop', '--hardware',
                           'emulated', '--duration', '5', '--bag', str(bag), '--no-plots',
                           '--domain-id', str(ros_domain_id())],
                          capture_output=True, text=True, env=ros_env(), cwd=REPO, timeout=300)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out[-4000:]
    assert re.search(r'dodo hop: completed: t = 5\.\d+ s \(\d+ cycles\) of driver time', out), out
    summary = re.search(r'dodo driver: .*published=(\d+) ', out)
    assert summary, out[-3000:]
    counts = message_counts(bag)
    # the recorder was up before the driver started publishing and stopped after it: every
    # state the driver published is in the bag
    assert counts[contract.JOINT_STATES] == int(summary.group(1)) == counts[
        contract.FOOT_CONTACT], (counts, summary.group(0))
    assert counts[contract.DIAGNOSTICS] >= 10 and counts.get(contract.CLOCK, 0) == 0, counts
    data = read_bag(bag, [contract.JOINT_STATES, contract.DIAGNOSTICS])
    js = joint_states(data[contract.JOINT_STATES])
    assert np.all(np.diff(js.stamp_ns) > 0) and np.isfinite(js.q).all()
    names = {s.name for m in data[contract.DIAGNOSTICS].messages for s in m.status}
    assert {'driver: safety', 'driver: actuator hip', 'driver: actuator knee',
            'driver: sensor board', 'driver: bus'} <= names
    assert js.q[:, 1].max() > 1.1          # it left the ground after landing


def test_controller_hops_through_driver_and_emulator_then_estop_turns_motors_off(hardware_run):
    hop, probe = hardware_run(12.0)
    probe.spin_until(hop, lambda: driver_log(hop, 'enable_on_start: enabled'), 120.0,
                     'the driver to enable itself')
    probe.spin_until(hop, lambda: probe.hops >= 9, 60.0, '9 hops')
    probe.spin_until(hop, probe.estop.service_is_ready, 20.0, contract.DRIVER_ESTOP)
    future = probe.estop.call_async(Trigger.Request())
    probe.spin_until(hop, future.done, 20.0, 'the e-stop response')
    assert future.result().success
    probe.spin_until(hop, lambda: probe.diagnostics and driver_log(hop, 'e-stop by')
                     and probe.diagnostics[-1][0] > driver_log(hop, 'e-stop by')[0][0] + 0.6,
                     20.0, 'diagnostics after the e-stop')
    assert hop.wait(120.0), hop.failures
    hop.stop()
    result = hop.result('completed')
    assert result.exit_code == 0, (result.summary(), result.failures)
    apex = apex_heights(hop.bag)
    late = apex[3:]
    spread = (late.max() - late.min()) / late.mean()
    print(f'apexes {np.round(apex, 4)}; spread after hop 3 {spread:.4f}; '
          f'{result.driver_summary()}; load {os.getloadavg()[0]:.1f}')
    assert len(apex) >= 7, apex
    assert spread < 0.02, (apex, result.driver_summary())
    assert abs(late.mean() - 1.2) < 0.03, apex          # config/hop.yaml apex_height
    # e-stop: the driver handled it at `handled` (its log line); the first cycle after that sent
    # disable frames, so every state stamped later measures a motor off (zero torque, within a
    # count of the 12-bit field), while the cycle before still carried the controller's torque
    handled = driver_log(hop, 'e-stop by')[0][0]
    js = joint_states(read_bag(hop.bag, [contract.JOINT_STATES])[contract.JOINT_STATES])
    effort = np.abs(js.effort[:, 2:]).max(axis=1)
    after = js.t > handled
    assert effort[after].max() <= TORQUE_COUNT, effort[after][:5]
    first_off = js.t[after][0]
    assert effort[~after][-1] > TORQUE_COUNT           # the motors were on before
    print(f'e-stop handled -> first state with the motors off: {1e3 * (first_off - handled):.2f}'
          f' ms (period {1e3 * PERIOD:g} ms)')
    status = next(d for t, d in probe.diagnostics if t > handled + 0.05)
    assert status['driver: safety'][1]['state'] == 'estop'
    for joint in ('hip', 'knee'):
        assert status[f'driver: actuator {joint}'][1]['motor_on'] == 'False'
        assert status[f'driver: actuator {joint}'][1]['mode'] == 'off'


def test_killed_controller_gives_zero_torque_plus_damping_within_command_timeout(
        hardware_run, tmp_path):
    params = tmp_path / 'params.yaml'         # config/hop.yaml, diagnostics at 10 Hz
    params.write_text(PARAMS.read_text().replace(
        '    emulator_dt: 0.001', '    diagnostics_period: 0.1\n    emulator_dt: 0.001'))
    hop, probe = hardware_run(30.0, params)
    probe.spin_until(hop, lambda: probe.hops >= 3, 120.0, '3 hops')
    hop.children['controller'].send(signal.SIGKILL)
    killed = time.time()
    hop.children['controller'].stop_requested = True

    def damping_reported():
        return any(t > killed and all(
            d[f'driver: actuator {j}'][1]['mode'] == 'damping' for j in ('hip', 'knee'))
            for t, d in probe.diagnostics)

    probe.spin_until(hop, damping_reported, 30.0, 'damping mode on /diagnostics')
    first = next(d for t, d in probe.diagnostics if t > killed and all(
        d[f'driver: actuator {j}'][1]['mode'] == 'damping' for j in ('hip', 'knee')))
    level, safety = first['driver: safety']
    assert level == 1 and safety['watchdog_active'] == 'True'             # WARN
    assert 'watchdog' in safety['state'] + str(safety) and safety['state'] == 'enabled'
    for joint, kd in zip(('hip', 'knee'), DAMPING):
        values = first[f'driver: actuator {joint}'][1]
        assert float(values['command_torque_nm']) == 0.0
        assert float(values['command_kd_nms_rad']) == kd
        assert values['motor_on'] == 'True'
    hop.stop()
    # the recorded states: after the controller's last command (its stamp: the state it
    # answered) the driver holds that torque until command_timeout has passed since it received
    # it, then the motors damp: measured torque = -kd v (two counts of the torque field)
    data = read_bag(hop.bag, [contract.JOINT_STATES, contract.JOINT_COMMANDS])
    last_command = max(m.header.stamp.sec + 1e-9 * m.header.stamp.nanosec
                       for m in data[contract.JOINT_COMMANDS].messages)
    js = joint_states(data[contract.JOINT_STATES])
    tau, v, t = js.effort[:, 2:], js.v[:, 2:], js.t
    damped = np.all(np.abs(tau + np.asarray(DAMPING) * v) <= 2 * TORQUE_COUNT, axis=1)
    after = np.flatnonzero(t > last_command)
    # the first state of the watchdog: damped from there on (100 cycles)
    first = next(i for i in after if damped[i:i + 100].all())
    held = t[first] - last_command
    print(f'state answered by the last command -> zero torque + damping: {1e3 * held:.1f} ms '
          f'(command_timeout {1e3 * COMMAND_TIMEOUT:g} ms, period {1e3 * PERIOD:g} ms)')
    # not before command_timeout; after it, within the answer's delivery and a period or two
    assert COMMAND_TIMEOUT <= held <= COMMAND_TIMEOUT + 0.01, held
    assert not damped[after[0]:after[0] + 20].all()     # the held command was a real torque
