# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
Build the ROS interface packages PyPI lacks and install them into the venv (docs/interfaces.md).

::

    .venv/bin/python -m dodo_sim.tools.build_interfaces     # the README's install line runs it

``tf2_msgs`` (``TFMessage``: live ``/tf``) and ``simulation_interfaces`` (the kilted line, 1.6.1:
the ROS 2 simulation standard) have no wheel. Their definitions are in ``interfaces/`` (written
from the standard's field lists, wire-identical: ``test/ros/test_interfaces_wire.py`` compares the
type hashes with the official ones). Each is configured with CMake against the ``ros-kilted-*``
generator wheels of the venv (ament_cmake, rosidl), built with Ninja and the system's C/C++
compiler (the C and Python type supports only: ``interfaces/c_and_python_generators.cmake``)
and installed into the venv as a wheel lays out its data: libraries in ``<venv>/lib`` (found
through the ros wheels' ``LD_LIBRARY_PATH`` bootstrap), the Python package in site-packages,
``share/<package>`` and the ament index.

Idempotent: a stamp in ``share/<package>/`` holds a hash of what the build depends on (the
sources, this module, the Python version, the versions of the ``ros-*``, ``cmake`` and ``ninja``
distributions) and the list of installed files; a package whose stamp matches and whose files
are all there is left alone (well under a second). A rebuild first removes the files the previous
build installed. Bounded: the whole run stops after ``--timeout`` s (default 1800; measured: ~100
CPU-s for both packages, docs/interfaces.md). A failed build keeps its build directory and log
and names them; exit 1. Bad input or a missing compiler: one ``error:`` line, exit 2.
"""
from __future__ import annotations

import argparse
import fcntl
import hashlib
import importlib.metadata
import json
import os
from pathlib import Path
import resource
import shutil
import signal
import subprocess
import sys
import sysconfig
import tempfile
import time
from typing import Sequence

PROG = 'dodo build_interfaces'
#: the packages of ``interfaces/``, in build order, with the modules an install must import
PACKAGES = {
    'tf2_msgs': ('tf2_msgs.msg',),
    'simulation_interfaces': ('simulation_interfaces.msg', 'simulation_interfaces.srv',
                              'simulation_interfaces.action'),
}
STAMP_NAME = 'dodo_sim_build.json'
#: files of ``interfaces/`` every package's CMakeLists uses
SHARED_FILES = ('c_and_python_generators.cmake', 'imported_include_dirs.cmake')
DEFAULT_TIMEOUT_S = 1800.0


class BuildError(RuntimeError):
    """The build of a package failed; the message says where its log is."""


def interfaces_dir() -> Path:
    """``interfaces/`` beside the sources (source checkout, editable install) or in the share."""
    from dodo_sim.paths import share_dir
    return share_dir() / 'interfaces'


def _distribution_versions() -> list[str]:
    """``name==version`` of the distributions the generated code and the build depend on."""
    found = set()
    for dist in importlib.metadata.distributions():
        name = (dist.metadata['Name'] or '').lower()
        # ros-kilted-* are empty wheels that require the ros-* ones holding the code
        if (name.startswith('ros-') and not name.startswith('ros-kilted-')) or name in (
                'cmake', 'ninja', 'numpy'):
            found.add(f'{name}=={dist.version}')
    return sorted(found)


def build_key(source: Path, package: str) -> str:
    """Return the hash of everything ``package``'s build depends on."""
    digest = hashlib.sha256()
    files = {str(p.relative_to(source)): p for p in sorted((source / package).rglob('*'))
             if p.is_file()}
    files.update({name: source / name for name in SHARED_FILES})
    files['build_interfaces.py'] = Path(__file__)
    for name, path in files.items():
        digest.update(name.encode() + b'\0' + path.read_bytes() + b'\0')
    digest.update(sys.version.encode() + sysconfig.get_platform().encode())
    for line in _distribution_versions():
        digest.update(line.encode() + b'\n')
    return digest.hexdigest()


def _stamp_path(prefix: Path, package: str) -> Path:
    return prefix / 'share' / package / STAMP_NAME


def _read_stamp(prefix: Path, package: str) -> dict:
    try:
        stamp = json.loads(_stamp_path(prefix, package).read_text())
    except (OSError, ValueError):
        return {}
    return stamp if isinstance(stamp, dict) else {}


def up_to_date(prefix: Path, package: str, key: str) -> bool:
    """Return whether ``package`` was installed into ``prefix`` by a build of ``key``."""
    stamp = _read_stamp(prefix, package)
    files = stamp.get('files')
    return stamp.get('key') == key and isinstance(files, list) and bool(files) and all(
        os.path.lexists(f) for f in files)


def _remove_installed(prefix: Path, package: str) -> None:
    """Remove the files the previous build of ``package`` installed (a stale stamp's list)."""
    for name in _read_stamp(prefix, package).get('files', []):
        path = Path(name)
        if prefix in path.parents and (path.is_file() or path.is_symlink()):
            path.unlink()


def _tool(name: str) -> str | None:
    """``name`` from the venv's bin (the pinned PyPI wheels), else from PATH."""
    beside = Path(sys.executable).parent / name
    return str(beside) if beside.is_file() else shutil.which(name)


def check_toolchain() -> dict:
    """Return the paths of cmake, ninja and the compilers; ValueError names what is missing."""
    tools = {name: _tool(name) for name in ('cmake', 'ninja')}
    tools['cc'] = shutil.which(os.environ.get('CC', 'cc')) or shutil.which('gcc')
    tools['c++'] = shutil.which(os.environ.get('CXX', 'c++')) or shutil.which('g++')
    missing = [name for name, path in tools.items() if path is None]
    if missing:
        raise ValueError(f'{", ".join(missing)} not found: cmake and ninja come with '
                         f'requirements.txt, the C and C++ compilers from the system '
                         f'(Debian/Ubuntu: sudo apt install g++)')
    header = Path(sysconfig.get_paths()['include']) / 'Python.h'
    if not header.is_file():
        raise ValueError(f'{header} not found: the Python headers are needed for the Python '
                         f'extension (Debian/Ubuntu: sudo apt install python3-dev)')
    return tools


def _run(command: list, log, env: dict, deadline: float, what: str) -> None:
    """Run ``command`` with its output in ``log``; BuildError on failure or past ``deadline``."""
    log.write(f'$ {" ".join(command)}\n')
    log.flush()
    process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, env=env,
                               start_new_session=True)
    try:
        process.wait(timeout=max(1.0, deadline - time.monotonic()))
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()
        raise BuildError(f'{what} was stopped: the build took longer than --timeout')
    if process.returncode:
        raise BuildError(f'{what} failed (exit {process.returncode})')


