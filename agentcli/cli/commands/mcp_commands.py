"""`agentcli mcp add | remove | list | login | logout`: the MCP servers in the configuration
files, what each one offers when started, and the OAuth logins of those reached by URL."""

from __future__ import annotations

import asyncio
import importlib.util
import sys
from pathlib import Path
from typing import Any

from agentcli.config import load_config
from agentcli.config.edit import remove_key, set_table
from agentcli.config.files import project_config_path, user_config_path
from agentcli.errors import ConfigError, UsageError
from agentcli.mcp.config import ignored_servers, parse_server, servers_of
from agentcli.output.visible import one_line, visible_json

PROBE_START_TIMEOUT = 15.0  # seconds `mcp add` waits for a server to list its tools


def _config_file(workspace: Path, project: bool) -> Path:
    return project_config_path(workspace) if project else user_config_path()


def add(
    workspace: Path,
    name: str,
    command: list[str],
    *,
    url: str | None,
    env: list[str],
    headers: list[str],
    trusted: bool,
    project: bool,
    sandbox: str | None = None,
    dirs: list[str] | None = None,
    transport: str | None = None,
) -> int:
    if bool(command) == bool(url):
        raise UsageError(
            "give the server's command after --, e.g. agentcli mcp add time -- mcp-server-time, "
            "or its address with --url URL"
        )
    table: dict[str, Any] = {"url": url} if url else {"command": command[0]}
    if command[1:]:
        table["args"] = command[1:]
    if env:
        table["env"] = env
    if headers:
        table["headers"] = dict(_header(text) for text in headers)
    if trusted:
        table["trusted"] = True
    if sandbox is not None:
        table["sandbox"] = sandbox
    if dirs:
        table["dirs"] = dirs
    if transport is not None:
        table["transport"] = transport
    try:
        parse_server(name, table)
    except ConfigError as error:
        text = str(error).replace(f"mcp.servers.{name}.sandbox", "--sandbox")
        raise UsageError(text.replace(f"mcp.servers.{name}.transport", "--transport")) from None
    path = _config_file(workspace, project)
    set_table(path, f"mcp.servers.{name}", table)
    sys.stdout.write(f"added MCP server {name} to {one_line(path)}\n")
    if not url and sandbox is None:
        sys.stdout.write(
            "sandbox: read-only, as no --sandbox was given (it reads the workspace, writes "
            "nowhere but its own dirs, has no network); --sandbox PROFILE widens it\n"
        )
        for line in _suggestions(workspace, parse_server(name, table)):
            sys.stdout.write(one_line(line) + "\n")  # it may name the server's tools
    return 0


def _suggestions(workspace: Path, server: Any) -> list[str]:
    """What a known kind of server needs, said and not applied: a launcher that fetches
    its package (npx, uvx) is known by name; otherwise the server is started read-only,
    asked for its tools and stopped, for those that say openWorldHint."""
    from agentcli.mcp.reach import add_suggestions, launcher_needs

    if launcher_needs(server.command or "") or importlib.util.find_spec("mcp") is None:
        return add_suggestions(server)
    from agentcli.mcp.server import McpServer
    from agentcli.paths import data_dir
    from agentcli.records import replace
    from agentcli.sandbox.confine import Sandbox, sandbox_settings

    config = load_config(workspace)
    sandbox = Sandbox(workspace, sandbox_settings(config, None, False))
    brief = replace(server, start_timeout=min(server.start_timeout, PROBE_START_TIMEOUT))
    probe = McpServer(brief, workspace, asyncio.Lock(), data_dir() / "mcp", sandbox)

    async def offered() -> list[str]:
        try:
            await probe.start()
            return list(probe.open_world)
        finally:
            await probe.close()
            sandbox.close()

    return add_suggestions(server, asyncio.run(offered()))


def _header(text: str) -> tuple[str, str]:
    name, colon, value = text.partition(":")
    if not colon or not name.strip():
        raise UsageError(
            f"--header {text!r}: write 'Name: value', e.g. 'Authorization: Bearer ${{TOKEN}}'"
        )
    return name.strip(), value.strip()


def remove(workspace: Path, name: str, project: bool) -> int:
    path = _config_file(workspace, project)
    if not remove_key(path, f"mcp.servers.{name}"):
        raise UsageError(
            f"there is no MCP server {name!r} in {path}; `agentcli mcp list` shows them"
        )
    sys.stdout.write(f"removed MCP server {name} from {one_line(path)}\n")
    return 0


def _server(workspace: Path, name: str) -> Any:
    """The configured server a login is for: one reached by URL, with OAuth on."""
    from agentcli.mcp.login import login_target

    return login_target(servers_of(load_config(workspace)), name)


def login(workspace: Path, name: str, browser: bool) -> int:
    from agentcli.mcp.login import run_login

    server = _server(workspace, name)
    if not (sys.stdin.isatty() and sys.stdout.isatty()):
        raise UsageError(
            f"logging in to {name} needs a person at a terminal: run `agentcli mcp login "
            f"{name}` in one"
        )

    def say(text: str) -> None:
        sys.stdout.write(text + "\n")
        sys.stdout.flush()

    if run_login(server, say, browser=browser):
        sys.stdout.write(f"logged in to {name}; its tokens are stored for agentcli alone\n")
    else:
        sys.stdout.write(f"{name} let agentcli in without a login; nothing was stored\n")
    return 0


