# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
Published robots at rest after a 3 s fall, side by side with MuJoCo and DART on the same URDFs.

Issue 30 item 3; bench/compare_resting_robots.py runs the cases and prints their table.
Each engine builds the robot from the URDF's own collision shapes (meshes as the
bounding boxes dodo_sim collides them as). The tolerances are the engines' measured physical
differences, each with its reason:

* MuJoCo's contact is soft (solref 0.02 s): a resting body sinks by its static deflection and
  its joint stops yield (the Go2's calves come to rest 0.037 rad past their stop);
* DART's contact is a hard velocity-level LCP like dodo_sim's, with split-impulse position
  correction and FCL box contacts; it enforces joint limits here (``joint_limits=True``).

What a fall does not determine is not compared: the wrist joints of the UR5 spin freely (no
damping in its URDF); the Go2's thighs rest where its folded legs stopped rolling (dodo_sim's
hard calf stops hold its body 1.2 cm up for 0.5 s while the thighs roll from 1.35 to 2.05 rad;
MuJoCo's soft stops and DART's slower fall put the base down at once, thighs at 1.28-1.32 rad).
"""
from pathlib import Path
import sys

import numpy as np
import public_robots as pr
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / 'bench'))
pytest.importorskip('mujoco')
pytest.importorskip('dartpy')
import compare_resting_robots as cr  # noqa: E402, I100

pytestmark = [pytest.mark.skipif(pr.robots_dir() is None,
                                 reason='example-robot-data is not installed'),
              pytest.mark.slow]
PEERS = ('mujoco', 'dart')


@pytest.mark.parametrize('peer', PEERS)
def test_ur5_rests_its_arm_where_the_peers_rest_it(peer):
    """Shoulder and elbow to a few mrad; the same links on the ground."""
    dodo, other = cr.run('ur5'), cr.run('ur5', peer)
    assert other['touching'] == dodo['touching'] == 'upper_arm_link wrist_1_link'
    pan, lift, elbow = (dodo['joints'] - other['joints'])[:3]
    assert abs(pan) < 1e-2 and abs(lift) < 5e-3 and abs(elbow) < 5e-3


def test_ur5_ground_force_matches_mujoco_and_dart_within_their_rest_states():
    """
    The ground carries 56 % of the arm's weight, the base the rest.

    MuJoCo: 57.2 % (its soft contacts let the wrist sink a little further). DART: 52.4 %, while
    dodo_sim set at DART's final pose carries 56.3 %: the difference lies in DART's reported
    contact forces (its wrist still rolls at 0.26 rad/s on box-corner contacts), not in the pose.
    """
    dodo = cr.run('ur5')['normal force / mg']
    assert 0.5 < dodo < 0.6
    assert cr.run('ur5', 'mujoco')['normal force / mg'] == pytest.approx(dodo, abs=0.03)
    assert cr.run('ur5', 'dart')['normal force / mg'] == pytest.approx(dodo, abs=0.06)


@pytest.mark.parametrize('peer', PEERS)
def test_go2_lies_on_its_base_at_the_peers_height_carrying_its_weight(peer):
    dodo, other = cr.run('go2'), cr.run('go2', peer)
    assert 'base' in dodo['touching'].split() and 'base' in other['touching'].split()
    assert other['base z m'] == pytest.approx(dodo['base z m'], abs=5e-4)   # MuJoCo: 0.08 mm
    assert dodo['base tilt rad'] < 1e-2 and other['base tilt rad'] < 1e-2
    for run in (dodo, other):
        assert run['normal force / mg'] == pytest.approx(1.0, abs=1e-3)
        calves = run['joints'][2::3]
        np.testing.assert_allclose(calves, -2.7227, atol=0.05)    # folded onto their stops


@pytest.mark.parametrize('peer', PEERS)
def test_talos_sits_down_where_the_peers_seat_it(peer):
    """
    Held by a PD too weak for its 90 kg, it sits on its base and torso, feet on the ground.

    Base height to 1 mm, tilt to 0.01 rad, every joint to 0.05 rad (MuJoCo's soft contacts let
    its ankles roll 0.04 rad further), its weight on the ground.
    """
    dodo, other = cr.run('talos'), cr.run('talos', peer)
    assert other['touching'] == dodo['touching']
    assert set(dodo['touching'].split()) >= {'base_link', 'torso_2_link', 'leg_left_6_link',
                                             'leg_right_6_link'}
    assert other['base z m'] == pytest.approx(dodo['base z m'], abs=1e-3)
    assert other['base tilt rad'] == pytest.approx(dodo['base tilt rad'], abs=1e-2)
    assert np.abs(other['joints'] - dodo['joints']).max() < 0.05
    for run in (dodo, other):
        assert run['normal force / mg'] == pytest.approx(1.0, abs=1e-2)
