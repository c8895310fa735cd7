# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
A private ROS 2 domain per ``dodo hop`` run, so that two runs on one machine never mix.

A run holds an exclusive ``flock`` on ``<lock dir>/domain-<id>.lock`` for its whole life (the
lock dies with the process, even on SIGKILL; the file stays and is reused). The lock directory is
``$XDG_RUNTIME_DIR/dodo_sim`` if that is set, else ``<temp dir>/dodo_sim-<uid>``; it is private
(:func:`dodo_sim.safe_files.private_dir`: created 0700, refused when it is a symlink, another
user's or writable by others, since in a shared ``/tmp`` another user could create it first) and
a lock file is opened without following a symlink (``O_NOFOLLOW``) and written only when it is a
regular file of this user: a planted symlink never makes a run overwrite the file it points to.

* No explicit domain: the first id of the range (``DODO_HOP_DOMAINS=lo:hi``, default
  :data:`DEFAULT_RANGE`) that no other ``dodo hop`` holds *and* on which no DDS participant of
  this machine is seen (any process: an old run's orphans, another user's nodes, a test) is
  taken.
* An explicit domain (``ROS_DOMAIN_ID`` or ``dodo hop --domain-id``) is used only if no other
  ``dodo hop`` holds it; otherwise :class:`DomainUnavailable` names the holder. Participants
  already there (e.g. the user's ``ros2 topic echo``) are reported, not refused.
* An explicit domain with a namespace (``dodo hop --namespace left --domain-id 7``): runs in
  different namespaces share the domain (a shared lock on the domain, an exclusive one on the
  namespace); a run without a namespace never shares.

Participants are seen through the UDP ports of the RTPS well-known port mapping (the default of
Fast DDS and Cyclone DDS): domain ``d`` uses ports ``7400 + 250 d`` to ``7400 + 250 d + 249``;
the sockets bound on them are read from ``/proc/net/udp`` and ``/proc/net/udp6`` (Linux; elsewhere
only the locks count). Pure Python, no rclpy.
"""
from __future__ import annotations

from dataclasses import dataclass, field
import errno
import fcntl
import os
from pathlib import Path
import tempfile

from dodo_sim.safe_files import open_private_file, private_dir, UnsafePathError

#: Domain ids tried when none is given: 0 (everybody's default) is left out; above ~101 the
#: RTPS ports of a domain reach the ephemeral port range of Linux.
DEFAULT_RANGE = (1, 101)
#: Environment variable narrowing the automatic choice, ``lo:hi`` (inclusive).
RANGE_ENV = 'DODO_HOP_DOMAINS'
#: Largest domain id ROS 2 accepts on Linux.
MAX_DOMAIN_ID = 232
#: RTPS well-known ports: port base PB and domain gain DG.
PORT_BASE, DOMAIN_GAIN = 7400, 250


class DomainUnavailable(ValueError):
    """No usable ROS domain id; the message says why and what to do."""


def lock_dir() -> Path:
    """
    Directory of the per-domain lock files (created on demand, private to the user).

    :class:`DomainUnavailable` if it is not safe (a symlink, another user's, writable by others).
    """
    runtime = os.environ.get('XDG_RUNTIME_DIR')
    if runtime and Path(runtime).is_dir():
        path = Path(runtime) / 'dodo_sim'
    else:
        path = Path(tempfile.gettempdir()) / f'dodo_sim-{os.getuid()}'
    try:
        return private_dir(path)
    except UnsafePathError as exc:
        raise DomainUnavailable(f'lock directory {exc}') from None


def parse_domain_id(text: str, source: str) -> int:
    """Return an explicit domain id, checked (``source`` names where it came from)."""
    try:
        value = int(str(text).strip())
    except ValueError:
        raise DomainUnavailable(f'{source} = {text!r} is not a ROS domain id '
                                f'(an integer 0..{MAX_DOMAIN_ID})') from None
    if not 0 <= value <= MAX_DOMAIN_ID:
        raise DomainUnavailable(f'{source} = {value} is outside 0..{MAX_DOMAIN_ID}')
    return value


def domain_range(environ=None) -> tuple[int, int]:
    """Return the automatic range (``DODO_HOP_DOMAINS=lo:hi`` or :data:`DEFAULT_RANGE`)."""
    text = (environ if environ is not None else os.environ).get(RANGE_ENV, '')
    if not text:
        return DEFAULT_RANGE
    try:
        low, high = (int(x) for x in text.split(':'))
    except ValueError:
        raise DomainUnavailable(f'{RANGE_ENV} = {text!r}: expected lo:hi, e.g. 40:69') from None
    if not 0 <= low <= high <= MAX_DOMAIN_ID:
        raise DomainUnavailable(f'{RANGE_ENV} = {text!r}: need 0 <= lo <= hi <= {MAX_DOMAIN_ID}')
    return low, high


def domain_ports(domain_id: int) -> range:
    """UDP ports of the RTPS well-known port mapping that participants of a domain bind."""
    start = PORT_BASE + DOMAIN_GAIN * domain_id
    return range(start, start + DOMAIN_GAIN)


def bound_udp_ports() -> set[int] | None:
    """Local UDP ports bound on this machine (None where /proc/net/udp is not readable)."""
    ports: set[int] = set()
    seen = False
    for table in ('/proc/net/udp', '/proc/net/udp6'):
        try:
            lines = Path(table).read_text().splitlines()[1:]
        except OSError:
            continue
        seen = True
        for line in lines:
            parts = line.split()
            if len(parts) > 1 and ':' in parts[1]:
                ports.add(int(parts[1].rsplit(':', 1)[1], 16))
    return ports if seen else None


def sockets_in_domain(domain_id: int, ports: set[int] | None = None) -> int:
    """Count the local UDP ports bound in the domain's RTPS port range (0 if unknown)."""
    ports = bound_udp_ports() if ports is None else ports
    if not ports:
        return 0
    return len(ports.intersection(domain_ports(domain_id)))


@dataclass
class DomainLease:
    """A held domain id; :meth:`release` (or process exit) frees it."""

    domain_id: int
    path: Path
    fd: int = field(repr=False)
    explicit: bool = False
    #: sockets of other participants seen in the domain when it was taken (explicit ids only)
    foreign_sockets: int = 0

    #: a namespaced run's shared lock on the domain (-1: none)
    shared_fd: int = field(default=-1, repr=False)

    def release(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)      # closing the descriptor drops the flock
            self.fd = -1
        if self.shared_fd >= 0:
            os.close(self.shared_fd)
            self.shared_fd = -1

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.release()


def _try_lock(domain_id: int, directory: Path, shared: bool = False, suffix: str = ''
              ) -> tuple[int, Path] | tuple[None, str]:
    """
    Lock a domain's file (``shared``: a shared lock, several namespaced runs at once).

    Returns (fd, path), or (None, text naming the holder).
    """
    path = directory / f'domain-{domain_id}{suffix}.lock'
    try:
        fd = open_private_file(path)        # never through a symlink, only a file of ours
    except UnsafePathError as exc:
        raise DomainUnavailable(f'lock file {exc}') from None
    try:
        fcntl.flock(fd, (fcntl.LOCK_SH if shared else fcntl.LOCK_EX) | fcntl.LOCK_NB)
    except OSError as exc:
        if exc.errno not in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
            os.close(fd)
            raise
        try:
            holder = os.pread(fd, 200, 0).decode(errors='replace').strip()
        finally:
            os.close(fd)
        return None, holder or 'another process'
    if not shared:
        os.ftruncate(fd, 0)
        os.pwrite(fd, f'dodo hop pid {os.getpid()}\n'.encode(), 0)
    return fd, path


def _reserve_namespace(explicit: int, namespace: str, directory: Path) -> DomainLease:
    """
    Return an explicit domain shared by namespaced runs.

    A shared lock on the domain (a run in the root namespace, which takes it exclusively, cannot
    join) and an exclusive one on the namespace (two runs cannot be the same robot).
    """
    fd, path = _try_lock(explicit, directory, shared=True)
    if fd is None:
        raise DomainUnavailable(f'ROS domain {explicit} is in use by a run without a namespace '
                                f'({path}); give every run sharing a domain its own --namespace')
    tag = namespace.strip('/').replace('/', '.')
    ns_fd, ns_path = _try_lock(explicit, directory, suffix=f'-ns-{tag}')
    if ns_fd is None:
        os.close(fd)
        raise DomainUnavailable(f'namespace {namespace} in ROS domain {explicit} is in use by '
                                f'another run ({ns_path}); choose another --namespace')
    lease = DomainLease(explicit, ns_path, ns_fd, explicit=True,
                        foreign_sockets=sockets_in_domain(explicit))
    lease.shared_fd = fd
    return lease


def reserve(explicit: int | None = None, environ=None, namespace: str = '') -> DomainLease:
    """
    Take a domain id for one run (see module docs); raise :class:`DomainUnavailable`.

    ``namespace`` (``/left``): with an explicit domain, runs in different namespaces share it
    (DESIGN.md section 3); without one the run still gets a private domain.
    """
    directory = lock_dir()
    if explicit is not None and namespace:
        return _reserve_namespace(explicit, namespace, directory)
    if explicit is not None:
        fd, path = _try_lock(explicit, directory)
        if fd is None:
            raise DomainUnavailable(
                f'ROS domain {explicit} is in use by another run ({path}); unset ROS_DOMAIN_ID '
                f'to get a free private domain, or choose another id')
        return DomainLease(explicit, path, fd, explicit=True,
                           foreign_sockets=sockets_in_domain(explicit))
    low, high = domain_range(environ)
    ports = bound_udp_ports()
    for domain_id in range(low, high + 1):
        if sockets_in_domain(domain_id, ports):
            continue
        fd, path = _try_lock(domain_id, directory)
        if fd is not None:
            return DomainLease(domain_id, path, fd)
    raise DomainUnavailable(f'no free ROS domain in {low}..{high} (each is held by another '
                            f'dodo hop or has DDS participants on this machine); set '
                            f'{RANGE_ENV}=lo:hi or ROS_DOMAIN_ID')


__all__ = ['DomainLease', 'DomainUnavailable', 'reserve', 'parse_domain_id', 'domain_range',
           'domain_ports', 'sockets_in_domain', 'bound_udp_ports', 'lock_dir', 'DEFAULT_RANGE',
           'RANGE_ENV']
