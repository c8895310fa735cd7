# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
The open controller registry, in process (no DDS, nothing pip-installed).

Entry points of ``dodo_sim.controllers`` come from the distributions on ``sys.path``, so a test
puts one there: a ``.dist-info`` directory (what pip writes) whose entry point names the example
plugin's class (``examples/plugin_controller``, importable from its source directory). Shown:
the shipped controllers are entry points of dodo_sim itself; an installed distribution adds a
controller (its name, class, distribution and version); ``module:Class`` selects an importable
class; an unknown name or a class that is not a hosted controller is one line naming the
installed controllers or the missing method; a name read from a bag never imports a module;
``dodo replay --through-controller`` rebuilds the recorded controller when it is installed (same
class, |dtau| = 0; a version difference is a warning) and otherwise refuses with one line,
never comparing against another controller; ``dodo optimize`` runs a study naming a plugin
controller through the generic scenarios of ``dodo_control/scenarios/hosted.py``.
"""
from __future__ import annotations

from importlib import metadata
import json
import sys

from conftest import REPO
from dodo_control import registry
import pytest

EXAMPLE = REPO / 'examples' / 'plugin_controller'
PLUGIN_CLASS = 'dodo_hopper_pd.controller:HopperPD'
#: the test distribution's entry point name (not the example's own ``hopper_pd``: that one may
#: be pip-installed by test/ros/test_plugin_example.py at the same time)
PLUGIN = 'hopper_pd_test'


def write_distribution(where, name: str, version: str, entry_points: dict) -> None:
    """Write a distribution's metadata like pip (``<name>-<version>.dist-info``)."""
    info = where / f'{name.replace("-", "_")}-{version}.dist-info'
    info.mkdir(parents=True)
    (info / 'METADATA').write_text(f'Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n')
    (info / 'entry_points.txt').write_text(
        '[dodo_sim.controllers]\n' + ''.join(f'{k} = {v}\n' for k, v in entry_points.items()))


@pytest.fixture
def example_importable(monkeypatch):
    """Make the example plugin's package importable from its source directory (not installed)."""
    monkeypatch.syspath_prepend(str(EXAMPLE))


@pytest.fixture
def plugin_installed(tmp_path, monkeypatch, example_importable):
    """Install a distribution ``dodo-hopper-pd-test`` 0.3.0: entry point ``hopper_pd_test``."""
    write_distribution(tmp_path / 'site', 'dodo-hopper-pd-test', '0.3.0', {PLUGIN: PLUGIN_CLASS})
    monkeypatch.syspath_prepend(str(tmp_path / 'site'))
    return tmp_path / 'site'


@pytest.fixture
def bad_classes(tmp_path, monkeypatch):
    """Put a module ``bad_controllers`` with classes that are no hosted controllers on sys.path."""
    (tmp_path / 'bad').mkdir()
    (tmp_path / 'bad' / 'bad_controllers.py').write_text("""
from dataclasses import dataclass


@dataclass(frozen=True)
class Config:
    gain: float = 1.0


@dataclass
class Mutable:
    gain: float = 1.0


@dataclass(frozen=True)
class NoDefault:
    gain: float


@dataclass(frozen=True)
class NodeName:
    min_subscribers: int = 1


class NoUpdate:
    config_class = Config

    def reconfigure(self, config):
        pass


class NoConfig:
    def update(self, t, q, v, f):
        return q

    def reconfigure(self, config):
        pass


class WithConfig(NoConfig):
    config_class = Config


class MutableConfig(NoConfig):
    config_class = Mutable


class NoDefaultConfig(NoConfig):
    config_class = NoDefault


class NodeParameterConfig(NoConfig):
    config_class = NodeName
""")
    monkeypatch.syspath_prepend(str(tmp_path / 'bad'))


# -- the group ----------------------------------------------------------------------------------

def test_the_shipped_controllers_are_entry_points_of_dodo_sim():
    """One mechanism: dodo_sim declares its three in the group a plugin uses (setup.py)."""
    eps = {ep.name: ep for ep in metadata.entry_points(group='dodo_sim.controllers')}
    expected = {'slip_hopper': 'dodo_control.controller:Controller',
                'kneed_walker': 'dodo_control.walker.controller:WalkerController',
                'joint_hold': 'dodo_control.joint.controller:JointController'}
    for name, value in expected.items():
        # the metadata spells the name dodo_sim or dodo-sim, as the installing setuptools does
        dist = eps[name].dist.name
        assert eps[name].value == value and dist.replace('-', '_') == 'dodo_sim', eps
        entry = registry.controller_entry(name)
        assert entry.identity() == {'name': name, 'class': value, 'distribution': dist,
                                    'version': metadata.version('dodo_sim')}
    assert not hasattr(registry, 'CONTROLLERS')          # no closed tuple
    assert set(expected) <= set(registry.controller_names())


