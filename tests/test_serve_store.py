"""Issue 43: `agentcli serve --store postgresql://...`, replica by replica (no proxy): the
schema made once by replicas starting together, a thread continued by another replica, a
run in progress refused elsewhere, the URL's password refused, the database away at start.
A real PostgreSQL (tests/postgres.py) and the installed CLI; skipped without PostgreSQL."""

from __future__ import annotations

import threading

import httpx
import psycopg
import pytest

from tests.agui_helpers import AUTH, TOKEN, free_port, post_run, run_input, types, wait_ready
from tests.conftest import StartCli
from tests.haproxy import start_replicas
from tests.postgres import PostgresServer
from tests.scripted_server import Reply, ScriptedServer
from tests.sse_server import Gate

pytest.importorskip("starlette")

pytestmark = pytest.mark.slow  # real processes: PostgreSQL and replicas

USER = {"id": "u1", "role": "user", "content": "hi"}


def rows(postgres: PostgresServer, dsn: str, sql: str) -> list[tuple]:
    with psycopg.connect(dsn, password=postgres.password) as connection:
        return connection.execute(sql).fetchall()


def held(before: str, gate: Gate, after: str) -> Reply:
    """A text answer that streams `before`, waits for the gate, then ends with `after`."""
    head = Reply.text([before], finish_reason=None, usage=None, done=False)
    rest = Reply.text([after])  # (its role chunk: said again)
    return Reply(kind="stream", steps=(*head.steps, gate, *rest.steps))


def said(events: list[dict]) -> str:
    return "".join(e["delta"] for e in events if e["type"] == "TEXT_MESSAGE_CONTENT")


def test_replicas_started_together_make_the_schema_once_and_share_a_thread(
    start_cli: StartCli, server: ScriptedServer, postgres: PostgresServer, postgres_dsn: str
):
    replicas = start_replicas(
        start_cli, server, 3, postgres_dsn, env={"PGPASSWORD": postgres.password}
    )
    assert rows(postgres, postgres_dsn, "SELECT version FROM schema_version") == [(1,)]

    server.enqueue(Reply.text(["first ", "answer"]))
    post_run(replicas[0].url, run_input("shared", "r1", [USER]))
    server.enqueue(Reply.text(["second"]))
    again = {"id": "u2", "role": "user", "content": "and again"}
    events = post_run(replicas[1].url, run_input("shared", "r2", [again]))
    assert types(events)[-1] == "RUN_FINISHED"
    sent = server.requests[1].json["messages"]
    assert [m["role"] for m in sent[-3:]] == ["user", "assistant", "user"]
    assert sent[-2]["content"] == "first answer" and sent[-1]["content"] == "and again"
    # Every record a row, appended in order from 1: the header first, never rewritten.
    recorded = rows(postgres, postgres_dsn, "SELECT seq, record->>'t' FROM events ORDER BY seq")
    assert [seq for seq, _ in recorded] == list(range(1, len(recorded) + 1))
    assert recorded[0][1] == "session"
    assert [kind for _, kind in recorded].count("session") == 1


def test_a_run_in_progress_on_one_replica_is_a_409_on_another(
    start_cli: StartCli, server: ScriptedServer, postgres: PostgresServer, postgres_dsn: str
):
    first, second = start_replicas(
        start_cli, server, 2, postgres_dsn, env={"PGPASSWORD": postgres.password}
    )
    gate = Gate()
    server.enqueue(held("held ", gate, "then done"))
    outcome: dict[str, object] = {}

    def run() -> None:
        outcome["events"] = post_run(first.url, run_input("busy", "r1", [USER]))

    poster = threading.Thread(target=run)
    poster.start()
    try:
        server.wait_for_requests(1, timeout=30)  # the run on `first` has reached the model
        refused = httpx.post(
            second.url,
            json=run_input("busy", "r2", [{"id": "u2", "role": "user", "content": "me too"}]),
            headers={"Accept": "text/event-stream", **AUTH},
            timeout=30,
        )
    finally:
        gate.set()
        poster.join(timeout=60)
    assert refused.status_code == 409
    assert refused.json() == {"error": "thread 'busy' has a run in progress; wait for it"}
    assert said(outcome["events"]) == "held then done"  # type: ignore[arg-type]
    server.enqueue(Reply.text(["now yours"]))  # released at the run's end: free again
    events = post_run(
        second.url, run_input("busy", "r3", [{"id": "u3", "role": "user", "content": "now?"}])
    )
    assert said(events) == "now yours"


def test_a_password_in_the_url_is_refused_in_one_line(run_cli, postgres_dsn: str):
    with_password = postgres_dsn.replace("agentcli@", "agentcli:secret@")
    result = run_cli(["serve", "--store", with_password])
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == [
        "agentcli: error: --store: the URL holds a password, which `ps` and shared files "
        "would show; remove it and set PGPASSWORD (or ~/.pgpass) instead"
    ]
    assert "secret" not in result.stdout


def test_the_database_away_at_start_is_said_and_runs_work_once_it_is_there(
    start_cli: StartCli, server: ScriptedServer, postgres: PostgresServer
):
    missing = postgres.dsn("not_yet")  # a database nobody made yet: the server is up
    port = free_port()
    process = start_cli(
        ["serve", "--port", str(port), "--token-env", "AGUI_TOKEN", "--store", missing],
        server=server,
        env={"AGUI_TOKEN": TOKEN, "PGPASSWORD": postgres.password},
    )
    url = f"http://127.0.0.1:{port}/"
    wait_ready(process, url, any_answer=True)
    health = httpx.get(url + "health", timeout=10)
    assert health.status_code == 503 and "is unavailable" in health.json()["error"]
    events = post_run(url, run_input("t", "r1", [USER]))
    assert types(events) == ["RUN_ERROR"]
    assert events[0]["code"] == "store_unavailable"
    assert events[0]["message"].startswith("the thread store postgresql://agentcli@")
    assert "not_yet" in events[0]["message"] and "\n" not in events[0]["message"]

    postgres.create_database("not_yet")
    wait_ready(process, url)  # /health is 200 again
    server.enqueue(Reply.text(["there now"]))
    assert said(post_run(url, run_input("t", "r2", [USER]))) == "there now"
    process.terminate()
    _, stderr = process.communicate(timeout=10)
    assert "Traceback" not in stderr
    assert stderr.count("is unavailable") == 1  # said once at start, not per request
