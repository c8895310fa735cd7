# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""The optimiser tests' study files and the two-worker run they share (docs/optimize.md)."""
from __future__ import annotations

from pathlib import Path
import shutil
import tempfile
import textwrap

from dodo_sim.tools import optimize
from dodo_sim.tools.optimize_run import open_study
from dodo_sim.tools.optimize_study import load_study
import pytest


def postgres_server():
    """Yield a PostgreSQL server of the pgserver wheel on a unix socket in a temp directory."""
    pgserver = pytest.importorskip('pgserver')
    # as root, pgserver runs the server as its own user, which must reach the data directory
    # (pytest's temporary directories are private to root)
    data = Path(tempfile.mkdtemp(prefix='dodo-optimize-pg-'))
    data.chmod(0o755)
    server = pgserver.get_server(data, cleanup_mode='stop')
    yield server
    server.cleanup()
    shutil.rmtree(data, ignore_errors=True)


def postgres_url(server, database: str) -> str:
    """Create ``database`` on ``server``; return its SQLAlchemy URL (psycopg 3)."""
    server.psql(f'CREATE DATABASE {database};')
    uri = server.get_uri(database)                        # postgresql://postgres:@/db?host=/dir
    return uri.replace('postgresql://', 'postgresql+psycopg://', 1)


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


def two_worker_run_fixture(study_text: str, tmp_name: str):
    """Return a module fixture: ``study_text`` run once by :func:`run_two_workers`."""
    @pytest.fixture(scope='module')
    def short_run(tmp_path_factory):
        """Return the short study run once with two worker processes on one journal file."""
        return run_two_workers(tmp_path_factory.mktemp(tmp_name), study_text)
    return short_run


def assert_both_workers_joined(run: dict) -> None:
    """
    Check that both worker processes of ``run`` joined its study.

    One trial each in the study's worker registry, from two processes. Whether the second one
    evaluated a trial before the first had done them all depends on the machine's load.
    """
    import optuna
    registry = optuna.load_study(storage=run['opt']._storage,
                                 study_name=f'{run["study"].name}/workers')
    assert sorted(t.number for t in registry.trials) == [0, 1]
    assert len({t.user_attrs['pid'] for t in registry.trials}) == 2


def finished_two_worker_trials(run: dict) -> tuple:
    """
    Check a two-worker run ended well and return its complete trials and its baseline (trial 0).

    Exit code 0 (a worker's non-zero exit fails the study), both workers joined, and every
    complete trial was evaluated by one of them.
    """
    assert run['code'] == 0
    assert_both_workers_joined(run)
    trials = [t for t in run['opt'].trials if t.state.name == 'COMPLETE']
    assert {t.user_attrs['worker'] for t in trials} <= {0, 1}
    return trials, next(t for t in trials if t.number == 0)


def assert_refused_before_any_trial(tmp_path: Path, capsys, study_text: str, message: str) -> None:
    """
    Check ``dodo optimize`` refuses a study file before any trial.

    Exit code 2, ``message`` on stderr without a traceback, and no output folder (nothing ran,
    no storage was created).
    """
    from dodo_sim.tools import optimize
    study = write(tmp_path, study_text)
    out = tmp_path / 'out'
    assert optimize.main([str(study), '--out', str(out), '--no-progress']) == 2
    err = capsys.readouterr().err
    assert message in err
    assert 'Traceback' not in err
    assert not out.exists()
