"""MCP limits, end to end through `agentcli run`: a call that never answers ends at the
server's `tool_timeout`; a program that writes something other than MCP on stdout fails
its start in seconds, in one line; a result is stored and sent once; bytes that are not
UTF-8 on a server's stdout are text, not a crash."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import RunCli, assert_one_error
from tests.scripted_server import Reply, ScriptedServer
from tests.test_e2e_sessions import only_session, records, warning_lines
from tests.test_mcp import toml_str, tool_messages, write_config

pytest.importorskip("mcp")
FAULT_SERVER = Path(__file__).with_name("mcp_fault_server.py")


def fault_server(*flags: str, extra: str = "") -> str:
    args = json.dumps([str(FAULT_SERVER), *flags])
    return (
        f"[mcp.servers.f]\ncommand = {toml_str(sys.executable)}\nargs = {args}\n"
        f"trusted = true\n{extra}\n"
    )


def call(tool: str, arguments: dict[str, Any], call_id: str = "call_1") -> dict[str, Any]:
    return {"id": call_id, "name": f"mcp__f__{tool}", "arguments": arguments}


def run_calls(
    run_cli: RunCli, server: ScriptedServer, calls: list[dict[str, Any]]
) -> tuple[Any, dict[str, str]]:
    """One step with `calls`, then an answer: the run and each result the model got."""
    server.enqueue(Reply.tool_calls(calls), Reply.text(["done"]))
    result = run_cli(["run", "--yes", "go"], server=server, timeout=90)
    assert result.returncode == 0, result.stderr
    return result, {m["tool_call_id"]: m["content"] for m in tool_messages(server, 1)}


def run_one_call(
    run_cli: RunCli, server: ScriptedServer, tool: str, arguments: dict[str, Any]
) -> tuple[Any, dict[str, Any]]:
    result, contents = run_calls(run_cli, server, [call(tool, arguments)])
    return result, {"content": contents["call_1"]}


def test_a_call_that_never_answers_ends_at_the_tool_timeout(
    run_cli: RunCli, server: ScriptedServer, cli_home: Path
) -> None:
    """Two calls at once: the one that never answers is cancelled at the limit, the
    quick one is not cut, and the run goes on to the model's answer."""
    write_config(cli_home, fault_server(extra="tool_timeout = 1.5"))
    calls = [
        call("nap", {"seconds": 600}, "call_hangs"),
        call("nap", {"seconds": 0.2}, "call_quick"),
    ]
    result, contents = run_calls(run_cli, server, calls)  # its own bound: no hang
    assert "no answer within 1.5 s" in contents["call_hangs"], contents
    assert "mcp.servers.f.tool_timeout" in contents["call_hangs"]
    assert contents["call_quick"] == "woke"
    assert "done" in result.stdout
    stored = [r["e"] for r in records(only_session(cli_home)) if r.get("t") == "event"]
    ended = {e["toolCallId"]: e for e in stored if e["type"] == "TOOL_CALL_RESULT"}
    assert ended["call_hangs"]["metadata"]["errorKind"] == "timeout"


@pytest.mark.parametrize("value", ["0", '"soon"', "1e9"])
def test_a_bad_tool_timeout_is_one_config_error(
    run_cli: RunCli, server: ScriptedServer, cli_home: Path, value: str
) -> None:
    write_config(cli_home, fault_server(extra=f"tool_timeout = {value}"))
    result = run_cli(["run", "hi"], server=server)
    assert result.returncode == 2
    assert_one_error(result, "mcp.servers.f.tool_timeout", "number of seconds")


JUNK = (
    "import sys, time; sys.stdout.buffer.write(b'Usage: \\xff\\xfe not a server\\n'); "
    "sys.stdout.flush(); time.sleep(600)"
)


def test_a_program_that_is_no_mcp_server_fails_fast_in_one_line(
    run_cli: RunCli, server: ScriptedServer, cli_home: Path
) -> None:
    args = json.dumps(["-c", JUNK])
    # A start timeout far past the run's own bound: the run ending at all shows the start
    # failed at the line that is not MCP, not at the timeout (no verdict on the clock).
    table = (
        f"[mcp.servers.junk]\ncommand = {toml_str(sys.executable)}\nargs = {args}\n"
        "start_timeout = 290\n"
    )
    write_config(cli_home, table)
    server.enqueue(Reply.text(["fine"]))
    result = run_cli(["run", "hi"], server=server, timeout=240)
    assert result.returncode == 0, result.stderr
    [line] = warning_lines(result.stderr)
    assert "MCP server junk did not start" in line and "not MCP on stdout" in line, line
    assert "Usage: \ufffd\ufffd not a server" in line, line
    assert result.stderr.count("\n") == 1, result.stderr  # no traceback, nothing else


def test_a_banner_before_the_protocol_is_forgiven(
    run_cli: RunCli, server: ScriptedServer, cli_home: Path
) -> None:
    write_config(cli_home, fault_server("--banner"))
    result, message = run_one_call(run_cli, server, "plain", {"n": 7})
    assert message["content"] == "7"
    assert warning_lines(result.stderr) == []


