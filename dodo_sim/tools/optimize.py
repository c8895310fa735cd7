# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
``dodo optimize``: tune controller (and simulator) parameters over closed-loop scenarios.

::

    dodo optimize STUDY.yaml [--workers N [--oversubscribe]] [--storage URL] [--trials N]
                             [--out DIR] [--report-only] [--no-progress]

A study file (docs/optimize.md; example ``config/studies/hop_precision.yaml``) names the robot
(its scenario module, :mod:`dodo_control.scenarios`), the parameters with their ranges (fields of
the robot's config dataclasses), the scenarios and perturbations every trial runs, the
objectives and the Optuna sampler. The study is checked completely before any trial runs: a bad
study file is refused with one message and exit code 2.

Trial 0 is the baseline (the configs' defaults, or ``baseline:`` values), enqueued, so the
improvement is measured inside the study. Trials are evaluated by worker processes sharing an
Optuna storage: ``--workers N`` processes on this machine; more machines join by running the same
command with the same ``--storage`` (a journal file on a shared disk, or an RDB URL such as
``sqlite:///study.db`` / ``postgresql://...``). The study stops at ``trials`` trials in total.

Results in ``--out`` (default ``runs/optimize-<study>-<date>-<time>/``): ``best.yaml`` (a params
file with ``simulator:``/``controller:`` sections for ``dodo hop --params-file`` and
``ros2 launch dodo_sim hop.launch.py params_file:=``), ``history.png``, ``trials.csv`` and
``summary.txt`` (also printed).

Exit codes: 0 done, 1 a worker failed or no trial succeeded, 2 bad study file or options,
130 interrupted (SIGINT), 143 terminated (SIGTERM); on 1, 130 and 143 the results of the finished
trials are written.

This module is the command line; the study file is read by
:mod:`~dodo_sim.tools.optimize_study`, trials are evaluated by the workers of
:mod:`~dodo_sim.tools.optimize_run` in the storage of :mod:`~dodo_sim.tools.optimize_storage`,
and :mod:`~dodo_sim.tools.optimize_results` writes the results.
"""
from __future__ import annotations

import argparse
import os
from pathlib import Path
import signal
import sys
import time

from dodo_sim.redact import redact
from dodo_sim.ros.runtime import (EXIT_CONFIG, EXIT_FAILED, EXIT_INTERRUPTED, EXIT_OK,
                                  EXIT_TERMINATED)
from dodo_sim.tools.optimize_results import write_results
from dodo_sim.tools.optimize_run import open_study, raise_terminated, run_study, Terminated
from dodo_sim.tools.optimize_storage import (check_storage_url, Liveness, storage_failure,
                                             StorageError, StorageFailed)
from dodo_sim.tools.optimize_study import load_study, StudyError

#: Most worker processes per core without ``--oversubscribe``: each one runs simulations flat
#: out, so more only adds memory and context switches (1000 workers on 2 cores: load 43 for
#: minutes).
WORKERS_PER_CORE = 4


def usable_cores() -> int:
    """Cores this process may run on (its affinity mask where the OS has one)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1


def _check_out_dir(out: Path) -> None:
    """Refuse an output directory that cannot be written before any trial runs."""
    probe = out / '.dodo-optimize-write-test'
    try:
        out.mkdir(parents=True, exist_ok=True)
        probe.write_text('')
        probe.unlink()
    except OSError as exc:
        raise StudyError(f'--out {out}: cannot write there ({exc.strerror or exc})') from None


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(
        prog='dodo optimize', description='Tune controller parameters over closed-loop '
        'scenarios (Optuna). See docs/optimize.md.')
    parser.add_argument('study', help='study file (YAML), e.g. config/studies/hop_precision.yaml')
    parser.add_argument('--workers', type=int, default=1,
                        help='worker processes on this machine (default 1; at most '
                             f'{WORKERS_PER_CORE} per core without --oversubscribe)')
    parser.add_argument('--oversubscribe', action='store_true',
                        help=f'allow more than {WORKERS_PER_CORE} worker processes per core')
    parser.add_argument('--storage', default=None,
                        help='shared Optuna storage: a journal file path (journal:PATH) or an '
                             'RDB URL (sqlite:///study.db, postgresql+psycopg://...); default: '
                             'a journal file in the output directory')
    parser.add_argument('--trials', type=int, default=None,
                        help="total trials of the study (default: the file's trials:)")
    parser.add_argument('--out', default=None,
                        help='output directory (default runs/optimize-<study>-<date>-<time>)')
    parser.add_argument('--report-only', action='store_true',
                        help='run no trial: write the results of what the storage holds')
    parser.add_argument('--no-progress', action='store_true', help='no progress bar')
    parser.add_argument('--heartbeat-s', type=int, default=Liveness.heartbeat_s,
                        help='heartbeat interval of a running trial, s (default '
                             f'{Liveness.heartbeat_s}); a trial silent for 3 intervals is '
                             'stale (its worker died) and is retried')
    args = parser.parse_args(argv)
    try:
        study = load_study(args.study)
        if args.workers < 1:
            raise StudyError(f'--workers must be >= 1, got {args.workers}')
        cores = usable_cores()
        if args.workers > WORKERS_PER_CORE * cores and not args.oversubscribe:
            raise StudyError(f'--workers {args.workers} is more than {WORKERS_PER_CORE} per core '
                             f'({cores} core(s) here: at most {WORKERS_PER_CORE * cores}); more '
                             f'machines join with the same --storage, or pass --oversubscribe')
        trials = study.trials if args.trials is None else args.trials
        if trials < 1:
            raise StudyError(f'--trials must be >= 1, got {trials}')
        if args.heartbeat_s < 1:
            raise StudyError(f'--heartbeat-s must be >= 1, got {args.heartbeat_s}')
        out = Path(args.out) if args.out else Path('runs') / (
            f'optimize-{study.name}-{time.strftime("%Y%m%d-%H%M%S")}')
        storage_url = check_storage_url(args.storage or f'journal:{out / "study.journal"}',
                                        write=not args.report_only)
        _check_out_dir(out)
    except (StudyError, StorageError) as exc:
        print(f'dodo optimize: {exc}', file=sys.stderr)
        return EXIT_CONFIG
    liveness = Liveness(heartbeat_s=args.heartbeat_s, grace_s=3 * args.heartbeat_s,
                        lock_grace_s=max(3 * args.heartbeat_s, 10))
    print(f"dodo optimize: study '{study.name}': {len(study.parameters)} parameter(s), "
          f'{len(study.scenarios)} scenario(s) x {len(study.perturbations)} perturbation(s) = '
          f'{study.runs_per_trial} runs per trial, {trials} trials, sampler {study.sampler}, '
          f'{args.workers} worker(s), storage {redact(storage_url)}\n'
          f'  live view: optuna-dashboard {redact(_dashboard_arg(storage_url))}'
          + (' (with your password)' if redact(storage_url) != storage_url else ''), flush=True)
    start = time.perf_counter()
    previous = signal.signal(signal.SIGTERM, raise_terminated)
    code = EXIT_OK
    try:
        if args.report_only:
            opt = open_study(study, storage_url, create=False, liveness=liveness)
        else:
            opt = run_study(study, storage_url, args.workers, trials, not args.no_progress,
                            liveness)
    except (StudyError, StorageError) as exc:
        print(f'dodo optimize: {exc}', file=sys.stderr)
        return EXIT_CONFIG
    except StorageFailed as exc:           # the storage failed under a worker process
        print(f'dodo optimize: {exc}', file=sys.stderr)
        return EXIT_FAILED
    except KeyboardInterrupt as exc:        # SIGINT, or SIGTERM as Terminated
        code = EXIT_TERMINATED if isinstance(exc, Terminated) else EXIT_INTERRUPTED
        print(f'dodo optimize: {"interrupted" if code == EXIT_INTERRUPTED else "terminated"}; '
              'writing the results of the finished trials (the same command resumes the study)',
              file=sys.stderr)
    except RuntimeError as exc:
        print(f'dodo optimize: {exc}', file=sys.stderr)
        code = EXIT_FAILED
    except Exception as exc:          # the storage failed: one line naming it, no traceback
        failure = storage_failure(exc, storage_url)
        if failure is None:
            raise
        print(f'dodo optimize: {failure}', file=sys.stderr)
        return EXIT_FAILED
    finally:
        signal.signal(signal.SIGTERM, previous)
    try:
        if code != EXIT_OK:
            try:
                opt = open_study(study, storage_url, create=False, liveness=liveness)
            except (StudyError, StorageError) as exc:     # stopped before the study was created
                print(f'dodo optimize: no results: {exc}', file=sys.stderr)
                return code
        print(write_results(study, opt, out, args.workers, time.perf_counter() - start))
    except Exception as exc:          # the storage failed while the results were read
        failure = storage_failure(exc, storage_url)
        if failure is None:
            raise
        print(f'dodo optimize: no results: {failure}', file=sys.stderr)
        return EXIT_FAILED
    from optuna.trial import TrialState
    if code == EXIT_OK and not opt.get_trials(deepcopy=False, states=(TrialState.COMPLETE,)):
        print('dodo optimize: no trial succeeded (see the failures in trials.csv and '
              'summary.txt); no best.yaml written', file=sys.stderr)
        code = EXIT_FAILED
    return code


def _dashboard_arg(storage_url: str) -> str:
    return storage_url[len('journal:'):] if storage_url.startswith('journal:') else storage_url


if __name__ == '__main__':
    sys.exit(main())
