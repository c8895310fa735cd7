# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
Parameters of the node adapters that are not physics or control law.

``SimConfig`` and ``ControllerConfig`` hold those. Pure data: no rclpy, so ``dodo hop`` and the
params-file checks know every parameter without a ROS import. Each node declares the fields of its
config here as ROS parameters (:func:`dodo_sim.ros.params.declare_config_parameters`).
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from dodo_control.registry import controller_entry
from dodo_sim.parameter import bounded, check_fields, one_of
from dodo_sim.ros.contract import HOSTED_CONTROLLER_NODE

#: Values of ControllerNodeConfig.contact_pairing.
CONTACT_PAIRINGS = ('auto', 'stamp', 'latest')
#: Values of SimulatorNodeConfig.command_convention.
COMMAND_CONVENTIONS = ('stamped', 'ros2_control')


@dataclass(frozen=True)
class SimulatorNodeConfig:
    """
    Parameters of the simulator node that are not physics (SimConfig holds those).

    Fields:
        robot_description: the robot: URDF XML, or a .urdf / .xacro path (absolute, relative
            to the working directory, or package://dodo_sim/urdf/...); empty: the package's
            urdf/hopper.urdf.xacro. The launch file passes the xacro output of its model. A
            path is your own file (a xacro runs as a program); what is received on
            /robot_description is taken as XML only (docs/robots.md).
        publish_robot_description: publish the URDF on /robot_description (transient local);
            false when robot_state_publisher publishes it. Under command_convention:
            ros2_control only a URDF whose <ros2_control> hardware is the topic-based system
            (a controller_manager keeps the first one it gets; docs/ros2_control.md).
        min_subscribers: before the first step, wait until /clock, /joint_states and each
            contact topic (under command_convention: ros2_control not the contact topics: a
            controller_manager reads none) have at least this many matched subscriptions (the
            graph's own nodes), besides every subscription on the graph matched and, in
            lockstep, a command publisher that reads the state topic (the start gate,
            :mod:`dodo_sim.ros.start_gate`), so no subscriber misses the start.
        startup_timeout: wall-clock s to wait for the start gate, and in lockstep for the answer
            to the first state; then start anyway (warning).
        start_report_period: wall-clock s between two log lines naming what the start gate
            waits for (the first one 1 s after the node is up).
        hosted_controller_node: name of the controller node the graph started (relative to the
            simulator's namespace; '' when the controller is the user's own node, ``dodo hop
            --controller external``): the bound controller is announced on
            /simulator/controller as ``hosted`` when it is this node, else ``external`` (a bag
            of an external controller cannot be replayed through it).
        discovery_settle: wall-clock s the matches must have lasted before the first state is
            published (a subscriber completes discovery a little after the publisher sees it;
            samples sent in between would be lost).
        stop_after: simulated s after which the simulator stops stepping and the process exits
            with code 0 (0: run until shut down).
        warn_period: wall-clock s between repeated warnings of the same kind (throttling).
        max_command_age: s; an applied command computed from a state older than this (its
            stamp) is counted as stale and warned about (realtime; in lockstep every command
            answers the state it is applied to, age 0).
        graph_check_period: wall-clock s between two looks at the publishers of the command
            topics (a second controller is reported); 0: never.
        controller_lost_timeout: lockstep: wall-clock s a state may wait for its answer before
            the controller is declared lost and the run ends (exit code 1); ``inf``: wait for
            as long as the controller's publisher is in the graph. Generous by default: a
            debugger breakpoint or a swapped-out process is a pause, not a loss.
        diagnostics_period: wall-clock s between two /diagnostics messages (mode, real-time
            factor, waits, timeouts, rejected and foreign commands); 0: none.
        command_convention: 'stamped': commands on /joint_commands stamped with the state they
            answer (the dodo controller; lockstep pairs exactly) and, in realtime,
            /effort_controller/commands; 'ros2_control': the commands of ros2_control's
            topic-based system on /topic_based_joint_commands (every ros2_control joint named,
            efforts for the effort-commanded ones, stamped with the controller_manager's now()),
            states on /topic_based_joint_states; lockstep pairs a command with the awaited
            state when its stamp is not older than the state (docs/ros2_control.md).
        odom_period: simulated s between two ``odom`` messages (nav_msgs/Odometry, ground truth
            of the base), on the state stamps (multiples of it); 0: every state. Default 0.01 s,
            the recorder's /tf period (its ``odom`` -> base transform comes from them).
        link_contact_period: simulated s between two wrenches on each collision link's
            ``/<link>_contact`` topic (``collisions: links``; :mod:`dodo_sim.ros.link_contacts`),
            on the state stamps, while the link touches the terrain (and its zero once when it
            lets go); 0: every state. Each carries the contact forces of the control period that
            ended at its stamp. Default 0.01 s (a viewer's rate; the feet stay 1 kHz).
        imu_period: simulated s between two ``imu`` messages (sensor_msgs/Imu, a floating
            base's or ``imu_link``'s IMU; :mod:`dodo_sim.ros.sensor_output`), on the state
            stamps; 0 (default): every state. The IMU reads every state whatever the period.
    """

    robot_description: str = ''
    publish_robot_description: bool = True
    min_subscribers: int = bounded(1, low=0, unit='subscriptions')
    startup_timeout: float = bounded(60.0, low=0.0, unit='s')
    start_report_period: float = bounded(3.0, low=0.0, low_open=True, unit='s')
    hosted_controller_node: str = HOSTED_CONTROLLER_NODE
    discovery_settle: float = bounded(0.5, low=0.0, unit='s')
    stop_after: float = bounded(0.0, low=0.0, unit='s')
    warn_period: float = bounded(1.0, low=0.0, unit='s')
    max_command_age: float = bounded(0.005, low=0.0, low_open=True, unit='s')
    graph_check_period: float = bounded(1.0, low=0.0, unit='s')
    # inf allowed (never): no ROS range (rclpy's range check refuses inf)
    controller_lost_timeout: float = bounded(120.0, low=0.0, low_open=True, unit='s',
                                             finite=False)
    diagnostics_period: float = bounded(1.0, low=0.0, unit='s')
    command_convention: str = one_of('stamped', COMMAND_CONVENTIONS)
    odom_period: float = bounded(0.01, low=0.0, unit='s')
    link_contact_period: float = bounded(0.01, low=0.0, unit='s')
    imu_period: float = bounded(0.0, low=0.0, unit='s')

    def __post_init__(self):
        check_fields(self)      # ranges, units and choices: the field metadata


