# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
Storage of ``dodo optimize`` studies: the ``--storage`` URL checked before anything runs.

Journal files with absolute-path locks and a stale-lock check, heartbeats on every storage (RDB:
Optuna's own; journal files: :class:`HeartbeatJournalStorage`), creation that tolerates workers
starting at the same instant, and a per-worker sampler stream that differs across processes and
machines (docs/optimize.md, "Parallel and distributed runs").

A journal is written so that a full disk or a kill never corrupts it for good
(:func:`repair_journal`, the backend of :func:`make_storage`): a write that fails is cut back to
the last whole record, a record torn by a kill is dropped (and said so) before the journal is read
or appended to. A storage that fails mid-study (a database that stops, a full or read-only disk)
is one line, :class:`StorageFailed` (:func:`storage_failure`). Every URL shown is redacted
(:func:`dodo_sim.redact.redact`).
"""
from __future__ import annotations

from dataclasses import dataclass
import errno
import json
import os
from pathlib import Path
import socket
import time
import warnings

from dodo_sim.redact import redact

#: RDB URL schemes Optuna's RDBStorage is documented and tested with (SQLAlchemy dialects)
RDB_SCHEMES = ('sqlite', 'postgresql', 'mysql')
#: attempts at creating tables / the study when several workers start on a fresh storage at once
CREATE_ATTEMPTS = 8
#: the trial system attribute holding a journal trial's last heartbeat (wall clock, s)
HEARTBEAT_ATTR = 'dodo_heartbeat_unix_s'


class StorageError(ValueError):
    """The ``--storage`` URL or file cannot be used; a one-line message."""


class StorageFailed(RuntimeError):
    """The storage failed during a study (the database stopped, the disk is full); one line."""


#: Exit code of a worker process whose storage failed (it printed the one line).
EXIT_STORAGE_FAILED = 3
#: What a journal record starts with (Optuna writes ``json.dumps(log)`` of a dict led by it).
JOURNAL_RECORD_START = b'{"op_code":'


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


def check_storage_url(url: str, write: bool = True) -> str:
    """
    Refuse a storage URL of the wrong shape or without its driver.

    The normalised URL (``journal:ABSOLUTE_PATH`` for a journal file). ``write``: a journal file
    must be writable (a study runs; ``--report-only`` only reads). Messages show the URL redacted.
    """
    if '://' in url:
        import sqlalchemy.engine
        import sqlalchemy.exc
        shown = redact(repr(url))
        try:
            parsed = sqlalchemy.engine.make_url(url)
        except (sqlalchemy.exc.ArgumentError, ValueError) as exc:
            raise StorageError(f'storage URL {shown} is not a database URL: '
                               f'{redact(exc)}') from None
        backend = parsed.get_backend_name()
        if backend not in RDB_SCHEMES:
            raise StorageError(f'storage URL {shown}: unknown database {backend!r}; use '
                               f'{", ".join(s + "://" for s in RDB_SCHEMES)} or journal:PATH')
        try:
            dialect = parsed.get_dialect()
            dialect.import_dbapi() if hasattr(dialect, 'import_dbapi') else dialect.dbapi()
        except (ImportError, sqlalchemy.exc.NoSuchModuleError) as exc:
            raise StorageError(f'storage URL {shown}: the database driver is not installed '
                               f'({exc}); for PostgreSQL use postgresql+psycopg://... '
                               f'(requirements.txt installs psycopg)') from None
        if backend == 'sqlite' and parsed.database:
            _check_sqlite_file(Path(parsed.database))
        return url
    path = Path(url[len('journal:'):] if url.startswith('journal:') else url)
    if not str(path):
        raise StorageError('storage: an empty journal path')
    path = path.expanduser().absolute()
    _check_journal_file(path, write)
    return f'journal:{path}'


def _check_sqlite_file(path: Path) -> None:
    if path.exists() and path.stat().st_size:
        with open(path, 'rb') as fh:
            if fh.read(16) != b'SQLite format 3\x00':
                raise StorageError(f'storage {path} is not an SQLite database')


def _check_journal_file(path: Path, write: bool = True) -> None:
    """
    Refuse a journal file that is not one JSON object per line, or that cannot be written.

    Anything else is refused before Optuna reads it: a binary file gives a long traceback deep
    inside Optuna, a read-only one a traceback at the first trial.
    """
    if path.is_dir():
        raise StorageError(f'storage journal {path} is a directory')
    if write and path.exists():
        try:
            os.close(os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CLOEXEC))
        except OSError as exc:
            raise StorageError(f'storage journal {path} cannot be written '
                               f'({exc.strerror}); a study appends to it: give a writable '
                               f'path, or --report-only to read it') from None
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


# -- a journal that a full disk or a kill never corrupts for good ----------------------------

def _torn_tail_start(fd: int, size: int) -> int:
    """Return where the bytes after the file's last newline start (``size``: none)."""
    end = size
    while end > 0:
        start = max(0, end - (1 << 16))
        block = os.pread(fd, end - start, start)
        newline = block.rfind(b'\n')
        if newline >= 0:
            return start + newline + 1
        end = start
    return 0


def drop_torn_tail(fd: int, path: Path, report) -> int:
    """
    Cut the journal open on ``fd`` back to its last whole record; return its size.

    The bytes after the last newline are a record a full disk or a kill cut mid-line: Optuna
    skips such a line when it is last, and a record appended after it makes a line that no
    reader parses again. ``report(text)`` says what was dropped.
    """
    size = os.fstat(fd).st_size
    keep = _torn_tail_start(fd, size)
    if keep < size:
        os.ftruncate(fd, keep)
        report(f'storage journal {path}: dropped a torn last record ({size - keep} bytes cut '
               f'mid-line by a full disk or a kill); the study goes on from the record before it')
    return keep


def _repaired_lines(data: bytes, path: Path) -> tuple[bytes, int]:
    """
    Return the journal's whole records with damaged lines repaired, and how many were.

    A line that is not a JSON object but ends in a whole record is a torn record with the next
    one appended to it (what resuming on a torn journal wrote before this repair existed): the
    torn prefix is dropped. Any other damage is a :class:`StorageError`.
    """
    out, repaired = [], 0
    for number, line in enumerate(data.splitlines(keepends=True), start=1):
        try:
            if isinstance(json.loads(line), dict):
                out.append(line)
                continue
        except ValueError:
            pass
        start = line.rfind(JOURNAL_RECORD_START)
        try:
            whole = start > 0 and isinstance(json.loads(line[start:]), dict)
        except ValueError:
            whole = False
        if not whole:
            raise StorageError(f'storage journal {path}: line {number} is not a journal record '
                               f'(the file is damaged); move it aside to start a new study, or '
                               f'remove that line to keep the others')
        out.append(line[start:])
        repaired += 1
    return b''.join(out), repaired


def repair_journal(path: Path, lock, report) -> None:
    """
    Make the journal at ``path`` readable and appendable; ``report(text)`` says what changed.

    Holding Optuna's journal ``lock`` (no worker appends meanwhile): a torn last record is dropped
    (:func:`drop_torn_tail`) and damaged lines are repaired (:func:`_repaired_lines`, the file
    then rewritten atomically). A journal that cannot be written (``--report-only`` on a
    read-only file) is left as it is: Optuna skips a torn last line when reading.
    """
    if not path.exists() or path.stat().st_size == 0:
        return
    try:
        fd = os.open(path, os.O_RDWR | os.O_CLOEXEC)
    except OSError:                     # read-only (--report-only): check, read as it is
        data = path.read_bytes()
        whole = data[:data.rfind(b'\n') + 1]
        if _repaired_lines(whole, path)[1]:
            raise StorageError(f'storage journal {path} has damaged records and cannot be '
                               f'repaired (it is read-only): make it writable and rerun') from None
        if len(whole) < len(data):
            report(f'storage journal {path}: its last record is torn ({len(data) - len(whole)} '
                   f'bytes cut mid-line); read without it (the file is read-only)')
        return
    lock.acquire()
    try:
        size = drop_torn_tail(fd, path, report)
        data = os.pread(fd, size, 0)
        fixed, repaired = _repaired_lines(data, path)
        if repaired:
            from dodo_sim.safe_files import write_atomic
            write_atomic(path, fixed)
            report(f'storage journal {path}: repaired {repaired} record(s) that had a torn '
                   f'record in front of them')
    finally:
        lock.release()
        os.close(fd)


def _journal_backend_class():
    from optuna.storages.journal import JournalFileBackend

    class RecoverableJournalFileBackend(JournalFileBackend):
        """
        Optuna's journal file whose appends never leave a torn record behind.

        Under the journal lock: a torn tail (left by a killed writer) is dropped first, the
        records are written, and a write that fails (a full disk) is cut back to where it began
        and raised as :class:`StorageFailed`.
        """

        def __init__(self, path: Path, lock, report):
            super().__init__(str(path), lock_obj=lock)
            self._journal_path = path
            self._journal_lock = lock
            self._report = report

        def append_logs(self, logs) -> None:
            data = ''.join(json.dumps(log, separators=(',', ':')) + '\n' for log in logs)
            self._journal_lock.acquire()
            try:
                fd = os.open(self._journal_path, os.O_RDWR | os.O_APPEND | os.O_CLOEXEC)
                try:
                    size = drop_torn_tail(fd, self._journal_path, self._report)
                    try:
                        view = memoryview(data.encode('utf-8'))
                        while view:
                            view = view[os.write(fd, view):]
                        os.fsync(fd)
                    except OSError as exc:
                        os.ftruncate(fd, size)         # nothing half-written stays
                        raise StorageFailed(journal_failure(self._journal_path, exc)) from None
                finally:
                    os.close(fd)
            finally:
                self._journal_lock.release()

    return RecoverableJournalFileBackend


def journal_failure(path: Path, exc: OSError) -> str:
    """Return the one line of a journal that could not be written."""
    if exc.errno in (errno.ENOSPC, errno.EDQUOT):
        todo = 'free some space'
    elif exc.errno in (errno.EROFS, errno.EACCES, errno.EPERM):
        todo = 'make it writable'
    else:
        todo = 'check the disk'
    return (f'storage journal {path} could not be written ({exc.strerror}): {todo}; nothing '
            f'half-written was left in it, the finished trials are kept and the same command '
            f'resumes the study')


def storage_failure(exc: BaseException, url: str) -> StorageFailed | None:
    """
    Return ``exc`` as a one-line :class:`StorageFailed` if the storage failed, else None.

    A storage fails with a SQLAlchemy error (a database that stopped, a connection that broke;
    Optuna re-raises some as ``StorageInternalError`` saying "invalid data in the commit", which
    misleads: the cause is shown instead) or an OSError of the journal file. The exception's chain
    is searched: Optuna's trial loop can hide a storage error behind an error of its own
    (``UnboundLocalError`` in ``_run_trial`` when telling the trial failed).
    """
    import sqlalchemy.exc
    journal = None
    if '://' not in url:
        journal = Path(url[len('journal:'):] if url.startswith('journal:') else url)
    seen = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        if isinstance(exc, StorageFailed):
            return exc
        if isinstance(exc, sqlalchemy.exc.SQLAlchemyError):
            detail = str(getattr(exc, 'orig', None) or exc).strip().splitlines()
            text = detail[0] if detail else type(exc).__name__
            return StorageFailed(
                f'storage {redact(url)} failed: {redact(text)} (the database stopped or the '
                f'connection broke); the finished trials are kept in it: once it is reachable '
                f'again the same command resumes the study')
        if journal is not None and isinstance(exc, OSError) and (
                exc.filename in (str(journal), journal)
                or exc.errno in (errno.ENOSPC, errno.EDQUOT, errno.EROFS)):
            return StorageFailed(journal_failure(journal, exc))
        exc = exc.__cause__ or exc.__context__
    return None


class OptunaStorageLogFilter:
    """
    Drop Optuna's log records about a failing storage; ``dodo optimize`` says it in one line.

    Optuna logs a storage error raised inside a trial as the trial's failure, with its
    traceback ("Trial N failed ... because of the following error: ..." and "Trial N failed
    with value None"), and retries some queries with "Caught an error from sqlalchemy". Other
    records pass.
    """

    def __init__(self, url: str):
        self.url = url
        self._trials: set = set()

    def __call__(self, record) -> bool:
        """Return whether ``record`` is logged (a logging filter may be any callable)."""
        import re
        text = record.getMessage()
        trial = re.match(r'Trial (\d+) failed', text)
        if record.exc_info and storage_failure(record.exc_info[1], self.url) is not None:
            if trial:
                self._trials.add(trial[1])
            return False
        if trial and trial[1] in self._trials and 'failed with value' in text:
            return False
        return not text.startswith('Caught an error from sqlalchemy')


def quiet_storage_failures_in_optuna_logs(url: str) -> None:
    """
    Install :class:`OptunaStorageLogFilter` on Optuna's log handlers (once per URL).

    Optuna's heartbeat thread (RDB storages) dies with the storage too, and Python prints an
    uncaught thread exception as a traceback: a storage failure there is dropped as well (the
    trial loop meets the same storage and says it in one line); any other thread error is
    printed as before.
    """
    import logging
    import threading

    import optuna
    optuna.logging.get_verbosity()       # makes Optuna set up its handler
    for handler in logging.getLogger('optuna').handlers:
        if not any(isinstance(f, OptunaStorageLogFilter) and f.url == url
                   for f in handler.filters):
            handler.addFilter(OptunaStorageLogFilter(url))
    printed = threading.excepthook
    if getattr(printed, 'storage_url', None) == url:
        return

    def thread_failed(args) -> None:
        if storage_failure(args.exc_value, url) is None:
            printed(args)

    thread_failed.storage_url = url
    threading.excepthook = thread_failed


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
    report = report or (lambda text: None)
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
                    raise StorageError(f'storage {redact(url)}: '
                                       f'{redact(str(exc).splitlines()[0])}') from None
                time.sleep(0.05 * (attempt + 1))    # back off: the other worker is creating
    from optuna.storages.journal import JournalFileSymlinkLock
    path = Path(url[len('journal:'):] if url.startswith('journal:') else url).absolute()
    path.parent.mkdir(parents=True, exist_ok=True)
    release_stale_lock(path, liveness.lock_grace_s, report)
    # an absolute lock path: Optuna's symlink lock points the link at the journal as given, and
    # a relative target makes a dangling link that its stale check cannot stat -- it then spins
    # at 100 % CPU forever instead of releasing the lock after the grace period
    lock = JournalFileSymlinkLock(str(path), grace_period=liveness.lock_grace_s)
    repair_journal(path, lock, report)
    backend = _journal_backend_class()(path, lock, report)
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
