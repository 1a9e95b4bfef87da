"""write_file: a whole file created or replaced; the approval prompt shows the diff, or
every line of a new file."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from agentcli.risk import Assessment
from agentcli.text.words import plural
from agentcli.tools.base import ToolContext, ToolFailure, ToolOutput
from agentcli.tools.file_access import (
    PREVIEW_LINES,
    PathTool,
    assess_path,
    read_existing_text,
    unified_diff,
    walk_base,
)
from agentcli.tools.fs_write import write_at


def new_file_preview(content: str, shown: str) -> str:
    """A new file for the approval prompt: every line, as the `+` lines of a diff."""
    text = content.replace("\r\n", "\n")  # a lone CR stays, for the prompt to show
    lines = text.removesuffix("\n").split("\n") if text else []
    count = f"{len(lines):,} line{'' if len(lines) == 1 else 's'}"
    head = f"new file {shown} ({count}, {len(content.encode()):,} bytes)"
    return "\n".join([head, *("+" + line for line in lines)]) + "\n"


class WriteFile(PathTool):
    name = "write_file"
    writes_files = True  # checkpoints keep its target first
    risk_summary = "medium; high outside the workspace or for sensitive files"
    description = (
        "Write a whole file in the workspace (created, or replaced). Missing parent "
        "directories are created. Prefer edit_file to change part of an existing file."
    )
    parameters = {  # noqa: RUF012
        "type": "object",
        "properties": {
            "path": {"type": "string", "description": "File to write."},
            "content": {"type": "string", "description": "The complete new content."},
        },
        "required": ["path", "content"],
        "additionalProperties": False,
    }

    def assess(self, args: dict[str, Any], ctx: ToolContext) -> Assessment:
        return assess_path(ctx, ctx.workspace.resolve(args["path"]), "writes a file", writing=True)

    def preview(self, args: dict[str, Any], ctx: ToolContext) -> str | None:
        target = ctx.workspace.resolve(args["path"])
        shown = ctx.workspace.relative(target.path)
        try:  # shown to the person approving, from wherever the path leads
            existing = read_existing_text(target.path, Path(target.path.anchor), shown)
        except ToolFailure as failure:
            return str(failure)
        if existing is None:
            return new_file_preview(args["content"], shown)
        return unified_diff(existing.text, args["content"], shown, PREVIEW_LINES) or "no change"

    async def execute(self, args: dict[str, Any], ctx: ToolContext) -> ToolOutput:
        import asyncio

        target = ctx.workspace.resolve(args["path"])
        shown = ctx.workspace.relative(target.path)
        data = args["content"].encode("utf-8")

        base = walk_base(ctx, target, shown, writing=True)
        if target.path == base:
            raise ToolFailure(f"{shown} is a directory")
        await asyncio.to_thread(ctx.before_write, target.path)
        existed = await asyncio.to_thread(write_at, target.path, base, shown, data)
        ctx.after_write(target.path)
        verb = "replaced" if existed else "created"
        return ToolOutput(
            content=f"{verb} {shown} ({len(data):,} bytes written)",
            summary=f"{verb}, {plural(len(data), 'byte')}",
        )
