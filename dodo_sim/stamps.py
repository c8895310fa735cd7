# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
The one stamp rule: simulated time (float s) <-> header stamp (integer ns).

Every state the simulator publishes carries ``stamp_ns(state.t)`` (plus the reset offset of the
exchange, :mod:`dodo_sim.ros.exchange`); the controller computes with ``stamp_s(stamp)``. The
offline rollout (:mod:`dodo_sim.rollout`), the simulator node, the controller node and
``dodo replay --through-controller`` (:mod:`dodo_sim.tools.replay_check`) all call these
functions, so that a ROS run, its offline rollout and its replay hand the controller the same
float, bit for bit (docs/ros_contract.md, "Timing and the command exchange";
``test/faults/test_stamp_rule.py`` compares them).

No rclpy: the rollout and the exchange core use it without ROS.
"""
from __future__ import annotations

#: Nanoseconds per second (integer: stamps are exact integers).
NS_PER_S = 1_000_000_000


def stamp_ns(t_s: float) -> int:
    """Return the stamp (integer ns) of a simulated time in s: rounded to the nearest ns."""
    return int(round(t_s * NS_PER_S))


def stamp_s(ns: int) -> float:
    """Return the time in s the controller computes with for a stamp in ns (``ns * 1e-9``)."""
    return ns * 1e-9


def controller_time(t_s: float) -> float:
    """Return the time the controller is handed for a state at simulated time ``t_s``."""
    return stamp_s(stamp_ns(t_s))


def wall_ns(wall_s: float) -> int:
    """
    Return a steady wall-clock time or duration in s as integer ns (truncated).

    For wall-clock measurements (round trips, timer lateness, cycle periods), never for stamps.
    """
    return int(wall_s * NS_PER_S)


def sec_nanosec(ns: int) -> tuple:
    """Return ``(sec, nanosec)`` of a stamp in ns (builtin_interfaces/Time fields)."""
    return divmod(ns, NS_PER_S)


def from_sec_nanosec(sec: int, nanosec: int) -> int:
    """Return the stamp in ns of builtin_interfaces/Time fields."""
    return sec * NS_PER_S + nanosec


__all__ = ['NS_PER_S', 'stamp_ns', 'stamp_s', 'controller_time', 'wall_ns', 'sec_nanosec',
           'from_sec_nanosec']
