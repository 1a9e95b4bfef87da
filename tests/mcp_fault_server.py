"""An MCP stdio server for fault tests, built on the SDK's MCPServer (FastMCP's successor):
large structured results, plain values FastMCP-style, a call that never answers.

    python tests/mcp_fault_server.py            # the server
    python tests/mcp_fault_server.py --banner   # prints a line that is not JSON-RPC first
    python tests/mcp_fault_server.py --busy-banner  # ... then works 4 CPU seconds first
    python tests/mcp_fault_server.py --raw      # a hand-written server: `bytes` answers
                                                # with bytes that are not UTF-8, `described`
                                                # with text beside other structured content
"""

from __future__ import annotations

import asyncio
import json
import sys


def raw_server() -> None:
    """Just enough JSON-RPC by hand to send what the SDK would not."""
    banner()
    for line in sys.stdin.buffer:
        request = json.loads(line)
        if "id" not in request:
            continue  # a notification
        method = request["method"]
        if method == "initialize":
            result = {
                "protocolVersion": request["params"]["protocolVersion"],
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "raw", "version": "1"},
            }
        elif method == "tools/list":
            schema = {"type": "object"}
            result = {
                "tools": [
                    {"name": "bytes", "inputSchema": schema},
                    {"name": "described", "inputSchema": schema},
                ]
            }
        elif method == "tools/call" and request["params"]["name"] == "described":
            result = {
                "content": [{"type": "text", "text": "three items"}],
                "structuredContent": {"count": 3},
            }
        elif method == "tools/call":
            result = {"content": [{"type": "text", "text": "BYTES"}]}
        else:
            result = {}
        out = json.dumps({"jsonrpc": "2.0", "id": request["id"], "result": result}).encode()
        sys.stdout.buffer.write(out.replace(b"BYTES", b"caf\xe9 \xff\xfe") + b"\n")
        sys.stdout.buffer.flush()


def sdk_server() -> None:
    from mcp.server.mcpserver import MCPServer

    server = MCPServer("faults")

    @server.tool()
    def big(size: int) -> dict[str, str]:
        """A structured result of `size` characters."""
        return {"data": "x" * size}

    @server.tool()
    def plain(n: int) -> int:
        """A plain value: FastMCP-style servers send it as text and as {"result": n}."""
        return n

    @server.tool()
    def several(n: int) -> list[int]:
        """A list: one text block per item, and {"result": [...]}."""
        return list(range(n))

    @server.tool()
    async def nap(seconds: float) -> str:
        """Answers after `seconds`."""
        await asyncio.sleep(seconds)
        return "woke"

    banner()
    server.run()


def banner() -> None:
    """A line that is not JSON-RPC, printed as a server does when it is about to serve
    (after its imports: what the grace after such a line covers is the protocol's start,
    not how long a loaded machine takes to import the SDK)."""
    if "--banner" in sys.argv or "--busy-banner" in sys.argv:
        sys.stdout.write("starting the fault server...\n")
        sys.stdout.flush()
    if "--busy-banner" in sys.argv:
        # Then works for longer than the grace after such a line (CPU time, which passes
        # no faster than the clock, however loaded the machine): a slow import.
        import time

        while time.process_time() < 4.0:
            pass


if __name__ == "__main__":
    raw_server() if "--raw" in sys.argv else sdk_server()
