"""Figures of a ``dodo walk`` bag (any robot with several contact frames; no rclpy).

``dodo walk`` writes them after a completed run (unless ``--no-plots``); by hand::

    python -m dodo_sim.tools.walk_plot BAG --out DIR

Read from the bag only: the joint names from the first ``/joint_states`` message, the contact
topics ``/<frame>_contact`` recorded in it, the controller's named channels.

* ``base.png``       the floating base coordinates (the joints before the first actuated one:
                     the walker's hip x, z and torso pitch) against time
* ``joints.png``     the actuated joints' positions, rad
* ``contacts.png``   the vertical force on each contact frame, N
* ``torques.png``    the commanded torque per actuated joint (``tau_<joint>`` channels), N*m
* ``walk.png``       the controller's outcome monitor: steps, distance walked, fall flag
"""
from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Sequence

import numpy as np

from dodo_sim.ros import contract
from dodo_sim.tools import bag as bagio

CONTACT_SUFFIX = '_contact'


def _figure(nrows: int = 1):
    import matplotlib
    matplotlib.use('Agg')
    import matplotlib.pyplot as plt
    fig, axes = plt.subplots(nrows, 1, figsize=(7.0, 2.2 + 1.6 * nrows), sharex=True,
                             layout='constrained', squeeze=False)
    return fig, axes[:, 0]


def _save(fig, path: Path, written: list) -> None:
    import matplotlib.pyplot as plt
    fig.savefig(path, dpi=110)
    plt.close(fig)
    written.append(path)


def plot_walk_bag(bag_dir: str | os.PathLike, out_dir: str | os.PathLike) -> list[Path]:
    """Write the figures of a walk bag into ``out_dir``; return the files. ValueError naming
    what the bag lacks."""
    data = bagio.read_bag(bag_dir)
    if contract.JOINT_STATES not in data or not data[contract.JOINT_STATES].messages:
        raise ValueError(f'{bag_dir}: no /joint_states recorded, nothing to plot')
    names = tuple(data[contract.JOINT_STATES].messages[0].name)
    js = bagio.joint_states(data[contract.JOINT_STATES], names)
    if len(js.t) == 0:
        raise ValueError(f'{bag_dir}: /joint_states never held all of the joints')
    channels = {}
    if contract.CONTROLLER_STATE in data:
        _, channels = bagio.named_values(data[contract.CONTROLLER_STATE])
    state_t = (bagio.named_values(data[contract.CONTROLLER_STATE])[0]
               if channels else None)
    actuated = [n for n in names if f'tau_{n}' in channels]
    first = names.index(actuated[0]) if actuated else len(names)
    base = names[:first]
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []

    if base:
        fig, axes = _figure(len(base))
        for ax, name in zip(axes, base):
            ax.plot(js.t, js.q[:, names.index(name)], lw=0.8)
            ax.set_ylabel(name)
        axes[-1].set_xlabel('t (s)')
        _save(fig, out / 'base.png', written)

    joints = [n for n in names if n not in base]
    if joints:
        fig, axes = _figure()
        for name in joints:
            axes[0].plot(js.t, js.q[:, names.index(name)], lw=0.8, label=name)
        axes[0].set_ylabel('joint position (rad)')
        axes[0].set_xlabel('t (s)')
        axes[0].legend(fontsize='small', ncol=2)
        _save(fig, out / 'joints.png', written)

    contacts = sorted(t for t in data if t.endswith(CONTACT_SUFFIX))
    if contacts:
        fig, axes = _figure()
        for topic in contacts:
            t, f = bagio.wrenches(data[topic])
            axes[0].plot(t, f[:, 2], lw=0.8, label=topic)
        axes[0].set_ylabel('vertical contact force (N)')
        axes[0].set_xlabel('t (s)')
        axes[0].legend(fontsize='small')
        _save(fig, out / 'contacts.png', written)

    if actuated and state_t is not None:
        fig, axes = _figure()
        for name in actuated:
            axes[0].plot(state_t, channels[f'tau_{name}'], lw=0.8, label=name)
        axes[0].set_ylabel('commanded torque (N*m)')
        axes[0].set_xlabel('t (s)')
        axes[0].legend(fontsize='small', ncol=2)
        _save(fig, out / 'torques.png', written)

    monitor = [n for n in ('steps', 'distance_m', 'fallen') if n in channels]
    if monitor and state_t is not None:
        fig, axes = _figure(len(monitor))
        for ax, name in zip(axes, monitor):
            ax.plot(state_t, channels[name], lw=0.8)
            ax.set_ylabel(name)
        axes[-1].set_xlabel('t (s)')
        _save(fig, out / 'walk.png', written)
    return written


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog='dodo walk plots', description=__doc__.split('\n\n')[0])
    parser.add_argument('bag', help='rosbag2 bag directory')
    parser.add_argument('--out', required=True, help='output directory for the figures')
    args = parser.parse_args(argv)
    if not (Path(args.bag) / 'metadata.yaml').is_file():
        print(f'dodo walk plots: error: {args.bag} is not a rosbag2 bag (no metadata.yaml)',
              file=sys.stderr)
        return 2
    try:
        written = plot_walk_bag(args.bag, args.out)
    except ValueError as exc:
        print(f'dodo walk plots: error: {exc}', file=sys.stderr)
        return 2
    for path in written:
        print(path)
    return 0


if __name__ == '__main__':
    sys.exit(main())
