"""`@modelcontextprotocol/server-everything` (npm), the MCP reference test server: images,
structured content, resource links, error results, a tool-list change, and a server killed
in the middle of a call. `.ci/run` installs it when npm exists and names it in
AGENTCLI_TEST_MCP_EVERYTHING; without it these tests are skipped."""

from __future__ import annotations

import asyncio
import base64
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import RunCli
from tests.scripted_anthropic import AReply, ScriptedAnthropic
from tests.scripted_server import Reply, ScriptedServer
from tests.test_mcp import events_of, sent_tools, toml_str, tool_messages, write_config
from tests.test_repl import CTRL_D, StartChat, chat  # noqa: F401 (the `chat` fixture)

pytest.importorskip("mcp")
EVERYTHING = os.environ.get("AGENTCLI_TEST_MCP_EVERYTHING", "")
pytestmark = pytest.mark.skipif(
    not EVERYTHING or not Path(EVERYTHING).exists(),
    reason="server-everything not installed (.ci/run installs it when npm exists)",
)


def everything(cli_home: Path) -> None:
    write_config(cli_home, f"[mcp.servers.ev]\ncommand = {toml_str(EVERYTHING)}\ntrusted = true\n")


def call(call_id: str, tool: str, **arguments: Any) -> dict[str, Any]:
    return {"id": call_id, "name": f"mcp__ev__{tool}", "arguments": arguments}


def test_images_structured_content_and_resource_links_reach_the_model(
    run_cli: RunCli, server: ScriptedServer, cli_home: Path
) -> None:
    """The image as an OpenAI `image_url` after the tool results (tool messages take only
    text), its description in the tool message; the rest as text."""
    everything(cli_home)
    server.enqueue(
        Reply.tool_calls(
            [
                call("call_img", "get-tiny-image"),
                call("call_json", "get-structured-content", location="Chicago"),
                call("call_links", "get-resource-links", count=2),
            ]
        ),
        Reply.text(["Done."]),
    )
    result = run_cli(["run", "show me", "-o", "jsonl"], server=server, timeout=120)

    assert result.returncode == 0, result.stderr
    image, structured, links = tool_messages(server, 1)
    assert "[image: image/png, 4 KB]" in image["content"]
    assert "MCP logo" in image["content"]
    assert "temperature" in json.loads(structured["content"])
    assert links["content"].count("[resource: demo://resource/") == 2
    follow = server.requests[1].json["messages"][-1]
    assert follow["role"] == "user"
    text, picture = follow["content"]
    assert text["text"] == "The image returned by tool call call_img (mcp__ev__get-tiny-image):"
    url = picture["image_url"]["url"]
    assert url.startswith("data:image/png;base64,iVBOR")  # the PNG itself
    assert len(base64.b64decode(url.partition(",")[2])) > 4000
    results = {
        e["toolCallId"]: e for e in events_of(result.stdout) if e["type"] == "TOOL_CALL_RESULT"
    }
    kinds = [part["type"] for part in results["call_img"]["metadata"]["parts"]]
    assert kinds == ["text", "image", "text"]
    assert "iVBOR" not in json.dumps(results["call_img"])  # the bytes stay out of the events


def test_the_tiny_image_reaches_anthropic_inside_its_tool_result(
    run_cli: RunCli, cli_home: Path
) -> None:
    everything(cli_home)
    with ScriptedAnthropic() as anthropic:
        anthropic.enqueue(
            AReply.tool_use([{"id": "toolu_img", "name": "mcp__ev__get-tiny-image", "input": {}}]),
            AReply.text(["A logo."]),
        )
        env = {"ANTHROPIC_BASE_URL": anthropic.base_url, "ANTHROPIC_API_KEY": "sk-ant-test"}
        command = ["run", "--model", "anthropic:claude-scripted", "show me"]
        result = run_cli(command, env=env, timeout=120)
        assert anthropic.errors == []

    assert result.returncode == 0, result.stderr
    [block] = anthropic.requests[1].json["messages"][-1]["content"]
    assert block["type"] == "tool_result" and block["tool_use_id"] == "toolu_img"
    kinds = [part["type"] for part in block["content"]]
    assert kinds == ["text", "image"]
    source = block["content"][1]["source"]
    assert source["type"] == "base64" and source["media_type"] == "image/png"
    assert base64.b64decode(source["data"]).startswith(b"\x89PNG\r\n\x1a\n")
    assert "[image: image/png, 4 KB]" in block["content"][0]["text"]


