# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
The Kneed Walker (As & Mailhot 2018; docs/walker.md).

* :mod:`.controller` — :class:`WalkerController` and :class:`WalkerConfig`;
* :mod:`.pulses`, :mod:`.phase` — its torque pulses and step-phase detector;
* :mod:`.outcome` — fall detection, step counting, ``walk()``; :mod:`.monitor` — the walk judged
  online in the controller node.

``dodo_control.walker.WalkerController`` / ``WalkerConfig`` stay importable from here: the
controller classes are public API (issue 18); everything else is imported from its module.
"""
from .controller import WalkerConfig, WalkerController

__all__ = ['WalkerController', 'WalkerConfig']
