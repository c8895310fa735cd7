"""Shared fixtures of the dodo_sim test suite."""
from pathlib import Path

import numpy as np
import pytest

REPO = Path(__file__).resolve().parent.parent
URDF_XACRO = REPO / 'urdf' / 'hopper.urdf.xacro'


@pytest.fixture(scope='session')
def urdf_path() -> Path:
    return URDF_XACRO


@pytest.fixture(scope='session')
def urdf_xml() -> str:
    from dodo_sim.model import robot_description_xml
    return robot_description_xml(URDF_XACRO)


def pd_hold(state, q_ref, kp=300.0, kd=20.0):
    """[hip, knee] torques holding the joints at q_ref[2:] (N*m)."""
    return -kp * (state.q[2:] - np.asarray(q_ref)[2:]) - kd * state.v[2:]
