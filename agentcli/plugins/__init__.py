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

A plug-in that fails to import or register is reported once and skipped.

A long-lived process (`agentcli serve`) finds and loads its plug-ins once (`keep_found`),
not for each run: plug-ins installed or removed while it runs are seen after a restart."""

from __future__ import annotations

from typing import Any

TOOLS_GROUP = "agentcli.tools"
PROVIDERS_GROUP = "agentcli.providers"


# The process's entry points by group, once `keep_found` was called; None: each caller
# asks the discovery (which is cached on disk, but still reads the cache).
_found: dict[str, list[Any]] | None = None


def keep_found() -> None:
    """From now on, this process's plug-ins are the ones found first (see `kept`)."""
    global _found
    if _found is None:
        _found = {}


def kept() -> bool:
    """Whether plug-ins are found once for this process: what was loaded of them may be
    kept too (agentcli.tools.plugin_source, agentcli.providers.table)."""
    return _found is not None


def entry_points(group: str) -> list[Any]:
    from agentcli.plugins.discovery import entry_points  # cached: see there

    if _found is None:
        return entry_points(group)
    if group not in _found:
        _found[group] = entry_points(group)
    return list(_found[group])


def origin(entry: Any) -> str:
    dist = getattr(entry, "dist", None)
    return f"{dist.name} {dist.version}" if dist is not None else entry.value
