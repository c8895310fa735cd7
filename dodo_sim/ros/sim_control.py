# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
Driving the simulation: the rules of simulation_interfaces for one robot per simulator.

No rclpy. The simulator node calls :meth:`SimulationControl.boundary` at every step boundary
(lockstep: with the controller's answer to the newest state; realtime: for each step a timer
tick owes) and does what it returns; :mod:`dodo_sim.ros.sim_services` turns the services and
the action of the standard (ros-simulation/simulation_interfaces, Kilted line 1.6.1) into the
requests of this module and answers each caller when its request is done. Every rule is a test
in ``test/ros/test_sim_control.py``; the design is docs/simulation_interfaces.md.

* States: PLAYING (the run steps), PAUSED (it does not: lockstep holds the controller's answer to
  the newest state, realtime takes no steps and restarts its wall clock on resume), STOPPED
  (the standard's "pausing and resetting": a full reset, then paused; playing it runs from the
  start) and QUITTING (the simulation holds as paused until :meth:`SimulationControl.release_quit`
  — the adapter calls it once the caller has its answer —, then the run ends cleanly at the
  next step boundary: ``stop_reason=quit``, exit code 0, the bag closed). The run starts
  PLAYING.
* Steps: ``step(n)`` while paused takes n steps; in lockstep each applies the held answer and
  publishes a state whose answer the step waits for, so simulated time advances by exactly n
  control periods, each answered (the request is done when the n-th new state is answered; its
  progress is reported per answered state). Realtime: the steps follow the wall clock as when
  playing (n control periods of wall time), each with the newest command; done when the n-th
  state is published.
* Changes (a reset, an entity or joint state) are applied at the next step boundary, instead of
  a step: lockstep, when the newest state's answer is in (at once while paused: it is held);
  the answer is then dropped, the new state is published one control period after the newest
  (:meth:`dodo_sim.ros.exchange.LockstepExchange.reset`: the clock never goes back, simulated
  time advances by one answered period) and the request is done when it is answered. Each
  starts a new *episode*: an event (:mod:`dodo_sim.ros.sim_events`) is handed to ``on_event``
  before the state is published, so a controller can start afresh at that state.
* Reset scopes (ResetSimulation): SCOPE_STATE puts the robot in the start state (``initial_q``,
  ``initial_v``; the motors' torque lag and a pending push cleared); SCOPE_TIME restarts the
  simulation's own time at 0 (the push schedule starts over; the published clock and stamps go
  on increasing); both (SCOPE_DEFAULT, SCOPE_ALL): both; SCOPE_SPAWNED: nothing is ever spawned,
  so nothing to remove (alone: done at once, no new state).
* Parameter changes (``set_parameters``) are applied at once: the node's callbacks run between
  steps, so that is a step boundary; the next step starts from the newest state with them.

