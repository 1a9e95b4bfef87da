"""A fourth fault pass over AG-UI peers (issue 40), through the installed CLI: a remote
agent (`--agent`) against a scripted agent, and `agentcli serve` against a client.

- A value nested past what the encoders take (pydantic's serializer refuses past about 255
  levels) is refused where it enters, in one line: from a remote agent (any event), and
  from a client (`state`: kept with the thread, it failed every later run of it). A
  session that already holds one (an older agentcli took it) runs on with one warning.
- Text streamed into a snapshot's message whose content is parts joins its text; into one
  whose content is not text, it is one line.
- A remote agent's own call whose arguments pass limits.tool_arguments ends the run in one
  line (it ended the step silently, exit 0, the rest of the answer lost).
- An event that does not parse says why (a number too long to read); RUN_ERROR without a
  message says so."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.agui_helpers import (
    AUTH,
    agent_reply,
    agent_url,
    finished,
    post_run,
    run_input,
    said,
    started,
    types,
)
from tests.conftest import RunCli, assert_one_error
from tests.scripted_server import Reply, ScriptedServer
from tests.test_e2e_agent_shapes import assert_nothing_wrong_recorded, session_lines
from tests.test_e2e_serve import USER, Serve, serve  # noqa: F401  (the fixture)

pytest.importorskip("ag_ui")
pytest.importorskip("starlette")

DEPTH = 300  # past pydantic's serializer, well inside json's parser


def nested(depth: int = DEPTH) -> dict[str, Any]:
    value: dict[str, Any] = {}
    for _ in range(depth):
        value = {"a": value}
    return value


def continues(run_cli: RunCli, server: ScriptedServer) -> None:
    """The session is not stuck: it continues against a well-behaved agent."""
    server.enqueue(agent_reply([started(), *said("again"), finished()]))
    again = run_cli(["run", "--continue", "--agent", agent_url(server), "go on"])
    assert again.returncode == 0, again.stderr
    assert again.stdout.strip() == "again"


DEEP_EVENTS = {
    "STATE_SNAPSHOT": {"type": "STATE_SNAPSHOT", "snapshot": nested()},
    "CUSTOM": {"type": "CUSTOM", "name": "x", "value": nested()},
    "STEP_STARTED": {"type": "STEP_STARTED", "stepName": "s", "metadata": nested()},
}


@pytest.mark.parametrize("kind", sorted(DEEP_EVENTS))
def test_an_event_nested_too_deeply_is_one_line_and_the_session_continues(
    run_cli: RunCli, server: ScriptedServer, cli_home: Path, kind: str
) -> None:
    server.enqueue(agent_reply([started(), DEEP_EVENTS[kind], *said("ok"), finished()]))
    result = run_cli(["run", "--agent", agent_url(server), "hi"])
    assert result.returncode == 1, result.stderr
    line = assert_one_error(result, kind, "nested deeper than 100 levels")
    assert "internal error" not in line
    assert_nothing_wrong_recorded(cli_home)
    continues(run_cli, server)


SNAPSHOT = {
    "type": "MESSAGES_SNAPSHOT",
    "messages": [
        {"id": "u1", "role": "user", "content": [{"type": "text", "text": "hi"}]},
        {"id": "act", "role": "activity", "activityType": "plan", "content": {"step": 1}},
    ],
}


def test_text_streamed_into_a_snapshots_message_of_parts_joins_its_text(
    run_cli: RunCli, server: ScriptedServer, cli_home: Path
) -> None:
    piece = {"type": "TEXT_MESSAGE_CONTENT", "messageId": "u1", "delta": " there"}
    server.enqueue(agent_reply([started(), SNAPSHOT, piece, *said("ok", "m2"), finished()]))
    result = run_cli(["run", "--agent", agent_url(server), "hi"])
    assert result.returncode == 0, result.stderr
    assert_nothing_wrong_recorded(cli_home)
    # The next run sends the agent its thread as it last described it.
    server.enqueue(agent_reply([started(), *said("again"), finished()]))
    again = run_cli(["run", "--continue", "--agent", agent_url(server), "go on"])
    assert again.returncode == 0, again.stderr
    sent = {m["id"]: m for m in server.requests[-1].json["messages"]}
    assert sent["u1"]["content"] == [{"type": "text", "text": "hi there"}]


def test_text_streamed_into_a_message_whose_content_is_not_text_is_one_line(
    run_cli: RunCli, server: ScriptedServer, cli_home: Path
) -> None:
    piece = {"type": "TEXT_MESSAGE_CONTENT", "messageId": "act", "delta": "x"}
    server.enqueue(agent_reply([started(), SNAPSHOT, piece, finished()]))
    result = run_cli(["run", "--agent", agent_url(server), "hi"])
    assert result.returncode == 1, result.stderr
    assert_one_error(result, "'act'", "whose content is not text")
    assert_nothing_wrong_recorded(cli_home)
    continues(run_cli, server)


def test_a_remote_call_past_limits_tool_arguments_ends_the_run_in_one_line(
    run_cli: RunCli, server: ScriptedServer, cli_home: Path
) -> None:
    config = cli_home / "agentcli" / "config.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text("[limits]\ntool_arguments = 1000\n", encoding="utf-8")
    call = [
        {"type": "TOOL_CALL_START", "toolCallId": "c1", "toolCallName": "remote_search"},
        {"type": "TOOL_CALL_ARGS", "toolCallId": "c1", "delta": json.dumps({"q": "z" * 5000})},
        {"type": "TOOL_CALL_END", "toolCallId": "c1"},
    ]
    server.enqueue(agent_reply([started(), *call, *said("the answer"), finished()]))
    result = run_cli(["run", "--agent", agent_url(server), "hi"])
    assert result.returncode == 1, result.stderr
    assert_one_error(result, "limits.tool_arguments (1,000 characters)")
    continues(run_cli, server)


def raw_reply(*data: str) -> Any:
    lines: list[str] = []
    for item in data:
        lines += [f"data: {item}", ""]
    return Reply.raw(lines)


@pytest.mark.parametrize(
    ("data", "why"),
    [
        ("1" * 5000, "a number too long to read"),
        ("[" * 5000 + "]" * 5000, "nested too deeply"),
        ('{"type": ', "Expecting value"),
    ],
)
def test_an_event_that_does_not_parse_says_why(
    run_cli: RunCli, server: ScriptedServer, data: str, why: str
) -> None:
    server.enqueue(raw_reply(json.dumps(started()), data))
    result = run_cli(["run", "--agent", agent_url(server), "hi"])
    assert result.returncode == 1, result.stderr
    line = assert_one_error(result, "not JSON", why)
    assert "set_int_max_str_digits" not in line


def test_a_run_error_without_a_message_says_so(run_cli: RunCli, server: ScriptedServer) -> None:
    server.enqueue(agent_reply([started(), {"type": "RUN_ERROR", "message": ""}]))
    result = run_cli(["run", "--agent", agent_url(server), "hi"])
    assert result.returncode == 1, result.stderr
    assert_one_error(result, "the agent failed: it gave no message")


# --- serve


def runs_on(url: str, server: ScriptedServer, body: dict[str, Any]) -> list[dict[str, Any]]:
    """A run of the thread that finishes (no RUN_ERROR); its events."""
    server.enqueue(Reply.text(["fine"]))
    events = post_run(url, body)
    assert "RUN_ERROR" not in types(events) and types(events)[-1] == "RUN_FINISHED"
    return events


@pytest.mark.parametrize(
    "field",
    ["state", "forwardedProps", "tools.0.parameters"],
)
def test_serve_refuses_a_value_nested_too_deeply_and_the_thread_runs_on(
    serve: Serve,  # noqa: F811
    server: ScriptedServer,
    field: str,
) -> None:
    url = serve()
    extra: dict[str, Any] = {
        "state": {"state": nested()},
        "forwardedProps": {"forwardedProps": nested()},
        "tools.0.parameters": {
            "tools": [{"name": "pick", "description": "d", "parameters": nested()}]
        },
    }[field]
    body = run_input("deep1", "r1", [USER], **extra)
    response = httpx.post(url, json=body, headers={"Accept": "text/event-stream", **AUTH})
    assert response.status_code == 422, response.text
    said_ = response.json()["error"]
    assert field in said_ and "nested deeper than 100 levels" in said_
    runs_on(url, server, run_input("deep1", "r2", [USER]))


def test_a_thread_whose_session_holds_a_state_nested_too_deeply_runs_on(
    serve: Serve,  # noqa: F811
    server: ScriptedServer,
    cli_home: Path,
) -> None:
    url = serve()
    server.enqueue(Reply.text(["one"]))
    post_run(url, run_input("deep2", "r1", [USER], state={"count": 1}))
    path = cli_home / "agentcli" / "data" / "sessions" / "thread-deep2.jsonl"
    deep = {"t": "event", "e": {"type": "STATE_SNAPSHOT", "snapshot": nested()}}
    with path.open("a", encoding="utf-8") as file:  # as an older agentcli recorded it
        file.write(json.dumps(deep) + "\n")
    again = serve()  # another process: it reads the thread from its file
    later = {"id": "u2", "role": "user", "content": "and now?"}
    events = runs_on(again, server, run_input("deep2", "r2", [later]))
    snapshots = [e["snapshot"] for e in events if e["type"] == "STATE_SNAPSHOT"]
    assert snapshots == [{"count": 1}]


def test_a_flood_of_state_changes_is_a_few_lines_and_every_change_is_kept(
    run_cli: RunCli, server: ScriptedServer, cli_home: Path
) -> None:
    count = 5000
    deltas = [
        {"type": "STATE_DELTA", "delta": [{"op": "replace", "path": "/n", "value": n}]}
        for n in range(count)
    ]
    first = {"type": "STATE_SNAPSHOT", "snapshot": {"n": -1}}
    server.enqueue(agent_reply([started(), first, *deltas, *said("ok"), finished()]))
    result = run_cli(["run", "--agent", agent_url(server), "hi"], timeout=120)
    assert result.returncode == 0, result.stderr
    lines = [line for line in result.stderr.splitlines() if "state:" in line]
    # Bounded by time (a few a second), not by the flood: far fewer than one a change.
    assert 1 <= len(lines) < count // 10, len(lines)
    # Held changes are drawn as one line saying how many it stands for (the very last
    # change may land when a line is due and be drawn alone: any line may say it).
    assert any("earlier change(s) not shown" in line for line in lines), lines
    recorded = [r for r in session_lines(cli_home) if r.get("e", {}).get("type") == "STATE_DELTA"]
    assert len(recorded) == count


def test_a_json_body_instead_of_events_is_named_as_such(
    run_cli: RunCli, server: ScriptedServer
) -> None:
    server.enqueue(Reply.error(200, body=json.dumps({"error": "quota exceeded"})))
    result = run_cli(["run", "--agent", agent_url(server), "hi"])
    assert result.returncode == 1, result.stderr
    assert_one_error(result, "`application/json`, not an event stream", "quota exceeded")


def test_an_agent_not_found_names_its_url_not_a_model(
    run_cli: RunCli, server: ScriptedServer
) -> None:
    server.enqueue(Reply.error(404, "no such route"))
    result = run_cli(["run", "--agent", agent_url(server), "hi"])
    assert result.returncode == 1, result.stderr
    line = assert_one_error(result, "HTTP 404", "Check the --agent URL")
    assert "model name" not in line


def test_a_model_call_with_a_number_too_long_to_read_is_its_one_line_error(
    run_cli: RunCli, server: ScriptedServer
) -> None:
    """5,000 digits in a call's arguments passed Python's int() limit: the run ended in an
    internal error. Now the call is refused in one line and the model may retry."""
    arguments = '{"expression": ' + "9" * 5000 + "}"
    server.enqueue(
        Reply.tool_calls([{"id": "c1", "name": "calculator", "arguments": arguments}]),
        Reply.text(["ok"]),
    )
    result = run_cli(["run", "--yes", "hi"], server=server)
    assert result.returncode == 0, result.stderr
    [tool] = [m for m in server.requests[-1].json["messages"] if m["role"] == "tool"]
    assert "a number too long to read" in tool["content"], tool
    assert "set_int_max_str_digits" not in tool["content"]
