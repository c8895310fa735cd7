# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
Every node's loop runs with what the node built frozen out of Python's garbage collector.

A full collection in the driver's process walks ~150k objects (models, kernels, rclpy) in about
80 ms: one of them in the 1 kHz loop held the commands of a whole stance phase. ``run_node``
collects and freezes once the node is built (docs/hardware.md, "Timing").
"""
from __future__ import annotations

import subprocess
import sys

from conftest import REPO, ros_env
import pytest

pytestmark = pytest.mark.ros

NODE = """
import gc, sys
from rclpy.node import Node
from rclpy.task import Future
from dodo_sim.ros import runtime

class Probe(Node):
    def __init__(self):
        super().__init__('gc_probe')
        self.done = Future()
        self.exit_code = 0
        self.create_timer(0.01, self.check)

    def check(self):
        if not self.done.done():
            print('frozen', gc.get_freeze_count(), flush=True)
            self.done.set_result(0)

sys.exit(runtime.run_node(Probe, 'gc_probe'))
"""


def test_run_node_spins_with_the_built_objects_frozen():
    out = subprocess.run([sys.executable, '-c', NODE], capture_output=True, text=True,
                         env=ros_env(), cwd=REPO, timeout=60)
    assert out.returncode == 0, out.stderr[-2000:]
    frozen = int(out.stdout.split()[1])
    assert frozen > 10_000, out.stdout          # rclpy and the node: tens of thousands at least
