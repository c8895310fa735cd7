# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
``dodo bag recover``: a recording that did not end cleanly becomes a readable bag.

The recovered bag opens in rosbags, the ``mcap`` reader and ``dodo replay``, with everything that
was in complete chunks.

Offline: a bag written in chunks (as the recorder flushes them) is cut inside a chunk and loses
its summary and metadata.yaml, like a SIGKILL leaves it. Over DDS: a recorder process is killed
with SIGKILL in the middle of a hopper run while a second recorder records the same run to the
end; the recovered bag holds >= 95 % of what the second one got before the kill.
"""
from __future__ import annotations

import os
from pathlib import Path
import signal
import time

from bags_support import HOP_PARAMS, node_cmd, Procs, recorder_cmd
from conftest import ros_env
from dodo_sim.ros import contract
from dodo_sim.tools.bag import message_counts, read_bag
from dodo_sim.tools.bag_arrays import joint_states
from dodo_sim.tools.bag_recover import DAMAGED_SUFFIX, recover
from dodo_sim.tools.bag_tool import main as bag_main
from dodo_sim.tools.bag_writer import flush_chunk, OfflineBagWriter
import numpy as np
import pytest


def _chunked_bag(path: Path, n: int = 1000, flush_every: int = 100) -> Path:
    with OfflineBagWriter(path) as w:
        w.robot_description('<robot name="r"/>')
        w.parameters('controller', {'apex_height': 1.1, 'flight_policy': 'cascade'})
        for k in range(n):
            t = k * 1e-3
            w.step(t, [k, 1.0, 0.1, -0.2], [0.0] * 4, [0.0] * 4, [0.0, float(k)])
            if (k + 1) % flush_every == 0:
                assert w.flush()
    return path


def _crash(bag: Path, keep_fraction: float) -> tuple[Path, int]:
    """
    Cut the MCAP file inside the data section.

    The summary and the footer go; metadata.yaml is removed too. Returns the file and the offset of
    the cut.
    """
    from mcap.reader import make_reader
    mcap_file = next(bag.glob('*.mcap'))
    with mcap_file.open('rb') as stream:
        summary = make_reader(stream).get_summary()
    data_end = min(c.chunk_start_offset for c in summary.chunk_indexes) + sum(
        c.chunk_length + c.message_index_length for c in summary.chunk_indexes)
    cut = int(data_end * keep_fraction)
    with mcap_file.open('r+b') as stream:
        stream.truncate(cut)
    (bag / 'metadata.yaml').unlink()
    return mcap_file, cut


def test_rosbags_writer_can_close_chunks_early(tmp_path):
    """The recorder's flush relies on the rosbags MCAP writer's chunk internals."""
    from rosbags.rosbag2 import StoragePlugin, Writer
    writer = Writer(tmp_path / 'bag', version=9, storage_plugin=StoragePlugin.MCAP)
    writer.open()
    try:
        assert flush_chunk(writer)
    finally:
        writer.close()


def test_recover_a_bag_cut_inside_a_chunk(tmp_path, capsys):
    from mcap.reader import make_reader
    bag = _chunked_bag(tmp_path / 'bag')
    mcap_file = next(bag.glob('*.mcap'))
    with mcap_file.open('rb') as stream:
        chunks = make_reader(stream).get_summary().chunk_indexes
    assert len(chunks) == 10
    original = mcap_file.read_bytes()
    _, cut = _crash(bag, 0.75)
    with pytest.raises(FileNotFoundError, match='dodo bag recover'):
        message_counts(bag)
    complete = [c for c in chunks if c.chunk_start_offset + c.chunk_length <= cut]
    assert bag_main(['recover', str(bag)]) == 0
    report = capsys.readouterr().out
    # the original bytes are kept, the rebuilt bag opens
    assert (bag / (mcap_file.name + DAMAGED_SUFFIX)).read_bytes() == original[:cut]
    counts = message_counts(bag)
    # 3 messages per step (contact, joint state, clock): whole chunks of 100 steps survive
    assert counts['joint_states'] == 100 * len(complete)
    assert counts['clock'] == counts['foot_contact'] == counts['joint_states']
    assert counts['robot_description'] == 1 and counts['parameter_events'] == 1
    js = joint_states(read_bag(bag, ['joint_states'])['joint_states'])
    np.testing.assert_array_equal(js.q[:, 0], np.arange(100 * len(complete), dtype=float))
    assert f'recovered {sum(counts.values())} messages' in report
    assert 'bytes after the last complete record' in report
    # Foxglove's reader (mcap) reads the rebuilt file with its summary
    with next(bag.glob('*.mcap')).open('rb') as stream:
        summary = make_reader(stream).get_summary()
    assert summary.statistics.message_count == sum(counts.values())


def test_recover_refuses_a_clean_bag_and_a_bag_without_mcap(tmp_path):
    bag = _chunked_bag(tmp_path / 'bag', n=10)
    with pytest.raises(ValueError, match='closed cleanly'):
        recover(bag)
    report = recover(bag, tmp_path / 'copy')          # --out rewrites a clean bag
    assert report.complete and 'nothing' in report.text()
    assert message_counts(tmp_path / 'copy') == message_counts(bag)
    empty = tmp_path / 'empty'
    empty.mkdir()
    with pytest.raises(ValueError, match='no .mcap file'):
        recover(empty)


def test_recover_reports_a_corrupt_chunk_with_its_index_counts(tmp_path):
    bag = _chunked_bag(tmp_path / 'bag')
    from mcap.reader import make_reader
    mcap_file = next(bag.glob('*.mcap'))
    with mcap_file.open('rb') as stream:
        chunks = make_reader(stream).get_summary().chunk_indexes
    _crash(bag, 0.95)
    # the 5th chunk's first inner record claims 2**40 bytes: the chunk cannot be parsed, the
    # records after it (its message index, the next chunks) are intact
    victim = chunks[4]
    data = bytearray(mcap_file.read_bytes())
    # chunk record: opcode, length, start/end time, uncompressed size, crc, compression '',
    # records length, then the records: opcode (1 byte) and length (8 bytes)
    inner_length = victim.chunk_start_offset + 9 + 8 + 8 + 8 + 4 + 4 + 8 + 1
    data[inner_length:inner_length + 8] = (2**40).to_bytes(8, 'little')
    mcap_file.write_bytes(bytes(data))
    report = recover(bag, tmp_path / 'out')
    assert len(report.lost_chunks) == 1
    lost = report.lost_chunks[0]
    assert lost.counts == {'/joint_states': 100, '/clock': 100, '/foot_contact': 100}
    assert '/joint_states=100' in report.text()
    counts = message_counts(tmp_path / 'out')
    assert counts['joint_states'] == 100 * report.chunks      # every readable chunk
    js = joint_states(read_bag(tmp_path / 'out', ['joint_states'])['joint_states'])
    assert 450.0 not in js.q[:, 0] and 550.0 in js.q[:, 0]


# ---- a recorder killed over DDS ----------------------------------------

@pytest.mark.ros
@pytest.mark.slow
def test_sigkilled_recorder_mid_run_is_recovered(tmp_path):
    """
    Two recorders record one hopper run (recorder, controller, simulator processes).

    One is SIGKILLed mid-run. Recovered: >= 95 % of the messages the other one recorded before the
    kill (bag times are wall-clock ns in both), rosbags and mcap open it, and the controller
    replayed from it reproduces every recorded command.
    """
    from dodo_sim.tools.replay_check import compare_with_controller
    from mcap.reader import make_reader

    env = ros_env()
    procs = Procs()
    killed_bag, reference_bag = tmp_path / 'killed', tmp_path / 'reference'
    try:
        killed = procs.start(recorder_cmd(killed_bag) + ['-r', '__node:=recorder_killed'], env)
        reference = procs.start(recorder_cmd(reference_bag) + ['-r', '__node:=recorder_ref'],
                                env)
        for rec in (killed, reference):
            procs.wait_line(rec, 'dodo recorder: ready', 60)
        controller = procs.start(node_cmd('dodo_sim.ros.controller_node', 'controller',
                                          HOP_PARAMS, use_sim_time=True, min_subscribers=3),
                                 env)
        simulator = procs.start(node_cmd('dodo_sim.ros.simulator_node', 'simulator', HOP_PARAMS,
                                         use_sim_time=True, min_subscribers=3,
                                         stop_after=120.0), env)
        procs.wait_line(simulator, 'simulation starts', 120)
        # mid-run: once the killed recorder has flushed >= 1.5 MB (900 to 1500 control ticks of
        # all streams), however fast the loaded machine runs the simulation
        deadline = time.monotonic() + 300
        mcap_file = killed_bag / f'{killed_bag.name}.mcap'
        while not (mcap_file.is_file() and mcap_file.stat().st_size >= 1_500_000):
            assert time.monotonic() < deadline and simulator.poll() is None, \
                procs.output(simulator)[-3000:]
            time.sleep(0.1)
        kill_ns = time.time_ns()
        os.kill(killed.pid, signal.SIGKILL)
        killed.wait(timeout=10)
        time.sleep(1.0)
        for proc in (simulator, controller):
            proc.send_signal(signal.SIGINT)
            proc.wait(timeout=30)
        reference.send_signal(signal.SIGINT)
        assert reference.wait(timeout=60) == 0, procs.output(reference)
    finally:
        procs.cleanup()
    assert not (killed_bag / 'metadata.yaml').exists()
    report = recover(killed_bag)
    recovered = message_counts(killed_bag)
    before_kill = {}
    for topic, data in read_bag(reference_bag, ['clock', 'joint_states', 'foot_contact',
                                                'joint_commands', 'effort_controller/commands',
                                                'controller/state']).items():
        before_kill[topic] = int(np.sum(data.log_time_ns <= kill_ns))
    print(report.text())
    print('published before the kill (reference recorder):', before_kill)
    print('recovered fraction:', {topic: round(recovered[topic] / count, 4)
                                  for topic, count in before_kill.items()})
    assert before_kill['joint_states'] > 500
    for topic, count in before_kill.items():
        assert recovered[topic] >= 0.95 * count, (topic, recovered[topic], count)
        assert recovered[topic] <= count + 50, (topic, recovered[topic], count)
    assert recovered['robot_description'] == 1 and recovered['parameter_events'] >= 2
    assert recovered['tf'] > 0 and recovered['tf_static'] == 1
    with next(killed_bag.glob('*.mcap')).open('rb') as stream:
        assert make_reader(stream).get_summary().statistics.message_count == \
            sum(recovered.values())
    result = compare_with_controller(killed_bag)
    assert result.compared >= 0.95 * before_kill['controller/state'] - 50
    assert result.max_abs_nm == 0.0, result.summary()
    assert 'recorded' in result.config_source


# -- truthful reports (issue 17 item 6) ---------------------------------------------------------

def _cut_keeping_metadata(bag: Path, keep_fraction: float) -> Path:
    """
    Truncate the MCAP file inside its data section and keep metadata.yaml.

    This is what a cut copy, or a full disk after the recording closed, leaves.
    """
    mcap_file = next(bag.glob('*.mcap'))
    size = mcap_file.stat().st_size
    with mcap_file.open('r+b') as stream:
        stream.truncate(int(size * keep_fraction))
    return mcap_file


def test_info_refuses_a_truncated_bag_that_still_has_its_metadata(tmp_path, capsys):
    """Before: metadata.yaml's counts were printed as if the file held them."""
    bag = _chunked_bag(tmp_path / 'bag')
    _cut_keeping_metadata(bag, 0.5)
    assert bag_main(['info', str(bag)]) == 2
    err = capsys.readouterr().err
    assert 'truncated' in err and 'dodo bag recover' in err and 'Traceback' not in err


