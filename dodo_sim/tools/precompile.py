# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
Compile the numba kernels once, at install time, so no node compiles on its start-up path.

::

    .venv/bin/python -m dodo_sim.tools.precompile        # the README's install line runs it

The kernels (``dodo_sim.physics.kernels``: the time-stepping step, the event integrator's
evaluation, the controller's point terms, the block NCP iteration with the 3-D contact solve,
the position correction; ``dodo_control.slip.tick``: the SLIP controller's tick) are
``njit(cache=True)``: compiled at their first call
and written to numba's cache (``__pycache__`` next to the source, or ``NUMBA_CACHE_DIR``). A first
call on a fresh install used to be the simulator node's constructor: ~30 s idle, 146 s measured
on a loaded 2-core machine — long enough for a recorder to give up on the node's parameters.
This runs every kernel the shipped robots, both integrators and the controllers use, with the
argument types the nodes use, so their first call loads the cache (~1 s). It prints how many
kernels it compiled (0: the cache was complete) and the wall time.

:func:`compile_events` counts numba compilations in a block of code (the start-up test uses it).
"""
from __future__ import annotations

import contextlib
import sys
import time

from dodo_sim.ros.runtime import EXIT_INTERRUPTED, EXIT_TERMINATED


@contextlib.contextmanager
def compile_events():
    """Yield a list that collects the name of every function numba compiles inside the block."""
    try:
        from numba.core import event
    except ImportError:               # no numba: nothing is ever compiled
        yield []
        return
    compiled: list = []

    class _Listener(event.Listener):

        def on_start(self, ev):
            compiled.append(str(ev.data.get('dispatcher', ev.data)))

        def on_end(self, ev):
            pass

    listener = _Listener()
    event.register('numba:compile', listener)
    try:
        yield compiled
    finally:
        event.unregister('numba:compile', listener)


def warm_up() -> None:
    """Build and step every shipped robot with both integrators and update its controller."""
    from dodo_control.registry import controller_entry
    from dodo_control.slip import tick as slip_tick
    from dodo_sim.paths import default_urdf_path
    from dodo_sim.physics.kernels import correction, ncp_general
    from dodo_sim.simulator import SimConfig, Simulator
    import numpy as np
    ncp_general.warm_up()     # the 3-D block NCP iteration (no shipped robot solves one)
    correction.warm_up()      # the position correction of more than one row
    slip_tick.warm_up()       # the SLIP controller's compiled tick (every entry)
    urdf_dir = default_urdf_path().parent
    robots = (('hopper.urdf.xacro', 'slip_hopper', {}),
              ('boom_leg.urdf.xacro', 'slip_hopper', None),
              ('kneed_walker.urdf.xacro', 'kneed_walker', None))
    for urdf, controller, _ in robots:
        path = urdf_dir / urdf
        if not path.is_file():
            continue
        for integrator in ('timestepping', 'event'):
            try:
                sim = Simulator(path, SimConfig(integrator=integrator))
            except ValueError:        # a robot whose defaults need its params file
                continue
            zero = np.zeros(len(sim.actuated_joint_names))
            for _ in range(3):
                sim.step(zero)
        try:
            entry = controller_entry(controller)
            ctrl = entry.build(sim.leg.urdf_xml, entry.config_class()())
        except (ValueError, AttributeError):
            continue
        state = sim.state
        forces = np.asarray(state.contact_forces)
        force = forces[0, [0, 2]] if controller == 'slip_hopper' else forces
        try:
            ctrl.update(state.t, state.q.copy(), state.v.copy(), force)
        except (ValueError, IndexError):
            continue


#: The option that runs the compilation in this process (the child :func:`main` starts).
IN_THIS_PROCESS = '--in-this-process'


class _Terminated(Exception):
    """SIGTERM, raised in the main thread."""


def main(argv=None) -> int:
    """
    Compile in a child process and wait; Ctrl-C (or SIGTERM) ends it at once.

    numba compiles in LLVM, where Python sees a signal only seconds later and then unwinds a
    200-line traceback; the child is in its own session (a terminal's Ctrl-C reaches only this
    process), is killed on SIGINT/SIGTERM, and one line says what is kept: numba writes each
    kernel's cache file whole, so the kernels compiled before stay cached.
    """
    argv = list(sys.argv[1:] if argv is None else argv)
    if IN_THIS_PROCESS in argv:
        return _compile()
    import signal
    import subprocess

    def terminated(signum, frame):
        raise _Terminated
    previous = signal.signal(signal.SIGTERM, terminated)
    child = subprocess.Popen([sys.executable, '-m', 'dodo_sim.tools.precompile', IN_THIS_PROCESS],
                             start_new_session=True)
    try:
        return child.wait()
    except (KeyboardInterrupt, _Terminated) as exc:
        child.kill()
        child.wait()
        interrupted = isinstance(exc, KeyboardInterrupt)
        print(f'dodo precompile: {"interrupted" if interrupted else "terminated"}; the kernels '
              f'compiled so far stay in the numba cache, the others compile at their first use '
              f'(run it again to finish)', file=sys.stderr, flush=True)
        return EXIT_INTERRUPTED if interrupted else EXIT_TERMINATED
    finally:
        signal.signal(signal.SIGTERM, previous)


def _compile() -> int:
    started = time.monotonic()
    with compile_events() as compiled:
        warm_up()
    print(f'dodo precompile: {len(compiled)} kernel(s) compiled into the numba cache in '
          f'{time.monotonic() - started:.1f} s', flush=True)
    return 0


if __name__ == '__main__':
    sys.exit(main())
