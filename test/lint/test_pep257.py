# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""The ament pep257 test (docstring conventions), as ament_python packages carry it."""

from pathlib import Path

from ament_pep257.main import main
import pytest

PACKAGE_ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.linter
@pytest.mark.pep257
def test_pep257(monkeypatch):
    monkeypatch.chdir(PACKAGE_ROOT)  # as under colcon; pydocstyle skips '.'/'_' folders
    rc = main(argv=['.', 'test'])
    assert rc == 0, 'Found code style errors / warnings'
