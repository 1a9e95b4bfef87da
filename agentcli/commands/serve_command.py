"""`agentcli serve`: settings and safety checks, then the AG-UI server."""

from __future__ import annotations

import os
import sys

from agentcli.errors import UsageError


def serve_command(
    host: str, port: int, token_env: str | None, cors_origins: list[str], flags: dict
) -> int:
    from agentcli.agui.server import ServeOptions, is_loopback, serve
    from agentcli.settings import resolve_settings

    if not 0 < port < 65536:
        raise UsageError(f"--port must be between 1 and 65535, not {port}")
    token = None
    if token_env is not None:
        token = os.environ.get(token_env, "").strip()
        if not token:
            raise UsageError(f"--token-env {token_env}: that environment variable is empty")
    if not is_loopback(host) and token is None:
        raise UsageError(
            f"--host {host} is reachable from other machines: also pass --token-env NAME "
            "(an environment variable holding a bearer token clients must send)"
        )
    settings = resolve_settings(output="jsonl", **flags)
    for warning in settings.config.warnings:
        sys.stderr.write(f"agentcli: warning: {warning}\n")
    options = ServeOptions(settings, token=token, cors_origins=list(cors_origins))
    return serve(options, host, port)
