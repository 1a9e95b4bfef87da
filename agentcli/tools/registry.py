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

    async def started(self) -> None:
        """Waits for the sources to start (a REPL command that needs an MCP server)."""
        import asyncio

        if self._starting is not None:
            await asyncio.shield(self._starting)

    async def _start_all(self) -> None:
        import asyncio

        results = await asyncio.gather(
            *(source.start() for source in self._sources), return_exceptions=True
        )
        for source, result in zip(self._sources, results, strict=True):
            if isinstance(result, Exception):  # a source's bug leaves it empty, not the run
                source.problems.append(f"{source.name} could not start: {result}")
        self._rebuild()

    async def restart(self, source: ToolSource) -> None:
        """Starts one source again (an MCP server after a login): its tools as it lists
        them now, for the next step (whose refresh reports its new problems)."""
        await self.started()
        await source.close()
        await source.start()
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

    def add_dynamic(self, spec: Any) -> Tool:
        """A tool made from a spec (agentcli.tools.dynamic.DynamicSpec: the configuration's
        command tools, MCP's), checked first; a name already taken is refused."""
        from agentcli.tools.dynamic import DynamicTool, DynamicToolError, check_spec

        check_spec(spec)
        if self.get(spec.name) is not None:
            raise DynamicToolError(f"a tool named {spec.name!r} already exists ({spec.source})")
        tool = DynamicTool(spec)
        self.add(tool)
        return tool

    def names(self) -> list[str]:
        return sorted(self._tools)

    def specs(self) -> list[dict[str, Any]]:
        return [tool.spec() for tool in self._tools.values()]

    def __iter__(self) -> Iterator[Tool]:
        return iter(list(self._tools.values()))

    def __len__(self) -> int:
        return len(self._tools)


class ToolRegistrar:
    """The `register` a plug-in's `register_tools` is given."""

    def __init__(self, source: str, *, check: bool = True) -> None:
        self.source = source
        self.check = check  # the built-ins' schemas are checked by the tests, not each run
        self.tools: list[Tool] = []

    def __call__(
        self,
        fn: Any,
        *,
        name: str | None = None,
        risk: str = "medium",
        examples: list[tuple[str, dict[str, Any]]] | None = None,
    ) -> Tool:
        if isinstance(fn, Tool):
            tool = fn
        else:
            from agentcli.tools.function_tool import FunctionTool

            tool = FunctionTool(fn, name=name, risk=risk, source=self.source, examples=examples)
        if self.check:
            self._check(tool)
        self.tools.append(tool)
        return tool

    def _check(self, tool: Tool) -> None:
        from agentcli.tools.dynamic import DynamicSpec, DynamicToolError, check_spec

        try:
            check_spec(
                DynamicSpec(
                    tool.name, tool.description, tool.parameters, None, self.source, tool.execute
                )
            )
        except DynamicToolError as error:
            from agentcli.tools.function_tool import PluginError

            raise PluginError(str(error)) from None
