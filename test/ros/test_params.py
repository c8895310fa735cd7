# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""Params files and parameters declared from the config dataclasses (no ROS needed)."""
import dataclasses
import math

from dodo_control.slip.config import ControllerConfig
from dodo_sim.parameter import config_defaults
from dodo_sim.paths import default_params_path
from dodo_sim.ros import graph, node_config
from dodo_sim.ros.params import (check_params_file, coerce_value,
                                 config_from_file, config_from_parameters, field_docs,
                                 node_parameters, ParamsFileError, read_params_file)
from dodo_sim.simulator import SimConfig
import pytest

CONFIGS = (SimConfig, ControllerConfig, node_config.SimulatorNodeConfig,
           node_config.ControllerNodeConfig)


def write(tmp_path, text, name='p.yaml'):
    path = tmp_path / name
    path.write_text(text)
    return path


def test_shared_section_is_merged_and_node_section_wins(tmp_path):
    path = write(tmp_path, """
/**:
  ros__parameters: {use_sim_time: true, friction: 0.5}
simulator:
  ros__parameters: {friction: 0.9, dt: 0.002}
/controller:
  ros__parameters: {apex_height: 1.3}
""")
    assert node_parameters(path, 'simulator') == {'use_sim_time': True, 'friction': 0.9,
                                                  'dt': 0.002}
    assert node_parameters(path, 'controller') == {'use_sim_time': True, 'friction': 0.5,
                                                   'apex_height': 1.3}


@pytest.mark.parametrize('text, words', [
    ('simulator:\n  ros__parameters: {frction: 0.5}\n', ['frction', 'simulator']),
    ('simulatr:\n  ros__parameters: {friction: 0.5}\n', ['simulatr']),
    ('/**:\n  ros__parameters: {nonsense: 1}\n', ['nonsense']),
    ('simulator:\n  friction: 0.5\n', ['ros__parameters']),
    ('simulator: [1, 2\n', ['YAML']),
])
def test_bad_params_file_names_the_problem(tmp_path, text, words):
    path = write(tmp_path, text)
    with pytest.raises(ParamsFileError) as info:
        check_params_file(path, graph.known_parameters())
    for word in words:
        assert word in str(info.value)


def test_missing_params_file(tmp_path):
    with pytest.raises(ParamsFileError, match='not found'):
        read_params_file(tmp_path / 'nope.yaml')


def test_default_params_file_is_valid_and_builds_the_configs():
    path = default_params_path()
    check_params_file(path, graph.known_parameters())
    sim = config_from_file(SimConfig, path, 'simulator')
    ctrl = config_from_file(ControllerConfig, path, 'controller')
    raw_sim = node_parameters(path, 'simulator')
    raw_ctrl = node_parameters(path, 'controller')
    assert raw_sim['use_sim_time'] is True and raw_ctrl['use_sim_time'] is True
    assert sim.mode == raw_sim['mode']
    assert sim.initial_q == tuple(raw_sim['initial_q'])
    assert ctrl.apex_height == raw_ctrl['apex_height']


def test_coercion_accepts_ints_for_floats_and_checks_types():
    assert coerce_value(SimConfig, 'dt', 1) == 1.0 and isinstance(coerce_value(SimConfig, 'dt', 1),
                                                                  float)
    assert math.isnan(coerce_value(ControllerConfig, 'target_x', '.nan'))
    assert coerce_value(SimConfig, 'initial_q', [0, 1, 0, 0]) == (0.0, 1.0, 0.0, 0.0)
    assert coerce_value(SimConfig, 'push_times', None) == ()
    assert coerce_value(SimConfig, 'solver_max_iterations', 50.0) == 50
    for name, bad in (('dt', 'fast'), ('dt', True), ('position_correction', 1),
                      ('initial_q', 'abc'), ('initial_q', [0, 'x']), ('integrator', 3),
                      ('solver_max_iterations', 2.5)):
        with pytest.raises(ValueError, match=f'SimConfig.{name}'):
            coerce_value(SimConfig, name, bad)


def test_config_from_parameters_validates_through_the_core():
    config = config_from_parameters(SimConfig, {'dt': 1, 'control_period': 2})
    assert config.dt == 1.0 and config.control_period == 2.0
    with pytest.raises(ValueError, match='control_period'):
        config_from_parameters(SimConfig, {'dt': 0.002, 'control_period': 0.003})
    with pytest.raises(ValueError, match='bogus'):
        config_from_parameters(SimConfig, {'bogus': 1})


@pytest.mark.parametrize('cls', CONFIGS, ids=lambda c: c.__name__)
def test_every_parameter_is_documented(cls):
    docs = field_docs(cls)
    missing = [f.name for f in dataclasses.fields(cls) if not docs.get(f.name)]
    assert missing == []


def test_field_docs_parse_shared_and_inline_entries():
    docs = field_docs(SimConfig)
    assert 'N*s' in docs['push_impulses_x'] and docs['push_impulses_x'] == docs['push_impulses_z']
    ctrl = field_docs(ControllerConfig)
    assert ctrl['position_kp'].startswith('1/s') and ctrl['position_ki'].startswith('1/s^2')


@pytest.mark.parametrize('cls', CONFIGS, ids=lambda c: c.__name__)
def test_parameters_are_defined_once_per_node(cls):
    """No parameter name is defined by two config classes of the same node."""
    defaults = config_defaults(cls)
    assert set(defaults) == {f.name for f in dataclasses.fields(cls)}
    for node_name, refs in graph.NODE_CONFIGS.items():
        names = [f.name for c in graph.config_classes(node_name) for f in dataclasses.fields(c)]
        assert len(names) == len(set(names)), node_name


def test_graph_params_and_runner_import_no_rclpy():
    """The launch file imports dodo_sim.ros.graph; dodo hop itself is no ROS node."""
    import subprocess
    import sys
    code = ('import sys, dodo_sim.ros.graph, dodo_sim.ros.params, dodo_sim.tools.hop_runner, '
            'dodo_sim.tools.cli\n'
            'assert "rclpy" not in sys.modules')
    subprocess.run([sys.executable, '-c', code], check=True)
