# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
The command exchange core: which command answers which state, who the controller is, what counts.

No rclpy, no clock of its own: every call takes what the node received (a stamp in integer ns,
the publisher's id as bytes, the decoded torques or None for a malformed command) and ``now``
(steady wall-clock s, injected), and returns a verdict. The nodes keep their publishers,
subscriptions and timers and make one call per callback (docs/ros_contract.md, "The exchange
core"):

* :class:`LockstepExchange` — the simulator in ``mode: lockstep``: it publishes the state of time
  t and steps only with the command stamped t (``command`` returns :data:`ANSWER`); simulated
  time pauses while it waits (``watch`` warns, declares the controller lost).
* :class:`RealtimeExchange` — the simulator in ``mode: realtime`` (``due`` + ``next_command``:
  the steps a timer tick owes, each with the newest command held, zero-order hold) and the
  hardware driver (only the binding and the refusals: its safety supervisor holds the command).

The rules (each one a test in ``test/faults/test_exchange_core.py``):

* The stamp of a state is :func:`dodo_sim.stamps.stamp_ns` of its simulated time plus an offset
  that grows at each reset (``reset``), so the published clock never goes back.
* One controller: the first publisher whose valid command answers a state (lockstep: stamped
  exactly like the awaited state; realtime: stamped like a state published at most
  ``command_timeout`` ago) is bound (``ExchangeEvents.bound``). A valid command of any other
  publisher is *foreign*: counted, reported once per publisher (``ExchangeEvents.foreign``) and
  never applied. Realtime simulation only (``takeover``): when the bound controller has sent
  nothing applicable for ``command_timeout``, the next publisher with a current command is bound
  in its place; the hardware driver never lets another node take over.
* *early*: a command received before the first state was published (a controller_manager
  publishes from its start): counted apart, never foreign, never applied.
* *future*: a command stamped ahead of the newest published state (by more than ``ahead_ns``
  for the ros2_control convention on a wall clock) answers no state: counted, reported
  (``ExchangeEvents.future``), never applied nor held, so the valid commands after it are.
* *late*: a command of the controller stamped before the awaited state (lockstep) or not newer
  than the held one (realtime): counted, never applied.
* *unstamped*: a valid ``/effort_controller/commands`` command not applied (lockstep always;
  realtime while a stamped source answered within ``command_timeout``). In realtime without a
  stamped source it is held, taken to answer the newest state, from one publisher
  (the first; another is foreign while the first one sends).
* *rejected*: a malformed command (the node found wrong names, length or a non-finite value and
  passes ``torques=None``): counted, never an answer.
* Lockstep waits: past ``command_timeout`` (``startup_timeout`` for the first state) ``watch``
  returns :data:`WAITING` and counts the wait; it returns :data:`LOST` when the wait passed
  ``controller_lost_timeout`` or the bound controller's publisher left the graph (asked through
  the ``publisher_present`` callable every ``graph_look_s`` while waiting).
* ``stop_after``: the state stamped at or after it is still answered (:data:`LAST`), then the
  run ends without a step.
* ros2_control's topic-based convention in lockstep (``topic_based``; ``clock_tick_s`` > 0; the
  controller_manager's loop, ``ros2_control_node.cpp``, writes once per period of /clock and
  sleeps until its clock passed one more period — docs/ros2_control.md, "Lockstep"): the first
  state is stamped one period (ROS time 0 is a clock that has not started); until the first
  answer, a state for which nothing was written within ``clock_tick_s`` (wall) is published
  again one period later (``tick_due`` / ``tick``: the same state, no step; /clock moves, so
  the controller_manager starts and runs its loop); after it, the same after
  ``command_timeout`` (a /clock sample the best-effort ClockQoS lost, a missed wake-up: the
  loop would sleep for ever); a *write for the awaited state* is a command stamped like it, or
  one period before it when the previous publication's write came (the hardware component's
  node has its own /clock subscription, which may not yet have this state's clock); a valid
  one answers, a rejected one after the first answer returns :data:`TICK` (the
  controller_manager writes again only one period later).
