# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
Storage of ``dodo optimize`` studies: the ``--storage`` URL checked before anything runs.

Journal files with absolute-path locks and a stale-lock check, heartbeats on every storage (RDB:
Optuna's own; journal files: :class:`HeartbeatJournalStorage`), creation that tolerates workers
starting at the same instant, and a per-worker sampler stream that differs across processes and
machines (docs/optimize.md, "Parallel and distributed runs").
"""
from __future__ import annotations

from dataclasses import dataclass
import json
import os
from pathlib import Path
import socket
import time
import warnings

#: RDB URL schemes Optuna's RDBStorage is documented and tested with (SQLAlchemy dialects)
RDB_SCHEMES = ('sqlite', 'postgresql', 'mysql')
#: attempts at creating tables / the study when several workers start on a fresh storage at once
CREATE_ATTEMPTS = 8
#: the trial system attribute holding a journal trial's last heartbeat (wall clock, s)
HEARTBEAT_ATTR = 'dodo_heartbeat_unix_s'


class StorageError(ValueError):
    """The ``--storage`` URL or file cannot be used; a one-line message."""


@dataclass(frozen=True)
class Liveness:
    """
    Heartbeat settings of every worker on a storage.

    Fields:
        heartbeat_s: interval between a running trial's heartbeats, s (>= 1).
        grace_s: a RUNNING trial without a heartbeat for this long is stale (its worker died):
            it is marked FAIL and its parameters are retried once, s.
        lock_grace_s: a journal lock file not renewed for this long is stale (its holder died):
            reported and removed, s.
    """

    heartbeat_s: int = 10
    grace_s: int = 30
    lock_grace_s: int = 30


def check_storage_url(url: str) -> str:
    """
    Refuse a storage URL of the wrong shape or without its driver.

    The normalised URL (``journal:ABSOLUTE_PATH`` for a journal file).
    """
    if '://' in url:
        import sqlalchemy.engine
        import sqlalchemy.exc
        try:
            parsed = sqlalchemy.engine.make_url(url)
        except (sqlalchemy.exc.ArgumentError, ValueError) as exc:
            raise StorageError(f'storage URL {url!r} is not a database URL: {exc}') from None
        backend = parsed.get_backend_name()
        if backend not in RDB_SCHEMES:
            raise StorageError(f'storage URL {url!r}: unknown database {backend!r}; use '
                               f'{", ".join(s + "://" for s in RDB_SCHEMES)} or journal:PATH')
        try:
            dialect = parsed.get_dialect()
            dialect.import_dbapi() if hasattr(dialect, 'import_dbapi') else dialect.dbapi()
        except (ImportError, sqlalchemy.exc.NoSuchModuleError) as exc:
            raise StorageError(f'storage URL {url!r}: the database driver is not installed '
                               f'({exc}); for PostgreSQL use postgresql+psycopg://... '
                               f'(requirements.txt installs psycopg)') from None
        if backend == 'sqlite' and parsed.database:
            _check_sqlite_file(Path(parsed.database))
        return url
    path = Path(url[len('journal:'):] if url.startswith('journal:') else url)
    if not str(path):
        raise StorageError('storage: an empty journal path')
    path = path.expanduser().absolute()
    _check_journal_file(path)
    return f'journal:{path}'


def _check_sqlite_file(path: Path) -> None:
    if path.exists() and path.stat().st_size:
        with open(path, 'rb') as fh:
            if fh.read(16) != b'SQLite format 3\x00':
                raise StorageError(f'storage {path} is not an SQLite database')


def _check_journal_file(path: Path) -> None:
    """
    Refuse a journal file that is not one JSON object per line.

    Anything else is refused before Optuna reads it: a binary file gives a long traceback deep
    inside Optuna.
    """
    if path.is_dir():
        raise StorageError(f'storage journal {path} is a directory')
    if not path.exists() or path.stat().st_size == 0:
        return
    with open(path, 'rb') as fh:
        first = fh.readline(1 << 20)
    try:
        if not isinstance(json.loads(first.decode('utf-8')), dict):
            raise ValueError
    except ValueError:
        raise StorageError(f'storage {path} is not an Optuna journal file (its first line is '
                           f'not a JSON object); give another path') from None


def lock_path(journal: Path) -> Path:
    """Return the symlink lock Optuna's JournalFileSymlinkLock makes next to the journal."""
    return journal.with_name(journal.name + '.lock')


def release_stale_lock(journal: Path, grace_s: float, report) -> bool:
    """
    Remove a stale journal lock file; True if one was removed.

    Remove the journal's lock file when nobody renewed it for ``grace_s`` (a process killed while
    holding it); ``report(text)`` says so. True if one was removed.
    """
    lock = lock_path(journal)
    try:
        age_s = time.time() - os.lstat(lock).st_mtime
    except FileNotFoundError:
        return False
    if age_s < grace_s:
        report(f'journal lock {lock} is held (renewed {age_s:.0f} s ago); waiting for it '
               f'(a holder dead for {grace_s:.0f} s is detected and the lock released)')
        return False
    try:
        os.unlink(lock)
    except FileNotFoundError:
        return False
    report(f'removed a stale journal lock {lock} ({age_s:.0f} s old: left by a killed run)')
    return True


def _journal_storage_class():
    import optuna
    from optuna.storages._heartbeat import BaseHeartbeat
    from optuna.trial import TrialState

    class HeartbeatJournalStorage(optuna.storages.JournalStorage, BaseHeartbeat):
        """
        Optuna's journal storage with heartbeats (Optuna gives them to RDB storages only).

        A running trial's worker writes the wall-clock time into a trial system attribute every
        ``heartbeat_s``; a RUNNING trial whose last one is older than ``grace_s`` is stale.
        """

        def __init__(self, backend, liveness: Liveness, stale_callback):
            super().__init__(backend)
            self._liveness = liveness
            self._stale_callback = stale_callback

        def record_heartbeat(self, trial_id: int) -> None:
            self.set_trial_system_attr(trial_id, HEARTBEAT_ATTR, time.time())

        def _get_stale_trial_ids(self, study_id: int) -> list[int]:
            now = time.time()
            return [t._trial_id for t in self.get_all_trials(study_id, deepcopy=False,
                                                             states=(TrialState.RUNNING,))
                    if now - t.system_attrs.get(HEARTBEAT_ATTR, now) > self._liveness.grace_s]

        def get_heartbeat_interval(self) -> int | None:
            return self._liveness.heartbeat_s

        def get_heartbeat_stale_trial_callback(self):
            return self._stale_callback

    return HeartbeatJournalStorage


def make_storage(url: str, liveness: Liveness = Liveness(), report=None):
    """
    Return an Optuna storage with heartbeats and a stale-trial retry.

    From a URL checked by :func:`check_storage_url`. Several workers may call this at once on a
    fresh database.
    """
    import optuna
    import optuna.storages as storages

    # heartbeats and the stale-trial retry are "experimental" in Optuna since 2.8; used as
    # documented, and the warning would print once per worker process
    warnings.filterwarnings('ignore', category=optuna.exceptions.ExperimentalWarning)
    # a trial whose worker died is retried once with its parameters (the rollout is
    # deterministic, so more retries would only repeat a crash the point itself causes);
    # Optuna 4.9 renamed the callback
    retry = getattr(storages, 'RetryHeartbeatStaleTrialCallback',
                    getattr(storages, 'RetryFailedTrialCallback', None))(max_retry=1)
    if '://' in url:
        import sqlalchemy.exc
        for attempt in range(CREATE_ATTEMPTS):
            try:
                return optuna.storages.RDBStorage(
                    url, heartbeat_interval=liveness.heartbeat_s, grace_period=liveness.grace_s,
                    heartbeat_stale_trial_callback=retry,
                    engine_kwargs={'pool_pre_ping': True} if not url.startswith('sqlite') else {})
            except sqlalchemy.exc.SQLAlchemyError as exc:
                # workers starting together on a fresh database race to create its tables
                # ("table studies already exists"): the loser finds them made on a retry
                if attempt == CREATE_ATTEMPTS - 1:
                    raise StorageError(f'storage {url}: {str(exc).splitlines()[0]}') from None
                time.sleep(0.05 * (attempt + 1))    # back off: the other worker is creating
    from optuna.storages.journal import JournalFileBackend, JournalFileSymlinkLock
    path = Path(url[len('journal:'):] if url.startswith('journal:') else url).absolute()
    path.parent.mkdir(parents=True, exist_ok=True)
    release_stale_lock(path, liveness.lock_grace_s, report or (lambda text: None))
    # an absolute lock path: Optuna's symlink lock points the link at the journal as given, and
    # a relative target makes a dangling link that its stale check cannot stat -- it then spins
    # at 100 % CPU forever instead of releasing the lock after the grace period
    backend = JournalFileBackend(str(path), lock_obj=JournalFileSymlinkLock(
        str(path), grace_period=liveness.lock_grace_s))
    return _journal_storage_class()(backend, liveness, retry)


def join_study(storage, study_name: str) -> int:
    """
    Return a number for this worker, unique across every process and machine on the storage.

    The worker creates a trial in a side study ``<study>/workers`` (an atomic operation on every
    storage) and takes its number. The first worker to join gets 0, the next 1, ...; the study seed
    plus this number is the worker's sampler stream.
    """
    import optuna
    from optuna.trial import TrialState
    registry = optuna.create_study(storage=storage, study_name=f'{study_name}/workers',
                                   load_if_exists=True)
    trial_id = storage.create_new_trial(registry._study_id)
    number = storage.get_trial_number_from_id(trial_id)
    storage.set_trial_user_attr(trial_id, 'host', socket.gethostname())
    storage.set_trial_user_attr(trial_id, 'pid', os.getpid())
    storage.set_trial_state_values(trial_id, TrialState.COMPLETE, [float(number)])
    return number


def sampler_seed(study_seed: int, worker_number: int) -> int:
    """
    Return the sampler seed of the worker that joined ``worker_number``-th.

    A stream of the study seed (numpy SeedSequence), so workers draw independent points and a study
    re-run with the same seed and join order repeats its samples.
    """
    import numpy as np
    return int(np.random.SeedSequence([study_seed, worker_number]).generate_state(1)[0])
