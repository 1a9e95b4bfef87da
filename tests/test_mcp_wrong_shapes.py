"""An MCP server's wrong shapes, end to end through `agentcli run` (issue 40): a
hand-written stdio server (tests/fixtures/mcp/wrong_shapes_server.py) sends one message
the `mcp` SDK's types refuse. A tools/list answer of the wrong shape is one warning line
naming the answer and the field (the server's tools absent, no sandbox hint: no profile
changes a shape); a tools/call answer of the wrong shape is the call's error result, one
line naming the field, for the model and on stderr; a notification with wrong params is
left out and the call answers. Never a traceback or pydantic's multi-line report; the run
goes on to the model's answer."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import RunCli
from tests.fixtures.mcp.wrong_shapes_server import CALLS, FRAMES, LISTS, NOTES, PAIR
from tests.scripted_server import Reply, ScriptedServer
from tests.test_e2e_sessions import only_session, records, warning_lines
from tests.test_mcp import toml_str, tool_messages, write_config

pytest.importorskip("mcp")
SERVER = Path(__file__).parent / "fixtures" / "mcp" / "wrong_shapes_server.py"

# The field each wrong shape is named by.
LIST_FIELDS = {
    "tools-a-number": "tools: Input should be a valid list (it is a number)",
    "tools-missing": "tools: missing",
    "tool-name-a-number": "tools[0].name: Input should be a valid string (it is a number)",
    "tool-without-schema": "tools[0].inputSchema: missing",
    "schema-a-string": "tools[0].inputSchema: Input should be a valid dictionary",
    "annotations-a-list": "tools[0].annotations: Input should be a valid dictionary",
}
CALL_FIELDS = {
    "content-a-number": "content: Input should be a valid list (it is a number)",
    "content-a-string": "content: Input should be a valid list (it is a string)",
    "text-a-number": "content[0].text: Input should be a valid string (it is a number)",
    "content-type-unknown": "content[0].type: 'video' is not a type MCP has",
    "image-data-a-number": "content[0].data: Input should be a valid string (it is a number)",
    "structured-a-list": "structuredContent: Input should be a valid dictionary",
}
# Answers the SDK cannot read as JSON-RPC are dropped by it before agentcli sees which call
# they answer; one that is an answer (an object with a result or an error) ends the call in
# flight at once, quoted. Anything else is no answer: the call ends at its tool_timeout.
NO_ANSWER = ["answer-a-number"]
UNREADABLE = {
    "answer-without-id": '{"jsonrpc": "2.0", "result": {"content": [{"type": "text"',
    "answer-id-a-list": '{"jsonrpc": "2.0", "id": [',
    "error-a-string": '"error": "broken"}',
    "call-result-null": '"result": null}',
}


def run_echo(
    run_cli: RunCli,
    server: ScriptedServer,
    cli_home: Path,
    shape: str,
    tool_timeout: int = 60,
    texts: tuple[str, ...] = ("hi",),
) -> Any:
    """One `agentcli run` whose model calls echo once for each of `texts`, at once."""
    args = json.dumps([str(SERVER), shape])
    write_config(
        cli_home,
        f"[mcp.servers.w]\ncommand = {toml_str(sys.executable)}\nargs = {args}\n"
        f"trusted = true\ntool_timeout = {tool_timeout}\nstart_timeout = 60\n",
    )
    calls = [
        {"id": f"call_{n}", "name": "mcp__w__echo", "arguments": {"text": text}}
        for n, text in enumerate(texts, 1)
    ]
    server.enqueue(Reply.tool_calls(calls), Reply.text(["done"]))
    result = run_cli(["run", "--yes", "go"], server=server, timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "done", result.stderr
    assert "Traceback" not in result.stderr and "internal error" not in result.stderr
    assert "errors.pydantic.dev" not in result.stderr and "validation error" not in result.stderr
    return result


def answered(server: ScriptedServer) -> str:
    [message] = tool_messages(server, 1)
    return message["content"]


def test_the_shapes_are_all_tested() -> None:
    assert set(LISTS) - {"list-result-a-list"} == set(LIST_FIELDS)
    assert set(CALLS) - {"call-result-null"} == set(CALL_FIELDS)


@pytest.mark.parametrize("shape", sorted(LIST_FIELDS))
def test_a_tools_list_of_the_wrong_shape_is_one_line_naming_the_field(
    run_cli: RunCli, server: ScriptedServer, cli_home: Path, shape: str
) -> None:
    result = run_echo(run_cli, server, cli_home, shape)
    [line] = [line for line in warning_lines(result.stderr) if "MCP server w" in line]
    expected = (
        f"did not start: its tools/list answer does not match MCP's schema: {LIST_FIELDS[shape]}"
    )
    assert expected in line, line
    assert "sandbox" not in line  # no profile changes a shape
    assert line.endswith("its tools are absent"), line
    sent = {tool["function"]["name"] for tool in server.requests[0].json["tools"]}
    assert "mcp__w__echo" not in sent


def test_an_answer_that_is_not_json_rpc_at_the_start_is_one_line(
    run_cli: RunCli, server: ScriptedServer, cli_home: Path
) -> None:
    result = run_echo(run_cli, server, cli_home, "list-result-a-list")
    [line] = [line for line in warning_lines(result.stderr) if "MCP server w" in line]
    assert "it wrote something that is not MCP on stdout" in line, line
    assert '"result": [{"name": "echo"' in line, line  # the message itself, quoted


@pytest.mark.parametrize("shape", sorted(CALL_FIELDS))
def test_a_tools_call_answer_of_the_wrong_shape_is_one_line_naming_the_field(
    run_cli: RunCli, server: ScriptedServer, cli_home: Path, shape: str
) -> None:
    result = run_echo(run_cli, server, cli_home, shape)
    expected = (
        f"mcp__w__echo: its tools/call answer does not match MCP's schema: {CALL_FIELDS[shape]}"
    )
    content = answered(server)
    assert content.startswith("Error: ") and expected in content, content
    assert "\n" not in content
    [shown] = [line for line in result.stderr.splitlines() if "✗ mcp__w__echo" in line]
    assert expected in shown, result.stderr
    stored = [r["e"] for r in records(only_session(cli_home)) if r.get("t") == "event"]
    [ended] = [e for e in stored if e["type"] == "TOOL_CALL_RESULT"]
    assert expected in ended["content"] and "\n" not in ended["content"]


@pytest.mark.parametrize("shape", sorted(NOTES))
def test_a_notification_of_the_wrong_shape_is_left_out_and_the_call_answers(
    run_cli: RunCli, server: ScriptedServer, cli_home: Path, shape: str
) -> None:
    run_echo(run_cli, server, cli_home, shape)
    assert answered(server) == "echo: hi"


@pytest.mark.parametrize("shape", NO_ANSWER)
def test_a_line_that_is_no_answer_ends_the_call_at_its_timeout(
    run_cli: RunCli, server: ScriptedServer, cli_home: Path, shape: str
) -> None:
    """Not a hang: the call's own limit ends it (a short one here) and the run goes on."""
    run_echo(run_cli, server, cli_home, shape, tool_timeout=3)
    assert "no answer within 3 s, so the call was cancelled" in answered(server)


