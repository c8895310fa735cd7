# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""``dodo replay``: the offline controller regression check and the DDS republisher."""
from __future__ import annotations

from pathlib import Path
import signal
import subprocess
import sys
import time

from bags_support import closed_loop, write_run
from conftest import ros_env
from dodo_sim.tools.bag import message_counts, read_bag
from dodo_sim.tools.bag_arrays import joint_states
from dodo_sim.tools.bag_writer import OfflineBagWriter
from dodo_sim.tools.replay import main
from dodo_sim.tools.replay_check import compare_with_controller
import numpy as np
import pytest

REPO = Path(__file__).resolve().parents[2]
DURATION_S = 1.0


def _closed_loop(params_file=None):
    """
    Return an offline run of the simulator + controller cores as the ROS nodes drive them.

    It is a list of (stamp_ns, q, v, contact rows [fx, fy, fz] per frame, tau, telemetry-ish
    channels).
    """
    from dodo_control.controller import Controller, ControllerConfig
    from dodo_sim.paths import default_params_path, default_urdf_path
    from dodo_sim.rollout import rollout
    from dodo_sim.stamps import stamp_ns
    from dodo_sim.ros.params import config_from_file
    from dodo_sim.simulator import SimConfig, Simulator

    params = params_file or default_params_path()
    urdf = str(default_urdf_path())
    sim = Simulator(urdf, config_from_file(SimConfig, params, 'simulator'))
    ctrl = Controller(urdf, config_from_file(ControllerConfig, params, 'controller'))
    sim.reset()
    alphas = []
    run = rollout(sim, ctrl, steps=int(round(DURATION_S / sim.config.control_period)) + 1,
                  on_tick=lambda k, state, tau: alphas.append(
                      float(ctrl.telemetry.angle_of_attack_rad)))
    rows = [(stamp_ns(run.t[k]), run.q[k].copy(), run.v[k].copy(),
             run.contact_forces[k].copy(),
             run.tau[k].copy(), alphas[k]) for k in range(run.ticks)]
    return sim.leg.urdf_xml, rows


@pytest.fixture(scope='module')
def run():
    return _closed_loop()


def _write(path, run, *, with_state=True, skip_first=0, perturb=None, command_lag_steps=0):
    urdf_xml, rows = run
    with OfflineBagWriter(path) as w:
        w.robot_description(urdf_xml)
        for k, (ns, q, v, force, tau, alpha) in enumerate(rows):
            t = ns * 1e-9
            w.step(t, q, v, np.r_[0.0, 0.0, tau], force)
            if k < skip_first:
                continue
            tau = tau.copy()
            if perturb is not None and k == perturb[0]:
                tau[1] += perturb[1]
            lag_ns = command_lag_steps * 1_000_000
            w.command(t, tau, log_ns=w.log_offset_ns + ns + lag_ns + 500_000)
            if with_state:
                w.controller_state(t, ['phase', 'angle_of_attack_rad', 'tau_hip', 'tau_knee'],
                                   [0.0, alpha, tau[0], tau[1]])
    return path


def test_through_controller_reproduces_recorded_commands(tmp_path, run, capsys):
    bag = _write(tmp_path / 'bag', run)
    result = compare_with_controller(bag)
    assert result.source == 'controller/state'
    assert result.compared == len(run[1])
    assert result.max_abs_nm <= 1e-9
    assert main([str(bag), '--through-controller']) == 0
    assert 'max |dtau|' in capsys.readouterr().out
    by_commands = compare_with_controller(bag, source='commands')
    assert by_commands.source == 'effort_controller/commands'
    assert by_commands.compared == len(run[1]) and by_commands.max_abs_nm <= 1e-9


def test_through_controller_flags_a_changed_command(tmp_path, run, capsys):
    k = len(run[1]) // 2
    bag = _write(tmp_path / 'bag', run, perturb=(k, 0.05))
    result = compare_with_controller(bag)
    assert result.max_abs_nm == pytest.approx(0.05, rel=1e-6)
    assert result.max_abs_per_joint_nm[0] <= 1e-9
    assert result.t_of_max_s == pytest.approx(run[1][k][0] * 1e-9)
    assert main([str(bag), '--through-controller', '--tolerance', '0.01']) == 1
    assert 'FAIL' in capsys.readouterr().err
    assert main([str(bag), '--through-controller', '--tolerance', '0.1']) == 0


