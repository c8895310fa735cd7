# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
Start in seconds: no numba JIT compile on a node's start-up path (issue 15, item 3).

The install step fills numba's cache (``python -m dodo_sim.tools.precompile``, in the README's
install line and ``.ci/run``). Here, in a fresh process: the simulator node's and the controller
node's constructors, the first steps of both integrators and the first controller update must
compile nothing (numba's ``numba:compile`` events are counted), so a node reaches "simulation
starts" after discovery, not after a ~30 s compile (146 s measured on a loaded machine).
"""
import subprocess
import sys

from conftest import REPO, ros_domain_id, ros_env
import pytest

pytest.importorskip('rclpy')
pytest.importorskip('numba')

START_UP = """
import sys
import numpy as np
import rclpy
from rclpy.parameter import Parameter
from dodo_sim.tools.precompile import compile_events

rclpy.init(domain_id=int(sys.argv[1]))
with compile_events() as compiled:
    from dodo_sim.ros.simulator_node import SimulatorNode
    from dodo_sim.ros.controller_node import ControllerNode
    for integrator in ('timestepping', 'event'):
        node = SimulatorNode(parameter_overrides=[Parameter('integrator', value=integrator)])
        for _ in range(3):
            state = node.sim.step(np.zeros(len(node.sim.actuated_joint_names)))
        urdf = node.sim.leg.urdf_xml
        node.destroy_node()
    ctrl = ControllerNode(parameter_overrides=[Parameter('robot_description', value=urdf)])
    ctrl.ctrl.update(state.t, state.q.copy(), state.v.copy(), np.asarray(state.contact_force))
    ctrl.destroy_node()
rclpy.shutdown()
print('compiled:', len(compiled), compiled)
"""


def test_no_jit_compile_in_the_node_constructors_or_first_steps():
    proc = subprocess.run([sys.executable, '-c', START_UP, str(ros_domain_id())],
                          env=ros_env(), cwd=REPO, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert 'compiled: 0 []' in proc.stdout, (
        f'numba compiled kernels on the start-up path (run `python -m '
        f'dodo_sim.tools.precompile` after installing): {proc.stdout[-2000:]}')
