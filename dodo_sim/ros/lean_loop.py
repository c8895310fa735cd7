# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
The lean transport loop: an rclpy wait-set loop in place of the executor of a 1 kHz node.

Why: in a lockstep exchange every microsecond between a message's arrival and its callback is
wall time. rclpy's SingleThreadedExecutor rebuilds its whole wait set in Python and runs every
callback through a Task per wake-up; the EventsExecutor is faster but still a general dispatcher.
A plain wait-set loop that takes raw CDR and publishes pre-serialised CDR is the floor of a Python
exchange (``bench/bench_floor.py``, docs/ros_contract.md "Per-step message work"). This module is
that loop, made complete enough to spin a real node: :class:`LeanLoop` has the methods of an rclpy
executor that ``runtime.run_node``, ``runtime.spin_until`` and rclpy itself call
(``add_node``, ``remove_node``, ``get_nodes``, ``wake``, ``create_task``, ``spin``,
``spin_once``, ``spin_until_future_complete``, ``shutdown``, ``context``), so a node opts in by
being spun by ``LeanLoop()`` instead of ``runtime.make_executor()``: with everything else of
``runtime.run_node`` unchanged (``init_ros``'s signal handling, ``gc.freeze``, ``spin_until``
with its ``done`` and 'stop' futures, ``destroy_node``), e.g. a class attribute the node sets
and one line in ``run_node``::

    executor = LeanLoop() if getattr(node, 'lean_loop', False) else make_executor()

(``test/ros/test_lean_loop.py`` runs a node through ``run_node`` with the loop in place of the
executor). The hot path stays lean only if the node's 1 kHz callbacks are: raw subscriptions
(``raw=True``) and publishing pre-serialised bytes (``dodo_sim.ros.cdr``).

What it serves after each wait, in this order (one thread; callbacks run to completion):

1. subscriptions: one message per ready subscription, raw bytes or a message object as the
   subscription was created, ``callback(msg)`` or ``callback(msg, info)`` as rclpy decides
   from the callback's signature;
2. timers. Steady-clock timers (every timer of the dodo_sim nodes) are scheduled here: the wait
   ends at the soonest one's next call (``time_until_next_call``), and a due one is called after
   ``is_timer_ready``. An rcl timer in the wait set costs a blocking wait of this Fast DDS setup
   ~40 us of CPU more (bench_floor A/B, docs/ros_contract.md "Per-step message work"), about a
   third of a whole round trip. System- and ROS-time timers stay in the wait set (rcl wakes them
   on /clock jumps). A timer cancelled, reset or given another period by a callback is seen at
   once when its due time comes, and otherwise with the low-priority entities below;
3. the node's guard conditions (``node.create_guard_condition``) and the loop's own wake-up;
4. low priority: services (the parameter services ``ros2 param`` uses, type description, the
   node's own), clients, waitables (QoS event handlers), tasks (coroutines, done callbacks of
   futures bound to the loop) and rclpy's SIGINT guard condition. These are put into the wait
   set at most every ``service_period_s`` while hot work keeps the loop busy, and always when it
   waits idle, so a busy 1 kHz exchange does not pay for a dozen idle entities per wait and a
   service call waits at most ``service_period_s`` for its turn.

