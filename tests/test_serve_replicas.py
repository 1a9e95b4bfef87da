"""Issue 43: 3 `agentcli serve` replicas behind HAProxy (round-robin, not sticky), sharing
their threads through PostgreSQL. Real parts only: HAProxy and PostgreSQL started by the
tests, the installed CLI, the scripted model server, @ag-ui/client's HttpAgent. Skips
cleanly where HAProxy or PostgreSQL are missing; never faked. Each replica has a home of
its own: only the database is shared. Every wait is on an event or a condition, with a
deadline; the leases last 1 s so that a dead replica's lapses quickly."""

from __future__ import annotations

import itertools
import json
import os
import subprocess
import threading
import time
from collections.abc import Callable
from pathlib import Path

import httpx
import psycopg
import pytest

from tests.agui_helpers import AUTH, TOKEN, free_port, run_input, sse_events, types, wait_ready
from tests.conftest import StartCli
from tests.haproxy import REPLICA_HEADER, HAProxy, Replica, haproxy, start_replicas  # noqa: F401
from tests.postgres import PostgresServer
from tests.scripted_server import Reply, ScriptedServer
from tests.sse_server import Gate
from tests.test_e2e_serve import CONFIRM_TOOL

pytest.importorskip("starlette")
pytest.importorskip("uvicorn")

pytestmark = pytest.mark.slow  # real processes: HAProxy, replicas, PostgreSQL

USER = {"id": "u1", "role": "user", "content": "hi"}


def run_through(url: str, body: dict) -> tuple[str, list[dict]]:
    """One run through HAProxy: the replica that served it, and its events."""
    headers = {"Accept": "text/event-stream", **AUTH}
    response = httpx.post(url, json=body, headers=headers, timeout=60)
    assert response.status_code == 200, response.text
    return response.headers[REPLICA_HEADER], sse_events(response.text)


def storeless_replicas(
    start_cli: StartCli, server: ScriptedServer, start_proxy: Callable[..., HAProxy]
) -> tuple[list[tuple[int, subprocess.Popen]], HAProxy]:
    """3 replicas on the JSONL default (each its own sessions), up behind HAProxy."""
    replicas = []
    for _ in range(3):
        port = free_port()
        process = start_cli(
            ["serve", "--port", str(port), "--token-env", "AGUI_TOKEN"],
            server=server,
            env={"AGUI_TOKEN": TOKEN},
        )
        replicas.append((port, process))
    for port, process in replicas:
        wait_ready(process, f"http://127.0.0.1:{port}/")
    proxy = start_proxy([port for port, _ in replicas])
    proxy.wait_backends_up(3)
    return replicas, proxy


def test_haproxy_round_robins_over_three_replicas_and_streams_a_run(
    start_cli: StartCli,
    server: ScriptedServer,
    haproxy,  # noqa: F811
):
    """What the deployment rests on, without the store: the generated config is valid, the
    health checks bring 3 replicas up, consecutive requests go to different replicas (not
    sticky), and an SSE run streams whole through the proxy."""
    _, proxy = storeless_replicas(start_cli, server, haproxy)
    served = [httpx.get(proxy.url + "health", timeout=5).headers[REPLICA_HEADER] for _ in range(6)]
    assert len(set(served)) == 3
    assert all(a != b for a, b in itertools.pairwise(served))  # round-robin: never one twice
    server.enqueue(Reply.text(["through ", "the proxy"]))
    _, events = run_through(proxy.url, run_input("t-proxy", "r1", [USER]))
    assert types(events)[0] == "RUN_STARTED" and types(events)[-1] == "RUN_FINISHED"
    text = "".join(e["delta"] for e in events if e["type"] == "TEXT_MESSAGE_CONTENT")
    assert text == "through the proxy"


def test_a_replica_killed_is_taken_out_and_the_next_requests_reach_the_others(
    start_cli: StartCli,
    server: ScriptedServer,
    haproxy,  # noqa: F811
):
    """kill -9 one replica: every request after it is answered (a refused connect is
    redispatched to another replica), and the health checks take it out of the rotation."""
    replicas, proxy = storeless_replicas(start_cli, server, haproxy)
    replicas[1][1].kill()  # r1: kill -9
    replicas[1][1].wait(timeout=5)
    served = []
    for _ in range(9):
        answer = httpx.get(proxy.url + "health", timeout=10)
        assert answer.status_code == 200  # never a 502/503 to the client
        served.append(answer.headers[REPLICA_HEADER])
    assert "r1" not in served and set(served) == {"r0", "r2"}
    server.enqueue(Reply.text(["still ", "here"]))
    _, events = run_through(proxy.url, run_input("t-after-kill", "r1", [USER]))
    assert types(events)[-1] == "RUN_FINISHED"


