# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
The simulator's events on ``simulator/events``: what changed in the simulation, at which stamp.

No rclpy. One record per event, a JSON object in a std_msgs/String (reliable, transient local,
``contract.EVENTS_DEPTH`` kept for late joiners; recorded in bags), written by the simulator
(:mod:`dodo_sim.ros.sim_control`) and read by the controller node, ``dodo replay`` and anyone
(docs/simulation_interfaces.md, "What a controller is told")::

    {"seq": 4, "stamp_ns": 5003000000, "episode": 2, "event": "reset",
     "scope": ["time", "state", "spawned"]}

* ``seq``: 1, 2, ... per simulator; ``episode``: 0 at start, +1 at every event that puts the
  robot in a state no step led to (:data:`EPISODE_EVENTS`: ``reset``, ``entity_state``,
  ``joint_state``);
* ``stamp_ns``: an episode event's first state (published right after the event, one control
  period after the state before it); any other event's newest state, the state the next step
  starts from (``parameters``: the first step with the new values; ``paused``, ``playing``,
  ``stopped``, ``stepping``, ``quitting``); None before the first state;
* more keys per event: ``scope`` (reset), ``entity`` (entity_state), ``joints``
  (joint_state), ``values`` (parameters: the new values), ``steps`` (stepping), ``cause`` (the
  service that asked for it).

A controller that keeps memory across states (a hop history, a step phase) starts afresh
before it answers the first state of a new episode: :class:`EpisodeFollower` says when.
"""
from __future__ import annotations

import json

#: Events that start a new episode: the robot's state did not come from a step.
EPISODE_EVENTS = ('reset', 'entity_state', 'joint_state')
#: Longest record read, characters (the topic is open to any publisher: bounded).
MAX_RECORD_CHARS = 65536


def encode(record: dict) -> str:
    """Return the JSON text of an event record."""
    return json.dumps(record, sort_keys=True, allow_nan=False)


def decode(text: str) -> dict | None:
    """Return the record of ``text``, or None when it is not one (too long, not JSON, no seq)."""
    if not isinstance(text, str) or len(text) > MAX_RECORD_CHARS:
        return None
    try:
        record = json.loads(text)
    except ValueError:
        return None
    if not isinstance(record, dict) or not isinstance(record.get('event'), str):
        return None
    for key in ('seq', 'episode'):
        if not isinstance(record.get(key), int) or isinstance(record.get(key), bool):
            return None
    stamp = record.get('stamp_ns')
    if stamp is not None and (not isinstance(stamp, int) or isinstance(stamp, bool)):
        return None
    return record


class EpisodeFollower:
    """
    Where a controller's episodes begin, from the simulator's events.

    :meth:`event` takes each record as it comes; before answering the state stamped ``ns`` the
    controller asks :meth:`starts` whether a new episode begins at or before it (then it starts
    afresh). The first state it answers starts nothing (a fresh controller): it joins the
    episode announced for it.
    """

    def __init__(self):
        self.episode: int | None = None     # the episode of the last answered state
        self._first_ns: int | None = None   # the first state answered
        self._announced: list = []          # (stamp_ns, episode) not yet reached

    @property
    def pending(self) -> bool:
        """Tell whether an announced episode has not been reached yet (a cheap check)."""
        return bool(self._announced)

    def event(self, record: dict | None) -> None:
        """Take one decoded record (None, or any other event, is ignored)."""
        if (record is None or record.get('event') not in EPISODE_EVENTS
                or record.get('stamp_ns') is None):
            return
        if self.episode is not None and record['episode'] <= self.episode:
            return      # an old one (the transient-local history)
        self._announced.append((record['stamp_ns'], record['episode']))

    def starts(self, ns: int) -> bool:
        """Return whether the state stamped ``ns`` is answered in a new episode (start afresh)."""
        if not self._announced and self.episode is not None:
            return False                # every state but an episode's first: nothing to do
        if self._first_ns is None:
            self._first_ns = ns
        # an episode that began before the first state answered needs no restart: the
        # controller is fresh (a late joiner taking the transient-local history)
        joined = [e for s, e in self._announced if s <= self._first_ns]
        reached = [e for s, e in self._announced if self._first_ns < s <= ns]
        self._announced = [(s, e) for s, e in self._announced if s > ns]
        current = max([self.episode or 0] + joined)
        if self.episode is None or joined:
            self.episode = current
        if reached and max(reached) > self.episode:
            self.episode = max(reached)
            return True
        return False


__all__ = ['EPISODE_EVENTS', 'EpisodeFollower', 'MAX_RECORD_CHARS', 'decode', 'encode']
