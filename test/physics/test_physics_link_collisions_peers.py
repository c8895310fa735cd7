# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
Link collisions side by side with MuJoCo and DART on the same URDFs.

See also bench/compare_link_collisions.py. Both peers build each robot from the URDF's own
``<collision>`` shapes. MuJoCo's contact is soft (solref 0.02 s): a resting body sinks by its
static deflection (7e-5 m for the box), a box that sticks on a slope creeps (6e-4 m/s after 0.3 s),
and its regularised friction lets a sliding box accelerate ~2 % faster than Coulomb. DART's is a
hard velocity-level LCP whose FCL detector meshes a cylinder (a rolling cylinder 0.1 % slow). The
tolerances below are those physical differences, measured, not fitted; the hard-contact engine
meets the textbook values to 1e-3 (test_physics_link_collisions.py).
"""
import math
from pathlib import Path
import sys

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / 'bench'))
pytest.importorskip('mujoco')
pytest.importorskip('dartpy')
import compare_link_collisions as cl  # noqa: E402, I100

DODO = ('timestepping', 'event')
#: per peer: rest sink (m), creep on the sticking slope (m/s), sliding rate (rel), rolling (rel)
PEER_TOLERANCES = {'mujoco': (2e-4, 1e-3, 0.03, 1e-3), 'dart': (2e-6, 1e-6, 1e-3, 3e-3)}


@pytest.fixture(scope='module', params=sorted(PEER_TOLERANCES))
def peer(request):
    """Each peer's results of every case, once per module."""
    return request.param, {name: case(request.param) for name, case in cl.CASES}


@pytest.mark.parametrize('integrator', DODO)
def test_box_dropped_flat_rests_where_the_peer_rests_it(integrator, peer):
    name, runs = peer
    dodo, other = cl.box_drop(integrator), runs['box dropped flat']
    assert abs(dodo['rest height error m']) < 1e-9
    assert abs(other['rest height error m']) < PEER_TOLERANCES[name][0]  # soft: it sinks
    assert dodo['normal force / mg'] == pytest.approx(1.0, rel=1e-6)
    assert other['normal force / mg'] == pytest.approx(1.0, rel=1e-3)
    assert dodo['drift m'] < 1e-9 and dodo['tilt rad'] < 1e-9
    assert other['drift m'] < 1e-6 and other['tilt rad'] < 1e-6


@pytest.mark.parametrize('integrator', DODO)
def test_box_sticks_on_20_deg_in_both_engines(integrator, peer):
    name, runs = peer
    assert cl.slope_box(integrator, 20.0)['speed m/s'] < 1e-9
    assert runs['box on 20 deg, mu 0.5']['speed m/s'] < PEER_TOLERANCES[name][1]


@pytest.mark.parametrize('integrator', DODO)
def test_box_slides_on_35_deg_at_the_peers_rate(integrator, peer):
    name, runs = peer
    dodo, other = cl.slope_box(integrator, 35.0), runs['box on 35 deg, mu 0.5']
    assert dodo['acceleration m/s^2'] == pytest.approx(dodo['coulomb m/s^2'], rel=1e-3)
    assert other['acceleration m/s^2'] == pytest.approx(dodo['acceleration m/s^2'],
                                                        rel=PEER_TOLERANCES[name][2])


@pytest.mark.parametrize('integrator', DODO)
def test_cylinder_rolls_at_the_peers_rate(integrator, peer):
    name, runs = peer
    dodo, other = cl.rolling_cylinder(integrator), runs['cylinder rolling, 20 deg']
    assert other['acceleration m/s^2'] == pytest.approx(dodo['acceleration m/s^2'],
                                                        rel=PEER_TOLERANCES[name][3])
    assert other['slip m/s'] < 1e-3 and dodo['slip m/s'] < 1e-9


@pytest.mark.parametrize('integrator', DODO)
def test_collapsed_hopper_rests_on_its_body_as_in_the_peer(integrator, peer):
    """
    Body and thigh on the floor in every engine.

    DART also touches with the shank's cylinder end at the foot, which dodo_sim's contact-frame
    rule leaves to the foot point (docs/physics.md "Link collisions").
    """
    _, runs = peer
    dodo, other = cl.collapsed_hopper(integrator), runs['collapsed hopper']
    assert dodo['touching'] == 'body thigh'
    assert set(dodo['touching'].split()) <= set(other['touching'].split()) <= {
        'body', 'thigh', 'shank'}
    assert dodo['base z m'] == pytest.approx(other['base z m'], abs=2e-4)
    assert dodo['lowest point m'] > -1e-9