@pytest.mark.parametrize("shape", sorted(UNREADABLE))
def test_an_answer_the_sdk_cannot_read_ends_its_call_at_once_quoted(
    run_cli: RunCli, server: ScriptedServer, cli_home: Path, shape: str
) -> None:
    """The call's limit is 60 s here: ended by its timeout, the line would say so."""
    run_echo(run_cli, server, cli_home, shape, tool_timeout=60)
    content = answered(server)
    assert content.startswith("Error: mcp__w__echo: its answer is not MCP's JSON-RPC ("), content
    assert UNREADABLE[shape] in content and "no answer within" not in content, content
    assert "\n" not in content


def test_with_two_calls_in_flight_the_unreadable_answer_ends_its_call_once_the_other_answers(
    run_cli: RunCli, server: ScriptedServer, cli_home: Path
) -> None:
    """The answer without an id came while both were in flight: which one it answered was
    told by the other's own answer, and the call it was for ended then, not at its 60 s."""
    run_echo(run_cli, server, cli_home, PAIR, tool_timeout=60, texts=("bad", "good"))
    results = {m["tool_call_id"]: m["content"] for m in tool_messages(server, 1)}
    bad, good = results["call_1"], results["call_2"]
    assert bad.startswith("Error: mcp__w__echo: its answer is not MCP's JSON-RPC ("), bad
    assert UNREADABLE["answer-without-id"] in bad and "no answer within" not in bad, bad
    assert good == "echo: good"


def test_every_message_the_sdk_cannot_read_is_tested_as_an_answer_or_as_none():
    assert sorted([*NO_ANSWER, *UNREADABLE]) == sorted([*FRAMES, "call-result-null"])
