"""Issue 43: 3 `agentcli serve` replicas behind HAProxy (round-robin, not sticky), sharing
their threads through PostgreSQL. Real parts only: HAProxy and PostgreSQL started by the
tests, the installed CLI, the scripted model server. Skips cleanly where HAProxy,
PostgreSQL or the PostgreSQL store are missing; never faked. (The store scenarios -- hops
through the store, approvals elsewhere, kill -9, races, a database restart -- follow once
`--store` and tests/postgres.py land; see tests/haproxy.py's start_replicas.)"""

from __future__ import annotations

import itertools

import httpx
import pytest

from tests.agui_helpers import AUTH, TOKEN, free_port, run_input, sse_events, types, wait_ready
from tests.conftest import StartCli
from tests.haproxy import REPLICA_HEADER, HAProxy, haproxy  # noqa: F401  (the fixture)
from tests.scripted_server import Reply, ScriptedServer

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


def test_haproxy_round_robins_over_three_replicas_and_streams_a_run(
    start_cli: StartCli,
    server: ScriptedServer,
    haproxy,  # noqa: F811
):
    """What the deployment rests on, without the store: the generated config is valid, the
    health checks bring 3 replicas up, consecutive requests go to different replicas (not
    sticky), and an SSE run streams whole through the proxy."""
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
    proxy: HAProxy = haproxy([port for port, _ in replicas])
    proxy.wait_backends_up(3)
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
    proxy: HAProxy = haproxy([port for port, _ in replicas])
    proxy.wait_backends_up(3)
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
