# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
ROS 2 layer of dodo_sim.

It has the graph contract, the shared node runtime, the parameters and the nodes.
"""
