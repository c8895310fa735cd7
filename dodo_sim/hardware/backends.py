# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
The backend of a bus's actuator protocol (:func:`make_backend`).

Apart from :mod:`dodo_sim.hardware.backend` because it names both backends and
:mod:`dodo_sim.hardware.odrive` subclasses :class:`~dodo_sim.hardware.backend.CanBackend`: no
import cycle backend <-> odrive.

No rclpy here.
"""
from __future__ import annotations

from typing import Sequence

from .backend import ActuatorBackend, CanBackend
from .config import ActuatorConfig
from .odrive import OdriveBackend


def make_backend(bus, actuators: Sequence[ActuatorConfig], board: bool = True) -> ActuatorBackend:
    """
    Return the backend of the actuators' protocol (one protocol per bus, DriverConfig.protocols).

    :class:`CanBackend` for MIT mode, :class:`dodo_sim.hardware.odrive.OdriveBackend` for ODrive
    CAN Simple.
    """
    protocols = {getattr(a, 'protocol', 'mit') for a in actuators}
    if protocols == {'odrive_can_simple'}:
        return OdriveBackend(bus, actuators, board=board)
    if protocols - {'mit'}:
        raise ValueError(f'one protocol per bus, got {sorted(protocols)}')
    return CanBackend(bus, actuators, board=board)


__all__ = ['make_backend']
