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

from collections.abc import Callable
from typing import Any, TypeVar

TOOLS_GROUP = "agentcli.tools"
PROVIDERS_GROUP = "agentcli.providers"
T = TypeVar("T")


# What this process found and loaded of its plug-ins, once `keep_found` was called; None:
# each caller finds and loads them again (discovery is cached on disk, but still read).
_kept: dict[Any, Any] | None = None


def keep_found() -> None:
    """From now on, this process finds and loads each plug-in once (`agentcli serve`)."""
    global _kept
    if _kept is None:
        _kept = {}


def once(key: Any, make: Callable[[], T]) -> T:
    """`make()`, made once for the process under `key` when its plug-ins are kept, else
    each time (the entry points here, what they registered in agentcli.tools.plugin_source
    and agentcli.providers.table)."""
    if _kept is None:
        return make()
    if key not in _kept:
        _kept[key] = make()
    return _kept[key]


def entry_points(group: str) -> list[Any]:
    from agentcli.plugins import discovery  # cached: see there

    return list(once(("entry points", group), lambda: discovery.entry_points(group)))


def origin(entry: Any) -> str:
    dist = getattr(entry, "dist", None)
    return f"{dist.name} {dist.version}" if dist is not None else entry.value
