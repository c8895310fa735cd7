# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
The real Foxglove WebSocket client of the tests: Foxglove's npm packages, run with node.

``@foxglove/ws-protocol`` (FoxgloveClient, the protocol library of the Foxglove app),
``@foxglove/rosmsg`` (parses the advertised ros2msg schemas), ``@foxglove/rosmsg2-serialization``
(CDR) and ``ws`` (node 20 has no global WebSocket), pinned. Installed once into
``~/.cache/dodo_sim/npm-foxglove-<hash>`` (later runs reuse it); a test skips the client only when
node/npm are missing or the registry cannot be reached. The scripts that use them:
test/foxglove_npm_client.js (watches), test/foxglove_npm_actions.js (acts on a run).
"""
from __future__ import annotations

import hashlib
import os
from pathlib import Path
import re
import shutil
import subprocess

#: the real client's npm packages, pinned
NPM_PACKAGES = ('@foxglove/ws-protocol@0.8.0', '@foxglove/rosmsg@5.0.5',
                '@foxglove/rosmsg2-serialization@3.1.0', 'ws@8.23.0')
#: npm error codes that mean "no registry here", the only reason to skip the real client
NPM_OFFLINE_RE = re.compile(r'\b(ENOTFOUND|EAI_AGAIN|ECONNREFUSED|ECONNRESET|ETIMEDOUT|'
                            r'ENETUNREACH|EHOSTUNREACH)\b')


def npm_client() -> tuple[Path | None, str]:
    """
    Install the real client's npm packages once (cached); (node_modules dir, '') or (None, why).

    Installed into a fresh directory renamed into place when complete, so a run interrupted
    mid-install or two test runs at once never leave a half-installed cache.
    """
    node, npm = shutil.which('node'), shutil.which('npm')
    if node is None or npm is None:
        return None, 'node/npm not installed: the npm Foxglove client cannot run'
    cache = Path(os.environ.get('XDG_CACHE_HOME') or Path.home() / '.cache') / 'dodo_sim'
    key = hashlib.sha256(' '.join(NPM_PACKAGES).encode()).hexdigest()[:12]
    target = cache / f'npm-foxglove-{key}'
    if (target / 'installed').exists():
        return target / 'node_modules', ''
    partial = cache / f'npm-foxglove-{key}.partial-{os.getpid()}'
    shutil.rmtree(partial, ignore_errors=True)
    partial.mkdir(parents=True)
    proc = subprocess.run(
        [npm, 'install', '--no-audit', '--no-fund', '--no-save', '--prefix', str(partial),
         '--fetch-retries=1', '--fetch-timeout=30000', *NPM_PACKAGES],
        stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=300)
    if proc.returncode != 0:
        shutil.rmtree(partial, ignore_errors=True)
        offline = NPM_OFFLINE_RE.search(proc.stdout + proc.stderr)
        if offline:
            return None, (f'npm registry unreachable ({offline.group(1)}): cannot install '
                          f'the real Foxglove client {" ".join(NPM_PACKAGES)}')
        raise RuntimeError(f'npm install {NPM_PACKAGES} failed:\n{proc.stdout}{proc.stderr}')
    (partial / 'installed').write_text(' '.join(NPM_PACKAGES) + '\n')
    try:
        partial.rename(target)
    except OSError:                      # another run installed it first
        shutil.rmtree(partial, ignore_errors=True)
    return target / 'node_modules', ''


def start_npm_client(node_modules: Path, script: str, *args: str) -> subprocess.Popen:
    """Start test/``script`` with node and ``args``; it prints one JSON document on stdout."""
    env = dict(os.environ, NODE_PATH=str(node_modules))
    path = Path(__file__).resolve().parent / script
    return subprocess.Popen(['node', str(path), *args], stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, text=True)
