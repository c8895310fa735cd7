# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
A hopper tick between hop events is one compiled call, in ``rollout`` as in the controller node.

Not a timing: the test counts the Python functions of ``dodo_control`` that run in each
``Controller.update`` of a closed-loop run (``sys.setprofile``). A tick that fell back to Python
per step (the former scalar tick, numba missing, an argument the compiled signature does not
take) runs the terms, contact, phase and law functions: many more calls.
"""
from pathlib import Path
import sys

from conftest import URDF_XACRO
import dodo_control
from dodo_control.controller import Controller, ControllerConfig
from dodo_sim.rollout import rollout
from dodo_sim.simulator import SimConfig, Simulator
import pytest

PACKAGE = str(Path(dodo_control.__file__).resolve().parent)

pytest.importorskip('numba')


class _Counted:
    """The controller as ``rollout``'s policy, counting its Python calls per tick."""

    def __init__(self, ctrl):
        self.ctrl = ctrl
        self.contact_frames = ctrl.contact_frames
        self.ticks = []          # (python calls, events, busy) per tick
        self._calls = 0

    def _profile(self, frame, event, arg):
        if event == 'call' and frame.f_code.co_filename.startswith(PACKAGE):
            self._calls += 1

    def update(self, t, q, v, force):
        busy = self.ctrl.busy                  # spread apex or start-up work runs this tick
        self._calls = 0
        sys.setprofile(self._profile)
        try:
            tau = self.ctrl.update(t, q, v, force)
        finally:
            sys.setprofile(None)
        self.ticks.append((self._calls, self.ctrl.telemetry.events, busy or self.ctrl.busy))
        return tau


@pytest.mark.parametrize('integrator', ['timestepping', 'event'])
def test_a_tick_between_hop_events_runs_no_python_but_update(integrator):
    sim = Simulator(URDF_XACRO, SimConfig(integrator=integrator,
                                          initial_q=(0.0, 1.2, 0.3, -0.6)))
    policy = _Counted(Controller(URDF_XACRO, ControllerConfig(target_velocity=0.3)))
    rollout(sim, policy, duration_s=1.5)
    plain = [calls for calls, events, busy in policy.ticks if not events and not busy]
    assert len(plain) > 1200                  # most ticks: no event, no spread apex work
    # Controller.update and the compiled tick (numba reports a compiled function's call to the
    # profiler as its Python function's), nothing else
    assert max(plain) <= 2, sorted(set(plain))
    assert policy.ctrl.telemetry.hops >= 2    # it hopped: stance and flight ticks both ran
