# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
The SLIP hopper's parts (Hutter et al. 2010; docs/control.md).

Its controller (the tick) is :mod:`dodo_control.controller`, the public entry point.

* :mod:`.template` — the SLIP template: leg force, stance flow, apex return map, deadbeat angle;
* :mod:`.dynamics` — the controller's own rigid-body terms in the planar hopper's task frame;
  :mod:`.boom` — the boom-mounted leg's task frame; :mod:`.task_frame` — which one a robot gets;
* :mod:`.stance`, :mod:`.flight`, :mod:`.phase` — the stance torque law, the flight policies,
  the stance / flight phase machine; :mod:`.bezier` — Ding & Ramos' Bezier stance policy.
* :mod:`.config` — the controller's parameters; :mod:`.telemetry` — its snapshot after a tick;
  :mod:`.hop_memory` — what it keeps from hop to hop; :mod:`.apex_range` — the feasible apex
  heights; :mod:`.posture_table` — touchdown posture quantities over the angle of attack.
"""
