"""A large MCP result is capped as command output is: the model gets its head and tail
within the session's output limit (`shell.output_limit`), with a marker that says where
the whole of it is kept — once, in the session's outputs, which read_file can page
through. Images are kept as parts (they have their own size limit)."""

from __future__ import annotations

from agentcli.tools.base import ToolContext
from agentcli.tools.content import ImagePart, Part, TextPart, render_part


def capped(parts: list[Part], ctx: ToolContext, suffix: str = "mcp") -> list[Part]:
    """`parts`, or, when their text passes the limit, that text cut to fit (the images
    after it, as they were)."""
    texts = [render_part(part) for part in parts if not isinstance(part, ImagePart)]
    if sum(len(text) for text in texts) + len(texts) <= ctx.output_limit:
        return parts
    from agentcli.tools.shell import output_capture

    capture = output_capture(ctx, suffix)
    try:
        capture.feed("\n".join(texts).encode("utf-8", errors="replace"))
    finally:
        capture.close()
    images = [part for part in parts if isinstance(part, ImagePart)]
    return [TextPart(capture.text()), *images]
