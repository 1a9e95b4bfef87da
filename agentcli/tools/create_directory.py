"""create_directory: a directory, and its missing parents unless recursive=false, made
through descriptors from where the walk starts (agentcli.tools.fs_write)."""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Any

from agentcli.risk import Assessment
from agentcli.tools.base import ToolContext, ToolFailure, ToolOutput
from agentcli.tools.file_access import PathTool, assess_path, walk_base
from agentcli.tools.fs_write import open_parent_for


class CreateDirectory(PathTool):
    name = "create_directory"
    writes_files = True  # checkpoints keep its target first
    risk_summary = "medium; high outside the workspace or for sensitive files"
    description = (
        "Create a directory in the workspace, with missing parents unless recursive=false."
    )
    parameters = {  # noqa: RUF012
        "type": "object",
        "properties": {
            "path": {"type": "string", "description": "Directory to create."},
            "recursive": {
                "type": "boolean",
                "description": "Also create missing parent directories (default true).",
            },
        },
        "required": ["path"],
        "additionalProperties": False,
    }

    def assess(self, args: dict[str, Any], ctx: ToolContext) -> Assessment:
        target = ctx.workspace.resolve(args["path"])
        return assess_path(ctx, target, "creates a directory", writing=True)

    async def execute(self, args: dict[str, Any], ctx: ToolContext) -> ToolOutput:
        import asyncio

        target = ctx.workspace.resolve(args["path"])
        shown = ctx.workspace.relative(target.path)
        base = walk_base(ctx, target, shown, writing=True)
        recursive = args.get("recursive", True)
        if target.path == base:
            return ToolOutput(content=f"{shown} already exists", summary="already exists")
        created = await asyncio.to_thread(make_directory, target.path, base, shown, recursive)
        ctx.after_write(target.path)
        if not created:
            return ToolOutput(content=f"{shown} already exists", summary="already exists")
        return ToolOutput(content=f"created {shown}/", summary="created")


def make_directory(path: Path, base: Path, shown: str, recursive: bool) -> bool:
    """Makes directory `path` through fds from `base`; False when it already exists."""
    try:
        dir_fd = open_parent_for(path, base, shown, create=recursive)
    except ToolFailure as failure:
        if recursive or "does not exist" not in str(failure):
            raise
        raise ToolFailure(f"{failure} (pass recursive=true to create it)") from None
    try:
        try:
            os.mkdir(path.name, 0o777, dir_fd=dir_fd)
        except FileExistsError:
            info = os.stat(path.name, dir_fd=dir_fd, follow_symlinks=False)
            if stat.S_ISDIR(info.st_mode):
                return False
            raise ToolFailure(f"{shown} exists and is not a directory") from None
        except PermissionError:
            raise ToolFailure(f"permission denied: cannot create {shown}") from None
    finally:
        os.close(dir_fd)
    return True
