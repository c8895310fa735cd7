# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""Compatibility import path: the motor model lives in :mod:`dodo_sim.physics.motor`."""
from .physics.motor import MotorModel

__all__ = ['MotorModel']