def build_package(source: Path, package: str, prefix: Path, tools: dict, jobs: int,
                  deadline: float) -> list[str]:
    """Configure, build and install ``package`` into ``prefix``; return the installed files."""
    build = Path(tempfile.mkdtemp(prefix=f'dodo_{package}_'))
    env = dict(os.environ)
    # only the venv: a sourced ROS install must not mix its packages into this build
    env['AMENT_PREFIX_PATH'] = str(prefix)
    env['CMAKE_PREFIX_PATH'] = str(prefix)
    env['PATH'] = f'{Path(sys.executable).parent}{os.pathsep}{env.get("PATH", "")}'
    log_path = build / 'build.log'
    with open(log_path, 'w') as log:
        try:
            _run([tools['cmake'], '-S', str(source / package), '-B', str(build / 'build'),
                  '-G', 'Ninja', f'-DCMAKE_MAKE_PROGRAM={tools["ninja"]}',
                  f'-DCMAKE_C_COMPILER={tools["cc"]}', f'-DCMAKE_CXX_COMPILER={tools["c++"]}',
                  f'-DCMAKE_INSTALL_PREFIX={prefix}', f'-DCMAKE_PREFIX_PATH={prefix}',
                  '-DCMAKE_BUILD_TYPE=Release', '-DBUILD_TESTING=OFF',
                  f'-DPython3_EXECUTABLE={sys.executable}',
                  f'-DCMAKE_PROJECT_INCLUDE={source / "imported_include_dirs.cmake"}'],
                 log, env, deadline, f'configuring {package}')
            _run([tools['cmake'], '--build', str(build / 'build'), '--', f'-j{jobs}'],
                 log, env, deadline, f'building {package}')
            _remove_installed(prefix, package)
            _run([tools['cmake'], '--install', str(build / 'build'), '--strip'],
                 log, env, deadline, f'installing {package}')
        except BuildError as exc:
            log.flush()
            tail = log_path.read_text().splitlines()[-30:]
            raise BuildError('\n'.join(tail + [f'{exc}: log {log_path} (build directory '
                                               f'{build} kept)'])) from None
    manifest = (build / 'build' / 'install_manifest.txt').read_text().split()
    shutil.rmtree(build, ignore_errors=True)
    return manifest