def test_recover_measures_the_loss_against_metadata_per_topic(tmp_path, capsys):
    """
    Recover measures the loss against metadata.yaml, per topic.

    Before, it called such a bag 'closed cleanly' in place, and with --out it stated the loss
    (~half the bag) as 'at most flush_period_s'.
    """
    bag = _chunked_bag(tmp_path / 'bag')
    recorded = message_counts(bag)
    _cut_keeping_metadata(bag, 0.5)
    assert bag_main(['recover', str(bag), '--out', str(tmp_path / 'out')]) == 0
    report = capsys.readouterr().out
    got = message_counts(tmp_path / 'out')
    lost = sum(recorded.values()) - sum(got.values())
    assert 0 < got[contract.JOINT_STATES] < recorded[contract.JOINT_STATES]
    assert f'{lost} of {sum(recorded.values())} recorded messages' in report
    lost_js = recorded[contract.JOINT_STATES] - got[contract.JOINT_STATES]
    # 1 ms steps: the lost joint states are the last lost_js - 1 ms .. lost_js ms of the run
    loss = report.split('lost:')[1]
    line = next(x for x in loss.splitlines() if x.strip().startswith('/joint_states'))
    assert f'{lost_js} of {recorded[contract.JOINT_STATES]}' in line
    seconds = float(line.split('the last ')[1].split(' s')[0])
    assert seconds == pytest.approx(lost_js * 1e-3, abs=1.5e-3)
    assert 'flush_period_s' not in report
    # in place too: not "closed cleanly"; the old metadata.yaml is kept beside the new one
    assert bag_main(['recover', str(bag)]) == 0
    assert (bag / ('metadata.yaml' + DAMAGED_SUFFIX)).is_file()
    assert message_counts(bag) == got


@pytest.mark.parametrize('content', [b'', b'PK\x03\x04 a zip file, not MCAP' * 10],
                         ids=['zero bytes', 'foreign file'])
def test_empty_or_foreign_mcap_is_one_line_not_a_traceback(tmp_path, capsys, content):
    bag = _chunked_bag(tmp_path / 'bag', n=10)             # keeps its metadata.yaml
    next(bag.glob('*.mcap')).write_bytes(content)
    for command in (['info', str(bag)], ['recover', str(bag)],
                    ['recover', str(bag), '--out', str(tmp_path / 'out')]):
        assert bag_main(command) == 2, command
        err = capsys.readouterr().err
        assert 'Traceback' not in err and len(err.strip().splitlines()) == 1, err
        assert ('empty' in err) if not content else ('not an MCAP file' in err)
