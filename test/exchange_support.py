# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
Shared pieces of the exchange fault tests (test_exchange_*.py).

A simulator node in the test process (its counters readable) with a probe recording every state and
stamped command, the controller node(s) as separate processes (so they can be stopped, started late
or starved), and the offline reference built with :func:`dodo_sim.rollout.rollout` on the same
params file.
"""
from __future__ import annotations

import os
from pathlib import Path
import signal
import subprocess
import sys
import time

from conftest import REPO, ros_domain_id, ros_env
from dodo_control.controller import Controller, ControllerConfig
from dodo_sim.paths import default_urdf_path
from dodo_sim.rollout import rollout
from dodo_sim.ros import contract
from dodo_sim.ros.params import config_from_file
from dodo_sim.simulator import SimConfig, Simulator
import numpy as np
import rclpy
from rclpy.parameter import Parameter
from sensor_msgs.msg import JointState

PARAMS = """
/**:
  ros__parameters:
    use_sim_time: true
simulator:
  ros__parameters:
    mode: {mode}
    initial_q: [0.0, 1.3, 0.3, -0.6]
    command_timeout: {command_timeout}
controller:
  ros__parameters:
    apex_height: 1.2
    target_x: .nan
    target_velocity: 0.0
"""


def write_params(tmp_path: Path, mode='lockstep', command_timeout=2.0) -> Path:
    path = tmp_path / 'params.yaml'
    path.write_text(PARAMS.format(mode=mode, command_timeout=command_timeout))
    return path


def stamp_ns(msg) -> int:
    return msg.header.stamp.sec * 1_000_000_000 + msg.header.stamp.nanosec


class Recorder:
    """Subscriptions (deep, reliable) keeping every state and stamped command as plain tuples."""

    def __init__(self, node):
        from rclpy.qos import QoSProfile, ReliabilityPolicy
        qos = QoSProfile(depth=contract.STREAM_DEPTH, reliability=ReliabilityPolicy.RELIABLE)
        self.states = []         # (stamp_ns, q, v, effort)
        self.commands = []       # (stamp_ns, names, effort)
        node.create_subscription(JointState, contract.JOINT_STATES, self._on_state, qos)
        node.create_subscription(JointState, contract.JOINT_COMMANDS, self._on_command, qos)

    def _on_state(self, msg):
        self.states.append((stamp_ns(msg), tuple(msg.position), tuple(msg.velocity),
                            tuple(msg.effort)))

    def _on_command(self, msg):
        self.commands.append((stamp_ns(msg), tuple(msg.name), tuple(msg.effort)))


class Process:
    """A node process started by a test; output to a file; stopped by pid, never by name."""

    def __init__(self, args, env, log: Path):
        self.log = log
        self._file = open(log, 'w')
        self.proc = subprocess.Popen(args, env=env, stdout=self._file, stderr=subprocess.STDOUT,
                                     cwd=REPO)

    @property
    def pid(self) -> int:
        return self.proc.pid

    def stop(self, timeout=20.0) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGCONT)     # in case a test left it stopped
            self.proc.send_signal(signal.SIGINT)
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)
        self._file.close()
        return self.proc.returncode

    def output(self) -> str:
        self._file.flush()
        return self.log.read_text()


def controller_process(params: Path, env, log: Path, name='controller', **parameters):
    args = [sys.executable, '-m', 'dodo_sim.ros.controller_node', '--ros-args', '-r',
            f'__node:={name}', '--params-file', str(params)]
    for key, value in parameters.items():
        args += ['-p', f'{key}:={value}']
    return Process(args, env, log)


class LockstepGraph:
    """
    The simulator node in this process (one EventsExecutor with a recording probe).

    The controller(s) run as processes over real DDS on a private domain.
    """

    def __init__(self, tmp_path: Path, params: Path, stop_after: float, **sim_parameters):
        self.tmp_path = tmp_path
        self.params = params
        self.domain = ros_domain_id()
        self.env = ros_env(self.domain)
        os.environ.setdefault('ROS_AUTOMATIC_DISCOVERY_RANGE', 'LOCALHOST')
        self.context = rclpy.Context()
        rclpy.init(context=self.context, domain_id=self.domain,
                   args=['--ros-args', '--params-file', str(params)])
        from dodo_sim.ros.simulator_node import SimulatorNode
        from rclpy.experimental import EventsExecutor
        self.executor = EventsExecutor(context=self.context)
        # subscribers of the state topics: the controller and the probe
        overrides = {'stop_after': stop_after, 'min_subscribers': 2}
        overrides.update(sim_parameters)
        self.sim = SimulatorNode(context=self.context, parameter_overrides=[
            Parameter(k, value=v) for k, v in overrides.items()])
        self.probe = rclpy.create_node('probe', context=self.context)
        self.recorder = Recorder(self.probe)
        from rosgraph_msgs.msg import Clock
        self.probe.create_subscription(Clock, contract.CLOCK, lambda m: None, 10)
        from geometry_msgs.msg import WrenchStamped
        self.probe.create_subscription(WrenchStamped, contract.FOOT_CONTACT, lambda m: None, 10)
        self.executor.add_node(self.sim)
        self.executor.add_node(self.probe)
        self.processes = []

    def start_controller(self, name='controller', **parameters) -> Process:
        # subscribers of /joint_commands: the simulator and the probe
        parameters.setdefault('min_subscribers', 2)
        process = controller_process(self.params, self.env, self.tmp_path / f'{name}.log', name,
                                     **parameters)
        self.processes.append(process)
        return process

    def spin_until(self, condition, timeout_s: float, on_spin=None) -> bool:
        deadline = time.monotonic() + timeout_s
        while not condition():
            if time.monotonic() > deadline:
                return False
            self.executor.spin_once(timeout_sec=0.005)
            if on_spin is not None:
                on_spin()
        return True

    def finish(self, timeout_s=120.0, on_spin=None, until=None) -> None:
        """
        Spin until the run ends (or ``until()`` holds).

        It then keeps in ``self.states`` every state published so far (in order, none missing) and
        in ``self.commands`` every stamped command seen, including the answer to the last state
        that was stepped from.
        """
        done = self.sim.done.done if until is None else until
        assert self.spin_until(done, timeout_s, on_spin), (
            f'run did not finish: {self.sim.steps} steps', self.logs())
        count = self.sim.steps + 1
        recorded = self.recorder.states
        assert self.spin_until(lambda: len(recorded) >= count, 20.0), (len(recorded), count)
        self.states = recorded[:count]
        last_stepped = self.states[-2][0]
        self.spin_until(lambda: any(c[0] == last_stepped for c in self.recorder.commands[-50:]),
                        5.0)
        self.commands = list(self.recorder.commands)

    def logs(self) -> str:
        return '\n'.join(f'--- {p.log.name}\n{p.output()[-3000:]}' for p in self.processes)

    def close(self) -> list:
        codes = [p.stop() for p in self.processes]
        self.sim.destroy_node()
        self.probe.destroy_node()
        rclpy.try_shutdown(context=self.context)
        return codes


class Stall:
    """SIGSTOP a process when ``when()`` first holds, SIGCONT it ``seconds`` later (wall)."""

    def __init__(self, process: Process, when, seconds: float):
        self.process, self.when, self.seconds = process, when, seconds
        self.stopped_at = None
        self.done = False

    def __call__(self) -> None:
        if self.done:
            return
        now = time.monotonic()
        if self.stopped_at is None and self.when():
            os.kill(self.process.pid, signal.SIGSTOP)
            self.stopped_at = now
        elif self.stopped_at is not None and now - self.stopped_at >= self.seconds:
            os.kill(self.process.pid, signal.SIGCONT)
            self.done = True


def reference_run(params: Path, states, commands):
    """
    Return the same run offline (:func:`rollout`).

    A fresh Controller is fed exactly the states the controller node answered (the stamps of its
    /joint_commands), in order; in each step the torque the ROS run applied must be that
    controller's answer to *this* state, or zero (a step without an answer in time).

    Returns ``(run, zero_steps, mismatches)``: the rollout (whose states must equal the ROS
    run's bit for bit), the steps the ROS run took with zero torque instead of an answer, and
    the steps whose applied torque was neither (a shifted or foreign command).
    """
    sim = Simulator(default_urdf_path(), config_from_file(SimConfig, params, 'simulator'))
    ctrl = Controller(sim.leg.urdf_xml, config_from_file(ControllerConfig, params, 'controller'))
    answered = {stamp for stamp, _, _ in commands}
    stamps = [s[0] for s in states]
    applied = [np.array(s[3][2:]) for s in states[1:]]
    zero = np.zeros(2)
    zero_steps, mismatches = [], []

    class Policy:
        k = 0

        def update(self, t, q, v, force):
            k = self.k
            self.k += 1
            assert int(round(t * 1e9)) == stamps[k], (k, t, stamps[k])
            tau = ctrl.update(t, q, v, force) if stamps[k] in answered else None
            if tau is not None and np.array_equal(applied[k], tau):
                return tau
            if np.array_equal(applied[k], zero):
                zero_steps.append(k)
                return zero
            mismatches.append(k)
            return applied[k]

    run = rollout(sim, Policy(), steps=len(states) - 1)
    return run, zero_steps, mismatches


def assert_same_states(run, states) -> None:
    """Check that the ROS run's states are the offline run's, bit for bit."""
    np.testing.assert_array_equal(np.array([s[1] for s in states]), run.q)
    np.testing.assert_array_equal(np.array([s[2] for s in states]), run.v)
    np.testing.assert_array_equal(np.array([s[0] for s in states]),
                                  np.round(run.t * 1e9).astype(np.int64))


def apex_heights(states) -> np.ndarray:
    z = np.array([s[1][1] for s in states])
    vz = np.array([s[2][1] for s in states])
    idx = np.nonzero((vz[:-1] > 0.0) & (vz[1:] <= 0.0))[0] + 1
    return z[idx]
