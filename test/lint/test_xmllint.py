# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
XML checks: a PyPI-only stand-in for ament_xmllint (docs/lint.md).

ament_xmllint runs the ``xmllint`` binary (Debian's libxml2-utils, not a PyPI package) and
fetches the schema named by package.xml's xml-model instruction from the network. Here every
XML file of the package (package.xml, the URDF xacros, XML launch files) must be well-formed,
and package.xml is read by catkin_pkg's package.xml parser (what rosdep, bloom and colcon use),
which checks the format 3 rules the schema states and reports no warning.
"""

from pathlib import Path
import xml.etree.ElementTree as ElementTree

from catkin_pkg.package import parse_package
import pytest

PACKAGE_ROOT = Path(__file__).resolve().parents[2]
XML_SUFFIXES = ('.xml', '.xacro', '.urdf', '.sdf', '.xsd', '.launch')


def xml_files():
    """Yield the package's XML files, skipping '.' and '_' folders like ament's linters."""
    for path in sorted(PACKAGE_ROOT.rglob('*')):
        parts = path.relative_to(PACKAGE_ROOT).parts[:-1]
        if path.is_file() and path.name.endswith(XML_SUFFIXES) \
                and not any(part.startswith(('.', '_')) for part in parts):
            yield path


@pytest.mark.linter
@pytest.mark.xmllint
def test_xml_files_are_well_formed():
    files = list(xml_files())
    assert PACKAGE_ROOT / 'package.xml' in files and len(files) >= 4
    problems = []
    for path in files:
        try:
            ElementTree.parse(path)
        except ElementTree.ParseError as error:
            problems.append(f'{path.relative_to(PACKAGE_ROOT)}: {error}')
    assert not problems, '\n'.join(problems)


@pytest.mark.linter
@pytest.mark.xmllint
def test_package_xml_is_valid_format_3():
    warnings = []
    package = parse_package(str(PACKAGE_ROOT / 'package.xml'), warnings=warnings)
    package.validate(warnings=warnings)
    assert package.package_format == 3
    assert package.name == 'dodo_sim'
    assert not warnings, '\n'.join(warnings)
    schema = ElementTree.parse(PACKAGE_ROOT / 'package.xml')  # the xml-model instruction
    assert b'package_format3.xsd' in (PACKAGE_ROOT / 'package.xml').read_bytes()
    assert schema.getroot().get('format') == '3'
