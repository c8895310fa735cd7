# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
Helpers of the bag tests.

They cover processes a test starts (ended by pid), a hopper run under ``dodo hop`` or as separate
node processes, runtime parameter changes over DDS, and a closed loop written to a bag offline (no
DDS) in the layout the nodes and the recorder produce.
"""
from __future__ import annotations

from pathlib import Path
import subprocess
import sys
import threading
import time

import numpy as np

REPO = Path(__file__).resolve().parent.parent
HOP_PARAMS = REPO / 'config' / 'hop.yaml'


class Procs:
    """The processes a test started; every one still running is killed (by pid) at the end."""

    def __init__(self):
        self.procs: list[subprocess.Popen] = []
        self.lines: dict[int, list[str]] = {}

    def start(self, args, env, name: str = '') -> subprocess.Popen:
        proc = subprocess.Popen(args, env=env, cwd=REPO, stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, text=True, bufsize=1)
        self.procs.append(proc)
        lines: list[str] = []
        self.lines[proc.pid] = lines

        def read():
            for line in proc.stdout:
                lines.append(line.rstrip('\n'))

        threading.Thread(target=read, daemon=True).start()
        return proc

    def wait_line(self, proc, text: str, timeout_s: float) -> str:
        """
        Return the first output line of ``proc`` containing ``text``.

        Raises AssertionError after the deadline or when the process ended without it.
        """
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            for line in list(self.lines[proc.pid]):
                if text in line:
                    return line
            if proc.poll() is not None:
                time.sleep(0.2)           # let the reader thread take the last lines
                for line in list(self.lines[proc.pid]):
                    if text in line:
                        return line
                break
            time.sleep(0.02)
        raise AssertionError(f'no line with {text!r} within {timeout_s} s (exit code '
                             f'{proc.poll()}); output:\n' + '\n'.join(self.lines[proc.pid][-40:]))

    def output(self, proc) -> str:
        return '\n'.join(self.lines[proc.pid])

    def cleanup(self):
        for proc in self.procs:
            if proc.poll() is None:
                proc.kill()
                proc.wait(timeout=10)


def node_cmd(module: str, name: str, params_file=None, **parameters) -> list:
    """``python -m module --ros-args -r __node:=name [--params-file F] -p k:=v ...``."""
    cmd = [sys.executable, '-m', module, '--ros-args', '-r', f'__node:={name}']
    if params_file is not None:
        cmd += ['--params-file', str(params_file)]
    for key, value in parameters.items():
        if isinstance(value, bool):
            text = 'true' if value else 'false'
        elif isinstance(value, (list, tuple)):
            text = '[' + ', '.join(f"'{v}'" if isinstance(v, str) else repr(v)
                                   for v in value) + ']'
        else:
            text = str(value)
        cmd += ['-p', f'{key}:={text}']
    return cmd


def recorder_cmd(bag, **parameters) -> list:
    return node_cmd('dodo_sim.ros.recorder', 'recorder', bag=str(bag), **parameters)


def hop_cmd(bag, duration_s: float, params_file=HOP_PARAMS) -> list:
    return [sys.executable, '-m', 'dodo_sim.tools.cli', 'hop', '--duration', str(duration_s),
            '--bag', str(bag), '--no-plots', '--params-file', str(params_file)]


SET_PARAMETER = """
import sys
import rclpy
from rclpy.parameter import Parameter
from rclpy.parameter_client import AsyncParameterClient
rclpy.init()
node = rclpy.create_node('bag_test_param_setter')
client = AsyncParameterClient(node, sys.argv[1])
if not client.wait_for_services(30.0):
    sys.exit('parameter services of ' + sys.argv[1] + ' not found')
