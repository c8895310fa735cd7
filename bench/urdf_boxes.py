# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
A URDF ``<collision>`` mesh as the bounding box dodo_sim collides it as, for the peer engines.

dodo_sim gives a mesh collision its axis-aligned bounding box (``collision.mesh_bounds``);
bench/mujoco_urdf.py and bench/dart_model.py rewrite such a ``<collision>`` into that ``<box>``
before their engines load the URDF, so all three collide the same shapes.
"""
from __future__ import annotations

from pathlib import Path
import xml.etree.ElementTree as ET

import numpy as np


def mesh_as_box(link, collision, urdf_dir) -> None:
    """Replace a ``<collision>``'s mesh by dodo_sim's bounding box of it (or drop it)."""
    from dodo_sim.physics.collision import mesh_bounds
    geometry = collision.find('geometry')
    mesh = geometry.find('mesh') if geometry is not None else None
    if mesh is None:
        return
    bounds = mesh_bounds(mesh, Path(urdf_dir) if urdf_dir is not None else None)
    if bounds is None:
        link.remove(collision)
        return
    lower, upper = bounds
    origin = collision.find('origin')
    if origin is None:
        origin = ET.SubElement(collision, 'origin')
    xyz = np.array([float(x) for x in origin.get('xyz', '0 0 0').split()])
    roll, pitch, yaw = (float(a) for a in origin.get('rpy', '0 0 0').split())
    rotation = (_rotation(2, yaw) @ _rotation(1, pitch) @ _rotation(0, roll))
    origin.set('xyz', ' '.join(repr(float(x)) for x in xyz + rotation @ (0.5 * (lower + upper))))
    geometry.remove(mesh)
    # a mirrored mesh (negative scale) has lower > upper; a flat one a zero side, which MuJoCo
    # refuses ("size must be positive"): 1 um instead
    size = np.maximum(np.abs(upper - lower), 1e-6)
    ET.SubElement(geometry, 'box', {'size': ' '.join(repr(float(x)) for x in size)})


def _rotation(axis: int, angle: float) -> np.ndarray:
    c, s = np.cos(angle), np.sin(angle)
    i, j = [(1, 2), (2, 0), (0, 1)][axis]
    rotation = np.eye(3)
    rotation[i, i] = rotation[j, j] = c
    rotation[i, j], rotation[j, i] = -s, s
    return rotation
