# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
DART, an engine we did not write, as reference for the physics.

DART has its own Featherstone dynamics and a boxed-LCP Dantzig contact solver; it is the reference
for the hopper and for Coulomb friction (docs/physics.md, "A third reference: DART"). The models
come from the same URDF (bench/dart_model.py).
"""
from pathlib import Path
import sys

from dodo_sim.physics.robot import load_robot, robot_description_xml
from dodo_sim.simulator import SimConfig, Simulator
import numpy as np
from physics_models import point_mass_3d
import pytest

pytest.importorskip('dartpy')
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / 'bench'))
# These imports must follow the sys.path change above (E402), so they cannot take their
# place in the sorted import block (I100).
import compare_sliding_dart as sliding  # noqa: E402, I100
from dart_model import build_dart_robot, compare_with_pinocchio  # noqa: E402

G = 9.81


def test_dart_model_of_the_hopper_equals_pinocchio():
    robot = build_dart_robot(robot_description_xml(sliding.URDF), ['foot'])
    model = load_robot(sliding.URDF).model
    for q in ([0.0, 1.0, 0.3, -0.6], [0.2, 0.8, -1.0, 1.5]):
        check = compare_with_pinocchio(robot, model, q)
        assert check['mass_matrix'] < 1e-12 and check['gravity_torque'] < 1e-12


@pytest.mark.parametrize('integrator', ['timestepping', 'event'])
def test_dart_and_dodo_slide_a_point_mass_at_mu_g(integrator):
    mu, v0, seconds = 0.5, 1.0, 0.1
    dart = build_dart_robot(point_mass_3d(), ['foot'], contact_radius_m=1e-3, friction=mu,
                            timestep_s=1e-4)
    dart.reset([0.0, 0.0, 1e-3], [v0, 0.0, 0.0])
    for _ in range(int(round(seconds / 1e-4))):
        dart.step([0.0, 0.0, 0.0])
    sim = Simulator(point_mass_3d(), SimConfig(integrator=integrator, friction=mu,
                                               contact_radii=(1e-3,), initial_q=(0, 0, 1e-3),
                                               initial_v=(v0, 0.0, 0.0)))
    for _ in range(int(round(seconds / 1e-3))):
        state = sim.step([])
    expected = v0 - mu * G * seconds
    assert dart.v[0] == pytest.approx(expected, abs=1e-6)
    assert state.v[0] == pytest.approx(expected, abs=1e-9)


@pytest.fixture(scope='module')
def sliding_runs():
    return sliding.compare(1e-4)


def test_dart_lands_the_hopper_when_both_dodo_integrators_do(sliding_runs):
    touchdowns = {label: ch['contact'][0] for label, ch in sliding_runs['changes'].items()}
    assert touchdowns['dart'] == pytest.approx(touchdowns['dodo event'], abs=1e-9)
    assert touchdowns['dodo timestepping'] == pytest.approx(touchdowns['dodo event'], abs=1e-9)


def test_dart_and_dodo_agree_on_the_stance_until_dart_leaves_the_coulomb_cone(sliding_runs):
    """
    Through touchdown and the stick phase (to 0.25 s) the trajectories agree within 2 mm / 3 mrad.

    After it, DART's reported contact force has |f_t| / f_n above mu = 0.8 (its foot stays put
    where Coulomb's law lets it slide), while dodo_sim's stays on the cone: there the reference is
    wrong, not us.
    """
    runs = sliding_runs['runs']
    t, q_dart, _, f_dart = runs['dart'].arrays()
    _, q_dodo, _, f_dodo = runs['dodo event'].arrays()
    early = t <= 0.25
    assert np.abs(q_dart[early] - q_dodo[early]).max() < 3e-3
    pressed = f_dodo[:, 1] > 1.0
    assert (np.abs(f_dodo[pressed, 0]) <= sliding.MU * f_dodo[pressed, 1] * (1 + 1e-6)).all()
    late = (t > 0.25) & (f_dart[:, 1] > 1.0)
    assert (np.abs(f_dart[late, 0]) / f_dart[late, 1]).max() > 1.1 * sliding.MU
