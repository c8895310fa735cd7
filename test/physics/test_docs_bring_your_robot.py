# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
The "Bring your robot" example of docs/robots.md runs as it is and prints what the page says.

The example is read from the page (its one ``python`` block), so an edit of the page or of the
API it uses that breaks it fails here.
"""
import re
import subprocess
import sys

from conftest import REPO
from public_robots import robots_dir
import pytest

pytestmark = pytest.mark.slow


def _example() -> tuple[str, str]:
    """Return the page's python block and the output it says the block prints."""
    text = (REPO / 'docs' / 'robots.md').read_text()
    section = text[text.index('## Bring your robot'):]
    code = re.search(r'```python\n(.*?)```', section, re.S).group(1)
    promised = re.search(r'prints `(foot forces z \[.*?\] N; weight [0-9.]+ N)`', section).group(1)
    return code, promised


def test_bring_your_robot_example_prints_what_the_page_says(tmp_path):
    if robots_dir() is None:
        pytest.skip('example-robot-data is not installed (requirements.txt installs it)')
    code, promised = _example()
    script = tmp_path / 'bring_your_robot.py'
    script.write_text(code)
    run = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                         cwd=REPO, timeout=600)
    assert run.returncode == 0, run.stderr[-3000:]
    # the base convention is logged once (INFO) as the page shows
    assert "floating base (base=auto; root link 'base_link' is not attached" in run.stderr
    printed = ' '.join(run.stdout.split())
    assert promised in printed, (promised, printed)
