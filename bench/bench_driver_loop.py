# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
The driver's 1 kHz loop in the whole hardware graph.

Measured in ``dodo hop --hardware emulated`` (driver + emulated actuators and physics in one
process, the SLIP controller, the recorder; real DDS), without and beside a CPU hog, with and
without SCHED_FIFO for the driver and the controller.

For each case one ``dodo hop --hardware emulated --duration SECONDS`` run; the numbers are the
driver's own summary line (``dodo driver:``): cycle period p50/p99/max, missed deadlines (a
cycle started more than 1.5 periods after the one before), achieved rate, state-to-command age,
watchdog trips, the emulator's skipped physics steps. The hog is ``--hog`` busy-looping Python
processes (default: one per core) started by this script before the run and killed (by pid)
after it. The machine's load average is printed with each case: other work on the machine
counts too. Nothing here asserts on time.

Run: ``.venv/bin/python bench/bench_driver_loop.py [--seconds 4] [--hog 2]``.
"""
from __future__ import annotations

import argparse
import os
from pathlib import Path
import re
import signal
import subprocess
import sys

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

HOG = 'while True: pass'


def run_case(seconds: float, hogs: int, priority: int, domain: int | None) -> dict:
    from dodo_sim.ros.runtime import parse_summary
    procs = [subprocess.Popen([sys.executable, '-c', HOG]) for _ in range(hogs)]
    try:
        out = subprocess.run(
            [sys.executable, '-m', 'dodo_sim.tools.cli', 'hop', '--hardware', 'emulated',
             '--duration', str(seconds), '--no-plots', '--realtime-priority', str(priority)]
            + ([] if domain is None else ['--domain-id', str(domain)]),
            capture_output=True, text=True, cwd=REPO, timeout=600,
            env=dict(os.environ, ROS_AUTOMATIC_DISCOVERY_RANGE='LOCALHOST'))
        load = os.getloadavg()[0]
    finally:
        for proc in procs:
            proc.send_signal(signal.SIGKILL)
            proc.wait()
    text = out.stdout + out.stderr
    summary = parse_summary(text, 'driver')
    # a starved loop can trip the watchdog: the run then fails (exit 1) but its numbers are the
    # measurement (watchdog trips column); anything else is an error of the bench
    tripped_only = (out.returncode == 1 and summary is not None
                    and summary.get('watchdog_trips', 0) > 0
                    and not summary.get('motors_off_events'))
    if (out.returncode != 0 and not tripped_only) or summary is None:
        raise RuntimeError(f'dodo hop exited {out.returncode}:\n{text[-3000:]}')
    summary['load'] = load
    summary['fifo'] = priority > 0 and not re.search(r'no real-time scheduling', text)
    return summary


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--seconds', type=float, default=4.0, help='driver time per run, s')
    parser.add_argument('--hog', type=int, default=os.cpu_count() or 2,
                        help='busy-looping processes beside the run (the hog cases)')
    parser.add_argument('--domain-id', type=int, default=None,
                        help='ROS domain of the runs (default: dodo hop picks a free one)')
    args = parser.parse_args(argv)
    print(f'{"case":<28} {"p50 ms":>7} {"p99 ms":>7} {"max ms":>7} {"missed":>7} {"cycles":>7} '
          f'{"rate Hz":>8} {"age p99":>8} {"trips":>6} {"skipped":>8} {"load":>5}')
    for hogs in (0, args.hog):
        for priority in (40, 0):
            x = run_case(args.seconds, hogs, priority, args.domain_id)
            name = (f'{"idle" if not hogs else f"{hogs} hog(s)"}, '
                    f'{"SCHED_FIFO" if x["fifo"] else "normal"}')
            print(f'{name:<28} {x["period_ms_p50"]:7.2f} {x["period_ms_p99"]:7.2f} '
                  f'{x["period_ms_max"]:7.2f} {x.get("missed_deadlines", 0):7d} '
                  f'{x["cycles"]:7d} {x["rate_hz"]:8.1f} {x["age_ms_p99"]:8.2f} '
                  f'{x["watchdog_trips"]:6d} {x.get("skipped_steps", 0):8d} {x["load"]:5.1f}',
                  flush=True)
    return 0


if __name__ == '__main__':
    sys.exit(main())
