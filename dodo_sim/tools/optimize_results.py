# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
Results of ``dodo optimize``: what the storage holds about a study, written to ``--out``.

``best.yaml`` (a params file of the best trial), ``history.png`` (objective per trial),
``trials.csv`` (every trial) and ``summary.txt`` (also printed), docs/optimize.md.
"""
from __future__ import annotations

import csv
import io
import math
from pathlib import Path

from dodo_sim.safe_files import write_atomic
from dodo_sim.tools.optimize_study import Study
import yaml


def best_trial(opt, study: Study):
    """Return the best complete trial (several objectives: the Pareto trial best in the first)."""
    if len(study.objectives) == 1:
        return opt.best_trial
    sign = 1.0 if study.objectives[0].direction == 'minimize' else -1.0
    return min(opt.best_trials, key=lambda t: sign * t.values[0])


def params_file_text(study: Study, trial, baseline_trial=None) -> str:
    """Return a params file: the study's fixed values and the trial's parameters per section."""
    values = study.values({p.key: trial.params[p.key] for p in study.parameters})
    controller = f', controller {study.controller}' if study.controller else ''
    lines = [f'# dodo optimize: study {study.name} ({study.path.name}), robot {study.robot}'
             f'{controller}',
             f'# best trial {trial.number}: '
             + ', '.join(f'{o.name} = {v:.6g}' for o, v in zip(study.objectives, trial.values))]
    if baseline_trial is not None and baseline_trial.values is not None:
        lines.append(f'# baseline trial {baseline_trial.number}: '
                     + ', '.join(f'{o.name} = {v:.6g}'
                                 for o, v in zip(study.objectives, baseline_trial.values)))
    lines.append(getattr(study.module, 'PARAMS_FILE_USE',
                         '# Use: dodo hop --params-file <this file>  |  ros2 launch dodo_sim '
                         'hop.launch.py params_file:=<this file>'))
    # what the module adds for the nodes (a hosted controller's name, the robot description)
    for section, extra in getattr(study.module, 'PARAMS_FILE_EXTRA', {}).items():
        values[section] = {**extra, **values.get(section, {})}
    doc = {section: {'ros__parameters': {k: (list(v) if isinstance(v, tuple) else v)
                                         for k, v in params.items()}}
           for section, params in values.items() if params}
    return '\n'.join(lines) + '\n' + yaml.safe_dump(doc, sort_keys=False)


def plot_history(study: Study, trials: list, path: Path) -> None:
    """
    Objective value per trial, the best so far and the baseline (trial 0).

    One panel per objective; PNG.
    """
    import matplotlib
    matplotlib.use('Agg')
    import matplotlib.pyplot as plt
    n = len(study.objectives)
    fig, axes = plt.subplots(n, 1, figsize=(8, 3.2 * n), squeeze=False)
    done = [t for t in trials if t.values is not None]
    for i, (obj, ax) in enumerate(zip(study.objectives, axes[:, 0])):
        xs = [t.number for t in done]
        ys = [t.values[i] for t in done]
        ok = [(x, y) for x, y in zip(xs, ys) if y != obj.penalty]
        failed = [x for x, y in zip(xs, ys) if y == obj.penalty]
        if ok:
            ax.plot(*zip(*ok), 'o', ms=4, color='tab:blue', label='trial')
            best, line = math.inf, []
            sign = 1.0 if obj.direction == 'minimize' else -1.0
            for x, y in sorted(ok):
                best = min(best, sign * y)
                line.append((x, sign * best))
            ax.step(*zip(*line), where='post', color='tab:red', label='best so far')
        base = next((t for t in done if t.number == 0), None)
        if base is not None and base.values[i] != obj.penalty:
            ax.axhline(base.values[i], ls='--', color='gray', label='baseline (trial 0)')
        for x in failed:
            ax.axvline(x, color='tab:orange', alpha=0.3, lw=1)
        ax.set_xlabel('trial')
        ax.set_ylabel(f'{obj.name}\n({obj.aggregate} {obj.metric})')
        ax.grid(alpha=0.3)
        ax.legend(loc='upper right', fontsize=8)
    axes[0, 0].set_title(f'dodo optimize: {study.name} ({study.sampler}, '
                         f'{len(done)} trials; orange: failed runs)')
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def write_trials_csv(study: Study, trials: list, path: Path) -> None:
    rows = io.StringIO(newline='')
    writer = csv.writer(rows)
    writer.writerow(['trial', 'state', *[o.name for o in study.objectives],
                     *[p.key for p in study.parameters], 'wall_s', 'worker',
                     'sampler_seed', 'host', 'failure'])
    for t in trials:
        values = list(t.values) if t.values is not None else [''] * len(study.objectives)
        failure = t.user_attrs.get('failure', '')
        if t.state.name == 'FAIL' and not failure:
            failure = 'worker stopped or died during the trial (retried)'
        writer.writerow([t.number, t.state.name, *values,
                         *[t.params.get(p.key, '') for p in study.parameters],
                         t.user_attrs.get('wall_s', ''), t.user_attrs.get('worker', ''),
                         t.user_attrs.get('sampler_seed', ''), t.user_attrs.get('host', ''),
                         failure])
    write_atomic(path, rows.getvalue())


def summary_text(study: Study, opt, workers: int, wall_s: float, out: Path) -> str:
    from optuna.trial import TrialState
    trials = opt.get_trials(deepcopy=False)
    complete = [t for t in trials if t.state == TrialState.COMPLETE]
    failed = [t for t in trials if t.state == TrialState.FAIL and 'failure' in t.user_attrs]
    stopped = [t for t in trials if t.state == TrialState.FAIL and 'failure' not in t.user_attrs]
    lines = [f"dodo optimize: study '{study.name}' (robot {study.robot}, sampler {study.sampler}"
             f'): {len(complete)} complete, {len(failed)} failed trials'
             + (f', {len(stopped)} stopped by a worker that died or was stopped'
                if stopped else '') + f'; {workers} worker(s) here, {wall_s:.1f} s wall']
    for t in failed[:5]:
        lines.append(f'  trial {t.number} failed: {t.user_attrs["failure"][:300]}')
    if len(failed) > 5:
        lines.append(f'  ... {len(failed) - 5} more failed trials in trials.csv')
    if not complete:
        lines.append('  no complete trial: no best.yaml')
        return '\n'.join(lines)
    best = best_trial(opt, study)
    base = next((t for t in complete if t.number == 0), None)
    for i, obj in enumerate(study.objectives):
        text = (f'  objective {obj.name} ({obj.aggregate} of {obj.metric} over '
                f'{len(obj.scenarios)} scenario(s) x {len(study.perturbations)} '
                f'perturbation(s), {obj.direction}):')
        lines.append(text)
        b = base.values[i] if base is not None else math.nan
        change = (best.values[i] - b) / abs(b) * 100.0 if base is not None and b else math.nan
        lines.append(f'    baseline (trial 0): {b:.6g}   best (trial {best.number}): '
                     f'{best.values[i]:.6g}   ({change:+.1f} %)')
    lines.append(f'  {"parameter":36s} {"baseline":>12s} {"best":>12s}')
    for p in study.parameters:
        bv = base.params.get(p.key, p.baseline) if base is not None else p.baseline
        lines.append(f'  {p.key:36s} {_fmt(bv):>12s} {_fmt(best.params[p.key]):>12s}')
    lines.append('  runs of the best trial:')
    for run in best.user_attrs.get('runs', []):
        what = run.get('failure') or ' '.join(f'{k}={_fmt(v)}' for k, v in run['metrics'].items())
        lines.append(f'    {run["scenario"]} / {run["perturbation"]}: {what}')
    eval_s = sum(t.user_attrs.get('wall_s', 0.0) for t in complete)
    n_runs = len(complete) * study.runs_per_trial
    lines.append(f'  {n_runs} scenario runs, {eval_s:.1f} s of evaluation '
                 f'({n_runs / max(eval_s, 1e-9):.2f} runs/s per worker)')
    lines.append(f'  results in {out}/: best.yaml, history.png, trials.csv, summary.txt')
    return '\n'.join(lines)


def _fmt(value) -> str:
    if isinstance(value, float):
        return f'{value:.6g}'
    return str(value)


def write_results(study: Study, opt, out: Path, workers: int, wall_s: float) -> str:
    from optuna.trial import TrialState
    out.mkdir(parents=True, exist_ok=True)
    trials = opt.get_trials(deepcopy=False)
    complete = [t for t in trials if t.state == TrialState.COMPLETE]
    if complete:
        base = next((t for t in complete if t.number == 0), None)
        # atomic: dodo hop --params-file trusts it later, a torn one could still parse
        write_atomic(out / 'best.yaml', params_file_text(study, best_trial(opt, study), base))
        plot_history(study, trials, out / 'history.png')
    write_trials_csv(study, trials, out / 'trials.csv')
    text = summary_text(study, opt, workers, wall_s, out)
    write_atomic(out / 'summary.txt', text + '\n')
    return text