def test_replayed_controller_gets_the_contact_rows_the_node_gives_it(tmp_path, run,
                                                                     monkeypatch):
    """
    The controller node passes one world force row per contact frame.

    Each row is [fx, fy, fz], and the frames are the controller's: shape (n_frames, 3). The replay
    passes the same, taken from the recorded /<frame>_contact messages with the state's stamp (fy
    included, although the hopper ignores it).
    """
    from dodo_control.controller import Controller
    urdf_xml, rows = run
    marked = [(ns, q, v, force + np.array([[0.0, 0.125 + k, 0.0]]), tau, alpha)
              for k, (ns, q, v, force, tau, alpha) in enumerate(rows)]
    bag = _write(tmp_path / 'bag', (urdf_xml, marked))
    seen = {}
    update = Controller.update

    def spy(self, t, q, v, contact_force):
        seen[int(round(t * 1e9))] = np.array(contact_force, copy=True)
        return update(self, t, q, v, contact_force)

    monkeypatch.setattr(Controller, 'update', spy)
    result = compare_with_controller(bag)
    assert result.max_abs_nm <= 1e-9
    for ns, _q, _v, force, _tau, _alpha in marked:
        assert seen[ns].shape == (len(Controller(urdf_xml).contact_frames), 3) == (1, 3)
        np.testing.assert_array_equal(seen[ns], force)


def _write_own_clock_contacts(path, run, pairing):
    """
    Return a bag of a driver whose contact sensor has its own clock.

    Each contact message carries a stamp 0.3 ms after its joint state's but arrives (bag time) just
    before it; the controller's recorded contact_pairing is ``pairing``.
    """
    from dodo_control.slip.config import ControllerConfig
    from dodo_sim.paths import default_params_path
    from dodo_sim.ros.params import config_from_file, config_to_parameters
    urdf_xml, rows = run
    values = config_to_parameters(config_from_file(ControllerConfig, default_params_path(),
                                                   'controller'))
    with OfflineBagWriter(path) as w:
        w.robot_description(urdf_xml)
        w.parameters('controller', dict(values, contact_pairing=pairing))
        for ns, q, v, force, tau, _alpha in rows:
            t, log_ns = ns * 1e-9, w.log_offset_ns + ns
            w.contact('foot', t + 0.0003, force[0], log_ns=log_ns)
            w.joint_state(t, q, v, np.r_[0.0, 0.0, tau], log_ns=log_ns + 1)
            w.joint_command(t, ['hip', 'knee'], tau, log_ns=log_ns + 500_000)
    return path


@pytest.mark.parametrize('pairing', ['auto', 'latest'])
def test_contacts_with_their_own_clock_pair_by_arrival(tmp_path, run, pairing):
    """
    Contact pairing 'latest' and 'auto'.

    With 'latest', and with 'auto' once the node has switched to 'latest' because no contact
    carries a joint-state stamp, each state goes with the newest contact recorded before it.
    """
    bag = _write_own_clock_contacts(tmp_path / 'bag', run, pairing)
    result = compare_with_controller(bag)
    assert result.compared == len(run[1]) and result.unmatched_states == 0
    assert result.max_abs_nm == 0.0


def test_contacts_with_their_own_clock_find_no_stamp_under_stamp_pairing(tmp_path, run):
    bag = _write_own_clock_contacts(tmp_path / 'bag', run, 'stamp')
    with pytest.raises(ValueError, match='no recorded command could be paired'):
        compare_with_controller(bag)


@pytest.mark.parametrize('lag_steps', [0, 7])
def test_commands_only_bag_pairs_from_the_first_answered_state(tmp_path, run, lag_steps):
    """
    No /controller/state.

    Commands answer consecutive states from the one the first command answers (a controller that
    started late); the fresh controller starts there too, also when the commands' bag times lag
    their states by a few steps.
    """
    from dodo_control.controller import Controller, ControllerConfig
    from dodo_sim.paths import default_params_path
    from dodo_sim.ros.params import config_from_file

    skip = 5
    urdf_xml, rows = run
    late = Controller(urdf_xml, config_from_file(ControllerConfig, default_params_path(),
                                                 'controller'))
    late_rows = [(ns, q, v, f, np.asarray(late.update(ns * 1e-9, q.copy(), v.copy(), f.copy())),
                  a) if k >= skip else (ns, q, v, f, tau, a)
                 for k, (ns, q, v, f, tau, a) in enumerate(rows)]
    bag = _write(tmp_path / 'bag', (urdf_xml, late_rows), with_state=False, skip_first=skip,
                 command_lag_steps=lag_steps)
    result = compare_with_controller(bag)
    assert result.source == 'effort_controller/commands'
    assert result.compared == len(rows) - skip
    assert result.max_abs_nm <= 1e-9


