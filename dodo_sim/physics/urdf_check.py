# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
The numbers of a robot description that the engine relies on, checked before it is simulated.

pinocchio (urdfdom) loads a negative or NaN mass (a NaN mass becomes a massless link), a
negative inertia, a zero joint axis, a leaf link without mass and collision shapes of any size;
the simulation then fails later as "simulation diverged", or a link sinks through the ground.
Here each such number is refused at load with one line naming the link or joint and the field
(docs/physics.md "Model inputs"; DESIGN.md §7):

* :func:`check_urdf_numbers` reads the URDF XML (before pinocchio does): origins, axes, masses,
  inertia entries, joint limits, effort and velocity limits and collision sizes must be finite;
  masses, sizes, efforts and velocities >= 0; lower <= upper; a movable joint's axis non-zero.
* :func:`check_mass_matrix` checks the built model: every moving body's rotational inertia is
  positive semi-definite, and the joint-space mass matrix is positive definite at the neutral
  configuration, i.e. every joint moves some inertia (a massless moving link with nothing after
  it, or a point mass turning about an axis through itself, makes it singular; MuJoCo refuses
  such bodies too: "mass and inertia of moving bodies must be larger than mjMINVAL").

:class:`ModelError` is the one error of a description the engine cannot use (here because
every check below raises it; :mod:`dodo_sim.physics.robot` names it for its callers).

