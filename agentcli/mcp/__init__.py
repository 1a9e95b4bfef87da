"""MCP (Model Context Protocol) servers as tool sources. The `mcp` SDK is imported only
when a server is configured (it is the `agentcli[mcp]` extra)."""

from __future__ import annotations

import asyncio
import importlib.util
from pathlib import Path
from typing import Any

from agentcli.tools.source import StaticSource, ToolSource


def mcp_sources(config: Any, workspace: Path, sandbox: Any = None) -> list[ToolSource]:
    """One source per configured server; none started yet. `sandbox`: the session's
    (agentcli.sandbox.confine.Sandbox), in which stdio servers run; None: one of their own."""
    from agentcli.mcp.config import servers_of

    servers = servers_of(config)
    if not servers:
        return []
    if importlib.util.find_spec("mcp") is None:
        from agentcli.install_source import extra_install_command

        missing = StaticSource("mcp", kind="mcp")
        names = ", ".join(s.name for s in servers)
        missing.problems.append(
            f"MCP servers {names} need the mcp package, which is not installed: "
            + extra_install_command("mcp")
        )
        return [missing]
    from agentcli.mcp.client_features import ClientHost, roots_of
    from agentcli.mcp.server import McpServer
    from agentcli.paths import data_dir

    if sandbox is None:
        from agentcli.sandbox.confine import Sandbox, sandbox_settings

        sandbox = Sandbox(workspace, sandbox_settings(config, None, False))
    lock = asyncio.Lock()  # spawns one at a time, each so quick that starts still overlap
    logs = data_dir() / "mcp"
    from agentcli.mcp.resources import ResourceSource

    host = ClientHost(roots=roots_of(workspace, sandbox))  # the session binds the rest
    started = [McpServer(server, workspace, lock, logs, sandbox, host) for server in servers]
    return [*started, ResourceSource(started)]  # mcp_read_resource, over their resources
