# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""Compatibility import path: contact geometry lives in :mod:`dodo_sim.physics.contact`."""
import numpy as np

from .physics.contact import (blocks_for, Constraint, ConstraintGeometry, contact_basis,
                              ContactParams)


def contact_jacobians(jac_xz: np.ndarray, normal, tangent) -> np.ndarray:
    """
    Contact Jacobian rows W of the normal and tangential velocities.

    2 x nv matrix W = [n^T J; t^T J] of the normal and tangential velocities of a point whose world
    x-z translational jacobian is ``jac_xz``.
    """
    return np.array((normal, tangent)) @ jac_xz


__all__ = ['ContactParams', 'Constraint', 'ConstraintGeometry', 'contact_basis', 'blocks_for',
           'contact_jacobians']
