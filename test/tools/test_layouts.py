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


def _rviz_topics(text: str) -> dict:
    """Display name -> the topic it subscribes to, of an RViz configuration."""
    import yaml
    displays = yaml.safe_load(text)['Visualization Manager']['Displays']
    return {d['Name']: d[key]['Value'] for d in displays
            for key in layouts.RVIZ_TOPIC_KEYS if key in d}


def test_rviz_configs_show_the_contact_wrenches_of_the_robots_contact_frames():
    """
    Check the Wrench displays (``rviz_default_plugins/Wrench``, WrenchStamped) of hop/walk.rviz.

    The class name is the one in ros2/rviz rviz_default_plugins/plugins_description.xml.
    """
    import yaml
    for name, frames in (('hop', ('foot',)), ('walk', ('left_foot', 'right_foot'))):
        text = (REPO / 'config' / f'{name}.rviz').read_text()
        wrenches = {d['Topic']['Value'] for d in yaml.safe_load(text)['Visualization Manager'][
            'Displays'] if d['Class'] == 'rviz_default_plugins/Wrench'}
        assert wrenches == {f'/{frame}_contact' for frame in frames}


def test_rviz_config_follows_the_namespace_for_the_contract_topics_only():
    text = (REPO / 'config' / 'hop.rviz').read_text()
    assert layouts.namespaced_rviz_config(text, '') == text
    user = text.replace('Value: /controller/markers', 'Value: /map_markers')
    topics = _rviz_topics(layouts.namespaced_rviz_config(user, 'left/front'))
    assert topics == {'RobotModel': '/left/front/robot_description',
                      'SLIP markers': '/map_markers',              # not a topic of the robot
                      'foot contact wrench': '/left/front/foot_contact'}


def test_viewer_files_of_a_namespace_name_its_topics_only():
    import re
    files = layouts.viewer_files('hop', 'lv')
    assert set(files) == {'foxglove_layout.json', 'plotjuggler_layout.xml', 'hop.rviz'}
    fox = json.loads(files['foxglove_layout.json'])
    paths = re.findall(r'"(/[^"]+)"', json.dumps(fox))
    assert paths and all(p.startswith('/lv/') for p in paths), paths
    doc = xml.dom.minidom.parseString(files['plotjuggler_layout.xml'])
    names = [c.getAttribute('name') for tag in ('curve', 'topic')
             for c in doc.getElementsByTagName(tag)]
    assert names and all(n.startswith('/lv/') for n in names), names
    assert set(layouts.viewer_files('walk', 'lv')) == {'walk.rviz'}   # the plots are the hopper's
