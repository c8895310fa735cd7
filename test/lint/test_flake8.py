# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
The ament flake8 test, as ament_python packages carry it (ros2/demos demo_nodes_py).

ament_flake8 with its default configuration (the flake8 plugins ament_lint_common installs,
max-line-length 99, google import order) over every Python file of the package tree; folders
whose name starts with '.' or '_' (.venv, __pycache__) are skipped by ament_flake8 itself.
"""

from pathlib import Path

from ament_flake8.main import main_with_errors
import pytest

PACKAGE_ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.flake8
@pytest.mark.linter
def test_flake8(monkeypatch):
    monkeypatch.chdir(PACKAGE_ROOT)  # ament_flake8 checks the current folder, as under colcon
    rc, errors = main_with_errors(argv=[])
    assert rc == 0, \
        'Found %d code style errors / warnings:\n' % len(errors) + '\n'.join(errors)
