# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""dodo_sim: planar hopping-leg simulator with hard contact (pure core, no rclpy here)."""
