"""End-to-end: `agentcli serve` turns every bad body into a 4xx with a JSON error, text
that is not clean UTF-8 into a run like any other, and a client that hangs up before its
body arrives into one quiet line — then goes on serving."""

from __future__ import annotations

import json
import socket
import time
from typing import Any

import httpx
import pytest

from tests.agui_helpers import AUTH, TOKEN, post_run, run_input, types
from tests.conftest import StartCli
from tests.scripted_server import Reply, ScriptedServer
from tests.test_e2e_serve import USER, Serve, serve  # noqa: F401 - the fixture

pytest.importorskip("starlette")
pytest.importorskip("uvicorn")


JSON_HEADERS = {"Content-Type": "application/json", **AUTH}


def body_of(value: Any) -> bytes:
    return json.dumps(value).encode()


BAD_TOOL = {"name": "a b", "description": "", "parameters": {}}
BAD_BODIES = {
    "deep-array": (b"[" * 100_000 + b"]" * 100_000, 400, "nested too deeply"),
    "deep-object": (b'{"a":' * 50_000 + b"1" + b"}" * 50_000, 400, "nested too deeply"),
    "not-json": (b"{not json", 400, "not JSON"),
    "empty": (b"", 400, "not JSON"),
    "array": (b"[]", 422, "RunAgentInput"),
    "number": (b"5", 422, "RunAgentInput"),
    "null": (b"null", 422, "RunAgentInput"),
    "huge-number": (b'{"threadId": ' + b"9" * 5000 + b"}", 400, "not JSON"),
    "messages-object": (body_of({**run_input("t", "r", [USER]), "messages": {}}), 422, "messages"),
    "content-number": (
        body_of(run_input("t", "r", [{"id": "u", "role": "user", "content": 5}])),
        422,
        "content",
    ),
    "result-without-call": (
        body_of(run_input("t", "r", [USER, {"id": "x", "role": "tool", "content": "r"}])),
        422,
        "toolCallId",
    ),
    "context-numbers": (body_of({**run_input("t", "r", [USER]), "context": [1]}), 422, "context"),
    "tool-name": (body_of(run_input("t", "r", [USER], tools=[BAD_TOOL])), 422, "tool name"),
}


def test_every_bad_body_is_a_4xx_with_a_json_error(
    serve: Serve,  # noqa: F811
    server: ScriptedServer,
) -> None:
    url = serve()
    for name, (body, status, needle) in BAD_BODIES.items():
        response = httpx.post(url, content=body, headers=JSON_HEADERS)
        assert response.status_code == status, (name, response.text[:300])
        assert needle in response.json()["error"], (name, response.text[:300])
    server.enqueue(Reply.text(["still here"]))
    events = post_run(url, run_input("after", "r", [USER]))
    assert types(events)[-1] == "RUN_FINISHED"


def test_lone_surrogates_and_bad_bytes_in_a_body_run_and_the_thread_goes_on(
    serve: Serve,  # noqa: F811
    server: ScriptedServer,
) -> None:
    """`"\\ud800"` is valid JSON that UTF-8 cannot write: it once failed the thread's
    session file, and every retry of that thread after it."""
    url = serve()
    raw = body_of(run_input("t\ud800", "r1", [{"id": "u", "role": "user", "content": "a\ud800b"}]))
    raw = raw.replace(b"a\\ud800b", b"a\\ud800b \xff")  # and a byte that is not UTF-8
    server.enqueue(Reply.text(["one"]), Reply.text(["two"]))
    response = httpx.post(url, content=raw, headers=JSON_HEADERS)
    assert response.status_code == 200, response.text
    assert '"RUN_FINISHED"' in response.text
    assert server.requests[0].json["messages"][-1]["content"] == "a\ufffdb \ufffd"

    first = {"id": "u", "role": "user", "content": "a\ud800b"}
    more = {"id": "u2", "role": "user", "content": "more"}
    second = run_input("t\ud800", "r2", [first, more])
    again = httpx.post(url, content=body_of(second), headers=JSON_HEADERS)
    assert again.status_code == 200, again.text
    assert [m["content"] for m in server.requests[1].json["messages"][1:]] == [
        "a\ufffdb \ufffd",
        "one",
        "more",
    ]


def test_a_client_that_hangs_up_mid_body_is_one_quiet_line(
    start_cli: StartCli, server: ScriptedServer
) -> None:
    from tests.agui_helpers import free_port, wait_ready

    port = free_port()
    process = start_cli(
        ["serve", "--port", str(port), "--token-env", "AGUI_TOKEN"],
        server=server,
        env={"AGUI_TOKEN": TOKEN},
    )
    url = f"http://127.0.0.1:{port}/"
    wait_ready(process, url)
    for _ in range(3):
        with socket.create_connection(("127.0.0.1", port)) as client:
            client.sendall(
                f"POST / HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
                f"Authorization: Bearer {TOKEN}\r\nContent-Type: application/json\r\n"
                "Content-Length: 1000\r\n\r\n".encode()
                + b'{"threadId": "t", '
            )
            time.sleep(0.2)  # the server is reading the body when the client leaves
    server.enqueue(Reply.text(["fine"]))
    assert types(post_run(url, run_input("t", "r", [USER])))[-1] == "RUN_FINISHED"
    time.sleep(0.3)
    process.terminate()
    _, err = process.communicate(timeout=10)
    assert "Traceback" not in err, err
    left = [line for line in err.splitlines() if "hung up" in line]
    assert len(left) == 3, err
    assert left[0].startswith("agentcli serve: a client (127.0.0.1:"), left[0]
