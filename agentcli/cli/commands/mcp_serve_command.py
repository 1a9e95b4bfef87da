"""`agentcli mcp serve`: settings and safety checks, then the MCP server lending the tools
(agentcli.mcp_serve) on stdio, or on streamable HTTP at 127.0.0.1 with a bearer token."""

from __future__ import annotations

import os
import sys
from typing import Any

from agentcli.errors import UsageError


def mcp_serve_command(
    flags: dict[str, Any], *, http: int | None, token_env: str | None, configured: bool
) -> int:
    """A token always over HTTP (made and printed on stderr, or read from `token_env`): a
    web page can POST to loopback, and a process of another user can connect to it."""
    from agentcli.assembly import resolve_settings

    if http is not None and not 0 < http < 65536:
        raise UsageError(f"--http must be a port between 1 and 65535, not {http}")
    if token_env is not None and http is None:
        raise UsageError("--token-env is for --http PORT; stdio needs no token")
    token, generated = None, False
    if http is not None and token_env is not None:
        token = os.environ.get(token_env, "").strip()
        if not token:
            raise UsageError(f"--token-env {token_env}: that environment variable is empty")
    elif http is not None:
        import secrets

        token, generated = secrets.token_urlsafe(24), True
    defaults = {"model": None, "base_url": None, "system": None, "max_steps": None}
    settings = resolve_settings(**defaults, timeout=None, output="jsonl", **flags)
    for warning in settings.config.warnings:
        sys.stderr.write(f"agentcli: warning: {warning}\n")
    from agentcli.mcp_serve.server import LendOptions

    options = LendOptions(settings, configured=configured)
    if http is None:
        import asyncio

        from agentcli.mcp_serve.server import serve_stdio

        asyncio.run(serve_stdio(options))
        return 0
    from agentcli.mcp_serve.endpoint import serve_http

    return serve_http(options, port=http, token=token, token_generated=generated)