@dataclass(frozen=True)
class ControllerNodeConfig:
    """
    Parameters of the controller node that are not control law.

    The selected controller's config dataclass holds those.

    Fields:
        controller: the controller the node hosts: an installed entry point of
            ``dodo_sim.controllers`` ('slip_hopper': the SLIP hopping controller,
            'kneed_walker': the Kneed Walker, 'joint_hold': the joint PD of any robot, or a
            plugin package's) or ``module:Class`` of an importable class (docs/control.md,
            "Your own controller"); its config dataclass's fields are the node's other
            parameters.
        robot_description: URDF XML; empty: take it from the /robot_description topic (XML
            only there, never a path or a xacro to run: docs/robots.md).
        min_subscribers: hold the first command until /joint_commands has this many matched
            subscriptions (the simulator or driver, plus a recorder), so none misses it.
        startup_timeout: wall-clock s to wait for those matches; then send anyway (warning).
        discovery_settle: wall-clock s the matches must have lasted before the first command.
        contact_pairing: how a contact force is matched to a joint state: 'stamp' (wait for
            the contact message stamped like the joint state: simulation, deterministic),
            'latest' (the newest contact message: a driver whose contact sensor has its own
            clock) or 'auto' ('stamp' once a contact stamp equals a joint-state stamp,
            'latest' when three complete joint states found no contact with their stamp).
        marker_period: simulated s between two /controller/markers messages.
        state_period: simulated s between two /controller/state messages (0: one per answered
            state). The first state answered after a runtime parameter change, and the first
            of a new episode (a reset), is always published (its ``config_revision`` and
            ``episode`` tell a replay where the change took effect);
            scheduled on the state stamps, never on wall time. Default 0.01 s (100 Hz: enough
            for plots and viewers; the 1 kHz commands are on /joint_commands).
        cog_path_points: number of CoG samples kept for the CoG path marker (one marker holds
            them all: at most 100000).
        warn_period: wall-clock s between repeated warnings of the same kind (throttling).
        wait_report_after: wall-clock s without a command after which the controller logs what
            it is waiting for (robot model, subscribers, joints, a contact stamp), then again
            every 10 such periods while it waits.
        diagnostics_period: wall-clock s between two /diagnostics messages (tick time
            p50/p99/max, skipped states); 0: none.
        reliable_states: read /joint_states and the contact topics with a reliable reader
            (``contract.lockstep_input_qos``): lockstep, where a lost state would stall the run;
            false: best effort, newest first (realtime simulation, hardware). The graph sets
            it from the simulator's ``mode``.
    """

    controller: str = 'slip_hopper'
    robot_description: str = ''
    min_subscribers: int = bounded(1, low=0, unit='subscriptions')
    startup_timeout: float = bounded(60.0, low=0.0, unit='s')
    discovery_settle: float = bounded(0.5, low=0.0, unit='s')
    contact_pairing: str = one_of('auto', CONTACT_PAIRINGS)
    marker_period: float = bounded(0.02, low=0.0, unit='s')
    state_period: float = bounded(0.01, low=0.0, unit='s')
    cog_path_points: int = bounded(500, low=1, high=100_000, unit='points')
    warn_period: float = bounded(1.0, low=0.0, unit='s')
    wait_report_after: float = bounded(1.0, low=0.0, unit='s')
    diagnostics_period: float = bounded(1.0, low=0.0, unit='s')
    reliable_states: bool = True

    def __post_init__(self):
        entry = controller_entry(self.controller)   # ValueError naming the installed ones
        check_fields(self)      # ranges, units and choices: the field metadata
        config_class = entry.config_class()
        own = {f.name for f in dataclasses.fields(ControllerNodeConfig)}
        for f in dataclasses.fields(config_class):
            if f.name in own:   # one parameter name, two meanings: refused (docs/control.md)
                raise ValueError(f'controller {self.controller!r}: its config_class '
                                 f'{config_class.__name__} has a field {f.name!r}, a parameter '
                                 f'of the controller node itself')


@dataclass(frozen=True)
class ClientConfig:
    """
    Parameters of a node built on :class:`dodo_sim.client.ControllerClient` (your controller).

    Fields:
        contact_frames: the contact frames whose ``/<frame>_contact`` forces the control law
            reads, one row each (the simulator's ``contact_frames``; the hopper: ``[foot]``;
            empty: none).
        contact_pairing: how a contact force is matched to a joint state: 'stamp', 'latest' or
            'auto' (ControllerNodeConfig.contact_pairing).
        reliable_states: read /joint_states and the contact topics reliably (lockstep, where a
            lost state would pause the run for ever); false: best effort, newest first
            (realtime simulation, hardware).
        robot_description: the robot as URDF XML text (never a path or a xacro: it is not
            run); empty: take it from the /robot_description topic.
    """

    contact_frames: tuple = ('foot',)
    contact_pairing: str = one_of('auto', CONTACT_PAIRINGS)
    reliable_states: bool = True
    robot_description: str = ''

    def __post_init__(self):
        check_fields(self)


__all__ = ['SimulatorNodeConfig', 'ControllerNodeConfig', 'ClientConfig', 'CONTACT_PAIRINGS',
           'COMMAND_CONVENTIONS']