@pytest.mark.parametrize('integrator', DODO)
def test_fallen_walker_rests_on_its_torso_as_in_the_peer(integrator, peer):
    """
    A fall is decided by every impact on the way.

    MuJoCo's walker ends within 1 cm and 0.035 rad of this one; DART's tips the other way at the
    first landing. All rest on the torso.
    """
    name, runs = peer
    dodo, other = cl.fallen_walker(integrator), runs['Kneed Walker falling']
    assert 'torso' in dodo['touching'].split() and 'torso' in other['touching'].split()
    assert dodo['lowest point m'] > -1e-9
    if name == 'mujoco':
        assert dodo['base z m'] == pytest.approx(other['base z m'], abs=0.015)
        assert dodo['base pitch rad'] == pytest.approx(other['base pitch rad'], abs=0.05)


def test_fallen_quadruped_rests_on_its_body_as_in_mujoco_and_dart():
    """
    Solo-12 (example-robot-data) dropped crouched with zero torque (issue 22, item 4).

    All three engines rest it on its base, upper legs and feet at the same height: the boxes are
    the meshes' bounding boxes in all three; MuJoCo sinks by its soft contact's static
    deflection, DART by the penetration its FCL box contacts report (0.5-0.7 mm here).
    Time-stepping only: the event integrator passes this fall's accumulations by time-stepping
    steps but takes minutes for it (bench/compare_link_collisions.py runs it; docs/physics.md).
    """
    import public_robots
    if public_robots.robots_dir() is None:
        pytest.skip('example-robot-data is not installed')
    dodo = cl.fallen_quadruped('timestepping')
    mujoco, dart = cl.fallen_quadruped('mujoco'), cl.fallen_quadruped('dart')
    assert dodo['touching'] == mujoco['touching'] == dart['touching']
    assert 'base_link' in dodo['touching'].split()
    assert dodo['base z m'] == pytest.approx(mujoco['base z m'],
                                             abs=PEER_TOLERANCES['mujoco'][0])
    assert 0.0 <= dodo['base z m'] - dart['base z m'] <= dart['deepest contact m'] + 1e-6
    assert dodo['lowest point m'] > -1e-9
    for result in (dodo, mujoco, dart):
        assert result['tilt rad'] < 1e-4 and result['speed'] < 1e-6


@pytest.mark.parametrize('integrator', DODO)
@pytest.mark.parametrize('other', ('mujoco', 'dart'))
def test_quadruped_tipped_over_sideways_lands_on_its_back_as_in_the_peer(integrator, other):
    """
    Solo-12 turned 40 deg about its right feet, legs held by a joint PD (issue 22, item 4).

    Past its tipping angle (36 deg in both engines) it rolls over its right legs and comes to
    rest on the top of its base, upside down, at the base's half height in every engine (MuJoCo
    lower by its soft contact's static deflection). Its yaw after the landing slide differs
    (dodo_sim 0.06, MuJoCo 0.03, DART 0.005 rad: the landing's friction), so only "no spin" is
    asserted.
    The event integrator meets an accumulation of events when the right legs land and takes
    that physics step by time-stepping (SimConfig.event_accumulation); before, it stopped there.
    """
    import public_robots
    if public_robots.robots_dir() is None:
        pytest.skip('example-robot-data is not installed')
    name = other
    dodo, other = cl.tipped_quadruped(integrator), cl.tipped_quadruped(name)
    assert dodo['touching'] == other['touching'] == 'base_link'
    for result in (dodo, other):
        assert abs(result['roll rad']) == pytest.approx(math.pi, abs=1e-3)     # upside down
        assert abs(result['pitch rad']) < 1e-3 and abs(result['yaw rad']) < 0.1
        assert result['speed'] < 1e-3
    assert dodo['base z m'] == pytest.approx(other['base z m'], abs=PEER_TOLERANCES[name][0])
    assert dodo['lowest point m'] > -1e-9
    assert dodo['accumulation steps'] <= (0 if integrator == 'timestepping' else 5)
