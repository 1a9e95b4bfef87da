"""Issue 43 item 5: `agentcli sessions list/show/export --store URL` read a PostgreSQL
thread store as they read the session files, and `sessions copy --to URL` moves session
files into one (again: only what they gained). The real PostgreSQL server of
tests/postgres.py, the installed CLI, the scripted model server."""

from __future__ import annotations

import json
from pathlib import Path

import psycopg

from tests.conftest import RunCli
from tests.postgres import PostgresServer
from tests.scripted_server import Reply, ScriptedServer
from tests.test_e2e_sessions import only_session


def test_sessions_copied_into_a_store_read_back_the_same_and_a_second_copy_adds_nothing(
    run_cli: RunCli,
    server: ScriptedServer,
    postgres: PostgresServer,
    postgres_dsn: str,
    cli_home: Path,
):
    env = {"PGPASSWORD": postgres.password}
    server.enqueue(Reply.text(["First answer."]))
    assert run_cli(["run", "first prompt"], server=server).returncode == 0
    server.enqueue(Reply.text(["Second answer."]))
    assert run_cli(["run", "--continue", "second prompt"], server=server).returncode == 0
    path = only_session(cli_home)
    lines = len(path.read_text().splitlines())

    copied = run_cli(["sessions", "copy", "--to", postgres_dsn], env=env)
    assert copied.returncode == 0, copied.stderr
    assert copied.stdout.startswith("copied 1 sessions to postgresql://agentcli@")
    assert copied.stdout.rstrip().endswith(f": {lines} new records")
    again = run_cli(["sessions", "copy", "--to", postgres_dsn], env=env)
    assert again.returncode == 0 and again.stdout.rstrip().endswith(": 0 new records")
    with psycopg.connect(postgres_dsn, password=postgres.password) as connection:
        [(count,)] = connection.execute("SELECT count(*) FROM events").fetchall()
    assert count == lines  # once each, row for line

    local = json.loads(run_cli(["sessions", "list", "--json"]).stdout)
    stored = run_cli(["sessions", "list", "--json", "--store", postgres_dsn], env=env)
    assert stored.returncode == 0, stored.stderr
    assert json.loads(stored.stdout) == local and local[0]["turns"] == 2
    for command in (["show", path.stem[:8]], ["export", path.stem, "--format", "json"]):
        here = run_cli(["sessions", *command])
        there = run_cli(["sessions", *command, "--store", postgres_dsn], env=env)
        assert there.returncode == 0, there.stderr
        assert there.stdout == here.stdout and "Second answer." in there.stdout

    server.enqueue(Reply.text(["Third answer."]))  # the file grows: copying again adds that
    assert run_cli(["run", "--continue", "third prompt"], server=server).returncode == 0
    grown = len(path.read_text().splitlines())
    third = run_cli(["sessions", "copy", path.stem, "--to", postgres_dsn], env=env)
    assert third.stdout.rstrip().endswith(f": {grown - lines} new records")
    shown = run_cli(["sessions", "show", path.stem, "--store", postgres_dsn], env=env)
    assert "Third answer." in shown.stdout


def test_a_store_session_unknown_or_a_password_in_the_url_is_one_line(
    run_cli: RunCli, postgres: PostgresServer, postgres_dsn: str
):
    env = {"PGPASSWORD": postgres.password}
    missing = run_cli(["sessions", "show", "nope", "--store", postgres_dsn], env=env)
    assert missing.returncode == 2
    assert missing.stderr.strip().splitlines() == [
        f"agentcli: error: no session 'nope' in postgresql://agentcli@{postgres.host}:"
        f"{postgres.port}/{postgres_dsn.rsplit('/', 1)[1]}"
    ]
    secret = postgres_dsn.replace("agentcli@", "agentcli:secret@")
    refused = run_cli(["sessions", "copy", "--to", secret])
    assert refused.returncode == 2 and "secret" not in refused.stderr
    assert "the URL holds a password" in refused.stderr


def test_a_session_the_store_holds_otherwise_is_left_there_and_the_others_are_copied(
    run_cli: RunCli,
    server: ScriptedServer,
    postgres: PostgresServer,
    postgres_dsn: str,
    cli_home: Path,
):
    """Exit 1 and one warning naming it: the store's records of that session stay as they
    are (no file overwrites what a replica recorded), the other sessions are copied."""
    env = {"PGPASSWORD": postgres.password}
    server.enqueue(Reply.text(["One."]))
    assert run_cli(["run", "first"], server=server).returncode == 0
    first = only_session(cli_home)
    assert run_cli(["sessions", "copy", "--to", postgres_dsn], env=env).returncode == 0
    with psycopg.connect(postgres_dsn, password=postgres.password) as connection:
        connection.execute(  # what a replica recorded: other than the file's line 2
            "UPDATE events SET record = %s::json WHERE thread_id = %s AND seq = 2",
            ('{"t": "note", "text": "the store\'s own"}', first.stem),
        )
        before = connection.execute(
            "SELECT seq, record::text FROM events WHERE thread_id = %s ORDER BY seq",
            (first.stem,),
        ).fetchall()
    server.enqueue(Reply.text(["Two."]))
    assert run_cli(["run", "second"], server=server).returncode == 0
    [second] = [p for p in first.parent.glob("*.jsonl") if p != first]

    result = run_cli(["sessions", "copy", "--to", postgres_dsn], env=env)
    assert result.returncode == 1, result.stderr
    assert result.stderr.splitlines() == [
        f"agentcli: warning: session {first.stem} is in "
        f"{result.stdout.split(' to ', 1)[1].split(': ')[0]} with other records; "
        "left as it is there"
    ]
    assert result.stdout.startswith("copied 1 sessions to ")
    with psycopg.connect(postgres_dsn, password=postgres.password) as connection:
        after = connection.execute(
            "SELECT seq, record::text FROM events WHERE thread_id = %s ORDER BY seq",
            (first.stem,),
        ).fetchall()
        [(count,)] = connection.execute(
            "SELECT count(*) FROM events WHERE thread_id = %s", (second.stem,)
        ).fetchall()
    assert after == before
    assert count == len(second.read_text().splitlines())
