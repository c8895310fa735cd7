# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
Collision shapes of the URDF's links as support-point contacts against the terrain.

They are switched on with ``SimConfig.collisions = 'links'`` (see docs/physics.md "Link
collisions").

Every ``<collision>`` of a moving link becomes a few body-fixed points, each a hard unilateral
point contact with Coulomb friction handled exactly like a foot (same rows, same solvers, both
integrators, the compiled kernels): the points are extra pinocchio frames after the feet.

* sphere of radius r: its centre, as a point contact with radius r (lowest point c - r n: exact
  against any terrain).
* box: its 8 corners (radius 0). A box's lowest point against a plane is always a corner, so the
  box cannot sink through a plane; a face or an edge in contact is carried by its corners.
* cylinder (radius r, length l along its local z): the lowest rim point of each end disk. In a
  planar model whose cylinder axis lies in the x-z plane that point is one of the two rim points
  in the x-z plane (exact: 2 points per disk); a cylinder whose axis is the model's lateral axis
  (a wheel) has its lowest point at c - r n, a sphere contact of radius r at each disk centre
  (exact). In a 3-D model each disk carries 8 rim points (the lowest of them is within
  r (1 - cos 22.5 deg) = 0.076 r of the true lowest rim point).
* mesh: its axis-aligned bounding box in the mesh's frame when the mesh file can be read (an
  ASCII or binary STL), else skipped; either is said in one log line per link.

Points of one planar model that coincide in the x-z plane (the two corners of a box edge along
the lateral axis) are kept once: they would give identical rows.

