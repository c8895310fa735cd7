# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
dodo_hopper_pd: a hopping controller plugin of dodo_sim (entry point ``hopper_pd``).

Installed, it is one more controller the controller node can host: ``controller: hopper_pd``
in a params file (README.md).
"""
from .controller import HopperPD, HopperPDConfig, HopperPDTelemetry

__all__ = ['HopperPD', 'HopperPDConfig', 'HopperPDTelemetry']
