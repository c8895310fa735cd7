# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
``dodo replay --through-controller`` refuses a bag whose controller was an external node.

The simulator announces the controller it bound on ``/simulator/controller`` with ``kind``
``hosted`` (the graph's controller node) or ``external`` (any other node, e.g. ``dodo hop
--controller external``); a replay would otherwise compare the user's commands with the SLIP
controller and report a meaningless |dtau| (issue 28).
"""
import json

from bags_support import closed_loop, write_run
from dodo_sim.ros import contract
from dodo_sim.tools import replay
import pytest


def announce(bag, node, kind):
    """Add the simulator's announcement to a bag written by write_run (a second writer)."""
    from dodo_sim.tools.bag_writer import OfflineBagWriter
    path = write_run(bag, closed_loop(duration_s=0.05))
    merged = bag.parent / (bag.name + '_announced')
    from dodo_sim.tools.bag import iter_raw_messages
    with OfflineBagWriter(merged) as w:
        for topic, msgtype, log_ns, data in iter_raw_messages(path):
            w.write_raw(topic, msgtype, data, log_ns)
        msg = w.typestore.types['std_msgs/msg/String'](data=json.dumps(
            {'node': node, 'gid': '01' * 16, 'since_ns': 0, 'kind': kind}))
        w.write(contract.APPLIED_CONTROLLER, 'std_msgs/msg/String', msg, w.log_offset_ns)
    return merged


def test_a_bag_of_an_external_controller_is_refused_with_one_line(tmp_path, capsys):
    bag = announce(tmp_path / 'bag', '/my_ctrl', 'external')
    assert replay.main([str(bag), '--through-controller']) == 2
    out = capsys.readouterr()
    lines = out.err.strip().splitlines()
    assert lines == ["dodo replay: error: the bag's controller was an external node, "
                     '/my_ctrl; it cannot be replayed through a controller (dodo replay BAG '
                     'without --through-controller republishes the bag for your node)'], out


def test_a_bag_of_the_hosted_controller_still_replays_exactly(tmp_path, capsys):
    bag = announce(tmp_path / 'bag', '/controller', 'hosted')
    assert replay.main([str(bag), '--through-controller']) == 0, capsys.readouterr()
    assert 'max |dtau| = 0.000e+00' in capsys.readouterr().out


@pytest.mark.parametrize('text', ['{not json', '[1, 2]', 'x' * 5000])
def test_an_unreadable_announcement_refuses_nothing(text):
    from types import SimpleNamespace

    from dodo_sim.tools.replay_check import announced_controllers, refuse_external_controller
    data = {contract.APPLIED_CONTROLLER: SimpleNamespace(messages=[SimpleNamespace(data=text)])}
    assert announced_controllers(data) == []
    refuse_external_controller(data)
