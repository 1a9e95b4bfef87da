"""Shared by the AG-UI server and client tests: a running `agentcli serve`, SSE reading, and
validation of every event with the `ag-ui-protocol` SDK's models."""

from __future__ import annotations

import contextlib
import json
import re
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
from ag_ui.core import Event
from pydantic import TypeAdapter

EVENT = TypeAdapter(Event)
# The bearer token the tests' `agentcli serve` requires (a token is required by default).
TOKEN = "agui-test-token"
AUTH = {"Authorization": f"Bearer {TOKEN}"}


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def wait_ready(
    process: subprocess.Popen[str], url: str, deadline: float = 20, any_answer: bool = False
) -> None:
    """Until GET /health answers 200 (or, `any_answer`, anything: a peer without it)."""
    end = time.monotonic() + deadline
    while time.monotonic() < end:
        if process.poll() is not None:
            raise AssertionError(f"server exited {process.returncode}: {process.stderr.read()}")
        try:
            status = httpx.get(url + "health", timeout=1).status_code
            if status == 200 or any_answer:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.1)
    raise AssertionError("serve did not become ready")


@contextlib.contextmanager
def peer_agent(script: Path) -> Iterator[str]:
    """A remote AG-UI agent from tests/peers (`python SCRIPT PORT`), running: its URL."""
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, str(script), str(port)],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    url = f"http://127.0.0.1:{port}/"
    try:
        wait_ready(process, url, deadline=60, any_answer=True)
        yield url
    finally:
        process.kill()
        process.wait(timeout=5)
        process.stderr.close()  # type: ignore[union-attr]


def sse_events(text: str) -> list[dict[str, Any]]:
    """The `data:` records of an SSE body, each validated as an AG-UI event."""
    events = []
    for record in text.split("\n\n"):
        if not record.strip():
            continue
        data = "\n".join(
            line[len("data:") :].removeprefix(" ")
            for line in re.split(r"\r\n|\r|\n", record)  # SSE's line ends: not str.splitlines's
            if line.startswith("data:")
        )
        raw = json.loads(data)
        EVENT.validate_python(raw)
        events.append(raw)
    return events


def run_input(thread: str, run: str, messages: list[dict[str, Any]], **extra: Any) -> dict:
    body = {
        "threadId": thread,
        "runId": run,
        "messages": messages,
        "tools": [],
        "context": [],
        "state": {},
        "forwardedProps": {},
    }
    body.update(extra)
    return body


def post_run(
    url: str, body: dict[str, Any], headers: dict[str, str] | None = None
) -> list[dict[str, Any]]:
    headers = {"Accept": "text/event-stream", **AUTH, **(headers or {})}
    response = httpx.post(url, json=body, headers=headers, timeout=30)
    assert response.status_code == 200, response.text
    assert response.headers["content-type"].startswith("text/event-stream")
    return sse_events(response.text)


def types(events: list[dict[str, Any]]) -> list[str]:
    return [e["type"] for e in events]


def agent_reply(events: list[Any]) -> Any:
    """A scripted remote AG-UI agent's answer to one run (for a ScriptedServer, reached
    with `--agent agent_url(server)`): each item one SSE `data:` record, sent as is, so
    an item may have any shape an agent could send."""
    from tests.scripted_server import Reply

    lines: list[str] = []
    for event in events:
        lines += [f"data: {json.dumps(event)}", ""]
    return Reply.raw(lines)


def agent_url(server: Any) -> str:
    """The scripted server's one POST route, as a remote agent's URL."""
    return server.url + "/v1/chat/completions"


def started(thread: str = "t", run: str = "r") -> dict[str, Any]:
    return {"type": "RUN_STARTED", "threadId": thread, "runId": run}


def finished(thread: str = "t", run: str = "r", **extra: Any) -> dict[str, Any]:
    return {"type": "RUN_FINISHED", "threadId": thread, "runId": run, **extra}


def said(text: str, message: str = "m1") -> list[dict[str, Any]]:
    """A whole text message's three events."""
    return [
        {"type": "TEXT_MESSAGE_START", "messageId": message, "role": "assistant"},
        {"type": "TEXT_MESSAGE_CONTENT", "messageId": message, "delta": text},
        {"type": "TEXT_MESSAGE_END", "messageId": message},
    ]