Feet keep their point contacts: a shape point on the same rigid body as a contact frame and
within ``r_contact + r_shape`` of it (r_shape: a sphere's or cylinder's radius, half the diagonal
of a box or a mesh's bounding box; measured in the x-z plane for a planar model, where the
lateral offset of a drawn leg does not matter) is dropped, so the foot sphere and the end of the
shank cylinder that ends at the foot do not touch down before the foot does.
"""
from __future__ import annotations

import logging
import math
from pathlib import Path
import struct
from typing import NamedTuple, Sequence
import xml.etree.ElementTree as ET

import numpy as np
import pinocchio as pin

from .urdf_check import ModelError

COLLISION_MODES = ('feet', 'links')
#: Prefix of the pinocchio frames that carry the support points.
FRAME_PREFIX = 'collision:'
# rim points per end disk of a cylinder in a 3-D model
_RIM_POINTS_3D = 8
# planar duplicates: two points closer than this in the x-z plane are one
_SAME_POINT_M = 1e-9

_log = logging.getLogger(__name__)


class CollisionPoint(NamedTuple):
    """
    A support point of a link's collision shape.

    ``frame_id`` (a frame added to the model at the point), its ``radius`` (m, a sphere's) and the
    ``link`` it belongs to.
    """

    link: str
    frame_id: int
    radius: float


def _origin(element) -> pin.SE3:
    origin = element.find('origin')
    if origin is None:
        return pin.SE3.Identity()
    xyz = [float(x) for x in origin.get('xyz', '0 0 0').split()]
    rpy = [float(x) for x in origin.get('rpy', '0 0 0').split()]
    return pin.SE3(pin.rpy.rpyToMatrix(*rpy), np.array(xyz))


def _box_corners(size, centre=(0.0, 0.0, 0.0)):
    half = 0.5 * np.asarray(size, float)
    return [np.asarray(centre, float) + half * np.array((sx, sy, sz))
            for sx in (-1.0, 1.0) for sy in (-1.0, 1.0) for sz in (-1.0, 1.0)]


def _stl_bounds(path: Path):
    """(lower, upper) corners of the vertices of an STL file (binary or ASCII), or None."""
    data = path.read_bytes()
    if data[:5].lower() == b'solid' and b'facet' in data[:1000]:
        vertices = [[float(v) for v in line.split()[1:4]]
                    for line in data.decode(errors='replace').splitlines()
                    if line.strip().startswith('vertex')]
        array = np.array(vertices, float)
    else:
        if len(data) < 84:
            return None
        count = struct.unpack('<I', data[80:84])[0]
        if len(data) < 84 + 50 * count:
            return None
        records = np.frombuffer(data, dtype=np.dtype([('n', '<f4', 3), ('v', '<f4', (3, 3)),
                                                      ('a', '<u2')]),
                                count=count, offset=84)
        array = records['v'].reshape(-1, 3).astype(float)
    if array.size == 0:
        return None
    return array.min(axis=0), array.max(axis=0)


def _mesh_path(filename: str, urdf_dir: Path | None) -> Path | None:
    """
    Return the file of a mesh URI.

    Dodo_sim's own package:// URIs, a path (relative to the URDF's directory), or
    package://PKG/REST found as REST or PKG/REST under an ancestor of the URDF's directory (how a
    URDF shipped inside its package finds its meshes).
    """
    from dodo_sim.paths import resolve_package_uri
    try:
        resolved = Path(resolve_package_uri(filename))
        if resolved.is_file():
            return resolved
    except (OSError, ValueError):
        pass
    rest = filename
    package = ''
    for prefix in ('package://', 'file://'):
        if rest.startswith(prefix):
            rest = rest[len(prefix):]
            if prefix == 'package://':
                package, _, rest = rest.partition('/')
    if urdf_dir is None:
        return None
    for base in (urdf_dir, *urdf_dir.parents):
        for candidate in (base / rest, base / package / rest if package else None):
            if candidate is not None and candidate.is_file():
                return candidate
    return None


def mesh_bounds(mesh, urdf_dir: Path | None):
    """
    Return the (lower, upper) corners of a URDF ``<mesh>``'s bounding box, mesh frame, scaled, m.

    None when its file is not found or is not a readable STL file (the shape a mesh collides as;
    bench/mujoco_urdf.py gives MuJoCo the same box).
    """
    filename = mesh.get('filename', '')
    scale = np.array([float(s) for s in mesh.get('scale', '1 1 1').split()], float)
    path = _mesh_path(filename, urdf_dir)
    bounds = None
    if path is not None and path.suffix.lower() == '.stl':
        try:
            bounds = _stl_bounds(path)
        except (OSError, ValueError, struct.error) as exc:
            _log.debug('mesh %s unreadable: %s', filename, exc)
    return None if bounds is None else (bounds[0] * scale, bounds[1] * scale)


def _mesh_corners(link: str, mesh, urdf_dir: Path | None) -> list:
    """Corners of a mesh's bounding box (mesh frame, scaled), or [] when it cannot be read."""
    filename = mesh.get('filename', '')
    bounds = mesh_bounds(mesh, urdf_dir)
    if bounds is None:
        path = _mesh_path(filename, urdf_dir)
        _log.info("link '%s': mesh collision %s skipped (%s)", link, filename,
                  'file not found' if path is None else 'only STL files are read')
        return []
    lower, upper = bounds
    _log.info("link '%s': mesh collision %s collides as its bounding box %s m", link, filename,
              np.round(upper - lower, 4).tolist())
    return _box_corners(upper - lower, 0.5 * (upper + lower))


def _shape_points(link, geometry, planar_lateral, urdf_dir=None):
    """[(point in the shape frame, radius)] and the shape's rim radius (m) of one geometry."""
    shape = geometry[0] if len(geometry) else None
    if shape is None:
        return [], 0.0
    if shape.tag == 'sphere':
        r = float(shape.get('radius'))
        return [(np.zeros(3), r)], r
    if shape.tag == 'box':
        size = [float(s) for s in shape.get('size').split()]
        return [(c, 0.0) for c in _box_corners(size)], 0.5 * float(np.linalg.norm(size))
    if shape.tag == 'cylinder':
        r, length = float(shape.get('radius')), float(shape.get('length'))
        centres = [np.array((0.0, 0.0, -0.5 * length)), np.array((0.0, 0.0, 0.5 * length))]
        if planar_lateral is not None:
            lateral = planar_lateral       # the model's lateral axis in the shape frame
            along = abs(lateral[2])
            if along > 1.0 - 1e-9:         # a wheel: the disks' lowest points are c - r n
                return [(c, r) for c in centres], r
            if along < 1e-9:               # axis in the x-z plane: rim points in that plane
                across = np.cross(lateral, (0.0, 0.0, 1.0))
                across /= np.linalg.norm(across)
                return [(c + s * r * across, 0.0) for c in centres for s in (-1.0, 1.0)], r
        angles = np.arange(_RIM_POINTS_3D) * (2.0 * math.pi / _RIM_POINTS_3D)
        return [(c + r * np.array((math.cos(a), math.sin(a), 0.0)), 0.0)
                for c in centres for a in angles], r
    if shape.tag == 'mesh':
        corners = _mesh_corners(link, shape, urdf_dir)
        half_diagonal = (0.5 * float(np.linalg.norm(corners[-1] - corners[0])) if corners
                         else 0.0)
        return [(c, 0.0) for c in corners], half_diagonal
    _log.info("link '%s': collision geometry <%s> skipped (not a sphere, box, cylinder or mesh)",
              link, shape.tag)
    return [], 0.0