# --- the store scenarios: 3 replicas, one PostgreSQL, HAProxy round-robin

SSE = {"Accept": "text/event-stream", **AUTH}
PEERS = Path(__file__).parent / "peers"


def deployment(
    start_cli: StartCli,
    server: ScriptedServer,
    postgres: PostgresServer,
    dsn: str,
    start_proxy: Callable[..., HAProxy],
    tmp_path: Path,
) -> tuple[dict[str, Replica], HAProxy]:
    replicas = start_replicas(
        start_cli,
        server,
        3,
        dsn,
        env={"PGPASSWORD": postgres.password},
        homes=tmp_path / "replicas",
        config="[serve]\nlease_seconds = 1\n",
    )
    proxy = start_proxy([r.port for r in replicas])
    proxy.wait_backends_up(3)
    return {r.name: r for r in replicas}, proxy


Deployed = tuple[dict[str, Replica], HAProxy]


@pytest.fixture
def deployed(
    start_cli: StartCli,
    server: ScriptedServer,
    postgres: PostgresServer,
    postgres_dsn: str,
    haproxy,  # noqa: F811
    tmp_path: Path,
) -> Deployed:
    """3 replicas on one PostgreSQL database, up behind HAProxy: (replicas by name, proxy)."""
    return deployment(start_cli, server, postgres, postgres_dsn, haproxy, tmp_path)


def held(before: str, gate: Gate, after: str) -> Reply:
    """A text answer that streams `before`, waits for the gate, then ends with `after`."""
    head = Reply.text([before], finish_reason=None, usage=None, done=False)
    rest = Reply.text([after])
    return Reply(kind="stream", steps=(*head.steps, gate, *rest.steps))


def said(events: list[dict]) -> str:
    return "".join(e["delta"] for e in events if e["type"] == "TEXT_MESSAGE_CONTENT")


def until(condition: Callable[[], object], what: str, deadline: float = 30) -> object:
    """Polls `condition` until it holds (a poll interval, not a verdict), or fails."""
    end = time.monotonic() + deadline
    while time.monotonic() < end:
        value = condition()
        if value:
            return value
        time.sleep(0.05)
    raise AssertionError(f"not within {deadline}s: {what}")


def recorded_text(postgres: PostgresServer, dsn: str, thread: str) -> str:
    """The streamed text the database holds of a thread's runs."""
    with psycopg.connect(dsn, password=postgres.password) as connection:
        found = connection.execute(
            "SELECT record->'e'->>'delta' FROM events WHERE thread_id = %s "
            "AND record->'e'->>'type' = 'TEXT_MESSAGE_CONTENT' ORDER BY seq",
            (f"thread-{thread}",),
        ).fetchall()
    return "".join(row[0] for row in found)


def run_once_free(url: str, body: dict, deadline: float = 30) -> tuple[str, list[dict]]:
    """A run, asked again while the thread is still claimed (409: a lease not yet
    lapsed); the replica that ran it and its events."""
    outcome: dict[str, httpx.Response] = {}

    def answered() -> bool:
        response = httpx.post(url, json=body, headers=SSE, timeout=60)
        if response.status_code == 409:
            return False
        outcome["response"] = response
        return True

    until(answered, "the thread free again", deadline)
    response = outcome["response"]
    assert response.status_code == 200, response.text
    return response.headers[REPLICA_HEADER], sse_events(response.text)


