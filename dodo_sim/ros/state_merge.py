# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
The controller side of the exchange: joint states merged by name, paired with contacts by stamp.

No rclpy: the controller node feeds it what its raw subscriptions read
(:mod:`dodo_sim.ros.raw_messages`), and any other client — a user's rclpy node answering the
simulator (issue 28), a test — can feed it decoded messages the same way::

    merge = StateMerge(joint_names, n_contacts=1, pairing='auto')
    merge.joint_state(stamp_ns, names, position, velocity)    # each /joint_states message
    merge.contact(0, stamp_ns, (fx, fy, fz))                 # each /<frame>_contact message
    ready = merge.take()        # (stamp_ns, q, v, contacts) once the state is complete and
                                # paired, else None (wait for more input)

The rules (docs/ros_contract.md, "Timing and the command exchange"):

* A state is *complete* once every joint has a new position and velocity since the last one
  (a message naming exactly the joints, in order — the simulator's — is complete by itself);
  its stamp is the newest stamp merged into it. A newer complete state replaces a pending one
  unanswered (``skipped``): the controller acts on fresh state only.
* ``pairing``: ``stamp`` waits for the contact message of every frame stamped like the state
  (simulation: deterministic, whatever the order of arrival); ``latest`` takes the newest
  contact of every frame (a driver whose force sensor has its own clock); ``auto`` decides
  ``stamp`` at the first state whose stamp every frame's contacts carry, and ``latest`` after
  :data:`AUTO_PAIRING_STATES` complete states were replaced without finding theirs
  (``on_pairing(mode)`` is called once with the decision).
* The contacts come as one ``(fx, fy, fz)`` row per frame (world axes, N), an array of shape
  (n_contacts, 3); ``q`` and ``v`` are copies (the caller may keep them).
"""
from __future__ import annotations

import collections
from typing import Callable, Sequence

from dodo_sim.ros.node_config import CONTACT_PAIRINGS
import numpy as np

#: Complete joint states that found no contact message with their stamp before ``auto`` contact
#: pairing decides that the contact sensor has its own clock and takes the newest contact.
AUTO_PAIRING_STATES = 3
#: Contact messages remembered per frame (to find the one stamped like a joint state).
CONTACT_HISTORY = 8


class StateMerge:
    """
    Merge joint states by name and pair each complete state with its contact forces.

    Inputs:
        joint_names: the joints of the controller's model, in the order of q and v.
        n_contacts: contact frames (their index is the ``index`` of :meth:`contact`).
        pairing: 'auto', 'stamp' or 'latest' (module docs).
        on_pairing: called once with 'stamp' or 'latest' when ``auto`` decides.
    """

    def __init__(self, joint_names: Sequence[str], n_contacts: int, pairing: str = 'auto', *,
                 on_pairing: Callable[[str], None] | None = None,
                 history: int = CONTACT_HISTORY, auto_states: int = AUTO_PAIRING_STATES):
        if pairing not in CONTACT_PAIRINGS:
            raise ValueError(f'contact pairing must be one of {CONTACT_PAIRINGS}, got '
                             f'{pairing!r}')
        self.joint_names = list(joint_names)
        self._joint_tuple = tuple(self.joint_names)
        self._index = {name: i for i, name in enumerate(self.joint_names)}
        self.q = np.zeros(len(self.joint_names))
        self.v = np.zeros(len(self.joint_names))
        self.fresh: set = set()             # joints merged since the last complete state
        self.contacts = [collections.deque(maxlen=history) for _ in range(n_contacts)]
        self.requested = pairing
        #: True: by stamp, False: the newest contact, None: auto, not decided yet
        self.paired = {'stamp': True, 'latest': False}.get(pairing)
        self._on_pairing = on_pairing
        self._auto_states = auto_states
        self._unpaired_states = 0
        self.pending = False                # a complete state waits for its contacts / answer
        self.stamp_ns = -1                  # stamp of the pending complete state
        self._partial_ns = -1               # newest stamp merged since the last complete state
        self.states_received = 0            # joint state messages merged
        self.skipped = 0                    # complete states replaced by a newer one unanswered

    @property
    def pairing(self) -> str:
        """Return the pairing in use: 'stamp', 'latest' or 'undecided' (auto, so far)."""
        return {True: 'stamp', False: 'latest', None: 'undecided'}[self.paired]

    def joint_state(self, stamp_ns: int, names: Sequence[str], position, velocity) -> bool:
        """
        Merge one joint state message; return False when it is malformed (ignored).

        Malformed: not one position and one velocity per name.
        """
        if len(position) != len(names) or len(velocity) != len(names):
            return False
        self.states_received += 1
        if names == self.joint_names or names == self._joint_tuple:     # one source of all
            self.q[:] = position
            self.v[:] = velocity
            if stamp_ns > self._partial_ns:
                self._partial_ns = stamp_ns
        else:
            index, fresh = self._index, self.fresh
            used = False
            for i, name in enumerate(names):
                j = index.get(name)
                if j is not None:
                    self.q[j] = position[i]
                    self.v[j] = velocity[i]
                    fresh.add(name)
                    used = True
            if not used:
                return True
            if stamp_ns > self._partial_ns:
                self._partial_ns = stamp_ns
            if len(fresh) < len(index):
                return True
            fresh.clear()
        if self.pending:
            self.skipped += 1                  # a newer complete state: the older one is dropped
            if self.paired is None and all(self.contacts):
                self._unpaired_states += 1
                if self._unpaired_states >= self._auto_states:
                    self._decide(False)
        self.stamp_ns = self._partial_ns
        self._partial_ns = -1
        self.pending = True
        return True

    def contact(self, index: int, stamp_ns: int, force) -> None:
        """Add a contact message of frame ``index``: its stamp and world force (fx, fy, fz), N."""
        self.contacts[index].append((stamp_ns, force))

    def take(self):
        """
        Return ``(stamp_ns, q, v, contacts)`` of the pending state once it has its contacts.

        None while there is no pending state or its contacts have not come; taking it ends
        the pending state (the next complete state is the next one).
        """
        if not self.pending:
            return None
        contacts = self._contact_rows()
        if contacts is None:
            return None
        self.pending = False
        return self.stamp_ns, self.q.copy(), self.v.copy(), contacts

    def _contact_rows(self):
        rows = []
        if self.paired is not False:
            stamp = self.stamp_ns
            for history in self.contacts:
                for ns, force in reversed(history):
                    if ns == stamp:
                        rows.append(force)
                        break
                else:
                    return None
            if self.paired is None:
                self._decide(True)
        else:
            if not all(self.contacts):
                return None
            rows = [history[-1][1] for history in self.contacts]
        return np.array(rows)

    def _decide(self, by_stamp: bool) -> None:
        self.paired = by_stamp
        if self._on_pairing is not None:
            self._on_pairing('stamp' if by_stamp else 'latest')

    # -- what it waits for (the controller's reports) -----------------------------------------

    def missing_joints(self) -> list:
        """Return the joints not merged since the last complete state (while some came)."""
        if self.pending or not self.fresh:
            return []
        return [n for n in self.joint_names if n not in self.fresh]

    def newest_contact_stamps(self) -> list:
        """Return the stamp (ns) of each frame's newest contact message (None: none yet)."""
        return [history[-1][0] if history else None for history in self.contacts]


__all__ = ['AUTO_PAIRING_STATES', 'CONTACT_HISTORY', 'StateMerge']
