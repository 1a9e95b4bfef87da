"""A remote AG-UI agent's wrong shapes (`--agent`): every event is checked against the
`ag-ui-protocol` SDK's models where it enters. A wrong shape is one line naming the event
type and the field, exit code 1 (a provider error, README "Exit codes"), no traceback, and
nothing of it in the session; a shape the SDK accepts runs. Through the installed CLI
against a scripted remote agent (a few generated examples per event type), and in process
(the same client over loopback HTTP) for many more."""

from __future__ import annotations

import asyncio
import json
import subprocess
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agentcli.agui.client import AguiProvider
from agentcli.conversation import events as ev
from agentcli.conversation.messages import Message
from agentcli.errors import ProviderError
from agentcli.providers.base import ModelRequest
from tests.agui_helpers import EVENT, agent_reply, agent_url, finished, said, started
from tests.agui_shapes import TYPES, mutated, sdk_accepts, stream
from tests.conftest import AGENTCLI, RunCli, assert_one_error, build_env, error_lines
from tests.scripted_server import ScriptedServer
from tests.test_e2e_sessions import session_files

pytest.importorskip("ag_ui")

LOOKUP = {"type": "object", "properties": {"key": {"type": "string"}}}

# The shapes the third fault pass found turning into internal errors (issue 40).
FOUND = {
    "snapshot-message-without-id": (
        {"type": "MESSAGES_SNAPSHOT", "messages": [{"role": "assistant", "content": "x"}]},
        "messages[0].id",
    ),
    "snapshot-list-id": (
        {"type": "MESSAGES_SNAPSHOT", "messages": [{"id": ["a"], "role": "user", "content": "x"}]},
        "messages[0].id",
    ),
    "tool-calls-a-number": (
        {
            "type": "MESSAGES_SNAPSHOT",
            "messages": [{"id": "a", "role": "assistant", "toolCalls": 3}],
        },
        "messages[0].toolCalls",
    ),
    "function-a-string": (
        {
            "type": "MESSAGES_SNAPSHOT",
            "messages": [
                {
                    "id": "a",
                    "role": "assistant",
                    "toolCalls": [{"id": "c", "type": "function", "function": "lookup"}],
                }
            ],
        },
        "messages[0].toolCalls[0].function",
    ),
    "content-a-list": (
        {
            "type": "MESSAGES_SNAPSHOT",
            "messages": [
                {"id": "a", "role": "assistant", "content": [{"type": "text", "text": "x"}]}
            ],
        },
        "messages[0].content",
    ),
    "delta-a-number": ({"type": "STATE_DELTA", "delta": 5}, "delta"),
    "usage-a-string": (finished(usage="many"), "usage"),
    "usage-tokens-words": (finished(usage=[{"inputTokens": "many"}]), "usage[0].inputTokens"),
    "text-delta-a-number": (
        {"type": "TEXT_MESSAGE_CONTENT", "messageId": "m1", "delta": 5},
        "delta",
    ),
    "tool-call-id-a-list": (
        {"type": "TOOL_CALL_ARGS", "toolCallId": ["c1"], "delta": "{}"},
        "toolCallId",
    ),
    "arguments-an-object": (
        {
            "type": "MESSAGES_SNAPSHOT",
            "messages": [
                {
                    "id": "a",
                    "role": "assistant",
                    "toolCalls": [
                        {
                            "id": "c1",
                            "type": "function",
                            "function": {"name": "read_file", "arguments": {"path": "README.md"}},
                        }
                    ],
                }
            ],
        },
        "messages[0].toolCalls[0].function.arguments",
    ),
    "call-without-function": (  # its call's `type` is "function": not a union's branch
        {
            "type": "MESSAGES_SNAPSHOT",
            "messages": [
                {"id": "a", "role": "assistant", "toolCalls": [{"id": "c1", "type": "function"}]}
            ],
        },
        "messages[0].toolCalls[0].function",
    ),
    "args-delta-an-object": (
        {"type": "TOOL_CALL_ARGS", "toolCallId": "c1", "delta": {"path": "README.md"}},
        "delta",
    ),
}


def session_lines(home: Path) -> list[dict[str, Any]]:
    files = session_files(home)
    assert files, "the run recorded no session"  # else nothing below would be checked
    return [json.loads(line) for path in files for line in path.read_text().splitlines()]


