"""MCP servers reached by URL, against real servers built on the SDK's MCPServer
(tests/mcp_http_server.py, run as a subprocess on 127.0.0.1): the legacy HTTP+SSE transport,
chosen or found by falling back from streamable HTTP."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import RunCli, assert_one_error
from tests.scripted_server import Reply, ScriptedServer

pytest.importorskip("mcp")
pytest.importorskip("uvicorn")  # the fixture server (the serve extra)
FIXTURE = Path(__file__).with_name("mcp_http_server.py")
StartHttp = Callable[..., str]


@pytest.fixture
def http_server() -> Iterator[StartHttp]:
    """http_server(transport, *flags) -> the URL of a fixture server; all stop at teardown."""
    started: list[subprocess.Popen[str]] = []

    def start(transport: str, *flags: str) -> str:
        process = subprocess.Popen(
            [sys.executable, str(FIXTURE), transport, *flags],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        started.append(process)
        assert process.stdout is not None
        line = process.stdout.readline()
        assert line.startswith("listening "), line
        return line.split()[1]

    yield start
    for process in started:
        process.terminate()
        process.wait(timeout=10)
        if process.stdout is not None:
            process.stdout.close()


def write_config(cli_home: Path, text: str) -> None:
    path = cli_home / "agentcli" / "config.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def server_table(name: str, url: str, extra: str = "") -> str:
    return f"[mcp.servers.{name}]\nurl = {json.dumps(url)}\n{extra}\n"


def call(name: str, tool: str, arguments: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"id": f"call_{tool}", "name": f"mcp__{name}__{tool}", "arguments": arguments or {}}


def results(server: ScriptedServer) -> dict[str, str]:
    """Every tool result the model got, by call id."""
    messages = server.requests[-1].json["messages"]
    return {m["tool_call_id"]: m["content"] for m in messages if m.get("role") == "tool"}


def run_tools(
    run_cli: RunCli, server: ScriptedServer, name: str, *calls: dict[str, Any]
) -> subprocess.CompletedProcess[str]:
    """One run in which the model calls `calls`, one at a time, allowed by a rule."""
    server.enqueue(*(Reply.tool_calls([c]) for c in calls), Reply.text(["Done."]))
    return run_cli(["run", "go", "--allow", f"mcp__{name}__*"], server=server, timeout=90)


# --- the legacy HTTP+SSE transport


def test_a_legacy_sse_url_is_found_by_falling_back_and_its_tools_run(
    run_cli: RunCli, server: ScriptedServer, cli_home: Path, http_server: StartHttp
) -> None:
    url = http_server("sse")
    write_config(cli_home, server_table("old", url))
    result = run_tools(run_cli, server, "old", call("old", "add", {"a": 2, "b": 3}))

    assert result.returncode == 0, result.stderr
    assert "did not start" not in result.stderr, result.stderr
    assert "5" in results(server)["call_add"]  # 2 + 3, added by the server
    listed = run_cli(["mcp", "list", "--json"], timeout=60)
    [row] = json.loads(listed.stdout)["servers"]
    assert (row["state"], row["transport"]) == ("running", "sse"), row


def test_the_transport_chosen_is_the_one_used(
    run_cli: RunCli, cli_home: Path, http_server: StartHttp
) -> None:
    url = http_server("sse")
    added = run_cli(["mcp", "add", "old", "--url", url, "--transport", "sse"])
    assert added.returncode == 0, added.stderr
    config = cli_home / "agentcli" / "config.toml"
    assert 'transport = "sse"' in config.read_text()
    listed = run_cli(["mcp", "list"], timeout=60)
    assert listed.returncode == 0, listed.stderr
    assert listed.stdout.startswith("old  running  sse: "), listed.stdout
    assert "mcp__old__add" in listed.stdout

    # Streamable HTTP chosen for the same legacy server: no fallback, and what to set.
    config.write_text(config.read_text().replace('"sse"', '"http"'))
    listed = run_cli(["mcp", "list", "--json"], timeout=60)
    [row] = json.loads(listed.stdout)["servers"]
    assert row["state"] == "failed", row
    assert "legacy HTTP+SSE" in row["error"] and 'transport = "sse"' in row["error"], row


def test_a_bad_transport_is_one_config_error(run_cli: RunCli, cli_home: Path) -> None:
    refused = run_cli(["mcp", "add", "x", "--url", "http://127.0.0.1:9/", "--transport", "ws"])
    assert refused.returncode == 2
    assert_one_error(refused, "--transport")
    write_config(cli_home, '[mcp.servers.x]\ncommand = "prog"\ntransport = "sse"\n')
    result = run_cli(["mcp", "list"])
    assert result.returncode == 2
    assert_one_error(result, "mcp.servers.x.transport", "applies to a url")
