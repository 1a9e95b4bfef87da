"""`agentcli serve`: settings and safety checks, then the AG-UI server."""

from __future__ import annotations

import os
import sys

from agentcli.errors import UsageError


def serve_command(
    host: str,
    port: int,
    token_env: str | None,
    cors_origins: list[str],
    flags: dict,
    no_token: bool = False,
    store: str | None = None,
) -> int:
    """A token by default (generated and printed, as notebook servers do): a page on any
    site can POST to loopback. `--no-token` opts out, on loopback only and never with
    --yes, where one request could run every tool."""
    from agentcli.agui.server import ServeOptions, is_loopback, serve
    from agentcli.assembly import resolve_settings

    if store is not None:  # before anything else: a password in argv is said at once
        thread_store_url(store, None)
    if not 0 < port < 65536:
        raise UsageError(f"--port must be between 1 and 65535, not {port}")
    if no_token and token_env is not None:
        raise UsageError("--no-token and --token-env contradict each other; pass one of them")
    token, generated = None, False
    if token_env is not None:
        token = os.environ.get(token_env, "").strip()
        if not token:
            raise UsageError(f"--token-env {token_env}: that environment variable is empty")
    elif not no_token:
        import secrets

        token, generated = secrets.token_urlsafe(24), True
    if not is_loopback(host) and token is None:
        raise UsageError(
            f"--host {host} is reachable from other machines: --no-token is for loopback "
            "only; drop it, or pass --token-env NAME"
        )
    unguarded = UsageError(
        "serve --yes without a token would let any request (a web page's included) run "
        "every tool; drop --no-token"
    )
    if flags.get("yes") and token is None:
        raise unguarded
    settings = resolve_settings(output="jsonl", **flags)
    if settings.yes and token is None:  # policy.yes in the configuration
        raise unguarded
    for warning in settings.config.warnings:
        sys.stderr.write(f"agentcli: warning: {warning}\n")
    options = ServeOptions(
        settings,
        token=token,
        cors_origins=list(cors_origins),
        host=host,
        token_generated=generated,
        store=thread_store_url(store, settings.config.get("serve.store")),
        lease_seconds=float(settings.config.get("serve.lease_seconds")),
    )
    return serve(options, host, port)


def thread_store_url(flag: str | None, configured: str | None) -> str | None:
    """--store, else `serve.store`: a PostgreSQL URL without a password, or None (the
    sessions directory). `jsonl` names the sessions directory explicitly."""
    value, where = (flag, "--store") if flag is not None else (configured, "serve.store")
    if value is None or value == "jsonl":
        return None
    from agentcli.sessions.postgres import store_url

    return store_url(value, where)