def test_a_server_killed_during_a_call_gives_an_error_result_then_restarts(
    run_cli: RunCli, server: ScriptedServer, cli_home: Path, workspace: Path
) -> None:
    everything(cli_home)
    kill = (  # the server-everything started in this workspace, after a second
        "import time, psutil, os, signal\n"
        "time.sleep(1.5)\n"
        "for p in psutil.process_iter(['cmdline', 'cwd']):\n"
        "    if p.info['cwd'] == os.getcwd() and 'server-everything' in str(p.info['cmdline']):\n"
        "        os.kill(p.pid, signal.SIGKILL); print('killed', p.pid)\n"
    )
    (workspace / "kill_ev.py").write_text(kill, encoding="utf-8")
    shell = {"command": f"{sys.executable} kill_ev.py"}
    server.enqueue(
        Reply.tool_calls(
            [
                call("call_long", "trigger-long-running-operation", duration=20, steps=2),
                {"id": "call_kill", "name": "run_shell", "arguments": shell},
            ]
        ),
        Reply.tool_calls([call("call_echo", "echo", message="back again")]),
        Reply.text(["Done."]),
    )
    # --sandbox none: the sandbox would (rightly) keep run_shell from seeing or killing it
    result = run_cli(["run", "go", "--yes", "--sandbox", "none"], server=server, timeout=120)

    assert result.returncode == 0, result.stderr
    long, killer = tool_messages(server, 1)
    assert "killed" in killer["content"]
    assert "MCP server ev stopped during the call" in long["content"]
    assert "restarted at the next call" in long["content"]
    [echo] = tool_messages(server, 2)[-1:]
    assert "back again" in echo["content"]


def test_a_list_change_is_read_before_the_next_step(tmp_path: Path) -> None:
    """server-everything adds tools after the handshake and says so with
    notifications/tools/list_changed: the source lists again when the registry refreshes."""
    from agentcli.mcp.config import parse_server
    from agentcli.mcp.server import McpServer
    from agentcli.tools.registry import ToolRegistry

    async def scenario() -> tuple[int, list[str]]:
        source = McpServer(
            parse_server("ev", {"command": EVERYTHING}), tmp_path, asyncio.Lock(), tmp_path
        )
        listings = 0
        real = source._list_tools

        async def counted(session: Any) -> list[Any]:
            nonlocal listings
            listings += 1
            return await real(session)

        source._list_tools = counted  # type: ignore[method-assign]
        registry = ToolRegistry()
        registry.add_source(source)
        registry.start()
        await registry.refresh()
        for _ in range(100):  # the notification follows the handshake closely
            if source.changed or listings > 1:
                break
            await asyncio.sleep(0.1)
        await registry.refresh()
        names = registry.names()
        await registry.aclose()
        return listings, names

    listings, names = asyncio.run(scenario())
    assert listings == 2
    assert "mcp__ev__simulate-research-query" in names  # one of the tools added later


def test_an_error_result_from_the_server_is_an_error(tmp_path: Path) -> None:
    from agentcli.mcp.config import parse_server
    from agentcli.mcp.server import McpServer
    from agentcli.tools.base import ToolContext
    from agentcli.workspace.root import Workspace

    async def scenario() -> Any:
        source = McpServer(
            parse_server("ev", {"command": EVERYTHING}), tmp_path, asyncio.Lock(), tmp_path
        )
        await source.start()
        [echo] = [t for t in source.tools() if t.name == "mcp__ev__echo"]
        try:  # the executor's schema check would stop this; the server's own check runs here
            return await source.call(echo, {}, ToolContext(Workspace(tmp_path)))
        finally:
            await source.close()

    output = asyncio.run(scenario())
    assert output.error and "message" in output.content


