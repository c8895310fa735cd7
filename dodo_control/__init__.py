# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
dodo_control: hybrid SLIP controller for the articulated hopping leg.

A pure core: no rclpy here.
"""
