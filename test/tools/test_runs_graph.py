# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
One graph for ``hop.launch.py`` and ``dodo hop`` (dodo_sim.ros.graph).

It also checks that parameters are passed typed through a generated params file instead of text
spliced into a command line.
"""
import io
import signal
import subprocess
import sys
from types import SimpleNamespace

from conftest import REPO, ros_env
from dodo_sim.ros import contract, graph
from dodo_sim.tools.run_supervision import HopRun, write_params_file
import pytest
import yaml

NASTY = ['run #1', '123', 'true', 'a: b', "it's", '', 'null', '~', '1e3', '0x10', '- x',
         '[1, 2]', '{k: v}', ' lead', 'trail ', '*alias', '&anchor', '%x', '@x', '!tag']


def names(nodes):
    return [spec.name for spec in nodes]


def test_launch_node_sets_follow_the_switches():
    assert names(graph.launch_nodes(use_sim=True, record=False, rviz=False)) == [
        'simulator', 'controller', 'robot_state_publisher']
    assert names(graph.launch_nodes(use_sim=False, record=True, rviz=True)) == [
        'driver', 'controller', 'robot_state_publisher', 'rviz2', 'recorder']


def test_dodo_hop_runs_the_launch_graph_minus_what_needs_a_ros_install():
    for record in (False, True):
        launch = graph.launch_nodes(use_sim=True, record=record, rviz=False)
        assert graph.hop_nodes(record) == tuple(s for s in launch if s.module is not None)


@pytest.mark.parametrize('use_sim, record, simulator, controller', [
    (True, False, 1, 1),     # controller | simulator
    (True, True, 2, 2),      # controller + recorder | simulator + recorder
    (False, False, None, 1),  # the hardware driver takes the commands
    (False, True, None, 2),  # driver + recorder
])
def test_start_gates_count_every_subscriber(use_sim, record, simulator, controller):
    """
    The simulator waits until the recorder (when recording) and the controller see its topics.

    The topics are /clock, /joint_states and /foot_contact; the bag then starts at t = 0 (launch
    and dodo hop alike).
    """
    for running in (graph.launch_nodes(use_sim=use_sim, record=record, rviz=True),
                    graph.hop_nodes(record) if use_sim else None):
        if running is None:
            continue
        gates = {s.name: graph.node_parameters(s, running, {'bag': 'b', 'hardware': 'emulated'},
                                               use_sim=use_sim)
                 .get('min_subscribers') for s in running}
        assert gates.get('simulator') == simulator
        assert gates['controller'] == controller


def test_launch_and_dodo_hop_give_the_same_parameters():
    values = {'bag': 'b'}
    launch = graph.launch_nodes(use_sim=True, record=True, rviz=False)
    hop = graph.hop_nodes(True)
    for spec in hop:
        from_launch = graph.node_parameters(spec, launch, values, launch=True)
        from_hop = graph.hop_parameters(spec, hop, {**values, 'stop_after': 2.0})
        for key in spec.launch_parameters:       # e.g. robot_state_publisher publishes the URDF
            from_launch.pop(key)
        from_hop.pop('stop_after', None)
        if spec.name == 'recorder':   # no robot_state_publisher in dodo hop: the recorder owns /tf
            assert from_hop.pop('tf') == 'compute'
        assert from_launch == from_hop, spec.name


def test_without_simulator_the_controller_pairs_by_arrival_and_uses_wall_time():
    running = graph.launch_nodes(use_sim=False, record=False, rviz=False)
    params = graph.node_parameters(graph.node('controller'), running, {}, use_sim=False)
    assert params['use_sim_time'] is False and params['contact_pairing'] == 'latest'


def test_params_file_values_round_trip_typed(tmp_path):
    path = write_params_file(tmp_path / 'g.yaml', {
        'recorder': {'bag': NASTY[0], 'topics': list(NASTY)},
        'simulator': {'stop_after': 2.5, 'min_subscribers': 2, 'use_sim_time': True}})
    data = yaml.safe_load(path.read_text())
    assert data['recorder']['ros__parameters']['topics'] == NASTY
    assert data['simulator']['ros__parameters'] == {'stop_after': 2.5, 'min_subscribers': 2,
                                                    'use_sim_time': True}


def test_hop_commands_pass_the_graph_parameters_in_a_generated_file(tmp_path):
    params = tmp_path / 'p.yaml'
    params.write_text('/**:\n  ros__parameters: {use_sim_time: true}\n')
    bag = tmp_path / 'run #1: a'
    hop = HopRun(params, 2.5, bag=bag)
    commands = hop.commands(tmp_path)
    assert sorted(commands) == ['controller', 'recorder', 'simulator']
    generated = None
    for name, cmd in commands.items():
        spec = graph.node(name)
        assert cmd[1:6] == ['-m', spec.module, '--ros-args', '-r', f'__node:={name}']
        files = [cmd[i + 1] for i, a in enumerate(cmd) if a == '--params-file']
        assert files[:-1] == ([str(params)] if spec.params_file else [])
        generated = files[-1]
        assert '-p' not in cmd            # nothing spliced into the command line
    data = yaml.safe_load(open(generated))
    assert data['recorder']['ros__parameters']['bag'] == str(bag)
    assert data['recorder']['ros__parameters']['topics'] == list(contract.RECORDED_TOPICS)
    assert data['simulator']['ros__parameters']['stop_after'] == 2.5
    assert data['simulator']['ros__parameters']['min_subscribers'] == 2
    assert data['controller']['ros__parameters']['min_subscribers'] == 2


@pytest.mark.ros
def test_ros_reads_strings_from_the_generated_file_as_strings(tmp_path):
    """
    The YAML parser of rcl (not PyYAML) reads the generated file.

    Bag names that YAML would read as a number, a bool, a mapping or a comment reach the recorder
    unchanged.
    """
    bags = ['123', 'true', 'a: b', 'run #1']
    env = ros_env()
    procs = []
    try:
        for i, name in enumerate(bags):
            generated = write_params_file(tmp_path / f'g{i}.yaml', {
                f'rec{i}': {'bag': str(tmp_path / name), 'topics': ['/nothing']}})
            procs.append(subprocess.Popen(
                [sys.executable, '-m', 'dodo_sim.ros.recorder', '--ros-args', '-r',
                 f'__node:=rec{i}', '--params-file', str(generated)],
                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env, cwd=REPO))
        for proc, name in zip(procs, bags):
            seen = []                  # DDS may log first (e.g. shared-memory port contention)
            for line in proc.stdout:
                seen.append(line.rstrip('\n'))
                if line.startswith('dodo recorder: ready'):
                    break
            assert seen and seen[-1] == f'dodo recorder: ready {tmp_path / name}', seen
    finally:
        for proc in procs:
            proc.send_signal(signal.SIGINT)
        for proc in procs:
            proc.wait(timeout=30)
    for proc, name in zip(procs, bags):
        assert proc.returncode == 0, proc.stdout.read()
        assert (tmp_path / name / 'metadata.yaml').is_file(), name


def test_the_recorder_owns_tf_where_no_robot_state_publisher_runs():
    """
    ``dodo hop`` has no robot_state_publisher: its recorder computes and publishes /tf.

    A launch file starts robot_state_publisher: its recorder records /tf (``auto``, the default).
    """
    recorder = graph.node('recorder')
    for hardware in (None, 'emulated'):
        running = graph.hop_nodes(record=True, hardware=hardware)
        assert graph.TF_PUBLISHER not in [s.name for s in running]
        params = graph.node_parameters(recorder, running, {'bag': 'b', 'hardware': hardware},
                                       use_sim=hardware is None)
        assert params['tf'] == 'compute', hardware
    for use_sim in (True, False):
        running = graph.launch_nodes(use_sim=use_sim, record=True, rviz=False)
        assert graph.TF_PUBLISHER in [s.name for s in running]
        params = graph.node_parameters(recorder, running, {'bag': 'b'}, use_sim=use_sim,
                                       launch=True)
        assert 'tf' not in params


def test_on_hardware_the_recorder_records_the_robots_contact_topics_and_diagnostics():
    """
    The hardware recorder topics follow the robot of the params file (here two feet).

    They are like the simulated ones, minus /clock plus the driver's /diagnostics and /estop.
    """
    robot = graph.Robot(controller='kneed_walker', contact_frames=('left_foot', 'right_foot'))
    running = graph.launch_nodes(use_sim=False, record=True, rviz=False)
    topics = graph.node_parameters(graph.node('recorder'), running, {'bag': 'b'},
                                   use_sim=False, robot=robot)['topics']
    assert topics == list(contract.hardware_recorded_topics(('left_foot', 'right_foot')))
    assert 'left_foot_contact' in topics and 'right_foot_contact' in topics
    assert contract.CLOCK not in topics and contract.DIAGNOSTICS in topics
    assert len(topics) == len(set(topics))           # each once (it had /diagnostics twice)


def test_the_driver_stands_in_for_the_hoppers_simulator():
    """Control row of the next test: hop.yaml's robot has the driver's one contact frame."""
    params = REPO / 'config' / 'hop.yaml'
    graph.check_hardware(params, graph.robot_from_params(params), 'emulated')


def test_the_driver_is_refused_for_a_robot_with_other_contact_frames():
    """
    The Kneed Walker's controller waits for two contact topics; the driver measures one.

    The driver is refused before anything starts, naming both.
    """
    params = REPO / 'config' / 'walk.yaml'
    with pytest.raises(ValueError, match='left_foot') as info:
        graph.check_hardware(params, graph.robot_from_params(params), 'emulated')
    assert "'foot'" in str(info.value) and 'contact_frame' in str(info.value)


def test_dodo_walk_on_hardware_is_refused_before_start(tmp_path, capfd, no_start):
    from dodo_sim.tools import walk_runner
    code = walk_runner.main(['--hardware', 'emulated', '--no-plots', '--runs-dir',
                             str(tmp_path / 'runs')])
    line = capfd.readouterr().err.strip()
    assert code == 2 and line.startswith('dodo walk: error: ') and 'left_foot' in line, line
    assert not (tmp_path / 'runs').exists()


def test_on_hardware_the_driver_logs_its_states_beside_the_bag(tmp_path):
    params = tmp_path / 'p.yaml'
    params.write_text('/**:\n  ros__parameters: {}\n')
    hop = HopRun(params, 2.0, bag=tmp_path / 'bag', hardware='emulated')
    hop.commands(tmp_path)
    data = yaml.safe_load(open(tmp_path / 'dodo_hop.params.yaml'))
    assert data['driver']['ros__parameters']['state_log'] == str(tmp_path / 'bag.driver.mcap')


def test_a_motors_off_line_of_the_driver_fails_the_run_naming_joint_and_cause(tmp_path):
    """
    Issue 16 item 0: the driver reached stop_after and exited, but a fault had stopped the.

    motors: the run is FAILED and its summary names the joint and the cause.
    """
    params = tmp_path / 'p.yaml'
    params.write_text('/**:\n  ros__parameters: {}\n')
    hop = HopRun(params, 2.0, hardware='emulated', out=io.StringIO(), err=io.StringIO())
    driver = SimpleNamespace(name='driver', lines=[])
    reason = 'fault: knee: position -2.800 rad beyond the URDF limit [-2.8, 2.8]'
    for line in [f'[ERROR] [1.0] [driver]: dodo driver motors off: {reason}',
                 f'[ERROR] [2.0] [driver]: dodo driver motors off: {reason}',    # repeated
                 '[INFO] [2.0] [driver]: dodo driver: hardware=emulated run_time_s=2.001 '
                 'cycles=2100 published=2100 faults=1 motors_off_events=1 '
                 'stop_reason=stop_after']:
        hop._on_line(driver, line)
    result = hop.result('completed')
    assert result.outcome == 'failed' and result.exit_code == 1
    assert result.failures == [f'the driver stopped the motors: {reason}']
    assert result.summary().startswith('FAILED') and reason in result.summary()


# -- any controller: the controller node left out (issue 28) ---------------------------------

def test_an_external_controller_leaves_the_controller_node_out_of_launch_and_dodo_hop():
    for record in (False, True):
        launch = graph.launch_nodes(use_sim=True, record=record, rviz=False, hosted=False)
        assert 'controller' not in names(launch) and 'simulator' in names(launch)
        assert graph.hop_nodes(record, hosted=False) == tuple(
            s for s in launch if s.module is not None)


@pytest.mark.parametrize('choice', graph.EXTERNAL_CONTROLLERS)
def test_the_controller_choice_external_or_none_makes_the_robot_external(choice):
    params = REPO / 'config' / 'hop.yaml'
    robot = graph.robot_from_params(params, controller=choice)
    assert robot.external and robot.controller == 'slip_hopper'     # its default model
    assert robot.model.endswith('hopper.urdf.xacro')
    assert not graph.robot_from_params(params).external


def test_a_controller_name_is_hosted_and_validated_by_the_registry():
    robot = graph.robot_from_params(REPO / 'config' / 'hop.yaml', controller='joint_hold')
    assert robot.controller == 'joint_hold' and not robot.external
    running = graph.hop_nodes(False)
    params = graph.hop_parameters(graph.node('controller'), running, {}, robot)
    assert params['controller'] == 'joint_hold'
    with pytest.raises(ValueError, match='no_such_controller'):
        graph.robot_from_params(REPO / 'config' / 'hop.yaml', controller='no_such_controller')


def test_launch_and_dodo_hop_give_the_same_parameters_with_an_external_controller():
    """The agreement above, for the graph without a controller node (one source: graph.py)."""
    robot = graph.robot_from_params(REPO / 'config' / 'hop.yaml', controller='external')
    values = {'bag': 'b'}
    launch = graph.launch_nodes(use_sim=True, record=True, rviz=False, hosted=False)
    hop = graph.hop_nodes(True, hosted=False)
    for spec in hop:
        from_launch = graph.node_parameters(spec, launch, values, launch=True, robot=robot)
        from_hop = graph.hop_parameters(spec, hop, {**values, 'stop_after': 2.0}, robot)
        for key in spec.launch_parameters:
            from_launch.pop(key)
        from_hop.pop('stop_after', None)
        from_hop.pop('robot_description', None)       # launch passes the xacro output
        if spec.name == 'recorder':   # no robot_state_publisher in dodo hop: the recorder owns /tf
            assert from_hop.pop('tf') == 'compute'
        assert from_launch == from_hop, spec.name


@pytest.mark.parametrize('record, gate', [(False, 0), (True, 1)])
def test_without_a_controller_node_the_simulator_gate_counts_the_graphs_own_subscribers(
        record, gate):
    """The external node is waited for by the start gate's rule (start_gate.py), not counted."""
    running = graph.hop_nodes(record, hosted=False)
    params = graph.node_parameters(graph.node('simulator'), running, {'bag': 'b'})
    assert params['min_subscribers'] == gate
    assert params['hosted_controller_node'] == ''          # announced as external
    hosted = graph.node_parameters(graph.node('simulator'), graph.hop_nodes(record), {'bag': 'b'})
    assert hosted['hosted_controller_node'] == 'controller'


