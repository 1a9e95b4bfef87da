"""MCP floods: 100,000 progress notifications, 100,000 log messages, and one 70 MB result
line, each through agentcli's MCP client (agentcli.mcp.server.McpServer) against the hand-
written flood server (tests/fixtures/mcp/flood_server.py), over stdio, streamable HTTP or
the legacy HTTP+SSE transport. Prints how long each took, how many events reached the
session (the lines it would record), and the rate.

    python bench/mcp_floods.py                      # stdio: 100k each, a 70 MB and a 10 MB line
    python bench/mcp_floods.py --transport all      # stdio, then streamable HTTP, then SSE
    python bench/mcp_floods.py --transport http --count 20000 --megabytes 10

Targets (issue 40): events bounded (a few a second, not one per notification), and a
10 MB line read in well under a second, time linear in the line's size."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SERVER = ROOT / "tests" / "fixtures" / "mcp" / "flood_server.py"
TRANSPORTS = {"stdio": "stdio", "http": "streamable-http", "sse": "sse"}


@contextlib.contextmanager
def reached(transport: str) -> Iterator[dict]:
    """The server's configuration table: a command for stdio; for HTTP, the URL of a flood
    server started for the case (stopped after it)."""
    if transport == "stdio":
        yield {"command": sys.executable, "args": [str(SERVER)]}
        return
    process = subprocess.Popen(
        [sys.executable, str(SERVER), TRANSPORTS[transport]], stdout=subprocess.PIPE, text=True
    )
    try:
        assert process.stdout is not None
        line = process.stdout.readline()
        assert line.startswith("listening "), line
        yield {"url": line.split()[1], "transport": transport}
    finally:
        process.terminate()
        process.wait(timeout=10)


async def one(table: dict, tool: str, args: dict) -> tuple[float, int, int]:
    """(seconds the call took, events emitted, characters of the result)."""
    from agentcli.mcp.client_features import ClientHost
    from agentcli.mcp.config import parse_server
    from agentcli.mcp.server import McpServer
    from agentcli.tools.base import ToolContext
    from agentcli.workspace.root import Workspace

    events: list[object] = []
    with tempfile.TemporaryDirectory() as place:
        where = Path(place)
        host = ClientHost(roots=(place,), emit=events.append)
        config = parse_server(
            "flood", {**table, "tool_timeout": 600, "log_level": "warning", "trusted": True}
        )
        source = McpServer(config, where, asyncio.Lock(), where, None, host)
        await source.start()
        assert source.state == "running", source.error
        tools = {t.remote_name: t for t in source.tools()}
        context = ToolContext(Workspace(where), output_dir=where, progress=events.append)
        try:
            began = time.perf_counter()
            output = await source.call(tools[tool], args, context)
            took = time.perf_counter() - began
        finally:
            await source.close()
        return took, len(events), len(output.content)


def cases(transport: str, count: int, megabytes: int) -> None:
    print(f"{transport}:")
    progress_events = shown = 0
    for tool, label in (("progress", "progress notifications"), ("logs", "log messages")):
        with reached(transport) as table:
            took, events, _ = asyncio.run(one(table, tool, {"count": count}))
        progress_events = events if tool == "progress" else progress_events
        print(f"  {f'{count:,} {label}':<32}{took:>9.2f}{events:>9,}{count / took:>14,.0f}")
    took_by_size = {}
    for size in sorted({10, megabytes}):
        with reached(transport) as table:
            took, _, shown = asyncio.run(one(table, "big", {"size": size * 1_000_000}))
        took_by_size[size] = took
        print(f"  {f'a {size} MB result line':<32}{took:>9.2f}{'':>9}{size / took:>11,.0f} MB")
    print(f"  (a {megabytes} MB line: the model got {shown:,} characters, capped)")
    if megabytes != 10:
        ratio, linear = took_by_size[megabytes] / took_by_size[10], megabytes / 10
        said = f"linear: {linear:g}, quadratic: {linear**2:g}"
        print(f"  {megabytes} MB / 10 MB time: {ratio:.1f} ({said})")
    print(f"  progress events per notification: {progress_events / count:.5f}")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--count", type=int, default=100_000)
    parser.add_argument("--megabytes", type=int, default=70)
    parser.add_argument("--transport", choices=[*TRANSPORTS, "all"], default="stdio")
    options = parser.parse_args()
    chosen = list(TRANSPORTS) if options.transport == "all" else [options.transport]
    print(f"  {'case':<32}{'seconds':>9}{'events':>9}{'per second':>14}")
    for transport in chosen:
        cases(transport, options.count, options.megabytes)


if __name__ == "__main__":
    main()
