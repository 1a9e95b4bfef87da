"""The tools of one `agentcli.tools` plug-in, as a tool source: its entry point loaded when
the session starts, its `register_tools(register)` given the registry's registrar."""

from __future__ import annotations

from typing import Any

from agentcli.plugins import TOOLS_GROUP, entry_points, once, origin
from agentcli.tools.registry import ToolRegistrar
from agentcli.tools.source import StaticSource


class PluginSource(StaticSource):
    """The tools of one `agentcli.tools` entry point."""

    def __init__(self, entry: Any) -> None:
        super().__init__(f"plugin:{entry.name}", kind="plugin")
        self.entry = entry
        self.origin = origin(entry)
        self.state = "not loaded"  # loaded | failed
        self.error: str | None = None

    def load(self) -> None:
        if self.state != "not loaded":
            return
        tools, error = _registered(self.entry)
        if error is not None:
            self.state, self.error = "failed", error
            self.problems.append(
                f"plug-in {self.entry.name} ({self.origin}) could not be loaded: {self.error}; "
                "skipped"
            )
            return
        for tool in tools:
            self.add(tool)
        self.state = "loaded"

    async def start(self) -> None:
        self.load()


def _registered(entry: Any) -> tuple[list[Any], str | None]:
    """What the entry point registered, or why it failed (loaded once for a process that
    keeps its plug-ins: agentcli.plugins.once)."""
    return once(("tool plug-in", entry.name, entry.value), lambda: _register(entry))


def _register(entry: Any) -> tuple[list[Any], str | None]:
    registrar = ToolRegistrar(f"plugin:{entry.name}")
    error = None
    try:
        module = entry.load()
        register_tools = getattr(module, "register_tools", None)
        if not callable(register_tools):
            raise TypeError(f"{entry.value} has no register_tools(register) function")
        register_tools(registrar)
    except Exception as failure:  # whatever a plug-in does wrong, the rest goes on
        error = f"{type(failure).__name__}: {failure}"
    return (registrar.tools if error is None else [], error)


def plugin_sources() -> list[PluginSource]:
    return [PluginSource(entry) for entry in entry_points(TOOLS_GROUP)]
