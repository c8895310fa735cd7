# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
Published robots falling 3 s with link collisions in time-stepping: no crash, none under the floor.

Issue 30 item 3. UR5 (example-robot-data, fixed base) from q = [0, -1, 1, 0, 0, 0] under zero
torque died at t = 0.53 s with ``LinAlgError (Singular matrix)``: its wrist landed flat on points
whose 3x3 contact blocks have rank 2 (docs/physics.md "Degenerate contacts"). Here a
representative set of example-robot-data, under zero torque or under a plain joint PD holding
its start pose (test/public_robots.py ``PdHold``): the UR5 arm (both), the Go2 quadruped (zero
torque) and the Talos humanoid (held; the runs test_physics_public_robots_peers.py compares).
bench/sweep_public_robots.py runs every URDF of the package the same way and prints a table.

Penetration bound: at the end of each run no support point is deeper than ``END_DEPTH_M`` under
the floor; during the falls none deeper than ``FALL_DEPTH_M`` (the velocity-level scheme closes a
gap in the steps after an impact).
"""
from pathlib import Path
import sys

import numpy as np
import public_robots as pr
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / 'bench'))
import compare_resting_robots as cr  # noqa: E402, I100

pytestmark = pytest.mark.skipif(pr.robots_dir() is None,
                                reason='example-robot-data is not installed')
#: deepest support point at the end of a 3 s run, m. Measured: UR5 and Talos < 1e-13 m, Go2
#: lying 6e-17 m. The sweep (bench/sweep_public_robots.py) finds robots that end deeper: the Go2
#: held by PdHold 8.2e-5 m (its feet and rear thighs rest on box corners whose contact solve
#: misses its tolerance every step, and a corner that does not push is not position-corrected),
#: HyQ 1.5 mm
END_DEPTH_M = 1e-6
#: deepest support point during a fall, m. Measured: Talos 1.8 mm (an ankle corner at its
#: landing, 0.50 s), Go2 0.2 mm, UR5 3e-9 m: a point is under the floor for the steps after it
#: lands, until the velocity constraint and the position correction lift it
FALL_DEPTH_M = 3e-3
UR5 = 'ur_description/urdf/ur5_robot.urdf'
GO2 = 'go2_description/urdf/go2.urdf'
TALOS = 'talos_data/robots/talos_reduced.urdf'


def assert_above_the_floor(result):
    assert result['deepest at the end m'] >= -END_DEPTH_M
    assert result['deepest m'] >= -FALL_DEPTH_M


def test_ur5_falls_onto_the_ground_and_rests_without_a_singular_solve():
    """Zero torque: it lies on its upper arm and wrist; the first four joints come to rest."""
    result = cr.run('ur5')         # raised SimulationDiverged (LinAlgError) at 0.53 s before
    assert set(result['touching'].split()) == {'upper_arm_link', 'wrist_1_link'}
    assert result['joint speeds'][:4].max() < 1e-3   # the wrist's last two spin freely
    assert_above_the_floor(result)


@pytest.mark.slow
@pytest.mark.parametrize('urdf, joints, drop_m, hold_hz', [
    (UR5, pr.UR_START, 0.0, 10.0),
    (GO2, None, 0.0, 0.0),
    (TALOS, None, 0.02, 10.0),
], ids=['ur5 held', 'go2 zero torque', 'talos held'])
def test_a_published_robot_runs_3_s_and_ends_on_the_floor(urdf, joints, drop_m, hold_hz):
    result = cr.run((urdf, joints, drop_m, hold_hz))
    assert_above_the_floor(result)
    if hold_hz:
        assert np.isfinite(result['joints']).all()
