# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
``dodo hop``'s private runs listen on 127.0.0.1 only (issue 27, the DDS note).

With ``ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST`` alone, Fast DDS (rmw_fastrtps_cpp) binds its
discovery and data ports on 0.0.0.0: the network can send to them. ``dodo hop`` gives its nodes
``config/fastdds_loopback.xml`` (``dodo_sim.ros.dds_profile``); during a run no socket of its
processes is bound to another address (read from ``/proc/net/{udp,udp6,tcp,tcp6}`` for the
sockets the processes hold).
"""
import ipaddress
import os
from pathlib import Path
import signal
import sys

from conftest import REPO, ros_env
from process_support import descendants, hop_params, LineProcess
import pytest


def socket_inodes(pid: int) -> set[str]:
    inodes = set()
    try:
        for fd in os.listdir(f'/proc/{pid}/fd'):
            try:
                target = os.readlink(f'/proc/{pid}/fd/{fd}')
            except OSError:
                continue
            if target.startswith('socket:['):
                inodes.add(target[len('socket:['):-1])
    except OSError:
        pass
    return inodes


def bound_addresses(inodes: set[str]) -> list[tuple[str, str, int]]:
    """(table, local address, port) of the IP sockets with these inodes (listening TCP only)."""
    out = []
    for table in ('udp', 'udp6', 'tcp', 'tcp6'):
        lines = Path(f'/proc/net/{table}').read_text().splitlines()[1:]
        for line in lines:
            fields = line.split()
            local, state, inode = fields[1], fields[3], fields[9]
            if inode not in inodes or (table.startswith('tcp') and state != '0A'):
                continue
            address, port = local.split(':')
            raw = bytes.fromhex(address)
            # the kernel prints each 32-bit word in host (little-endian) order
            raw = b''.join(raw[i:i + 4][::-1] for i in range(0, len(raw), 4))
            out.append((table, str(ipaddress.ip_address(raw)), int(port, 16)))
    return out


def test_the_profile_is_used_for_localhost_discovery_and_nothing_else():
    from dodo_sim.ros.dds_profile import loopback_only
    env = {'ROS_AUTOMATIC_DISCOVERY_RANGE': 'LOCALHOST'}
    assert loopback_only(env)
    assert env['ROS_AUTOMATIC_DISCOVERY_RANGE'] == 'SYSTEM_DEFAULT'
    assert Path(env['FASTDDS_DEFAULT_PROFILES_FILE']).is_file()
    for other in ({'ROS_AUTOMATIC_DISCOVERY_RANGE': 'SUBNET'},
                  {'ROS_AUTOMATIC_DISCOVERY_RANGE': 'LOCALHOST',
                   'FASTRTPS_DEFAULT_PROFILES_FILE': '/etc/mine.xml'},
                  {'ROS_AUTOMATIC_DISCOVERY_RANGE': 'LOCALHOST',
                   'RMW_IMPLEMENTATION': 'rmw_cyclonedds_cpp'}):
        before = dict(other)
        assert not loopback_only(other) and other == before     # the user's choice stands


@pytest.mark.ros
@pytest.mark.slow
def test_no_socket_of_a_dodo_hop_run_is_bound_to_a_non_loopback_address(tmp_path):
    params = tmp_path / 'hop.yaml'
    params.write_text(hop_params())
    hop = LineProcess([sys.executable, '-m', 'dodo_sim.tools.cli', 'hop', '--params-file',
                       str(params), '--duration', '1', '--bag', str(tmp_path / 'bag'),
                       '--no-plots', '--verbose'], env=ros_env(), cwd=REPO)
    try:
        hop.wait_for(r'\[simulator\].*simulation starts')
        processes = descendants(hop.proc.pid)
        assert len(processes) >= 3, hop.output
        inodes = set().union(*(socket_inodes(pid) for pid in processes))
        bound = bound_addresses(inodes)
        code = hop.proc.wait(timeout=120)
    finally:
        if hop.proc.poll() is None:
            os.killpg(hop.proc.pid, signal.SIGKILL)
    assert code == 0, hop.output[-3000:]
    assert len(bound) >= 6, bound                   # discovery + data ports of three nodes
    exposed = [b for b in bound if not ipaddress.ip_address(b[1]).is_loopback]
    assert exposed == [], exposed
    # the line telling how to watch the run still names the user's discovery range
    assert 'ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST ros2 topic echo' in hop.output
