# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
Robot model from a URDF/xacro: the pinocchio model plus what the engine needs to simulate it.

Any tree fixed to the world through any chain of joints works: prismatic boom axes, a planar
x-z-pitch base made of joints, revolute boom joints, a free flyer (URDF ``floating``). Conventions
(see ``docs/physics.md``):

* ``q`` and ``v`` are pinocchio's, in URDF (pinocchio) joint order. URDF ``continuous`` joints are
  loaded as unlimited revolute joints, so each 1-DoF joint has one angle in ``q`` (as in
  sensor_msgs/JointState); a free flyer keeps pinocchio's 7 coordinates [x y z qx qy qz qw] and 6
  velocities (nq != nv, integrate with ``pinocchio.integrate``).
* Actuated joints: by default every movable joint whose URDF ``<limit effort>`` is > 0, in URDF
  order; each must have one degree of freedom.
* Contacts are points: the origins of the named frames, each with an optional sphere radius.
* The model is planar when every joint moves in the world x-z plane (checked on the joint motion
  subspaces); then contacts have one tangent (exact 2-D Coulomb cone), else two (isotropic cone).

Nothing here holds mutable state: :class:`RobotModel` is frozen, every user creates its own Data.
"""
from __future__ import annotations

from dataclasses import dataclass
import logging
import math
import os
from pathlib import Path
import re
from typing import Mapping, NamedTuple, Sequence
import xml.etree.ElementTree as ET

import numpy as np
import pinocchio as pin

from .urdf_check import check_mass_matrix, check_urdf_numbers, ModelError

#: Value of ``actuated_joints`` that selects the joints with a URDF effort limit > 0.
AUTO = 'auto'
#: Base conventions: 'auto' floats the root link unless it is a link named ``world`` (the
#: ROS/Gazebo convention), 'floating' always adds a free flyer, 'fixed' never does.
BASES = (AUTO, 'floating', 'fixed')
#: The URDF link that stands for the world (Gazebo, ros2_control, pinocchio): a root link with
#: this name is the ground, and whatever hangs from it is attached through the URDF joints.
WORLD_LINK = 'world'
#: Name of the free-flyer joint that a floating base adds (pinocchio's default name).
FLOATING_BASE_JOINT = 'root_joint'
# Stand-in for the infinite limits of a continuous joint while pinocchio's URDF parser reads it
# (urdfdom rejects 'inf'); the model's limits are set to +-inf right after.
_UNLIMITED_TEXT = '1e10'


def robot_description_xml(urdf_xml_or_path: str | os.PathLike,
                          xacro_args: Mapping[str, object] | None = None) -> str:
    """
    Return URDF XML from an XML string, a ``.urdf`` file or a ``.xacro`` file.

    For the user's own descriptions only (a path on the command line, in a params file or in a
    study file): a path is opened and a ``.xacro`` file is run through xacro, whose ``${}``
    expressions are Python. A description received from outside (a bag, a topic) goes through
    :func:`urdf_from_untrusted_text` instead (docs/robots.md, "Where a description may come
    from").

    A file is given as a path or as ``package://dodo_sim/urdf/...``
    (:func:`dodo_sim.paths.resolve_package_uri`).

    ``xacro_args`` (e.g. ``{'body_mass': 8.0}``) are passed as xacro arguments; they are only
    allowed with a ``.xacro`` file, and each value must be a plain literal
    (:data:`XACRO_ARG_VALUE`).
    """
    from dodo_sim.paths import resolve_package_uri
    text = resolve_package_uri(os.fspath(urdf_xml_or_path))
    if text.lstrip().startswith('<'):
        if xacro_args:
            raise ModelError('xacro arguments were given but the robot description is plain XML')
        return text
    path = Path(text)
    if not path.is_file():
        raise ModelError(f'robot description file not found: {path}')
    if path.suffix == '.xacro':
        import xacro  # imported here: only xacro files need it
        mappings = _xacro_mappings(xacro_args or {})
        try:
            return xacro.process_file(str(path), mappings=mappings).toprettyxml(indent='  ')
        except Exception as exc:  # xacro raises many unrelated types; name the file once
            raise ModelError(f'xacro failed on {path}: {exc}') from exc
    if xacro_args:
        raise ModelError(f'xacro arguments were given but {path} is not a .xacro file')
    return path.read_text()


#: What a xacro argument value may be: a number, a word or a dotted name. xacro substitutes
#: ``$(arg name)`` as text, also inside ``${...}``, which it evaluates as Python; no call, index,
#: quote or operator can get in through an argument (docs/robots.md, "Passing args").
XACRO_ARG_VALUE = re.compile(r'[A-Za-z0-9_.+-]{1,64}')


def _xacro_mappings(xacro_args: Mapping[str, object]) -> dict[str, str]:
    """Return the xacro mappings of ``xacro_args`` (ModelError names a value not a literal)."""
    mappings = {}
    for name, value in xacro_args.items():
        text = str(value)
        if not XACRO_ARG_VALUE.fullmatch(text):
            raise ModelError(f'xacro argument {name} = {text[:60]!r}: a value must be a number '
                             f'or a plain word (letters, digits, _ . + -)')
        mappings[str(name)] = text
    return mappings


#: Largest robot description taken from a bag or a topic, characters (the published robots of
#: example-robot-data are < 0.2 MB; a description is one std_msgs/String message).
MAX_UNTRUSTED_DESCRIPTION_CHARS = 16 * 2**20


def urdf_from_untrusted_text(text: object, source: str = 'the robot description') -> str:
    """
    Return ``text`` if it is URDF XML; for a description received from a bag or a topic.

    Such a description is data: never a path to open, never xacro to run (a xacro file's
    ``${}`` is Python, and its sandbox can be escaped). Text that does not start with ``<`` is
    refused with a :class:`ModelError` naming ``source``; so is anything larger than
    :data:`MAX_UNTRUSTED_DESCRIPTION_CHARS`. The result starts with ``<``, so
    :func:`robot_description_xml` and :func:`load_robot` take it as XML as it is.
    """
    if not isinstance(text, str):
        raise ModelError(f'{source} is not text (a {type(text).__name__})')
    if len(text) > MAX_UNTRUSTED_DESCRIPTION_CHARS:
        raise ModelError(f'{source} is {len(text)} characters long, more than the '
                         f'{MAX_UNTRUSTED_DESCRIPTION_CHARS} accepted')
    if not text.lstrip().startswith('<'):
        head = text.strip()[:60]
        raise ModelError(f'{source} is not URDF XML ({head!r}): a description from a bag or a '
                         f'topic is XML text, never a file to open or a xacro to run')
    return text


class JointLimit(NamedTuple):
    """A position limit of a 1-DoF joint: lower <= q[idx_q] <= upper (m or rad)."""

    name: str
    idx_q: int
    idx_v: int
    lower: float
    upper: float


@dataclass(frozen=True)
class RobotModel:
    """
    A checked pinocchio model with the indices the engine needs.

    Fields:
        model: pinocchio model (continuous joints as unlimited revolute joints).
        urdf_xml: the XML as given (publishable as robot_description; continuous joints kept).
        joint_names: movable joints in q/v order.
        joint_idx_q / joint_idx_v / joint_nq / joint_nv: their slices of q and v.
        actuated_joint_names: joints that take a torque from ``step(tau)``, in URDF order.
        actuated_idx_v: their velocity index (each actuated joint has one DoF).
        effort_limits: URDF effort limit of each actuated joint, N*m (or N).
        limits: position limits of 1-DoF joints with finite URDF bounds.
        contact_frames / contact_frame_ids: point-contact frames.
        contact_radii: sphere radius of each contact frame, m.
        planar: every joint moves in the world x-z plane.
        total_mass: kg.
        push_frame_id: frame of the heaviest link; pushes and external forces act at its origin.
        vector_space: nq == nv and q integrates as q + dt v (no free flyer / spherical joint).
        floating_base: a free flyer (``FLOATING_BASE_JOINT``) joins the URDF root link to the
            world; its 7 coordinates [x y z qx qy qz qw] come first in q, 6 velocities in v.
        root_link: the URDF's root link (``world`` when the robot is attached to the world).
        collision_points: extra point contacts on the links' collision shapes (after the feet).
        default_q / default_v: the model's initial state (pinocchio neutral configuration, or the
            ``initial_value`` of ros2_control position/velocity state interfaces in the URDF).
    """

    model: pin.Model
    urdf_xml: str
    joint_names: tuple
    joint_idx_q: tuple
    joint_idx_v: tuple
    joint_nq: tuple
    joint_nv: tuple
    actuated_joint_names: tuple
    actuated_idx_v: tuple
    effort_limits: np.ndarray
    limits: tuple
    contact_frames: tuple
    contact_frame_ids: tuple
    contact_radii: np.ndarray
    planar: bool
    total_mass: float
    push_frame_id: int
    vector_space: bool
    default_q: np.ndarray
    default_v: np.ndarray
    floating_base: bool = False
    root_link: str = ''
    #: support points of the links' collision shapes (collision.CollisionPoint), contacts after
    #: the feet; empty unless SimConfig.collisions = 'links'
    collision_points: tuple = ()

    @property
    def nq(self) -> int:
        return self.model.nq

    @property
    def nv(self) -> int:
        return self.model.nv

    @property
    def foot_frame_id(self) -> int:
        """Return the first contact frame (a one-foot robot's foot)."""
        return self.contact_frame_ids[0]

    @property
    def body_frame_id(self) -> int:
        """Return the frame pushes act on (the heaviest link)."""
        return self.push_frame_id

    @property
    def contact_dim(self) -> int:
        """Rows of one point contact: normal + tangent(s)."""
        return 2 if self.planar else 3

    @property
    def gravity(self) -> np.ndarray:
        """Gravity in the x-z plane, m/s^2."""
        g = self.model.gravity.linear
        return np.array([g[0], g[2]])

    def create_data(self) -> pin.Data:
        return self.model.createData()

    def coordinate_names(self) -> list[str]:
        """One name per entry of q (a joint with nq > 1 gets ``name[i]``)."""
        names = []
        for name, nq in zip(self.joint_names, self.joint_nq):
            names += [name] if nq == 1 else [f'{name}[{i}]' for i in range(nq)]
        return names


def load_robot(urdf_xml_or_path: str | os.PathLike, *,
               contact_frames: Sequence[str] = ('foot',),
               contact_radii: Sequence[float] = (),
               actuated_joints: Sequence[str] = (AUTO,),
               xacro_args: Mapping[str, object] | None = None,
               base: str = AUTO) -> RobotModel:
    """
    Build and check a robot model.

    Raises :class:`ModelError` naming the problem.

    ``base`` (one of :data:`BASES`): 'auto' gives the root link a free-flyer joint unless the
    root link is named ``world`` (then the URDF's own joints attach the robot to the world),
    as Gazebo does; 'floating' / 'fixed' force the choice. The choice and why is logged once
    per load at INFO level (logger ``dodo_sim.physics.robot``).
    """
    if base not in BASES:
        raise ModelError(f'base {base!r}: choose one of {BASES}')
    xml = robot_description_xml(urdf_xml_or_path, xacro_args)
    parse_xml, continuous = _continuous_as_revolute(xml)
    root = root_link(xml)
    check_urdf_numbers(_parse(xml))   # before urdfdom, which loads a NaN mass as 0
    floating = base == 'floating' or (base == AUTO and root != WORLD_LINK)
    try:
        if floating:
            model = pin.buildModelFromXML(parse_xml, pin.JointModelFreeFlyer())
        else:
            model = pin.buildModelFromXML(parse_xml)
    except (RuntimeError, ValueError) as exc:
        raise ModelError(f'invalid URDF: {exc}') from exc
    logging.getLogger(__name__).info("robot '%s': %s base (base=%s; root link '%s'%s)", model.name,
                                     'floating' if floating else 'fixed', base, root,
                                     '' if base != AUTO else (
                                         " is 'world'" if not floating else
                                         " is not attached to a link named 'world'"))
    if model.njoints < 2:
        raise ModelError('the URDF has no movable joint')
    check_mass_matrix(model)
    for name in continuous:
        joint = model.joints[model.getJointId(name)]
        model.lowerPositionLimit[joint.idx_q] = -math.inf
        model.upperPositionLimit[joint.idx_q] = math.inf
    names = tuple(model.names[i] for i in range(1, model.njoints))
    joints = [model.joints[i] for i in range(1, model.njoints)]
    idx_q = tuple(j.idx_q for j in joints)
    idx_v = tuple(j.idx_v for j in joints)
    nqs = tuple(j.nq for j in joints)
    nvs = tuple(j.nv for j in joints)

    actuated = _actuated_joints(model, names, nvs, actuated_joints)
    actuated_v = tuple(idx_v[names.index(n)] for n in actuated)
    effort = np.array([model.effortLimit[i] for i in actuated_v])

    limits = []
    for name, iq, iv, nq, nv in zip(names, idx_q, idx_v, nqs, nvs):
        if nq == 1 and nv == 1 and name not in continuous:
            lower, upper = float(model.lowerPositionLimit[iq]), float(model.upperPositionLimit[iq])
            if lower > upper:
                raise ModelError(f"joint '{name}': lower limit {lower} > upper limit {upper}")
            if math.isfinite(lower) or math.isfinite(upper):
                limits.append(JointLimit(name, iq, iv, lower, upper))

    frames = tuple(str(f) for f in contact_frames)
    ids = []
    for frame in frames:
        if not model.existFrame(frame):
            raise ModelError(f"URDF has no frame '{frame}' for a contact (links and joints of the "
                             f'URDF are frames)')
        ids.append(model.getFrameId(frame))
    radii = np.zeros(len(frames)) if len(contact_radii) == 0 else np.array(contact_radii, float)
    if radii.shape != (len(frames),):
        raise ModelError(f'contact_radii has {len(radii)} values for {len(frames)} contact frames '
                         f'{list(frames)}')
    if not (np.isfinite(radii).all() and (radii >= 0.0).all()):
        raise ModelError(f'contact radii must be finite and >= 0 m, got {radii.tolist()}')

    total_mass = float(pin.computeTotalMass(model))
    if not total_mass > 0.0:
        raise ModelError(f'URDF total mass must be positive, got {total_mass} kg')
    vector_space = model.nq == model.nv and all(nq == 1 for nq in nqs)
    default_q, default_v = _initial_state(model, xml, names, idx_q, idx_v, nqs)
    return RobotModel(model=model, urdf_xml=xml, joint_names=names, joint_idx_q=idx_q,
                      joint_idx_v=idx_v, joint_nq=nqs, joint_nv=nvs,
                      actuated_joint_names=actuated, actuated_idx_v=actuated_v,
                      effort_limits=effort, limits=tuple(limits), contact_frames=frames,
                      contact_frame_ids=tuple(ids), contact_radii=radii,
                      planar=is_planar(model), total_mass=total_mass,
                      push_frame_id=_heaviest_link_frame(model), vector_space=vector_space,
                      default_q=default_q, default_v=default_v, floating_base=floating,
                      root_link=root)


def _parse(xml: str) -> ET.Element:
    """Return the root element of URDF text; ModelError if it is not XML."""
    try:
        return ET.fromstring(xml.encode() if xml.lstrip().startswith('<?xml') else xml)
    except ET.ParseError as exc:
        raise ModelError(f'invalid URDF: {exc}') from exc


def root_link(xml: str) -> str:
    """Name of the URDF's root link: the one link that is no joint's child."""
    tree = _parse(xml)
    children = {child.get('link') for joint in tree.iter('joint')
                for child in joint.findall('child')}
    roots = [link.get('name') for link in tree.findall('link') if link.get('name') not in children]
    if len(roots) != 1:
        raise ModelError(f"a URDF needs exactly one root link (a link that is no joint's "
                         f'child), found {roots}')
    return roots[0]


def _continuous_as_revolute(xml: str) -> tuple[str, frozenset]:
    """
    URDF text with each continuous joint turned into a revolute one.

    A revolute joint has one angle in q instead of pinocchio's (cos, sin) pair. Also returns the
    names of those joints.
    """
    if 'continuous' not in xml:
        return xml, frozenset()
    try:
        root = ET.fromstring(xml.encode() if xml.lstrip().startswith('<?xml') else xml)
    except ET.ParseError as exc:
        raise ModelError(f'invalid URDF: {exc}') from exc
    names = []
    for joint in root.iter('joint'):
        if joint.get('type') != 'continuous':
            continue
        names.append(joint.get('name'))
        joint.set('type', 'revolute')
        limit = joint.find('limit')
        if limit is None:
            limit = ET.SubElement(joint, 'limit', {'effort': '0', 'velocity': '0'})
        limit.set('lower', '-' + _UNLIMITED_TEXT)
        limit.set('upper', _UNLIMITED_TEXT)
    return ET.tostring(root, encoding='unicode'), frozenset(names)


def _actuated_joints(model, names, nvs, requested) -> tuple:
    requested = tuple(str(n) for n in requested)
    if requested == (AUTO,):
        chosen = tuple(n for n, nv in zip(names, nvs)
                       if nv == 1
                       and model.effortLimit[model.joints[model.getJointId(n)].idx_v] > 0)
    else:
        unknown = [n for n in requested if n not in names]
        if unknown:
            raise ModelError(f'actuated joint(s) {unknown} not in the URDF; movable joints: '
                             f'{list(names)}')
        if len(set(requested)) != len(requested):
            raise ModelError(f'actuated_joints lists a joint twice: {list(requested)}')
        chosen = tuple(n for n in names if n in requested)  # URDF order
    for name in chosen:
        if nvs[names.index(name)] != 1:
            raise ModelError(f"actuated joint '{name}' has {nvs[names.index(name)]} degrees of "
                             f'freedom; only 1-DoF joints take a torque')
    return chosen


def is_planar(model: pin.Model, samples: int = 3, tolerance: float = 1e-12) -> bool:
    """
    Return True when every joint moves in the world x-z plane at a few configurations.

    The world joint jacobians have no y translation and no x or z rotation (then no point leaves
    its y = const plane).
    """
    data = model.createData()
    rng = np.random.default_rng(0)
    neutral = pin.neutral(model)
    for _ in range(samples):
        q = pin.integrate(model, neutral, rng.uniform(-1.0, 1.0, model.nv))
        # (6, nv) even for nv = 1 (pinocchio returns a 1-D array for a single column)
        jac = np.asarray(pin.computeJointJacobians(model, data, q)).reshape(6, model.nv)
        if np.abs(jac[(1, 3, 5), :]).max(initial=0.0) > tolerance:
            return False
    return True


def _heaviest_link_frame(model: pin.Model) -> int:
    joint = max(range(1, model.njoints), key=lambda j: model.inertias[j].mass)
    for frame_id, frame in enumerate(model.frames):
        if frame.parentJoint == joint and frame.type == pin.FrameType.BODY:
            return frame_id
    return model.getFrameId(model.names[joint])


def _initial_state(model, xml, names, idx_q, idx_v, nqs):
    """Neutral configuration, overridden by ros2_control ``initial_value`` parameters."""
    q = pin.neutral(model).copy()
    v = np.zeros(model.nv)
    if 'ros2_control' not in xml:
        return q, v
    root = ET.fromstring(xml.encode() if xml.lstrip().startswith('<?xml') else xml)
    for block in root.iter('ros2_control'):
        for joint in block.iter('joint'):
            name = joint.get('name')
            if name not in names or nqs[names.index(name)] != 1:
                continue
            for interface in joint.iter('state_interface'):
                for param in interface.iter('param'):
                    if param.get('name') != 'initial_value':
                        continue
                    try:
                        value = float(param.text)
                    except (TypeError, ValueError):
                        raise ModelError(f"joint '{name}': ros2_control initial_value "
                                         f'{param.text!r} is not a number') from None
                    if interface.get('name') == 'position':
                        q[idx_q[names.index(name)]] = value
                    elif interface.get('name') == 'velocity':
                        v[idx_v[names.index(name)]] = value
    return q, v


__all__ = ['RobotModel', 'JointLimit', 'ModelError', 'AUTO', 'BASES', 'WORLD_LINK',
           'FLOATING_BASE_JOINT', 'load_robot', 'is_planar', 'robot_description_xml', 'root_link',
           'urdf_from_untrusted_text', 'MAX_UNTRUSTED_DESCRIPTION_CHARS', 'XACRO_ARG_VALUE']
