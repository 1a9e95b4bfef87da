"""End-to-end: no session is stuck by its own file. A session holding every kind of entry a
run records, with odd values (tool-call arguments as objects, calls without ids or names,
results of calls the file lost or answered twice, wrong types in events and provider
parts, a last line cut by a crash) continues through the installed CLI: each entry is
repaired or left out with a warning, and what the model, or the remote AG-UI agent,
receives is well-formed."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.agui_helpers import agent_reply, agent_url, finished, said, started
from tests.conftest import RunCli
from tests.scripted_anthropic import AReply, ScriptedAnthropic
from tests.scripted_server import Reply, ScriptedServer
from tests.test_e2e_session_shapes import SESSION_ID, header, write_session
from tests.test_e2e_sessions import assert_valid_history, warning_lines

READ = {"name": "read_file", "arguments": {"path": "README.md"}}  # an object, not JSON text


def odd_lines(workspace: Path, model: str = "openai:m") -> list[bytes]:
    """Every kind of entry, with odd values, and a cut last line."""
    records: list[Any] = [
        header(workspace, model=model),
        {"t": "message", "m": {"id": "u1", "role": "user", "content": "hello"}},
        {"t": "event", "e": {"type": "STEP_STARTED", "stepName": "step-1"}},
        {
            "t": "message",
            "m": {
                "id": "a1",
                "role": "assistant",
                "content": "",
                "toolCalls": [
                    {"id": "c1", **READ},
                    {"name": "read_file", "arguments": '{"path": "notes.txt"}'},  # no id
                    {"id": "c3", "arguments": "{}"},  # no name: cannot be sent
                    "not a call",
                ],
            },
        },
        {"t": "event", "e": {"type": "TOOL_CALL_RESULT", "toolCallId": "c1", "content": 5}},
        {"t": "message", "m": {"id": "t1", "role": "tool", "toolCallId": "c1", "content": "r"}},
        {"t": "message", "m": {"id": "t2", "role": "tool", "toolCallId": "c1", "content": "2nd"}},
        {"t": "message", "m": {"id": "t3", "role": "tool", "toolCallId": "lost", "content": "x"}},
        {
            "t": "message",
            "m": {
                "id": "a2",
                "role": "assistant",
                "content": "done",
                "extra": {"anthropic_content": "not blocks", "agui": {"keep": "all"}},
            },
        },
        {"t": "event", "e": {"type": "STATE_DELTA", "delta": 5}},
        {"t": "event", "e": {"type": "STATE_SNAPSHOT"}},
        {"t": "event", "e": {"type": "CUSTOM", "name": "usage", "value": {"totalTokens": -1}}},
        {"t": "compaction", "summary": "earlier", "start": 0},
        {"t": "message", "m": {"id": "u2", "role": "user", "content": "and then"}},
        {
            "t": "message",
            "m": {"id": "a3", "role": "assistant", "toolCalls": [{"id": "c9", **READ}]},
        },
    ]
    lines = [json.dumps(record).encode() for record in records]
    return [*lines, b'{"t": "message", "m": {"role": "user", "cont']  # cut by a crash


def test_an_odd_session_continues_and_the_model_gets_a_valid_history(
    run_cli: RunCli, server: ScriptedServer, workspace: Path, cli_home: Path
) -> None:
    path = write_session(cli_home, odd_lines(workspace))
    server.enqueue(Reply.text(["went on"]))
    result = run_cli(["run", "--continue", "more"], server=server)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "went on"
    sent = server.requests[0].json["messages"]
    assert_valid_history(sent)
    calls = [c for m in sent for c in m.get("tool_calls") or []]
    for call in calls:
        assert isinstance(call["id"], str) and call["id"], call
        assert isinstance(json.loads(call["function"]["arguments"]), dict), call
    by_name = [c["function"] for c in calls]
    assert {"name": "read_file", "arguments": '{"path": "README.md"}'} in by_name
    assert {"name": "read_file", "arguments": '{"path": "notes.txt"}'} in by_name
    results = [m["content"] for m in sent if m["role"] == "tool"]
    assert "r" in results and "2nd" not in results and "x" not in results
    warned = "\n".join(warning_lines(result.stderr))
    assert str(path) in warned and "sent as their JSON" in warned, result.stderr
    # Continued again: what the first continue recorded is as sendable.
    server.enqueue(Reply.text(["and on"]))
    again = run_cli(["run", "--continue", "still more"], server=server)
    assert again.returncode == 0, again.stderr
    assert_valid_history(server.requests[1].json["messages"])


def test_an_odd_session_continues_with_anthropic(
    run_cli: RunCli, workspace: Path, cli_home: Path
) -> None:
    """Anthropic's stored content blocks of the wrong shape are left out: the message is
    sent from what agentcli has, and every tool_use has its tool_result."""
    write_session(cli_home, odd_lines(workspace, model="anthropic:claude-x"))
    with ScriptedAnthropic() as anthropic:
        anthropic.enqueue(AReply.text(["fine"]))
        env = {"ANTHROPIC_BASE_URL": anthropic.base_url, "ANTHROPIC_API_KEY": "k"}
        result = run_cli(["run", "--continue", "--model", "anthropic:claude-x", "more"], env=env)
        assert result.returncode == 0, result.stderr
        turns = anthropic.requests[0].json["messages"]
    for turn in turns:
        assert isinstance(turn["content"], list), turn
        for block in turn["content"]:
            assert isinstance(block, dict) and isinstance(block.get("type"), str), turn
    uses = [b["id"] for t in turns for b in t["content"] if b["type"] == "tool_use"]
    answered = [b["tool_use_id"] for t in turns for b in t["content"] if b["type"] == "tool_result"]
    assert sorted(uses) == sorted(answered)
    assert all(isinstance(b["input"], dict) for t in turns for b in t["content"] if "input" in b)


def agui_session(workspace: Path) -> list[bytes]:
    """A session of `--agent` whose recorded AG-UI record has a remote call's arguments
    as an object (what an older agentcli kept) and a message of a wrong shape."""
    call = {"id": "rc1", "type": "function", "function": {"name": "lookup", "arguments": {}}}
    good = {
        "keep": 1,
        "messages": [
            {"id": "r1", "role": "assistant", "toolCalls": [call]},
            {"id": "r2", "role": "tool", "toolCallId": "rc1", "content": "42"},
            {"id": "r3", "role": "assistant", "content": "it is 42"},
        ],
        "state": {"visits": 1},
    }
    broken = {"keep": 0, "messages": [{"role": "assistant", "content": ["x"]}]}
    records: list[Any] = [
        header(workspace, model="agent"),
        {"t": "message", "m": {"id": "u1", "role": "user", "content": "hello"}},
        {
            "t": "message",
            "m": {"id": "a1", "role": "assistant", "content": "it is 42", "extra": {"agui": good}},
        },
        {"t": "message", "m": {"id": "u2", "role": "user", "content": "again"}},
        {
            "t": "message",
            "m": {"id": "a2", "role": "assistant", "content": "sure", "extra": {"agui": broken}},
        },
    ]
    return [json.dumps(record).encode() for record in records]


def test_an_agent_session_with_object_arguments_continues(
    run_cli: RunCli, server: ScriptedServer, workspace: Path, cli_home: Path
) -> None:
    pytest.importorskip("ag_ui")
    from ag_ui.core import RunAgentInput

    path = write_session(cli_home, agui_session(workspace), SESSION_ID)
    for _ in range(2):
        server.enqueue(agent_reply([started(), *said("went on"), finished()]))
    for number in range(2):  # the second continue reads what the first recorded
        result = run_cli(["run", "--continue", "--agent", agent_url(server), "more"])
        assert result.returncode == 0, result.stderr
        sent = server.requests[number].json
        RunAgentInput.model_validate(sent)  # what pydantic-ai and others check it by
    first = server.requests[0].json
    calls = [c for m in first["messages"] for c in m.get("toolCalls") or []]
    assert calls[0]["function"]["arguments"] == "{}"
    assert first["state"] == {"visits": 1}
    assert [m["content"] for m in first["messages"] if m["role"] == "user"] == [
        "hello",
        "again",
        "more",
    ]
    shown = run_cli(["sessions", "show", SESSION_ID])
    assert shown.returncode == 0, shown.stderr
    warned = "\n".join(warning_lines(shown.stderr))
    assert str(path) in warned and "AG-UI record" in warned, shown.stderr


def test_a_cut_stream_keeps_its_text_for_the_next_turn_once(
    run_cli: RunCli, server: ScriptedServer, cli_home: Path
) -> None:
    """The error line says the text received so far is kept: the next turn's model gets
    it, marked, once (it got only the user's turns, in the REPL and in `--continue`)."""
    server.enqueue(Reply.cut(["partial ", "answer"]))
    first = run_cli(["run", "first"], server=server)
    assert first.returncode == 1 and "so far is kept" in first.stderr, first.stderr
    server.enqueue(Reply.text(["fine"]))
    again = run_cli(["run", "--continue", "next"], server=server)
    assert again.returncode == 0, again.stderr
    said = [m for m in server.requests[-1].json["messages"] if m["role"] == "assistant"]
    assert len(said) == 1 and said[0]["content"].startswith("partial answer"), said
