# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""The optimiser tests' study files and the two-worker run they share (docs/optimize.md)."""
from __future__ import annotations

from pathlib import Path
import textwrap

from dodo_sim.tools import optimize
from dodo_sim.tools.optimize_run import open_study
from dodo_sim.tools.optimize_study import load_study


def write(tmp_path: Path, text: str, name: str = 'study.yaml') -> Path:
    """Write a study file (``text`` dedented) into ``tmp_path``; return its path."""
    path = tmp_path / name
    path.write_text(textwrap.dedent(text))
    return path


def run_two_workers(tmp: Path, study_text: str) -> dict:
    """
    Run ``dodo optimize`` on ``study_text`` with two worker processes on one journal file.

    Returns the exit code, the loaded study, the output directory and the Optuna study
    reopened from the journal (``code``, ``study``, ``out``, ``opt``).
    """
    study = write(tmp, study_text)
    out = tmp / 'out'
    storage = f'journal:{tmp / "shared.journal"}'
    code = optimize.main([str(study), '--workers', '2', '--storage', storage, '--out', str(out),
                          '--no-progress'])
    opt = open_study(load_study(study), storage, create=False)
    return {'code': code, 'study': load_study(study), 'out': out, 'opt': opt}