def test_tools_of_an_untrusted_server_are_sent_but_high_risk(
    run_cli: RunCli, cli_home: Path
) -> None:
    write_config(cli_home, f"[mcp.servers.ev]\ncommand = {toml_str(EVERYTHING)}\n")
    listing = run_cli(["mcp", "list", "--json"], timeout=120)
    [row] = json.loads(listing.stdout)["servers"]
    assert row["state"] == "running" and row["prompts"] and row["resources"]
    assert {tool["risk"] for tool in row["tools"]} == {"high"}


def test_mcp_prompts_are_repl_slash_commands(
    chat: StartChat,  # noqa: F811 (the fixture imported above)
    server: ScriptedServer,
    cli_home: Path,
) -> None:
    everything(cli_home)
    server.enqueue(Reply.text(["Noted."]))
    session = chat()
    for _ in range(60):  # the server starts while the prompt is up
        shown = session.command("/help", "Alt+Enter")
        if "/mcp__ev__args-prompt" in shown:
            break
        time.sleep(0.5)
    assert "/mcp__ev__simple-prompt" in shown and "city=…" in shown, shown
    missing = session.command("/mcp__ev__args-prompt", "needs")
    assert "needs city=…" in missing
    session.turn("/mcp__ev__args-prompt city=Paris state=Texas")
    session.send(CTRL_D)
    assert session.exit_status() == 0
    users = [m for m in server.requests[0].json["messages"] if m["role"] == "user"]
    assert "Paris" in users[-1]["content"] and "Texas" in users[-1]["content"]


DOCUMENT = "demo://resource/static/document/architecture.md"


def test_the_model_reads_a_resource(
    run_cli: RunCli, server: ScriptedServer, cli_home: Path
) -> None:
    everything(cli_home)
    read = {"server": "ev", "uri": DOCUMENT}
    server.enqueue(
        Reply.tool_calls([{"id": "call_doc", "name": "mcp_read_resource", "arguments": read}]),
        Reply.text(["Read."]),
    )
    result = run_cli(["run", "read the architecture"], server=server, timeout=120)
    assert result.returncode == 0, result.stderr
    assert DOCUMENT in sent_tools(server)["mcp_read_resource"]["description"]
    [document] = tool_messages(server, 1)
    assert document["content"].startswith("# Everything Server"), document["content"][:200]


def test_an_attached_resource_that_changed_goes_again(
    chat: StartChat,  # noqa: F811 (the fixture imported above)
    server: ScriptedServer,
    cli_home: Path,
) -> None:
    """`@ev:URI` attaches the document and subscribes to it; toggle-subscriber-updates
    makes the server send notifications/resources/updated every 5 s: the next message
    carries the document again."""
    write_config(
        cli_home,
        f"[mcp.servers.ev]\ncommand = {toml_str(EVERYTHING)}\ntrusted = true\n"
        '[mcp.servers.ev.tools.toggle-subscriber-updates]\nrisk = "low"\n',
    )
    server.enqueue(
        Reply.tool_calls([call("call_toggle", "toggle-subscriber-updates")]),
        Reply.text(["Watching."]),
        Reply.text(["Seen."]),
    )
    session = chat()
    shown = session.turn(f"@ev:{DOCUMENT} keep an eye on it")
    assert f"attached ev:{DOCUMENT}" in shown, shown
    time.sleep(6)  # one update interval
    shown = session.turn("anything new?")
    assert f"changed since it was attached; attached again ev:{DOCUMENT}" in shown, shown
    session.send(CTRL_D)
    assert session.exit_status() == 0
    last = [m for m in server.requests[-1].json["messages"] if m["role"] == "user"][-1]
    assert last["content"].startswith("anything new?")
    assert f'<resource server="ev" uri="{DOCUMENT}">\n# Everything Server' in last["content"]
