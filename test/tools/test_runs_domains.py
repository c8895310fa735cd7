# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""A private ROS domain per ``dodo hop`` run (dodo_sim.ros.domains): locks and port checks."""
import os
import signal
import socket
import subprocess
import sys

from dodo_sim.ros import domains
import pytest


@pytest.fixture(autouse=True)
def private_locks(tmp_path, monkeypatch):
    monkeypatch.setenv('XDG_RUNTIME_DIR', str(tmp_path))
    monkeypatch.delenv('DODO_HOP_DOMAINS', raising=False)


def test_two_runs_get_two_domains_and_a_released_one_is_taken_again():
    env = {domains.RANGE_ENV: '40:69'}
    first = domains.reserve(environ=env)
    second = domains.reserve(environ=env)
    assert first.domain_id != second.domain_id
    assert 40 <= first.domain_id <= 69 and 40 <= second.domain_id <= 69
    taken = first.domain_id
    first.release()
    with domains.reserve(taken) as again:
        assert again.domain_id == taken and again.explicit
    second.release()


def test_an_explicit_domain_held_by_another_run_is_refused_with_the_holder():
    with domains.reserve(42):
        with pytest.raises(domains.DomainUnavailable) as info:
            domains.reserve(42)
    message = str(info.value)
    assert 'ROS domain 42 is in use by another run' in message
    assert f'pid {os.getpid()}' in message and 'unset ROS_DOMAIN_ID' in message


def test_the_lock_dies_with_its_process_even_on_sigkill(tmp_path):
    code = ('import sys, time; from dodo_sim.ros import domains\n'
            'lease = domains.reserve(43); print("held", flush=True); time.sleep(60)')
    proc = subprocess.Popen([sys.executable, '-c', code], stdout=subprocess.PIPE, text=True,
                            env=dict(os.environ, XDG_RUNTIME_DIR=str(tmp_path)))
    try:
        assert proc.stdout.readline().strip() == 'held'
        with pytest.raises(domains.DomainUnavailable):
            domains.reserve(43)
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=10)
    finally:
        proc.kill()
        proc.wait()
    domains.reserve(43).release()


def test_a_domain_with_participants_on_this_machine_is_skipped():
    """
    Any process bound in the domain's RTPS port range.

    Such a process (an orphan, another user's node) makes the automatic choice move on; an explicit
    id is still given, with the sockets counted.
    """
    # two neighbouring domains nobody on this machine uses now (the suite's other tests take
    # domains 1..100, and a participant they leave for a moment must not fail this one)
    free = [d for d in range(50, 60) if not domains.sockets_in_domain(d)
            and not domains.sockets_in_domain(d + 1)]
    if not free:
        pytest.skip('no two neighbouring free domains in 50..60')
    low = free[os.getpid() % len(free)]
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        sock.bind(('127.0.0.1', domains.domain_ports(low).start + 240))   # unused RTPS offset
    except OSError:
        pytest.skip('port taken')
    try:
        assert domains.sockets_in_domain(low) >= 1
        with domains.reserve(environ={domains.RANGE_ENV: f'{low}:{low + 1}'}) as lease:
            assert lease.domain_id == low + 1
        with domains.reserve(low) as lease:
            assert lease.foreign_sockets >= 1
    finally:
        sock.close()


def test_no_free_domain_is_a_clear_refusal():
    with domains.reserve(61):
        with pytest.raises(domains.DomainUnavailable, match=r'no free ROS domain in 61\.\.61'):
            domains.reserve(environ={domains.RANGE_ENV: '61:61'})


@pytest.mark.parametrize('text, words', [('abc', 'not a ROS domain id'), ('-1', 'outside'),
                                         ('233', 'outside')])
def test_bad_domain_ids(text, words):
    with pytest.raises(domains.DomainUnavailable, match=words):
        domains.parse_domain_id(text, 'ROS_DOMAIN_ID')
    assert domains.parse_domain_id(' 7 ', 'x') == 7


def test_port_ranges_follow_the_rtps_mapping():
    assert domains.domain_ports(0) == range(7400, 7650)
    assert domains.domain_ports(43).start == 7400 + 250 * 43
    # a real participant of domain d binds 7410 + 250 d + 2 p (discovery) and + 1 (user data)
    assert 7410 + 250 * 43 in domains.domain_ports(43)
