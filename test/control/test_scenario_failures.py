# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
The scenario modules' shared judgement of an unusable run (dodo_control/scenarios/).

``dodo optimize`` scores a failed trial by its ScenarioFailed reason; these are the reasons the
hopper, boom-leg and walker scenarios share.
"""
from __future__ import annotations

from dodo_control.scenarios import hopper
from dodo_control.scenarios import Perturbation, ScenarioFailed
from dodo_control.scenarios.failures import configuration_refused, run_failures
from dodo_control.scenarios.slip_run import check_knee_stays_bent, SlipRun
from dodo_control.slip.config import ControllerConfig
from dodo_sim.simulator import SimConfig, SimulationDiverged
import numpy as np
import pytest


def test_a_refused_configuration_names_the_reason():
    with pytest.raises(ScenarioFailed, match='configuration refused: bad gain'):
        with configuration_refused():
            raise ValueError('bad gain')


def test_a_diverged_simulation_is_a_failed_scenario():
    with pytest.raises(ScenarioFailed, match='simulation diverged: NaN'):
        with run_failures():
            raise SimulationDiverged('NaN in v', last_good_state=None)


def test_a_singular_controller_solve_is_a_failed_scenario():
    with pytest.raises(ScenarioFailed, match='controller failed'):
        with run_failures():
            np.linalg.solve(np.zeros((2, 2)), np.ones(2))


@pytest.mark.parametrize('knee', [[-0.6, -0.3, 0.2], [0.6, 0.3, 0.04]],
                         ids=['changes sign', 'comes near zero'])
def test_a_knee_through_the_stretched_leg_fails_the_run(knee):
    with pytest.raises(ScenarioFailed, match='stretched-leg singularity'):
        check_knee_stays_bent(knee)


def test_a_bent_knee_either_way_passes():
    check_knee_stays_bent([-0.6, -0.3, -0.2])
    check_knee_stays_bent([0.6, 1.3, 0.2])


def test_a_model_the_simulator_refuses_fails_the_run_before_it_starts():
    configs = {'controller': ControllerConfig()}
    with pytest.raises(ScenarioFailed, match='configuration refused'):
        SlipRun(hopper.URDF, configs, Perturbation(),
                SimConfig(contact_frames=('no_such_frame',)))


def test_the_target_change_applies_once_from_its_time_on():
    run = SlipRun(hopper.URDF, {'controller': ControllerConfig()}, Perturbation(),
                  SimConfig(initial_q=hopper.START_Q))
    on_tick = run.target_x_change(at_s=0.002, target_x=0.7)
    result = run.run(0.004, on_tick=on_tick)
    assert len(result.t) >= 4
    assert run.ctrl.config.target_x == 0.7
    run.ctrl.set_setpoints(target_x=0.1)
    run.run(0.002, on_tick=on_tick)                # already switched: leaves target_x alone
    assert run.ctrl.config.target_x == 0.1
