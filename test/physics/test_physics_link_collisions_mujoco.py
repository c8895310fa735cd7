# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
Link collisions side by side with MuJoCo on the same URDFs (bench/compare_link_collisions.py).

MuJoCo builds each robot from the URDF's own ``<collision>`` shapes (bench/mujoco_urdf.py with
``link_collisions=True``) and has a soft contact (solref 0.02 s): a resting body sinks by its
static deflection (7e-5 m for the box), a box that sticks on a slope creeps (6e-4 m/s after
0.3 s), and its regularised friction lets a sliding box accelerate ~2 % faster than Coulomb.
The tolerances below are those physical differences, measured, not fitted; the hard-contact
engine meets the textbook values to 1e-3 (test_physics_link_collisions.py).
"""
from pathlib import Path
import sys

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / 'bench'))
pytest.importorskip('mujoco')
import compare_link_collisions as cl  # noqa: E402, I100

DODO = ('timestepping', 'event')


@pytest.fixture(scope='module')
def mujoco_runs():
    return {name: case('mujoco') for name, case in cl.CASES}


@pytest.mark.parametrize('integrator', DODO)
def test_box_dropped_flat_rests_where_mujoco_rests_it(integrator, mujoco_runs):
    dodo, peer = cl.box_drop(integrator), mujoco_runs['box dropped flat']
    assert abs(dodo['rest height error m']) < 1e-9
    assert -2e-4 < peer['rest height error m'] < 0.0           # MuJoCo's static deflection
    for run in (dodo, peer):
        assert run['normal force / mg'] == pytest.approx(1.0, rel=1e-6)
        assert run['drift m'] < 1e-9 and run['tilt rad'] < 1e-9


@pytest.mark.parametrize('integrator', DODO)
def test_box_sticks_on_20_deg_in_both_engines(integrator, mujoco_runs):
    assert cl.slope_box(integrator, 20.0)['speed m/s'] < 1e-9
    assert mujoco_runs['box on 20 deg, mu 0.5']['speed m/s'] < 1e-3     # soft: creeps


@pytest.mark.parametrize('integrator', DODO)
def test_box_slides_on_35_deg_at_mujocos_rate_within_its_soft_friction(integrator,
                                                                       mujoco_runs):
    dodo, peer = cl.slope_box(integrator, 35.0), mujoco_runs['box on 35 deg, mu 0.5']
    assert dodo['acceleration m/s^2'] == pytest.approx(dodo['coulomb m/s^2'], rel=1e-3)
    assert peer['acceleration m/s^2'] == pytest.approx(dodo['acceleration m/s^2'], rel=0.03)


@pytest.mark.parametrize('integrator', DODO)
def test_cylinder_rolls_at_mujocos_rate(integrator, mujoco_runs):
    dodo, peer = cl.rolling_cylinder(integrator), mujoco_runs['cylinder rolling, 20 deg']
    assert peer['acceleration m/s^2'] == pytest.approx(dodo['acceleration m/s^2'], rel=1e-3)
    assert peer['slip m/s'] < 1e-3 and dodo['slip m/s'] < 1e-9


@pytest.mark.parametrize('integrator', DODO)
def test_collapsed_hopper_rests_on_the_same_links_as_in_mujoco(integrator, mujoco_runs):
    dodo, peer = cl.collapsed_hopper(integrator), mujoco_runs['collapsed hopper']
    assert dodo['touching'] == peer['touching'] == 'body thigh'
    assert dodo['base z m'] == pytest.approx(peer['base z m'], abs=2e-4)
    assert dodo['lowest point m'] > -1e-9


def test_fallen_walker_rests_on_its_torso_as_in_mujoco(mujoco_runs):
    """
    Time-stepping only: the event integrator stops in this fall (docs/physics.md, known limit).

    A fall is sensitive to every impact on the way: the two engines end within 1 cm and 0.05 rad
    of each other, both with the torso on the floor.
    """
    dodo, peer = cl.fallen_walker('timestepping'), mujoco_runs['Kneed Walker falling']
    assert 'torso' in dodo['touching'].split() and 'torso' in peer['touching'].split()
    assert dodo['base z m'] == pytest.approx(peer['base z m'], abs=0.015)
    assert dodo['base pitch rad'] == pytest.approx(peer['base pitch rad'], abs=0.05)
    assert dodo['lowest point m'] > -1e-9
