"""What the file tools share, and the search and provider-defined tools use too: a path's
risk (assess_path), where the walk that opens it starts (walk_base), opening a file found
that way, its decoded text, the diff a write shows, and the base class whose rules match a
resolved path."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from agentcli.risk import Assessment, Risk, Subjects
from agentcli.tools.base import Tool, ToolContext, ToolFailure
from agentcli.tools.text_codec import DecodedText, decode_text
from agentcli.workspace.root import ResolvedPath
from agentcli.workspace.safe_open import UnsafePath, open_parent, open_regular
from agentcli.workspace.sensitive import sensitive_reason


def assess_path(
    ctx: ToolContext, target: ResolvedPath, verb: str, *, writing: bool = False
) -> Assessment:
    """Low (reads) or medium (writes) inside the workspace and the places a person added;
    high outside them or for a sensitive target; beyond the boundary, only a person's
    approval of this one call lets it run (agentcli.sandbox.boundary)."""
    reach = ctx.reach
    outside = reach.check(target.path, writing=writing)
    if outside is not None:
        return Assessment(Risk.HIGH, outside.why, protected=True, outside=outside)
    if not reach.holds(target.path, writing=writing):
        reason = f"path {target.requested!r} resolves outside the workspace"
        return Assessment(Risk.HIGH, reason, protected=True)
    reason = sensitive_reason(target.path, writing=writing)
    if reason:
        return Assessment(Risk.HIGH, reason, protected=True)
    return Assessment(Risk.MEDIUM if writing else Risk.LOW, f"{verb} inside the workspace")


def walk_base(ctx: ToolContext, target: ResolvedPath, shown: str, *, writing: bool) -> Path:
    """Where the walk that opens `target` starts (agentcli.workspace.safe_open): the allowed
    directory that holds it, or the root for the one path beyond the boundary a person approved for
    this call. A call approved as an ordinary one (inside the workspace, nothing sensitive)
    may reach nothing else, whatever the path resolves to by the time it runs."""
    path = target.path
    if ctx.grant is not None and path == ctx.grant:
        return Path(path.anchor)
    reach = ctx.reach
    base = reach.root_for(path, writing=writing)
    if base is None:
        outside = reach.check(path, writing=writing)
        why = outside.why if outside is not None else "it is outside what tools may reach"
        raise ToolFailure(f"{shown}: {why}; not touching it")
    if not ctx.confine:
        return base
    output = ctx.output_dir.resolve() if ctx.output_dir is not None else None
    if output is not None and not writing and output in path.parents:
        return base
    if not reach.holds(path, writing=writing):
        raise ToolFailure(
            f"{target.requested} now resolves outside the workspace ({path}); it changed "
            "after the call was approved, so it is not used"
        )
    reason = sensitive_reason(path, writing=writing)
    if reason:
        raise ToolFailure(f"{shown} now names a sensitive file ({reason}); not touching it")
    return base


def open_for_reading(path: Path, base: Path, shown: str) -> int:
    """An fd of the regular file `path` reached from `base` (see agentcli.workspace.safe_open)."""
    if path == base:
        raise IsADirectoryError(shown)
    dir_fd = open_parent(path, base)
    try:
        return open_regular(dir_fd, path.name)
    except UnsafePath as exc:
        raise ToolFailure(f"{shown}: {exc.strerror}") from None
    finally:
        os.close(dir_fd)


class PathTool(Tool):
    """A tool whose rules match the resolved path of its `path` argument."""

    path_default: str | None = None
    path_arguments = ("path",)

    def rule_subjects(self, args: dict[str, Any], ctx: ToolContext) -> Any:
        requested = args.get("path", self.path_default)
        if requested is None:
            return Subjects()
        return Subjects("path", values=(str(ctx.workspace.resolve(requested).path),))


def unified_diff(before: str, after: str, shown: str, max_lines: int = 200) -> str:
    import difflib

    lines = list(
        difflib.unified_diff(
            before.splitlines(keepends=True),
            after.splitlines(keepends=True),
            fromfile=f"a/{shown}",
            tofile=f"b/{shown}",
            n=3,
        )
    )
    text = "".join(line if line.endswith("\n") else line + "\n" for line in lines[:max_lines])
    if len(lines) > max_lines:
        text += f"[… {len(lines) - max_lines} more diff lines]\n"
    return text.replace("\r\n", "\n")


PREVIEW_LINES = 5000  # of a diff for the approval prompt, which pages through it


def read_existing_text(path: Path, base: Path, shown: str) -> DecodedText | None:
    """A file's decoded text, None when it does not exist (opened as read_file does)."""
    try:
        fd = open_for_reading(path, base, shown)
    except FileNotFoundError:
        return None
    except IsADirectoryError:
        raise ToolFailure(f"{shown} is a directory") from None
    except NotADirectoryError:
        raise ToolFailure(f"a parent of {shown} is not a directory") from None
    except UnsafePath as exc:
        raise ToolFailure(f"{shown}: {exc.strerror}") from None
    except PermissionError:
        raise ToolFailure(f"permission denied: {shown}") from None
    with os.fdopen(fd, "rb") as stream:
        return decode_text(stream.read(), shown)