def test_a_thread_hops_replicas_every_run_and_its_conversation_goes_on(
    deployed: Deployed,
    server: ScriptedServer,
):
    _, proxy = deployed
    served, history = [], [USER]
    for turn in range(4):
        server.enqueue(Reply.text([f"answer {turn}"]))
        replica, events = run_through(proxy.url, run_input("hop", f"r{turn}", history))
        assert said(events) == f"answer {turn}"
        served.append(replica)
        history = [*history, {"id": f"a{turn}", "role": "assistant", "content": f"answer {turn}"}]
        history.append({"id": f"u{turn + 2}", "role": "user", "content": f"more {turn}"})
    assert all(a != b for a, b in itertools.pairwise(served)), served
    sent = server.requests[3].json["messages"]  # the 4th run's model had the three before
    assert [m["content"] for m in sent if m["role"] == "assistant"] == [
        "answer 0",
        "answer 1",
        "answer 2",
    ]


def test_an_approval_asked_on_one_replica_is_answered_on_another(
    deployed: Deployed,
    server: ScriptedServer,
    workspace: Path,
):
    _, proxy = deployed
    write = {"id": "call_w", "name": "write_file", "arguments": {"path": "n.txt", "content": "y\n"}}
    server.enqueue(Reply.tool_calls([write]))
    asked_on, events = run_through(
        proxy.url, run_input("approve", "r1", [USER], tools=[CONFIRM_TOOL])
    )
    confirm = [e for e in events if e["type"] == "TOOL_CALL_START"][-1]
    assert confirm["toolCallName"] == "confirm_tool_call"
    assert not (workspace / "n.txt").exists()
    server.enqueue(Reply.text(["written"]))
    answer = {
        "id": "t1",
        "role": "tool",
        "toolCallId": confirm["toolCallId"],
        "content": '{"approved": true}',
    }
    answered_on, events = run_through(
        proxy.url, run_input("approve", "r2", [USER, answer], tools=[CONFIRM_TOOL])
    )
    assert answered_on != asked_on
    assert (workspace / "n.txt").read_text() == "y\n"
    approval = next(e for e in events if e["type"] == "CUSTOM" and e["name"] == "approval")
    assert approval["value"]["decision"] == "allow" and approval["value"]["by"] == "user"
    assert server.requests[1].json["messages"][-1]["tool_call_id"] == "call_w"


def test_a_replica_killed_mid_run_loses_the_thread_to_another_which_marks_it_interrupted(
    deployed: Deployed,
    server: ScriptedServer,
    postgres: PostgresServer,
    postgres_dsn: str,
):
    replicas, proxy = deployed
    gate = Gate()
    server.enqueue(held("partial ", gate, "never said"))
    try:
        with httpx.stream(
            "POST", proxy.url, json=run_input("kill", "r1", [USER]), headers=SSE, timeout=60
        ) as response:
            assert response.status_code == 200
            victim = replicas[response.headers[REPLICA_HEADER]]
            # Until the partial answer is a row: recorded before the replica dies.
            until(
                lambda: recorded_text(postgres, postgres_dsn, "kill") == "partial ",
                "the partial answer in the database",
            )
            victim.process.kill()  # kill -9, mid-run, its lease held
            victim.process.wait(timeout=10)
    finally:
        gate.set()
    server.enqueue(Reply.text(["picked up"]))
    again = {"id": "u2", "role": "user", "content": "go on"}
    replica, events = run_once_free(proxy.url, run_input("kill", "r2", [USER, again]))
    assert replica != victim.name
    assert said(events) == "picked up"
    sent = server.requests[1].json["messages"]
    assert sent[-2] == {
        "role": "assistant",
        "content": "partial \n[the answer was interrupted here]",
    }
    assert sent[-1]["content"] == "go on"


def test_two_clients_racing_on_one_thread_one_runs_and_the_other_gets_one_409(
    deployed: Deployed,
    server: ScriptedServer,
):
    _, proxy = deployed
    gate = Gate()
    server.enqueue(held("won ", gate, "the race"))
    start = threading.Barrier(2)
    answered = threading.Condition()
    statuses: list[tuple[int, str]] = []
    bodies: list[str] = []

    def race(name: str) -> None:
        body = run_input("race", name, [{"id": f"u-{name}", "role": "user", "content": name}])
        start.wait(timeout=30)
        with httpx.stream("POST", proxy.url, json=body, headers=SSE, timeout=60) as response:
            with answered:
                statuses.append((response.status_code, response.headers[REPLICA_HEADER]))
                answered.notify_all()
            bodies.append(response.read().decode())

    racers = [threading.Thread(target=race, args=(name,)) for name in ("a", "b")]
    for racer in racers:
        racer.start()
    try:
        with answered:  # both answered while the winner's run is held: the lease is taken
            assert answered.wait_for(lambda: len(statuses) == 2, timeout=60)
    finally:
        gate.set()
        for racer in racers:
            racer.join(timeout=60)
    assert sorted(status for status, _ in statuses) == [200, 409]
    refused = next(body for body in bodies if body.startswith("{"))
    assert json.loads(refused) == {"error": "thread 'race' has a run in progress; wait for it"}
    won = next(body for body in bodies if not body.startswith("{"))
    assert said(sse_events(won)) == "won the race"
    assert len(server.requests) == 1  # the model was asked once


