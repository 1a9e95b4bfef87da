"""Plug-ins through Python entry points (`llm`'s pattern), loaded only when a session or a
command needs them, never for `--version` or `--help`.

Group `agentcli.tools`: the entry point names a module with `register_tools(register)`;
`register(fn, *, name=None, risk="medium", examples=None)` turns a typed function with a
docstring into a tool (an agentcli Tool instance is taken as it is). The built-in tools
are registered through the same hook (agentcli.tools.builtin).
Group `agentcli.providers`: `register_providers(register)`, where
`register(type, factory, *, default_model="")` adds a provider type usable as
`[providers.NAME] type = "TYPE"`; `factory(settings)` returns the Provider
(`register(spec)` with an agentcli.providers.spec.ProviderSpec says more, as the built-ins
do: agentcli.providers.builtin registers them through the same hook).

A plug-in that fails to import or register is reported once and skipped."""

from __future__ import annotations

from typing import Any

TOOLS_GROUP = "agentcli.tools"
PROVIDERS_GROUP = "agentcli.providers"


def entry_points(group: str) -> list[Any]:
    from agentcli.plugins.discovery import entry_points  # cached: see there

    return entry_points(group)


def origin(entry: Any) -> str:
    dist = getattr(entry, "dist", None)
    return f"{dist.name} {dist.version}" if dist is not None else entry.value