def add_collision_points(robot, exclude_links: Sequence[str] = (),
                         urdf_path: str | None = None) -> tuple:
    """
    Add the collision support points of the moving links to the model.

    Add a frame per support point of every moving link's collision shapes to ``robot.model`` and
    return them as :class:`CollisionPoint` s (feet-rule exclusions and duplicates dropped).
    ``exclude_links``: links whose shapes never touch; ``urdf_path``: the URDF file, where relative
    and package:// mesh files are looked for.
    """
    urdf_dir = None
    if urdf_path is not None and not str(urdf_path).lstrip().startswith('<'):
        candidate = Path(str(urdf_path))
        urdf_dir = candidate.resolve().parent if candidate.is_file() else None
    model = robot.model
    xml = robot.urdf_xml
    tree = ET.fromstring(xml.encode() if xml.lstrip().startswith('<?xml') else xml)
    data = model.createData()
    q0 = robot.default_q
    pin.framesForwardKinematics(model, data, q0)
    lateral_world = np.array((0.0, 1.0, 0.0)) if robot.planar else None
    # feet: (parent joint, world position at q0, radius)
    feet = [(model.frames[f].parentJoint, data.oMf[f].translation.copy(), float(r))
            for f, r in zip(robot.contact_frame_ids, robot.contact_radii)]
    unknown = set(exclude_links) - {link.get('name') for link in tree.findall('link')}
    if unknown:
        raise ModelError(f'collision_exclude_links names links not in the URDF: '
                         f'{sorted(unknown)}')
    points = []
    kept_planar = []   # (parent joint, x, z) of kept points of a planar model
    for link in tree.findall('link'):
        name = link.get('name')
        if name in exclude_links or not model.existFrame(name, pin.BODY):
            continue
        body_id = model.getFrameId(name, pin.BODY)
        body = model.frames[body_id]
        joint = body.parentJoint
        if joint == 0:
            continue       # fixed to the world: it never moves into the ground
        for number, collision in enumerate(link.findall('collision')):
            geometry = collision.find('geometry')
            if geometry is None:
                continue
            shape_in_joint = body.placement * _origin(collision)
            shape_world = data.oMi[joint] * shape_in_joint
            lateral = (None if lateral_world is None
                       else shape_world.rotation.T.dot(lateral_world))
            shape_points, rim = _shape_points(name, geometry, lateral, urdf_dir)
            for i, (local, radius) in enumerate(shape_points):
                world = shape_world.act(local)
                if any(_near_foot(joint, world, rim, foot, robot.planar) for foot in feet):
                    continue
                if robot.planar:
                    if any(j == joint and abs(x - world[0]) < _SAME_POINT_M and
                           abs(z - world[2]) < _SAME_POINT_M for j, x, z in kept_planar):
                        continue
                    kept_planar.append((joint, world[0], world[2]))
                placement = shape_in_joint * pin.SE3(np.eye(3), np.asarray(local, float))
                frame = pin.Frame(f'{FRAME_PREFIX}{name}:{number}:{i}', joint, body_id,
                                  placement, pin.FrameType.OP_FRAME)
                points.append(CollisionPoint(name, model.addFrame(frame, False), radius))
    return tuple(points)


def _near_foot(joint, world, rim, foot, planar) -> bool:
    foot_joint, position, radius = foot
    if joint != foot_joint:
        return False
    offset = world - position
    if planar:
        offset[1] = 0.0
    return float(np.linalg.norm(offset)) <= radius + rim + 1e-9


__all__ = ['COLLISION_MODES', 'CollisionPoint', 'FRAME_PREFIX', 'add_collision_points',
           'mesh_bounds']
