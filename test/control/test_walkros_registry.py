# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
The controller registry and the graph of any robot (no DDS).

Which controller the controller node hosts and which parameters it has, the params-file checks
following that choice, the robot (model, contact topics) the launch files and ``dodo hop``/``dodo
walk`` take from the params file, and ``dodo walk`` refusing bad input before anything starts.
"""
import dataclasses

from conftest import REPO
from dodo_control import registry
from dodo_control.controller import Controller, ControllerConfig
from dodo_control.slip.outcome import HopCriteria
from dodo_control.walker.controller import WalkerConfig, WalkerController
from dodo_control.walker.monitor import TerrainConfig
from dodo_control.walker.outcome import FallCriteria
from dodo_sim.ros import contract, graph, node_config
from dodo_sim.ros.params import field_docs, ParamsFileError
from dodo_sim.simulator import SimConfig
from dodo_sim.tools import hop_runner, walk_runner
import pytest

WALK_YAML = REPO / 'config' / 'walk.yaml'
HOP_YAML = REPO / 'config' / 'hop.yaml'


def fields(cls) -> set:
    return {f.name for f in dataclasses.fields(cls)}


def test_registry_selects_the_controller_and_config_class():
    walker = registry.controller_entry('kneed_walker')
    assert walker.controller_class() is WalkerController
    assert walker.config_class() is WalkerConfig
    assert walker.parameter_classes() == (WalkerConfig, FallCriteria, TerrainConfig)
    hopper = registry.controller_entry('slip_hopper')
    assert hopper.controller_class() is Controller and hopper.config_class() is ControllerConfig
    assert hopper.parameter_classes() == (ControllerConfig, HopCriteria)
    assert registry.DEFAULT_CONTROLLER == node_config.ControllerNodeConfig().controller


def test_unknown_controller_is_refused_with_the_known_list():
    with pytest.raises(ValueError) as info:
        registry.controller_entry('segway')
    assert 'segway' in str(info.value)
    for name in ('slip_hopper', 'kneed_walker'):
        assert name in str(info.value)
    with pytest.raises(ValueError, match="unknown controller 'segway'.*kneed_walker"):
        node_config.ControllerNodeConfig(controller='segway')


def test_walker_states_its_robot_like_the_hopper_controller():
    ctrl = WalkerController(WalkerConfig())
    assert ctrl.joint_names == WalkerConfig().joint_names
    assert ctrl.actuated_joint_names == ('left_hip', 'left_knee', 'right_hip', 'right_knee')
    assert ctrl.contact_frames == ('left_foot', 'right_foot')


def test_shared_parameter_names_mean_the_same():
    """A name in two config classes of one node is one ROS parameter: same default."""
    for entry in map(registry.controller_entry, registry.controller_names()):
        classes = entry.parameter_classes() + (node_config.ControllerNodeConfig,)
        seen = {}
        for cls in classes:
            for f in dataclasses.fields(cls):
                if f.name in seen:
                    assert f.default == seen[f.name], (entry.name, f.name)
                seen[f.name] = f.default


def test_terrain_config_is_the_simulators_terrain():
    sim = {f.name: f.default for f in dataclasses.fields(SimConfig)}
    assert {f.name: f.default for f in dataclasses.fields(TerrainConfig)} == {
        n: sim[n] for n in registry.TERRAIN_PARAMETERS}
    assert field_docs(TerrainConfig) == {n: field_docs(SimConfig)[n]
                                         for n in registry.TERRAIN_PARAMETERS}
    with pytest.raises(ValueError, match='terrain'):
        TerrainConfig(terrain='lava')


def test_walker_build_refuses_a_robot_without_its_joints(urdf_path):
    entry = registry.controller_entry('kneed_walker')
    with pytest.raises(ValueError) as info:
        entry.build(str(urdf_path), WalkerConfig())
    assert 'kneed_walker' in str(info.value) and 'left_hip' in str(info.value)


def test_known_parameters_follow_the_selected_controller():
    walker = graph.known_parameters('kneed_walker')['controller']
    hopper = graph.known_parameters('slip_hopper')['controller']
    node = fields(node_config.ControllerNodeConfig) | {contract.CONTROLLER_IDENTITY}
    assert walker == fields(WalkerConfig) | fields(FallCriteria) | fields(TerrainConfig) | node
    assert hopper == fields(ControllerConfig) | fields(HopCriteria) | node
    assert graph.known_parameters('kneed_walker')['simulator'] == graph.known_parameters()[
        'simulator']


def test_walk_yaml_passes_the_checks_and_names_the_walker():
    robot = graph.check_params_file(WALK_YAML)
    assert robot.controller == 'kneed_walker'
    assert robot.model == str(REPO / 'urdf' / 'kneed_walker.urdf.xacro')
    assert robot.contact_topics == ('left_foot_contact', 'right_foot_contact')
    assert graph.check_params_file(HOP_YAML).contact_topics == (contract.FOOT_CONTACT,)


@pytest.mark.parametrize('section, key', [
    ('controller', 'apex_height'),            # a hopper key in a walker file
    ('controller', 'pulse_amplitude'),        # a typo
])
def test_a_key_the_walker_nodes_lack_is_refused_naming_it(tmp_path, section, key):
    text = WALK_YAML.read_text().replace(f'{section}:\n  ros__parameters:\n',
                                         f'{section}:\n  ros__parameters:\n    {key}: 1.0\n')
    path = tmp_path / 'walk.yaml'
    path.write_text(text)
    with pytest.raises(ParamsFileError, match=f"'{key}'.*'{section}'"):
        graph.check_params_file(path)


def test_a_walker_key_in_a_hopper_file_is_refused(tmp_path):
    path = tmp_path / 'hop.yaml'
    path.write_text(HOP_YAML.read_text().replace(
        'controller:\n  ros__parameters:\n',
        'controller:\n  ros__parameters:\n    step_frequency_hz: 1.5\n'))
    with pytest.raises(ParamsFileError, match='step_frequency_hz'):
        graph.check_params_file(path)


def test_model_precedence_explicit_then_params_file_then_controller_default(tmp_path):
    assert graph.robot_from_params(WALK_YAML, 'my.xacro').model == 'my.xacro'
    path = tmp_path / 'p.yaml'
    path.write_text('simulator:\n  ros__parameters: {robot_description: other.urdf}\n')
    robot = graph.robot_from_params(path)
    assert robot.model == 'other.urdf' and robot.controller == 'slip_hopper'


def test_walker_graph_parameters_are_the_same_for_launch_and_dodo_walk():
    robot = graph.robot_from_params(WALK_YAML)
    values = {'bag': 'b', 'params_file': str(WALK_YAML), 'model': ''}
    launch = graph.launch_nodes(use_sim=True, record=True, rviz=False)
    cli = graph.hop_nodes(True)
    for spec in cli:
        from_launch = graph.node_parameters(spec, launch, values, launch=True, robot=robot)
        from_cli = graph.hop_parameters(spec, cli, {**values, 'stop_after': 2.0}, robot)
        for key in spec.launch_parameters:
            from_launch.pop(key)
        from_cli.pop('stop_after', None)
        if spec.robot_description:          # launch passes the xacro output, dodo walk the path
            assert from_cli.pop('robot_description') == robot.model
        if spec.name == 'recorder':   # no robot_state_publisher: dodo walk's recorder owns /tf
            assert from_cli.pop('tf') == 'compute'
        assert from_launch == from_cli, spec.name
    recorder = graph.node_parameters(graph.node('recorder'), launch, values, robot=robot)
    assert 'left_foot_contact' in recorder['topics'] and 'right_foot_contact' in recorder[
        'topics'] and contract.FOOT_CONTACT not in recorder['topics']
    controller = graph.node_parameters(graph.node('controller'), launch, values, robot=robot)
    assert controller['terrain'] == 'flat'                 # the monitor judges the sim's ground
    hardware = graph.node_parameters(graph.node('controller'), launch, values, robot=robot,
                                     use_sim=False)
    assert 'terrain' not in hardware


def test_walk_launch_arguments_default_to_the_walker():
    args = {a.name: a for a in graph.launch_arguments('walk')}
    assert args['params_file'].share_path == ('config', 'walk.yaml')
    assert args['rviz_config'].share_path == ('config', 'walk.rviz')
    assert args['model'].default == ''           # the controller's default model
    assert [a.name for a in graph.launch_arguments('walk')] == [
        a.name for a in graph.LAUNCH_ARGUMENTS]
    assert (REPO / 'config' / 'walk.rviz').is_file()


@pytest.mark.parametrize('text, words', [
    ('controller:\n  ros__parameters: {apex_height: 1.2, controller: kneed_walker}\n',
     ['apex_height']),
    ('controller:\n  ros__parameters: {controller: segway}\n', ['segway', 'kneed_walker']),
    ('controller:\n  ros__parameters: {controller: kneed_walker, step_frequency_hz: 9.0}\n',
     ['step_frequency_hz']),
    ('controller:\n  ros__parameters: {controller: kneed_walker, min_hip_height_m: -1.0}\n',
     ['min_hip_height_m']),
    ('controller:\n  ros__parameters: {controller: kneed_walker, hip_joints: [a, b]}\n',
     ['hip_joints']),
])
def test_dodo_walk_refuses_bad_walker_input_before_start(tmp_path, capfd, no_start, text,
                                                         words):
    path = tmp_path / 'p.yaml'
    path.write_text(text)
    code = walk_runner.main(['--params-file', str(path), '--no-plots', '--runs-dir',
                             str(tmp_path / 'runs')])
    captured = capfd.readouterr()
    lines = captured.err.strip().splitlines()
    assert code == 2, captured
    assert len(lines) == 1 and lines[0].startswith('dodo walk: error: '), captured
    for word in words:
        assert word in lines[0], (word, lines[0])
    assert not (tmp_path / 'runs').exists()


def test_dodo_walk_with_the_hopper_model_is_refused(tmp_path, capfd, no_start, urdf_path):
    code = walk_runner.main(['--model', str(urdf_path), '--no-plots', '--runs-dir',
                             str(tmp_path / 'runs')])
    line = capfd.readouterr().err.strip()
    assert code == 2 and 'left_foot' in line, line     # the walker's contact frame


def test_dodo_walk_defaults_reach_the_start(tmp_path, capsys, no_start, monkeypatch):
    """Control row: the defaults pass the checks; the run directory is walk-<date>-<time>."""
    seen = {}
    real_run = hop_runner.run

    def spy(*args, **kwargs):
        seen.update(args=args, kwargs=kwargs)
        return real_run(*args, **kwargs)

    monkeypatch.setattr(hop_runner, 'run', spy)
    with pytest.raises(AssertionError, match='a process was started'):
        walk_runner.main(['--runs-dir', str(tmp_path / 'runs'), '--duration', '0.5'])
    params, duration, bag = seen['args'][:3]
    assert params == WALK_YAML and bag.parent.name.startswith('walk-')
    assert seen['kwargs']['prog'] == 'dodo walk'
    assert seen['kwargs']['plotter'] == 'dodo_sim.tools.plot'
    assert 'dodo walk: ROS domain' in capsys.readouterr().out


@pytest.mark.parametrize('name', ['slip_hopper', 'kneed_walker', 'joint_hold'])
def test_every_registered_controller_implements_the_hosted_controller_interface(name):
    from dodo_control.interface import HostedController
    from dodo_sim.paths import resolve_package_uri
    entry = registry.controller_entry(name)
    ctrl = entry.build(resolve_package_uri(entry.model), entry.config_class()())
    assert isinstance(ctrl, HostedController)
    assert len(ctrl.actuated_joint_names) <= len(ctrl.joint_names) and ctrl.contact_frames


def test_a_builder_returning_something_else_is_refused_naming_what_it_lacks(urdf_path):
    class NoUpdate:
        joint_names = actuated_joint_names = contact_frames = ('j',)
        telemetry = None

        def reconfigure(self, config):
            pass

    class Builds(Controller):

        @classmethod
        def for_robot(cls, urdf, config):
            return NoUpdate()

    entry = registry.ControllerEntry('builds', Builds)
    with pytest.raises(TypeError, match=r"NoUpdate without \['update'\].*HostedController"):
        entry.build(str(urdf_path), ControllerConfig())
