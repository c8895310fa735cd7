# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""Apex set-points the leg cannot reach are refused by the controller core, with the range."""
import dataclasses
import re

from dodo_control.controller import Controller, ControllerConfig
import numpy as np
import pytest


@pytest.fixture(scope='module')
def ctrl(urdf_xml):
    return Controller(urdf_xml, ControllerConfig())


@pytest.fixture(scope='module')
def bounds(ctrl):
    return ctrl.apex_height_range()


def feasible_range(message):
    match = re.search(r'feasible ([\d.]+) m < apex_height <= ([\d.]+) m', message)
    assert match, message
    return float(match.group(1)), float(match.group(2))


@pytest.mark.parametrize('apex', [5.0, 0.3])
def test_unreachable_apex_is_refused_at_construction_with_the_range(urdf_xml, bounds, apex):
    with pytest.raises(ValueError) as info:
        Controller(urdf_xml, ControllerConfig(apex_height=apex))
    message = str(info.value)
    assert f'apex_height = {apex}' in message and 'out of reach' in message
    low, high = feasible_range(message)
    assert (low, high) == pytest.approx(bounds, abs=1e-3)


def test_the_range_edges(urdf_xml, bounds):
    low, high = bounds
    assert 0.5 < low < 1.2 < high < 5.0          # the default set-point 1.2 m is inside
    for apex in (low + 0.01, high - 0.01):
        Controller(urdf_xml, ControllerConfig(apex_height=apex))
    for apex in (low - 0.01, low, high + 0.01):
        with pytest.raises(ValueError, match='out of reach'):
            Controller(urdf_xml, ControllerConfig(apex_height=apex))


def test_runtime_refusal_keeps_the_running_config(urdf_xml):
    ctrl = Controller(urdf_xml, ControllerConfig(apex_height=1.2))
    q, v = np.array([0.0, 1.3, 0.3, -0.6]), np.zeros(4)
    ctrl.update(0.0, q, v, np.zeros(2))
    for apex in (5.0, 0.3):
        with pytest.raises(ValueError, match='feasible'):
            ctrl.set_setpoints(apex_height=apex)
        with pytest.raises(ValueError, match='feasible'):
            ctrl.reconfigure(dataclasses.replace(ctrl.config, apex_height=apex))
    assert ctrl.config.apex_height == 1.2
    assert np.isfinite(ctrl.update(0.001, q, v, np.zeros(2))).all()
    ctrl.set_setpoints(apex_height=1.5)
    assert ctrl.config.apex_height == 1.5


def test_the_range_follows_the_spring(ctrl, bounds):
    """
    A stiffer virtual spring or a longer longest rest length returns more energy.

    The energy is returned after the touchdown impact: the highest reachable apex rises; the
    touchdown height does not move.
    """
    stiffer = ctrl.apex_height_range(dataclasses.replace(ctrl.config, leg_stiffness=9000.0))
    longer = ctrl.apex_height_range(dataclasses.replace(ctrl.config,
                                                        max_leg_length_fraction=0.97))
    assert stiffer[1] > bounds[1] and longer[1] > bounds[1]
    assert stiffer[0] == pytest.approx(bounds[0])
