# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
Every robot of example-robot-data, falling or held, in one integrator: does each run and rest.

Each URDF of the package (test/public_robots.py ``published_urdfs``) is loaded as published
(floating base unless its root link is ``world``, link collisions on, no contact frames: the
links' own collision shapes carry it), started at its default pose (the UR arms at issue 30's pose,
``UR_START``: their zero pose puts the wrist under the floor; joints outside their limits put on
the nearest limit; a floating base lifted until its lowest support point touches the ground,
``resting_start``) and run for ``--seconds`` under zero torque and under a plain joint PD
holding the start pose (``PdHold``). Each run is its own process with a wall-clock limit. A row per
run: the outcome (ok; refused at load with its one line; diverged at t; timeout), the deepest
support point during the run and at its end (m, < 0 is under the ground), the steps whose contact
solve missed its tolerance, the steps the event integrator left to time-stepping, LAPACK
warnings on the process's stderr, wall time.

    python bench/sweep_public_robots.py --integrator timestepping --seconds 3
    python bench/sweep_public_robots.py --integrator event --seconds 0.5 --controllers zero
"""
from __future__ import annotations

import argparse
import json
from pathlib import Path
import subprocess
import sys
import time

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / 'test'))

import numpy as np  # noqa: E402, I100
import public_robots as pr  # noqa: E402


def run_one(urdf: str, integrator: str, seconds: float, controller: str) -> dict:
    """Run one robot in this process; return the row's values."""
    from dodo_sim.physics.robot import ModelError
    from dodo_sim.simulator import SimConfig, SimulationDiverged, Simulator
    start = time.perf_counter()
    row = {'robot': urdf, 'integrator': integrator, 'controller': controller}
    try:
        sim = Simulator(str(pr.robots_dir() / urdf), SimConfig(contact_frames=(),
                                                               integrator=integrator))
    except (ModelError, ValueError) as err:
        row.update(outcome='refused', why=str(err), wall_s=time.perf_counter() - start)
        return row
    robot = sim.robot
    q = pr.resting_start(sim, pr.start_joints(urdf))
    row.update(nv=robot.nv, points=len(sim.integrator.geometry.frame_ids))
    state = sim.reset(q)
    hold = pr.PdHold(sim, q) if controller == 'pd' else None
    zero = np.zeros(len(robot.actuated_joint_names))
    deepest, deepest_t, deepest_at = 0.0, 0.0, ''
    frames = sim.integrator.geometry.frame_ids
    outcome = 'ok'
    try:
        for _ in range(int(round(seconds / sim.config.control_period))):
            state = sim.step(zero if hold is None else hold(state))
            if frames:
                gaps = pr.support_gaps(sim, state.q)
                k = int(np.argmin(gaps))
                if gaps[k] < deepest:
                    deepest, deepest_t = float(gaps[k]), state.t
                    deepest_at = robot.model.frames[frames[k]].name
    except SimulationDiverged as err:
        outcome = 'diverged'
        row['why'] = str(err).split('; last good')[0][:300]
        state = err.last_good_state
    end_gap = float(pr.support_gaps(sim, state.q).min()) if frames else 0.0
    row.update(outcome=outcome, t=state.t, deepest_m=deepest, deepest_t=deepest_t,
               deepest_at=deepest_at, end_gap_m=end_gap, unconverged=sim.unconverged_steps,
               accumulations=sim.accumulation_steps, speed=float(np.abs(state.v).max()),
               wall_s=time.perf_counter() - start)
    return row


def run_isolated(urdf, integrator, seconds, controller, timeout_s) -> dict:
    """:func:`run_one` in a child process (a hang or a crash stays there)."""
    command = [sys.executable, __file__, '--one', urdf, '--integrator', integrator,
               '--seconds', str(seconds), '--controllers', controller]
    start = time.perf_counter()
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=timeout_s)
    except subprocess.TimeoutExpired as err:
        output = ''.join(stream.decode(errors='replace') if isinstance(stream, bytes) else
                         (stream or '') for stream in (err.stdout, err.stderr))
        return {'robot': urdf, 'integrator': integrator, 'controller': controller,
                'outcome': 'timeout', 'wall_s': time.perf_counter() - start,
                'lapack': output.count('illegal value')}
    rows = [line for line in done.stdout.splitlines() if line.startswith('{')]
    if done.returncode != 0 or not rows:
        return {'robot': urdf, 'integrator': integrator, 'controller': controller,
                'outcome': 'crashed', 'why': done.stderr.strip().splitlines()[-1:],
                'wall_s': time.perf_counter() - start}
    row = json.loads(rows[-1])
    row['lapack'] = (done.stdout + done.stderr).count('illegal value')  # xerbla: stdout
    return row


def table_row(row) -> str:
    outcome = row['outcome']
    if outcome == 'refused':
        return f"| {row['robot']} | {row['controller']} | refused: {row['why']} |||||"
    if outcome in ('timeout', 'crashed'):
        return (f"| {row['robot']} | {row['controller']} | {outcome} "
                f"({row['wall_s']:.0f} s) |||||")
    result = 'ok' if outcome == 'ok' else f"diverged at {row['t']:.3f} s: {row['why']}"
    deepest = (f"{row['deepest_m']:.2e} ({row['deepest_at'].split(':')[1] if ':' in row['deepest_at'] else row['deepest_at']}, {row['deepest_t']:.3f} s)"  # noqa: E501
               if row['deepest_m'] < 0.0 else '0')
    return (f"| {row['robot']} | {row['controller']} | {result} | {row.get('points', 0)} | "
            f"{deepest} | {row['end_gap_m']:.1e} | {row['unconverged']} / "
            f"{row['accumulations']} | {row['lapack']} | {row['wall_s']:.0f} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--integrator', default='timestepping', choices=('timestepping', 'event'))
    parser.add_argument('--seconds', type=float, default=3.0)
    parser.add_argument('--controllers', default='zero,pd', help='zero, pd or both')
    parser.add_argument('--robots', default='', help='only URDF paths containing this')
    parser.add_argument('--timeout', type=float, default=1800.0, help='wall s per run')
    parser.add_argument('--one', default='', help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        print(json.dumps(run_one(args.one, args.integrator, args.seconds, args.controllers)))
        return
    if pr.robots_dir() is None:
        sys.exit('sweep_public_robots: error: example-robot-data is not installed')
    print(f'{args.integrator}, {args.seconds} s, link collisions, dt = 1 ms')
    print('| robot | torque | outcome | support points | deepest during the run m (where, when) '
          '| deepest at the end m | unconverged solves / steps by time-stepping | LAPACK '
          'warnings | wall s |')
    print('|---|---|---|---|---|---|---|---|---|')
    for urdf in pr.published_urdfs():
        if args.robots not in urdf:
            continue
        for controller in args.controllers.split(','):
            row = run_isolated(urdf, args.integrator, args.seconds, controller, args.timeout)
            print(table_row(row), flush=True)
            print('#', json.dumps(row), file=sys.stderr, flush=True)


if __name__ == '__main__':
    main()
