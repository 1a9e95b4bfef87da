"""MCP resources and list changes, with the SDK-written tests/fixtures/mcp/notes_server.py:
the model reads resources through `mcp_read_resource` (risk as the server's, contents
capped); the user attaches them with `@server:uri` in the REPL, and a subscribed resource
that changed goes again with the next message; a prompt typed before its server started
waits for it; new prompts and resources are seen after list_changed."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import RunCli
from tests.scripted_server import Reply, ScriptedServer
from tests.test_mcp import sent_tools, toml_str, tool_messages, write_config
from tests.test_repl import CTRL_D, FOOTER, StartChat, chat  # noqa: F401 (the `chat` fixture)

pytest.importorskip("mcp")
NOTES_SERVER = Path(__file__).parent / "fixtures" / "mcp" / "notes_server.py"


def notes_config(*flags: str, trusted: bool = True, extra: str = "") -> str:
    args = json.dumps([str(NOTES_SERVER), *flags])
    return (
        f"[mcp.servers.n]\ncommand = {toml_str(sys.executable)}\nargs = {args}\n"
        f"trusted = {str(trusted).lower()}\n{extra}\n"
    )


def read(call_id: str, uri: str, server: str = "n") -> dict[str, Any]:
    return {"id": call_id, "name": "mcp_read_resource", "arguments": {"server": server, "uri": uri}}


def test_the_model_reads_resources_text_images_and_capped(
    run_cli: RunCli, server: ScriptedServer, cli_home: Path
) -> None:
    write_config(cli_home, notes_config("--big", "1000000"))
    server.enqueue(
        Reply.tool_calls(
            [
                read("call_text", "note://hello"),
                read("call_image", "note://logo"),
                read("call_big", "note://big"),
                read("call_missing", "note://nope"),
            ]
        ),
        Reply.text(["Read."]),
    )
    result = run_cli(["run", "read them"], server=server, timeout=90)
    assert result.returncode == 0, result.stderr
    tool = sent_tools(server)["mcp_read_resource"]
    assert "note://hello" in tool["description"] and "note://logo" in tool["description"]
    assert tool["parameters"]["properties"]["server"]["enum"] == ["n"]
    text, image, big, missing = tool_messages(server, 1)
    assert text["content"] == "hello from the note"
    assert image["content"] == "[image: image/png, 70 B]"
    assert len(big["content"]) < 31_000 and "bytes omitted" in big["content"]
    assert "could not read note://nope" in missing["content"]


def test_an_untrusted_server_s_resources_are_high_risk(
    run_cli: RunCli, server: ScriptedServer, cli_home: Path
) -> None:
    """No terminal, no --yes: a high-risk read is denied, and the model is told."""
    write_config(cli_home, notes_config(trusted=False))
    server.enqueue(Reply.tool_calls([read("call_text", "note://hello")]), Reply.text(["ok"]))
    result = run_cli(["run", "read it"], server=server, timeout=90)
    [message] = tool_messages(server, 1)
    assert "hello from the note" not in message["content"]
    assert message["content"].startswith("denied: mcp_read_resource: high risk"), message
    assert "MCP server n is not marked trusted" in message["content"]
    assert result.returncode == 4, result.stderr  # the documented code for a denied call


def test_list_changes_reach_the_tool_and_the_prompts(tmp_path: Path) -> None:
    """add_note sends resources/list_changed and prompts/list_changed: the read tool's
    description names the new resource and the new prompt is there, before the next step."""
    from agentcli.mcp.config import parse_server
    from agentcli.mcp.resources import ResourceSource
    from agentcli.mcp.server import McpServer
    from agentcli.tools.base import ToolContext
    from agentcli.tools.registry import ToolRegistry
    from agentcli.workspace.root import Workspace

    async def scenario() -> tuple[str, str, list[str]]:
        registry = ToolRegistry()
        table = {"command": sys.executable, "args": [str(NOTES_SERVER)], "sandbox": "none"}
        notes = McpServer(parse_server("n", table), tmp_path, asyncio.Lock(), tmp_path)
        sources = [notes, ResourceSource([notes])]
        for source in sources:
            registry.add_source(source)
        registry.start()
        await registry.refresh()
        before = registry.get("mcp_read_resource").description
        add = registry.get("mcp__n__add_note")
        await registry.call(add, {"name": "fresh", "text": "new"}, ToolContext(Workspace(tmp_path)))
        for _ in range(50):
            if any(p.name == "note_fresh" for p in sources[0].prompts):
                break
            await asyncio.sleep(0.1)
        await registry.refresh()
        after = registry.get("mcp_read_resource").description
        prompts = [p.name for p in sources[0].prompts]
        await registry.aclose()
        return before, after, prompts

    before, after, prompts = asyncio.run(scenario())
    assert "note://fresh" not in before and "note://fresh" in after
    assert "note_fresh" in prompts


def test_repl_prompts_before_the_start_and_resources_attached_and_refreshed(
    chat: StartChat,  # noqa: F811 (the fixture imported above)
    server: ScriptedServer,
    cli_home: Path,
    workspace: Path,
) -> None:
    """A prompt typed while its server is still starting waits for it; `@n:note://counter`
    attaches the resource; after `bump` changed it, the next message carries it again."""
    gate = workspace / "server-may-start"  # where the server's sandbox lets it look
    write_config(
        cli_home,
        notes_config("--start-after", str(gate), extra='[mcp.servers.n.tools.bump]\nrisk = "low"'),
    )
    bump = {"id": "call_bump", "name": "mcp__n__bump", "arguments": {}}
    server.enqueue(
        Reply.text(["Hello Ann."]),
        Reply.tool_calls([bump]),
        Reply.text(["Bumped."]),
        Reply.text(["Seen."]),
    )
    session = chat()
    mark = session.submit("/mcp__n__greet name=Ann")
    session.expect("waiting for MCP server n")  # it has not started: the prompt waits
    gate.touch()
    session.expect(FOOTER)
    session.prompt()
    shown = session.screen(mark)
    assert "no MCP prompt" not in shown
    shown = session.turn("@n:note://counter bump it")
    assert "attached n:note://counter" in shown, shown
    shown = session.turn("and now?")
    assert "changed since it was attached" in shown, shown
    session.send(CTRL_D)
    assert session.exit_status() == 0
    users = [
        [m["content"] for m in request.json["messages"] if m["role"] == "user"][-1]
        for request in server.requests
    ]
    assert users[0] == "Please greet Ann."
    assert '<resource server="n" uri="note://counter">\ncount 0\n</resource>' in users[1]
    assert '<resource server="n" uri="note://counter">\ncount 1\n</resource>' in users[3]


def test_tools_list_shows_mcp_tools_with_their_server_risk_and_state(
    run_cli: RunCli, cli_home: Path
) -> None:
    broken = '[mcp.servers.gone]\ncommand = "no-such-mcp-server-program"\n'
    write_config(cli_home, notes_config(extra='[mcp.servers.n.tools.bump]\nrisk = "low"') + broken)
    listed = run_cli(["tools", "list", "--json"], timeout=90)
    assert listed.returncode == 0, listed.stderr
    rows = {(row["source"], row["name"]): row for row in json.loads(listed.stdout)}
    assert rows["mcp:n", "mcp__n__bump"]["risk"] == "low"
    assert rows["mcp:n", "mcp__n__add_note"]["risk"] == "high"  # trusted, not said harmless
    assert rows["mcp:n", "mcp__n__hang"]["risk"] == "low"  # read-only
    assert rows["mcp:n", "mcp_read_resource"]["risk"] == "low"
    assert {row["state"] for key, row in rows.items() if key[0] == "mcp:n"} == {"running"}
    assert any(name == "read_file" for _, name in rows)  # the built-ins are still there
    text = run_cli(["tools", "list"], timeout=90).stdout
    assert "mcp__n__bump" in text
    [line] = [line for line in text.splitlines() if line.startswith("mcp:gone")]
    assert "failed" in line and "program not found" in line and "tools are absent" in line


def test_completion_offers_the_servers_and_their_uris(tmp_path: Path) -> None:
    from agentcli.mcp.config import parse_server
    from agentcli.mcp.resources import ResourceSource
    from agentcli.mcp.server import McpServer
    from agentcli.tools.registry import ToolRegistry
    from agentcli.ui.resource_mentions import resource_completions

    async def scenario() -> tuple[list[Any], list[Any], list[Any]]:
        table = {"command": sys.executable, "args": [str(NOTES_SERVER)], "sandbox": "none"}
        notes = McpServer(parse_server("n", table), tmp_path, asyncio.Lock(), tmp_path)
        registry = ToolRegistry()
        registry.add_source(notes)
        registry.add_source(ResourceSource([notes]))
        registry.start()
        await registry.refresh()
        found = (
            list(resource_completions("", registry)),
            list(resource_completions("n:note://h", registry)),
            list(resource_completions("x:", registry)),
        )
        await registry.aclose()
        return found

    servers, uris, unknown = asyncio.run(scenario())
    assert servers == [("n:", "n: (MCP resources)")]
    assert uris == [("n:note://hello", "note://hello")]
    assert unknown == []
