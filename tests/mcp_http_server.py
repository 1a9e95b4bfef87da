"""An MCP server over HTTP for transport tests, built on the SDK's MCPServer.

    python tests/mcp_http_server.py sse                # the legacy HTTP+SSE transport
    python tests/mcp_http_server.py streamable-http    # streamable HTTP at /mcp

It listens on 127.0.0.1 at a port the OS picks and prints `listening URL` (the URL a client
is given) on stdout. Tools: `add`."""

from __future__ import annotations

import argparse
import asyncio
import socket
import sys
from typing import Any


def build(transport: str) -> Any:
    from mcp.server.mcpserver import MCPServer

    server = MCPServer("http-fixture")

    @server.tool()
    def add(a: int, b: int) -> str:
        """Adds two numbers."""
        return str(a + b)

    if transport == "sse":
        return server.sse_app(host="127.0.0.1"), "/sse"
    return server.streamable_http_app(host="127.0.0.1"), "/mcp"


async def serve(app: Any, sock: socket.socket) -> None:
    import uvicorn

    config = uvicorn.Config(app, log_level="warning", lifespan="on")
    await uvicorn.Server(config).serve(sockets=[sock])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("transport", choices=["sse", "streamable-http"])
    options = parser.parse_args()
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(16)
    base = f"http://127.0.0.1:{sock.getsockname()[1]}"
    app, path = build(options.transport)
    print(f"listening {base}{path}", flush=True)
    asyncio.run(serve(app, sock))


if __name__ == "__main__":
    sys.exit(main())
