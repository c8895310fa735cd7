# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
A database password never reaches the terminal or the results (issue 27 item 11).

``dodo optimize --storage postgresql+psycopg://user:PASSWORD@...`` printed the password three
times: in the study line, in the optuna-dashboard hint and in the error when the database could
not be reached. One rule, :func:`dodo_sim.redact.redact`, hides it everywhere.
"""
from pathlib import Path
import textwrap

from dodo_sim.tools import optimize
import pytest

SECRET = 'Tr0ub4dor3'


def toy_study(tmp_path) -> Path:
    path = tmp_path / 'study.yaml'
    path.write_text(textwrap.dedent("""
        name: toy
        robot: toy_robot_scenarios
        trials: 2
        parameters:
          controller:
            gain: {low: -5.0, high: 5.0}
        scenarios: [{kind: faulty}]
        objectives:
          - {metric: cost}
        """))
    return path


def test_an_unreachable_database_shows_no_password_in_any_of_its_lines(tmp_path, capsys):
    # a socket directory with no server: the study line and the hint are printed, then the
    # connection fails
    url = f'postgresql+psycopg://alice:{SECRET}@/study?host={tmp_path}/nothing-here'
    code = optimize.main([str(toy_study(tmp_path)), '--storage', url, '--out',
                          str(tmp_path / 'out'), '--no-progress'])
    captured = capsys.readouterr()
    study_line, hint = captured.out.splitlines()[:2]
    errors = [line for line in captured.err.splitlines() if line.strip()]
    assert code == 2
    assert SECRET not in captured.out + captured.err
    assert 'storage postgresql+psycopg://alice:***@/study' in study_line
    assert 'optuna-dashboard postgresql+psycopg://alice:***@/study' in hint
    assert len(errors) == 1 and 'postgresql+psycopg://alice:***@/study' in errors[0], errors


@pytest.mark.parametrize('url, words', [
    (f'mysql://bob:{SECRET}@db.example/study', 'driver is not installed'),
    (f'postgresq://bob:{SECRET}@db.example/study', 'unknown database'),
    (f'postgresql://bob:{SECRET}@db.example:port/study', 'is not a database URL'),
])
def test_a_refused_storage_url_is_shown_without_its_password(tmp_path, capsys, url, words):
    code = optimize.main([str(toy_study(tmp_path)), '--storage', url, '--out',
                          str(tmp_path / 'out')])
    err = capsys.readouterr().err
    assert code == 2 and words in err, err
    assert SECRET not in err and 'bob:***@' in err


@pytest.mark.slow
def test_results_and_the_study_line_of_a_working_database_hide_the_password(tmp_path, capsys):
    from optimize_support import postgres_server, postgres_url
    server = postgres_server()
    try:
        # pgserver trusts its unix socket: the password is sent and ignored, as with a
        # password file or peer authentication
        url = postgres_url(next(server), 'secrets').replace('postgres:@', f'postgres:{SECRET}@')
        out = tmp_path / 'out'
        code = optimize.main([str(toy_study(tmp_path)), '--storage', url, '--out', str(out),
                              '--no-progress'])
    finally:
        next(server, None)
    captured = capsys.readouterr()
    assert code == 0, captured.err
    assert SECRET not in captured.out + captured.err
    assert 'postgres:***@' in captured.out
    for result in out.iterdir():
        if result.suffix in ('.yaml', '.txt', '.csv'):
            assert SECRET not in result.read_text(), result


@pytest.mark.parametrize('text, shown', [
    ('postgresql+psycopg://u:p%40ss@h:5432/db', 'postgresql+psycopg://u:***@h:5432/db'),
    ('mysql://u:a/b:c@h/db', 'mysql://u:***@h/db'),
    ('postgresql://u@h/db', 'postgresql://u@h/db'),
    ('postgresql://u:@h/db', 'postgresql://u:@h/db'),
    ('postgresql://h/db?user=u&password=pw&sslmode=require',
     'postgresql://h/db?user=u&password=***&sslmode=require'),
    ("host=h password='two words' dbname=d", "host=h password='***' dbname=d"),
    ('sqlite:///runs/a@b.db', 'sqlite:///runs/a@b.db'),
    ('journal:/tmp/study.journal', 'journal:/tmp/study.journal'),
    ('error: connection to postgresql://u:pw@h/db failed', 'error: connection to '
     'postgresql://u:***@h/db failed'),
])
def test_redact_hides_url_passwords_and_keyed_secrets_only(text, shown):
    from dodo_sim.redact import redact
    assert redact(text) == shown
