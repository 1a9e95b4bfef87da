"""The registry: the union of the tool sources (built-ins, provider-defined tools, command
tools from the configuration, plug-ins, MCP servers), read again before every model step.

Names are unique across sources. Sources known from the configuration alone (built-ins,
provider tools, command tools) are checked when the registry is built: a clash is a
configuration error. Sources that list their tools at run time (plug-ins, MCP servers)
come later in the order: on a clash the tool already there wins, and the one refused is
reported once."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Any

from agentcli.tools.base import Tool, ToolContext, ToolOutput
from agentcli.tools.source import StaticSource, ToolSource

if TYPE_CHECKING:
    import asyncio


class ToolRegistry:
    def __init__(self, tools: Iterable[Tool] = ()) -> None:
        self._sources: list[ToolSource] = []
        self._tools: dict[str, Tool] = {}
        self._owner: dict[str, ToolSource] = {}
        self._reported: set[str] = set()
        self._starting: asyncio.Task[None] | None = None
        for tool in tools:
            self.add(tool)

    # --- static tools, checked at once

    def add(self, tool: Tool) -> None:
        """Adds a tool known now to the static source named after `tool.source`."""
        if tool.name in self._tools:
            raise ValueError(f"a tool named {tool.name!r} is already registered")
        source = next(
            (s for s in self._sources if isinstance(s, StaticSource) and s.name == tool.source),
            None,
        )
        if source is None:
            source = StaticSource(tool.source)
            self._sources.append(source)
        source.add(tool)
        self._tools[tool.name] = tool
        self._owner[tool.name] = source

    # --- sources that list their tools at run time

    def add_source(self, source: ToolSource) -> None:
        self._sources.append(source)

    @property
    def sources(self) -> list[ToolSource]:
        return list(self._sources)

    def start(self) -> None:
        """Starts every source at once, in the background (MCP servers take a while):
        `refresh` waits for them before the first step."""
        import asyncio

        if self._starting is None:
            self._starting = asyncio.ensure_future(self._start_all())

    @property
    def starting(self) -> bool:
        return self._starting is not None and not self._starting.done()

    async def _start_all(self) -> None:
        import asyncio

        results = await asyncio.gather(
            *(source.start() for source in self._sources), return_exceptions=True
        )
        for source, result in zip(self._sources, results, strict=True):
            if isinstance(result, Exception):  # a source's bug leaves it empty, not the run
                source.problems.append(f"{source.name} could not start: {result}")
        self._rebuild()

    async def refresh(self) -> list[str]:
        """Waits for the sources to start, lists again those that changed, and returns
        the problems not reported before (a server that failed, a name clash)."""
        import asyncio

        if self._starting is not None:
            await asyncio.shield(self._starting)
        changed = [source for source in self._sources if source.changed]
        if changed:
            await asyncio.gather(*(source.refresh() for source in changed))
            self._rebuild()
        return self._new_problems()

    def _rebuild(self) -> None:
        tools: dict[str, Tool] = {}
        owner: dict[str, ToolSource] = {}
        for source in self._sources:
            for tool in source.tools():
                if tool.name in tools:
                    source.problems.append(
                        f"{tool.name} from {source.name} has the name of a tool from "
                        f"{owner[tool.name].name}; the first one is kept"
                    )
                    continue
                tools[tool.name] = tool
                owner[tool.name] = source
        self._tools, self._owner = tools, owner

    def _new_problems(self) -> list[str]:
        fresh = []
        for source in self._sources:
            for problem in source.problems:
                if problem not in self._reported:
                    self._reported.add(problem)
                    fresh.append(problem)
        return fresh

    async def call(self, tool: Tool, args: dict[str, Any], ctx: ToolContext) -> ToolOutput:
        source = self._owner.get(tool.name)
        if source is None:
            return await tool.execute(args, ctx)
        return await source.call(tool, args, ctx)

    async def aclose(self) -> None:
        """Closes every source (MCP servers: their whole process trees), all at once."""
        import asyncio

        if self._starting is not None and not self._starting.done():
            self._starting.cancel()
        await asyncio.gather(*(source.close() for source in self._sources), return_exceptions=True)

    # --- reading

    def get(self, name: str) -> Tool | None:
        return self._tools.get(name)

    def source_of(self, name: str) -> ToolSource | None:
        return self._owner.get(name)

    def names(self) -> list[str]:
        return sorted(self._tools)

    def specs(self) -> list[dict[str, Any]]:
        return [tool.spec() for tool in self._tools.values()]

    def __iter__(self) -> Iterator[Tool]:
        return iter(list(self._tools.values()))

    def __len__(self) -> int:
        return len(self._tools)


def builtin_tools() -> ToolRegistry:
    from agentcli.plugins import ToolRegistrar
    from agentcli.tools.builtin import register_tools

    register = ToolRegistrar("builtin", check=False)
    register_tools(register)
    return ToolRegistry(register.tools)


def provider_tools(provider: Any) -> list[Tool]:
    """The provider-defined tools the user enabled for this provider (`client_tools`)."""
    from agentcli.errors import ConfigError
    from agentcli.providers.spec import provider_spec
    from agentcli.tools.provider_defined import PROVIDER_TOOLS

    names = provider.options.get("client_tools", [])
    spec = provider_spec(provider.type) if names else None
    offered = spec.client_tools() if spec is not None and spec.client_tools else {}
    tools = []
    for name in names:
        if name not in offered:
            raise ConfigError(
                f"providers.{provider.name}.client_tools: {name!r} is not a tool this provider "
                f"defines (Anthropic: {', '.join(PROVIDER_TOOLS)})"
            )
        tools.append(offered[name]())
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


def add_extensions(
    registry: ToolRegistry, config: Any, workspace: Any, sandbox: Any = None
) -> None:
    """Sources that list their tools at run time: plug-ins, then MCP servers (`sandbox`:
    the session's, which confines stdio servers as it does commands)."""
    from agentcli.mcp import mcp_sources
    from agentcli.plugins import plugin_sources

    for plugin in plugin_sources():
        registry.add_source(plugin)

    for source in mcp_sources(config, workspace.root, sandbox):
        registry.add_source(source)


def session_registry(
    config: Any, provider: Any, workspace: Any, sandbox: Any = None
) -> ToolRegistry:
    """A session's tools: the built registry with plug-ins and MCP servers, started now
    (in the background: MCP servers take a while)."""
    registry = build_registry(config, provider)
    add_extensions(registry, config, workspace, sandbox)
    registry.start()
    return registry
