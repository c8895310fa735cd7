# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
Every file, test and module the docs name exists (issue 33, "Docs that stay true").

Read as data from ``docs/*.md``, ``README.md`` and the examples' READMEs: each inline code span

* ``path/in/the/repo.ext`` whose first folder is one of the repository's (or of ``dodo_sim/``,
  as the docs write ``tools/plot.py`` for ``dodo_sim/tools/plot.py``) must be a file or folder,
  and a ``file.py::name`` (a test, a function, a class) must define ``name`` there;
* ``dodo_sim.x.y`` / ``dodo_control.x.y`` must be a module, or a name a module defines.

Nothing is imported: a name is looked up in its module's text. Spans that name something
outside this repository (another project's files, the old module names a migration note lists)
are in :data:`NOT_HERE`, each with its reason.
"""
from __future__ import annotations

from pathlib import Path
import re

REPO = Path(__file__).resolve().parents[2]
DOCS = sorted((REPO / 'docs').glob('*.md')) + [REPO / 'README.md'] + sorted(
    (REPO / 'examples').glob('*/README.md'))
#: what the .gitignore keeps out of the repository (user runs, build output)
IGNORED = {'runs', 'build', 'install', 'log'}
TOP = {p.name for p in REPO.iterdir()
       if p.is_dir() and not p.name.startswith('.') and p.name not in IGNORED
       and not p.name.endswith('.egg-info')}

#: (doc, span) -> why it names nothing of this repository
NOT_HERE = {
    ('hardware.md', 'docs/_static/can-protocol.csv'): "odriverobotics/ODrive's protocol table",
    ('hardware.md', 'tools/odrive-cansimple.dbc'): "odriverobotics/ODrive's DBC",
    ('physics.md', 'dodo_sim.timestepping'): 'a module name the migration note says is gone',
}
#: the entry-point group of controller plugins (dodo_control.registry.GROUP): a name, no module
ENTRY_POINT_GROUP = 'dodo_sim.controllers'

CODE_SPAN = re.compile(r'`([^`\n]+)`')
PATH = re.compile(r'^([\w.-]+(?:/[\w.-]+)+)(?:::([\w\[\]\-.]+))?$')
MODULE = re.compile(r'^((?:dodo_sim|dodo_control)(?:\.\w+)+)(?:\(\))?$')


def spans():
    """(doc, line number, span) of every inline code span of the docs."""
    for doc in DOCS:
        for number, line in enumerate(doc.read_text(encoding='utf-8').splitlines(), 1):
            for match in CODE_SPAN.finditer(line):
                yield doc, number, match.group(1).strip()


def defines(path: Path, name: str) -> bool:
    """Return whether the Python file ``path`` defines or imports ``name`` (as text)."""
    pattern = (rf'^\s*(?:async\s+)?(?:def|class)\s+{re.escape(name)}\b'
               rf'|^\s*{re.escape(name)}\s*[:=]|\bimport\b.*\b{re.escape(name)}\b')
    return re.search(pattern, path.read_text(encoding='utf-8'), re.M) is not None


def module_file(parts: list) -> Path | None:
    """Return the file of module ``parts`` (``a.b`` -> a/b.py or a/b/__init__.py), else None."""
    base = REPO.joinpath(*parts)
    for candidate in (base.with_suffix('.py'), base / '__init__.py'):
        if candidate.is_file():
            return candidate
    return None


def problem(doc: Path, span: str) -> str | None:
    """Return what is wrong with one span (None: fine or not a reference)."""
    if (doc.name, span) in NOT_HERE or span == ENTRY_POINT_GROUP:
        return None
    found = PATH.match(span)
    if found and found.group(1).split('/')[0] in TOP:
        relative, names = found.groups()
        path = next((p for p in (REPO / relative, REPO / 'dodo_sim' / relative)
                     if p.exists()), None)
        if path is None:
            return 'no such file or folder'
        if names and path.suffix == '.py':
            name = names.split('[')[0].split('.')[-1]
            if not defines(path, name):
                return f'{path.relative_to(REPO)} does not define {name}'
        return None
    found = MODULE.match(span)
    if found:
        parts = found.group(1).split('.')
        for cut in range(len(parts), 0, -1):
            path = module_file(parts[:cut])
            if path is not None:
                rest = parts[cut:]
                if rest and not defines(path, rest[0]):
                    return f'{path.relative_to(REPO)} does not define {rest[0]}'
                return None
        return 'no such module'
    return None


def test_every_file_test_and_module_the_docs_name_exists():
    wrong = [f'{doc.relative_to(REPO)}:{number}: `{span}`: {why}'
             for doc, number, span in spans()
             for why in (problem(doc, span),) if why is not None]
    assert not wrong, '\n'.join(wrong)


def test_the_check_catches_a_missing_file_test_and_module():
    doc = REPO / 'docs' / 'bags.md'
    assert problem(doc, 'dodo_sim/tools/no_such_tool.py') == 'no such file or folder'
    assert 'does not define test_nothing' in problem(
        doc, 'test/lint/test_docs_references.py::test_nothing')
    assert 'does not define no_such_module' in problem(doc, 'dodo_sim.no_such_module')
    assert 'does not define nothing_here' in problem(doc, 'dodo_sim.tools.plot.nothing_here')
    assert problem(doc, 'tools/plot.py') is None              # dodo_sim/tools/plot.py
    assert problem(doc, 'dodo_sim.tools.plot.plot_bag') is None
    assert problem(doc, 'runs/my_hop') is None                # a user's folder, not ours
