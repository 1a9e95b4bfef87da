"""`@modelcontextprotocol/server-filesystem` and `@modelcontextprotocol/server-memory`
(npm), driven through `agentcli run` against the scripted model server. Both answer with
text beside structuredContent that says the same: each result reaches the model once.
`.ci/run` installs them when npm exists and names them in AGENTCLI_TEST_MCP_FILESYSTEM and
AGENTCLI_TEST_MCP_MEMORY; without them these tests are skipped."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import RunCli
from tests.scripted_server import Reply, ScriptedServer
from tests.test_mcp import sent_tools, toml_str, tool_messages, write_config

pytest.importorskip("mcp")
FILESYSTEM = os.environ.get("AGENTCLI_TEST_MCP_FILESYSTEM", "")
MEMORY = os.environ.get("AGENTCLI_TEST_MCP_MEMORY", "")
needs_filesystem = pytest.mark.skipif(
    not FILESYSTEM or not Path(FILESYSTEM).exists(),
    reason="server-filesystem not installed (.ci/run installs it when npm exists)",
)
needs_memory = pytest.mark.skipif(
    not MEMORY or not Path(MEMORY).exists(),
    reason="server-memory not installed (.ci/run installs it when npm exists)",
)


def filesystem_server(cli_home: Path, workspace: Path) -> None:
    """server-filesystem, trusted, allowed the workspace."""
    args = json.dumps([str(workspace)])
    write_config(
        cli_home,
        f"[mcp.servers.fs]\ncommand = {toml_str(FILESYSTEM)}\nargs = {args}\ntrusted = true\n",
    )


def call(call_id: str, name: str, **arguments: Any) -> dict[str, Any]:
    return {"id": call_id, "name": name, "arguments": arguments}


@needs_filesystem
def test_filesystem_results_reach_the_model_once(
    run_cli: RunCli, server: ScriptedServer, cli_home: Path, workspace: Path
) -> None:
    filesystem_server(cli_home, workspace)
    notes = (workspace / "notes.txt").read_text(encoding="utf-8")
    server.enqueue(
        Reply.tool_calls(
            [
                call("call_read", "mcp__fs__read_text_file", path=str(workspace / "notes.txt")),
                call("call_list", "mcp__fs__list_directory", path=str(workspace)),
            ]
        ),
        Reply.text(["Read."]),
    )
    result = run_cli(["run", "--yes", "read notes.txt"], server=server, timeout=120)
    assert result.returncode == 0, result.stderr
    read, listing = tool_messages(server, 1)
    assert read["content"] == notes, read["content"]  # the text alone, not its JSON again
    assert listing["content"].count("notes.txt") == 1, listing["content"]
    tools = sent_tools(server)
    assert "mcp__fs__read_text_file" in tools and "mcp__fs__write_file" in tools


@needs_filesystem
def test_filesystem_risks_follow_its_annotations(
    run_cli: RunCli, cli_home: Path, workspace: Path
) -> None:
    filesystem_server(cli_home, workspace)
    listed = run_cli(["tools", "list", "--json"], timeout=120)
    risks = {
        row["name"]: row["risk"] for row in json.loads(listed.stdout) if row["source"] == "mcp:fs"
    }
    assert risks["mcp__fs__read_text_file"] == "low", risks
    assert risks["mcp__fs__write_file"] in ("medium", "high"), risks


@needs_memory
def test_memory_results_reach_the_model_once(
    run_cli: RunCli, server: ScriptedServer, cli_home: Path, workspace: Path
) -> None:
    table = (
        f"[mcp.servers.mem]\ncommand = {toml_str(MEMORY)}\ntrusted = true\n"
        'env = ["MEMORY_FILE_PATH"]\nsandbox = "workspace-write"\n'
    )
    write_config(cli_home, table)
    entity = {"name": "Ada", "entityType": "person", "observations": ["wrote the first program"]}
    server.enqueue(
        Reply.tool_calls([call("call_create", "mcp__mem__create_entities", entities=[entity])]),
        Reply.tool_calls([call("call_read", "mcp__mem__read_graph")]),
        Reply.text(["Remembered."]),
    )
    memory_file = workspace / "memory.jsonl"
    result = run_cli(
        ["run", "--yes", "remember Ada"],
        server=server,
        env={"MEMORY_FILE_PATH": str(memory_file)},
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    [created] = tool_messages(server, 1)
    [graph] = tool_messages(server, 2)[-1:]
    assert created["content"].count("wrote the first program") == 1, created["content"]
    assert graph["content"].count("wrote the first program") == 1, graph["content"]
    assert "Ada" in memory_file.read_text(encoding="utf-8")
