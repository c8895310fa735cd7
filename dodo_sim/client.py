# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
Your controller as a ROS 2 node that answers the simulator: a small client for controller authors.

Hand it a function, or subclass it::

    from dodo_sim.client import ControllerClient, run

    def update(t, q, v, contacts):
        # t: the state's time, s (its header stamp); q, v: joint positions and velocities in
        # client.joint_names order; contacts: one world (fx, fy, fz) row per contact frame, N
        return [0.0, 0.0]            # one torque per actuated joint (client.actuated_joint_names)

    run(update, 'my_controller')     # until Ctrl-C or the simulator's end; returns an exit code

    class MyController(ControllerClient):
        def on_robot(self, robot):   # the model is known (dodo_sim.physics.robot.RobotModel)
            self.mass = robot.total_mass

        def update(self, t, q, v, contacts):
            return ...

        def on_episode(self, episode, t):    # a reset or a state set by a client (optional)
            self.hops = 0

    run(MyController, 'my_controller')

Started beside ``dodo hop --controller external`` (or ``controller:=none`` under launch) on the
run's ROS domain, the node is the controller of the run (docs/ros_contract.md, "Any
controller"). What it does for you, as the contract asks:

* reads ``/joint_states`` and one ``/<frame>_contact`` per contact frame (parameter
  ``contact_frames``; the hopper's ``[foot]``) with the contract's QoS (reliable in lockstep,
  :func:`dodo_sim.ros.contract.lockstep_input_qos`; parameter ``reliable_states``), from their
  serialized bytes (:mod:`dodo_sim.ros.raw_messages`);
* pairs each joint state with the contact messages of the same stamp, whatever arrives first
  (:class:`dodo_sim.ros.state_merge.StateMerge`, the controller node's own rule; parameter
  ``contact_pairing``), and answers the newest complete state only (a backlog is skipped);
* answers each state with one ``/joint_commands`` message stamped with that state's stamp
  (``sensor_msgs/JointState``: ``name`` = the actuated joints, ``effort`` = your torques),
  written as CDR bytes refilled in place like the controller node's (:mod:`dodo_sim.ros.cdr`);
* computes with time from the header stamps (:func:`dodo_sim.stamps.stamp_s`), never from the
  node's clock: the same whether the node runs with ``use_sim_time`` (then its own timers and
  ``get_clock().now()`` follow ``/clock``; the start gate waits for its ``/clock`` subscription)
  or not (its clock is the wall clock; the gate does not wait for ``/clock``);
