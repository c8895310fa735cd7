# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
The shipped viewer layouts are the generated ones.

The generator is dodo_sim.tools.layouts. That their series exist in a real run's bag is checked by
test_liveview.py::test_layout_series_exist_in_a_real_bag.
"""
import json
import xml.dom.minidom

from conftest import REPO
from dodo_sim.tools import layouts


def test_shipped_layouts_are_generated_from_the_contract():
    fox = (REPO / 'config' / 'foxglove_layout.json').read_text()
    assert fox == layouts.foxglove_layout() + '\n'
    pj = (REPO / 'config' / 'plotjuggler_layout.xml').read_text()
    assert pj == layouts.plotjuggler_layout()


def test_layouts_parse_and_name_the_topics():
    fox = json.loads((REPO / 'config' / 'foxglove_layout.json').read_text())
    text = json.dumps(fox)
    for path in ('/joint_states.position[1]', '/robot_description', '/controller/markers',
                 '/foot_contact.wrench.force.z'):
        assert path in text
    doc = xml.dom.minidom.parse(str(REPO / 'config' / 'plotjuggler_layout.xml'))
    curves = [c.getAttribute('name') for c in doc.getElementsByTagName('curve')]
    assert '/joint_states/base_z/position' in curves and '/foot_contact/wrench/force/z' in curves
