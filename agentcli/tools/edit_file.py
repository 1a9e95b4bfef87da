"""edit_file: one exact piece of text replaced (or every occurrence), keeping the file's
encoding and line endings; the result is the diff."""

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
from agentcli.tools.text_codec import DecodedText


def _line_numbers(text: str, needle: str, limit: int = 5) -> list[int]:
    numbers, start = [], 0
    while len(numbers) < limit:
        found = text.find(needle, start)
        if found < 0:
            break
        numbers.append(text.count("\n", 0, found) + 1)
        start = found + max(len(needle), 1)
    return numbers


def plan_edit(
    ctx: ToolContext, args: dict[str, Any], *, preview: bool = False
) -> tuple[Path, Path, str, DecodedText, str]:
    """Works out an edit without writing: (path, walk base, shown name, decoded file, new
    text). A preview reads wherever the path leads; the edit itself only where allowed."""
    target = ctx.workspace.resolve(args["path"])
    shown = ctx.workspace.relative(target.path)
    anywhere = Path(target.path.anchor)
    base = anywhere if preview else walk_base(ctx, target, shown, writing=True)
    decoded = read_existing_text(target.path, base, shown)
    if decoded is None:
        raise ToolFailure(f"no such file: {shown} (use write_file to create it)")
    old = decoded.to_file_newlines(args["old_text"])
    new = decoded.to_file_newlines(args["new_text"])
    if not old:
        raise ToolFailure("old_text is empty; give the exact text to replace")
    if old == new:
        raise ToolFailure("old_text and new_text are the same; nothing to change")
    count = decoded.text.count(old)
    if count == 0:
        hint = ""
        if " ".join(old.split()) in " ".join(decoded.text.split()):
            hint = " (it matches if whitespace is ignored: copy the exact indentation)"
        raise ToolFailure(f"old_text was not found in {shown}{hint}; read the file and retry")
    if count > 1 and not args.get("replace_all", False):
        lines = ", ".join(map(str, _line_numbers(decoded.text, old)))
        raise ToolFailure(
            f"old_text occurs {count} times in {shown} (lines {lines}); include more "
            "surrounding text to make it unique, or pass replace_all=true"
        )
    updated = decoded.text.replace(old, new) if count > 1 else decoded.text.replace(old, new, 1)
    return target.path, base, shown, decoded, updated


class EditFile(PathTool):
    name = "edit_file"
    writes_files = True  # checkpoints keep its target first
    risk_summary = "medium; high outside the workspace or for sensitive files"
    description = (
        "Replace an exact piece of text in a file. old_text must match the file exactly "
        "(including indentation) and be unique unless replace_all is true. Keeps the file's "
        "encoding and line endings; returns a diff of the change."
    )
    parameters = {  # noqa: RUF012
        "type": "object",
        "properties": {
            "path": {"type": "string", "description": "File to edit."},
            "old_text": {"type": "string", "description": "The exact text to replace."},
            "new_text": {"type": "string", "description": "The text to put in its place."},
            "replace_all": {
                "type": "boolean",
                "description": "Replace every occurrence (default false: exactly one).",
            },
        },
        "required": ["path", "old_text", "new_text"],
        "additionalProperties": False,
    }

    def assess(self, args: dict[str, Any], ctx: ToolContext) -> Assessment:
        return assess_path(ctx, ctx.workspace.resolve(args["path"]), "edits a file", writing=True)

    def preview(self, args: dict[str, Any], ctx: ToolContext) -> str | None:
        try:
            _, _, shown, decoded, updated = plan_edit(ctx, args, preview=True)
        except ToolFailure as failure:
            return f"(the edit would fail: {failure})"
        return unified_diff(decoded.text, updated, shown, PREVIEW_LINES)

    async def execute(self, args: dict[str, Any], ctx: ToolContext) -> ToolOutput:
        import asyncio

        def edit() -> ToolOutput:
            path, base, shown, decoded, updated = plan_edit(ctx, args)
            ctx.before_write(path)
            write_at(path, base, shown, decoded.encode(updated))
            ctx.after_write(path)
            diff = unified_diff(decoded.text, updated, shown)
            changed = sum(
                1
                for line in diff.splitlines()
                if line[:1] in "+-" and line[:3] not in ("+++", "---")
            )
            return ToolOutput(
                content=f"edited {shown}\n{diff}", summary=f"{plural(changed, 'line')} changed"
            )

        return await asyncio.to_thread(edit)
