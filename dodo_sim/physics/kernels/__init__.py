# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
The compiled (numba) kernels of the physics and of the controllers' per-tick terms.

One job a module, lowest first (each imports only those above it):

* :mod:`.jit` — numba or not, the ``njit(cache=True)`` decorator, the cache's staleness guard;
* :mod:`.linalg` — Cholesky and LU factors and solves on small dense matrices;
* :mod:`.kinematics` — the one kinematics pass (joint frames, velocities, velocity-product
  accelerations) and point jacobians / drifts of points fixed to a body;
* :mod:`.rigid_body` — the mass matrix and the bias forces from that pass;
* :mod:`.buffers` — the packed model (:class:`.buffers.PackedModel`) and the two flat buffers
  every kernel reads;
* :mod:`.ncp` — the planar NCP solve (:mod:`dodo_sim.physics.solver` on arrays);
  :mod:`.contact_3d` — the exact solve of one 3-D contact; :mod:`.ncp_general` — the NCP
  iteration for any block sizes (1, 2, 3), which the Python solver calls;
  :mod:`.correction` — the time-stepping position correction of any model;
* :mod:`.step` — the Moreau-Jean step; :mod:`.event` — the event integrator's evaluation and
  RK4 step; :mod:`.point_terms` — a controller's rigid-body terms in one call.

:mod:`dodo_sim.physics.fast` is their entry (which models qualify, warm-up). docs/physics.md,
"Speed".
"""
