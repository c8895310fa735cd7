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
                *HopMonitor.CHANNELS, 'tau_hip', 'tau_knee', 'config_revision')
FOOT_CONTACT = contract.resolve(contract.contact_topic('foot'))
JOINT_STATES_TOPIC = contract.resolve(contract.JOINT_STATES)
CONTROLLER_STATE_TOPIC = contract.resolve(contract.CONTROLLER_STATE)
ROBOT_DESCRIPTION_TOPIC = contract.resolve(contract.ROBOT_DESCRIPTION)
CONTROLLER_MARKERS_TOPIC = contract.resolve(contract.CONTROLLER_MARKERS)


@dataclass(frozen=True)
class Series:
    """
    One plotted signal: a JointState entry (``topic``, ``name``, ``field``) or a plain field path.

    A plain field path has ``field`` with dots and ``name`` empty.
    """

    label: str
    topic: str
    field: str
    name: str = ''

    def names(self) -> tuple:
        return HOPPER_JOINTS if self.topic == JOINT_STATES_TOPIC else HOPPER_STATE

    def foxglove_path(self) -> str:
        if self.name:
            return f'{self.topic}.{self.field}[{self.names().index(self.name)}]'
        return f'{self.topic}.{self.field}'

    def plotjuggler_curve(self) -> str:
        """Return the name a JointState entry gets in PlotJuggler (``/topic/<name>/<field>``)."""
        if self.name:
            return f'{self.topic}/{self.name}/{self.field}'
        return f'{self.topic}/{self.field.replace(".", "/")}'


#: Plot panels: title -> series.
PLOTS = {
    'base height and apex, m': (
        Series('base z', JOINT_STATES_TOPIC, 'position', 'base_z'),
        Series('last apex', CONTROLLER_STATE_TOPIC, 'position', 'last_apex_height_m'),
        Series('apex set-point', CONTROLLER_STATE_TOPIC, 'position', 'apex_height')),
    'joint torques, N m': (
        Series('hip', JOINT_STATES_TOPIC, 'effort', 'hip'),
        Series('knee', JOINT_STATES_TOPIC, 'effort', 'knee')),
    'foot contact force, N': (
        Series('normal (z)', FOOT_CONTACT, 'wrench.force.z'),
        Series('tangential (x)', FOOT_CONTACT, 'wrench.force.x')),
    'phase and hops': (
        Series('phase', CONTROLLER_STATE_TOPIC, 'position', 'phase'),
        Series('hops', CONTROLLER_STATE_TOPIC, 'position', 'hops')),
}


def foxglove_layout() -> str:
    """Return the Foxglove layout (JSON, foxglove-sdk's layout format)."""
    import foxglove.layouts as fl
    three_d = fl.ThreeDeePanel(title='hopper', config=fl.ThreeDeeConfig(
        follow_tf='body', fixed_frame='world', follow_mode='follow-position',
        layers={'grid': fl.BaseRendererGridLayerSettings(),
                'urdf': fl.BaseRendererUrdfLayerSettings(
                    source_type='topic', topic=ROBOT_DESCRIPTION_TOPIC, label='hopper')},
        topics={CONTROLLER_MARKERS_TOPIC: fl.BaseRendererRosMarkerTopicSettings(
            visible=True)}))

    def plot(title, series):
        return fl.PlotPanel(title=title, config=fl.PlotConfig(show_legend=True, paths=[
            fl.PlotSeries(value=s.foxglove_path(), label=s.label, enabled=True)
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


def plotjuggler_layout() -> str:
    """
    Return the PlotJuggler layout (XML): one tab, a plot per :data:`PLOTS` entry.

    The ROS 2 topic subscriber and the MCAP loader preselected.
    """
    colors = ('#1f77b4', '#d62728', '#2ca02c', '#ff7f0e')
    areas = []
    for title, series in PLOTS.items():
        curves = ''.join(f'       <curve name={quoteattr(s.plotjuggler_curve())} '
                         f'color="{colors[i % len(colors)]}"/>\n'
                         for i, s in enumerate(series))
        areas.append(f'     <DockArea name={quoteattr(title)}>\n'
                     f'      <plot style="Lines" mode="TimeSeries" flip_x="false" '
                     f'flip_y="false">\n'
                     f'       <range left="0" right="1" top="1" bottom="0"/>\n'
                     f'       <limitY/>\n{curves}      </plot>\n     </DockArea>\n')
    topics = sorted({s.topic for series in PLOTS.values() for s in series})
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


def series_values(bag, series: Series):
    """(Time s, values) of one series in a bag (the stamps of the messages)."""
    from dodo_sim.tools.bag import read_bag
    import numpy as np
    topic = contract.relative_name(series.topic)       # the bag readers' key
    data = read_bag(bag, [topic])[topic]
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
    parser.add_argument('--preview', type=Path, metavar='BAG', help='draw the plots of a bag')
    parser.add_argument('--png', type=Path, default=Path('layout_preview.png'))
    args = parser.parse_args(argv)
    if args.out:
        args.out.mkdir(parents=True, exist_ok=True)
        (args.out / 'foxglove_layout.json').write_text(foxglove_layout() + '\n')
        (args.out / 'plotjuggler_layout.xml').write_text(plotjuggler_layout())
    if args.preview:
        print(preview(args.preview, args.png))
    return 0


if __name__ == '__main__':
    sys.exit(main())
