"""End-to-end: what `agentcli serve` keeps of a thread besides its messages, over HTTP against
the scripted model server: the thread's state (STATE_SNAPSHOT / STATE_DELTA, kept across
runs and server restarts, changed by the model through `update_state`), MESSAGES_SNAPSHOT
when the client's history is not the thread's, and forwardedProps (context for the model,
recorded in the session). Every event validates with the `ag-ui-protocol` SDK's models."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.agui_helpers import applied, post_run, run_input, types
from tests.conftest import RunCli
from tests.scripted_server import Reply, ScriptedServer
from tests.test_e2e_serve import USER, Serve, serve  # noqa: F401  (the fixture)

pytest.importorskip("starlette")
pytest.importorskip("jsonpatch")


def system_of(request: object) -> str:
    return request.json["messages"][0]["content"]  # type: ignore[attr-defined]


def state_events(events: list[dict]) -> list[dict]:
    return [e for e in events if e["type"] in ("STATE_SNAPSHOT", "STATE_DELTA")]


def test_the_thread_keeps_its_state_and_the_model_changes_it(
    serve: Serve,  # noqa: F811
    server: ScriptedServer,
):
    url = serve()
    server.enqueue(Reply.text(["noted"]))
    events = post_run(url, run_input("st1", "r1", [USER], state={"todo": ["a"]}))
    assert state_events(events) == []  # the client sent it: nothing to tell it
    assert '"todo": ["a"]' in system_of(server.requests[0])  # the model sees the state
    assert "update_state" in [t["function"]["name"] for t in server.requests[0].json["tools"]]

    # A run without state uses the thread's: said at its start; the model adds to it.
    patch = [{"op": "add", "path": "/todo/-", "value": "b"}]
    server.enqueue(
        Reply.tool_calls([{"id": "c1", "name": "update_state", "arguments": {"patch": patch}}])
    )
    server.enqueue(Reply.text(["added b"]))
    second = {"id": "u2", "role": "user", "content": "add b"}
    events = post_run(url, run_input("st1", "r2", [second]))
    kinds = types(events)
    assert kinds.index("STATE_SNAPSHOT") < kinds.index("STEP_STARTED")
    assert state_events(events) == [
        {**state_events(events)[0], "snapshot": {"todo": ["a"]}},
        {**state_events(events)[1], "delta": patch},
    ]
    assert '"todo": ["a"]' in system_of(server.requests[1])
    result = server.requests[2].json["messages"][-1]
    assert result["role"] == "tool" and '"todo": ["a", "b"]' in result["content"]


def test_the_state_outlives_the_server_and_a_bad_patch_changes_nothing(
    serve: Serve,  # noqa: F811
    server: ScriptedServer,
    cli_home: Path,
):
    url = serve()
    patch = [{"op": "replace", "path": "/count", "value": 2}]
    bad = [{"op": "remove", "path": "/missing"}]
    server.enqueue(
        Reply.tool_calls(
            [
                {"id": "c1", "name": "update_state", "arguments": {"patch": patch}},
                {"id": "c2", "name": "update_state", "arguments": {"patch": bad}},
            ]
        )
    )
    server.enqueue(Reply.text(["done"]))
    events = post_run(url, run_input("st3", "r1", [USER], state={"count": 1}))
    assert [e["delta"] for e in state_events(events)] == [patch]  # the bad one: no event
    results = [m for m in server.requests[1].json["messages"] if m["role"] == "tool"]
    assert "does not apply, nothing changed" in results[1]["content"]

    again = serve()  # another process, the same sessions directory
    server.enqueue(Reply.text(["count is 2"]))
    later = {"id": "u2", "role": "user", "content": "and now?"}
    events = post_run(again, run_input("st3", "r2", [later]))
    assert state_events(events)[0]["snapshot"] == {"count": 2}
    assert '"count": 2' in system_of(server.requests[2])


def test_a_client_whose_history_differs_gets_the_threads_messages_first(
    serve: Serve,  # noqa: F811
    server: ScriptedServer,
):
    url = serve()
    server.enqueue(Reply.text(["one"]))
    events = post_run(url, run_input("ms1", "r1", [USER]))
    assert "MESSAGES_SNAPSHOT" not in types(events)  # the events give the client the thread
    thread = applied([USER], events)
    assert [m["role"] for m in thread] == ["user", "assistant"] and thread[1]["content"] == "one"

    # the client continues from the thread's messages: no snapshot at the start either
    server.enqueue(Reply.text(["two"]))
    second = {"id": "u2", "role": "user", "content": "again"}
    events = post_run(url, run_input("ms1", "r2", [*thread, second]))
    assert "MESSAGES_SNAPSHOT" not in types(events)
    thread = applied([*thread, second], events)

    # a client that lost the history (a reloaded page) is sent it at the start
    server.enqueue(Reply.text(["three"]))
    third = {"id": "u3", "role": "user", "content": "what did you say?"}
    events = post_run(url, run_input("ms1", "r3", [third]))
    kinds = types(events)
    assert kinds[1] == "MESSAGES_SNAPSHOT" and kinds.count("MESSAGES_SNAPSHOT") == 1
    assert events[1]["messages"] == [*thread, third]  # what the first client built
    said = [m.get("content") for m in events[1]["messages"]]
    assert said == ["hi", "one", "again", "two", "what did you say?"]
    assert len(server.requests[2].json["messages"]) == 6  # system + the whole thread


def test_forwarded_props_reach_the_model_and_the_session(
    serve: Serve,  # noqa: F811
    server: ScriptedServer,
    cli_home: Path,
    run_cli: RunCli,
):
    url = serve()
    server.enqueue(Reply.text(["ok"]))
    props = {"page": "/orders/7", "locale": "fr", "note": "\x1b[2Jred"}
    post_run(url, run_input("fp1", "r1", [USER], forwardedProps=props))
    assert "/orders/7" in system_of(server.requests[0])
    [session] = [p for p in cli_home.rglob("thread-fp1.jsonl")]
    records = [json.loads(line) for line in session.read_text().splitlines()]
    recorded = [r["e"] for r in records if r.get("t") == "event" and r["e"]["type"] == "CUSTOM"]
    assert {"name": "forwarded_props", "value": props}.items() <= recorded[0].items()
    # `sessions show` shows them (docs/agui.md), after the message they came with, escaped.
    shown = run_cli(["sessions", "show", "thread-fp1"])
    assert shown.returncode == 0, shown.stderr
    assert "forwardedProps" in shown.stdout and '"page": "/orders/7"' in shown.stdout
    assert shown.stdout.index("## User") < shown.stdout.index("forwardedProps")
    assert shown.stdout.index("forwardedProps") < shown.stdout.index("## Assistant")
    assert "\x1b" not in shown.stdout


def test_a_session_file_gives_back_the_state_its_events_left(tmp_path: Path):
    from agentcli.sessions.session import Session

    def event(kind: str, **fields: object) -> dict:
        return {"t": "event", "e": {"type": kind, **fields}}

    lines = [
        {"t": "session", "id": "s", "v": 1},
        event("STATE_DELTA", delta=[{"op": "add", "path": "/a", "value": 1}]),  # on {}
        event("STATE_DELTA", delta=[{"op": "remove", "path": "/missing"}]),
        event("STATE_DELTA", delta=[{"op": "add", "path": "/b", "value": [2]}]),
    ]
    path = tmp_path / "s.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    session = Session.load(path)
    assert session.state == {"a": 1, "b": [2]}
    assert any("STATE_DELTA does not apply" in w for w in session.warnings)
    lines.append(event("STATE_SNAPSHOT", snapshot={"fresh": True}))
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    assert Session.load(path).state == {"fresh": True}
