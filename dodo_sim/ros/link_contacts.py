# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
The contact wrench on each colliding link, as the simulator publishes it (no rclpy).

With ``SimConfig.collisions='links'`` the links' collision shapes touch the terrain at support
points (``State.link_contacts``: link, world point, world force). The simulator publishes one
geometry_msgs/WrenchStamped per collision link on ``/<link>_contact``, the same convention as a
foot's contact topic (docs/ros_contract.md, "Frames"): ``frame_id`` ``<link>_contact``, a frame
at the link's origin with the fixed frame's axes, so RViz's Wrench display and Foxglove draw
it at the link. The wrench is the resultant of the link's contact forces (N) and their moment
about the link's origin (N*m), both in world axes.

A link's wrench is published while the link touches the terrain, and once more, zero, at the
first period it no longer does (so RViz's arrow and a plot's last value go back to zero); nothing
while it touches nothing (:meth:`LinkContactWrenches.due`). Normal running (only the feet touch)
thus sends and records no link message at all: the bags, /tf and figures of a run whose links
never touch are those of ``collisions: feet``, and the recorder's load does not grow with the
number of collision links.

A link that is also a contact frame keeps its foot topic (the point contact, exactly as
before); collision points left on such a link after the feet rule are not published (the
simulator says so once).
"""
from __future__ import annotations

from typing import Sequence

import numpy as np


class LinkContactWrenches:
    """Per-link resultant force and moment of ``State.link_contacts`` (see module docs)."""

    def __init__(self, robot, skip: Sequence[str] = ()):
        import pinocchio as pin
        self._pin = pin
        names = dict.fromkeys(point.link for point in robot.collision_points)
        #: links skipped because they are contact frames (their foot topic stays as it is)
        self.skipped = tuple(link for link in names if link in skip)
        #: the collision links with a wrench topic, in URDF collision order
        self.links = tuple(link for link in names if link not in skip)
        self._model = robot.model
        self._data = robot.model.createData()
        self._frame_ids = {link: robot.model.getFrameId(link) for link in self.links}
        self._touched = set()        # links whose last published wrench was not the zero one

    def origins(self, q: np.ndarray) -> dict[str, np.ndarray]:
        """Return the world position (m) of each link's origin at ``q``."""
        pin = self._pin
        pin.forwardKinematics(self._model, self._data, np.asarray(q, dtype=float))
        return {link: pin.updateFramePlacement(self._model, self._data, fid).translation.copy()
                for link, fid in self._frame_ids.items()}

    def __call__(self, q: np.ndarray, link_contacts) -> dict[str, tuple]:
        """
        Return link -> (force [3] N, moment about the link origin [3] N*m), world axes.

        Every link of :attr:`links` is in the result, zero when it touches nothing.
        """
        wrenches = {link: (np.zeros(3), np.zeros(3)) for link in self.links}
        touching = [c for c in link_contacts if c.link in wrenches]
        if not touching:
            return wrenches
        origins = self.origins(q)
        for contact in touching:
            force, moment = wrenches[contact.link]
            f = np.asarray(contact.force, dtype=float)
            force += f
            moment += np.cross(np.asarray(contact.point, dtype=float) - origins[contact.link], f)
        return wrenches

    def due(self, q: np.ndarray, link_contacts) -> list:
        """
        Return ``[(index in links, force, moment)]`` to publish at this period.

        The links that touch now, and the links that touched at the last call and no longer do
        (their zero wrench, once). Call it once per publication period.
        """
        touching = {c.link for c in link_contacts}
        if not touching and not self._touched:
            return []                             # normal running: nothing to compute or send
        wrenches = self(q, link_contacts)
        due = [(i, *wrenches[link]) for i, link in enumerate(self.links)
               if link in touching or link in self._touched]
        self._touched = touching & set(self.links)
        return due


__all__ = ['LinkContactWrenches']