def assert_nothing_wrong_recorded(home: Path) -> None:
    """Every event the session holds is a valid AG-UI event; every message is text."""
    for record in session_lines(home):
        if record.get("t") == "event":
            EVENT.validate_python(record["e"])
        elif record.get("t") == "message":
            message = record["m"]
            assert isinstance(message.get("content", ""), str), message
            assert isinstance(message.get("id"), str), message
            for call in message.get("toolCalls") or []:
                assert all(isinstance(call[k], str) for k in ("id", "name", "arguments")), call


@pytest.mark.parametrize("case", sorted(FOUND))
def test_each_shape_the_fault_pass_found_is_one_line(
    run_cli: RunCli, server: ScriptedServer, cli_home: Path, case: str
) -> None:
    bad, field = FOUND[case]
    before = [{"type": "TEXT_MESSAGE_START", "messageId": "m1", "role": "assistant"}]
    if bad["type"] == "TOOL_CALL_ARGS":
        before = [{"type": "TOOL_CALL_START", "toolCallId": "c1", "toolCallName": "read_file"}]
    server.enqueue(agent_reply(stream(before, bad)))
    result = run_cli(["run", "--agent", agent_url(server), "read the readme"])
    assert result.returncode == 1, result.stderr
    line = assert_one_error(result, bad["type"], field, "AG-UI's schema")
    assert "internal error" not in line
    assert_nothing_wrong_recorded(cli_home)
    # The session is not stuck by what it recorded: it continues.
    server.enqueue(agent_reply([started(), *said("again"), finished()]))
    again = run_cli(["run", "--continue", "--agent", agent_url(server), "go on"])
    assert again.returncode == 0, again.stderr
    assert again.stdout.strip() == "again"
    sent = server.requests[-1].json
    from ag_ui.core import RunAgentInput

    RunAgentInput.model_validate(sent)


def run_once(events: list[dict[str, Any]], home: Path) -> subprocess.CompletedProcess[str]:
    """The installed CLI against a scripted agent that sends `events`, in a home of its own
    (a hypothesis example cannot use the per-test fixtures)."""
    (home / "home").mkdir()
    (home / "ws").mkdir()
    with ScriptedServer() as server:
        server.enqueue(agent_reply(events))
        result = subprocess.run(
            [str(AGENTCLI), "run", "--agent", agent_url(server), "hi"],
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            env=build_env(home / "home", None, None),
            cwd=home / "ws",
            timeout=30,
            check=False,
        )
    return result