def logout(name: str) -> int:
    """By name alone: a server removed from the configuration may still have tokens."""
    from agentcli.mcp.config import SERVER_NAME
    from agentcli.mcp.oauth_store import TokenFile

    if not SERVER_NAME.match(name):
        raise UsageError(f"{name!r} is not a server name (letters, digits, _ or -)")
    if TokenFile(name, "").forget():
        sys.stdout.write(f"logged out of {name}: its tokens are deleted\n")
    else:
        sys.stdout.write(f"there were no tokens stored for {name}\n")
    return 0


def list_servers(workspace: Path, as_json: bool) -> int:
    config = load_config(workspace)
    rows = asyncio.run(survey(config, workspace))
    rows += [
        {
            "name": name,
            "state": "waiting for trust",
            "tools": [],
            "resources": [],
            "prompts": [],
            "error": "declared by an untrusted workspace: `agentcli trust` lets it start",
        }
        for name in ignored_servers(config)
    ]
    if as_json:
        sys.stdout.write(visible_json({"servers": rows}, indent=2) + "\n")
        return 0
    if not rows:
        sys.stdout.write("no MCP servers configured; add one: agentcli mcp add NAME -- COMMAND\n")
    for row in rows:
        sys.stdout.write(_text(row))
    return 0


def _text(row: dict[str, Any]) -> str:
    """A server's row: every field may come from the server or a config file (one_line)."""
    head = f"{one_line(row['name'])}  {row['state']}"
    if row.get("target"):
        head += f"  {row['transport']}: {one_line(row['target'])}"
    lines = [head + (f"  ({one_line(row['server'])})" if row.get("server") else "")]
    if row.get("sandbox"):
        how = "chosen" if row.get("sandboxChosen") else "the default: none chosen"
        lines.append(f"  sandbox: {row['sandbox']} ({how})")
    lines += [f"  {one_line(line)}" for line in row.get("suggestions", [])]
    if row.get("error"):
        lines.append(f"  error: {one_line(row['error'])}")
    if row["tools"]:
        tools = ", ".join(f"{one_line(t['name'])} ({t['risk']})" for t in row["tools"])
        lines.append(f"  tools: {tools}")
    if row["resources"]:
        uris = ", ".join(one_line(r["uri"]) for r in row["resources"])
        lines.append(f"  resources: {uris}")
    if row["prompts"]:
        lines.append(f"  prompts: {', '.join(one_line(p) for p in row['prompts'])}")
    return "\n".join(lines) + "\n"


async def survey(config: Any, workspace: Path) -> list[dict[str, Any]]:
    """Starts every server at once, asks what it offers, and stops them all."""
    from agentcli.mcp import mcp_sources
    from agentcli.mcp.server import McpServer

    sources = mcp_sources(config, workspace)
    await asyncio.gather(*(source.start() for source in sources))
    rows = []
    try:
        for server in servers_of(config):
            source = next((s for s in sources if getattr(s, "config", None) == server), None)
            row: dict[str, Any] = {
                "name": server.name,
                "transport": server.transport,
                "target": server.shown(),
                "trusted": server.trusted,
                "tools": [],
                "resources": [],
                "prompts": [],
            }
            if not isinstance(source, McpServer):  # the SDK is not installed
                row.update(state="failed", error=sources[0].problems[0])
                rows.append(row)
                continue
            row.update(state=source.state, server=source.server_info, error=source.error)
            if source.http_transport == "sse":
                row["transport"] = "sse"
            if source.profile is not None:
                row["sandbox"] = source.profile
                row["sandboxChosen"] = server.sandbox is not None
            if server.sandbox is None and source.profile is not None:
                from agentcli.mcp.reach import add_suggestions

                row["suggestions"] = add_suggestions(server, source.open_world)
            row["tools"] = [
                {"name": t.name, "risk": t.risk_summary, "description": t.description}
                for t in source.tools()
            ]
            try:
                row["resources"] = await source.resources()
            except Exception as error:  # a server's failure is its row's, not the command's
                row["error"] = f"listing resources failed: {error}"
            row["prompts"] = [prompt.name for prompt in source.prompts]
            rows.append(row)
    finally:
        await asyncio.gather(*(source.close() for source in sources))
    return rows


def tool_rows(config: Any, workspace: Path) -> tuple[list[dict[str, Any]], list[str]]:
    """For `agentcli tools list`: the configured MCP servers' tools (the servers started,
    asked and stopped), and a line for each server whose tools are absent, saying why."""
    if not servers_of(config):
        return [], []
    rows, absent = [], []
    for server in asyncio.run(survey(config, workspace)):
        source = f"mcp:{server['name']}"
        rows += [{**tool, "source": source, "state": server["state"]} for tool in server["tools"]]
        if server["resources"]:
            rows.append(
                {
                    "name": "mcp_read_resource",
                    "risk": "low" if server["trusted"] else "high",
                    "source": source,
                    "state": server["state"],
                    "description": f"read a resource of {server['name']}",
                }
            )
        if server["state"] != "running":
            why = one_line(server.get("error") or "no tools")
            absent.append(f"{source}: {server['state']}: {why}")
    absent += [
        f"mcp:{name}: waiting for trust (`agentcli trust`)" for name in ignored_servers(config)
    ]
    return rows, absent