def test_the_ros2_control_convention_starts_no_dodo_controller_and_records_its_topics(tmp_path):
    """Issue 27 item 9: the controller_manager answers; the bag holds the convention's topics."""
    params = tmp_path / 'ros2_control.yaml'
    params.write_text('simulator:\n  ros__parameters: {command_convention: ros2_control}\n')
    hop = HopRun(params, 1.0, bag=tmp_path / 'bag')
    assert hop.robot.external and 'controller' not in names(hop.nodes)
    commands = hop.commands(tmp_path)
    assert sorted(commands) == ['recorder', 'simulator']
    topics = yaml.safe_load(open(tmp_path / 'dodo_hop.params.yaml'))['recorder'][
        'ros__parameters']['topics']
    assert contract.ROS2_CONTROL_STATES in topics and contract.ROS2_CONTROL_COMMANDS in topics
    with pytest.raises(ValueError, match='ros2_control'):
        graph.robot_from_params(params, controller='slip_hopper')


def test_dodo_hop_controller_external_starts_no_controller_node(tmp_path):
    params = REPO / 'config' / 'hop.yaml'
    hop = HopRun(params, 1.0, bag=tmp_path / 'bag', controller='external')
    assert sorted(hop.commands(tmp_path)) == ['recorder', 'simulator']
    generated = yaml.safe_load(open(tmp_path / 'dodo_hop.params.yaml'))
    assert generated['simulator']['ros__parameters']['hosted_controller_node'] == ''
    assert 'controller' not in generated


def test_dodo_hop_checks_an_external_run_without_building_a_controller(monkeypatch, no_start):
    from dodo_control import registry
    hop = HopRun(REPO / 'config' / 'hop.yaml', 1.0, controller='external',
                 out=io.StringIO(), err=io.StringIO())

    def refuse(*args, **kwargs):
        raise AssertionError('an external run built the hosted controller')
    monkeypatch.setattr(registry.ControllerEntry, 'build', refuse)
    hop.check()
    hop.release()


def test_dodo_walk_takes_the_controller_option_too(tmp_path):
    from dodo_sim.tools import walk_runner
    args = walk_runner.build_parser().parse_args(['--controller', 'external'])
    assert args.controller == 'external'
    hop = HopRun(REPO / 'config' / 'walk.yaml', 1.0, controller=args.controller)
    assert 'controller' not in names(hop.nodes)
    assert hop.robot.contact_frames == ('left_foot', 'right_foot')      # the walker's robot
