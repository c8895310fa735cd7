# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
The shipped viewer layouts of the hopper.

``config/foxglove_layout.json`` (Foxglove app: 3D view with the URDF, /tf and the controller's
markers — the ground-reaction force arrow at the foot — beside plots of base height and apex, joint
torques, contact force and phase) and ``config/plotjuggler_layout.xml`` (PlotJuggler: the same
plots). Both work on the live stream (``dodo hop --live``, or foxglove_bridge on a ROS install) and
on a bag (docs/viewing.md).

The files are generated from the names of :mod:`dodo_sim.ros.contract` and checked against a
real run's bag by test/tools/test_liveview.py::test_layout_series_exist_in_a_real_bag::

    python -m dodo_sim.tools.layouts --out config/              # write both layouts
    python -m dodo_sim.tools.layouts --preview BAG --png F.png  # the plots, from a bag

The Foxglove layout is built with foxglove-sdk's own layout classes (``foxglove.layouts``), so
its JSON is the format the SDK defines. ``--preview`` draws the layout's plot series from a bag
with matplotlib (the pictures of docs/viewing.md; not a screenshot of either app).
"""
from __future__ import annotations

import argparse
from dataclasses import dataclass
from pathlib import Path
import sys
from xml.sax.saxutils import quoteattr

from dodo_control.slip.outcome import HopMonitor
from dodo_sim.ros import contract

#: /joint_states names of the hopper (urdf/hopper.urdf.xacro: planar base, hip, knee).
HOPPER_JOINTS = ('base_x', 'base_z', 'hip', 'knee')
#: /controller/state names of the SLIP hopper controller, in message order (the layouts index
#: by position: a Foxglove message path cannot pick an array element by a sibling's name): its
#: telemetry, its outcome monitor's channels (dodo_control.slip.outcome), the torques.
HOPPER_STATE = ('t', 'phase', 'hops', 'slip_leg_length_m', 'slip_rest_length_m',
                'angle_of_attack_rad', 'target_x', 'target_velocity', 'apex_height',
                'velocity_setpoint', 'last_apex_height_m', 'last_apex_velocity_mps',
                'energy_injected_j', 'impact_loss_j', 'com_position_x', 'com_position_z',
                'com_velocity_x', 'com_velocity_z', 'foot_position_x', 'foot_position_z',
                'foot_target_x', 'foot_target_z', 'slip_acceleration_x', 'slip_acceleration_z',
                'leg_force_n_x', 'leg_force_n_z', 'torque_saturated',
                *HopMonitor.CHANNELS, 'tau_hip', 'tau_knee', 'config_revision', 'episode')
FOOT_CONTACT = contract.contact_topic('foot')


@dataclass(frozen=True)
class Series:
    """
    One plotted signal: a JointState entry (``topic``, ``name``, ``field``) or a plain field path.

    ``topic`` is the contract (relative) name; a plain field path has ``field`` with dots and
    ``name`` empty.
    """

    label: str
    topic: str
    field: str
    name: str = ''

    def names(self) -> tuple:
        return HOPPER_JOINTS if self.topic == contract.JOINT_STATES else HOPPER_STATE

    def foxglove_path(self, namespace: str = '') -> str:
        topic = contract.resolve(self.topic, namespace)
        if self.name:
            return f'{topic}.{self.field}[{self.names().index(self.name)}]'
        return f'{topic}.{self.field}'

    def plotjuggler_curve(self, namespace: str = '') -> str:
        """Return the name a JointState entry gets in PlotJuggler (``/topic/<name>/<field>``)."""
        topic = contract.resolve(self.topic, namespace)
        if self.name:
            return f'{topic}/{self.name}/{self.field}'
        return f'{topic}/{self.field.replace(".", "/")}'


#: Plot panels: title -> series.
PLOTS = {
    'base height and apex, m': (
        Series('base z', contract.JOINT_STATES, 'position', 'base_z'),
        Series('last apex', contract.CONTROLLER_STATE, 'position', 'last_apex_height_m'),
        Series('apex set-point', contract.CONTROLLER_STATE, 'position', 'apex_height')),
    'joint torques, N m': (
        Series('hip', contract.JOINT_STATES, 'effort', 'hip'),
        Series('knee', contract.JOINT_STATES, 'effort', 'knee')),
    'foot contact force, N': (
        Series('normal (z)', FOOT_CONTACT, 'wrench.force.z'),
        Series('tangential (x)', FOOT_CONTACT, 'wrench.force.x')),
    'phase and hops': (
        Series('phase', contract.CONTROLLER_STATE, 'position', 'phase'),
        Series('hops', contract.CONTROLLER_STATE, 'position', 'hops')),
}


def foxglove_layout(namespace: str = '') -> str:
    """Return the Foxglove layout (JSON, foxglove-sdk's format) of a run in ``namespace``."""
    import foxglove.layouts as fl
    three_d = fl.ThreeDeePanel(title='hopper', config=fl.ThreeDeeConfig(
        follow_tf='body', fixed_frame='world', follow_mode='follow-position',
        layers={'grid': fl.BaseRendererGridLayerSettings(),
                'urdf': fl.BaseRendererUrdfLayerSettings(
                    source_type='topic', topic=contract.resolve(contract.ROBOT_DESCRIPTION,
                                                                namespace),
                    label='hopper')},
        topics={contract.resolve(contract.CONTROLLER_MARKERS, namespace):
                fl.BaseRendererRosMarkerTopicSettings(visible=True)}))

    def plot(title, series):
        return fl.PlotPanel(title=title, config=fl.PlotConfig(show_legend=True, paths=[
            fl.PlotSeries(value=s.foxglove_path(namespace), label=s.label, enabled=True)
            for s in series]))

    plots = [fl.SplitItem(proportion=1, content=plot(title, series))
             for title, series in PLOTS.items()]
    plots.append(fl.SplitItem(proportion=1, content=fl.DiagnosticsSummaryPanel(
        title='diagnostics (command age, rates)')))
    layout = fl.Layout(content=fl.SplitContainer(direction='row', items=[
        fl.SplitItem(proportion=1, content=three_d),
        fl.SplitItem(proportion=1, content=fl.SplitContainer(direction='column',
                                                             items=plots))]))
    return layout.to_json()


def plotjuggler_layout(namespace: str = '') -> str:
    """
    Return the PlotJuggler layout (XML) of a run in ``namespace``: a plot per :data:`PLOTS` entry.

    One tab; the ROS 2 topic subscriber and the MCAP loader preselected.
    """
    colors = ('#1f77b4', '#d62728', '#2ca02c', '#ff7f0e')
    areas = []
    for title, series in PLOTS.items():
        curves = ''.join(f'       <curve name={quoteattr(s.plotjuggler_curve(namespace))} '
                         f'color="{colors[i % len(colors)]}"/>\n'
                         for i, s in enumerate(series))
        areas.append(f'     <DockArea name={quoteattr(title)}>\n'
                     f'      <plot style="Lines" mode="TimeSeries" flip_x="false" '
                     f'flip_y="false">\n'
                     f'       <range left="0" right="1" top="1" bottom="0"/>\n'
                     f'       <limitY/>\n{curves}      </plot>\n     </DockArea>\n')
    topics = sorted({contract.resolve(s.topic, namespace)
                     for series in PLOTS.values() for s in series})
    sizes = ';'.join([f'{1 / len(areas):.6f}'] * len(areas))
    return ("<?xml version='1.0' encoding='UTF-8'?>\n<root>\n"
            ' <tabbed_widget name="Main Window" parent="main_window">\n'
            f'  <Tab tab_name="dodo hop" containers="1">\n   <Container>\n'
            f'    <DockSplitter orientation="-" count="{len(areas)}" sizes="{sizes}">\n'
            + ''.join(areas)
            + '    </DockSplitter>\n   </Container>\n  </Tab>\n'
            '  <currentTabIndex index="0"/>\n </tabbed_widget>\n'
            ' <use_relative_time_offset enabled="1"/>\n'
            ' <Plugins>\n  <plugin ID="DataLoad MCAP"/>\n'
            '  <plugin ID="ROS2 Topic Subscriber">\n'
            '   <use_header_stamp value="false"/>\n'
            '   <discard_large_arrays value="true"/>\n'
            '   <max_array_size value="100"/>\n'
            '   <selected_topics>\n'
            + ''.join(f'    <topic name={quoteattr(t)}/>\n' for t in topics)
            + '   </selected_topics>\n  </plugin>\n </Plugins>\n'
            ' <customMathEquations/>\n <snippets/>\n</root>\n')


#: The RViz properties that name a topic (a display's ``Topic``, RobotModel's ``Description
#: Topic``), each a mapping whose ``Value`` is the topic name.
RVIZ_TOPIC_KEYS = ('Topic', 'Description Topic')


def namespaced_rviz_config(text: str, namespace: str,
                           source: str = 'RViz configuration') -> str:
    """
    Return the RViz configuration ``text`` for a run in ``namespace``.

    Every absolute topic of the ROS contract it names (``/robot_description``,
    ``/controller/markers``, ``/<frame>_contact``, ...) is moved into the namespace, where a
    namespaced run publishes it; other topics are kept. /tf and /tf_static need no change: the
    launch file remaps them for rviz2 (:data:`dodo_sim.ros.contract.NAMESPACE_REMAPS`). The
    root namespace returns ``text`` unchanged. The text is read as YAML at a bounded cost
    (:mod:`dodo_sim.safe_yaml`; ``source`` names it in errors).
    """
    from dodo_sim.safe_yaml import load_yaml
    if not contract.normalize_namespace(namespace):
        return text
    return namespaced_rviz(load_yaml(text, source), namespace)


def namespaced_rviz(config, namespace: str) -> str:
    """Return the text of RViz configuration ``config`` (its YAML data) for ``namespace``."""
    import yaml
    ns = contract.normalize_namespace(namespace)

    def visit(node):
        if isinstance(node, dict):
            for key, value in node.items():
                topic = value.get('Value') if isinstance(value, dict) else None
                if key in RVIZ_TOPIC_KEYS and isinstance(topic, str):
                    if topic.startswith('/') and contract.topic_type(topic[1:]) is not None:
                        value['Value'] = contract.resolve(topic[1:], ns)
                else:
                    visit(value)
        elif isinstance(node, list):
            for item in node:
                visit(item)
    visit(config)
    return (f'# generated by dodo_sim.tools.layouts for a run in namespace {ns}\n'
            + yaml.safe_dump(config, sort_keys=False, default_flow_style=False))


def viewer_files(profile: str, namespace: str = '') -> dict:
    """
    File name -> text of the viewer configurations of a ``dodo <profile>`` run in ``namespace``.

    Every profile: its RViz configuration (graph.PROFILES, ``hop.rviz``, ``walk.rviz``); the
    hopper's also the Foxglove and PlotJuggler layouts (their plots are the hopper's).
    """
    from dodo_sim.paths import share_dir
    from dodo_sim.ros import graph
    rviz = share_dir().joinpath(*graph.profile(profile).rviz_config)
    files = {}
    if profile == 'hop':
        files['foxglove_layout.json'] = foxglove_layout(namespace) + '\n'
        files['plotjuggler_layout.xml'] = plotjuggler_layout(namespace)
    files[rviz.name] = namespaced_rviz_config(rviz.read_text(), namespace, str(rviz))
    return files


def write_viewer_files(directory, profile: str, namespace: str) -> list:
    """Write :func:`viewer_files` into ``directory`` (created); return the paths written."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    written = []
    for name, text in viewer_files(profile, namespace).items():
        (directory / name).write_text(text)
        written.append(directory / name)
    return written


def series_values(bag, series: Series):
    """(Time s, values) of one series in a bag (the stamps of the messages)."""
    from dodo_sim.tools.bag import read_bag
    import numpy as np
    data = read_bag(bag, [series.topic])[series.topic]      # keyed by contract names
    t, v = [], []
    for msg in data.messages:
        stamp = msg.header.stamp
        if series.name:
            names = list(msg.name)
            value = getattr(msg, series.field)[names.index(series.name)]
        else:
            value = msg
            for part in series.field.split('.'):
                value = getattr(value, part)
        t.append(stamp.sec + 1e-9 * stamp.nanosec)
        v.append(float(value))
    return np.asarray(t), np.asarray(v)


def preview(bag, png) -> Path:
    """
    Return the layout's plots drawn from ``bag`` with matplotlib.

    These are docs/viewing.md's pictures.
    """
    import matplotlib
    matplotlib.use('Agg')
    import matplotlib.pyplot as plt
    fig, axes = plt.subplots(len(PLOTS), 1, figsize=(8, 2.2 * len(PLOTS)), sharex=True)
    for ax, (title, series) in zip(axes, PLOTS.items()):
        for s in series:
            t, v = series_values(bag, s)
            ax.plot(t, v, label=s.label, lw=1.0, drawstyle='steps-post'
                    if s.name in ('phase', 'hops') else 'default')
        ax.set_title(title, fontsize=9, loc='left')
        ax.legend(fontsize=7, loc='upper right')
        ax.grid(alpha=0.3)
    axes[-1].set_xlabel('simulated time, s')
    fig.suptitle(f'config/foxglove_layout.json plots, from {Path(bag).name} (matplotlib)',
                 fontsize=9)
    fig.tight_layout()
    Path(png).parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(png, dpi=90)
    plt.close(fig)
    return Path(png)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog='python -m dodo_sim.tools.layouts',
                                     description=__doc__.split('\n\n')[0])
    parser.add_argument('--out', type=Path, help='write both layouts into this directory')
    parser.add_argument('--namespace', default='',
                        help='with --out: the layouts of a run in this ROS namespace')
    parser.add_argument('--preview', type=Path, metavar='BAG', help='draw the plots of a bag')
    parser.add_argument('--png', type=Path, default=Path('layout_preview.png'))
    args = parser.parse_args(argv)
    if args.out:
        args.out.mkdir(parents=True, exist_ok=True)
        (args.out / 'foxglove_layout.json').write_text(foxglove_layout(args.namespace) + '\n')
        (args.out / 'plotjuggler_layout.xml').write_text(plotjuggler_layout(args.namespace))
    if args.preview:
        print(preview(args.preview, args.png))
    return 0


if __name__ == '__main__':
    sys.exit(main())