def test_other_controller_params_are_detected(tmp_path, run):
    bag = _write(tmp_path / 'bag', run)
    params = tmp_path / 'other.yaml'
    params.write_text('controller:\n  ros__parameters:\n    apex_height: 1.0\n'
                      '    target_x: 1.5\n')
    result = compare_with_controller(bag, params_file=params)
    assert result.max_abs_nm > 1e-3
    assert main([str(bag), '--through-controller', '--params-file', str(params)]) == 1


def test_not_a_bag_is_a_clear_error(tmp_path, capsys):
    assert main([str(tmp_path), '--through-controller']) == 2
    assert 'metadata.yaml' in capsys.readouterr().err


# ---- over DDS ----------------------------------------------------------


@pytest.mark.ros
def test_replay_republishes_every_message_with_scaled_timing(tmp_path):
    n, rate = 400, 0.5
    src = tmp_path / 'src'
    with OfflineBagWriter(src) as w:
        w.robot_description('<robot name="replayed"/>')
        from dodo_sim.ros.tf_frames import Transform
        w.tf_static([Transform('shank', 'foot', np.zeros(3), np.array([0.0, 0.0, 0.0, 1.0]))])
        for k in range(n):
            t = k * 1e-3
            w.step(t, [k, 1.0, 0.0, 0.0], [0.0] * 4, [0.0] * 4, [0.0, 0.0])
    env = ros_env()
    out_bag = tmp_path / 'out'
    recorder = subprocess.Popen(
        [sys.executable, '-m', 'dodo_sim.ros.recorder', '--ros-args', '-p', f'bag:={out_bag}',
         '-p', "topics:=['joint_states', 'clock', 'foot_contact', 'robot_description', "
         "'tf_static']", '-p', 'tf:=record'],
        env=env, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 30
        while not recorder.stdout.readline().startswith('dodo recorder: ready'):
            assert time.monotonic() < deadline and recorder.poll() is None, 'recorder not ready'
        replay = subprocess.run(
            [sys.executable, '-c', 'import sys; from dodo_sim.tools.replay import main; '
             'sys.exit(main(sys.argv[1:]))', str(src), '--rate', str(rate),
             '--min-subscribers', '1', '--start-delay', '0.5'],
            env=env, cwd=REPO, capture_output=True, text=True, timeout=60)
        assert replay.returncode == 0, replay.stderr
        # /tf_static too: tf2_msgs is built at install on a plain machine (docs/interfaces.md)
        assert f'published {3 * n + 2} messages' in replay.stdout
        recorder.send_signal(signal.SIGINT)
        _, err = recorder.communicate(timeout=30)
        assert recorder.returncode == 0, err
    finally:
        if recorder.poll() is None:
            recorder.kill()
            recorder.wait(timeout=10)
    counts = message_counts(out_bag)
    assert counts == {'joint_states': n, 'clock': n, 'foot_contact': n,
                      'robot_description': 1, 'tf_static': 1}
    data = read_bag(out_bag, ['joint_states'])
    js = joint_states(data['joint_states'])
    np.testing.assert_array_equal(js.q[:, 0], np.arange(n, dtype=float))
    np.testing.assert_array_equal(js.stamp_ns, np.arange(n, dtype=np.int64) * 1_000_000)
    # paced: messages 1 ms apart in the bag arrive 1 ms / rate = 2 ms apart. The median spacing of
    # the receive times is used because a loaded machine may deliver the first few in a burst
    # (an unpaced replay gives spacings of tens of microseconds).
    spacing_s = np.median(np.diff(data['joint_states'].log_time_ns)) * 1e-9
    assert spacing_s == pytest.approx(1e-3 / rate, rel=0.25)


def test_offline_replay_and_plot_need_no_rclpy(tmp_path, run):
    """--through-controller and the plots are pure offline tools: they never import rclpy."""
    bag = _write(tmp_path / 'bag', run)
    code = ('import sys\n'
            'from dodo_sim.tools.replay import main\n'
            'import dodo_sim.tools.plot, dodo_sim.tools.bag\n'
            f'assert main([{str(bag)!r}, "--through-controller"]) == 0\n'
            'assert "rclpy" not in sys.modules, "offline replay imported rclpy"\n')
    result = subprocess.run([sys.executable, '-c', code], cwd=REPO, capture_output=True,
                            text=True, timeout=120)
    assert result.returncode == 0, result.stderr


# ---- replay from the bag alone (configuration recorded, runtime changes) -----------------------

#: a params file other than the package default: the replay must take its values from the bag
OTHER_PARAMS = ('controller:\n  ros__parameters:\n    apex_height: 1.1\n    target_x: 0.8\n'
                '    flight_policy: cascade\n')
#: the runtime set-point change (``ros2 param set``) after this tick
CHANGE = (600, {'apex_height': 1.25, 'target_x': 1.2})


@pytest.fixture(scope='module')
def changed_run(tmp_path_factory):
    params = tmp_path_factory.mktemp('params') / 'other.yaml'
    params.write_text(OTHER_PARAMS)
    return closed_loop(params, duration_s=1.5, change=CHANGE)


def test_recorded_configuration_and_runtime_change_reproduce_every_command(tmp_path, changed_run):
    bag = write_run(tmp_path / 'bag', changed_run)
    result = compare_with_controller(bag)
    assert result.source == 'joint_commands'
    assert result.compared == len(changed_run['rows'])
    assert result.changes_applied == 1 and 'recorded' in result.config_source
    assert result.max_abs_nm == 0.0
    assert not result.warnings


def test_without_the_recorded_change_the_commands_differ_after_it(tmp_path, changed_run):
    bag = write_run(tmp_path / 'bag', changed_run, changes=False)
    result = compare_with_controller(bag)
    assert result.max_abs_nm > 1.0
    assert result.t_of_max_s > changed_run['rows'][CHANGE[0]][0] * 1e-9


def test_without_recorded_parameters_the_default_config_is_used_and_differs(tmp_path,
                                                                            changed_run, capsys):
    bag = write_run(tmp_path / 'bag', changed_run, parameters=False, changes=False)
    result = compare_with_controller(bag)
    assert 'package default' in result.config_source and result.warnings
    assert result.max_abs_nm > 1.0
    assert main([str(bag), '--through-controller']) == 1
    assert 'no recorded configuration' in capsys.readouterr().err


def test_change_is_placed_by_config_revision_not_by_bag_time(tmp_path, changed_run):
    """
    The parameter event's bag time says 'somewhere around tick 600'.

    Moving it 50 ticks later in the bag does not matter while config_revision says where it took
    effect.
    """
    rows = changed_run['rows']
    bag = write_run(tmp_path / 'bag', changed_run, changes=False)
    # rewrite with the change event 50 ms late
    from dodo_sim.tools.bag_writer import OfflineBagWriter
    late = tmp_path / 'late'
    with OfflineBagWriter(late) as w:
        from dodo_sim.tools.bag import iter_raw_messages
        for topic, msgtype, log_ns, raw in iter_raw_messages(bag):
            w.write_raw(topic, msgtype, raw, log_ns)
        w.parameter_change('controller', CHANGE[1], rows[CHANGE[0] + 50][0] * 1e-9)
    assert compare_with_controller(late).max_abs_nm == 0.0
    # without the revision channel only the bag time is left: the late event is 50 ticks late
    no_rev = write_run(tmp_path / 'norev', changed_run, changes=False, revision_channel=False)
    late2 = tmp_path / 'late2'
    with OfflineBagWriter(late2) as w:
        for topic, msgtype, log_ns, raw in iter_raw_messages(no_rev):
            w.write_raw(topic, msgtype, raw, log_ns)
        w.parameter_change('controller', CHANGE[1], rows[CHANGE[0] + 50][0] * 1e-9)
    result = compare_with_controller(late2)
    assert result.max_abs_nm > 1e-3 and any('approximate' in w for w in result.warnings)


def test_without_revision_channel_the_change_goes_at_the_next_command(tmp_path, changed_run):
    """
    Older controllers publish no config_revision.

    The change applies to the first command recorded after the event (the node publishes the event
    before its next update).
    """
    bag = write_run(tmp_path / 'bag', changed_run, revision_channel=False)
    result = compare_with_controller(bag)
    assert result.max_abs_nm == 0.0 and result.changes_applied == 1
    assert any('approximate' in w for w in result.warnings)


def test_params_file_overrides_the_recorded_configuration_with_a_warning(tmp_path, changed_run,
                                                                         capsys):
    bag = write_run(tmp_path / 'bag', changed_run)
    from dodo_sim.paths import default_params_path
    result = compare_with_controller(bag, params_file=default_params_path())
    assert result.max_abs_nm > 1.0
    assert any('overrides' in w for w in result.warnings)
    assert main([str(bag), '--through-controller', '--params-file',
                 str(default_params_path())]) == 1
    assert 'overrides the configuration recorded' in capsys.readouterr().err


@pytest.mark.parametrize('source', ['joint_commands', 'state', 'commands'])
def test_every_recorded_command_stream_gives_the_same_answer(tmp_path, changed_run, source):
    bag = write_run(tmp_path / 'bag', changed_run)
    result = compare_with_controller(bag, source=source)
    assert result.max_abs_nm == 0.0 and result.compared == len(changed_run['rows'])
