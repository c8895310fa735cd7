# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
Bounded controller ticks (issue 15, item 4).

The apex solve of the SLIP controller (neutral angle, observer prediction: several SLIP return-map
evaluations) and its start-up work (posture table, return-map calibration) are spread over control
ticks, scheduled in ticks.

Call accounting, not timing: every RK4 step of the SLIP stance flow the controller integrates is
counted per ``update()``; no tick may run more than one chunk of them
(``APEX_SOLVE_RK4_STEPS_PER_TICK``), while a one-call solve runs hundreds. The spread solve
computes the angle the one-call solve gives on the apex's inputs; the hop results (the angle
takes effect a few ticks after the apex) are held by the scenario tests.
"""
from __future__ import annotations

from dodo_control import controller as controller_module
from dodo_control.controller import APEX_SOLVE_RK4_STEPS_PER_TICK, Controller, ControllerConfig
from dodo_control.slip import template as slip
from dodo_sim.paths import default_urdf_path
from dodo_sim.rollout import rollout
from dodo_sim.simulator import SimConfig, Simulator
import numpy as np
import pytest


def _count_stance_steps(monkeypatch) -> list:
    """
    Count the resumptions of stance flows of slip.stance_flow_steps.

    Wraps slip.stance_flow_steps so that every resumption of a stance flow (a chunk of its RK4
    steps, or its end) is counted in the returned one-element list.
    """
    counter = [0]
    real = slip.stance_flow_steps

    def counted(pos, vel, rest_length, spec, chunk_steps):
        inner = real(pos, vel, rest_length, spec, chunk_steps)
        while True:
            try:
                next(inner)
            except StopIteration as stop:
                counter[0] += 1
                return stop.value
            counter[0] += 1
            yield

    monkeypatch.setattr(slip, 'stance_flow_steps', counted)
    return counter


def _run(policy: str, monkeypatch, duration_s: float = 3.0):
    """(resumptions of stance flows per update, telemetry per update, controller)."""
    resumed = _count_stance_steps(monkeypatch)
    urdf = default_urdf_path()
    sim = Simulator(urdf, SimConfig(initial_q=(0.0, 1.2, 0.3, -0.6)))
    ctrl = Controller(urdf, ControllerConfig(flight_policy=policy, target_velocity=0.3))
    per_tick, telemetry = [], []
    update = ctrl.update

    def counted_update(t, q, v, force):
        before = resumed[0]
        tau = update(t, q, v, force)
        per_tick.append(resumed[0] - before)
        telemetry.append(ctrl.telemetry)
        return tau

    ctrl.update = counted_update
    rollout(sim, ctrl, duration_s=duration_s)
    return np.array(per_tick), telemetry, ctrl


@pytest.mark.parametrize('policy', ['cascade', 'deadbeat'])
def test_no_tick_runs_more_than_one_chunk_of_the_apex_solve(policy, monkeypatch):
    per_tick, telemetry, ctrl = _run(policy, monkeypatch)
    apexes = [k for k, tel in enumerate(telemetry) if 'apex' in tel.events]
    assert len(apexes) >= 3, apexes
    # the solves ran (many stance-flow chunks in all); a tick resumes at most two flows: the
    # end of one evaluation and the start of the next (which yields before its first step)
    assert per_tick.sum() > 20 * len(apexes)
    assert per_tick.max() <= 2, np.flatnonzero(per_tick > 2)
    assert ctrl.apex_solves_forced == 0


def test_a_tick_runs_at_most_a_chunk_of_rk4_steps(monkeypatch):
    """The RK4 steps themselves: the compiled flow counts them in its state (``_STEPS``)."""
    steps = [0]
    real_flow = slip._flow

    def counting_flow(state, params, chunk_steps):
        before = state[slip._STEPS]
        status = real_flow(state, params, chunk_steps)
        steps[0] += int(state[slip._STEPS] - before)
        return status

    monkeypatch.setattr(slip, '_flow', counting_flow)
    urdf = default_urdf_path()
    sim = Simulator(urdf, SimConfig(initial_q=(0.0, 1.2, 0.3, -0.6)))
    ctrl = Controller(urdf, ControllerConfig(target_velocity=0.3))
    per_tick = []
    update = ctrl.update

    def counted_update(t, q, v, force):
        before = steps[0]
        tau = update(t, q, v, force)
        per_tick.append(steps[0] - before)
        return tau

    ctrl.update = counted_update
    rollout(sim, ctrl, duration_s=2.0)
    per_tick = np.array(per_tick)
    assert per_tick.sum() > 500                  # the solves integrated hundreds of steps
    # a chunk; the flow that ends in a tick and the next one's first step
    assert per_tick.max() <= APEX_SOLVE_RK4_STEPS_PER_TICK + 2, per_tick.max()


def test_the_spread_solve_gives_the_one_call_angle(monkeypatch):
    """
    The solve spread over ticks computes, on the apex's inputs.

    The angle the one-call deadbeat solve gives for them (same arithmetic; only when it takes
    effect differs).
    """
    urdf = default_urdf_path()
    sim = Simulator(urdf, SimConfig(initial_q=(0.0, 1.2, 0.3, -0.6)))
    ctrl = Controller(urdf, ControllerConfig(flight_policy='deadbeat', target_velocity=0.3))
    recorded = []
    real_solve = controller_module.Controller._apex_solve

    def spy(self, com, vx, v_model):
        spec = self._stance_spec(self._apex_target_rel())
        expected = slip.deadbeat_angle(
            v_model, float(com[1] - self._hop_memory.ground), vx, self.rest_length, spec,
            self._config.max_angle_of_attack, impact_matrix=self._table.impact_matrix,
            precompress=self._config.impact_compensation, guess=self._alpha,
            tolerance_mps=1e-3)
        recorded.append(expected)
        return real_solve(self, com, vx, v_model)

    monkeypatch.setattr(controller_module.Controller, '_apex_solve', spy)
    angles = []
    update = ctrl.update

    def watched(t, q, v, force):
        job_before = ctrl._apex_job
        tau = update(t, q, v, force)
        if job_before is not None and ctrl._apex_job is None:
            angles.append(ctrl._alpha)              # the solve just ended
        return tau

    ctrl.update = watched
    rollout(sim, ctrl, duration_s=3.0)
    assert len(recorded) >= 3
    # the first job ended is the start-up work chained with the first apex's solve
    assert angles[-len(recorded):] == recorded
