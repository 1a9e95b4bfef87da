"""Shared by the AG-UI server and client tests: a running `agentcli serve`, SSE reading, and
validation of every event with the `ag-ui-protocol` SDK's models."""

from __future__ import annotations

import contextlib
import copy
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


def applied(
    messages: list[dict[str, Any]], events: list[dict[str, Any]], *, replace: bool = False
) -> list[dict[str, Any]]:
    """The messages an AG-UI client holds after applying `events` to `messages`, as
    @ag-ui/client's default event application (`defaultApplyEvents`, 1.0) does, written
    from its source for the tests, apart from the server's own mirror (agentcli.agui
    .client_view). The events' `metadata`, which that client also keeps on what it builds,
    is left out: the thread's messages carry none. `replace`: a MESSAGES_SNAPSHOT becomes
    the messages (as agentcli's own client takes it), not merged into them."""
    held = copy.deepcopy(messages)

    def message(message_id: str) -> dict[str, Any] | None:
        return next((m for m in held if m["id"] == message_id), None)

    def call(call_id: str) -> dict[str, Any] | None:
        calls = (c for m in held for c in m.get("toolCalls") or [])
        return next((c for c in calls if c["id"] == call_id), None)

    for event in events:
        kind = event["type"]
        if kind == "TEXT_MESSAGE_START":
            if message(event["messageId"]) is None:
                role = event.get("role") or "assistant"
                held.append({"id": event["messageId"], "role": role, "content": ""})
        elif kind == "TEXT_MESSAGE_CONTENT":
            found = message(event["messageId"])
            if found is not None:
                before = found.get("content")
                found["content"] = (before if isinstance(before, str) else "") + event["delta"]
        elif kind == "TOOL_CALL_START":
            _call_started(held, event, message, call)
        elif kind == "TOOL_CALL_ARGS":
            found = call(event["toolCallId"])
            if found is not None:
                found["function"]["arguments"] += event["delta"]
        elif kind == "TOOL_CALL_RESULT":
            _result_placed(held, event)
        elif kind == "MESSAGES_SNAPSHOT":
            given = event["messages"]
            held = copy.deepcopy(given) if replace else _snapshot_merged(held, given)
        elif kind == "RUN_STARTED":
            for sent in (event.get("input") or {}).get("messages") or []:
                if message(sent["id"]) is None:
                    held.append(copy.deepcopy(sent))
    return held


def _call_started(held: list[dict[str, Any]], event: dict[str, Any], message: Any, call: Any):
    call_id, name = event["toolCallId"], event["toolCallName"]
    found = call(call_id)
    if found is not None:  # the call it has already: renamed
        found["function"]["name"] = name
        return
    parent = event.get("parentMessageId")
    target = message(parent) if parent else None
    if target is None or target["role"] != "assistant":
        new_id = call_id if target is not None or not parent else parent
        target = {"id": new_id, "role": "assistant", "toolCalls": []}
        held.append(target)
    target.setdefault("toolCalls", []).append(
        {"id": call_id, "type": "function", "function": {"name": name, "arguments": ""}}
    )


def _result_placed(held: list[dict[str, Any]], event: dict[str, Any]) -> None:
    """After the assistant message of its call and the results that follow it."""
    result = {
        "id": event["messageId"],
        "toolCallId": event["toolCallId"],
        "role": event.get("role") or "tool",
        "content": event["content"],
    }
    for position, held_message in enumerate(held):
        calls = held_message.get("toolCalls") or []
        if held_message["role"] == "assistant" and any(
            c["id"] == event["toolCallId"] for c in calls
        ):
            position += 1
            while position < len(held) and held[position]["role"] == "tool":
                position += 1
            held.insert(position, result)
            return
    held.append(result)


def _snapshot_merged(
    held: list[dict[str, Any]], snapshot: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    """Its own messages that the snapshot has keep their places (as the snapshot has
    them); the others go; the snapshot's other messages follow."""
    incoming = {m["id"]: copy.deepcopy(m) for m in snapshot}
    kinds = {m["role"] for m in snapshot}
    # (activity and reasoning messages stay when the snapshot has none of their kind)
    own = {"activity", "reasoning"} - kinds
    kept = [incoming.get(m["id"], m) for m in held if m["id"] in incoming or m["role"] in own]
    ids = {m["id"] for m in kept}
    return kept + [m for m in incoming.values() if m["id"] not in ids]


class EventsClient:
    """A client of one thread that sends its whole history each run and keeps what the
    run's events make of it (`applied`), never replacing it otherwise."""

    def __init__(self, url: str, thread: str) -> None:
        self.url, self.thread = url, thread
        self.messages: list[dict[str, Any]] = []
        self.runs = 0

    def run(self, *new: dict[str, Any], **extra: Any) -> list[dict[str, Any]]:
        self.messages += [copy.deepcopy(m) for m in new]
        self.runs += 1
        body = run_input(self.thread, f"{self.thread}-r{self.runs}", self.messages, **extra)
        events = post_run(self.url, body)
        self.messages = applied(self.messages, events)
        return events


def snapshots(events: list[dict[str, Any]]) -> list[list[dict[str, Any]]]:
    """The messages of each MESSAGES_SNAPSHOT of a run, in order."""
    return [e["messages"] for e in events if e["type"] == "MESSAGES_SNAPSHOT"]
