# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
The hardware path: MIT-mode CAN actuators, a boom sensor board, a safety supervisor.

It also has emulated hardware that answers on the same wire format from the physics
(docs/hardware.md).

Modules (none imports rclpy): :mod:`.protocol` (frame layouts from ``dodo_can.dbc``, MIT
scaling), :mod:`.config` (driver parameters, calibration file), :mod:`.safety` (the state
machine), :mod:`.backend` (one bus cycle), :mod:`.driver` (the driver core), :mod:`.emulator`
(emulated actuators and sensor board, the in-process rig).
"""
