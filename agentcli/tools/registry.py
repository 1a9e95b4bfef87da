"""The one registry every tool enters through: built-ins now; config, MCP and plugins later."""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from agentcli.tools.base import Tool


class ToolRegistry:
    def __init__(self, tools: Iterable[Tool] = ()) -> None:
        self._tools: dict[str, Tool] = {}
        for tool in tools:
            self.add(tool)

    def add(self, tool: Tool) -> None:
        if tool.name in self._tools:
            raise ValueError(f"a tool named {tool.name!r} is already registered")
        self._tools[tool.name] = tool

    def get(self, name: str) -> Tool | None:
        return self._tools.get(name)

    def names(self) -> list[str]:
        return sorted(self._tools)

    def __iter__(self) -> Iterator[Tool]:
        return iter(self._tools.values())

    def __len__(self) -> int:
        return len(self._tools)


def builtin_tools() -> ToolRegistry:
    from agentcli.tools.files import CreateDirectory, EditFile, ListDirectory, ReadFile, WriteFile
    from agentcli.tools.search import SearchContent, SearchFiles
    from agentcli.tools.shell import JobKill, JobOutput, RunPython, RunShell

    return ToolRegistry(
        [
            ReadFile(),
            ListDirectory(),
            SearchFiles(),
            SearchContent(),
            CreateDirectory(),
            WriteFile(),
            EditFile(),
            RunShell(),
            RunPython(),
            JobOutput(),
            JobKill(),
        ]
    )
