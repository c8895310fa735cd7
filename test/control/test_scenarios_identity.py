# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
Closed-loop identity check (docs/control.md).

In stance the CoG of the simulated articulated leg accelerates as the SLIP law commands, the
controller's model being exact (same URDF as the simulator).

The unit test in test_controller_core.py shows the identity to 1e-9 on the model itself. In
closed loop the torque is held over a control period while the state moves, so the achieved
mean acceleration over a period differs from the command at its start by O(period): the check
is that this difference is small and shrinks linearly with the period (no model error left over).
"""
from conftest import URDF_XACRO
from dodo_control.controller import Controller, ControllerConfig
from dodo_sim.rollout import rollout
from dodo_sim.simulator import SimConfig, Simulator
import numpy as np
import pinocchio as pin
import pytest

pytestmark = pytest.mark.slow


def stance_acceleration_error(integrator: str, period: float) -> tuple[float, int]:
    """
    Relative RMS difference of achieved and commanded CoG acceleration.

    It is taken over the stance ticks of the first two hops (touchdown and liftoff ticks excluded).
    """
    sim = Simulator(URDF_XACRO, SimConfig(integrator=integrator, dt=period, control_period=period,
                                          initial_q=(0.0, 1.2, 0.3, -0.6)))
    ctrl = Controller(URDF_XACRO, ControllerConfig(target_velocity=0.5, control_period=period))
    model = sim.leg.model
    data = model.createData()

    def com_vel(state):
        pin.centerOfMass(model, data, state.q, state.v)
        return data.vcom[0][[0, 2]].copy()

    steps = int(round(1.5 / period))
    telemetry = []
    run = rollout(sim, ctrl, steps=steps, keep_states=True,
                  on_tick=lambda k, state, tau: telemetry.append(ctrl.telemetry))
    errors, norms = [], []
    for tel, state, nxt in zip(telemetry, run.states[:-1], run.states[1:]):
        if tel.phase == 'stance' and not tel.events and nxt.in_contact and state.in_contact \
                and not tel.torque_saturated:
            achieved = (com_vel(nxt) - com_vel(state)) / period
            errors.append(achieved - tel.slip_acceleration)
            norms.append(tel.slip_acceleration)
    errors, norms = np.array(errors), np.array(norms)
    rel = float(
        np.sqrt(
            np.mean(
                np.sum(
                    errors ** 2,
                    axis=1)) /
            np.mean(
                np.sum(
                    norms ** 2,
                    axis=1))))
    return rel, len(errors)


@pytest.mark.parametrize('integrator', ['event', 'timestepping'])
def test_closed_loop_cog_acceleration_follows_the_slip(integrator):
    coarse, n_coarse = stance_acceleration_error(integrator, 1e-3)
    fine, n_fine = stance_acceleration_error(integrator, 2.5e-4)
    print(f'[scenario] identity {integrator}: rel_rms_err@1ms={coarse:.3e} (n={n_coarse}) '
          f'rel_rms_err@0.25ms={fine:.3e} (n={n_fine}) ratio={fine / coarse:.3f}')
    assert n_coarse > 200 and n_fine > 800            # two stances were checked
    assert coarse < 0.01                                # within 1 % at the 1 kHz default
    assert fine < 0.4 * coarse                          # first order in the period: ~0.25
