# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
The compiled kernels' cache guard (dodo_sim/physics/kernels/jit.py).

numba checks a cached kernel only against its own source file (numba issue #1833), so an edit of
a kernel module another kernel calls must drop the package's cache; an unchanged tree must keep it.
"""
from dodo_sim.physics.kernels.jit import drop_stale_cache, source_fingerprint


def _kernel_tree(tmp_path):
    (tmp_path / 'kinematics.py').write_text('def placements():\n    return 1\n')
    (tmp_path / 'step.py').write_text('from .kinematics import placements\n')
    cache = tmp_path / '__pycache__'
    cache.mkdir()
    for name in ('step.step-1.py311.nbi', 'step.step-1.py311.1.nbc'):
        (cache / name).write_bytes(b'compiled')
    return cache


def test_an_edit_of_a_called_kernel_module_drops_every_cached_kernel(tmp_path):
    cache = _kernel_tree(tmp_path)
    drop_stale_cache(tmp_path)                      # first run: the stamp is written
    for name in ('step.step-1.py311.nbi', 'step.step-1.py311.1.nbc'):
        (cache / name).write_bytes(b'compiled')     # numba caches the kernels again
    assert not drop_stale_cache(tmp_path)           # unchanged sources: the cache stays
    assert sorted(p.name for p in cache.glob('*.nb*')) == ['step.step-1.py311.1.nbc',
                                                           'step.step-1.py311.nbi']
    (tmp_path / 'kinematics.py').write_text('def placements():\n    return 2\n')
    assert drop_stale_cache(tmp_path)               # the callee changed: step's cache is stale
    assert list(cache.glob('*.nb*')) == []
    assert (cache / 'kernel-sources.sha256').read_text() == source_fingerprint(tmp_path)
