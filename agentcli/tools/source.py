"""A tool source: one place tools come from (the built-ins, the configuration's command
tools, a provider's own tools, one MCP server, one plug-in). A source is an async context
manager: it starts, lists its tools, calls them, may announce that its list changed, and
closes. The registry is the union of its sources."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Self

from agentcli.tools.base import Tool, ToolContext, ToolOutput


class ToolSource:
    """Subclasses set `name` and override what they need; the defaults fit a fixed list."""

    name: str = ""
    kind: str = "static"  # builtin | config | provider | mcp | plugin

    def __init__(self) -> None:
        self.changed = False  # set when the list changed: the registry re-lists before a step
        self.problems: list[str] = []  # what went wrong, each said once by whoever reads it

    async def __aenter__(self) -> Self:
        await self.start()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()

    async def start(self) -> None:
        """Connects or loads; a failure goes to `problems`, leaving the source empty."""

    def tools(self) -> list[Tool]:
        """The tools as last listed."""
        return []

    async def refresh(self) -> None:
        """Lists the tools again (after `changed` was set)."""
        self.changed = False

    async def call(self, tool: Tool, args: dict[str, Any], ctx: ToolContext) -> ToolOutput:
        return await tool.execute(args, ctx)

    async def close(self) -> None:
        """Stops whatever the source started (processes, connections)."""


class StaticSource(ToolSource):
    """A fixed list of tools, known without starting anything."""

    def __init__(self, name: str, tools: Iterable[Tool] = (), kind: str = "static") -> None:
        super().__init__()
        self.name = name
        self.kind = kind
        self._tools = list(tools)

    def add(self, tool: Tool) -> None:
        self._tools.append(tool)

    def tools(self) -> list[Tool]:
        return list(self._tools)
