# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
Nodes in the test process: a private rclpy context, an executor, spinning with a deadline.

Shared by the in-process graph tests (test_ros_graph.py, test_walkros_node.py); the context
has its own ROS domain (conftest.ros_domain_id) and the caller sets
ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST.
"""
from __future__ import annotations

import contextlib
import time

from conftest import ros_domain_id


class InProcessRos:
    """A private rclpy context with an EventsExecutor; nodes added here are destroyed with it."""

    def __init__(self, context):
        from rclpy.experimental import EventsExecutor
        self.context = context
        self.executor = EventsExecutor(context=context)
        self.nodes = []

    def add(self, node):
        self.nodes.append(node)
        self.executor.add_node(node)
        return node

    def spin_until(self, condition, timeout_s: float) -> bool:
        """Spin until condition() is true; False at the deadline (never a bare sleep)."""
        deadline = time.monotonic() + timeout_s
        while not condition():
            if time.monotonic() > deadline:
                return False
            self.executor.spin_once(timeout_sec=0.02)
        return True


@contextlib.contextmanager
def in_process_ros(args=None):
    """Yield an :class:`InProcessRos` on its own domain; destroy its nodes and context after."""
    import rclpy
    context = rclpy.Context()
    rclpy.init(context=context, domain_id=ros_domain_id(), args=args)
    ros = InProcessRos(context)
    try:
        yield ros
    finally:
        for node in ros.nodes:
            node.destroy_node()
        rclpy.try_shutdown(context=context)