* follows the simulator's episodes (``simulator/events``, docs/simulation_interfaces.md): before
  it answers the first state of a new episode (a reset, a state set through
  simulation_interfaces) it calls :meth:`ControllerClient.on_episode` (or the ``on_episode``
  function given), where a controller forgets what it remembered of the old one, as the hosted
  controller node restarts its controller (:class:`dodo_sim.ros.sim_events.EpisodeFollower`, the
  node's own rule);
* exposes the robot model (``self.robot``, from the ``robot_description`` parameter or the
  ``/robot_description`` topic), read as URDF XML text only
  (:func:`dodo_sim.physics.robot.urdf_from_untrusted_text`): a description is never taken as a
  path or run as a xacro program.

Torques that are not one finite number per actuated joint are replaced by zeros (warned, at
most once per second); an exception in ``update`` ends the node (the run then ends with the
controller lost). Once it has answered, the node ends by itself (exit code 0) when nothing
publishes ``/joint_states`` any more for :data:`STATES_GONE_S` (the run is over).

The offline equivalent of this loop is :func:`dodo_sim.rollout.rollout` with a policy object
whose ``contact_frames`` are the same: the torques are the same to the last bit
(test/ros/test_client.py, examples/external_controller).
"""
from __future__ import annotations

import array
import time
from typing import Callable, Sequence

from dodo_sim import stamps
from dodo_sim.physics.robot import urdf_from_untrusted_text
from dodo_sim.ros import contract, runtime
from dodo_sim.ros.cdr import JointStateReader, JointStateWriter
from dodo_sim.ros.node_config import ClientConfig
from dodo_sim.ros.params import config_from_parameters, declare_config_parameters
from dodo_sim.ros.raw_messages import read_contact, read_contact_frame_id, read_joint_state
from dodo_sim.ros.sim_events import decode, EpisodeFollower
from dodo_sim.ros.state_merge import StateMerge
from geometry_msgs.msg import WrenchStamped
import numpy as np
from rclpy.clock import Clock, ClockType
from rclpy.node import Node
from rclpy.serialization import serialize_message
from rclpy.task import Future
from sensor_msgs.msg import JointState
from std_msgs.msg import String

#: What ``update`` is: ``(t, q, v, contacts) -> tau``.
UpdateFunction = Callable[[float, np.ndarray, np.ndarray, np.ndarray], Sequence[float]]
#: What ``on_episode`` is: ``(episode, t) -> None``, before the episode's first answer.
EpisodeFunction = Callable[[int, float], None]
#: Wall-clock s without a publisher of /joint_states, after the first answer, that end the node.
STATES_GONE_S = 1.0


class ControllerClient(Node):
    """
    A node that answers every state of the simulator with the torques of ``update``.

    Inputs:
        node_name: the node's name (the run names it in its log and its bag).
        update: the control law ``(t, q, v, contacts) -> tau``; None: the subclass's
            :meth:`update`.
        on_episode: called ``(episode, t)`` before the first answer of a new episode; None:
            the subclass's :meth:`on_episode` (by default nothing).
        config: defaults of the node's parameters (:class:`ClientConfig`); a params file or
            ``--ros-args -p`` override them.
        node_kwargs: passed to ``rclpy.node.Node``.

    After the model is known: ``robot`` (:class:`dodo_sim.physics.robot.RobotModel`),
    ``joint_names`` (the order of q and v: the robot's one-coordinate joints, as
    ``/joint_states`` carries them), ``actuated_joint_names`` (the order of tau),
    ``contact_frames`` (the rows of contacts). ``updates`` counts the answered states,
    ``episodes.episode`` is the simulator's episode of the last answer.
    """

    def __init__(self, node_name: str = 'controller_client', *,
                 update: UpdateFunction | None = None, config: ClientConfig | None = None,
                 on_episode: EpisodeFunction | None = None, **node_kwargs):
        super().__init__(node_name, **node_kwargs)
        defaults = config or ClientConfig()
        values = declare_config_parameters(
            self, ClientConfig, read_only=list(ClientConfig.__dataclass_fields__),
            defaults={name: getattr(defaults, name) for name in ClientConfig.__dataclass_fields__})
        values['contact_frames'] = tuple(values['contact_frames'])
        # ValueError here names the bad parameter (run() makes it exit code 2)
        self.client_config: ClientConfig = config_from_parameters(ClientConfig, values)
        if update is not None:
            self.update = update
        if on_episode is not None:
            self.on_episode = on_episode
        self.robot = None
        self.joint_names: tuple = ()
        self.actuated_joint_names: tuple = ()
        self.contact_frames = tuple(self.client_config.contact_frames)
        self.merge: StateMerge | None = None
        self.updates = 0
        self.done = Future()                 # set when the node must end (an unusable model)
        self.exit_code = runtime.EXIT_OK
        self._throttle = runtime.WarnThrottle(self.get_logger(), 1.0)
        self._sub_description = None
        self._states_gone_since = None
        self.create_timer(STATES_GONE_S / 4, self._check_states_publisher,
                          clock=Clock(clock_type=ClockType.STEADY_TIME))
        # the simulator's events, subscribed before the states: an episode's event is taken
        # before its first state (the simulator waits for every reader's ack)
        self.episodes = EpisodeFollower()
        self.restarts = 0
        self.create_subscription(String, contract.SIM_EVENTS,
                                 lambda msg: self.episodes.event(decode(msg.data)),
                                 contract.events_qos())
        if self.client_config.robot_description:
            self._setup(urdf_from_untrusted_text(self.client_config.robot_description,
                                                 'the robot_description parameter'))
        else:
            self.get_logger().info(f'waiting for the robot model on '
                                   f'{self.resolve_topic_name(contract.ROBOT_DESCRIPTION)}')
            self._sub_description = self.create_subscription(
                String, contract.ROBOT_DESCRIPTION, self._on_description, contract.latched_qos())

    # -- what a controller author writes ------------------------------------------------------

    def update(self, t: float, q: np.ndarray, v: np.ndarray, contacts: np.ndarray):
        """Return one torque per actuated joint for the state at ``t`` (override, or pass one)."""
        raise NotImplementedError('give ControllerClient an update function or override update')

    def on_robot(self, robot) -> None:
        """Call once the robot model is known, before the first update (override if needed)."""

    def on_episode(self, episode: int, t: float) -> None:
        """Call before the first answer of a new episode at ``t`` (override to forget the old)."""

    # -- model ----------------------------------------------------------------------------

    def _on_description(self, msg: String) -> None:
        if self.robot is not None:
            return
        try:
            self._setup(urdf_from_untrusted_text(msg.data, self.resolve_topic_name(
                contract.ROBOT_DESCRIPTION)))
        except ValueError as exc:            # ModelError: not XML, too large, not a robot
            self.get_logger().fatal(f'cannot use the robot description: {exc}')
            self.exit_code = runtime.EXIT_CONFIG
            self.done.set_result(self.exit_code)

    def _setup(self, urdf_xml: str) -> None:
        from dodo_sim.physics.robot import load_robot
        robot = load_robot(urdf_xml, contact_frames=self.contact_frames)
        self.robot = robot
        # /joint_states carries the 1-DoF joints (a floating base's free flyer is on odom)
        self.joint_names = tuple(name for name, nq, nv in zip(
            robot.joint_names, robot.joint_nq, robot.joint_nv) if nq == nv == 1)
        self.actuated_joint_names = tuple(robot.actuated_joint_names)
        self.on_robot(robot)
        cfg = self.client_config
        self.merge = StateMerge(self.joint_names, len(self.contact_frames), cfg.contact_pairing,
                                on_pairing=self._on_pairing)
        n = len(self.actuated_joint_names)
        template = JointState(name=list(self.actuated_joint_names), effort=[0.0] * n)
        self._command_writer = JointStateWriter(serialize_message(template), (0, 0, n))
        self._zero = np.zeros(n)
        self._pub_command = self.create_publisher(JointState, contract.JOINT_COMMANDS,
                                                  contract.stream_qos())
        qos = contract.lockstep_input_qos() if cfg.reliable_states else contract.input_qos()
        self._joint_reader = JointStateReader()
        self._frame_checked = [False] * len(self.contact_frames)
        self._sub_joints = self.create_subscription(JointState, contract.JOINT_STATES,
                                                    self._on_joint_states, qos, raw=True)
        self._sub_contacts = [
            self.create_subscription(WrenchStamped, contract.contact_topic(frame),
                                     lambda data, i=i: self._on_contact(i, data), qos, raw=True)
            for i, frame in enumerate(self.contact_frames)]
        if self._sub_description is not None:
            self.destroy_subscription(self._sub_description)
            self._sub_description = None
        self.get_logger().info(
            f'ready: joints {list(self.joint_names)}, actuated '
            f'{list(self.actuated_joint_names)}, contact frames {list(self.contact_frames)} '
            f'(pairing {cfg.contact_pairing}), use_sim_time '
            f'{self.get_parameter("use_sim_time").value}; answering on '
            f'{self._pub_command.topic_name}')

    # -- inputs ---------------------------------------------------------------------------

    def _on_joint_states(self, data: bytes) -> None:
        self._merge_joints(data)
        for newer, _info in runtime.drain(self._sub_joints):     # the newest state only
            self._merge_joints(newer)
        if self.merge.pending:
            self._answer()

    def _merge_joints(self, data: bytes) -> None:
        ns, names, position, velocity, _ = read_joint_state(self._joint_reader, data)
        if not self.merge.joint_state(ns, names, position, velocity):
            self._throttle.warn('joint_states', 'ignored a joint state without one position '
                                'and one velocity per joint name')

    def _on_contact(self, index: int, data: bytes) -> None:
        if not self._frame_checked[index]:
            frame = self.contact_frames[index]
            frame_id = read_contact_frame_id(data)
            if not contract.world_aligned_frame(frame_id, frame):
                self._throttle.warn('frame', f'ignored {contract.contact_topic(frame)} in '
                                    f'frame {frame_id!r}: the contract gives world axes '
                                    f'(frame_id {contract.contact_frame_id(frame)!r})')
                return
            self._frame_checked[index] = True
        self.merge.contact(index, *read_contact(data))
        for newer, _info in runtime.drain(self._sub_contacts[index]):
            self.merge.contact(index, *read_contact(newer))
        if self.merge.pending:
            self._answer()

    def _on_pairing(self, mode: str) -> None:
        self.get_logger().info(f'contact messages paired with joint states by '
                               f'{"stamp" if mode == "stamp" else "arrival (the newest)"}')

    # -- the answer -----------------------------------------------------------------------

    def _answer(self) -> None:
        paired = self.merge.take()
        if paired is None:
            return
        ns, q, v, contacts = paired
        t = stamps.stamp_s(ns)
        if self.episodes.starts(ns):
            self.restarts += 1
            self.get_logger().info(f'episode {self.episodes.episode} starts at t = {t:.3f} s')
            self.on_episode(self.episodes.episode, t)
        tau = np.asarray(self.update(t, q, v, contacts), dtype=float)
        if tau.shape != self._zero.shape or not np.isfinite(tau).all():
            self._throttle.warn('tau', f'update returned {tau!r} for the actuated joints '
                                f'{list(self.actuated_joint_names)}: sending zero torque')
            tau = self._zero
        effort = array.array('d')
        effort.frombytes(tau.tobytes())
        self._pub_command.publish(self._command_writer.write(ns, (), (), effort))
        self.updates += 1

    def _check_states_publisher(self) -> None:
        """End the node once the states' publisher (simulator or driver) has left the graph."""
        if not self.updates or self.done.done():
            return
        now = time.monotonic()
        if self.count_publishers(contract.JOINT_STATES):
            self._states_gone_since = None
        elif self._states_gone_since is None:
            self._states_gone_since = now
        elif now - self._states_gone_since >= STATES_GONE_S:
            self.get_logger().info(f'nothing publishes {contract.JOINT_STATES} any more: the '
                                   f'run is over after {self.updates} answers')
            self.done.set_result(self.exit_code)

    def summary(self) -> dict:
        """Return what the client did (logged at its end: ``dodo client: ...``)."""
        merge = self.merge
        return {'updates': self.updates, 'restarts': self.restarts,
                'skipped_states': merge.skipped if merge is not None else 0,
                'contact_pairing': merge.pairing if merge is not None else 'undecided'}

    def destroy_node(self):
        if self.robot is not None:
            self.get_logger().info(runtime.format_summary('client', self.summary()))
        return super().destroy_node()


def run(controller, node_name: str = 'controller_client', args=None, **kwargs) -> int:
    """
    Run a controller node until Ctrl-C / SIGTERM or an unusable model; return the exit code.

    ``controller``: an update function ``(t, q, v, contacts) -> tau`` or a
    :class:`ControllerClient` subclass; ``kwargs`` go to its constructor. ``args``: the
    command line (``--ros-args ...``; default ``sys.argv``). A bad parameter is one fatal line and
    exit code 2.
    """
    if isinstance(controller, type) and issubclass(controller, ControllerClient):
        def factory():
            return controller(node_name, **kwargs)
    else:
        def factory():
            return ControllerClient(node_name, update=controller, **kwargs)
    return runtime.run_node(factory, node_name, args)


__all__ = ['ControllerClient', 'run', 'UpdateFunction', 'EpisodeFunction']
