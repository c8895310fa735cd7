# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
``dodo demo``: simulator-only checks a new user can run without ROS.

Runs, with each integrator, a passive drop (straight leg, zero torque) and a PD-held bent leg
dropped from
``--height`` that bounces to rest, and prints a summary (touchdown time, worst penetration, rest
ground force against the weight, speed against real time). ``--plot FILE`` saves a figure.
"""
from __future__ import annotations

import argparse
from dataclasses import dataclass
import math
from pathlib import Path
import sys
import time

from dodo_sim.model import Kinematics
from dodo_sim.paths import default_urdf_path
from dodo_sim.rollout import JointHold, rollout
from dodo_sim.simulator import INTEGRATORS, SimConfig, Simulator
import numpy as np

STANCE_POSE = (0.0, 1.0, 0.3, -0.6)  # [x m, z m, hip rad, knee rad]: knee bent
STRAIGHT_POSE = (0.0, 1.0, 0.0, 0.0)  # a passive straight leg lands like one rigid body
HOLD_STIFFNESS = 300.0  # N*m/rad
HOLD_DAMPING = 20.0  # N*m*s/rad
GRAVITY = 9.81  # m/s^2
ACTUATED_INDICES = (2, 3)  # hip and knee in q = [x, z, hip, knee]


@dataclass
class DropResult:
    integrator: str
    scenario: str
    times: np.ndarray
    foot_z: np.ndarray
    base_z: np.ndarray
    normal_force: np.ndarray
    weight: float
    wall_time_s: float

    @property
    def touchdown_s(self) -> float:
        touching = np.flatnonzero(self.normal_force > 0.0)
        return float(self.times[touching[0]]) if touching.size else float('nan')

    @property
    def worst_penetration_m(self) -> float:
        return float(max(0.0, -self.foot_z.min()))

    @property
    def real_time_factor(self) -> float:
        return float(self.times[-1] / self.wall_time_s)


def run_drop(urdf, integrator: str, held: bool, height_m: float, seconds: float) -> DropResult:
    sim = Simulator(urdf, SimConfig(integrator=integrator))
    q0 = np.array(STANCE_POSE if held else STRAIGHT_POSE)
    foot_x, foot_z = Kinematics(sim.leg).foot_position(q0)
    q0[1] += sim.terrain.height(foot_x) + height_m - foot_z
    sim.reset(q0, np.zeros(4))
    stiffness, damping = (HOLD_STIFFNESS, HOLD_DAMPING) if held else (0.0, 0.0)
    hold = JointHold(ACTUATED_INDICES, q0, stiffness, damping)
    start = time.perf_counter()
    run = rollout(sim, hold, duration_s=seconds, keep_states=True)
    wall = time.perf_counter() - start
    foot_z = np.array([s.foot_position[1] for s in run.states])
    return DropResult(integrator, 'PD-held' if held else 'passive', run.t, foot_z,
                      run.q[:, 1], run.contact_force[:, 1], sim.leg.total_mass * GRAVITY, wall)


def summary_lines(results) -> list[str]:
    lines = [f"{'integrator':<13}{'scenario':<9}{'touchdown s':>12}{'penetration m':>15}"
             f"{'rest Fz/weight':>16}{'x real time':>13}"]
    for r in results:
        rest = r.normal_force[-100:].mean() / r.weight
        lines.append(f'{r.integrator:<13}{r.scenario:<9}{r.touchdown_s:>12.4f}'
                     f'{r.worst_penetration_m:>15.2e}{rest:>16.4f}{r.real_time_factor:>13.1f}')
    return lines


def plot(results, path: Path) -> None:
    import matplotlib
    matplotlib.use('Agg')
    import matplotlib.pyplot as plt
    fig, (ax_z, ax_f) = plt.subplots(2, 1, sharex=True, figsize=(8, 6))
    for r in results:
        label = f'{r.integrator}, {r.scenario}'
        ax_z.plot(r.times, r.base_z, label=label)
        ax_f.plot(r.times, r.normal_force / r.weight, label=label)
    ax_z.set_ylabel('base height z (m)')
    ax_f.set_ylabel('ground force / weight')
    ax_f.set_xlabel('time (s)')
    ax_z.legend(fontsize='small')
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=100)
    plt.close(fig)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog='dodo demo', description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--urdf', default=str(default_urdf_path()),
                        help='robot description (.urdf or .xacro), default: the package hopper')
    parser.add_argument('--height', type=float, default=0.3, help='drop height of the foot, m')
    parser.add_argument('--duration', type=float, default=3.0, help='simulated seconds per run')
    parser.add_argument('--plot', type=Path, help='write a PNG figure of the runs here')
    args = parser.parse_args(argv)
    from dodo_sim.tools.run_checks import MAX_DURATION_S
    if not 0.0 < args.duration <= MAX_DURATION_S or not math.isfinite(args.height):
        print(f'dodo demo: error: --duration must be in (0, {MAX_DURATION_S:.4g}] s and '
              f'--height finite, got {args.duration:g} and {args.height:g}', file=sys.stderr)
        return 2
    results = [run_drop(args.urdf, integrator, held, args.height, args.duration)
               for integrator in INTEGRATORS for held in (False, True)]
    print('\n'.join(summary_lines(results)))
    if args.plot:
        plot(results, args.plot)
        print(f'figure: {args.plot}')
    return 0


if __name__ == '__main__':
    raise SystemExit(main())
