"""MCP floods: 100,000 progress notifications, 100,000 log messages, and one 70 MB result
line, each through agentcli's MCP client (agentcli.mcp.server.McpServer) against the hand-
written flood server (tests/fixtures/mcp/flood_server.py). Prints how long each took, how
many events reached the session (the lines it would record), and the rate.

    python bench/mcp_floods.py                 # 100k each, a 70 MB line, a 10 MB line
    python bench/mcp_floods.py --count 20000 --megabytes 10

Targets (issue 40): events bounded (a few a second, not one per notification), and a
10 MB line read in well under a second, time linear in the line's size."""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SERVER = ROOT / "tests" / "fixtures" / "mcp" / "flood_server.py"


async def one(tool: str, args: dict, log_level: str = "warning") -> tuple[float, int, int]:
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
            "flood",
            {
                "command": sys.executable,
                "args": [str(SERVER)],
                "tool_timeout": 600,
                "log_level": log_level,
            },
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


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--count", type=int, default=100_000)
    parser.add_argument("--megabytes", type=int, default=70)
    options = parser.parse_args()
    count, size = options.count, options.megabytes * 1_000_000
    progress_events = 0
    print(f"{'case':<34}{'seconds':>9}{'events':>9}{'per second':>14}")
    for tool, label in (("progress", "progress notifications"), ("logs", "log messages")):
        took, events, _ = asyncio.run(one(tool, {"count": count}))
        progress_events = events if tool == "progress" else progress_events
        print(f"{f'{count:,} {label}':<34}{took:>9.2f}{events:>9,}{count / took:>14,.0f}")
    for megabytes in sorted({10, options.megabytes}):
        took, _, shown = asyncio.run(one("big", {"size": megabytes * 1_000_000}))
        rate = megabytes / took
        print(f"{f'a {megabytes} MB result line':<34}{took:>9.2f}{'':>9}{rate:>11,.0f} MB")
    print(f"(a {size // 1_000_000} MB line: the model got {shown:,} characters, capped)")
    print(f"progress events per notification: {progress_events / count:.5f}")


if __name__ == "__main__":
    main()
