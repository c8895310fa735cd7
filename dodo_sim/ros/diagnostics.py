# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
Health on ``/diagnostics`` the diagnostic_updater way, without the diagnostic_updater package.

That package is not on PyPI; diagnostic_msgs is.

Like ``diagnostic_updater.Updater``: a node registers named tasks; every ``period_s`` of steady
wall-clock time (``diagnostic_updater``'s ``period``, default 1 s) one
diagnostic_msgs/DiagnosticArray goes out on ``/diagnostics`` with one DiagnosticStatus per task,
``name`` = ``"<node name>: <task name>"``, ``hardware_id`` set by the node, a level (OK, WARN,
ERROR), a one-line message and the task's key/values; :meth:`Updater.force_update` publishes at
once (a state change a user must see now, e.g. a lost controller). Off the per-step path: tasks
read counters the node keeps anyway. ``rqt_runtime_monitor``, ``diagnostic_aggregator`` and
Foxglove's diagnostics panels read it; the recorder records it (docs/ros_contract.md).
"""
from __future__ import annotations

from typing import Callable

from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus, KeyValue
from dodo_sim.ros import contract
from dodo_sim.ros.runtime import value_text
from rclpy.clock import Clock, ClockType

OK, WARN, ERROR = DiagnosticStatus.OK, DiagnosticStatus.WARN, DiagnosticStatus.ERROR

#: A task: returns (level, message, {key: value}); values are shown with str() (floats with 3
#: decimals, None as '-').
Task = Callable[[], tuple]


def status(level, name: str, hardware_id: str, message: str, values: dict) -> DiagnosticStatus:
    """One DiagnosticStatus (level as the message's byte constant)."""
    return DiagnosticStatus(level=bytes([level]) if isinstance(level, int) else level,
                            name=name, hardware_id=hardware_id, message=message,
                            values=[KeyValue(key=k, value=value_text(v))
                                    for k, v in values.items()])


class Updater:
    """
    The tasks of one node, published on ``/diagnostics`` every ``period_s``.

    ``period_s`` 0: never periodically; :meth:`force_update` still publishes.
    """

    def __init__(self, node, hardware_id: str, period_s: float):
        self._node = node
        self.hardware_id = hardware_id
        self._tasks: list[tuple[str, Task]] = []
        self._pub = node.create_publisher(DiagnosticArray, contract.DIAGNOSTICS, 10)
        self._timer = None
        if period_s > 0.0:
            self._timer = node.create_timer(period_s, self.update,
                                            clock=Clock(clock_type=ClockType.STEADY_TIME))
        self.published = 0

    def add(self, name: str, task: Task) -> None:
        self._tasks.append((f'{self._node.get_name()}: {name}', task))

    def statuses(self) -> list:
        out = []
        for name, task in self._tasks:
            level, message, values = task()
            out.append(status(level, name, self.hardware_id, message, values))
        return out

    def update(self) -> None:
        msg = DiagnosticArray(status=self.statuses())
        msg.header.stamp = self._node.get_clock().now().to_msg()
        self._pub.publish(msg)
        self.published += 1

    force_update = update

    def destroy(self) -> None:
        if self._timer is not None:
            self._node.destroy_timer(self._timer)
            self._timer = None


__all__ = ['OK', 'WARN', 'ERROR', 'status', 'Updater']
