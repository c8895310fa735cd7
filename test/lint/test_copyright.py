# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
Copyright and license notices: a stand-in for ament_copyright (docs/lint.md).

ament_copyright is not installable here (no wheel on PyPI), so this test checks what it
checks, from the package's own source of truth: package.xml's <license> (an SPDX identifier).
Every Python file opens (after an optional #! line) with ``# Copyright <year> <holder>`` and
``# SPDX-License-Identifier: <package.xml's license>``, the holder is the LICENSE file's, and
the LICENSE file is the text of that license.
"""

from pathlib import Path
import re
import xml.etree.ElementTree as ElementTree

import pytest

PACKAGE_ROOT = Path(__file__).resolve().parents[2]
# First line of the license text for each SPDX identifier this package may declare.
LICENSE_TITLES = {
    'BSD-3-Clause': 'BSD 3-Clause License',
    'Apache-2.0': 'Apache License',
    'MIT': 'MIT License',
}


def declared_license():
    """Return package.xml's <license>, the one license the package declares."""
    licenses = ElementTree.parse(PACKAGE_ROOT / 'package.xml').getroot().findall('license')
    assert len(licenses) == 1, 'package.xml declares one license'
    return licenses[0].text.strip()


def license_holder():
    """Return the copyright holder named in the LICENSE file."""
    text = (PACKAGE_ROOT / 'LICENSE').read_text()
    match = re.search(r'^Copyright \(c\) \d{4}(?:-\d{4})?, (.+)$', text, re.MULTILINE)
    assert match, 'LICENSE names a copyright holder'
    return match.group(1).strip()


def python_files():
    """Yield the package's Python files, skipping '.' and '_' folders like ament's linters."""
    for path in sorted(PACKAGE_ROOT.rglob('*.py')):
        parts = path.relative_to(PACKAGE_ROOT).parts[:-1]
        if not any(part.startswith(('.', '_')) for part in parts):
            yield path


def notice_problem(path, holder, license_id):
    """Return what is wrong with the notice at the top of one file, or None."""
    lines = path.read_text().splitlines()
    if lines and lines[0].startswith('#!'):
        lines = lines[1:]
    head = lines[:2]
    if len(head) < 2 or not re.fullmatch(rf'# Copyright \d{{4}}(-\d{{4}})? {re.escape(holder)}',
                                         head[0]):
        return f'no "# Copyright <year> {holder}" first line'
    if head[1] != f'# SPDX-License-Identifier: {license_id}':
        return f'second line is not "# SPDX-License-Identifier: {license_id}"'
    return None


@pytest.mark.copyright
@pytest.mark.linter
def test_license_file_matches_package_xml():
    license_id = declared_license()
    assert license_id in LICENSE_TITLES, f'unknown license {license_id!r} in package.xml'
    first_line = (PACKAGE_ROOT / 'LICENSE').read_text().splitlines()[0].strip()
    assert first_line == LICENSE_TITLES[license_id]


@pytest.mark.copyright
@pytest.mark.linter
def test_copyright():
    holder, license_id = license_holder(), declared_license()
    files = list(python_files())
    assert len(files) > 50  # the walk found the package, not an empty folder
    problems = [f'{path.relative_to(PACKAGE_ROOT)}: {problem}' for path in files
                if (problem := notice_problem(path, holder, license_id))]
    assert not problems, 'Files without the copyright notice (tools/lint_fix.py --only ' \
        'copyright adds it):\n' + '\n'.join(problems)
