"""launch/hop.launch.py describes the graph of dodo_sim.ros.graph, like ``dodo hop`` does.

launch / launch_ros are not installable without a ROS install, so light stand-ins that only
record their arguments are put into sys.modules while the launch file is loaded. They expose
exactly the names a real install provides (the launch file would fail to import otherwise).
"""
import importlib.util
import sys
import types
from pathlib import Path

import pytest

from dodo_sim.ros import contract, graph
from dodo_sim.tools.hop_runner import HopRun
from dodo_sim.ros.params import node_parameters

LAUNCH_FILE = Path(__file__).resolve().parent.parent / 'launch' / 'hop.launch.py'


class Recorded:
    """Stand-in of a launch class: keeps its constructor arguments."""

    def __init__(self, *args, **kwargs):
        self.args, self.kwargs = args, kwargs

    def __repr__(self):
        return f'{type(self).__name__}{self.args}{self.kwargs}'


def stub_modules():
    names = {
        'launch': ['LaunchDescription'],
        'launch.actions': ['DeclareLaunchArgument'],
        'launch.conditions': ['IfCondition', 'UnlessCondition'],
        'launch.substitutions': ['Command', 'LaunchConfiguration', 'PathJoinSubstitution'],
        'launch_ros': [],
        'launch_ros.actions': ['Node'],
        'launch_ros.parameter_descriptions': ['ParameterValue'],
        'launch_ros.substitutions': ['FindPackageShare'],
    }
    modules = {}
    for module_name, classes in names.items():
        module = types.ModuleType(module_name)
        for cls in classes:
            setattr(module, cls, type(cls, (Recorded,), {}))
        modules[module_name] = module
    return modules


@pytest.fixture(scope='module')
def description():
    saved = {name: sys.modules.get(name) for name in stub_modules()}
    sys.modules.update(stub_modules())
    try:
        spec = importlib.util.spec_from_file_location('hop_launch', LAUNCH_FILE)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        yield module.generate_launch_description()
    finally:
        for name, module in saved.items():
            if module is None:
                sys.modules.pop(name, None)
            else:
                sys.modules[name] = module


def entities(description, kind):
    return [e for e in description.args[0] if type(e).__name__ == kind]


def config_name(sub):
    assert type(sub).__name__ == 'LaunchConfiguration'
    return sub.args[0]


def test_arguments_are_declared_with_descriptions(description):
    declared = {a.args[0]: a.kwargs for a in entities(description, 'DeclareLaunchArgument')}
    assert list(declared) == [a.name for a in graph.LAUNCH_ARGUMENTS]
    for name in ('params_file', 'use_sim', 'rviz', 'record', 'bag', 'model'):
        assert len(declared[name]['description']) > 10, name
    params_default = declared['params_file']['default_value']
    parts = params_default.args[0]
    assert type(parts[0]).__name__ == 'FindPackageShare' and parts[0].args == ('dodo_sim',)
    assert parts[1:] == ['config', 'hop.yaml']
    assert declared['use_sim']['default_value'] == 'true'
    assert declared['rviz']['default_value'] == 'false'


def test_nodes_match_the_graph(description):
    nodes = entities(description, 'Node')
    assert [n.kwargs['name'] for n in nodes] == [s.name for s in graph.NODES]
    for node, spec in zip(nodes, graph.NODES):
        kw = node.kwargs
        assert (kw['package'], kw['executable']) == (spec.package, spec.executable)
        assert kw['remappings'] == list(spec.remappings)
        condition = kw['condition']
        if spec.sim_only:
            assert type(condition).__name__ == 'IfCondition'
            assert config_name(condition.args[0]) == 'use_sim'
        elif spec.condition:
            assert config_name(condition.args[0]) == spec.condition
        else:
            assert condition is None
        params = kw['parameters']
        if spec.params_file:
            assert config_name(params[0]) == 'params_file'
        extra = params[-1]
        use_sim_time = extra['use_sim_time']
        assert type(use_sim_time).__name__ == 'ParameterValue'
        assert config_name(use_sim_time.args[0]) == 'use_sim'
        assert use_sim_time.kwargs['value_type'] is bool
        if spec.robot_description:
            value = extra['robot_description']
            assert value.kwargs['value_type'] is str
            command = value.args[0].args[0]
            assert command[0].strip() == 'xacro' and config_name(command[1]) == 'model'
        expected = dict(spec.parameters)
        expected.update(spec.launch_parameters)
        for key, value in expected.items():
            if isinstance(value, graph.Arg):
                assert config_name(extra[key]) == value.name
            else:
                assert extra[key] == value


def test_expected_node_set():
    by_name = {s.name: s for s in graph.NODES}
    assert by_name['simulator'].sim_only and by_name['simulator'].executable == 'simulator'
    assert by_name['robot_state_publisher'].robot_description
    assert by_name['rviz2'].condition == 'rviz'
    assert by_name['rviz2'].arguments == ('-d', ('config', 'hop.rviz'))
    assert by_name['recorder'].condition == 'record'
    assert by_name['simulator'].launch_parameters == {'publish_robot_description': False}
    assert (Path(__file__).resolve().parent.parent / 'config' / 'hop.rviz').is_file()


def test_dodo_hop_runs_the_same_graph(tmp_path):
    """dodo hop = the launch graph minus what needs a ROS install, same params file."""
    params = tmp_path / 'p.yaml'
    params.write_text('/**:\n  ros__parameters: {use_sim_time: true}\n')
    hop = HopRun(params, 2.5, bag=tmp_path / 'bag')
    commands = hop.commands()
    expected = [s.name for s in graph.NODES if s.module is not None]
    assert sorted(commands) == sorted(expected)
    for name, cmd in commands.items():
        spec = graph.node(name)
        assert cmd[1:3] == ['-m', spec.module]
        assert cmd[3:6] == ['--ros-args', '-r', f'__node:={name}']
        assert ('--params-file' in cmd) == spec.params_file
        if spec.params_file:
            assert cmd[cmd.index('--params-file') + 1] == str(params)
        given = dict(cmd[i + 1].split(':=', 1) for i, a in enumerate(cmd) if a == '-p')
        assert given['use_sim_time'] == 'true'
        for key, value in spec.parameters.items():
            assert key in given
        for key in spec.launch_parameters:
            assert key not in given      # e.g. the simulator publishes robot_description here
    sim = dict(a.split(':=', 1) for a in commands['simulator'] if ':=' in a)
    assert float(sim['stop_after']) == 2.5
    assert sim['min_subscribers'] == '2'        # controller + recorder
    ctrl = dict(a.split(':=', 1) for a in commands['controller'] if ':=' in a)
    assert ctrl['min_subscribers'] == '2'       # simulator + recorder
    rec = dict(a.split(':=', 1) for a in commands['recorder'] if ':=' in a)
    assert rec['bag'] == str(tmp_path / 'bag')
    assert rec['topics'] == '[' + ', '.join(f"'{t}'" for t in contract.RECORDED_TOPICS) + ']'
    assert node_parameters(params, 'simulator') == {'use_sim_time': True}


def test_dodo_hop_without_bag_starts_no_recorder(tmp_path):
    params = tmp_path / 'p.yaml'
    params.write_text('{}\n')
    commands = HopRun(params, 1.0).commands()
    assert sorted(commands) == ['controller', 'simulator']
    sim = dict(a.split(':=', 1) for a in commands['simulator'] if ':=' in a)
    assert sim['min_subscribers'] == '1'
