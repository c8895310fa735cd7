"""dodo_sim: planar hopping-leg simulator with hard contact (pure core, no rclpy here)."""
