# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""Compatibility import path: the integrator lives in :mod:`dodo_sim.physics.timestepping`."""
from .physics.timestepping import (ACTIVATION_MARGIN_M, MoreauJeanIntegrator, SOLVERS, StepReport,
                                   TimeSteppingParams)

__all__ = ['MoreauJeanIntegrator', 'TimeSteppingParams', 'StepReport', 'SOLVERS',
           'ACTIVATION_MARGIN_M']