@pytest.mark.slow  # starts the installed CLI (not through run_cli: hypothesis examples)
@pytest.mark.parametrize("kind", TYPES)
@settings(
    max_examples=2,
    deadline=None,
    database=None,
    derandomize=True,  # the same examples in every CI run
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(data=st.data())
def test_a_generated_shape_is_one_line_or_runs(kind: str, data: st.DataObject) -> None:
    before, event, field = data.draw(mutated(kind))
    with tempfile.TemporaryDirectory(prefix="agent-shapes-") as place:
        result = run_once(stream(before, event), Path(place))
        check_example(kind, event, field, result, Path(place) / "home")


def check_example(kind: str, event: dict[str, Any], field: str, result: Any, home: Path) -> None:
    assert "Traceback" not in result.stderr, result.stderr
    assert "internal error" not in result.stderr, result.stderr
    if sdk_accepts(event):
        if kind != "RUN_ERROR":
            assert result.returncode in (0, 1), result.stderr
        assert "AG-UI's schema" not in result.stderr, (event, result.stderr)
    else:
        assert result.returncode == 1, (event, result.stderr)
        [line] = error_lines(result.stderr)
        assert kind in line and field in line and "AG-UI's schema" in line, (event, line)
    assert_nothing_wrong_recorded(home)


def feed_in_process(events: list[dict[str, Any]]) -> list[Any]:
    """The client's own stream over loopback HTTP: what agentcli folds from `events`."""
    provider = AguiProvider("", api_key=None)
    request = ModelRequest(
        system="",
        messages=[Message.user("hi")],
        tools=[{"name": "lookup", "description": "", "parameters": LOOKUP}],
    )

    async def collect(url: str) -> list[Any]:
        provider.base_url = url
        return [item async for item in provider.stream(request)]

    with ScriptedServer() as server:
        server.enqueue(agent_reply(events))
        return asyncio.run(collect(agent_url(server)))


@settings(max_examples=100, deadline=None, database=None, derandomize=True)
@given(data=st.data())
def test_any_shape_is_a_provider_error_or_well_formed_events(data: st.DataObject) -> None:
    kind = data.draw(st.sampled_from(TYPES))
    before, event, field = data.draw(mutated(kind))
    try:
        items = feed_in_process(stream(before, event))
    except ProviderError as error:
        if sdk_accepts(event):
            assert "AG-UI's schema" not in str(error), (event, error)
            return
        assert kind in str(error) and field in str(error), (event, error)
        return
    assert sdk_accepts(event), event
    for item in items:
        for one in item if isinstance(item, list) else [item]:
            if isinstance(one, ev.StepEnd):
                json.dumps(one.extra)
                continue
            EVENT.validate_python(one.to_wire())


def test_no_state_is_sent_until_the_agent_has_sent_one(
    run_cli: RunCli, server: ScriptedServer
) -> None:
    """`"state": {}` would be a state: an agent with an initial state of its own
    (LlamaIndex's AG-UI workflow) takes it as the client's and never sends its own. So
    agentcli sends null until the agent has sent a state; a delta before any patches {}."""
    delta = {"type": "STATE_DELTA", "delta": [{"op": "add", "path": "/n", "value": 1}]}
    server.enqueue(
        agent_reply([started(), *said("one"), finished()]),
        agent_reply([started(), delta, *said("two"), finished()]),
        agent_reply([started(), *said("three"), finished()]),
    )
    first = run_cli(["run", "--agent", agent_url(server), "hi"])
    assert first.returncode == 0, first.stderr
    for prompt in ("more", "again"):
        result = run_cli(["run", "--continue", "--agent", agent_url(server), prompt])
        assert result.returncode == 0, result.stderr
    sent = [request.json for request in server.requests]
    assert "state" in sent[0] and sent[0]["state"] is None
    assert sent[1]["state"] is None  # the agent had sent none yet
    assert sent[2]["state"] == {"n": 1}


@pytest.mark.slow  # starts the installed CLI
@pytest.mark.parametrize(
    "event",
    [
        {"type": "TOOL_CALL_END", "toolCallId": ""},  # the SDK's schema allows an empty id
        {"type": "TEXT_MESSAGE_END", "messageId": ""},
    ],
)
def test_a_valid_shape_found_by_brute_force_runs(tmp_path: Path, event: dict[str, Any]) -> None:
    """Every field of every event given each kind of value, through the CLI, found these
    valid events turned into internal errors; they run (or end as the agent's error)."""
    before = {
        "TOOL_CALL_END": [{"type": "TOOL_CALL_START", "toolCallId": "c1", "toolCallName": "x"}],
        "TEXT_MESSAGE_END": [
            {"type": "TEXT_MESSAGE_START", "messageId": "m1", "role": "assistant"}
        ],
    }[event["type"]]
    result = run_once(stream(before, event), tmp_path)
    check_example(event["type"], event, "", result, tmp_path / "home")
    assert result.returncode == 0, result.stderr


def test_a_remote_state_past_the_configured_limit_ends_the_run_in_one_line(
    run_cli: RunCli, server: ScriptedServer, cli_home: Path
) -> None:
    """limits.state bounds a remote agent's state as it bounds the model's: 12 doubling
    copies of a 1 KB state would pass a 64 KB limit: the delta is refused in one warning
    naming the configured limit (as any delta that does not apply), the state stays."""
    from tests.agui_helpers import agent_reply, agent_url, finished, started

    config = cli_home / "agentcli" / "config.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text("[limits]\nstate = 65536\n")
    doubling = [{"op": "copy", "from": "", "path": f"/c{i}"} for i in range(12)]
    server.enqueue(
        agent_reply(
            [
                started(),
                {"type": "STATE_SNAPSHOT", "snapshot": {"a": "x" * 1000}},
                {"type": "STATE_DELTA", "delta": doubling},
                finished(),
            ]
        )
    )
    result = run_cli(["run", "--agent", agent_url(server), "go"], server=server)
    assert result.returncode == 0, result.stderr
    warnings = [line for line in result.stderr.splitlines() if "limits.state" in line]
    assert len(warnings) == 1 and "(65536 bytes of JSON)" in warnings[0], result.stderr
    assert "Traceback" not in result.stderr
