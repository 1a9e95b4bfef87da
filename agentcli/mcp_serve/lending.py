"""agentcli's tools as an MCP client sees them: each with its annotations, made from
agentcli's own words for it (a tool that only reads, the lowest risk it can have, whether
it reaches the network), and each result as MCP content (text always, images as images,
the tool's data as structuredContent)."""

from __future__ import annotations

from typing import Any

import mcp_types as types

from agentcli.risk import Risk
from agentcli.tools.base import Tool, ToolOutput
from agentcli.tools.content import ImagePart, JsonPart

_RISKS = {"low": Risk.LOW, "medium": Risk.MEDIUM, "high": Risk.HIGH}


def lowest_risk(tool: Tool) -> Risk:
    """The risk a call of `tool` has at the least: the first word of its risk summary
    ("low; high outside the workspace" is low at the least); high when it says none."""
    word = tool.risk_summary.replace(";", " ").replace("/", " ").split(maxsplit=1)
    return _RISKS.get(word[0].lower(), Risk.HIGH) if word else Risk.HIGH


def annotations(tool: Tool, *, network: bool) -> types.ToolAnnotations:
    """readOnlyHint: it changes nothing; destructiveHint: it may change or delete what is
    there (a command, a write; not a tool whose calls are low risk at the least, which
    adds or stops what agentcli itself started); openWorldHint: it reaches the network (a
    command only when the sandbox lets it: `network`), or it is another server's tool,
    whose reach agentcli cannot see."""
    read_only = tool.read_only
    destructive = not read_only and (tool.runs_commands or lowest_risk(tool) > Risk.LOW)
    open_world = tool.network or tool.source.startswith("mcp:")
    if tool.runs_commands:
        open_world = open_world or network
    title = getattr(tool, "title", "") or None
    return types.ToolAnnotations(
        title=title,
        read_only_hint=read_only,
        destructive_hint=destructive,
        idempotent_hint=read_only,
        open_world_hint=open_world,
    )


def listed(tool: Tool, *, network: bool) -> types.Tool:
    """The tool as tools/list shows it."""
    return types.Tool(
        name=tool.name,
        description=f"{tool.description} (agentcli risk: {tool.risk_summary})",
        input_schema=tool.parameters,
        # No outputSchema: a command's result has its data, but a background job's start
        # has none, which a declared schema would make an error on the client's side.
        annotations=annotations(tool, network=network),
    )


def call_result(text: str, error: bool, output: ToolOutput | None) -> types.CallToolResult:
    """A call's result: its text (what a model would have been given, a refusal's reason
    included) always; its images; and its data as structuredContent when it has some."""
    content: list[Any] = [types.TextContent(type="text", text=text)]
    structured = output.structured if output is not None else None
    for part in output.parts if output is not None else []:
        if isinstance(part, ImagePart):
            image = types.ImageContent(type="image", data=part.data, mime_type=part.mime_type)
            content.append(image)
        elif isinstance(part, JsonPart) and structured is None and isinstance(part.value, dict):
            structured = part.value
    return types.CallToolResult(content=content, structured_content=structured, is_error=error)