def test_an_installed_distribution_adds_a_controller(plugin_installed, urdf_path):
    from dodo_hopper_pd.controller import HopperPD, HopperPDConfig
    assert PLUGIN in registry.controller_names()
    entry = registry.controller_entry(PLUGIN)
    assert entry.cls is HopperPD and entry.config_class() is HopperPDConfig
    assert entry.identity() == {'name': PLUGIN, 'class': PLUGIN_CLASS,
                                'distribution': 'dodo-hopper-pd-test', 'version': '0.3.0'}
    ctrl = entry.build(str(urdf_path), HopperPDConfig())
    assert ctrl.actuated_joint_names == ('hip', 'knee') and ctrl.contact_frames == ('foot',)
    assert entry.runtime_parameters() == tuple(
        n for n in ('leg_length_m', 'stiffness_n_m', 'damping_n_s_m', 'thrust_n',
                    'flight_kp_n_m', 'flight_kd_n_s_m', 'target_velocity_m_s',
                    'velocity_gain_s', 'velocity_integral_s', 'stance_time_s',
                    'contact_threshold_n'))


def test_the_graph_and_the_params_file_checks_follow_a_plugin(plugin_installed, tmp_path):
    """``dodo hop``/launch: the node's parameters are the plugin config's, its default robot."""
    import dataclasses

    from dodo_hopper_pd.controller import HopperPDConfig
    from dodo_sim.ros import graph
    from dodo_sim.ros.params import ParamsFileError
    params = tmp_path / 'p.yaml'
    params.write_text(f'controller:\n  ros__parameters: {{controller: {PLUGIN}, '
                      f'thrust_n: 170.0}}\n')
    robot = graph.check_params_file(params)
    assert robot.controller == PLUGIN and robot.model.endswith('hopper.urdf.xacro')
    known = graph.known_parameters(PLUGIN)['controller']
    assert {f.name for f in dataclasses.fields(HopperPDConfig)} <= known
    params.write_text(f'controller:\n  ros__parameters: {{controller: {PLUGIN}, '
                      f'apex_height: 1.2}}\n')
    with pytest.raises(ParamsFileError, match='apex_height'):     # a SLIP key: not the plugin's
        graph.check_params_file(params)


def test_a_module_class_reference_selects_an_importable_class(example_importable):
    from dodo_hopper_pd.controller import HopperPD
    entry = registry.controller_entry(PLUGIN_CLASS)
    assert entry.cls is HopperPD and entry.name == PLUGIN_CLASS
    assert entry.identity()['class'] == PLUGIN_CLASS


# -- errors: one line -----------------------------------------------------------------------

def test_an_unknown_controller_is_one_line_listing_the_installed_ones():
    with pytest.raises(ValueError) as info:
        registry.controller_entry('segway')
    text = str(info.value)
    assert '\n' not in text and "unknown controller 'segway'" in text
    assert 'joint_hold, kneed_walker, slip_hopper' in text and 'module:Class' in text


@pytest.mark.parametrize('name', registry.RESERVED_NAMES)
def test_a_plugin_named_like_the_external_choice_is_refused_naming_its_distribution(
        name, tmp_path, monkeypatch, example_importable):
    """
    An entry point named ``external`` or ``none`` is never loaded; asking for it says why.

    Before: an entry point ``none`` loaded from a params file's ``controller: none`` while
    ``dodo hop --controller none`` ran without the controller node: one name, two meanings.
    """
    write_distribution(tmp_path / 'site', 'dodo-shadow', '1.0', {name: PLUGIN_CLASS})
    monkeypatch.syspath_prepend(str(tmp_path / 'site'))
    assert name not in registry.controller_names()
    with pytest.raises(ValueError) as info:
        registry.controller_entry(name)
    text = str(info.value)
    assert '\n' not in text and f'controller {name!r} is no controller' in text
    assert 'dodo-shadow 1.0' in text and 'rename it' in text


