# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
ros2_control in lockstep: how often the controller_manager's command came from the awaited state.

    .venv/bin/python bench/bench_ros2_control.py [--seconds 5] [--rounds 3] [--hogs 0 1 2]

Runs the recipe of docs/ros2_control.md (the simulator with
``config/ros2_control/simulator.yaml``, the controller_manager stand-in of
``test/ros2_control_standin.py`` — ``ros2_control_node.cpp``'s main loop on sim time with the
topic-based system's read/write and a PD effort controller —, the topic-based URDF on
``/robot_description``) for ``--seconds`` of simulated time, ``--rounds`` times for each number
of CPU hogs beside it (busy-loop processes; 0: no hog), interleaved, and prints per run:

* the fraction of commands computed from the awaited state: the loop's ``read()`` took the
  state stamped with the clock that woke it — the state the simulator awaits the answer to
  (goal >= 0.95 without a hog, issue 28 item 5). The topic-based system carries no state stamp,
  so the simulator cannot tell; the stand-in can, it knows what it read;
* writes stamped one period behind the loop's clock (the hardware component's node clock had
  not yet taken the /clock that woke the loop: the pairing rule accepts them);
* the start: /clock ticks before the first answer, and the rejected (NaN) writes of the
  spawner's time;
* simulated steps per wall s of the run (from "simulation starts" to the end), its CPU
  context: the load average.

Nothing here is a test: no timed asserts. Uses a private ROS domain with localhost discovery
(``DODO_TEST_DOMAINS=lo:hi`` picks it from that range).
"""
from __future__ import annotations

import argparse
import os
from pathlib import Path
import subprocess
import sys
import tempfile

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / 'test'))

from ros2_control_standin import run_recipe  # noqa: E402


def pick_domain() -> int:
    low, high = 1, 100
    if os.environ.get('DODO_TEST_DOMAINS'):
        low, high = (int(x) for x in os.environ['DODO_TEST_DOMAINS'].split(':'))
    return low + os.getpid() % (high - low + 1)


def one_run(seconds: float, hogs: int, domain: int) -> dict:
    procs = [subprocess.Popen([sys.executable, '-c', 'while True: pass'])
             for _ in range(hogs)]
    try:
        with tempfile.TemporaryDirectory() as tmp:
            load = os.getloadavg()[0]
            run = run_recipe(Path(tmp), domain, stop_after_s=seconds,
                             budget_s=max(120.0, 60.0 * seconds))
    finally:
        for proc in procs:
            proc.kill()
            proc.wait()
    summary, cm = run['summary'], run['controller_manager']
    return {'hogs': hogs, 'load': load, 'steps': summary['steps'], 'wall_s': run['wall_s'],
            'fraction': cm['fraction_from_awaited_state'], 'valid': cm['valid_writes'],
            'from_awaited': cm['from_awaited_state'], 'behind': cm['stamped_behind_loop_clock'],
            'ticks': summary['clock_ticks'], 'rejected': summary['rejected'],
            'late': summary['late'] + summary['foreign'],
            'applied_as_written': (cm['applied_as_written'], cm['applied_checked'])}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[1])
    parser.add_argument('--seconds', type=float, default=5.0,
                        help='simulated s per run (1 kHz: 1000 steps per s)')
    parser.add_argument('--rounds', type=int, default=3)
    parser.add_argument('--hogs', type=int, nargs='+', default=[0, 1],
                        help='numbers of busy-loop processes beside the run (0: none)')
    args = parser.parse_args(argv)
    domain = pick_domain()
    rows = []
    for round_ in range(args.rounds):
        for hogs in args.hogs:
            row = one_run(args.seconds, hogs, domain)
            rows.append(row)
            print(f'round {round_ + 1}, {hogs} hog(s), load {row["load"]:.1f}: '
                  f'from the awaited state {row["from_awaited"]}/{row["valid"]} = '
                  f'{row["fraction"]:.4f}; stamped one period behind the loop clock '
                  f'{row["behind"]}; {row["steps"]} steps in {row["wall_s"]:.1f} s '
                  f'({row["steps"] / row["wall_s"]:.0f} steps/s); start: {row["ticks"]} '
                  f'tick(s), {row["rejected"]} NaN write(s); late {row["late"]}; applied as '
                  f'written {row["applied_as_written"][0]}/{row["applied_as_written"][1]}',
                  flush=True)
    print('\nfraction of commands computed from the awaited state (goal >= 0.95 without a hog):')
    for hogs in args.hogs:
        mine = [r for r in rows if r['hogs'] == hogs]
        total = sum(r['valid'] for r in mine)
        good = sum(r['from_awaited'] for r in mine)
        worst = min(r['fraction'] for r in mine)
        rate = sum(r['steps'] for r in mine) / sum(r['wall_s'] for r in mine)
        print(f'  {hogs} hog(s): {good}/{total} = {good / total:.4f} (worst run {worst:.4f}), '
              f'{rate:.0f} steps/s, load {sum(r["load"] for r in mine) / len(mine):.1f}')
    return 0


if __name__ == '__main__':
    sys.exit(main())