Stop and shutdown: the spin returns when its future is done (checked after every wake-up), at
its timeout, when :meth:`shutdown` was called (a guard condition wakes the wait) or when the
context is shut down (``ExternalShutdownException``, as the executors). SIGINT/SIGTERM are
handled by the runtime's own Python handlers (``runtime.init_ros``: they complete the 'stop'
future); a Python handler runs only when the main thread returns from the C wait, so while it
spins in the main thread the loop registers ``signal.set_wakeup_fd`` (from its first spin until
:meth:`LeanLoop.shutdown`) and a small thread turns each signal byte into a trigger of the
wake-up guard condition: the handler runs at once, not at the next timeout. (When another owner
has set a wake-up fd the loop leaves it alone and signals are seen at the caller's timeout.)

rclpy APIs used (rclpy 9.1, Kilted), as rclpy's executors and ``rclpy.wait_for_message`` use them:
``rclpy.impl.implementation_singleton.rclpy_implementation.WaitSet`` (``clear_entities``,
``add_subscription/timer/guard_condition/service/client``, ``wait``, ``get_ready_entities``),
the entities' ``handle`` (``take_message``, ``call_timer``/``call_timer_with_info``,
``is_timer_ready``, ``time_until_next_call``, ``service_take_request``, ``take_response``)
entered as context managers while they are in the wait set, ``Service.send_response``,
``Client.get_pending_request``, the public ``Waitable`` protocol, ``GuardCondition``,
``rclpy.signals.SignalHandlerGuardCondition``, ``Context.on_shutdown`` and ``rclpy.task.Task``.
Callback groups are not consulted: one thread runs every callback, which satisfies any group.
One module at this length: which entities are in the wait set, how long their handles are held
and the order they are served in are one piece of state (the executor's job, done once).
``WaitSet`` and the handles are rclpy's implementation layer, not its documented API; they are
what rclpy's own executors are built on, and ``test/ros/test_lean_loop.py`` fails loudly if an
rclpy release changes them.
"""
from __future__ import annotations

from contextlib import ExitStack
import inspect
import os
import signal
import threading
import time
import weakref

from rclpy.clock_type import ClockType
from rclpy.exceptions import InvalidHandle, TimerCancelledError
from rclpy.executors import ExternalShutdownException
from rclpy.guard_condition import GuardCondition
from rclpy.impl.implementation_singleton import rclpy_implementation as _rclpy
from rclpy.signals import SignalHandlerGuardCondition
from rclpy.task import Task
from rclpy.timer import TimerInfo
from rclpy.utilities import get_default_context

#: Default longest wait of a service request (and the other low-priority entities) while the
#: loop is busy with subscriptions and timers, s (idle, they wake the loop at once).
SERVICE_PERIOD_S = 0.01


def _takes_args(function, count: int) -> bool:
    try:
        inspect.signature(function).bind(*([None] * count))
        return True
    except (TypeError, ValueError):
        return False


def _timer_info_argument(callback):
    """Return the keyword of a timer callback's TimerInfo argument (rclpy's rule), or None."""
    if callback is None:
        return None
    try:
        parameters = inspect.signature(callback).parameters.values()
    except (TypeError, ValueError):
        return None
    for parameter in parameters:
        if parameter.annotation in (TimerInfo, 'TimerInfo'):
            return parameter.name
    return None


async def _await(awaitable):
    return await awaitable


class _Subscription:
    __slots__ = ('sub', 'handle', 'msg_type', 'raw', 'callback', 'with_info')

    def __init__(self, sub):
        self.sub, self.handle = sub, sub.handle
        self.msg_type, self.raw = sub.msg_type, sub.raw
        self.callback = None
        self.with_info = False
        self.refresh()

    def refresh(self):
        """Re-read the callback (a node may replace it) and how rclpy would call it."""
        self.callback = self.sub.callback
        self.with_info = (not _takes_args(self.callback, 1)) and _takes_args(self.callback, 2)


class _Timer:
    __slots__ = ('timer', 'handle', 'callback', 'info_argument', 'due_ns')

    def __init__(self, timer):
        self.timer, self.handle = timer, timer.handle
        self.callback = None
        self.info_argument = None
        self.due_ns = None                  # steady timers: monotonic ns of the next call
        self.refresh()

    def schedule(self, now_ns: int) -> None:
        """Steady timers: read when the next call is due (None: cancelled)."""
        until = self.handle.time_until_next_call()
        self.due_ns = None if until is None else now_ns + max(0, until)

    def refresh(self):
        self.callback = self.timer.callback
        self.info_argument = _timer_info_argument(self.callback)


class _SignalWake:
    """
    Wake a wait on a guard condition when a Python signal handler is pending.

    ``signal.set_wakeup_fd`` makes the interpreter write a byte into a pipe when a signal
    arrives; a thread blocked on the pipe triggers the guard condition, the C wait returns and the
    main thread runs the handler.
    """

    def __init__(self, guard: GuardCondition):
        self._guard = guard
        self._read_fd, self._write_fd = os.pipe()
        os.set_blocking(self._write_fd, False)
        self._closing = False
        self._registered = False
        self._previous = -1
        self._thread = threading.Thread(target=self._run, name='lean_loop_signals', daemon=True)
        self._thread.start()

    def _run(self):
        while True:
            try:
                data = os.read(self._read_fd, 64)
            except OSError:
                return
            if self._closing or not data:
                return
            try:
                self._guard.trigger()
            except InvalidHandle:   # the loop's guard is gone: nothing left to wake
                return

    def register(self) -> bool:
        """Route signal bytes to the pipe (main thread only); False if another owner has it."""
        if self._registered:
            return True
        if threading.current_thread() is not threading.main_thread():
            return False
        previous = signal.set_wakeup_fd(self._write_fd, warn_on_full_buffer=False)
        if previous not in (-1, self._write_fd):
            signal.set_wakeup_fd(previous)           # someone else's: leave it
            return False
        self._registered = True
        return True

    def unregister(self) -> None:
        if self._registered:
            self._registered = False
            signal.set_wakeup_fd(-1)

    def close(self) -> None:
        self.unregister()
        self._closing = True
        try:
            os.write(self._write_fd, b'\0')
        except OSError:
            pass
        self._thread.join(1.0)
        for fd in (self._read_fd, self._write_fd):
            try:
                os.close(fd)
            except OSError:
                pass


class LeanLoop:
    """
    A single-threaded wait-set loop with the executor methods a node and the runtime use.

    ``service_period_s``: the longest a service request (or another low-priority entity) waits
    for its turn while subscriptions and timers keep the loop busy.
    """

    def __init__(self, *, context=None, service_period_s: float = SERVICE_PERIOD_S):
        self._context = get_default_context() if context is None else context
        self._service_period_ns = int(service_period_s * 1e9)
        self._nodes: list = []
        self._tasks: list = []
        self._lock = threading.Lock()           # nodes and tasks may be added from other threads
        self._wake_guard = GuardCondition(callback=None, callback_group=None,
                                          context=self._context)
        self._sigint_guard = SignalHandlerGuardCondition(self._context)
        self._signal_wake = None
        self._hooked_futures = weakref.WeakSet()
        self._is_shutdown = False
        self._dirty = True
        self._spinning = False
        self._alive = None
        self._stack = None
        self._wait_set = None
        self._next_cold_ns = 0
        self._context.on_shutdown(self.wake)

    # -- the executor interface (what Node, Future, runtime.run_node and spin_until call) ----

    @property
    def context(self):
        return self._context

    def add_node(self, node) -> bool:
        with self._lock:
            if node in self._nodes:
                return False
            self._nodes.append(node)
        node.executor = self                # rclpy: the node wakes its executor on changes
        self.wake()
        return True

    def remove_node(self, node) -> None:
        with self._lock:
            if node not in self._nodes:
                return
            self._nodes.remove(node)
        self.wake()

    def get_nodes(self) -> list:
        with self._lock:
            return list(self._nodes)

    def wake(self) -> None:
        """Entities were created or destroyed (rclpy calls this): rebuild before the next wait."""
        self._dirty = True
        self._alive = None
        if not self._spinning:
            self._release()                 # a destroyed entity's handle is given back now
        self._trigger()

    def create_task(self, callback, *args, **kwargs) -> Task:
        task = Task(callback, args, kwargs, executor=self)
        with self._lock:
            self._tasks.append(task)
        self._trigger()
        return task

    def create_future(self):
        from rclpy.task import Future
        return Future(executor=self)

    def spin(self) -> None:
        """Serve until shutdown (the loop's or the context's)."""
        while self._context.ok() and not self._is_shutdown:
            self._spin(None, -1)

    def spin_once(self, timeout_sec: float | None = None) -> None:
        """Wait once (up to ``timeout_sec``; None or < 0: no limit) and serve what is ready."""
        self._spin(None, self._timeout_ns(timeout_sec), once=True)

    def spin_until_future_complete(self, future, timeout_sec: float | None = None) -> None:
        """Serve until ``future`` is done or ``timeout_sec`` passed (None or < 0: no limit)."""
        if future.done() or future.cancelled():
            return
        if future not in self._hooked_futures:   # a future done in another thread wakes us
            self._hooked_futures.add(future)
            future.add_done_callback(lambda _f: self._trigger())
        self._spin(future, self._timeout_ns(timeout_sec))

    def shutdown(self, timeout_sec: float | None = None) -> bool:
        """Stop spinning (a spin in progress returns after its current callback)."""
        if self._is_shutdown:
            return True
        with self._lock:
            self._nodes = []
        self._is_shutdown = True
        self._trigger()
        if not self._spinning:
            self._close()
        return True

    def _close(self) -> None:
        """After shutdown, in the spinning thread: give everything back."""
        self._release()
        if self._signal_wake is not None:
            self._signal_wake.close()
            self._signal_wake = None
        for guard in (self._wake_guard, self._sigint_guard):
            try:
                guard.destroy()
            except InvalidHandle:
                pass

    # -- the loop ----------------------------------------------------------------------------

    @staticmethod
    def _timeout_ns(timeout_sec) -> int:
        return -1 if timeout_sec is None or timeout_sec < 0 else int(timeout_sec * 1e9)

    def _trigger(self) -> None:
        try:
            self._wake_guard.trigger()
        except InvalidHandle:       # destroyed at shutdown: nothing left to wake
            pass

    def _spin(self, future, timeout_ns: int, once: bool = False) -> None:
        if self._is_shutdown:
            return
        deadline = None if timeout_ns < 0 else time.monotonic_ns() + timeout_ns
        self._register_signals()
        self._spinning = True
        try:
            while True:
                if self._dirty:
                    self._rebuild()
                now = self._wait_and_serve(deadline)
                if (once or self._is_shutdown or (future is not None and future.done())
                        or (deadline is not None and now >= deadline)):
                    return
        finally:
            self._spinning = False
            if self._is_shutdown:
                self._close()
            elif self._dirty:
                self._release()

    def _register_signals(self) -> bool:
        """Route signals to the wake-up guard (kept until shutdown: spin_once stays cheap)."""
        if self._signal_wake is None:
            if threading.current_thread() is not threading.main_thread():
                return False
            self._signal_wake = _SignalWake(self._wake_guard)
        return self._signal_wake.register()

    def _release(self) -> None:
        """Give the entities' handles back (a node destroyed meanwhile is destroyed now)."""
        if self._stack is not None:
            self._stack.close()
            self._stack = None
        self._wait_set = None

    def _rebuild(self) -> None:
        """Collect every entity of the nodes, hold their handles, size the wait set."""
        self._release()
        self._dirty = False
        stack = ExitStack()
        subs, timers, guards, services, clients, waitables = [], [], [], [], [], []
        events = extra_guards = extra_timers = extra_subs = extra_clients = extra_services = 0

        def hold(handle) -> bool:
            try:
                stack.enter_context(handle)
                return True
            except InvalidHandle:   # destroyed meanwhile
                return False

        for node in self.get_nodes():
            subs += [_Subscription(s) for s in node.subscriptions if hold(s.handle)]
            timers += [_Timer(t) for t in node.timers if hold(t.handle)]
            guards += [g for g in node.guards if hold(g.handle)]
            services += [s for s in node.services if hold(s.handle)]
            clients += [c for c in node.clients if hold(c.handle)]
            for waitable in node.waitables:
                if hold(waitable):
                    waitables.append(waitable)
                    n = waitable.get_num_entities()
                    events += n.num_events
                    extra_guards += n.num_guard_conditions
                    extra_timers += n.num_timers
                    extra_subs += n.num_subscriptions
                    extra_clients += n.num_clients
                    extra_services += n.num_services
        own = [g for g in (self._wake_guard, self._sigint_guard) if hold(g.handle)]
        stack.enter_context(self._context.handle)
        self._wait_set = _rclpy.WaitSet(
            len(subs) + extra_subs, len(guards) + len(own) + extra_guards,
            len(timers) + extra_timers, len(clients) + extra_clients,
            len(services) + extra_services, events, self._context.handle)
        self._stack = stack
        self._subs = subs
        self._sub_handles = [s.handle for s in subs]
        self._subs_by_pointer = {s.handle.pointer: s for s in subs}
        now = time.monotonic_ns()
        self._steady_timers = [t for t in timers
                               if t.timer.clock.clock_type == ClockType.STEADY_TIME]
        for entry in self._steady_timers:
            entry.schedule(now)
        self._next_timer_ns = self._soonest()
        rcl_timers = [t for t in timers if t not in self._steady_timers]
        self._timer_handles = [t.handle for t in rcl_timers]
        self._timers_by_pointer = {t.handle.pointer: t for t in rcl_timers}
        self._wake_handle = self._wake_guard.handle
        self._guards_by_pointer = {g.handle.pointer: g for g in guards}
        self._hot_guard_handles = [g.handle for g in guards] + [self._wake_handle]
        self._sigint_handle = self._sigint_guard.handle
        self._services = services
        self._services_by_pointer = {s.handle.pointer: s for s in services}
        self._clients_by_pointer = {c.handle.pointer: c for c in clients}
        self._waitables = waitables
        self._alive = None
        self._next_cold_ns = 0

    def _wait_and_serve(self, deadline) -> int:
        """Wait (until ``deadline``, monotonic ns; None: no limit), serve; return the time."""
        wait_set = self._wait_set
        wait_set.clear_entities()
        for handle in self._sub_handles:
            wait_set.add_subscription(handle)
        for handle in self._timer_handles:
            wait_set.add_timer(handle)
        for handle in self._hot_guard_handles:
            wait_set.add_guard_condition(handle)
        now = time.monotonic_ns()
        cold = now >= self._next_cold_ns
        if cold:
            self._add_cold(wait_set)
            until = deadline
        else:
            until = self._next_cold_ns if deadline is None else min(deadline, self._next_cold_ns)
        if self._next_timer_ns is not None and (until is None or self._next_timer_ns < until):
            until = self._next_timer_ns
        wait_set.wait(-1 if until is None else max(0, until - now))
        # the context's handle is held with the entities'; its shutdown wakes the loop's guard
        # (rclpy's own signal handler: its SIGINT guard condition, a low-priority entity)
        if (cold or self._dirty) and not self._context.ok():
            raise ExternalShutdownException()

        # 1. subscriptions
        ready = wait_set.get_ready_entities('subscription')
        if ready:
            by_pointer = self._subs_by_pointer
            for pointer in ready:
                entry = by_pointer.get(pointer)
                if entry is None:   # a waitable's own (an action client's): it takes it
                    continue
                if self._dirty and not self._still_there(entry.sub):
                    continue
                taken = entry.handle.take_message(entry.msg_type, entry.raw)
                if taken is None:
                    continue
                callback = entry.sub.callback
                if callback is not entry.callback:
                    entry.refresh()
                result = (callback(taken[0], taken[1]) if entry.with_info
                          else callback(taken[0]))
                if result is not None and inspect.iscoroutine(result):
                    self.create_task(_await, result)
        # 2. timers
        if self._next_timer_ns is not None and time.monotonic_ns() >= self._next_timer_ns:
            self._call_steady_timers()
        if self._timer_handles:
            ready = wait_set.get_ready_entities('timer')
            for pointer in ready:
                entry = self._timers_by_pointer.get(pointer)
                if entry is not None:       # not a waitable's own
                    self._call_timer(entry)
        # 3. the node's guard conditions (a wait resets them: a ready one is served now)
        if self._guards_by_pointer:
            for pointer in wait_set.get_ready_entities('guard_condition'):
                guard = self._guards_by_pointer.get(pointer)
                if guard is not None and guard.callback is not None:
                    result = guard.callback()
                    if result is not None and inspect.iscoroutine(result):
                        self.create_task(_await, result)
        # 4. low priority
        now = time.monotonic_ns()
        if cold:
            self._next_cold_ns = now + self._service_period_ns
            self._serve_cold(wait_set)
            for entry in self._steady_timers:       # cancelled, reset or re-timed meanwhile
                entry.schedule(now)
            self._next_timer_ns = self._soonest()
        if self._tasks:
            self._run_tasks()
        return now

    def _still_there(self, entity) -> bool:
        """Tell whether an entity is still its node's (after a callback changed the entities)."""
        if self._alive is None:
            alive = set()
            for node in self.get_nodes():
                for group in (node.subscriptions, node.timers, node.services, node.clients):
                    alive.update(id(e) for e in group)
            self._alive = alive
        return id(entity) in self._alive

    def _soonest(self):
        return min((t.due_ns for t in self._steady_timers if t.due_ns is not None),
                   default=None)

    def _call_steady_timers(self) -> None:
        now = time.monotonic_ns()
        for entry in self._steady_timers:
            if entry.due_ns is not None and entry.due_ns <= now:
                self._call_timer(entry)
                entry.schedule(time.monotonic_ns())
        self._next_timer_ns = self._soonest()

    def _call_timer(self, entry: _Timer) -> None:
        if self._dirty and not self._still_there(entry.timer):
            return
        handle = entry.handle
        try:
            if not handle.is_timer_ready():
                return
            callback = entry.timer.callback
            if callback is not entry.callback:
                entry.refresh()
            if entry.info_argument is None:
                handle.call_timer()
                if callback is None:
                    return
                result = callback()
            else:
                info = handle.call_timer_with_info()
                result = callback(**{entry.info_argument: TimerInfo(
                    expected_call_time=info['expected_call_time'],
                    actual_call_time=info['actual_call_time'],
                    clock_type=entry.timer.clock.clock_type)})
        except TimerCancelledError:
            return
        if result is not None and inspect.iscoroutine(result):
            self.create_task(_await, result)

    def _add_cold(self, wait_set) -> None:
        for service in self._services:
            wait_set.add_service(service.handle)
        for client in self._clients_by_pointer.values():
            wait_set.add_client(client.handle)
        wait_set.add_guard_condition(self._sigint_handle)
        for waitable in self._waitables:
            waitable.add_to_wait_set(wait_set)

    def _serve_cold(self, wait_set) -> None:
        for pointer in wait_set.get_ready_entities('service'):
            service = self._services_by_pointer.get(pointer)
            if service is None:     # a waitable's own (an action server's): it serves it
                continue
            if self._dirty and not self._still_there(service):
                continue
            request, header = service.handle.service_take_request(service.srv_type.Request)
            if header is None:
                continue
            response = service.callback(request, service.srv_type.Response())
            if inspect.iscoroutine(response):
                self.create_task(self._respond_later, service, response, header)
            else:
                service.send_response(response, header)
        for pointer in wait_set.get_ready_entities('client'):
            client = self._clients_by_pointer.get(pointer)
            if client is None:      # a waitable's own (an action client's): it serves it
                continue
            header, response = client.handle.take_response(client.srv_type.Response)
            if header is None:
                continue
            try:
                future = client.get_pending_request(header.request_id.sequence_number)
            except KeyError:        # the request was cancelled
                continue
            future.set_result(response)
        for waitable in self._waitables:
            if waitable.is_ready(wait_set):
                self.create_task(waitable.execute, waitable.take_data())

    @staticmethod
    async def _respond_later(service, response, header):
        service.send_response(await response, header)

    def _run_tasks(self) -> None:
        with self._lock:
            tasks, self._tasks = self._tasks, []
        pending = []
        try:
            while tasks:
                task = tasks.pop(0)
                task()
                if not task.done():
                    pending.append(task)
                elif task.exception() is not None:
                    raise task.exception()      # as the executors: a failed task ends the spin
        finally:
            pending += tasks
            if pending:
                with self._lock:
                    self._tasks = pending + self._tasks


__all__ = ['LeanLoop', 'SERVICE_PERIOD_S']