* Realtime stepping: ``due(now)`` says how many steps a timer tick owes (a late tick makes up
  at most ``catch_up_s`` of steps; the rest is dropped and counted in ``overruns``);
  ``next_command(now)`` gives each step the held command, its age (newest state stamp minus
  the held command's stamp) accounted: above ``max_command_age`` a stale step, above
  ``command_timeout`` zero torque (a timeout, once per silence).

The hot path (``command``, ``published``, ``next_command``) allocates nothing but what the
caller hands in: verdicts are module constants, counters are ints on one object. One module at
this length: the two exchanges share the binding, the counters and the stamps, and every rule
above reads them.
"""
from __future__ import annotations

import math
from typing import Callable

from dodo_sim import stamps
from dodo_sim.ros.runtime import Histogram
from dodo_sim.stamps import wall_ns

#: Verdicts of a command (module constants: compare with ``is``).
ANSWER = 'answer'        # lockstep: it answers the awaited state: step with its torques
LAST = 'last'            # lockstep: it answers the last state (stop_after): end, no step
HELD = 'held'            # realtime: held from now on (zero-order hold)
REJECTED = 'rejected'    # malformed (torques None)
EARLY = 'early'          # before the first state was published
FOREIGN = 'foreign'      # valid, from a publisher other than the controller
FUTURE = 'future'        # stamped ahead of the newest published state
LATE = 'late'            # the controller's, answering no awaited (or newer) state
UNSTAMPED = 'unstamped'  # a valid unstamped command not applied
TICK = 'tick'            # lockstep, topic-based: rejected write for the awaited state: tick

#: Results of :meth:`LockstepExchange.watch`.
WAITING = 'waiting'      # past command_timeout (or startup_timeout) without an answer
LOST = 'lost'            # the controller is lost: end the run (``lost_reason`` says why)

#: Publication wall times remembered for the round-trip measurement (states).
ROUND_TRIP_RING = 1024
#: Histogram resolution: command ages in ns (bins of 0.1 ms up to 2 s), round trips and timer
#: lateness in ns (bins of 10 us up to 1 s).
AGE_BIN_NS, AGE_BINS = 100_000, 20_000
WALL_BIN_NS, WALL_BINS = 10_000, 100_000
#: Publishers remembered by id (foreign ones, names): a flood of new ids is counted, not stored.
MAX_PUBLISHERS = 64
#: A stamp this far ahead of the newest state is not a lag of clocks but another clock (a
#: controller_manager on the system clock beside a simulator: ``use_sim_time``).
FAR_AHEAD_NS = stamps.NS_PER_S


class ExchangeEvents:
    """
    What an exchange tells its node, rarely and never per step in normal running.

    The node logs, publishes the ``/simulator/controller`` announcement, updates /diagnostics.
    Every method is optional (this class does nothing); tests record them.
    """

    def bound(self, publisher: bytes, previous: bytes | None, stamp_ns: int) -> None:
        """Take note: ``publisher`` is now the controller (``previous``: the one replaced)."""

    def foreign(self, publisher: bytes, stamp_ns: int, first: bool) -> None:
        """Take note: a valid command of a publisher other than the controller was refused."""

    def future(self, publisher: bytes, stamp_ns: int, ahead_ns: int) -> None:
        """Take note: a command stamped ``ahead_ns`` past the newest state was refused."""

    def early(self, publisher: bytes) -> None:
        """Take note: a command came before the first state was published (not applied)."""

    def paused(self, waited_s: float) -> None:
        """Lockstep: the awaited answer is past its warning time (once per wait)."""

    def resumed(self, waited_s: float, stamp_ns: int) -> None:
        """Lockstep: the answer of a wait past its warning time came after ``waited_s``."""

    def zero_torque(self) -> None:
        """Realtime: no command within command_timeout: zero torque from this step on."""

    def commands_back(self) -> None:
        """Realtime: a fresh command ended a zero-torque stretch."""

    def stale(self, age_ns: int, stale_steps: int) -> None:
        """Realtime: a step applied a command older than max_command_age."""


class ExchangeCounts:
    """The counters of an exchange (the ``dodo exchange:`` summary and /diagnostics)."""

    __slots__ = ('steps', 'rejected', 'early', 'foreign', 'future', 'late', 'unstamped',
                 'zero_torque_steps', 'timeouts', 'stale_steps', 'overruns', 'waits',
                 'wait_s_max', 'clock_ticks')

    def __init__(self):
        self.steps = 0               # states published after the first (steps and resets)
        self.rejected = 0            # malformed commands
        self.early = 0               # commands before the first state
        self.foreign = 0             # valid, from a publisher other than the controller
        self.future = 0              # stamped ahead of the newest state
        self.late = 0                # the controller's, answering no awaited / newer state
        self.unstamped = 0           # valid unstamped commands not applied
        self.zero_torque_steps = 0   # realtime: steps with zero torque (no fresh command)
        self.timeouts = 0            # realtime: silences past command_timeout
        self.stale_steps = 0         # realtime: steps with a command older than max_command_age
        self.overruns = 0            # realtime: ticks that dropped steps
        self.waits = 0               # lockstep: waits past command_timeout
        self.wait_s_max = 0.0        # lockstep: the longest wait for an answer, wall s
        self.clock_ticks = 0         # lockstep, topic-based: a state published again, no step


class _Exchange:
    """What both exchanges share: stamps, the binding, the counters, the round trip."""

    mode = ''

    def __init__(self, period_ns: int, command_timeout_s: float, stop_after_ns: int,
                 events: ExchangeEvents | None):
        if period_ns <= 0:
            raise ValueError(f'period_ns must be > 0, got {period_ns}')
        self.period_ns = int(period_ns)
        self.command_timeout_s = float(command_timeout_s)
        self.timeout_ns = stamps.stamp_ns(command_timeout_s)
        #: stamp at and after which the state answered is the last (0: never)
        self.stop_after_ns = int(stop_after_ns)
        self.events = events if events is not None else ExchangeEvents()
        self.counts = ExchangeCounts()
        #: the controller: id of the publisher whose commands are applied (None: none yet)
        self.controller: bytes | None = None
        self.controller_since_ns: int | None = None
        #: refused publishers (id -> refused valid commands), at most MAX_PUBLISHERS
        self.foreign_publishers: dict = {}
        #: node names of publishers, as the node found them in the graph (for the reports)
        self.names: dict = {}
        self.newest_ns: int | None = None    # stamp of the newest published state
        self.published_wall = 0.0            # steady s of its publication
        self.finished = False                # the newest state is the last (stop_after)
        self._offset_ns = 0                  # grows at each reset
        self.command_age = Histogram(AGE_BIN_NS, AGE_BINS)       # ns, per applied step
        self.round_trip = Histogram(WALL_BIN_NS, WALL_BINS)      # ns, state out -> answer in
        self._ring_stamp = [-1] * ROUND_TRIP_RING
        self._ring_wall = [0] * ROUND_TRIP_RING

    # -- stamps -------------------------------------------------------------------------------

    def state_stamp(self, t_s: float) -> int:
        """Return the stamp (ns) of the state at simulated time ``t_s`` (the one stamp rule)."""
        return self._offset_ns + stamps.stamp_ns(t_s)

    def reset(self) -> None:
        """Restart simulated time at 0 one period after the newest state (``/simulator/reset``)."""
        self._offset_ns = (self.newest_ns if self.newest_ns is not None else -self.period_ns) \
            + self.period_ns

    @property
    def started(self) -> bool:
        """Return whether a state was published."""
        return self.newest_ns is not None

    def published(self, stamp_ns: int, now_s: float) -> None:
        """Record that the state stamped ``stamp_ns`` was published at steady time ``now_s``."""
        if self.newest_ns is not None:
            self.counts.steps += 1
        self.newest_ns = stamp_ns
        self.published_wall = now_s
        slot = (stamp_ns // self.period_ns) % ROUND_TRIP_RING
        self._ring_stamp[slot] = stamp_ns
        self._ring_wall[slot] = wall_ns(now_s)
        stop = self.stop_after_ns
        # the last state (t >= stop_after, to a us of rounding) is still answered
        self.finished = stop > 0 and stamp_ns >= stop - 1000

    def _round_trip(self, stamp_ns: int, now_s: float) -> None:
        slot = (stamp_ns // self.period_ns) % ROUND_TRIP_RING
        if self._ring_stamp[slot] == stamp_ns:
            self.round_trip.add(wall_ns(now_s) - self._ring_wall[slot])

    # -- the controller -----------------------------------------------------------------------

    def name_publisher(self, publisher: bytes, node: str) -> None:
        """Remember the node name of a publisher (the node looks it up in the graph)."""
        if node and (publisher in self.names or len(self.names) < MAX_PUBLISHERS):
            self.names[publisher] = node

    @property
    def controller_node(self) -> str:
        """Return the node name of the controller ('' when none is bound or it is unnamed)."""
        return self.names.get(self.controller, '') if self.controller is not None else ''

    @property
    def foreign_nodes(self) -> list:
        """Return the node names (or publisher ids) of the refused publishers, sorted."""
        return sorted({self.names.get(p) or p.hex() for p in self.foreign_publishers})

    @property
    def duplicate_controller(self) -> bool:
        """Return whether a refused publisher's node has the controller's node name."""
        name = self.controller_node
        return bool(name) and any(self.names.get(p) == name for p in self.foreign_publishers)

    def _bind(self, publisher: bytes, stamp_ns: int) -> None:
        previous = self.controller
        self.controller = publisher
        self.controller_since_ns = stamp_ns
        self.foreign_publishers.pop(publisher, None)
        self.events.bound(publisher, previous, stamp_ns)

    def _foreign(self, publisher: bytes, stamp_ns: int) -> str:
        self.counts.foreign += 1
        known = self.foreign_publishers
        count = known.get(publisher)
        if count is None and len(known) < MAX_PUBLISHERS:
            known[publisher] = 1
            self.events.foreign(publisher, stamp_ns, True)
        else:
            if count is not None:
                known[publisher] = count + 1
            self.events.foreign(publisher, stamp_ns, False)
        return FOREIGN

    def _future(self, publisher: bytes, stamp_ns: int) -> str:
        self.counts.future += 1
        self.events.future(publisher, stamp_ns, stamp_ns - self.newest_ns)
        return FUTURE

    def _screen(self, publisher: bytes, torques) -> str | None:
        """Return REJECTED (malformed), EARLY (no state published yet) or None (judge it)."""
        if torques is None:
            self.counts.rejected += 1
            return REJECTED
        if self.newest_ns is None:
            self.counts.early += 1
            self.events.early(publisher)
            return EARLY
        return None

    # -- the report ---------------------------------------------------------------------------

    def summary(self) -> dict:
        """Return the exchange's counters and timings (ms) for the ``dodo exchange:`` line."""
        c = self.counts

        def ms(histogram, p=None):
            value = histogram.max if p is None else histogram.percentile(p)
            return None if value is None else value * 1e-6

        return {
            'mode': self.mode, 'steps': c.steps, 'zero_torque_steps': c.zero_torque_steps,
            'timeouts': c.timeouts, 'rejected': c.rejected, 'foreign': c.foreign,
            'late': c.late, 'future': c.future, 'early': c.early, 'unstamped': c.unstamped,
            'controller': self.controller_node or (
                self.controller.hex() if self.controller is not None else None),
            'foreign_nodes': ','.join(self.foreign_nodes) or None,
            'duplicate_controller': self.duplicate_controller,
            'waits': c.waits, 'wait_s_max': c.wait_s_max,
            'age_ms_p50': ms(self.command_age, 50), 'age_ms_p99': ms(self.command_age, 99),
            'age_ms_max': ms(self.command_age), 'stale_steps': c.stale_steps,
            'round_trip_ms_p50': ms(self.round_trip, 50),
            'round_trip_ms_p99': ms(self.round_trip, 99),
            'round_trip_ms_max': ms(self.round_trip),
            'overruns': c.overruns, 'tick_late_ms_p99': None, 'tick_late_ms_max': None,
            'clock_ticks': c.clock_ticks,
        }


class LockstepExchange(_Exchange):
    """
    Lockstep: each published state waits for the command stamped like it (module docs).

    Inputs:
        period_ns: control period, ns (the stamps of successive states differ by it).
        command_timeout_s: wall s after which a wait is warned about and counted.
        startup_timeout_s: the same for the very first state (the controller may still start).
        lost_timeout_s: wall s of waiting after which the controller is lost (inf: never).
        stop_after_ns: the stamp of the last state (0: no end).
        events: what the node is told (:class:`ExchangeEvents`).
        publisher_present: ``f(publisher id) -> bool``, whether the controller's publisher is
            still in the graph (asked every ``graph_look_s`` while a wait is past its warning).
        clock_tick_s: ros2_control's topic-based convention (> 0): the first state is stamped
            one period, and a state nothing was written for within this many wall s (after
            the first answer: ``command_timeout_s``) is published again one period later
            (module docs); 0: never.
    """

    mode = 'lockstep'

    def __init__(self, period_ns: int, *, command_timeout_s: float, startup_timeout_s: float,
                 lost_timeout_s: float = math.inf, stop_after_ns: int = 0,
                 events: ExchangeEvents | None = None,
                 publisher_present: Callable[[bytes], bool] | None = None,
                 graph_look_s: float = 0.2, clock_tick_s: float = 0.0):
        super().__init__(period_ns, command_timeout_s, stop_after_ns, events)
        self.startup_timeout_s = float(startup_timeout_s)
        self.lost_timeout_s = float(lost_timeout_s)
        self._publisher_present = publisher_present
        self._graph_look_s = graph_look_s
        self.awaiting = False        # a state is published, its answer pending
        self.answered_once = False   # the first state waits startup_timeout
        self.waiting_long = False    # this wait passed its warning time
        self._next_graph_look = 0.0
        self.lost_reason = ''
        self.clock_tick_s = float(clock_tick_s)
        if self.clock_tick_s > 0.0:
            self._offset_ns = self.period_ns     # ROS time 0: a clock that has not started
        self._again = False          # the next publication is the awaited state, one period on
        self._ticked_wall = 0.0      # steady s of the awaited state's newest publication
        self._write_seen = False     # the newest publication's write came (topic-based)
        self._previous_written = False   # the publication before the newest one had its write

    def published(self, stamp_ns: int, now_s: float) -> None:
        """Record a published state: it waits for its answer (a tick: the same state again)."""
        if self._again:
            # the awaited state one period later: no step, its wait goes on (module docs)
            self._again = False
            self.counts.clock_ticks += 1
            wall, steps = self.published_wall, self.counts.steps
            _Exchange.published(self, stamp_ns, now_s)
            self.published_wall, self.counts.steps = wall, steps
        else:
            _Exchange.published(self, stamp_ns, now_s)
        self._ticked_wall = now_s
        self._previous_written, self._write_seen = self._write_seen, False
        self.awaiting = True

    def command(self, stamp_ns: int, publisher: bytes, torques, now_s: float) -> str:
        """
        Judge a stamped command received at ``now_s`` (torques None: malformed).

        Returns :data:`ANSWER` (step with ``torques``), :data:`LAST` (it answers the last state:
        end the run) or why it is not applied.
        """
        screened = self._screen(publisher, torques)
        if screened is not None:
            return screened
        newest = self.newest_ns
        bound = self.controller
        if bound is not None and publisher != bound:
            return self._foreign(publisher, stamp_ns)
        if stamp_ns > newest:
            return self._future(publisher, stamp_ns)
        if stamp_ns != newest or not self.awaiting:
            if bound is None:
                return self._foreign(publisher, stamp_ns)
            self.counts.late += 1
            return LATE
        return self._answer(stamp_ns, publisher, now_s)

    def _answer(self, stamp_ns: int, publisher: bytes, now_s: float) -> str:
        """Take the command of ``publisher`` as the answer to the awaited state (``stamp_ns``)."""
        if self.controller is None:
            self._bind(publisher, stamp_ns)
        self._round_trip(stamp_ns, now_s)
        self.awaiting = False
        self.answered_once = True
        if self.waiting_long:
            self.waiting_long = False
            self.events.resumed(now_s - self.published_wall, stamp_ns)
        if self.finished:
            return LAST
        self.command_age.add(0)         # it answers the state it is applied to: age 0
        return ANSWER

    def topic_based(self, stamp_ns: int, publisher: bytes, torques, now_s: float) -> str:
        """
        Judge a ros2_control topic-based command (stamp = the hardware component's clock).

        The controller_manager writes once per period of /clock (module docs): its write for
        the awaited state t is stamped t, or t - period when the previous state's write came
        (its node's clock may not have this /clock yet). A valid write answers
        (:data:`ANSWER` / :data:`LAST`); a rejected one after the first answer returns
        :data:`TICK`: publish the awaited state again one period later (:meth:`tick`).
        """
        screened = self._screen(publisher, torques)
        newest = self.newest_ns
        if newest is None:              # early (or malformed before the first state)
            return screened
        bound = self.controller
        if bound is not None and publisher != bound:
            if screened is REJECTED:
                return REJECTED
            return self._foreign(publisher, stamp_ns)
        if stamp_ns > newest:
            if screened is REJECTED:
                return REJECTED
            return self._future(publisher, stamp_ns)
        written = self.awaiting and (
            stamp_ns == newest
            or (self._previous_written and stamp_ns == newest - self.period_ns))
        if screened is REJECTED:
            if written and self.answered_once:
                self._write_seen = True
                return TICK
            return REJECTED
        if not written:
            if bound is None:
                return self._foreign(publisher, stamp_ns)
            self.counts.late += 1
            return LATE
        self._write_seen = True
        return self._answer(newest, publisher, now_s)

    def tick_due(self, now_s: float) -> bool:
        """
        Return whether the awaited state is to be published again one period later.

        Topic-based convention only: nothing was written for it within ``clock_tick_s`` of its
        newest publication before the first answer (the controller_manager waits for /clock
        to start), ``command_timeout_s`` after it (a lost /clock or wake-up).
        """
        if self.clock_tick_s <= 0.0 or not self.awaiting or self._write_seen:
            return False
        after = self.command_timeout_s if self.answered_once else self.clock_tick_s
        return now_s - self._ticked_wall >= after

    def tick(self) -> None:
        """Make the next publication the awaited state one period later (no step)."""
        if not self.awaiting:
            raise RuntimeError('tick: no state awaits its answer')
        self._offset_ns += self.period_ns
        self._again = True

    def unstamped(self, publisher: bytes, torques, now_s: float) -> str:
        """Judge an unstamped command: lockstep pairs by stamp, so it never answers a state."""
        screened = self._screen(publisher, torques)
        if screened is not None:
            return screened
        self.counts.unstamped += 1
        return UNSTAMPED

    @property
    def warn_after_s(self) -> float:
        """Return the wall s after which the current wait is warned about."""
        return self.command_timeout_s if self.answered_once else self.startup_timeout_s

    def waiting_s(self, now_s: float) -> float:
        """Return how long the newest state has waited for its answer (0: not waiting)."""
        return now_s - self.published_wall if self.awaiting else 0.0

    def watch(self, now_s: float) -> str | None:
        """
        While a state waits for its answer: None, :data:`WAITING` or :data:`LOST`.

        Simulated time never moves here.
        """
        if not self.awaiting:
            return None
        c = self.counts
        silent = now_s - self.published_wall
        if silent > c.wait_s_max:
            c.wait_s_max = silent
        if silent <= self.warn_after_s:
            return None
        if not self.waiting_long:
            self.waiting_long = True
            c.waits += 1
            self.events.paused(silent)
        if silent > self.lost_timeout_s:
            self.lost_reason = (f'no answer for {silent:.1f} s (controller_lost_timeout = '
                                f'{self.lost_timeout_s:g} s)')
        elif (self.controller is not None and self._publisher_present is not None
              and now_s >= self._next_graph_look):
            self._next_graph_look = now_s + self._graph_look_s
            if not self._publisher_present(self.controller):
                self.lost_reason = 'its publisher of commands left the graph'
        if self.lost_reason:
            self.awaiting = False
            return LOST
        return WAITING


class RealtimeExchange(_Exchange):
    """
    Realtime: the newest command is held and applied at the wall-clock rate (module docs).

    Inputs:
        period_ns: control period, ns.
        command_timeout_s: a held command older than this (by stamp) gives zero torque; the
            binding window (a command stamped like a state published at most this long ago is
            current) and the silence after which another publisher may take over.
        max_command_age_s: a step applying a command older than this is stale.
        stop_after_ns: the stamp of the last state (0: no end).
        catch_up_s: a late tick makes up at most this much of steps (the rest: an overrun).
        written_ahead_ns: ros2_control convention only: how far past the newest state a
            controller_manager's clock may be (0 on the simulator's /clock; a driver on wall
            time allows its command_timeout).
        takeover: after the controller has sent nothing applicable for command_timeout, the
            next publisher with an applicable command is bound in its place (the simulator);
            False (the hardware driver): the first controller stays the only one — strays
            never drive motors, also while the controller is silent.
        same_node: ``f(publisher id, publisher id) -> bool``, whether two publishers belong to
            one node (the stamped and unstamped commands of one controller); default: the
            same id.
        events: what the node is told (:class:`ExchangeEvents`).
        zero: the zero command (one 0.0 per actuated joint).
    """

    mode = 'realtime'

    def __init__(self, period_ns: int, *, command_timeout_s: float, max_command_age_s: float,
                 zero: tuple, stop_after_ns: int = 0, catch_up_s: float = 0.01,
                 written_ahead_ns: int = 0, takeover: bool = True,
                 same_node: Callable[[bytes, bytes], bool] | None = None,
                 events: ExchangeEvents | None = None):
        super().__init__(period_ns, command_timeout_s, stop_after_ns, events)
        self.takeover = takeover
        self._same_node = same_node if same_node is not None else bytes.__eq__
        self.period_s = self.period_ns / stamps.NS_PER_S
        self.max_age_ns = stamps.stamp_ns(max_command_age_s)
        self.written_ahead_ns = int(written_ahead_ns)
        self.max_catch_up = max(1, int(round(catch_up_s / self.period_s)))
        self.zero = tuple(zero)
        self.held = self.zero              # the command applied at each step
        self.held_stamp_ns: int | None = None    # the state it answers (its age is from it)
        self._held_written_ns: int | None = None     # its own stamp (the order of commands)
        self.stamped_wall = -math.inf      # steady s of the last applied stamped command
        self.unstamped_source: bytes | None = None
        self.unstamped_wall = -math.inf    # steady s of the last applied unstamped command
        self.silent = False                # zero torque stands in (no fresh command)
        self.start_s: float | None = None
        self.ticks = 0                     # steps taken (or dropped) since start
        self.tick_lateness = Histogram(WALL_BIN_NS, WALL_BINS)   # ns, timer ticks

    # -- commands -------------------------------------------------------------------------------

    def command(self, stamp_ns: int, publisher: bytes, torques, now_s: float) -> str:
        """Judge a ``/joint_commands`` JointState (stamped like the state it answers)."""
        return self._stamped(stamp_ns, publisher, torques, now_s, 0, True)

    def topic_based(self, stamp_ns: int, publisher: bytes, torques, now_s: float) -> str:
        """
        Judge a ros2_control topic-based command (stamp = when the controller_manager wrote it).

        Several updates in one period carry the same clock: the newest of them is held.
        """
        return self._stamped(stamp_ns, publisher, torques, now_s, self.written_ahead_ns, False)

    def _stamped(self, stamp_ns, publisher, torques, now_s, ahead_ns, strictly_newer) -> str:
        screened = self._screen(publisher, torques)
        if screened is not None:
            return screened
        newest = self.newest_ns
        bound = self.controller
        if publisher != bound:
            if bound is not None and (not self.takeover
                                      or now_s - self.stamped_wall <= self.command_timeout_s):
                return self._foreign(publisher, stamp_ns)        # the controller is active
            source = self.unstamped_source
            if (not self.takeover and source is not None
                    and not self._same_node(publisher, source)):
                return self._foreign(publisher, stamp_ns)        # another node drives
            if stamp_ns > newest + ahead_ns:
                return self._future(publisher, stamp_ns)
            if newest - stamp_ns > self.timeout_ns:
                return self._foreign(publisher, stamp_ns)        # answers no current state
            self._bind(publisher, stamp_ns)
            self._held_written_ns = None
        elif stamp_ns > newest + ahead_ns:
            return self._future(publisher, stamp_ns)
        held = self._held_written_ns
        if held is not None and (stamp_ns <= held if strictly_newer else stamp_ns < held):
            self.counts.late += 1
            return LATE
        self._round_trip(stamp_ns, now_s)
        self.held = torques
        self._held_written_ns = stamp_ns
        # a controller_manager's clock may be ahead of the newest state (written_ahead_ns): the
        # command answers that state, its age is never negative
        self.held_stamp_ns = stamp_ns if stamp_ns <= newest else newest
        self.stamped_wall = now_s
        return HELD

    def unstamped(self, publisher: bytes, torques, now_s: float) -> str:
        """
        Judge an unstamped ``/effort_controller/commands`` command.

        Held (taken to answer the newest state) only without a stamped source for
        command_timeout, and only from one publisher.
        """
        screened = self._screen(publisher, torques)
        if screened is not None:
            return screened
        newest = self.newest_ns
        if now_s - self.stamped_wall <= self.command_timeout_s:
            self.counts.unstamped += 1     # a stamped source answers: it wins
            return UNSTAMPED
        bound = self.controller
        if (not self.takeover and bound is not None
                and not self._same_node(publisher, bound)):
            return self._foreign(publisher, newest)      # only the controller's node drives
        source = self.unstamped_source
        if publisher != source:
            if source is not None and (not self.takeover
                                       or now_s - self.unstamped_wall <= self.command_timeout_s):
                return self._foreign(publisher, newest)
            self.unstamped_source = publisher
            self.foreign_publishers.pop(publisher, None)
        self.held, self.held_stamp_ns = torques, newest
        self.unstamped_wall = now_s
        return HELD

    def active(self, now_s: float) -> bool:
        """Return whether a command source answered within command_timeout."""
        return (now_s - self.stamped_wall <= self.command_timeout_s
                or now_s - self.unstamped_wall <= self.command_timeout_s)

    # -- stepping (the simulator) ---------------------------------------------------------------

    def start(self, now_s: float) -> None:
        """Start the wall clock the steps follow."""
        self.start_s = now_s
        self.ticks = 0

    def due(self, now_s: float) -> int:
        """
        Return how many steps a timer tick at ``now_s`` owes.

        A late tick makes up the steps due (at most ``max_catch_up``; more are dropped and counted
        as an overrun) so that simulated time follows wall time.
        """
        elapsed = now_s - self.start_s
        period = self.period_s
        due = int(elapsed / period + 0.5)
        late = elapsed - self.ticks * period
        self.tick_lateness.add(wall_ns(late) if late > 0.0 else 0)
        behind = due - self.ticks
        if behind > self.max_catch_up:
            self.counts.overruns += 1
            self.ticks = due - self.max_catch_up
            behind = self.max_catch_up
        if behind <= 0:
            return 0
        self.ticks += behind
        return behind

    def next_command(self, now_s: float) -> tuple:
        """Return the command of the step that starts from the newest state (age accounted)."""
        held_stamp = self.held_stamp_ns
        age = self.newest_ns - held_stamp if held_stamp is not None else None
        c = self.counts
        if age is None or age > self.timeout_ns:
            c.zero_torque_steps += 1
            if not self.silent and (age is not None
                                    or now_s - self.start_s > self.command_timeout_s):
                c.timeouts += 1
                self.silent = True
                self.events.zero_torque()
            return self.zero
        if self.silent:
            self.silent = False
            self.events.commands_back()
        self.command_age.add(age)
        if age > self.max_age_ns:
            c.stale_steps += 1
            self.events.stale(age, c.stale_steps)
        return self.held

    def summary(self) -> dict:
        """Return the counters, plus the timer ticks' lateness (ms)."""
        out = _Exchange.summary(self)
        late = self.tick_lateness
        p99 = late.percentile(99)
        out['tick_late_ms_p99'] = None if p99 is None else p99 * 1e-6
        out['tick_late_ms_max'] = None if late.max is None else late.max * 1e-6
        return out


__all__ = ['ANSWER', 'LAST', 'HELD', 'REJECTED', 'EARLY', 'FOREIGN', 'FUTURE', 'LATE',
           'UNSTAMPED', 'TICK', 'WAITING', 'LOST', 'FAR_AHEAD_NS', 'ExchangeEvents',
           'ExchangeCounts', 'LockstepExchange', 'RealtimeExchange']
