# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
Trials of ``dodo optimize``: a parameter set evaluated, and the workers that evaluate them.

:func:`evaluate` runs every scenario of a study under every perturbation and aggregates the
objectives. :func:`run_worker` evaluates trials of a study in an Optuna storage until it holds
enough; :func:`run_study` runs ``--workers`` of them here (worker processes of a ``spawn``
context), waits for other workers' running trials and resumes what a dead worker left. SIGINT
and SIGTERM (as :class:`Terminated`) stop every worker, each failing its running trial.
"""
from __future__ import annotations

from dataclasses import dataclass
import math
import multiprocessing
import os
import signal
import socket
import sys
import threading
import time
from typing import Any, Mapping
import warnings

from dodo_control.scenarios import build_configs, ScenarioFailed
from dodo_sim.redact import redact
from dodo_sim.ros.runtime import EXIT_INTERRUPTED, EXIT_TERMINATED
from dodo_sim.tools.optimize_storage import (EXIT_STORAGE_FAILED, join_study, Liveness,
                                             make_storage, quiet_storage_failures_in_optuna_logs,
                                             sampler_seed, storage_failure, StorageFailed)
from dodo_sim.tools.optimize_study import load_study, make_sampler, Parameter, Study, StudyError


class TrialFailed(RuntimeError):
    """
    Trial failure: the trial measured nothing usable.

    A run raised, a metric is missing or not finite, or every run failed. Optuna marks the trial
    FAIL, its reason is the trial's ``failure`` attribute, and the study goes on.
    """


class Terminated(KeyboardInterrupt):
    """
    SIGTERM, raised where the process is.

    A KeyboardInterrupt so that Optuna fails the running trial and re-raises, as it does for
    SIGINT.
    """


def raise_terminated(signum, frame):
    """Raise :class:`Terminated`: the SIGTERM handler of ``dodo optimize`` and its workers."""
    raise Terminated()


# -- evaluation -----------------------------------------------------------------------------

@dataclass
class Evaluation:
    """
    Objective values of one parameter set and the runs behind them.

    Fields:
        values: one value per objective (penalty where a selected run failed).
        runs: [{'scenario', 'perturbation', 'metrics' or 'failure'}] in evaluation order.
        wall_s: evaluation time, s.
        failure: why the whole evaluation is unusable (a trial FAIL), or None: a run raised
            something other than ScenarioFailed, a selected metric is missing or not finite, or
            every run failed (then no value carries information).
    """

    values: tuple
    runs: list
    wall_s: float
    failure: str | None = None


def evaluate(study: Study, tuned: Mapping[str, Any]) -> Evaluation:
    """
    Run every scenario under every perturbation.

    Each run takes the fixed values plus ``tuned`` (``section.name`` keys); the objectives are
    aggregated.
    """
    start = time.perf_counter()
    values = study.values(tuned)
    runs = []
    for entry in study.scenarios:
        scenario = study.module.SCENARIOS[entry.kind]
        for pert in study.perturbations:
            record = {'scenario': entry.name, 'perturbation': pert.name}
            try:
                configs = build_configs(study.module.SECTIONS, values, pert)
                record['metrics'] = scenario.run(configs, dict(entry.options), pert)
            except (ScenarioFailed, ValueError) as exc:
                record['failure'] = str(exc)
            except Exception as exc:   # noqa: BLE001 -- a bug in a scenario or controller
                # fails this trial with its reason instead of ending the whole study
                record['failure'] = f'{type(exc).__name__}: {exc}'
                record['error'] = True
            runs.append(record)
    problems = [f"{r['scenario']} / {r['perturbation']}: {r['failure']}"
                for r in runs if r.get('error')]
    out = []
    for obj in study.objectives:
        samples = [r for r in runs if r['scenario'] in obj.scenarios]
        if any('failure' in r for r in samples):
            out.append(obj.penalty)
            continue
        data = []
        for r in samples:
            value = r['metrics'].get(obj.metric)
            if not isinstance(value, (int, float)) or not math.isfinite(value):
                problems.append(f"{r['scenario']} / {r['perturbation']}: metric {obj.metric} "
                                f'is {value!r}')
                value = math.nan
            data.append(float(value))
        value = {'max': max, 'min': min, 'sum': sum,
                 'mean': lambda xs: sum(xs) / len(xs)}[obj.aggregate](data)
        out.append(value if math.isfinite(value) else obj.penalty)
    if not problems and runs and all('failure' in r for r in runs):
        problems = [f'every run failed; first: {runs[0]["scenario"]} / '
                    f'{runs[0]["perturbation"]}: {runs[0]["failure"]}']
    return Evaluation(tuple(out), runs, time.perf_counter() - start,
                      '; '.join(problems) if problems else None)


# -- workers --------------------------------------------------------------------------------

def _suggest(trial, p: Parameter):
    if p.kind == 'categorical':
        return trial.suggest_categorical(p.key, list(p.choices))
    if p.kind == 'int':
        return trial.suggest_int(p.key, p.low, p.high, step=p.step or 1, log=p.log)
    return trial.suggest_float(p.key, p.low, p.high, step=p.step, log=p.log)


def _objective(study: Study):
    def objective(trial):
        tuned = {p.key: _suggest(trial, p) for p in study.parameters}
        result = evaluate(study, tuned)
        trial.set_user_attr('runs', result.runs)
        trial.set_user_attr('wall_s', result.wall_s)
        if result.failure is not None:
            trial.set_user_attr('failure', result.failure)
            raise TrialFailed(result.failure)
        return result.values if len(result.values) > 1 else result.values[0]
    return objective


def _owned_ask(ask, worker: Mapping[str, Any]):
    """
    Wrap ``Study.ask`` so that a new trial carries its worker's attributes before a signal lands.

    ``study.optimize`` creates the trial in ``ask`` (and samples in it, which takes a while with
    TPE) before the objective runs; a SIGINT/SIGTERM there used to leave a RUNNING trial with
    no ``pid``, which the main process could not fail as its worker's
    (:func:`fail_running_trials_of`). While the trial is created and marked, SIGINT and SIGTERM
    are only noted (handlers, not a signal mask: any thread of the process may receive a
    signal); one that came meanwhile is raised again as soon as the trial is marked.
    """
    deferred = (signal.SIGINT, signal.SIGTERM)

    def owned_ask(*args, **kwargs):
        if threading.current_thread() is not threading.main_thread():
            # signals reach only the main thread (and only it may set handlers): nothing to hold
            return _marked(ask(*args, **kwargs), worker)
        caught = []
        previous = {signum: signal.signal(signum, lambda got, frame: caught.append(got))
                    for signum in deferred}
        try:
            trial = _marked(ask(*args, **kwargs), worker)
        finally:
            for signum, handler in previous.items():
                signal.signal(signum, handler)
        if caught:
            signal.raise_signal(caught[0])
        return trial
    return owned_ask


def _marked(trial, worker: Mapping[str, Any]):
    for key, value in worker.items():
        trial.set_user_attr(key, value)
    return trial


def open_study(study: Study, storage_url: str, create: bool, liveness: Liveness = Liveness(),
               report=None):
    """Create (``create``) or load the Optuna study of ``study`` in ``storage_url``."""
    import optuna
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    report = report or (lambda text: print(f'dodo optimize: {text}', file=sys.stderr))
    storage = make_storage(storage_url, liveness, report)
    directions = [o.direction for o in study.objectives]
    if create:
        opt = optuna.create_study(storage=storage, study_name=study.name, load_if_exists=True,
                                  directions=directions)
        if [d.name.lower() for d in opt.directions] != directions:
            raise StudyError(f"storage {redact(storage_url)} holds a study '{study.name}' with "
                             f'other objectives; choose another name or storage')
        return opt
    try:
        return optuna.load_study(storage=storage, study_name=study.name)
    except KeyError:
        raise StudyError(f"no study '{study.name}' in {redact(storage_url)}") from None


def _counted(trial) -> bool:
    """
    Return whether a trial counts towards ``trials``.

    It counts when complete, failed for a reason of its own (not a worker that died: such a trial
    is retried), or running now.
    """
    from optuna.trial import TrialState
    if trial.state == TrialState.FAIL:
        return 'failure' in trial.user_attrs
    return trial.state in (TrialState.COMPLETE, TrialState.PRUNED, TrialState.RUNNING)


def _finished(opt) -> int:
    """Trials that ended with a result (complete, or failed for a reason of their own)."""
    from optuna.trial import TrialState
    return sum(1 for t in opt.get_trials(deepcopy=False)
               if t.state != TrialState.RUNNING and _counted(t))


def run_worker(study_path: str, storage_url: str, trials: int, liveness: Liveness = Liveness(),
               on_trial=None, local_index: int = 0) -> None:
    """
    Evaluate trials of the study in ``storage_url`` until it has ``trials`` counted trials.

    :func:`_counted` says which trials count.
    """
    import optuna

    # heartbeats and the stale-trial retry are "experimental" in Optuna (since 2.8): as documented
    warnings.filterwarnings('ignore', category=optuna.exceptions.ExperimentalWarning)
    from optuna.storages import fail_stale_trials
    quiet_storage_failures_in_optuna_logs(storage_url)     # one line says it, not Optuna's log
    study = load_study(study_path)
    opt = open_study(study, storage_url, create=False, liveness=liveness)
    number = join_study(opt._storage, study.name)
    if number == 0:
        # trial 0, the baseline, enqueued once: by the first worker to join the study (two
        # processes enqueueing it at once would both see none there and both add it)
        opt.enqueue_trial(study.baseline(), user_attrs={'baseline': True}, skip_if_exists=True)
    else:
        _wait_for_baseline(opt, study, liveness)
    seed = sampler_seed(study.seed, number)
    opt.sampler = make_sampler(study.sampler, study.sampler_options, seed)
    worker = {'worker': number, 'worker_local': local_index, 'sampler_seed': seed,
              'host': socket.gethostname(), 'pid': os.getpid()}

    def enough(s, t):
        if sum(1 for x in s.get_trials(deepcopy=False) if _counted(x)) >= trials:
            s.stop()
        if on_trial is not None:
            on_trial()
    fail_stale_trials(opt)        # trials of workers that died before this one started
    if sum(1 for t in opt.get_trials(deepcopy=False) if _counted(t)) >= trials:
        return
    opt.ask = _owned_ask(opt.ask, worker)     # study.optimize asks through the instance
    opt.optimize(_objective(study), callbacks=[enough], gc_after_trial=False,
                 catch=(TrialFailed,))


def _wait_for_baseline(opt, study: Study, liveness: Liveness) -> None:
    """
    Wait until the study holds the baseline before this worker creates a trial of its own.

    Trial numbers follow creation order: a worker that joined second and asked for a trial
    before the first one had enqueued the baseline would take trial 0 with a sampled point, and
    trial 0 is the baseline everywhere (summary, history plot, best.yaml). The first worker
    enqueues it right after joining; if it died in between, this one enqueues it after
    ``liveness.grace_s``.
    """
    deadline = time.monotonic() + liveness.grace_s
    while not any(t.user_attrs.get('baseline') for t in opt.get_trials(deepcopy=False)):
        if time.monotonic() > deadline:
            opt.enqueue_trial(study.baseline(), user_attrs={'baseline': True},
                              skip_if_exists=True)
            return
        time.sleep(0.05)       # polling the storage (it has no notification)


def _worker_process(study_path, storage_url, trials, liveness, local_index,
                    failures):  # pragma: no cover
    """Run a worker in its process; a failing storage goes to ``failures`` (a queue), one line."""
    signal.signal(signal.SIGTERM, raise_terminated)
    try:
        run_worker(study_path, storage_url, trials, liveness, local_index=local_index)
    except KeyboardInterrupt as exc:
        sys.exit(EXIT_TERMINATED if isinstance(exc, Terminated) else EXIT_INTERRUPTED)
    except Exception as exc:          # a failing storage: one line, not a worker's traceback
        failure = storage_failure(exc, storage_url)
        if failure is None:
            raise
        failures.put(str(failure))       # the main process says it once
        sys.exit(EXIT_STORAGE_FAILED)


# -- the workers of this machine ------------------------------------------------------------

class _Progress:
    """
    Trials finished of the total with the rate, the ETA (tqdm) and the best value so far.

    On stderr; the storage is the truth (other machines' trials count too).
    """

    def __init__(self, opt, study: Study, total: int):
        from tqdm import tqdm
        self._opt, self._study = opt, study
        self._bar = tqdm(total=total, initial=_finished(opt), desc='trials', unit='trial',
                         file=sys.stderr, dynamic_ncols=True)

    def update(self) -> None:
        from optuna.trial import TrialState
        trials = self._opt.get_trials(deepcopy=False)
        done = [t for t in trials if t.state == TrialState.COMPLETE]
        failed = sum(1 for t in trials if t.state == TrialState.FAIL and 'failure' in t.user_attrs)
        postfix = {'failed': failed}
        if done:
            sign = 1.0 if self._study.objectives[0].direction == 'minimize' else -1.0
            postfix['best'] = f'{min(sign * t.values[0] for t in done) * sign:.4g}'
        self._bar.set_postfix(postfix, refresh=False)
        self._bar.update(_finished(self._opt) - self._bar.n)

    def close(self) -> None:
        self.update()
        self._bar.close()


def _wait_for_running(opt, liveness: Liveness, report) -> bool:
    """
    Wait until no trial is RUNNING; True if the study needs more trials.

    Wait until no trial is RUNNING (other workers finish theirs, or a dead worker's trial turns
    stale and is failed and re-enqueued); True if the study needs more trials run.
    """
    from optuna.storages import fail_stale_trials
    from optuna.trial import TrialState
    deadline = time.monotonic() + liveness.grace_s + 2 * liveness.heartbeat_s
    reported = False
    while time.monotonic() < deadline:
        fail_stale_trials(opt)
        trials = opt.get_trials(deepcopy=False)
        if not any(t.state == TrialState.RUNNING for t in trials):
            return True
        if not reported:
            report("waiting for running trials of other workers (a dead worker's trial is "
                   f'retried after {liveness.grace_s} s without heartbeat)')
            reported = True
        time.sleep(liveness.heartbeat_s)      # poll the storage at the heartbeat rate
    return False


def run_study(study: Study, storage_url: str, workers: int, trials: int, progress: bool,
              liveness: Liveness = Liveness(), report=None):
    """
    Create/load the study, enqueue the baseline.

    Run ``workers`` workers here until the study holds ``trials`` counted trials (resuming what a
    killed worker left); the study.
    """
    report = report or (lambda text: print(f'dodo optimize: {text}', file=sys.stderr))
    import optuna
    warnings.filterwarnings('ignore', category=optuna.exceptions.ExperimentalWarning)
    opt = open_study(study, storage_url, create=True, liveness=liveness, report=report)
    bar = _Progress(opt, study, trials) if progress else None
    try:
        # a worker that died leaves a RUNNING trial: once it is stale it is failed and its
        # parameters re-enqueued, and the workers run again for the trials still missing
        while True:
            _run_workers(opt, study, storage_url, workers, trials, liveness, bar)
            if _finished(opt) >= trials or not _wait_for_running(opt, liveness, report) \
                    or _finished(opt) >= trials:
                break
    finally:
        if bar is not None:
            bar.close()
    return opt


def fail_running_trials_of(opt, pids) -> None:
    """
    Fail the RUNNING trials of stopped worker processes.

    They are marked FAIL here because a worker stopped inside a storage write cannot always do it
    itself; the same command resumes the study.
    """
    from optuna.exceptions import UpdateFinishedTrialError
    from optuna.trial import TrialState
    for t in opt.get_trials(deepcopy=False, states=(TrialState.RUNNING,)):
        if t.user_attrs.get('pid') in pids:
            try:
                opt._storage.set_trial_state_values(t._trial_id, TrialState.FAIL)
            except UpdateFinishedTrialError:
                pass                                   # it finished meanwhile


def _run_workers(opt, study, storage_url, workers, trials, liveness, bar) -> None:
    if workers == 1:
        run_worker(str(study.path), storage_url, trials, liveness,
                   on_trial=bar.update if bar else None)
        return
    ctx = multiprocessing.get_context('spawn')
    failures = ctx.SimpleQueue()
    procs = [ctx.Process(target=_worker_process, name=f'dodo-optimize-{i}',
                         args=(str(study.path), storage_url, trials, liveness, i, failures))
             for i in range(workers)]
    for proc in procs:
        proc.start()
    try:
        while any(proc.is_alive() for proc in procs):
            for proc in procs:
                proc.join(timeout=0.5)
            if bar is not None:
                bar.update()
    except BaseException:
        # SIGINT / SIGTERM here: stop every worker (each fails its running trial) and wait
        for proc in procs:
            if proc.is_alive():
                proc.terminate()
        for proc in procs:
            proc.join(timeout=10.0)
        for proc in procs:
            if proc.is_alive():
                proc.kill()
                proc.join()
        fail_running_trials_of(opt, {proc.pid for proc in procs})
        raise
    bad = [p for p in procs if p.exitcode != 0]
    if bad and all(p.exitcode == EXIT_STORAGE_FAILED for p in bad):
        raise StorageFailed(failures.get())     # the first worker's line; the others say the same
    if bad:
        raise RuntimeError('worker(s) ' + ', '.join(f'{p.name} (exit {p.exitcode})'
                                                    for p in bad) + ' failed')