@pytest.mark.parametrize('name, words', [
    ('bad_controllers:NoUpdate', ['does not implement', 'HostedController', 'no method update()']),
    ('bad_controllers:NoConfig', ['no config_class']),
    ('bad_controllers:MutableConfig', ['Mutable is not frozen']),
    ('bad_controllers:NoDefaultConfig', ['NoDefault.gain has no default']),
    ('bad_controllers:Config', ['no method update()']),
    ('bad_controllers:Missing', ["has no 'Missing'"]),
    ('no_such_module_xyz:Cls', ["cannot import module 'no_such_module_xyz'", 'slip_hopper']),
])
def test_a_class_that_is_not_a_hosted_controller_is_refused_naming_what_it_lacks(
        bad_classes, name, words):
    with pytest.raises(ValueError) as info:
        registry.controller_entry(name)
    text = str(info.value)
    assert '\n' not in text, text
    for word in words:
        assert word in text, (word, text)


def test_a_config_field_named_like_a_parameter_of_the_controller_node_is_refused(bad_classes):
    from dodo_sim.ros.node_config import ControllerNodeConfig
    registry.controller_entry('bad_controllers:NodeParameterConfig')   # hostable in process
    with pytest.raises(ValueError) as info:
        ControllerNodeConfig(controller='bad_controllers:NodeParameterConfig')
    text = str(info.value)
    assert '\n' not in text and "'min_subscribers'" in text
    assert 'controller node itself' in text, text


def test_dodo_hop_refuses_a_class_without_update_in_one_line(bad_classes, tmp_path, capfd,
                                                             no_start):
    from dodo_sim.tools import hop_runner
    params = tmp_path / 'p.yaml'
    params.write_text('controller:\n  ros__parameters: {controller: bad_controllers:NoUpdate}\n')
    code = hop_runner.main(['--params-file', str(params), '--no-plots', '--runs-dir',
                            str(tmp_path / 'runs')])
    lines = capfd.readouterr().err.strip().splitlines()
    assert code == 2 and len(lines) == 1, lines
    assert lines[0].startswith('dodo hop: error:') and 'no method update()' in lines[0]


def test_a_name_from_a_bag_never_imports_a_module(tmp_path, monkeypatch):
    """``class_references=False``: the bag's ``module:Class`` is refused, nothing imported."""
    (tmp_path / 'side').mkdir()
    marker = tmp_path / 'imported'
    (tmp_path / 'side' / 'side_effect_xyz.py').write_text(
        f'open({str(marker)!r}, "w").close()\nclass C:\n    pass\n')
    monkeypatch.syspath_prepend(str(tmp_path / 'side'))
    with pytest.raises(ValueError, match="unknown controller 'side_effect_xyz:C'"):
        registry.controller_entry('side_effect_xyz:C', class_references=False)
    assert not marker.exists() and 'side_effect_xyz' not in sys.modules


# -- replay ---------------------------------------------------------------------------------

def _plugin_bag(path, controller: str, identity: dict, duration_s: float = 0.5):
    """
    Write an in-process run of the example plugin as a bag recording ``identity``.

    ``identity``: a dict (recorded as the node records it) or the recorded value itself.
    """
    from dodo_hopper_pd.controller import HopperPD, HopperPDConfig
    from dodo_sim.paths import default_urdf_path
    from dodo_sim.rollout import rollout
    from dodo_sim.simulator import SimConfig, Simulator
    from robot_bags import write_rollout_bag
    sim = Simulator(default_urdf_path(), SimConfig(initial_q=(0.0, 1.3, 0.3, -0.6)))
    config = HopperPDConfig(thrust_n=170.0)
    run = rollout(sim, HopperPD(sim.leg.urdf_xml, config), duration_s=duration_s)
    return write_rollout_bag(path, sim, run, controller=controller, controller_config=config,
                             base_source=None, controller_parameters={
                                 'controller_identity': (json.dumps(identity, sort_keys=True)
                                                         if isinstance(identity, dict)
                                                         else identity)})


IDENTITY = {'name': PLUGIN, 'class': PLUGIN_CLASS, 'distribution': 'dodo-hopper-pd-test',
            'version': '0.3.0'}


