# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
Position correction of the time-stepping step (docs/physics.md).

Closing the gap of a contact that sticks must not move it along the ground. The hopper's bent leg
couples the foot's normal and tangential motion (G_tn != 0), so a normal-only projection M^-1 W_N^T
shifted the foothold by up to ~1 mm in a touchdown step, depending on where in the step the foot
met the ground.
"""
from conftest import URDF_XACRO
from dodo_sim.physics.contact import ContactParams
from dodo_sim.physics.timestepping import MoreauJeanIntegrator, TimeSteppingParams
from dodo_sim.simulator import SimConfig, Simulator
import numpy as np
import pinocchio as pin
import pytest

POSE = (0.0, 1.2, 0.3, -0.6)
DT_S = 1e-3
FALL_SPEED = 2.0                          # m/s, the hopper's touchdown speed from ~0.2 m apex


def foot(sim, q):
    data = sim.robot.model.createData()
    pin.framesForwardKinematics(sim.robot.model, data, np.asarray(q))
    return data.oMf[sim.robot.contact_frame_ids[0]].translation.copy()


@pytest.mark.parametrize('compiled', (True, False), ids=('compiled', 'generic'))
@pytest.mark.parametrize('height_mm', (0.05, 0.4, 1.0, 1.6, 1.9))
def test_touchdown_step_does_not_move_a_sticking_foot_sideways(compiled, height_mm):
    """
    The whole hopper falls at 2 m/s without rotating.

    It falls from ``height_mm`` above the ground with the foot's x velocity zero. The impact step
    (plastic, mu 0.8: the foot sticks) ends with the foot on the ground (to the one-shot linear
    projection's ~1e-5 m) and at the x it had.
    """
    probe = Simulator(URDF_XACRO, SimConfig(initial_q=POSE))
    q = np.array(POSE)
    q[1] += 1e-3 * height_mm - foot(probe, q)[2]
    v = np.array([0.0, -FALL_SPEED, 0.0, 0.0])
    integrator = MoreauJeanIntegrator(probe.robot, probe.terrain, ContactParams(friction=0.8),
                                      TimeSteppingParams(compiled=compiled))
    assert (integrator.packed is not None) == compiled
    x_before = foot(probe, q)[0]
    q_next, v_next, report = integrator.step(q, v, np.zeros(4), DT_S)
    assert report.in_contact[0]
    end = foot(probe, q_next)
    assert abs(end[2]) < 2e-5                 # closed to the projection's linearisation
    assert abs(end[0] - x_before) < 1e-6      # was up to ~1 mm with the normal-only projection
