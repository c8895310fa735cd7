# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""The ament pep257 test (docstring conventions), as ament_python packages carry it."""

from pathlib import Path

from ament_pep257.main import main
import pytest

PACKAGE_ROOT = Path(__file__).resolve().parent.parent


# Known failing until the last docstrings are rewritten by hand (24 findings on 2026-11-25:
# summaries too long, capitalisation of 'CoG', signatures; docs/lint.md). strict: once it
# passes, this marker makes the run fail until it is removed.
@pytest.mark.xfail(strict=True, reason='24 ament_pep257 findings left to fix by hand')
@pytest.mark.linter
@pytest.mark.pep257
def test_pep257(monkeypatch):
    monkeypatch.chdir(PACKAGE_ROOT)  # as under colcon; pydocstyle skips '.'/'_' folders
    rc = main(argv=['.', 'test'])
    assert rc == 0, 'Found code style errors / warnings'
