# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
One closed-loop run of a SLIP-controlled leg, shared by the hopper's and the boom leg's scenarios.

:class:`SlipRun` builds the simulator and the SLIP controller from one robot description (the
controller's model is exact, as on a robot with an identified model), runs them through
:func:`dodo_sim.rollout.rollout` and turns what makes a run unusable into
:class:`~dodo_control.scenarios.ScenarioFailed` with its reason
(:mod:`dodo_control.scenarios.failures`; a leg that does not hop: :func:`check_hops`, the rule of
:mod:`dodo_control.slip.outcome`). Each robot's module subclasses it
with what it measures (the hopper: its CoG; the boom leg: its hip over the ground and its arc).
"""
from __future__ import annotations

from pathlib import Path

from dodo_control.controller import Controller
from dodo_control.scenarios import Perturbation, ScenarioFailed
from dodo_control.scenarios.failures import configuration_refused, run_failures
from dodo_control.slip.outcome import judge_rollout
from dodo_sim.model import robot_description_xml
from dodo_sim.rollout import rollout
from dodo_sim.simulator import SimConfig, Simulator
import numpy as np

#: below this |knee| (rad) the leg counts as stretched: the SLIP law's leg length has no
#: inverse there, and a knee that changes sign went through it
STRETCHED_KNEE_RAD = 0.05


def check_knee_stays_bent(knee) -> None:
    """Raise ScenarioFailed when the knee angles (rad) change sign or come near zero."""
    knee = np.asarray(knee, dtype=float)
    if not np.all(np.sign(knee) == np.sign(knee[0])) or np.min(np.abs(knee)) < STRETCHED_KNEE_RAD:
        raise ScenarioFailed('the knee passed through the stretched-leg singularity')


def check_hops(result) -> None:
    """
    Raise ScenarioFailed when the leg of a rollout does not hop.

    The rule a ``dodo hop`` run fails with (:mod:`dodo_control.slip.outcome`, ``HopCriteria``
    defaults): on the ground longer than ``max_stance_s`` without a liftoff.
    """
    judge = judge_rollout(result)
    if judge.failure is not None:
        raise ScenarioFailed(judge.message())


class SlipRun:
    """Simulator + SLIP controller of one scenario run, on the simulator's own pinocchio model."""

    def __init__(self, urdf: Path, configs: dict, perturbation: Perturbation,
                 sim_config: SimConfig):
        xml = robot_description_xml(urdf, perturbation.xacro_args or None)
        with configuration_refused():
            self.sim = Simulator(xml, sim_config)
            self.ctrl = Controller(xml, configs['controller'])
        self.model = self.sim.robot.model
        self.data = self.model.createData()

    def run(self, duration_s: float, on_tick=None):
        """Roll out ``duration_s`` seconds (``on_tick(k, state, tau)`` after every tick)."""
        with run_failures():
            return rollout(self.sim, self.ctrl, duration_s=duration_s, on_tick=on_tick)

    def target_x_change(self, at_s: float, target_x: float):
        """Return an ``on_tick`` that sets ``target_x`` once, at the first tick from ``at_s``."""
        switched = []

        def on_tick(k, state, tau):
            if not switched and state.t >= at_s - 1e-9:
                self.ctrl.set_setpoints(target_x=target_x)     # applies from the next tick on
                switched.append(state.t)
        return on_tick


__all__ = ['STRETCHED_KNEE_RAD', 'SlipRun', 'check_hops', 'check_knee_stays_bent']
