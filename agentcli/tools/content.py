"""A tool result's content parts (text, image, structured JSON, resource link) and their
text rendering, for providers and outputs that take only text."""

from __future__ import annotations

import json
from typing import Any

from agentcli.conversation.images import ImagePart, describe
from agentcli.records import dataclass


@dataclass(frozen=True, slots=True)
class TextPart:
    text: str


@dataclass(frozen=True, slots=True)
class JsonPart:
    value: Any  # structured content (MCP's structuredContent)


@dataclass(frozen=True, slots=True)
class ResourceLinkPart:
    uri: str
    name: str = ""
    mime_type: str | None = None
    description: str | None = None
    text: str | None = None  # an embedded resource's text, when the server sent it


Part = TextPart | ImagePart | JsonPart | ResourceLinkPart


def render_part(part: Part) -> str:
    if isinstance(part, TextPart):
        return part.text
    if isinstance(part, ImagePart):
        return describe(part)
    if isinstance(part, JsonPart):
        return json.dumps(part.value, ensure_ascii=False, sort_keys=True)
    shown = f"[resource: {part.uri}"
    shown += f" ({part.name})" if part.name and part.name != part.uri else ""
    shown += f", {part.mime_type}]" if part.mime_type else "]"
    if part.description:
        shown += f" {part.description}"
    return shown + (f"\n{part.text}" if part.text else "")


def render_text(parts: list[Part]) -> str:
    """The parts as the text a text-only provider or output gets, one block per part."""
    return "\n".join(render_part(part) for part in parts)


def part_metadata(part: Part) -> dict[str, Any]:
    """What the event stream says about a part (its kind; never an image's bytes)."""
    if isinstance(part, TextPart):
        return {"type": "text"}
    if isinstance(part, ImagePart):
        return {"type": "image", "mimeType": part.mime_type, "size": part.size}
    if isinstance(part, JsonPart):
        return {"type": "json"}
    return {"type": "resource_link", "uri": part.uri}
