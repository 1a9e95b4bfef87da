"""End-to-end: a served run ends with a MESSAGES_SNAPSHOT only when the client could not
have the thread's messages from the run's own events. The installed `agentcli serve` over
HTTP, the model a scripted server; each client keeps what the events make of its messages
as @ag-ui/client does (tests.agui_helpers.applied, written apart from the server's mirror),
and after each scenario its messages must be the thread's as a fresh client sees them: the
start snapshot of a run that sends only a new message, that message left out."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agentcli.agui.thread_view import wire_history
from agentcli.sessions.session import Session
from tests.agui_helpers import TOKEN, EventsClient, post_run, run_input, snapshots, types
from tests.conftest import RunCli
from tests.scripted_server import Reply, ScriptedServer
from tests.test_e2e_serve import CONFIRM_TOOL, PICK_COLOR, Serve, serve

pytest.importorskip("starlette")
pytest.importorskip("uvicorn")

__all__ = ["serve"]  # the fixture, used here


def user(n: int, text: str = "hi") -> dict[str, Any]:
    return {"id": f"u{n}", "role": "user", "content": text}


def thread_seen(url: str, thread: str, server: ScriptedServer) -> list[dict[str, Any]]:
    """The thread's messages as a fresh client (a reloaded page) is sent them."""
    server.enqueue(Reply.text(["seen"]))
    probe = {"id": "probe", "role": "user", "content": "what is there?"}
    events = post_run(url, run_input(thread, "probe", [probe]))
    assert types(events)[1] == "MESSAGES_SNAPSHOT"  # right after RUN_STARTED
    return [m for m in events[1]["messages"] if m["id"] != "probe"]


def test_plain_runs_of_a_client_that_sends_its_history_end_without_a_snapshot(
    serve: Serve, server: ScriptedServer
):
    url = serve()
    client = EventsClient(url, "v-text")
    for n in range(3):
        server.enqueue(Reply.text([f"answer {n} ", "✓"]))
        events = client.run(user(n, f"question {n}"))
        assert "MESSAGES_SNAPSHOT" not in types(events)
        assert types(events)[-1] == "RUN_FINISHED"
    said = [m["content"] for m in client.messages]
    assert said == [text for n in range(3) for text in (f"question {n}", f"answer {n} ✓")]
    assert client.messages == thread_seen(url, "v-text", server)


def test_a_server_tool_call_and_its_result_need_no_snapshot(
    serve: Serve, server: ScriptedServer, workspace: Path
):
    (workspace / "notes.txt").write_text("some notes\n")
    url = serve()
    client = EventsClient(url, "v-tool")
    read = {"id": "call_r", "name": "read_file", "arguments": {"path": "notes.txt"}}
    server.enqueue(
        Reply.tool_calls([read], text_before=["let me ", "look"]), Reply.text(["it says notes"])
    )
    events = client.run(user(1))
    assert "TOOL_CALL_RESULT" in types(events)
    assert "MESSAGES_SNAPSHOT" not in types(events)
    roles = [m["role"] for m in client.messages]
    assert roles == ["user", "assistant", "tool", "assistant"]
    assert client.messages[1]["content"] == "let me look"
    assert client.messages == thread_seen(url, "v-tool", server)


def test_a_failed_tool_result_ends_with_the_snapshot(serve: Serve, server: ScriptedServer):
    """The client builds a result without its `error` (AG-UI's ToolMessage.error, which
    the thread's message has): only the snapshot gives it."""
    url = serve()
    client = EventsClient(url, "v-failed")
    read = {"id": "call_m", "name": "read_file", "arguments": {"path": "missing.txt"}}
    server.enqueue(Reply.tool_calls([read]), Reply.text(["no such file"]))
    events = client.run(user(1))
    [end] = snapshots(events)
    assert types(events)[-2] == "MESSAGES_SNAPSHOT"
    assert end[2]["role"] == "tool" and end[2]["error"]
    assert client.messages == thread_seen(url, "v-failed", server)


def test_a_pending_frontend_call_and_its_result_need_no_snapshot(
    serve: Serve, server: ScriptedServer
):
    url = serve()
    client = EventsClient(url, "v-fe")
    call = {"id": "call_pc", "name": "pick_color", "arguments": {"prompt": "which?"}}
    server.enqueue(Reply.tool_calls([call]))
    events = client.run(user(1), tools=[PICK_COLOR])
    assert events[-1]["outcome"]["pendingToolCallIds"] == ["call_pc"]
    assert "MESSAGES_SNAPSHOT" not in types(events)
    assert client.messages[-1]["toolCalls"][0]["id"] == "call_pc"

    server.enqueue(Reply.text(["blue it is"]))
    result = {"id": "t1", "role": "tool", "toolCallId": "call_pc", "content": "blue"}
    events = client.run(result, tools=[PICK_COLOR])
    assert "MESSAGES_SNAPSHOT" not in types(events)
    assert [m["role"] for m in client.messages] == ["user", "assistant", "tool", "assistant"]
    assert client.messages == thread_seen(url, "v-fe", server)


def test_a_pending_confirmation_needs_none_and_its_answer_ends_with_one(
    serve: Serve, server: ScriptedServer, workspace: Path
):
    url = serve()
    client = EventsClient(url, "v-confirm")
    write = {"id": "call_w", "name": "write_file", "arguments": {"path": "n.txt", "content": "x"}}
    server.enqueue(Reply.tool_calls([write]))
    events = client.run(user(1), tools=[CONFIRM_TOOL])
    assert "MESSAGES_SNAPSHOT" not in types(events)
    calls = [c["function"]["name"] for c in client.messages[-1]["toolCalls"]]
    assert calls == ["write_file", "confirm_tool_call"]  # the client can answer it

    # the answer: the client holds the confirm exchange, which the thread keeps none of,
    # and only the snapshot takes it away
    server.enqueue(Reply.text(["written"]))
    answer = {
        "id": "t1",
        "role": "tool",
        "toolCallId": "confirm-call_w",
        "content": '{"approved": true}',
    }
    events = client.run(answer, tools=[CONFIRM_TOOL])
    assert types(events)[-2] == "MESSAGES_SNAPSHOT"
    assert (workspace / "n.txt").read_text() == "x"
    assert [m["role"] for m in client.messages] == ["user", "assistant", "tool", "assistant"]
    assert client.messages == thread_seen(url, "v-confirm", server)


