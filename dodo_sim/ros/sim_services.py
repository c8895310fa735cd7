# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
simulation_interfaces on the simulator node: the services, the action, the events, the parameters.

The rclpy adapter of :mod:`dodo_sim.ros.sim_control` (the rules) and
:mod:`dodo_sim.ros.sim_entities` (the entities): each callback turns a request message into one
call of the core and the core's outcome into the response; a request that completes at a step
boundary is awaited (the callback is a coroutine: the response goes out when the core says it
is done, the rest of the node keeps running). Served (names relative to the node's namespace,
under ``simulator/`` as Gazebo's ros_gz serves them under its node; ``contract.SIM_SERVICES``):

* ``simulator/get_simulator_features``, ``get_simulation_state``, ``set_simulation_state``,
  ``reset_simulation``, ``step_simulation``, ``get_entities``, ``get_entities_states``,
  ``get_entity_state``, ``get_entity_info``, ``set_entity_state`` (simulation_interfaces/srv,
  Kilted line 1.6.1) and the action ``simulator/simulate_steps`` (feedback per completed step;
  cancelling stops after the steps under way);
* ``simulator/set_joint_state`` (rcl_interfaces/srv/SetParametersAtomically: the standard sets no
  joint state): each parameter names a 1-DoF joint, its value a double (the position) or a
  double array ``[position]`` / ``[position, velocity]`` (m or rad, m/s or rad/s); the
  response's ``result.reason`` says why a request is refused;
* ``simulator/events`` (std_msgs/String, JSON, :mod:`dodo_sim.ros.sim_events`): every event of
  the core. Before the first state of a new episode is published the adapter waits (at most
  ``command_timeout``) until every reader has acknowledged the event, so a controller has it
  before that state;
* the simulator's runtime parameters (``sim_config.RUNTIME_FIELDS``): ``ros2 param set
  /simulator friction 0.5`` is checked like a params file (field metadata) and by the physics
  (``Simulator.reconfigure``), applied at once (a step boundary: callbacks run between steps)
  and recorded (``/parameter_events`` and an event with its stamp).

docs/simulation_interfaces.md.
"""
from __future__ import annotations

from typing import Callable

from dodo_sim import stamps
from dodo_sim.physics.sim_config import RUNTIME_FIELDS
from dodo_sim.ros import contract, sim_control as sc, sim_events, sim_values as sv
from dodo_sim.ros.params import coerce_value
from dodo_sim.ros.sim_entities import Entities, EntityError
from dodo_sim.simulator import SimConfig
from rcl_interfaces.msg import ParameterType, SetParametersResult
from rcl_interfaces.srv import SetParametersAtomically
from rclpy.action import ActionServer, CancelResponse
from rclpy.clock import Clock, ClockType
from rclpy.duration import Duration
from rclpy.task import Future
from simulation_interfaces import srv
from simulation_interfaces.action import SimulateSteps
from simulation_interfaces.msg import EntityState, SimulatorFeatures
from std_msgs.msg import String


#: Wall s between the answer to SetSimulationState(QUITTING) and the end of the run.
QUIT_DELAY_S = 0.2


def _fill_result(result, outcome: tuple) -> None:
    result.result, result.error_message = outcome[0], outcome[1]


class SimulationServices:
    """
    The standard's services and action on ``node`` (module docs).

    Inputs:
        node: the simulator node.
        sim, exchange: what it steps and its exchange.
        lockstep: its mode.
        act_now: ``f()``: the node acts on a new request at once when the step boundary is in
            hand (paused), else at its next boundary.
        ack_timeout_s: longest wait for readers to acknowledge an episode's event, s.
    """

    def __init__(self, node, sim, exchange, *, lockstep: bool, act_now: Callable[[], None],
                 ack_timeout_s: float):
        self.node = node
        self.entities = Entities(sim)
        self.control = sc.SimulationControl(sim, exchange, self.entities, lockstep=lockstep,
                                            on_event=self._on_event)
        self._exchange = exchange
        self._act_now = act_now
        self._ack_timeout = Duration(seconds=ack_timeout_s)
        self._steady = Clock(clock_type=ClockType.STEADY_TIME)
        self._pub_events = node.create_publisher(String, contract.SIM_EVENTS,
                                                 contract.events_qos())
        handlers = {
            'get_simulator_features': (srv.GetSimulatorFeatures, self._features),
            'get_simulation_state': (srv.GetSimulationState, self._get_state),
            'set_simulation_state': (srv.SetSimulationState, self._set_state),
            'reset_simulation': (srv.ResetSimulation, self._reset),
            'step_simulation': (srv.StepSimulation, self._step),
            'get_entities': (srv.GetEntities, self._get_entities),
            'get_entities_states': (srv.GetEntitiesStates, self._get_entities_states),
            'get_entity_state': (srv.GetEntityState, self._get_entity_state),
            'get_entity_info': (srv.GetEntityInfo, self._get_entity_info),
            'set_entity_state': (srv.SetEntityState, self._set_entity_state),
        }
        for name, (srv_type, callback) in handlers.items():
            node.create_service(srv_type, contract.sim_service(name), callback)
        node.create_service(SetParametersAtomically, contract.SET_JOINT_STATE,
                            self._set_joint_state)
        self._goals = {}
        self._action = ActionServer(node, SimulateSteps, contract.SIMULATE_STEPS,
                                    execute_callback=self._simulate_steps,
                                    cancel_callback=self._cancel_steps)
        node.add_on_set_parameters_callback(self._on_set_parameters)

    # -- plumbing ---------------------------------------------------------------------------------

    async def _completion(self, request: sc.Request) -> tuple:
        """Return the outcome of ``request``, awaiting it when it completes at a boundary."""
        future = None
        if not request.done:
            future = Future()
            request.on_done = future.set_result
        self._act_now()         # paused: the boundary is in hand (a resume steps at once)
        if not request.done:
            await future
        return request.outcome

    def _on_event(self, record: dict, episode: bool) -> None:
        self._pub_events.publish(String(data=sim_events.encode(record)))
        if episode and self._pub_events.get_subscription_count():
            # the controller must have the event before the first state of the episode
            if not self._pub_events.wait_for_all_acked(self._ack_timeout):
                self.node.get_logger().warning(
                    f'{contract.SIM_EVENTS}: event {record["seq"]} ({record["event"]}) not '
                    f'acknowledged by every reader within {self._ack_timeout.nanoseconds * 1e-9:g}'
                    f' s; a controller may answer the first state of episode '
                    f'{record["episode"]} before it learns of it')
        self.node.get_logger().info(f'simulation event: {sim_events.encode(record)}')

    def _stamp(self, header) -> None:
        header.stamp.sec, header.stamp.nanosec = stamps.sec_nanosec(
            self._exchange.newest_ns or 0)

    # -- the simulation ---------------------------------------------------------------------------

    def _features(self, request, response):
        response.features = SimulatorFeatures(
            features=sorted(sc.FEATURES), spawn_formats=[],
            custom_info='dodo_sim: one robot per simulator (entities: the robot, terrain); '
                        'lockstep steps are answered control periods; joint states through '
                        f'{contract.SET_JOINT_STATE} (rcl_interfaces/srv/SetParametersAtomically)'
                        '; events on simulator/events; docs/simulation_interfaces.md')
        return response

    def _get_state(self, request, response):
        response.state.state = self.control.state
        response.result.result = sv.RESULT_OK
        return response

    async def _set_state(self, request, response):
        outcome = await self._completion(self.control.set_state(request.state.state))
        if request.state.state == sv.STATE_QUITTING and outcome[0] == sv.RESULT_OK:
            # the run ends once this answer is out: its process going away at once could
            # drop the reliable response before it reaches the caller
            timer = self.node.create_timer(QUIT_DELAY_S, lambda: self._quit(timer),
                                           clock=self._steady)
        _fill_result(response.result, outcome)
        return response

    def _quit(self, timer) -> None:
        timer.cancel()
        self.control.release_quit()
        self._act_now()

    async def _reset(self, request, response):
        _fill_result(response.result,
                     await self._completion(self.control.reset(request.scope)))
        return response

    async def _step(self, request, response):
        _fill_result(response.result,
                     await self._completion(self.control.step(int(request.steps))))
        return response

    async def _simulate_steps(self, goal_handle):
        steps = self.control.step(int(goal_handle.request.steps))
        self._goals[id(goal_handle)] = steps
        feedback = SimulateSteps.Feedback()

        def progress(completed: int, remaining: int) -> None:
            feedback.completed_steps, feedback.remaining_steps = completed, remaining
            goal_handle.publish_feedback(feedback)
        steps.on_progress = progress
        try:
            outcome = await self._completion(steps)
        finally:
            self._goals.pop(id(goal_handle), None)
        result = SimulateSteps.Result()
        _fill_result(result.result, outcome)
        if steps.cancelled and goal_handle.is_cancel_requested:
            goal_handle.canceled()
        elif outcome[0] == sv.RESULT_OK:
            goal_handle.succeed()
        else:
            goal_handle.abort()
        return result

    def _cancel_steps(self, goal_handle):
        request = self._goals.get(id(goal_handle))
        if request is None:
            return CancelResponse.REJECT
        self.control.cancel(request)
        return CancelResponse.ACCEPT

    # -- entities ---------------------------------------------------------------------------------

    def _names(self, filters) -> list:
        return self.entities.names(filters.filter, [c.category for c in filters.categories],
                                   list(filters.tags.tags), filters.bounds.type)

    def _entity_state(self, name: str) -> EntityState:
        state = self.control.sim.state
        base = self.entities.state(name, state.q, state.v)
        msg = EntityState()
        self._stamp(msg.header)
        msg.header.frame_id = base.frame_id
        p, o = msg.pose.position, msg.pose.orientation
        p.x, p.y, p.z = base.position.tolist()
        o.x, o.y, o.z, o.w = base.orientation_xyzw.tolist()
        t = msg.twist
        t.linear.x, t.linear.y, t.linear.z = base.linear.tolist()
        t.angular.x, t.angular.y, t.angular.z = base.angular.tolist()
        return msg          # acceleration: not reported (zero)

    def _get_entities(self, request, response):
        try:
            response.entities = self._names(request.filters)
            response.result.result = sv.RESULT_OK
        except EntityError as exc:
            _fill_result(response.result, (exc.code, str(exc)))
        return response

    def _get_entities_states(self, request, response):
        try:
            names = self._names(request.filters)
            response.states = [self._entity_state(name) for name in names]
            response.entities = names
            response.result.result = sv.RESULT_OK
        except EntityError as exc:
            _fill_result(response.result, (exc.code, str(exc)))
        return response

    def _get_entity_state(self, request, response):
        try:
            response.state = self._entity_state(request.entity)
            response.result.result = sv.RESULT_OK
        except EntityError as exc:
            _fill_result(response.result, (exc.code, str(exc)))
        return response

    def _get_entity_info(self, request, response):
        info = self.entities.infos().get(request.entity)
        if info is None:
            _fill_result(response.result, (sv.RESULT_NOT_FOUND, f'no entity {request.entity!r};'
                                           f' entities: {list(self.entities.infos())}'))
            return response
        response.info.category.category = info.category
        response.info.description = info.description
        response.result.result = sv.RESULT_OK
        return response

    async def _set_entity_state(self, request, response):
        s = request.state
        p, o, t = s.pose.position, s.pose.orientation, s.twist
        outcome = await self._completion(self.control.set_entity_state(
            request.entity, s.header.frame_id, (p.x, p.y, p.z), (o.x, o.y, o.z, o.w),
            (t.linear.x, t.linear.y, t.linear.z), (t.angular.x, t.angular.y, t.angular.z)))
        _fill_result(response.result, outcome)
        return response

    async def _set_joint_state(self, request, response):
        joints, why = {}, ''
        for parameter in request.parameters:
            value = parameter.value
            if value.type == ParameterType.PARAMETER_DOUBLE:
                joints[parameter.name] = (value.double_value, None)
            elif (value.type == ParameterType.PARAMETER_DOUBLE_ARRAY
                  and len(value.double_array_value) in (1, 2)):
                numbers = [float(x) for x in value.double_array_value]
                joints[parameter.name] = (numbers[0], numbers[1] if len(numbers) > 1 else None)
            else:
                why = (f'joint {parameter.name!r}: give a double (its position) or a double '
                       f'array [position] or [position, velocity]')
                break
        if why:
            outcome = (sv.RESULT_OPERATION_FAILED, why)
        else:
            outcome = await self._completion(self.control.set_joint_state(joints))
        response.result = SetParametersResult(successful=outcome[0] == sv.RESULT_OK,
                                              reason=outcome[1])
        return response

    # -- runtime parameters -----------------------------------------------------------------------

    def _on_set_parameters(self, params) -> SetParametersResult:
        values = {}
        try:
            for p in params:
                if p.name in RUNTIME_FIELDS:
                    values[p.name] = coerce_value(SimConfig, p.name, p.value)
            if values:
                self.control.set_parameters(values)
        except ValueError as exc:
            return SetParametersResult(successful=False, reason=str(exc))
        if values:
            self.node.get_logger().info(f'simulator parameters changed at t = '
                                        f'{self.control.sim.time:.6f} s: {values}')
        return SetParametersResult(successful=True)


__all__ = ['SimulationServices']
