# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
The kernels' decorator: ``numba.njit(cache=True)``, or the plain function without numba.

It also has :func:`c_contiguous`, the array layout the kernels called from Python are compiled for.

numba's on-disk cache (``__pycache__`` next to each module) checks only the source file of the
function it caches, not the files of the kernels that function calls (numba docs, "Cache
invalidation"; numba issue #1833): a kernel split over several modules would load a stale
compilation after an edit of a module it calls. So this module fingerprints every kernel module's
source and, when the fingerprint changed since the cache was written, drops the package's cached
kernels before any is loaded (they are compiled again at their first call, or by
``python -m dodo_sim.tools.precompile``). An installed package changes all its files at once, so
this only matters in a working tree, where ``__pycache__`` is writable.
"""
from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np

try:
    from numba import njit
except ImportError:  # the generic step runs without numba
    njit = None

_PACKAGE_DIR = Path(__file__).resolve().parent
#: the kernels' folder (a package compiling functions that call them depends on it)
KERNELS_DIR = _PACKAGE_DIR
_FINGERPRINT_FILE = 'kernel-sources.sha256'


def compiled(function):
    """Return ``function`` compiled with numba (cached on disk), or as it is without numba."""
    return function if njit is None else njit(cache=True, fastmath=False)(function)


def compiled_inline(function):
    """
    Return ``function`` compiled to be inlined into its callers (numba ``inline='always'``).

    For the small helpers that return tuples of array views or scalars (buffer unpacking, the
    workspace, a point's offset and drift, the kinematics pass): as calls they cost ~10 % of a
    step (side by side with the single-file kernels: 1.12x before inlining, 0.95-1.04x after).
    """
    if njit is None:
        return function
    return njit(cache=True, fastmath=False, inline='always')(function)


def c_contiguous(array):
    """Return ``array`` as a C-contiguous float64 array: the signature the kernels compile for."""
    if array.dtype == np.float64 and array.flags.c_contiguous:
        return array
    return np.ascontiguousarray(array, dtype=np.float64)


def source_fingerprint(package_dir: Path = _PACKAGE_DIR, depends_on=()) -> str:
    """
    Return the SHA-256 of the kernel modules' sources (file names and contents, sorted).

    ``depends_on``: further folders whose modules the package's kernels call (compiled into them),
    fingerprinted after it.
    """
    digest = hashlib.sha256()
    for folder in (package_dir, *depends_on):
        for path in sorted(Path(folder).glob('*.py')):
            digest.update(path.name.encode())
            digest.update(path.read_bytes())
    return digest.hexdigest()


def drop_stale_cache(package_dir: Path = _PACKAGE_DIR, depends_on=()) -> bool:
    """
    Delete the package's numba cache files if the kernel sources changed since they were written.

    The sources are the package's modules and those of the folders in ``depends_on`` (a package
    whose compiled functions call this package's kernels lists this folder there). Returns True
    when it deleted them. A cache folder that cannot be written is left alone (numba then caches
    elsewhere, keyed by each installed file's own stamp).
    """
    cache_dir = package_dir / '__pycache__'
    stamp = cache_dir / _FINGERPRINT_FILE
    fingerprint = source_fingerprint(package_dir, depends_on)
    try:
        if stamp.read_text() == fingerprint:
            return False
    except OSError:
        pass                      # no stamp yet: a fresh tree, or a cache from before the guard
    try:
        cache_dir.mkdir(exist_ok=True)
        dropped = False
        for cached in (*cache_dir.glob('*.nbi'), *cache_dir.glob('*.nbc')):
            cached.unlink(missing_ok=True)
            dropped = True
        stamp.write_text(fingerprint)
    except OSError:
        return False
    return dropped


# before any kernel module defines (and later loads) a cached kernel
if njit is not None:
    drop_stale_cache()
