"""An MCP server's tools as agentcli tools: named `mcp__SERVER__TOOL`, rated by the rules
below, and their results turned into content parts.

Risk: high unless the user says otherwise. A server marked `trusted = true` has its
annotations honoured (readOnlyHint → low, but medium with openWorldHint true, as the
built-in fetch_url; destructiveHint false → medium; anything else, destructive being the
protocol's default, → high); `[mcp.servers.S.tools.T] risk` beats
both. Annotations of an untrusted server never lower a risk."""

from __future__ import annotations

import json
import re
from typing import Any

from agentcli.mcp.config import ServerConfig
from agentcli.risk import Assessment
from agentcli.text.decoding import loads
from agentcli.tools.base import ToolContext, ToolFailure, ToolOutput
from agentcli.tools.content import ImagePart, JsonPart, Part, ResourceLinkPart, TextPart
from agentcli.tools.dynamic import DynamicSpec, DynamicTool, check_self_contained, check_spec

PREFIX = "mcp__"
UNSAFE = re.compile(r"[^A-Za-z0-9_-]")


def tool_name(server: str, tool: str) -> str:
    """`mcp__SERVER__TOOL`, with characters providers refuse replaced and cut to 64."""
    return (PREFIX + server + "__" + UNSAFE.sub("_", tool))[:64]


def rate(server: ServerConfig, tool: str, annotations: Any) -> tuple[str, str]:
    """The risk label and why."""
    if tool in server.tool_risks:
        return server.tool_risks[tool], f"set in mcp.servers.{server.name}.tools.{tool}.risk"
    if not server.trusted:
        return "high", f"MCP server {server.name} is not marked trusted"
    read_only = getattr(annotations, "read_only_hint", None)
    destructive = getattr(annotations, "destructive_hint", None)
    if read_only and getattr(annotations, "open_world_hint", None) is True:
        # as the built-in fetch_url: reading the open world is not a read of the workspace
        return "medium", f"trusted MCP server {server.name} says it reads the open world"
    if read_only:
        return "low", f"trusted MCP server {server.name} says it only reads"
    if destructive is False:
        return "medium", f"trusted MCP server {server.name} says it is not destructive"
    return "high", f"trusted MCP server {server.name} does not say it is harmless"


class McpTool(DynamicTool):
    """One tool of one server; calls go through the server's source."""

    def __init__(
        self, spec: DynamicSpec, *, server: Any, remote_name: str, reason: str, title: str
    ) -> None:
        super().__init__(spec)
        self.server = server  # the McpServer source
        self.remote_name = remote_name  # the name the server knows it by
        self.reason = reason
        self.title = title

    async def execute(self, args: dict[str, Any], ctx: ToolContext) -> ToolOutput:
        return await self.server.call(self, args, ctx)

    def assess(self, args: dict[str, Any], ctx: ToolContext) -> Assessment:
        return Assessment(self._risk, f"{self.name}: {self.risk_summary} risk ({self.reason})")

    def describe(self, args: dict[str, Any]) -> list[str]:
        server = self.source.removeprefix("mcp:")
        title = f" — {self.title}" if self.title else ""
        return [
            f"MCP server {server}, tool {self.remote_name}{title}",
            json.dumps(args, ensure_ascii=False),
        ]


def make_tool(server: ServerConfig, listed: Any, source: Any) -> McpTool:
    """`listed` is the SDK's Tool; `source` the McpServer that calls it. Raises
    DynamicToolError when its name or schema cannot be used."""
    risk, reason = rate(server, listed.name, listed.annotations)
    description = listed.description or listed.title or f"{listed.name} from {server.name}"
    schema = dict(listed.input_schema or {"type": "object"})
    schema.setdefault("type", "object")
    spec = DynamicSpec(
        name=tool_name(server.name, listed.name),
        description=description,
        parameters=schema,
        risk=risk,
        source=f"mcp:{server.name}",
        run=_unused,
    )
    check_spec(spec)
    output = getattr(listed, "output_schema", None)
    if output is not None:  # the SDK checks each result against it, with jsonschema
        check_self_contained(spec.name, output, "output")
    title = listed.title or getattr(listed.annotations, "title", None) or ""
    return McpTool(spec, server=source, remote_name=listed.name, reason=reason, title=title)


async def _unused(args: dict[str, Any], ctx: ToolContext) -> ToolOutput:
    raise ToolFailure("an MCP tool runs through its server")


def result_parts(result: Any) -> list[Part]:
    """A CallToolResult's content and structured content as parts: the structured content
    only when the text does not already say it (one copy of each result)."""
    parts = content_parts(result.content or [])
    structured = getattr(result, "structured_content", None)
    if structured is not None and not said_in_text(structured, parts):
        parts.append(JsonPart(structured))
    return parts or [TextPart("(no content)")]


def content_parts(items: list[Any]) -> list[Part]:
    """MCP content blocks (of a tool result or a prompt message) as parts."""
    parts: list[Part] = []
    for item in items:
        kind = getattr(item, "type", "")
        if kind == "text":
            parts.append(TextPart(item.text))
        elif kind == "image":
            parts.append(ImagePart.sniffed(item.data, item.mime_type))
        elif kind == "audio":
            parts.append(TextPart(f"[audio: {item.mime_type}, {ImagePart(item.data, '').size} B]"))
        elif kind == "resource_link":
            parts.append(
                ResourceLinkPart(str(item.uri), item.name or "", item.mime_type, item.description)
            )
        elif kind == "resource":
            resource = item.resource
            text = getattr(resource, "text", None)
            if text is None:  # a blob: say what it is, not its bytes
                size = ImagePart(getattr(resource, "blob", "") or "", "").size
                text = f"({size} bytes of binary content)"
            parts.append(ResourceLinkPart(str(resource.uri), "", resource.mime_type, None, text))
        else:
            parts.append(TextPart(f"[{kind or 'unknown'} content]"))
    return parts


def said_in_text(value: Any, parts: list[Part]) -> bool:
    """Whether the text parts already say the structured content `value`. Servers repeat
    it as JSON text; many wrap the value in an object of one key and send the value as
    the text: FastMCP-style servers a plain return value as `{"result": v}` (a list as one
    text block per item), server-filesystem a file as `{"content": text}`, server-memory
    `{"entities": [...]}` beside the list's JSON."""
    texts = [part.text for part in parts if isinstance(part, TextPart)]
    if not texts:
        return False
    candidates = [value]
    if isinstance(value, dict) and len(value) == 1:
        candidates.append(next(iter(value.values())))
    for candidate in candidates:
        if any(_says(text, candidate) for text in texts):
            return True
        listed = isinstance(candidate, list) and len(candidate) == len(texts) > 1
        if listed and all(_says(t, item) for t, item in zip(texts, candidate, strict=True)):
            return True
    return False


def _says(text: str, value: Any) -> bool:
    if isinstance(value, str) and text == value:
        return True
    try:
        return bool(loads(text) == value)
    except ValueError:
        return False