def test_a_banner_then_a_slow_start_is_forgiven_while_the_server_works(
    run_cli: RunCli, server: ScriptedServer, cli_home: Path
) -> None:
    """Busy for longer than the grace after its banner (a slow import on a loaded
    machine): still starting, not a program that is no MCP server."""
    write_config(cli_home, fault_server("--busy-banner", extra="start_timeout = 290"))
    result, message = run_one_call(run_cli, server, "plain", {"n": 7})
    assert message["content"] == "7"
    assert warning_lines(result.stderr) == []


def test_each_result_reaches_the_model_and_the_file_once(
    run_cli: RunCli, server: ScriptedServer, cli_home: Path
) -> None:
    """FastMCP-style: text "42" beside structuredContent {"result": 42} say one thing, as
    a list's text blocks beside {"result": [...]}, and a dict's JSON text beside itself."""
    size = 20_000  # under the output limit: the model gets it whole
    write_config(cli_home, fault_server())
    calls = [
        call("plain", {"n": 42}, "call_plain"),
        call("several", {"n": 3}, "call_list"),
        call("big", {"size": size}, "call_big"),
    ]
    _, contents = run_calls(run_cli, server, calls)
    assert contents["call_plain"] == "42"
    assert contents["call_list"] == "0\n1\n2"
    assert json.loads(contents["call_big"]) == {"data": "x" * size}
    file_size = only_session(cli_home).stat().st_size
    assert size < file_size < 1.5 * size, file_size  # once: not text and structured, twice


def test_a_large_result_is_capped_as_command_output_is(
    run_cli: RunCli, server: ScriptedServer, cli_home: Path
) -> None:
    """10 MB from a server does not fill the context: the model gets the head and the
    tail within shell.output_limit and where the whole is kept; it is kept once."""
    size = 10_000_000
    write_config(cli_home, fault_server())
    _, contents = run_calls(run_cli, server, [call("big", {"size": size}, "call_big")])
    content = contents["call_big"]
    assert len(content) < 31_000, len(content)
    assert content.startswith('{\n  "data": "xxx') and content.endswith('xxx"\n}')
    assert "bytes omitted; the full output is in" in content
    kept = Path(content.split("is in ")[1].split(" (read it")[0])
    assert json.loads(kept.read_text()) == {"data": "x" * size}
    assert only_session(cli_home).stat().st_size < 100_000  # the session holds the cut


def test_the_hand_written_server_s_text_and_bytes(
    run_cli: RunCli, server: ScriptedServer, cli_home: Path
) -> None:
    """Structured content the text does not say is kept beside it; bytes that are not
    UTF-8 on the server's stdout are text (U+FFFD), not a crash."""
    write_config(cli_home, fault_server("--raw"))
    calls = [call("described", {}, "call_described"), call("bytes", {}, "call_bytes")]
    _, contents = run_calls(run_cli, server, calls)
    assert contents["call_described"] == 'three items\n{"count": 3}'
    assert contents["call_bytes"] == "caf\ufffd \ufffd\ufffd"
    records(only_session(cli_home))


def test_a_per_tool_timeout_beats_the_server_s(
    run_cli: RunCli, server: ScriptedServer, cli_home: Path
) -> None:
    """`[mcp.servers.f.tools.nap] timeout` ends that tool's calls; the message names it."""
    write_config(cli_home, fault_server(extra="[mcp.servers.f.tools.nap]\ntimeout = 1.5"))
    _, contents = run_calls(run_cli, server, [call("nap", {"seconds": 600}, "call_hangs")])
    assert "no answer within 1.5 s" in contents["call_hangs"], contents
    assert "raise mcp.servers.f.tools.nap.timeout" in contents["call_hangs"]


@pytest.mark.parametrize(
    ("table", "problem"),
    [
        ("timeout = 0", "mcp.servers.f.tools.nap.timeout"),
        ('speed = "fast"', "may set risk = low|medium|high and timeout"),
    ],
)
def test_a_bad_per_tool_setting_is_one_config_error(
    run_cli: RunCli, server: ScriptedServer, cli_home: Path, table: str, problem: str
) -> None:
    write_config(cli_home, fault_server(extra=f"[mcp.servers.f.tools.nap]\n{table}"))
    result = run_cli(["run", "hi"], server=server)
    assert result.returncode == 2
    assert_one_error(result, problem)


@pytest.mark.parametrize(
    ("hints", "trusted", "risk"),
    [
        ({"read_only_hint": True}, True, "low"),
        ({"read_only_hint": True, "open_world_hint": True}, True, "medium"),
        ({"read_only_hint": True, "open_world_hint": False}, True, "low"),
        ({"destructive_hint": False, "open_world_hint": True}, True, "medium"),
        ({"read_only_hint": True, "open_world_hint": True}, False, "high"),
    ],
)
def test_open_world_reads_of_a_trusted_server_are_medium(
    hints: dict[str, bool], trusted: bool, risk: str
) -> None:
    """As the built-in fetch_url: a read of the open world is not a read of the workspace."""
    from mcp_types import ToolAnnotations

    from agentcli.mcp.config import parse_server
    from agentcli.mcp.tools import rate

    config = parse_server("f", {"command": "x", "trusted": trusted})
    assert rate(config, "fetch", ToolAnnotations(**hints))[0] == risk
