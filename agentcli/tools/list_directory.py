"""list_directory: a directory's entries with type, size and time, directories first, read
through a descriptor opened from the allowed directory that holds it."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from agentcli.output.visible import name_on_one_line
from agentcli.risk import Assessment
from agentcli.text.words import plural
from agentcli.tools.base import ToolContext, ToolFailure, ToolOutput
from agentcli.tools.file_access import PathTool, assess_path, walk_base
from agentcli.workspace.safe_open import UnsafePath, open_directory


def _kind(entry: os.DirEntry[str]) -> str:
    if entry.is_symlink():
        return "link"
    return "dir" if entry.is_dir(follow_symlinks=False) else "file"


MAX_LIST_ENTRIES = 1000


def list_entries(path: Path, base: Path, shown: str, include_hidden: bool) -> ToolOutput:
    try:
        dir_fd = open_directory(path, base)
    except FileNotFoundError:
        raise ToolFailure(f"no such directory: {shown}") from None
    except UnsafePath as exc:
        raise ToolFailure(f"{shown}: {exc.strerror}") from None
    except NotADirectoryError:
        raise ToolFailure(f"{shown} is a file, not a directory; read it with read_file") from None
    except PermissionError:
        raise ToolFailure(f"permission denied: {shown}") from None
    try:
        return _list_open(dir_fd, shown, include_hidden)
    finally:
        os.close(dir_fd)


def _list_open(dir_fd: int, shown: str, include_hidden: bool) -> ToolOutput:
    from datetime import datetime

    try:
        with os.scandir(dir_fd) as scan:
            entries = [e for e in scan if include_hidden or not e.name.startswith(".")]
    except PermissionError:
        raise ToolFailure(f"permission denied: {shown}") from None
    entries.sort(key=lambda e: (_kind(e) != "dir", e.name.lower(), e.name))
    lines = []
    for entry in entries[:MAX_LIST_ENTRIES]:
        kind = _kind(entry)
        try:
            info = entry.stat(follow_symlinks=False)
        except OSError:
            lines.append(f"{kind:<4}  {'?':>12}  {'?':<16}  {name_on_one_line(entry.name)}")
            continue
        size = "-" if kind == "dir" else f"{info.st_size:,}"
        when = datetime.fromtimestamp(info.st_mtime).strftime("%Y-%m-%d %H:%M")
        # A name is one line of the listing: a newline in it cannot pass for another entry.
        name = name_on_one_line(entry.name) + ("/" if kind == "dir" else "")
        if kind == "link":
            name += f" -> {name_on_one_line(os.readlink(entry.name, dir_fd=dir_fd))}"
        lines.append(f"{kind:<4}  {size:>12}  {when:<16}  {name}")
    header = f"{shown}: {len(entries)} entries" + ("" if include_hidden else " (hidden not shown)")
    if len(entries) > MAX_LIST_ENTRIES:
        lines.append(f"[… {len(entries) - MAX_LIST_ENTRIES} more entries not shown]")
    if not entries:
        return ToolOutput(content=f"{header}; the directory is empty", summary="empty")
    body = "\n".join([header, f"{'type':<4}  {'bytes':>12}  {'modified':<16}  name", *lines])
    return ToolOutput(content=body, summary=plural(len(entries), "entry"))


class ListDirectory(PathTool):
    path_default = "."
    name = "list_directory"
    read_only = True
    risk_summary = "low; high outside the workspace"
    description = (
        "List a directory in the workspace: each entry's type, size in bytes and modification "
        "time, directories first, sorted by name."
    )
    parameters = {  # noqa: RUF012
        "type": "object",
        "properties": {
            "path": {"type": "string", "description": "Directory (default: workspace root)."},
            "include_hidden": {
                "type": "boolean",
                "description": "Include entries whose names start with a dot (default false).",
            },
        },
        "additionalProperties": False,
    }

    def assess(self, args: dict[str, Any], ctx: ToolContext) -> Assessment:
        return assess_path(ctx, ctx.workspace.resolve(args.get("path", ".")), "lists a directory")

    async def execute(self, args: dict[str, Any], ctx: ToolContext) -> ToolOutput:
        import asyncio

        target = ctx.workspace.resolve(args.get("path", "."))
        shown = ctx.workspace.relative(target.path)
        hidden = args.get("include_hidden", False)
        base = walk_base(ctx, target, shown, writing=False)
        return await asyncio.to_thread(list_entries, target.path, base, shown, hidden)
