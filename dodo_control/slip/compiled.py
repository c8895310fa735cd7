# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
The decorators of the SLIP package's compiled functions, with the package's numba cache guard.

The control tick (:mod:`.tick`) compiles functions of this package (the laws of :mod:`.template`,
:mod:`.flight`, :mod:`.stance`, :mod:`.phase`) and calls the simulator's compiled point terms
(``dodo_sim.physics.kernels``). numba checks a cached function only against its own source file
(docs of :mod:`dodo_sim.physics.kernels.jit`), so the cache of this folder is dropped whenever a
module here or a kernel module changed; importing this module does that, before any function of
the package is loaded from the cache.
"""
from __future__ import annotations

from pathlib import Path

from dodo_sim.physics.kernels.jit import compiled, compiled_inline, drop_stale_cache, KERNELS_DIR
from dodo_sim.physics.kernels.jit import njit

#: numba is installed: the tick runs compiled (else the same functions run as Python)
AVAILABLE = njit is not None

if AVAILABLE:
    drop_stale_cache(Path(__file__).resolve().parent, depends_on=(KERNELS_DIR,))

__all__ = ['AVAILABLE', 'compiled', 'compiled_inline']