future = client.set_parameters([Parameter(sys.argv[2], value=float(sys.argv[3]))])
rclpy.spin_until_future_complete(node, future, timeout_sec=30.0)
result = future.result()
ok = result is not None and all(r.successful for r in result.results)
print('set', sys.argv[2], sys.argv[3], 'ok' if ok else result)
sys.exit(0 if ok else 1)
"""


def set_parameter(env, node: str, name: str, value: float) -> None:
    """``ros2 param set`` without ros2cli: one rclpy process (waits for the node's services)."""
    result = subprocess.run([sys.executable, '-c', SET_PARAMETER, node, name, repr(value)],
                            env=env, cwd=REPO, capture_output=True, text=True, timeout=90)
    assert result.returncode == 0, f'{result.stdout}\n{result.stderr}'


def closed_loop(params_file=HOP_PARAMS, duration_s: float = 1.0, change=None):
    """
    Return an offline run of the simulator + controller cores as the ROS nodes drive them.

    The run uses :func:`dodo_sim.rollout.rollout`.

    ``change``: ``(tick, {name: value})``: a runtime parameter change accepted after the command
    of that tick (as ``ros2 param set`` between two updates), applied through
    ``Controller.reconfigure`` like the controller node does.

    Returns dict with urdf_xml, sim (SimConfig), ctrl_values (the controller parameters at
    start), rows [(stamp_ns, q, v, force_xz, tau, channels dict, revision)], change.
    """
    import dataclasses

    from dodo_control.controller import Controller, ControllerConfig
    from dodo_sim.paths import default_urdf_path
    from dodo_sim.rollout import rollout
    from dodo_sim.stamps import stamp_ns
    from dodo_sim.ros.params import (coerce_value, config_from_file, config_from_parameters,
                                     config_to_parameters)
    from dodo_sim.simulator import SimConfig, Simulator

    urdf = str(default_urdf_path())
    sim = Simulator(urdf, config_from_file(SimConfig, params_file, 'simulator'))
    config = config_from_file(ControllerConfig, params_file, 'controller')
    ctrl = Controller(urdf, config)
    sim.reset()
    extra = []
    revision = [0]

    def on_tick(k, state, tau):
        t = ctrl.telemetry
        extra.append(({'phase': 1.0 if t.phase == 'stance' else 0.0,
                       'angle_of_attack_rad': float(t.angle_of_attack_rad),
                       'apex_height': float(t.apex_height)}, revision[0]))
        if change is not None and k == change[0]:
            values = {f.name: getattr(ctrl.config, f.name)
                      for f in dataclasses.fields(ControllerConfig)}
            for name, value in change[1].items():
                values[name] = coerce_value(ControllerConfig, name, value)
            ctrl.reconfigure(config_from_parameters(ControllerConfig, values))
            revision[0] += 1

    steps = int(round(duration_s / sim.config.control_period)) + 1
    run = rollout(sim, ctrl, steps=steps, on_tick=on_tick)
    rows = [(stamp_ns(run.t[k]), run.q[k].copy(), run.v[k].copy(),
             run.contact_forces[k].copy(),
             run.tau[k].copy(), extra[k][0], extra[k][1]) for k in range(run.ticks)]
    from dodo_sim.physics.robot import robot_description_xml
    return {'urdf_xml': robot_description_xml(urdf),
            'ctrl_values': config_to_parameters(config), 'rows': rows, 'change': change}


def write_run(path, run, *, parameters=True, changes=True, revision_channel=True,
              joint_commands=True, effort_commands=True, state=True, perturb=None):
    """
    Return a bag of :func:`closed_loop` laid out as the ROS graph records it.

    It holds /robot_description, the controller's parameters (snapshot), /foot_contact +
    /joint_states + /clock per state, /joint_commands + /effort_controller/commands +
    /controller/state per answer (channels, tau_<joint>, config_revision), and the runtime change
    as a /parameter_events message between the answers it separates.
    """
    from dodo_sim.tools.bag_writer import OfflineBagWriter
    with OfflineBagWriter(path) as w:
        w.robot_description(run['urdf_xml'])
        if parameters:
            w.parameters('controller', run['ctrl_values'])
        for k, (ns, q, v, force, tau, channels, revision) in enumerate(run['rows']):
            t = ns * 1e-9
            w.step(t, q, v, np.r_[0.0, 0.0, tau], force)
            tau = tau.copy()
            if perturb is not None and k == perturb[0]:
                tau[1] += perturb[1]
            if joint_commands:
                w.joint_command(t, ['hip', 'knee'], tau)
            if effort_commands:
                w.command(t, tau)
            if state:
                names = list(channels) + ['tau_hip', 'tau_knee']
                values = list(channels.values()) + [tau[0], tau[1]]
                if revision_channel:
                    names.append('config_revision')
                    values.append(float(revision))
                w.controller_state(t, names, values)
            if changes and run['change'] is not None and k == run['change'][0]:
                w.parameter_change('controller', run['change'][1], t,
                                   log_ns=w.log_offset_ns + ns + 700_000)
    return path


def zstd_zeros_frame(zeros: int) -> bytes:
    """
    Return a zstd frame of ``zeros`` zero bytes: a few kB that decompress to ``zeros`` bytes.

    The frame header states its content size (what a decompressor allocates).
    """
    import zstandard
    compressor = zstandard.ZstdCompressor(level=3).compressobj(size=zeros)
    block, parts, left = bytes(1 << 20), [], zeros
    while left:
        parts.append(compressor.compress(block[:min(left, len(block))]))
        left -= min(left, len(block))
    return b''.join(parts) + compressor.flush()
