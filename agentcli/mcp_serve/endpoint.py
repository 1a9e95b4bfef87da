"""`mcp serve --http PORT`: the SDK's streamable HTTP transport at
http://127.0.0.1:PORT/mcp, behind the checks `agentcli serve` makes (agentcli.http_guard):
a bearer token on every request, a Host that is this machine's (DNS rebinding), no
foreign Origin (a web page's request). Loopback only: the tools reach this machine's
files."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from typing import Any

from agentcli.errors import UsageError
from agentcli.http_guard import Rejected, check_bearer, check_browser
from agentcli.mcp_serve.server import Lender, LendOptions, mcp_server

HOST = "127.0.0.1"
PATH = "/mcp"


class Guarded:
    """The MCP endpoint, answering only requests that pass the checks."""

    def __init__(self, app: Any, token: str) -> None:
        self.app = app
        self.token = token

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        from starlette.datastructures import Headers
        from starlette.responses import JSONResponse

        headers = Headers(scope=scope)
        try:
            check_browser(headers, listen_host=HOST, cors_origins=())
            check_bearer(headers, self.token)
        except Rejected as rejected:
            response = JSONResponse({"error": str(rejected)}, status_code=rejected.status)
            await response(scope, receive, send)
            return
        await self.app(scope, receive, send)


def build_app(options: LendOptions, *, port: int, token: str) -> Any:
    from mcp.server.streamable_http_manager import (
        StreamableHTTPASGIApp,
        StreamableHTTPSessionManager,
    )
    from mcp.server.transport_security import TransportSecuritySettings
    from starlette.applications import Starlette
    from starlette.routing import Route

    lender = Lender(options)
    names = (f"{HOST}:{port}", f"localhost:{port}", f"[::1]:{port}")
    manager = StreamableHTTPSessionManager(
        app=mcp_server(lender),
        # The SDK's own Host and Origin checks, behind ours: the same rule twice.
        security_settings=TransportSecuritySettings(
            enable_dns_rebinding_protection=True,
            allowed_hosts=list(names),
            allowed_origins=[f"http://{name}" for name in names],
        ),
    )

    @contextlib.asynccontextmanager
    async def lifespan(app: Any) -> AsyncIterator[None]:
        await lender.open()
        try:
            async with manager.run():
                yield
        finally:
            await lender.aclose()

    guarded = Guarded(StreamableHTTPASGIApp(manager), token)
    return Starlette(routes=[Route(PATH, endpoint=guarded)], lifespan=lifespan)


def serve_http(options: LendOptions, *, port: int, token: str, token_generated: bool) -> int:
    """Runs the endpoint until SIGINT/SIGTERM."""
    import sys

    try:
        import uvicorn
    except ImportError:
        from agentcli.install_source import extra_install_command

        raise UsageError(
            "agentcli mcp serve --http needs the serve extra: " + extra_install_command("serve")
        ) from None
    import socket

    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:  # bound before anything starts: a port in use is one line, and nothing ran
        listener.bind((HOST, port))
    except OSError as error:
        listener.close()
        raise UsageError(
            f"--http {port}: cannot listen on {HOST}:{port}: {error.strerror}"
        ) from None
    app = build_app(options, port=port, token=token)
    sys.stderr.write(f"agentcli: serving MCP on http://{HOST}:{port}{PATH} (Ctrl-C stops)\n")
    if token_generated:
        sys.stderr.write(
            f"agentcli: token: {token} (clients send Authorization: Bearer TOKEN; "
            "--token-env NAME chooses it)\n"
        )
    sys.stderr.flush()
    config = uvicorn.Config(
        app, host=HOST, port=port, log_level="warning", access_log=False, lifespan="on"
    )
    uvicorn.Server(config).run(sockets=[listener])
    return 0