Results are simulation_interfaces' codes (the module's constants have their values; the
adapter's tests compare them with the built messages).
"""
from __future__ import annotations

from collections import deque
import dataclasses
from typing import Callable

from dodo_sim.ros.sim_entities import EntityError
from dodo_sim.ros.sim_values import (ALREADY_IN_TARGET_STATE, INCORRECT_TRANSITION, INVALID_POSE,
                                     RESULT_FEATURE_UNSUPPORTED, RESULT_INCORRECT_STATE, RESULT_OK,
                                     RESULT_OPERATION_FAILED, SCOPE_ALL, SCOPE_DEFAULT,
                                     scope_names, SCOPE_SPAWNED, SCOPE_STATE, SCOPE_TIME,
                                     STATE_NAMES, STATE_PAUSED, STATE_PLAYING, STATE_QUITTING,
                                     STATE_STOPPED)


#: msg/SimulatorFeatures values this simulator supports (docs/simulation_interfaces.md)
FEATURES = {
    8: 'ENTITY_CATEGORIES',          # categories in GetEntities filters, GetEntityInfo
    10: 'ENTITY_STATE_GETTING',      # GetEntityState, GetEntitiesStates
    11: 'ENTITY_STATE_SETTING',      # SetEntityState (the robot's base)
    12: 'ENTITY_INFO_GETTING',       # GetEntityInfo
    20: 'SIMULATION_RESET',
    21: 'SIMULATION_RESET_TIME',
    22: 'SIMULATION_RESET_STATE',
    23: 'SIMULATION_RESET_SPAWNED',  # accepted: nothing is ever spawned
    24: 'SIMULATION_STATE_GETTING',
    25: 'SIMULATION_STATE_SETTING',
    26: 'SIMULATION_STATE_PAUSE',
    31: 'STEP_SIMULATION_SINGLE',
    32: 'STEP_SIMULATION_MULTIPLE',
    33: 'STEP_SIMULATION_ACTION',
}
#: Most steps one request may ask for (a uint64 from a caller: bounded; ~116 days at 1 kHz).
MAX_STEPS = 10_000_000_000

#: What :meth:`SimulationControl.boundary` tells the node to do.
STEP = 'step'          # step with the torques given (realtime: None, the exchange's command)
PUBLISH = 'publish'    # publish the state given (a change was applied)
HOLD = 'hold'          # nothing: paused
QUIT = 'quit'          # end the run (stop_reason quit, exit code 0)


class Request:
    """
    One caller's request; ``outcome`` is set (``(code, message)``) when it is done.

    ``on_done(outcome)`` is called then; a step request's ``on_progress(completed, remaining)``
    after each completed step (the action's feedback).
    """

    def __init__(self, kind: str, steps: int = 0, apply: Callable | None = None):
        self.kind = kind
        self.steps = steps
        self.taken = 0              # steps started
        self.completed = 0          # steps whose state is answered (lockstep) / out (realtime)
        self.apply = apply          # a change: () -> (state, event kind, details)
        self.outcome: tuple | None = None
        self.cancelled = False
        self.on_done: Callable | None = None
        self.on_progress: Callable | None = None

    @property
    def done(self) -> bool:
        return self.outcome is not None

    def finish(self, code: int, message: str = '') -> None:
        """Set the outcome once and tell the caller."""
        if self.outcome is not None:
            return
        self.outcome = (code, message)
        if self.on_done is not None:
            self.on_done(self.outcome)


def refused(code: int, message: str) -> Request:
    """Return a request that is done already (refused, or nothing to do)."""
    request = Request('refused')
    request.outcome = (code, message)
    return request


class SimulationControl:
    """
    The simulation state, the pending requests and the changes they make (module docs).

    Inputs:
        sim: the :class:`dodo_sim.simulator.Simulator` the node steps.
        exchange: the node's exchange (``reset(t_s)``, ``state_stamp``, ``newest_ns``).
        entities: :class:`dodo_sim.ros.sim_entities.Entities` of ``sim``.
        lockstep: the simulator's mode is lockstep (answers are awaited) or realtime.
        on_event: ``f(record: dict, episode: bool)``: an event happened; ``episode``: a new
            episode starts with the state published next (the node publishes the record and
            makes sure readers have it before that state).
    """

    def __init__(self, sim, exchange, entities, *, lockstep: bool,
                 on_event: Callable[[dict, bool], None] | None = None):
        self.sim = sim
        self.exchange = exchange
        self.entities = entities
        self.lockstep = lockstep
        self.on_event = on_event
        self.state = STATE_PLAYING
        #: lockstep: the controller's answer to the newest state, not applied yet (paused)
        self.held = None
        self.episode = 0
        self.events = 0                 # events handed out (their seq)
        self._quit = False              # QUITTING released: end at the next boundary
        self._changes: deque = deque()  # change requests, applied in order at boundaries
        self._steps: deque = deque()    # step requests, in order
        self._settling: list = []       # done when the newest published state is answered

    # -- what the node asks -----------------------------------------------------------------------

    @property
    def running(self) -> bool:
        """Tell whether the next boundary may step (playing, or steps asked for)."""
        return self.state == STATE_PLAYING or any(r.taken < r.steps for r in self._steps)

    @property
    def waiting(self) -> bool:
        """Tell whether a change or the end waits for a step boundary."""
        return bool(self._changes) or self._quit

    def release_quit(self) -> None:
        """End the run at the next step boundary (QUITTING, once its caller has the answer)."""
        if self.state == STATE_QUITTING:
            self._quit = True

    def boundary(self, answer=None) -> tuple:
        """
        Decide what the step boundary at the newest state does: ``(action, value)``.

        Lockstep: ``answer`` is the controller's answer to the newest state (it is held while
        paused), or None to decide again with the held one (a request came while paused).
        Realtime: None (the node takes the exchange's command for a step). Returns
        (:data:`STEP`, torques), (:data:`PUBLISH`, state), (:data:`HOLD`, None) or
        (:data:`QUIT`, None).
        """
        if answer is not None:
            self.held = answer
            if self._settling:
                self._answered()
        state = self.state
        if state == STATE_PLAYING and not self._changes:      # the per-step path
            torques, self.held = self.held, None
            return STEP, torques
        if state == STATE_QUITTING:
            return (QUIT if self._quit else HOLD), None
        while self._changes:
            request = self._changes.popleft()
            try:
                state, kind, details = request.apply()
            except EntityError as exc:
                request.finish(exc.code, str(exc))
                continue
            except ValueError as exc:       # the physics refused the state (e.g. under ground)
                request.finish(INVALID_POSE if request.kind in ('entity_state', 'joint_state')
                               else RESULT_OPERATION_FAILED, str(exc))
                continue
            self.held = None                # it answered the state before the change
            self.episode += 1
            self._event(kind, state=state, episode=True, **details)
            self._settle(request)
            return PUBLISH, state
        if self.state == STATE_PLAYING:
            return self._step(None)
        for request in self._steps:
            if request.taken < request.steps:
                return self._step(request)
        return HOLD, None

    def published(self) -> None:
        """Take note: the state of the last STEP or PUBLISH is out (realtime: done then)."""
        if not self.lockstep and self._settling:
            self._answered()

    def ended(self, why: str) -> None:
        """Fail every pending request: the run is over (stop_after, lost controller, ...)."""
        for request in list(self._changes) + list(self._steps) + self._settling:
            request.finish(RESULT_OPERATION_FAILED, f'the run ended ({why})')
        self._changes.clear()
        self._steps.clear()
        self._settling = []

    # -- requests (the services) ----------------------------------------------------------------

    def set_state(self, target: int) -> Request:
        """
        Return the request of SetSimulationState(``target``).

        PLAYING and PAUSED are done at once; STOPPED when its reset is answered; QUITTING at
        once (the simulation holds; the run ends at the boundary after :meth:`release_quit`).
        The step requests under way are interrupted by PLAYING, STOPPED and QUITTING.
        """
        if target not in STATE_NAMES:
            return refused(RESULT_FEATURE_UNSUPPORTED, f'simulation state {target}: this '
                           f'simulator has the states STOPPED, PLAYING, PAUSED and QUITTING '
                           f'(no worlds to load)')
        if target == self.state:
            return refused(ALREADY_IN_TARGET_STATE,
                           f'the simulation is {STATE_NAMES[target]} already')
        if self.state == STATE_QUITTING:
            return refused(INCORRECT_TRANSITION, 'the simulation is quitting')
        if target != STATE_PAUSED:
            self._interrupt_steps(f'interrupted: the simulation was set {STATE_NAMES[target]}')
        self.state = target
        self._event(STATE_NAMES[target])
        if target == STATE_STOPPED:
            return self.reset(SCOPE_ALL, cause='set_simulation_state')
        request = Request('set_state')
        request.outcome = (RESULT_OK, '')
        return request

    def step(self, steps: int) -> Request:
        """Return the request of StepSimulation / SimulateSteps (``steps`` while paused)."""
        if self.state != STATE_PAUSED:
            # the standard: "Calling with simulation not paused will return OPERATION_FAILED"
            return refused(RESULT_OPERATION_FAILED, f'the simulation is '
                           f'{STATE_NAMES[self.state]}: pause it (SetSimulationState '
                           f'STATE_PAUSED) before stepping')
        if not 1 <= steps <= MAX_STEPS:
            return refused(RESULT_OPERATION_FAILED, f'steps must be 1 to {MAX_STEPS}, '
                           f'got {steps}')
        request = Request('step', steps=steps)
        self._steps.append(request)
        self._event('stepping', steps=steps)
        return request

    def cancel(self, request: Request) -> None:
        """Take no more steps for ``request``; it is done when the steps taken are complete."""
        request.cancelled = True
        request.steps = request.taken
        if request.completed >= request.taken:
            self._finish_steps(request)

    def reset(self, scope: int, cause: str = 'reset_simulation') -> Request:
        """Return the request of ResetSimulation(``scope``) (module docs: the scopes)."""
        known = SCOPE_TIME | SCOPE_STATE | SCOPE_SPAWNED
        if scope not in (SCOPE_DEFAULT, SCOPE_ALL) and scope & ~known:
            return refused(RESULT_FEATURE_UNSUPPORTED, f'reset scope {scope}: the scopes are '
                           f'SCOPE_TIME (1), SCOPE_STATE (2), SCOPE_SPAWNED (4), their sums, '
                           f'SCOPE_DEFAULT (0) and SCOPE_ALL (255)')
        names = scope_names(scope)
        if 'time' not in names and 'state' not in names:
            return refused(RESULT_OK, 'nothing was spawned, nothing to remove')
        if self.state == STATE_QUITTING:
            return refused(RESULT_INCORRECT_STATE, 'the simulation is quitting')

        def apply():
            sim = self.sim
            if 'state' in names and 'time' in names:
                state = sim.reset()
            elif 'state' in names:
                state = sim.set_state(*sim.start_state())
            else:                           # time alone: the robot stays where it is
                state = sim.reset(sim.state.q, sim.state.v, check_terrain=False)
            self.exchange.reset(state.t)
            return state, 'reset', {'scope': names, 'cause': cause}
        return self._change('reset', apply)

    def set_entity_state(self, name: str, frame_id: str, position, orientation_xyzw, linear,
                         angular) -> Request:
        """
        Return the request of SetEntityState: the robot's base at a pose and twist.

        Unknown entities and the terrain are refused at once; a pose the base's joints cannot
        reach, or under the terrain, when it is applied (INVALID_POSE).
        """
        entities = self.entities
        try:
            entities.check_settable(name, frame_id)
        except EntityError as exc:
            return refused(exc.code, str(exc))

        def apply():
            q, v = entities.with_base(name, frame_id, position, orientation_xyzw, linear,
                                      angular, self.sim.state.q, self.sim.state.v)
            return self._teleport(q, v), 'entity_state', {'entity': name}
        return self._change('entity_state', apply)

    def set_joint_state(self, joints: dict) -> Request:
        """
        Return the request of the companion set_joint_state: ``{joint: (position, velocity)}``.

        A velocity None keeps the joint's; unnamed joints keep theirs.
        """
        if not joints:
            return refused(RESULT_OPERATION_FAILED, 'name at least one joint')
        try:
            self.entities.with_joints(joints, self.sim.state.q, self.sim.state.v)
        except EntityError as exc:
            return refused(exc.code, str(exc))

        def apply():
            q, v = self.entities.with_joints(joints, self.sim.state.q, self.sim.state.v)
            return self._teleport(q, v), 'joint_state', {'joints': sorted(joints)}
        return self._change('joint_state', apply)

    def set_parameters(self, values: dict) -> None:
        """
        Apply SimConfig values now (a step boundary: the node's callbacks run between steps).

        ``values``: field -> value, already of the field's type. Raises ValueError (nothing
        changed) naming the refused value (:meth:`dodo_sim.simulator.Simulator.reconfigure`).
        """
        config = dataclasses.replace(self.sim.config, **values)
        self.sim.reconfigure(config)
        self._event('parameters', values={k: list(v) if isinstance(v, tuple) else v
                                          for k, v in values.items()})

    # -- internals --------------------------------------------------------------------------------

    def _change(self, kind: str, apply: Callable) -> Request:
        request = Request(kind, apply=apply)
        self._changes.append(request)
        return request

    def _teleport(self, q, v):
        """Put the robot in (q, v) at the current time; the next stamp is one period on."""
        limits = self.sim.config.joint_limits and self.sim.robot.limits
        for limit in limits or ():
            if not limit.lower - 1e-12 <= q[limit.idx_q] <= limit.upper + 1e-12:
                raise EntityError(INVALID_POSE, (
                    f'joint {limit.name!r} at {q[limit.idx_q]:.6g} is outside its URDF limits '
                    f'[{limit.lower:g}, {limit.upper:g}]'))
        state = self.sim.set_state(q, v)
        self.exchange.reset(state.t)
        return state

    def _step(self, request: Request | None) -> tuple:
        torques = self.held
        self.held = None
        if request is not None:
            request.taken += 1
            self._settling.append(request)
        return STEP, torques

    def _settle(self, request: Request) -> None:
        """Finish ``request`` when the state just made is answered (realtime: published)."""
        self._settling.append(request)

    def _answered(self) -> None:
        """Finish what waited for the newest state's answer (lockstep) or publication."""
        settling, self._settling = self._settling, []
        for request in settling:
            if request.kind != 'step':
                request.finish(RESULT_OK)
                continue
            request.completed += 1
            if request.on_progress is not None and not request.done:
                request.on_progress(request.completed, request.steps - request.completed)
            if request.completed >= request.steps:
                self._finish_steps(request)

    def _finish_steps(self, request: Request) -> None:
        if request in self._steps:
            self._steps.remove(request)
        if request.cancelled:
            request.finish(RESULT_OPERATION_FAILED,
                           f'cancelled after {request.completed} step(s)')
        else:
            request.finish(RESULT_OK)

    def _interrupt_steps(self, why: str) -> None:
        for request in list(self._steps):
            request.steps = request.taken
            request.finish(RESULT_OPERATION_FAILED,
                           f'{why} after {request.completed} of the steps')
        self._steps.clear()

    def _event(self, kind: str, state=None, episode: bool = False, **details) -> None:
        """Hand an event record to ``on_event`` (stamp: the new state's, else the newest)."""
        self.events += 1
        exchange = self.exchange
        if state is not None:
            stamp = exchange.state_stamp(state.t)
        else:
            stamp = exchange.newest_ns
        record = {'seq': self.events, 'stamp_ns': stamp, 'episode': self.episode,
                  'event': kind, **details}
        if self.on_event is not None:
            self.on_event(record, episode)


__all__ = ['FEATURES', 'HOLD', 'MAX_STEPS', 'PUBLISH', 'QUIT', 'Request', 'SimulationControl',
           'STEP', 'refused']
