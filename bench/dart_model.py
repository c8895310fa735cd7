# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
A dodo_sim robot in DART (dartpy), built from the same URDF/xacro (bench and reference tests).

DART is an engine we did not write: its rigid-body dynamics (Featherstone, its own code) and
its contact solver (a boxed LCP solved by Dantzig's pivoting method, velocity-level, one
impulse per step) are independent of pinocchio and of dodo_sim's solver. Built here:

* the URDF through ``dartpy.utils.DartLoader`` with the root fixed to the world; every URDF
  ``<collision>`` is removed and links without ``<inertial>`` (massless in pinocchio) get mass 0
  instead of DartLoader's default 1 kg;
* one collision sphere of radius ``contact_radius_m`` centred at each contact frame's origin,
  and a ground box whose top face is z = 0, so the geometry equals dodo_sim's point contact with
  ``contact_radii = (contact_radius_m,)`` (gap = z - r) on flat ground;
* Coulomb friction ``friction`` on both shapes (DART combines them by the minimum), restitution
  0, split impulse on (penetration is corrected at position level, adding no velocity).

DART's friction is a pyramid in two tangent directions (box bounds mu lambda_N on each); for a
planar robot sliding along x one tangent direction is x and the cone is the exact 2-D one.
"""
from __future__ import annotations

from dataclasses import dataclass
import xml.etree.ElementTree as ET

import numpy as np
from urdf_boxes import mesh_as_box


@dataclass
class DartRobot:
    """
    A DART world with the robot and the ground.

    Fields:
        world: ``dartpy.simulation.World``.
        skeleton: the robot.
        contact_bodies: the body nodes of the contact frames, in contact-frame order.
        dof_names: DART's coordinate order (the URDF's for a chain without a free flyer).
    """

    world: object
    skeleton: object
    contact_bodies: list
    dof_names: tuple

    def reset(self, q, v) -> None:
        self.world.reset()
        self.world.setTime(0.0)
        self.skeleton.setPositions(np.asarray(q, float))
        self.skeleton.setVelocities(np.asarray(v, float))
        self.skeleton.clearExternalForces()

    def step(self, generalized_force) -> None:
        """One world step with the given generalised forces (one per DoF, DART order)."""
        self.skeleton.setForces(np.asarray(generalized_force, float))
        self.world.step()

    @property
    def q(self) -> np.ndarray:
        return self.skeleton.getPositions()

    @property
    def v(self) -> np.ndarray:
        return self.skeleton.getVelocities()

    def contact_positions(self) -> np.ndarray:
        return np.array([b.getWorldTransform().translation() for b in self.contact_bodies])

    def contact_forces(self) -> np.ndarray:
        """
        (n_contacts, 3) world contact force on each contact body in the last step, N.

        These are the forces DART's constraint solver stores in its contacts, summed per body.
        """
        out = np.zeros((len(self.contact_bodies), 3))
        result = self.world.getLastCollisionResult()
        names = [b.getName() for b in self.contact_bodies]
        for contact in result.getContacts():
            for obj, sign in ((contact.collisionObject1, 1.0), (contact.collisionObject2, -1.0)):
                name = obj.getShapeFrame().asShapeNode().getBodyNodePtr().getName()
                if name in names:
                    out[names.index(name)] += sign * np.asarray(contact.force)
        return out

    def in_contact(self) -> tuple:
        result = self.world.getLastCollisionResult()
        touching = {c.getName() for c in result.getCollidingBodyNodes()} if result else set()
        return tuple(b.getName() in touching for b in self.contact_bodies)


def _strip_for_dart(urdf_xml: str, keep_collisions: bool = False,
                    urdf_dir=None) -> tuple[str, set]:
    root = ET.fromstring(urdf_xml.encode() if urdf_xml.lstrip().startswith('<?xml') else urdf_xml)
    massless = set()
    for link in root.findall('link'):
        removed = link.findall('visual') + ([] if keep_collisions else link.findall('collision'))
        for element in removed:
            link.remove(element)  # visuals too: their meshes need package:// resolution
        for element in link.findall('collision'):
            mesh_as_box(link, element, urdf_dir)   # the box dodo_sim collides a mesh as
        if link.find('inertial') is None:
            massless.add(link.get('name'))
    # ros2_control blocks are not URDF kinematics; DartLoader ignores unknown tags but keep it lean
    for block in root.findall('ros2_control'):
        root.remove(block)
    return ET.tostring(root, encoding='unicode'), massless


def build_dart_robot(urdf_xml: str, contact_frames, *, contact_radius_m: float = 1e-3,
                     friction: float = 0.8, timestep_s: float = 1e-3,
                     detector: str = 'dart', floating: bool = False,
                     link_collisions: bool = False, gravity=(0.0, 0.0, -9.81),
                     urdf_dir=None, joint_limits: bool = False) -> DartRobot:
    """
    Build the world (see module docs).

    ``contact_frames`` are URDF link names. ``floating``: the URDF's root link gets DART's free
    joint (positions: rotation vector, then translation; the URDF convention of docs/robots.md),
    else it is welded to the world. ``link_collisions``: the URDF's ``<collision>`` shapes stay
    and touch the ground too (dodo_sim's ``collisions='links'``; no self-collision; a mesh as
    the bounding box dodo_sim gives it, its file looked up from ``urdf_dir``).
    ``gravity``: world vector, m/s^2 (tilted, it makes the flat ground a slope).
    ``joint_limits``: enforce the URDF position limits (DART's ``setLimitEnforcement``, off by
    default in DART, with the velocity limits it would enforce too lifted; dodo_sim and MuJoCo
    enforce position limits only).
    """
    import dartpy as dart

    xml, massless = _strip_for_dart(urdf_xml, keep_collisions=link_collisions,
                                    urdf_dir=urdf_dir)
    loader = dart.utils.DartLoader()
    options = loader.getOptions()
    options.mDefaultRootJointType = (dart.utils.DartLoaderRootJointType.FLOATING if floating
                                     else dart.utils.DartLoaderRootJointType.FIXED)
    loader.setOptions(options)
    skeleton = loader.parseSkeletonString(xml, '')
    if skeleton is None:
        raise ValueError('DartLoader could not parse the robot description')
    if joint_limits:   # position limits only: DART's enforcement also caps the URDF velocities
        for i in range(skeleton.getNumJoints()):
            joint = skeleton.getJoint(i)
            joint.setLimitEnforcement(True)
            for k in range(joint.getNumDofs()):
                joint.setVelocityLowerLimit(k, -np.inf)
                joint.setVelocityUpperLimit(k, np.inf)
    zero_inertia = dart.dynamics.Inertia(0.0, np.zeros(3), np.zeros((3, 3)))
    for i in range(skeleton.getNumBodyNodes()):
        body = skeleton.getBodyNode(i)
        if body.getName() in massless:
            body.setInertia(zero_inertia)
        for j in range(body.getNumShapeNodes() - 1, -1, -1):
            node = body.getShapeNode(j)
            if not node.hasCollisionAspect():
                continue
            if link_collisions:
                dynamics = node.getDynamicsAspect() or node.createDynamicsAspect()
                dynamics.setFrictionCoeff(friction)
                dynamics.setRestitutionCoeff(0.0)
            else:
                node.removeCollisionAspect()
    bodies = []
    for frame in contact_frames:
        body = skeleton.getBodyNode(frame)
        if body is None:
            raise ValueError(f"DART skeleton has no body '{frame}'")
        node = body.createShapeNode(dart.dynamics.SphereShape(contact_radius_m))
        node.createCollisionAspect()
        dynamics = node.createDynamicsAspect()
        dynamics.setFrictionCoeff(friction)
        dynamics.setRestitutionCoeff(0.0)
        bodies.append(body)
    # contacts between the robot's own links are not modelled in dodo_sim
    skeleton.setSelfCollisionCheck(False)

    ground = dart.dynamics.Skeleton('ground')
    _, ground_body = ground.createWeldJointAndBodyNodePair()
    box = ground_body.createShapeNode(dart.dynamics.BoxShape([100.0, 100.0, 1.0]))
    transform = dart.math.Isometry3()
    transform.set_translation([0.0, 0.0, -0.5])
    box.setRelativeTransform(transform)
    box.createCollisionAspect()
    ground_dynamics = box.createDynamicsAspect()
    ground_dynamics.setFrictionCoeff(friction)
    ground_dynamics.setRestitutionCoeff(0.0)

    world = dart.simulation.World()
    world.setGravity(list(gravity))
    world.setTimeStep(timestep_s)
    world.addSkeleton(skeleton)
    world.addSkeleton(ground)
    solver = world.getConstraintSolver()
    if detector == 'dart':
        solver.setCollisionDetector(dart.collision.DARTCollisionDetector())
    solver.setSplitImpulseEnabled(True)
    names = tuple(skeleton.getDof(i).getName() for i in range(skeleton.getNumDofs()))
    return DartRobot(world=world, skeleton=skeleton, contact_bodies=bodies, dof_names=names)


def compare_with_pinocchio(robot: DartRobot, pin_model, q) -> dict:
    """Largest differences of mass matrix and gravity torques at q (the same model?)."""
    import pinocchio as pin
    q = np.asarray(q, float)
    robot.skeleton.setPositions(q)
    robot.skeleton.setVelocities(np.zeros(len(q)))
    data = pin_model.createData()
    mass = pin.crba(pin_model, data, q)
    mass = np.triu(mass) + np.triu(mass, 1).T
    gravity = pin.computeGeneralizedGravity(pin_model, data, q)
    return {'mass_matrix': float(np.abs(robot.skeleton.getMassMatrix() - mass).max()),
            'gravity_torque': float(np.abs(robot.skeleton.getGravityForces() - gravity).max())}