def test_the_database_restarted_mid_run_fails_that_run_in_one_line_then_runs_go_on(
    deployed: Deployed,
    server: ScriptedServer,
    postgres: PostgresServer,
    postgres_dsn: str,
):
    replicas, proxy = deployed
    gate = Gate()
    server.enqueue(held("before ", gate, "after"))
    stopped = False
    try:
        with httpx.stream(
            "POST", proxy.url, json=run_input("db", "r1", [USER]), headers=SSE, timeout=60
        ) as response:
            assert response.status_code == 200
            until(
                lambda: recorded_text(postgres, postgres_dsn, "db") == "before ",
                "the first words in the database",
            )
            postgres.stop()
            stopped = True
            events = sse_events(response.read().decode())  # ends: the lease cannot be renewed
        failed = [e for e in events if e["type"] == "RUN_ERROR"]
        assert len(failed) == 1 and events[-1] is failed[0]
        assert failed[0]["code"] == "store_unavailable"
        assert failed[0]["message"].startswith("the thread store postgresql://agentcli@")
        assert "\n" not in failed[0]["message"]
        health = httpx.get(replicas["r0"].url + "health", timeout=10)
        assert health.status_code == 503 and "unavailable" in health.json()["error"]
    finally:
        gate.set()
        if stopped:
            postgres.start()
    proxy.wait_backends_up(3)
    server.enqueue(Reply.text(["back"]))
    again = {"id": "u2", "role": "user", "content": "still there?"}
    _, events = run_once_free(proxy.url, run_input("db", "r2", [USER, again]))
    assert said(events) == "back"
    sent = server.requests[1].json["messages"]
    assert sent[-2]["content"] == "before \n[the answer was interrupted here]"
    for replica in replicas.values():
        replica.process.terminate()
        _, stderr = replica.process.communicate(timeout=20)
        assert "Traceback" not in stderr, stderr


def test_http_agent_hops_replicas_and_answers_an_approval_elsewhere(
    deployed: Deployed,
    server: ScriptedServer,
    workspace: Path,
):
    """@ag-ui/client's HttpAgent through HAProxy: a thread of three text runs, then an
    approval asked and answered, each run on another replica than the one before."""
    modules = os.environ.get("AGUI_NODE_MODULES", "")
    if not modules or not (Path(modules) / "@ag-ui" / "client").is_dir():
        pytest.skip("node and @ag-ui/client are not installed (set AGUI_NODE_MODULES)")
    _, proxy = deployed
    for turn in range(3):
        server.enqueue(Reply.text([f"answer {turn}"]))
    write = {
        "id": "call_js",
        "name": "write_file",
        "arguments": {"path": "js.txt", "content": "js\n"},
    }
    server.enqueue(Reply.tool_calls([write]))
    server.enqueue(Reply.text(["written"]))
    done = subprocess.run(
        ["node", str(PEERS / "http_agent_replicas.cjs"), proxy.url, TOKEN],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "NODE_PATH": modules},
        check=False,
    )
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["failures"] == []
    replicas = result["replicas"]
    assert len(replicas) == 5 and all(a != b for a, b in itertools.pairwise(replicas)), replicas
    said_by = [
        m["content"] for m in result["messages"] if m["role"] == "assistant" and m.get("content")
    ]
    assert said_by[:3] == ["answer 0", "answer 1", "answer 2"] and said_by[-1] == "written"
    assert (workspace / "js.txt").read_text() == "js\n"
    sent = server.requests[2].json["messages"]  # the third run's model had the thread
    assert [m["content"] for m in sent if m["role"] == "assistant"] == ["answer 0", "answer 1"]
