"""The tool-source seam: the registry is the union of its sources, read again before every
step; names are unique (a clash is reported once, the first tool wins); results carry
content parts with a text rendering; a tool describes its call for the approval prompt."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from agentcli.agent.executor import Executor
from agentcli.conversation import events as ev
from agentcli.conversation.messages import ToolCall
from agentcli.policy.engine import Policy, Prompt
from agentcli.risk import ApprovalRequest, Assessment, Risk
from agentcli.tools.base import Tool, ToolContext, ToolOutput
from agentcli.tools.content import ImagePart, JsonPart, ResourceLinkPart, TextPart, render_text
from agentcli.tools.registry import ToolRegistry
from agentcli.tools.source import ToolSource
from agentcli.ui.approval_block import render_prompt
from agentcli.workspace.root import Workspace


class Echo(Tool):
    description = "echoes"
    parameters = {"type": "object", "properties": {"text": {"type": "string"}}}  # noqa: RUF012

    def __init__(self, name: str, source: str = "test") -> None:
        self.name = name
        self.source = source

    def assess(self, args: dict[str, Any], ctx: ToolContext) -> Assessment:
        return Assessment(Risk.LOW, "echoes")

    async def execute(self, args: dict[str, Any], ctx: ToolContext) -> ToolOutput:
        return ToolOutput(content=f"{self.name} from {self.source}: {args.get('text', '')}")


class Changing(ToolSource):
    """A source whose list changes when told, and which counts the calls it routes."""

    kind = "test"

    def __init__(self, name: str, tools: list[str]) -> None:
        super().__init__()
        self.name = name
        self.names = tools
        self.started = self.closed = self.calls = 0

    async def start(self) -> None:
        await asyncio.sleep(0.05)
        self.started += 1

    def tools(self) -> list[Tool]:
        return [Echo(n, self.name) for n in self.names] if self.started else []

    async def call(self, tool: Tool, args: dict[str, Any], ctx: ToolContext) -> ToolOutput:
        self.calls += 1
        return await tool.execute(args, ctx)

    async def close(self) -> None:
        self.closed += 1


def test_registry_is_the_union_read_after_start_and_after_a_change() -> None:
    async def scenario() -> None:
        registry = ToolRegistry([Echo("builtin_echo", "builtin")])
        source = Changing("plugin:x", ["x_one"])
        registry.add_source(source)
        assert registry.names() == ["builtin_echo"]  # not started yet
        registry.start()
        assert await registry.refresh() == []
        assert registry.names() == ["builtin_echo", "x_one"]
        source.names = ["x_one", "x_two"]
        assert registry.names() == ["builtin_echo", "x_one"]  # until it says it changed
        source.changed = True
        await registry.refresh()
        assert registry.names() == ["builtin_echo", "x_one", "x_two"]
        assert not source.changed
        await registry.aclose()
        assert source.closed == 1

    asyncio.run(scenario())


def test_a_clash_keeps_the_first_tool_and_is_reported_once() -> None:
    async def scenario() -> None:
        registry = ToolRegistry([Echo("shared", "builtin")])
        late = Changing("plugin:late", ["shared", "own"])
        registry.add_source(late)
        registry.start()
        problems = await registry.refresh()
        assert len(problems) == 1
        assert "shared from plugin:late" in problems[0] and "first one is kept" in problems[0]
        assert registry.get("shared").source == "builtin"  # type: ignore[union-attr]
        assert registry.get("own") is not None
        late.changed = True
        assert await registry.refresh() == []  # said once
        await registry.aclose()

    asyncio.run(scenario())


def test_calls_go_through_the_source_that_owns_the_tool() -> None:
    async def scenario() -> None:
        registry = ToolRegistry()
        source = Changing("plugin:x", ["x_one"])
        registry.add_source(source)
        registry.start()
        await registry.refresh()
        events: list[ev.Event] = []
        executor = Executor(registry, Policy(), ToolContext(Workspace(".")), events.append)
        [message] = await executor.run([ToolCall("c1", "x_one", json.dumps({"text": "hi"}))])
        assert message.content == "x_one from plugin:x: hi"
        assert source.calls == 1
        await registry.aclose()

    asyncio.run(scenario())


def test_parts_have_a_text_rendering() -> None:
    image = ImagePart(data="A" * 16384, mime_type="image/png")  # 12 KB decoded
    parts = [
        TextPart("hello"),
        image,
        JsonPart({"b": 1, "a": [1, 2]}),
        ResourceLinkPart(uri="file:///x.txt", name="x.txt", mime_type="text/plain"),
    ]
    assert render_text(parts).splitlines() == [
        "hello",
        "[image: image/png, 12 KB]",
        '{"a": [1, 2], "b": 1}',
        "[resource: file:///x.txt (x.txt), text/plain]",
    ]
    output = ToolOutput.of_parts(parts)
    assert output.content == render_text(parts) and output.parts == parts
    failed = ToolOutput.of_parts([TextPart("no such city\nmore")], error=True)
    assert failed.error and failed.summary == "no such city"


PNG_SIGNATURE = ImagePart("iVBORw0KGgo=", "image/png")  # the 8 bytes every PNG starts with


def test_image_parts_reach_the_event_as_metadata_not_bytes() -> None:
    class Picture(Echo):
        async def execute(self, args: dict[str, Any], ctx: ToolContext) -> ToolOutput:
            return ToolOutput.of_parts([TextPart("a dot"), PNG_SIGNATURE])

    async def scenario() -> tuple[list[ev.Event], list[Any]]:
        events: list[ev.Event] = []
        registry = ToolRegistry([Picture("picture")])
        executor = Executor(registry, Policy(), ToolContext(Workspace(".")), events.append)
        return events, await executor.run([ToolCall("c1", "picture", "{}")])

    events, [message] = asyncio.run(scenario())
    [result] = [e for e in events if isinstance(e, ev.ToolCallResult)]
    assert result.content == "a dot\n[image: image/png, 8 B]"
    assert result.metadata["parts"] == [  # type: ignore[index]
        {"type": "text"},
        {"type": "image", "mimeType": "image/png", "size": 8},
    ]
    assert message.content == result.content and message.images == [PNG_SIGNATURE]


def test_the_approval_prompt_shows_what_the_tool_describes() -> None:
    assessment = Assessment(Risk.HIGH, "from an MCP server")
    plain = ApprovalRequest("mcp__t__x", {"a": 1}, assessment)
    described = ApprovalRequest(
        "mcp__t__x", {"a": 1}, assessment, description=["server t: tool x", '{"a": 1}']
    )
    assert "  a: 1\n" in render_prompt(Prompt(plain, [], ["why"]), color=False)  # a field
    shown = render_prompt(Prompt(described, [], ["why"]), color=False)
    assert "  server t: tool x\n" in shown


def test_examples_default_to_empty() -> None:
    assert Tool.examples == [] and Echo("x").examples == []
