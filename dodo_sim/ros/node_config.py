"""Parameters of the node adapters that are not physics or control law (``SimConfig`` and
``ControllerConfig`` hold those). Pure data: no rclpy, so ``dodo hop`` and the params-file checks
know every parameter without a ROS import. Each node declares the fields of its config here as
ROS parameters (:func:`dodo_sim.ros.params.declare_config_parameters`).
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class SimulatorNodeConfig:
    """Parameters of the simulator node that are not physics (SimConfig holds those).

    Attributes:
        robot_description: URDF XML of the robot; empty: the package's urdf/hopper.urdf.xacro.
        publish_robot_description: publish the URDF on /robot_description (transient local);
            false when robot_state_publisher publishes it.
        min_subscribers: before the first step, wait until /clock, /joint_states and
            /foot_contact each have this many matched subscriptions (and, in lockstep, the
            command topic a publisher), so no subscriber misses the start.
        startup_timeout: wall-clock s to wait for those matches, and in lockstep for the answer
            to the first state; then start anyway (warning).
        discovery_settle: wall-clock s the matches must have lasted before the first state is
            published (a subscriber completes discovery a little after the publisher sees it;
            samples sent in between would be lost).
        stop_after: simulated s after which the simulator stops stepping and the process exits
            with code 0 (0: run until shut down).
        warn_period: wall-clock s between repeated warnings of the same kind (throttling).
    """

    robot_description: str = ''
    publish_robot_description: bool = True
    min_subscribers: int = 1
    startup_timeout: float = 60.0
    discovery_settle: float = 0.5
    stop_after: float = 0.0
    warn_period: float = 1.0


@dataclass(frozen=True)
class ControllerNodeConfig:
    """Parameters of the controller node that are not control law (ControllerConfig holds those).

    Attributes:
        robot_description: URDF XML; empty: take it from the /robot_description topic.
        min_subscribers: hold the first command until the command topic has this many matched
            subscriptions (the simulator or driver, plus a recorder), so none misses it.
        startup_timeout: wall-clock s to wait for those matches; then send anyway (warning).
        discovery_settle: wall-clock s the matches must have lasted before the first command.
        sync_foot_contact: compute a command only once /foot_contact with the joint-state
            stamp has arrived (simulation, deterministic); false: use the latest foot force
            (hardware drivers with their own clocks).
        marker_period: simulated s between two /controller/markers messages.
        cog_path_points: number of CoG samples kept for the CoG path marker.
        warn_period: wall-clock s between repeated warnings of the same kind (throttling).
    """

    robot_description: str = ''
    min_subscribers: int = 1
    startup_timeout: float = 60.0
    discovery_settle: float = 0.5
    sync_foot_contact: bool = True
    marker_period: float = 0.02
    cog_path_points: int = 500
    warn_period: float = 1.0


__all__ = ['SimulatorNodeConfig', 'ControllerNodeConfig']
