# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
The params-file reference is made from the parameters' one definition and kept current.

docs/parameters.md is the output of ``python -m dodo_sim.tools.params_doc``: units, bounds and
allowed values from the config dataclasses' field metadata, descriptions from their docstrings.
"""
from pathlib import Path

from dodo_sim.tools import params_doc

REPO = Path(__file__).resolve().parents[2]


def test_docs_parameters_md_is_the_current_reference():
    """Before: a field added or changed without regenerating the page (run the command above)."""
    assert params_doc.main(['--check', str(REPO / 'docs' / 'parameters.md')]) == 0


def test_a_stale_reference_is_reported(tmp_path, capsys):
    stale = tmp_path / 'parameters.md'
    stale.write_text(params_doc.reference_text().replace('| `dt` | `0.001` |', '| `dt` | `1` |'))
    assert params_doc.main(['--check', str(stale)]) == 1
    assert 'stale' in capsys.readouterr().err


def test_rows_carry_the_fields_unit_bounds_and_choices():
    text = params_doc.reference_text()
    assert '| `dt` | `0.001` | s | > 0 |' in text
    assert '| `restitution` | `0.0` | - | [0, 1] |' in text
    assert '| `integrator` | `timestepping` |  | timestepping \\| event |' in text


def test_every_parameter_of_every_section_is_described():
    rows = [line for line in params_doc.reference_text().splitlines()
            if line.startswith('| `')]
    assert len(rows) > 100
    assert [row for row in rows if row.rstrip().endswith('|  |')] == []
