"""dodo_control: hybrid SLIP controller for the articulated hopping leg (pure core, no rclpy here)."""
