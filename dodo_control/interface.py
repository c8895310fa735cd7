# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
The interface a controller offers the controller node, ``rollout`` and ``dodo replay``.

Written down as a :class:`typing.Protocol` so that a new controller family knows what to provide
and the registry (:mod:`dodo_control.registry`) can refuse a class or a built controller that
lacks something, naming it. The SLIP hopper (:class:`dodo_control.controller.Controller`), the
Kneed Walker (:class:`dodo_control.walker.controller.WalkerController`), the joint controller
(:class:`dodo_control.joint.controller.JointController`) and any plugin's class implement it;
none inherits from it (structural typing, as the rest of the package's cores).

Besides the members below, the *class* states how to host it (read by the registry before
anything is built): ``config_class``, the frozen config dataclass whose fields are the node's
parameters (required), and optionally ``startup_only``, ``default_model``, ``monitor`` and the
classmethod ``for_robot(robot_description, config)`` (default: ``Class(robot_description,
config)``); :mod:`dodo_control.registry` says what each means.

Units: ``t`` s; ``q``, ``v`` in ``joint_names`` order (m, rad, m/s, rad/s); ``contact_forces``
one world-axes force row (N) per ``contact_frames`` entry; the returned torques N*m (or N for
prismatic joints) in ``actuated_joint_names`` order.
"""
from __future__ import annotations

from typing import Any, Protocol, runtime_checkable, Sequence

import numpy as np

#: the members ``ControllerEntry.build`` checks on what a builder returns (the Protocol's own)
REQUIRED_MEMBERS = ('joint_names', 'actuated_joint_names', 'contact_frames', 'telemetry',
                    'update', 'reconfigure')
#: the methods the registry checks on the class itself, before building it (the properties may
#: be set by ``__init__``)
CLASS_METHODS = ('update', 'reconfigure')


@runtime_checkable
class HostedController(Protocol):
    """
    What the controller node hosts (one per node, chosen by its ``controller`` parameter).

    Set-points (the hopper's ``apex_height``, ``target_x``, ...) are fields of the controller's
    frozen config dataclass; the node changes them at runtime through :meth:`reconfigure` with
    a new config (the registry's ``startup_only`` fields excepted). Optional:
    ``telemetry_labels`` (field -> labels of its entries, or None to leave a field out of the
    node's named ``/controller/state`` channels) and ``reset()`` (forget everything learnt from
    past states, keep the config: called when the simulator starts a new episode, a reset or a
    state set by a client; without it the controller is built anew, :func:`restart`).
    """

    @property
    def joint_names(self) -> Sequence[str]:
        """Name ``q`` and ``v`` of :meth:`update` in order (the node merges /joint_states so)."""

    @property
    def actuated_joint_names(self) -> Sequence[str]:
        """Name the torques :meth:`update` returns in order (the names on /joint_commands)."""

    @property
    def contact_frames(self) -> Sequence[str]:
        """Name the contact force rows :meth:`update` reads, one per frame, in this order."""

    @property
    def telemetry(self) -> Any:
        """Return the last tick's snapshot (NamedTuple or dataclass of numbers), None before."""

    def update(self, t: float, q: np.ndarray, v: np.ndarray,
               contact_forces: np.ndarray) -> np.ndarray:
        """Return the joint torques for the measured state at time ``t``."""

    def reconfigure(self, config: Any) -> None:
        """Use ``config`` (the controller's config dataclass) from the next tick on."""


def missing_members(controller: object) -> list[str]:
    """Return the members of :class:`HostedController` that ``controller`` lacks."""
    return [name for name in REQUIRED_MEMBERS if not hasattr(controller, name)]


def restart(controller, rebuild):
    """
    Return ``controller`` started afresh for a new episode (docs/simulation_interfaces.md).

    Its ``reset()`` when it has one, else ``rebuild()`` (a new controller of the same config).
    The controller node and ``dodo replay --through-controller`` both call it, so a replay
    restarts its controller exactly as the run did.
    """
    reset = getattr(controller, 'reset', None)
    if callable(reset):
        reset()
        return controller
    return rebuild()