Zero sizes are accepted: a sphere of radius 0 is a point contact, a box with a zero side a
plate. The XML is parsed by the caller (ElementTree, whose expat refuses entity-expansion bombs).
"""
from __future__ import annotations

import math

import numpy as np
import pinocchio as pin

#: A principal moment of inertia down to this far below zero is rounding (published URDFs write
#: a point mass's inertia as -5e-20 kg*m^2), relative to the largest moment, plus an absolute
#: floor in kg*m^2.
NEGATIVE_INERTIA_RELATIVE = 1e-9
NEGATIVE_INERTIA_FLOOR_KGM2 = 1e-12
#: The mass matrix counts as singular when its smallest eigenvalue is below this fraction of its
#: largest (double precision leaves ~1e-16 of it; every published robot that moves inertia on
#: every joint has > 1e-9).
SINGULAR_MASS_MATRIX_RATIO = 1e-12
_MOVABLE = ('revolute', 'continuous', 'prismatic', 'planar')


class ModelError(ValueError):
    """The robot description cannot be used: the message names the joint, frame or file."""


def _error(message: str) -> ModelError:
    return ModelError(message)


def _numbers(text, count: int, where: str, field: str) -> list:
    """Return ``count`` floats parsed from ``text`` (space separated); refuse anything else."""
    parts = (text or '').split()
    try:
        values = [float(p) for p in parts]
    except ValueError:
        values = None
    if values is None or len(values) != count:
        raise _error(f'{where}: {field} is {text!r}; it needs {count} number(s)')
    if not all(math.isfinite(v) for v in values):
        raise _error(f'{where}: {field} is {text!r}; it must be finite')
    return values


def _number(element, attribute: str, where: str, field: str, unit: str, *,
            required: bool = True, minimum: float | None = 0.0, default: float = 0.0) -> float:
    text = element.get(attribute)
    if text is None:
        if required:
            raise _error(f'{where}: {field} is missing')
        return default
    value = _numbers(text, 1, where, field)[0]
    if minimum is not None and value < minimum:
        raise _error(f'{where}: {field} is {text!r}; it must be a number >= {minimum:g} {unit}')
    return value


def _origin(parent, where: str) -> None:
    origin = parent.find('origin')
    if origin is None:
        return
    for attribute in ('xyz', 'rpy'):
        if origin.get(attribute) is not None:
            _numbers(origin.get(attribute), 3, where, f'<origin {attribute}>')


def _inertial(link, where: str) -> None:
    inertial = link.find('inertial')
    if inertial is None:
        return
    _origin(inertial, f'{where} <inertial>')
    mass = inertial.find('mass')
    if mass is None:
        raise _error(f'{where}: <inertial> has no <mass>')
    _number(mass, 'value', where, '<mass value>', 'kg')
    inertia = inertial.find('inertia')
    if inertia is None:
        raise _error(f'{where}: <inertial> has no <inertia>')
    for n in ('ixx', 'ixy', 'ixz', 'iyy', 'iyz', 'izz'):
        _number(inertia, n, where, f'<inertia {n}>', 'kg*m^2', minimum=None)


def _collision_geometry(collision, where: str) -> None:
    _origin(collision, f'{where} <collision>')
    geometry = collision.find('geometry')
    shape = geometry[0] if geometry is not None and len(geometry) else None
    if shape is None:
        return
    field = f'<collision> <{shape.tag}'
    if shape.tag == 'sphere':
        _number(shape, 'radius', where, f'{field} radius>', 'm')
    elif shape.tag == 'box':
        size = _numbers(shape.get('size'), 3, where, f'{field} size>')
        if min(size) < 0.0:
            raise _error(f'{where}: {field} size> is {shape.get("size")!r}; every side must be '
                         f'a number >= 0 m')
    elif shape.tag == 'cylinder':
        _number(shape, 'radius', where, f'{field} radius>', 'm')
        _number(shape, 'length', where, f'{field} length>', 'm')
    elif shape.tag == 'mesh' and shape.get('scale') is not None:
        scale = shape.get('scale')
        if len(scale.split()) == 1:
            _numbers(scale, 1, where, f'{field} scale>')
        else:
            _numbers(scale, 3, where, f'{field} scale>')


def _joint(joint) -> None:
    name = joint.get('name')
    kind = joint.get('type')
    where = f"joint '{name}'"
    _origin(joint, where)
    if kind in _MOVABLE:
        axis = joint.find('axis')
        if axis is not None and axis.get('xyz') is not None:
            values = _numbers(axis.get('xyz'), 3, where, '<axis xyz>')
            if not math.hypot(*values) > 0.0:
                raise _error(f"{where}: <axis xyz> is {axis.get('xyz')!r}; a {kind} joint needs "
                             f'a non-zero axis')
    limit = joint.find('limit')
    if limit is None:
        return
    lower = _number(limit, 'lower', where, '<limit lower>', '', required=False, minimum=None)
    upper = _number(limit, 'upper', where, '<limit upper>', '', required=False, minimum=None)
    if lower > upper:
        raise _error(f'{where}: <limit lower> {lower:g} is above <limit upper> {upper:g}')
    prismatic = kind == 'prismatic'
    _number(limit, 'effort', where, '<limit effort>', 'N' if prismatic else 'N*m',
            required=False)
    _number(limit, 'velocity', where, '<limit velocity>', 'm/s' if prismatic else 'rad/s',
            required=False)


def check_urdf_numbers(tree) -> None:
    """
    Refuse a URDF (an ElementTree root) with a number the engine cannot simulate.

    Raises ModelError naming the link or joint and the field (module docs).
    """
    for link in tree.iter('link'):
        where = f"link '{link.get('name')}'"
        _inertial(link, where)
        for collision in link.findall('collision'):
            _collision_geometry(collision, where)
    for joint in tree.iter('joint'):
        _joint(joint)


def check_mass_matrix(model: pin.Model) -> None:
    """
    Refuse a model with a negative inertia or a mass matrix singular at the neutral configuration.

    Every moving body (a link with the links fixed to it) must have a positive semi-definite
    rotational inertia (a single link may be slightly negative, as Tiago's antenna is, when the
    body it belongs to is not). Raises ModelError naming the joints of the motion that moves no
    inertia and the moving links without mass or rotational inertia (module docs).
    """
    for j in range(1, model.njoints):
        moments = np.linalg.eigvalsh(model.inertias[j].inertia)
        floor = (NEGATIVE_INERTIA_RELATIVE * float(np.abs(moments).max())
                 + NEGATIVE_INERTIA_FLOOR_KGM2)
        if moments[0] < -floor:
            raise _error(f"link '{_link_of_joint(model, j)}' (with the links fixed to it): its "
                         f'inertia is not positive semi-definite (principal moments '
                         f'{np.array2string(moments, precision=4)} kg*m^2 about its centre of '
                         f'mass); a moment of inertia cannot be negative')
    if model.nv == 0:
        return
    data = model.createData()
    mass = pin.crba(model, data, pin.neutral(model))
    mass = np.triu(mass) + np.triu(mass, 1).T
    moments, modes = np.linalg.eigh(mass)
    if moments[0] > SINGULAR_MASS_MATRIX_RATIO * moments[-1]:
        return
    coordinate = []
    for j in range(1, model.njoints):
        coordinate += [model.names[j]] * model.joints[j].nv
    mode = modes[:, 0]
    order = [i for i in np.argsort(-np.abs(mode)) if abs(mode[i]) > 0.1]
    joints = ', '.join(f"'{coordinate[i]}'" for i in order[:4])
    bare = []
    for j in sorted({model.getJointId(coordinate[i]) for i in order}):
        inertia = model.inertias[j]
        if not (inertia.mass > 0.0 and np.linalg.eigvalsh(inertia.inertia)[0] > 0.0):
            bare.append(_link_of_joint(model, j))
    links = (f"; link(s) {', '.join(repr(b) for b in bare)} have no mass or no rotational "
             f'inertia' if bare else '')
    raise _error(f'the mass matrix is singular at the neutral configuration (smallest '
                 f'eigenvalue {moments[0]:.3g} of largest {moments[-1]:.3g}): a motion of '
                 f'joint(s) {joints} moves no inertia{links}; give every moving link a mass > 0 '
                 f'and a positive definite <inertia>')


def _link_of_joint(model: pin.Model, joint: int) -> str:
    """Name of the URDF link a joint moves (its first body frame)."""
    for frame in model.frames:
        if frame.parentJoint == joint and frame.type == pin.FrameType.BODY:
            return frame.name
    return model.names[joint]


__all__ = ['check_urdf_numbers', 'check_mass_matrix', 'NEGATIVE_INERTIA_RELATIVE',
           'NEGATIVE_INERTIA_FLOOR_KGM2', 'SINGULAR_MASS_MATRIX_RATIO']
