"""A session's tools, put together from every source: the built-ins, the provider's tools,
the configuration's command tools, plug-ins and MCP servers. The parts (`tools`, `mcp`,
`plugins`, `providers`) know nothing of each other's assembly; everything here points down."""

from __future__ import annotations

from typing import Any

from agentcli.tools.base import Tool
from agentcli.tools.registry import ToolRegistrar, ToolRegistry


def builtin_tools() -> ToolRegistry:
    from agentcli.tools.builtin import register_tools

    register = ToolRegistrar("builtin", check=False)
    register_tools(register)
    return ToolRegistry(register.tools)


def provider_tools(provider: Any) -> list[Tool]:
    """The provider-defined tools the user enabled for this provider (`client_tools`)."""
    from agentcli.errors import ConfigError
    from agentcli.providers.table import provider_spec
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
    from agentcli.tools.dynamic import DynamicToolError, command_tool_specs
    from agentcli.tools.web import WebSearch

    registry = builtin_tools()
    if provider is None or not provider.options.get("web_search"):
        # (when the provider runs its own web search, a second tool of that name would clash)
        registry.add(WebSearch(config.table("web_search")))
    for tool in provider_tools(provider) if provider is not None else []:
        registry.add(tool)
    try:
        for spec in command_tool_specs(config.table("tools"), "config"):
            registry.add_dynamic(spec)
    except DynamicToolError as error:
        raise ConfigError(str(error)) from None
    return registry


def add_extensions(
    registry: ToolRegistry, config: Any, workspace: Any, sandbox: Any = None
) -> None:
    """Sources that list their tools at run time: plug-ins, then MCP servers (`sandbox`:
    the session's, which confines stdio servers as it does commands)."""
    from agentcli.mcp import mcp_sources
    from agentcli.tools.plugin_source import plugin_sources

    for plugin in plugin_sources():
        registry.add_source(plugin)

    for source in mcp_sources(config, workspace.root, sandbox):
        registry.add_source(source)


def session_registry(
    config: Any, provider: Any, workspace: Any, sandbox: Any = None
) -> ToolRegistry:
    """A session's tools: the built registry with plug-ins and MCP servers, started now
    (in the background: MCP servers take a while)."""
    from agentcli.assembly.subagents import task_tool

    registry = build_registry(config, provider)
    task = task_tool(config, workspace.root)
    if task is not None:
        registry.add(task)
    add_extensions(registry, config, workspace, sandbox)
    registry.start()
    return registry