def _check_import(package: str) -> None:
    """Import the installed modules in a fresh interpreter (its own library path bootstrap)."""
    code = '; '.join(f'import {module}' for module in PACKAGES[package])
    result = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True,
                            timeout=120)
    if result.returncode:
        raise BuildError(f'{package} was installed but does not import: '
                         f'{result.stderr.strip().splitlines()[-1:]}')


def build_all(prefix: Path, source: Path, packages: Sequence[str], force: bool, jobs: int,
              timeout_s: float, out=sys.stdout) -> None:
    """Build and install what is not up to date (every package of ``packages`` with ``force``)."""
    deadline = time.monotonic() + timeout_s
    tools = None
    (prefix / 'share').mkdir(parents=True, exist_ok=True)
    with open(prefix / 'share' / '.dodo_build_interfaces.lock', 'w') as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)       # two installs at once build each package once
        for package in packages:
            key = build_key(source, package)
            if not force and up_to_date(prefix, package, key):
                print(f'{PROG}: {package} up to date in {prefix}', file=out)
                continue
            tools = tools or check_toolchain()
            started, cpu = time.monotonic(), resource.getrusage(resource.RUSAGE_CHILDREN)
            files = build_package(source, package, prefix, tools, jobs, deadline)
            if prefix == Path(sys.prefix).absolute():
                _check_import(package)
            stamp = _stamp_path(prefix, package)
            stamp.write_text(json.dumps({'key': key, 'files': files + [str(stamp)]},
                                        indent=1))
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            cpu_s = (after.ru_utime - cpu.ru_utime) + (after.ru_stime - cpu.ru_stime)
            print(f'{PROG}: {package} built and installed into {prefix} in '
                  f'{time.monotonic() - started:.1f} s (CPU {cpu_s:.1f} s)', file=out)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog=PROG, description=__doc__.split('\n\n')[0])
    parser.add_argument('--prefix', type=Path, default=None,
                        help='install prefix (default: the venv of this Python)')
    parser.add_argument('--packages', nargs='+', choices=tuple(PACKAGES),
                        default=list(PACKAGES), help='build only these')
    parser.add_argument('--force', action='store_true', help='build even when up to date')
    parser.add_argument('--jobs', type=int, default=os.cpu_count() or 2,
                        help='parallel compile jobs (default: the number of cores)')
    parser.add_argument('--timeout', type=float, default=DEFAULT_TIMEOUT_S,
                        help=f'give up after this many seconds (default {DEFAULT_TIMEOUT_S:g})')
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        if args.prefix is None and sys.prefix == sys.base_prefix:
            raise ValueError('run it with the Python of a venv (README: .venv/bin/python -m '
                             'dodo_sim.tools.build_interfaces) or give --prefix')
        if args.jobs < 1 or not args.timeout > 0:
            raise ValueError('--jobs must be >= 1 and --timeout > 0')
        prefix = (args.prefix or Path(sys.prefix)).absolute()
        source = interfaces_dir()
        if not (source / 'tf2_msgs' / 'package.xml').is_file():
            raise ValueError(f'no interface sources in {source}')
    except ValueError as exc:
        print(f'{PROG}: error: {exc}', file=sys.stderr)
        return 2
    try:
        build_all(prefix, source, args.packages, args.force, args.jobs, args.timeout)
    except ValueError as exc:
        print(f'{PROG}: error: {exc}', file=sys.stderr)
        return 2
    except BuildError as exc:
        print(f'{PROG}: error: {exc}', file=sys.stderr)
        return 1
    return 0


if __name__ == '__main__':
    sys.exit(main())
