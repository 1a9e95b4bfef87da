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

from typing import TYPE_CHECKING, Any

from agentcli.tools.base import Tool
from agentcli.tools.source import StaticSource

if TYPE_CHECKING:
    from agentcli.providers.spec import ProviderSpec

TOOLS_GROUP = "agentcli.tools"
PROVIDERS_GROUP = "agentcli.providers"


def _entry_points(group: str) -> list[Any]:
    from agentcli.plugins.discovery import entry_points  # cached: see there

    return entry_points(group)


def _origin(entry: Any) -> str:
    dist = getattr(entry, "dist", None)
    return f"{dist.name} {dist.version}" if dist is not None else entry.value


class ToolRegistrar:
    """The `register` a plug-in's `register_tools` is given."""

    def __init__(self, source: str, *, check: bool = True) -> None:
        self.source = source
        self.check = check  # the built-ins' schemas are checked by the tests, not each run
        self.tools: list[Tool] = []

    def __call__(self, fn: Any, *, name: str | None = None, risk: str = "medium",
                 examples: list[tuple[str, dict[str, Any]]] | None = None) -> Tool:  # fmt: skip
        if isinstance(fn, Tool):
            tool = fn
        else:
            from agentcli.plugins.function_tool import FunctionTool

            tool = FunctionTool(fn, name=name, risk=risk, source=self.source, examples=examples)
        if self.check:
            self._check(tool)
        self.tools.append(tool)
        return tool

    def _check(self, tool: Tool) -> None:
        from agentcli.tools.dynamic import DynamicSpec, DynamicToolError, check_spec

        try:
            check_spec(DynamicSpec(tool.name, tool.description, tool.parameters, None,
                                   self.source, tool.execute))  # fmt: skip
        except DynamicToolError as error:
            from agentcli.plugins.function_tool import PluginError

            raise PluginError(str(error)) from None


class PluginSource(StaticSource):
    """The tools of one `agentcli.tools` entry point."""

    def __init__(self, entry: Any) -> None:
        super().__init__(f"plugin:{entry.name}", kind="plugin")
        self.entry = entry
        self.origin = _origin(entry)
        self.state = "not loaded"  # loaded | failed
        self.error: str | None = None

    def load(self) -> None:
        if self.state != "not loaded":
            return
        registrar = ToolRegistrar(self.name)
        try:
            module = self.entry.load()
            register_tools = getattr(module, "register_tools", None)
            if not callable(register_tools):
                raise TypeError(f"{self.entry.value} has no register_tools(register) function")
            register_tools(registrar)
        except Exception as error:  # whatever a plug-in does wrong, the rest goes on
            self.state, self.error = "failed", f"{type(error).__name__}: {error}"
            self.problems.append(
                f"plug-in {self.entry.name} ({self.origin}) could not be loaded: {self.error}; "
                "skipped"
            )
            return
        for tool in registrar.tools:
            self.add(tool)
        self.state = "loaded"

    async def start(self) -> None:
        self.load()


def plugin_sources() -> list[PluginSource]:
    return [PluginSource(entry) for entry in _entry_points(TOOLS_GROUP)]


def provider_plugins() -> tuple[dict[str, ProviderSpec], list[str]]:
    """Provider types from `agentcli.providers` plug-ins, and what went wrong loading them."""
    from agentcli.providers.spec import ProviderRegistrar

    found: dict[str, ProviderSpec] = {}
    problems = []
    for entry in _entry_points(PROVIDERS_GROUP):
        registrar = ProviderRegistrar(_origin(entry))
        try:
            entry.load().register_providers(registrar)
        except Exception as error:
            problems.append(
                f"plug-in {entry.name} ({registrar.origin}) could not be loaded: "
                f"{type(error).__name__}: {error}; skipped"
            )
        for kind, spec in registrar.specs.items():  # what it registered before it failed too
            found.setdefault(kind, spec)
    return found, problems