def test_a_plugin_bag_replays_through_its_installed_entry_point_exactly(plugin_installed,
                                                                        tmp_path, capsys):
    from dodo_sim.tools.replay import main as replay_main
    bag = _plugin_bag(tmp_path / 'bag', PLUGIN, IDENTITY)
    assert replay_main([str(bag), '--through-controller']) == 0
    captured = capsys.readouterr()
    assert 'max |dtau| = 0.000e+00' in captured.out, captured
    assert (f'controller {PLUGIN} ({PLUGIN_CLASS}, dodo-hopper-pd-test 0.3.0)'
            in captured.out), captured.out
    assert 'warning' not in captured.err, captured.err


def test_a_plugin_bag_whose_controller_is_not_installed_is_refused_in_one_line(
        example_importable, tmp_path, capsys):
    """Importable but not installed: a bag alone does not import it; --controller does."""
    from dodo_sim.tools.replay import main as replay_main
    bag = _plugin_bag(tmp_path / 'bag', PLUGIN, IDENTITY)
    del sys.modules['dodo_hopper_pd.controller'], sys.modules['dodo_hopper_pd']
    assert replay_main([str(bag), '--through-controller']) == 2
    captured = capsys.readouterr()
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith('dodo replay: error:'), captured
    assert 'FAIL' not in captured.out + captured.err and 'dtau' not in captured.out
    for words in (f"controller '{PLUGIN}'", 'is not installed',
                  'install dodo-hopper-pd-test 0.3.0', f'--controller {PLUGIN_CLASS}'):
        assert words in lines[0], (words, lines[0])
    assert 'dodo_hopper_pd' not in sys.modules            # nothing the bag named was imported
    # the user names the class: replayed exactly, the missing distribution said
    assert replay_main([str(bag), '--through-controller', '--controller', PLUGIN_CLASS]) == 0
    captured = capsys.readouterr()
    assert 'max |dtau| = 0.000e+00' in captured.out, captured
    assert ('ran from dodo-hopper-pd-test 0.3.0; here it comes from no installed distribution'
            in captured.err), captured.err


def test_a_version_difference_is_a_warning(plugin_installed, tmp_path, capsys):
    from dodo_sim.tools.replay import main as replay_main
    bag = _plugin_bag(tmp_path / 'bag', PLUGIN, {**IDENTITY, 'version': '0.2.0'})
    assert replay_main([str(bag), '--through-controller']) == 0
    captured = capsys.readouterr()
    assert 'max |dtau| = 0.000e+00' in captured.out
    assert ("warning: the bag's controller dodo_hopper_pd.controller:HopperPD ran from "
            'dodo-hopper-pd-test 0.2.0; here it comes from dodo-hopper-pd-test 0.3.0: torques '
            'may differ') in captured.err, captured.err


def test_a_plugin_bag_is_never_compared_against_another_controller(plugin_installed, tmp_path,
                                                                   capsys):
    """
    The issue's case: a plugin's bag whose ``controller`` name is a shipped one.

    Main built the SLIP controller from the name and reported ``FAIL: max |dtau| 2.541e+02 N*m``
    on this bag; the recorded identity names the class that ran, and a different one is refused
    in one line.
    """
    from dodo_sim.tools.replay import main as replay_main
    bag = _plugin_bag(tmp_path / 'bag', 'slip_hopper', {**IDENTITY, 'name': 'slip_hopper'})
    for extra in ([], ['--controller', 'slip_hopper']):
        assert replay_main([str(bag), '--through-controller', *extra]) == 2
        captured = capsys.readouterr()
        lines = captured.err.strip().splitlines()
        assert len(lines) == 1 and 'FAIL' not in captured.out + captured.err, captured
        assert ("recorded controller 'slip_hopper' = dodo_hopper_pd.controller:HopperPD; "
                "'slip_hopper' is dodo_control.controller:Controller, a different controller: "
                'not compared') in lines[0], lines[0]


@pytest.mark.parametrize('text', ['{"name": 1}', 'x' * 5000, '[', json.dumps(['a']), 7])
def test_a_recorded_identity_is_read_as_bounded_data(plugin_installed, tmp_path, capsys, text):
    """A bag's ``controller_identity`` that is not one: one line, exit 2, nothing built."""
    from dodo_sim.tools.replay import main as replay_main
    with pytest.raises(ValueError, match='controller_identity'):
        registry.parse_identity(text)
    bag = _plugin_bag(tmp_path / 'bag', PLUGIN, text, duration_s=0.05)
    assert replay_main([str(bag), '--through-controller']) == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and 'controller_identity' in lines[0], lines


