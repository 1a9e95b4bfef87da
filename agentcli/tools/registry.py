"""The one registry every tool enters through: built-ins now; config, MCP and plugins later."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

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
    from agentcli.tools.ask_user import AskUser
    from agentcli.tools.calculator import Calculator
    from agentcli.tools.files import CreateDirectory, EditFile, ListDirectory, ReadFile, WriteFile
    from agentcli.tools.search import SearchContent, SearchFiles
    from agentcli.tools.shell import JobKill, JobOutput, RunPython, RunShell
    from agentcli.tools.system_info import SystemInfo
    from agentcli.tools.web import FetchUrl

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
            FetchUrl(),
            Calculator(),
            SystemInfo(),
            AskUser(),
        ]
    )


def provider_tools(provider: Any) -> list[Tool]:
    """The provider-defined tools the user enabled for this provider (`client_tools`)."""
    from agentcli.errors import ConfigError
    from agentcli.tools.provider_defined import PROVIDER_TOOLS

    tools = []
    for name in provider.options.get("client_tools", []):
        if provider.type != "anthropic" or name not in PROVIDER_TOOLS:
            raise ConfigError(
                f"providers.{provider.name}.client_tools: {name!r} is not a tool this provider "
                f"defines (Anthropic: {', '.join(PROVIDER_TOOLS)})"
            )
        tools.append(PROVIDER_TOOLS[name]())
    return tools


def build_registry(config: Any, provider: Any) -> ToolRegistry:
    """The run's tools: built-ins, the provider-defined tools the user enabled for this
    provider, and command tools from the configuration (through the dynamic-tool path)."""
    from agentcli.errors import ConfigError
    from agentcli.tools.dynamic import DynamicToolError, command_tool_specs, register_dynamic
    from agentcli.tools.web import WebSearch

    registry = builtin_tools()
    if provider is None or not provider.options.get("web_search"):
        # (when the provider runs its own web search, a second tool of that name would clash)
        registry.add(WebSearch(config.table("web_search")))
    for tool in provider_tools(provider) if provider is not None else []:
        registry.add(tool)
    try:
        for spec in command_tool_specs(config.table("tools"), "config"):
            register_dynamic(registry, spec)
    except DynamicToolError as error:
        raise ConfigError(str(error)) from None
    return registry
