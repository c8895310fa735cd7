# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
What a bag says about the recorded robot: URDF, joints, actuated joints, contact frames.

Read from the recorded /robot_description, /joint_states, /joint_commands, the simulator's
parameters and the contact topics (no rclpy).
"""
from __future__ import annotations

from dataclasses import dataclass
import os
from typing import Iterable

from dodo_sim.ros import contract
from dodo_sim.tools.bag import TopicData
from dodo_sim.tools.bag_arrays import message_joint_names
from dodo_sim.tools.bag_parameters import node_parameters


def robot_description(bag: dict[str, TopicData]) -> str | None:
    """
    Return the last recorded /robot_description as recorded, or None.

    It is the bag's text, not yet checked: :func:`robot_info` takes it as URDF XML only
    (:func:`dodo_sim.physics.robot.urdf_from_untrusted_text`).
    """
    data = bag.get(contract.ROBOT_DESCRIPTION)
    if data is None or not len(data):
        return None
    return data.messages[-1].data


def contact_topics(topics: Iterable[str] | dict) -> dict[str, str]:
    """
    Contact frame -> topic for the ``/<frame>_contact`` topics among ``topics``.

    ``topics`` is a bag dict or names; the topics are named as
    :func:`dodo_sim.ros.contract.contact_topic` names them.
    """
    out = {}
    for topic in topics:
        if contract.topic_type(topic) == contract.CONTACT_TYPE and topic.endswith('_contact'):
            frame = topic.lstrip('/')[:-len('_contact')]
            if frame and contract.contact_topic(frame) == topic:
                out[frame] = topic
    return out


@dataclass(frozen=True)
class RobotInfo:
    """
    What the bag says about the robot.

    Fields:
        urdf_xml: the recorded ``/robot_description`` (or the given URDF), None if neither.
        joint_names: the joints of /joint_states: the 1-DoF joints of the URDF (pinocchio order;
            never a floating base's free flyer, which the contract keeps out of /joint_states;
            without a URDF: as in /joint_states).
        actuated_joint_names: joints that take a command: the names of ``/joint_commands``, else
            the URDF joints with an effort limit > 0.
        contact_frames: the simulator's ``contact_frames`` parameter when recorded, else the
            frames of the recorded ``/<frame>_contact`` topics (URDF link order).
        base: the simulator's recorded ``base`` parameter ('auto' when not recorded): how the
            URDF's root link was attached (``dodo_sim.physics.robot.BASES``).
        floating_base: the robot had a free flyer (its pose is on ``odom`` / ``/tf``, not in
            /joint_states).
    """

    urdf_xml: str | None
    joint_names: tuple
    actuated_joint_names: tuple
    contact_frames: tuple
    base: str = 'auto'
    floating_base: bool = False

    @property
    def contact_topics(self) -> tuple:
        return tuple(contract.contact_topic(f) for f in self.contact_frames)


def robot_info(bag: dict[str, TopicData], urdf: str | os.PathLike | None = None) -> RobotInfo:
    """
    Joints, actuated joints and contact frames of the recorded robot.

    See :class:`RobotInfo`. ``urdf``: the user's own description (a path, xacro allowed) instead
    of the recorded one. The recorded ``/robot_description`` is hostile input: it is used as
    URDF XML only, never as a path or a xacro (ModelError naming the topic otherwise).
    """
    from dodo_sim.physics.robot import load_robot, ModelError
    xml = None
    model = None
    simulator = node_parameters(bag, 'simulator')
    base = str((simulator.initial if simulator is not None else {}).get('base') or 'auto')
    if urdf is not None:
        from dodo_sim.physics.robot import robot_description_xml
        xml = robot_description_xml(urdf)
        model = load_robot(xml, contact_frames=(), base=base)
    else:
        xml = robot_description(bag)
    if xml is not None and model is None:
        from dodo_sim.physics.robot import urdf_from_untrusted_text
        source = f'the recorded /{contract.ROBOT_DESCRIPTION}'
        xml = urdf_from_untrusted_text(xml, source)
        try:
            model = load_robot(xml, contact_frames=(), base=base)
        except ModelError as exc:
            raise ModelError(f'{source}: {exc}') from None
    if model is not None:
        joints = tuple(name for name, nq, nv in zip(model.joint_names, model.joint_nq,
                                                    model.joint_nv) if (nq, nv) == (1, 1))
    elif contract.JOINT_STATES in bag:
        joints = message_joint_names(bag[contract.JOINT_STATES])
    else:
        joints = ()
    if contract.JOINT_COMMANDS in bag and len(bag[contract.JOINT_COMMANDS]):
        actuated = message_joint_names(bag[contract.JOINT_COMMANDS])
    elif model is not None:
        actuated = tuple(model.actuated_joint_names)
    else:
        actuated = ()
    frames: tuple = ()
    if simulator is not None and simulator.initial.get('contact_frames'):
        frames = tuple(simulator.initial['contact_frames'])
    if not frames:
        found = contact_topics(bag)
        order = {}
        if xml is not None:
            from dodo_sim.ros.tf_frames import urdf_links
            order = {name: i for i, name in enumerate(urdf_links(xml))}
        frames = tuple(sorted(found, key=lambda f: (order.get(f, len(order)), f)))
    return RobotInfo(xml, joints, actuated, frames, base,
                     model.floating_base if model is not None else False)