def test_a_reloaded_client_gets_the_thread_at_the_start_and_none_at_the_end(
    serve: Serve, server: ScriptedServer
):
    url = serve()
    first = EventsClient(url, "v-reload")
    server.enqueue(Reply.text(["one"]))
    first.run(user(1))
    reloaded = EventsClient(url, "v-reload")
    server.enqueue(Reply.text(["two"]))
    events = reloaded.run(user(2, "again"))
    assert types(events)[1] == "MESSAGES_SNAPSHOT"
    assert types(events).count("MESSAGES_SNAPSHOT") == 1
    [start] = snapshots(events)
    assert start[:-1] == first.messages  # the thread as the first client built it
    # @ag-ui/client merges a snapshot into what it has: its own message keeps its place
    seen = thread_seen(url, "v-reload", server)
    assert sorted(reloaded.messages, key=lambda m: m["id"]) == sorted(seen, key=lambda m: m["id"])
    assert reloaded.messages[0]["id"] == "u2"


def test_a_client_with_system_messages_ends_with_the_snapshot(serve: Serve, server: ScriptedServer):
    """The thread keeps no system message (it is context): the client's messages are not
    the thread's, and only the snapshot makes them so."""
    url = serve()
    client = EventsClient(url, "v-system")
    server.enqueue(Reply.text(["ok"]))
    system = {"id": "s1", "role": "system", "content": "be brief"}
    events = client.run(system, user(1))
    assert types(events)[-2] == "MESSAGES_SNAPSHOT"
    assert client.messages == thread_seen(url, "v-system", server)


def test_agentcli_as_a_client_of_serve_keeps_the_threads_messages(
    serve: Serve,
    server: ScriptedServer,
    run_cli: RunCli,
    workspace: Path,
    tmp_path: Path,
    cli_home: Path,
):
    """`agentcli run --agent URL` against `agentcli serve`: no snapshot ends its runs, so
    the client's view of the thread is built from the events; the next run sends the
    thread its own messages (the model gets them once), and what the client recorded is
    the thread's messages."""
    (workspace / "notes.txt").write_text("some notes\n")
    url = serve()
    home = {"AGENTCLI_HOME": str(tmp_path / "client-home"), "AGENTCLI_AGENT_TOKEN": TOKEN}
    read = {"id": "call_r", "name": "read_file", "arguments": {"path": "notes.txt"}}
    server.enqueue(Reply.tool_calls([read]), Reply.text(["it says notes"]))
    first = run_cli(["run", "--agent", url, "-o", "jsonl", "read the notes"], env=home)
    assert first.returncode == 0, first.stderr
    kinds = [json.loads(line)["type"] for line in first.stdout.splitlines()]
    assert "TOOL_CALL_RESULT" in kinds

    server.enqueue(Reply.text(["still notes"]))
    later = ["run", "--continue", "--agent", url, "-o", "jsonl", "and now?"]
    second = run_cli(later, env=home)
    assert second.returncode == 0, second.stderr
    sent = [m for m in server.requests[2].json["messages"] if m["role"] != "system"]
    assert [m["role"] for m in sent] == ["user", "assistant", "tool", "assistant", "user"]
    assert [m.get("content") for m in sent][-2:] == ["it says notes", "and now?"]
    # what the client recorded of the remote thread (what it sends it next) is the thread
    [path] = (tmp_path / "client-home").rglob("*.jsonl")
    recorded, _ = wire_history(Session.load(path).conversation.messages)
    assert recorded == thread_seen(url, thread_of(cli_home), server)


def thread_of(cli_home: Path) -> str:
    """The threadId of the one thread the server has (its session: `thread-<threadId>`)."""
    [path] = (cli_home / "agentcli" / "data" / "sessions").glob("thread-*.jsonl")
    return path.name.removeprefix("thread-").removesuffix(".jsonl")


def test_a_reloaded_page_is_sent_the_thread_once_not_at_every_run(
    serve: Serve, server: ScriptedServer
):
    """@ag-ui/client merges a start snapshot into what it has: its own message first, the
    thread's after. Its next runs hold every message of the thread in another order;
    sending the whole thread again at each would change nothing it holds."""
    url = serve()
    first = EventsClient(url, "v-reload")
    for n in range(2):
        server.enqueue(Reply.text([f"answer {n}"]))
        first.run(user(n, f"question {n}"))
    page = EventsClient(url, "v-reload")  # reloaded: nothing kept
    server.enqueue(Reply.text(["after the reload"]))
    events = page.run(user(10, "still there?"))
    assert types(events).count("MESSAGES_SNAPSHOT") == 1  # at its start: it lacked them
    assert page.messages[0]["id"] == "u10"  # merged: its own message first
    for n in range(11, 13):
        server.enqueue(Reply.text([f"answer {n}"]))
        events = page.run(user(n, f"question {n}"))
        assert "MESSAGES_SNAPSHOT" not in types(events)
    seen = thread_seen(url, "v-reload", server)
    assert sorted(page.messages, key=lambda m: m["id"]) == sorted(seen, key=lambda m: m["id"])