# -- the controller node's record -----------------------------------------------------------

def test_the_controller_node_declares_its_identity_read_only(plugin_installed, tmp_path):
    """``controller_identity``: set by the node; a params file's (``ros2 param dump``) ignored."""
    import rclpy
    from rclpy.parameter import Parameter

    from dodo_sim.ros import graph
    from dodo_sim.ros.controller_node import ControllerNode
    params = tmp_path / 'p.yaml'
    params.write_text(f'controller:\n  ros__parameters:\n    controller: {PLUGIN}\n'
                      f'    controller_identity: forged\n')
    assert graph.check_params_file(params).controller == PLUGIN      # a dump passes the checks
    context = rclpy.Context()
    rclpy.init(context=context, args=['--ros-args', '--params-file', str(params)])
    try:
        node = ControllerNode(context=context)
        try:
            value = node.get_parameter('controller_identity').value
            assert json.loads(value) == IDENTITY
            result = node.set_parameters([Parameter('controller_identity', value='x')])[0]
            assert not result.successful
        finally:
            node.destroy_node()
    finally:
        rclpy.try_shutdown(context=context)


# -- dodo optimize ----------------------------------------------------------------------------

def _study(tmp_path, text: str):
    path = tmp_path / 'study.yaml'
    path.write_text(text)
    return path


STUDY = f"""
controller: {PLUGIN}
sampler: random
trials: 2
fixed:
  simulator: {{initial_q: [0.0, 1.3, 0.3, -0.6]}}
parameters:
  controller:
    thrust_n: {{low: 50.0, high: 300.0}}
scenarios:
  - {{kind: hop, duration_s: 1.6, skip_hops: 1, apex_height_m: 1.3, min_com_height_m: 0.5}}
objectives:
  - {{metric: apex_height_error_max_m}}
"""


def test_a_study_of_a_plugin_controller_runs_the_generic_scenarios(plugin_installed, tmp_path):
    from dodo_hopper_pd.controller import HopperPDConfig
    from dodo_sim.tools.optimize_results import params_file_text
    from dodo_sim.tools.optimize_run import evaluate
    from dodo_sim.tools.optimize_study import load_study
    import yaml
    study = load_study(_study(tmp_path, STUDY))
    assert study.robot == 'hosted' and study.controller == PLUGIN
    assert study.module.SECTIONS['controller'] is HopperPDConfig
    low, base = evaluate(study, {'controller.thrust_n': 50.0}), evaluate(study, study.baseline())
    metrics = base.runs[0]['metrics']
    assert base.failure is None and metrics['hops'] >= 1 and metrics['touchdowns'] >= 2
    # the thrust sets the hop: 150 N (trial 0) hops higher than 50 N, measured on the sim's state
    assert metrics['apex_height_mean_m'] > low.runs[0]['metrics']['apex_height_mean_m'] + 0.1

    class Trial:
        number, values, params = 0, base.values, {'controller.thrust_n': 150.0}

    best = yaml.safe_load(params_file_text(study, Trial()))
    assert best['controller']['ros__parameters'] == {'controller': PLUGIN, 'thrust_n': 150.0}


@pytest.mark.parametrize('text, words', [
    (STUDY.replace(f'controller: {PLUGIN}\n', 'robot: hosted\n'), ['controller:']),
    (STUDY.replace(f'controller: {PLUGIN}\n', f'robot: hopper\ncontroller: {PLUGIN}\n'),
     ['own controller', 'robot: hosted']),
    (STUDY.replace(f'controller: {PLUGIN}\n', 'controller: segway\n'),
     ["unknown controller 'segway'"]),
    (STUDY.replace(f'controller: {PLUGIN}\n', f'controller: {PLUGIN}\nmodel: nowhere.urdf\n'),
     ['nowhere.urdf']),
])
def test_a_bad_plugin_study_is_refused_naming_the_entry(plugin_installed, tmp_path, text, words):
    from dodo_sim.tools.optimize_study import load_study, StudyError
    with pytest.raises(StudyError) as info:
        load_study(_study(tmp_path, text))
    for word in words:
        assert word in str(info.value), (word, str(info.value))
