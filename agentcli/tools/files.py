"""File tools confined to the workspace. `read_file` streams the file line by line, so a
100 MB file read with offset/limit never sits in memory whole."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

from agentcli.risk import Assessment, Risk, Subjects
from agentcli.safe_open import UnsafePath, open_directory, open_parent, open_regular
from agentcli.sensitive import sensitive_reason
from agentcli.tools.base import Tool, ToolContext, ToolFailure, ToolOutput
from agentcli.tools.fs_write import open_parent_for, write_at
from agentcli.tools.text_codec import DecodedText, decode_text
from agentcli.words import plural
from agentcli.workspace import ResolvedPath

DEFAULT_LINE_LIMIT = 2000
MAX_LINE_CHARS = 2000
_SNIFF_BYTES = 8192


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
    """Where the walk that opens `target` starts (agentcli.safe_open): the allowed directory
    that holds it, or the root for the one path beyond the boundary a person approved for
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
    """An fd of the regular file `path` reached from `base` (see agentcli.safe_open)."""
    if path == base:
        raise IsADirectoryError(shown)
    dir_fd = open_parent(path, base)
    try:
        return open_regular(dir_fd, path.name)
    except UnsafePath as exc:
        raise ToolFailure(f"{shown}: {exc.strerror}") from None
    finally:
        os.close(dir_fd)


def looks_binary(head: bytes) -> bool:
    return b"\x00" in head


def _capped_lines(stream: IO[bytes], cap: int) -> Iterator[tuple[bytes, bool]]:
    """Yields (line, was_cut) with at most `cap` bytes per line held in memory."""
    while True:
        chunk = stream.readline(cap)
        if not chunk:
            return
        if len(chunk) < cap or chunk.endswith(b"\n"):
            yield chunk, False
            continue
        while True:  # skip the rest of an overlong line without keeping it
            rest = stream.readline(cap)
            if not rest or rest.endswith(b"\n"):
                break
        yield chunk, True


def _describe_kind(head: bytes) -> str:
    signatures = {
        b"\x89PNG": "PNG image",
        b"\xff\xd8\xff": "JPEG image",
        b"GIF8": "GIF image",
        b"%PDF": "PDF document",
        b"PK\x03\x04": "zip archive",
        b"\x7fELF": "ELF executable",
        b"\x1f\x8b": "gzip archive",
    }
    for magic, kind in signatures.items():
        if head.startswith(magic):
            return kind
    return "binary data"


def read_lines(path: Path, base: Path, shown: str, offset: int, limit: int) -> ToolOutput:
    try:
        fd = open_for_reading(path, base, shown)
    except FileNotFoundError:
        raise ToolFailure(f"no such file: {shown}") from None
    except IsADirectoryError:
        raise ToolFailure(
            f"{shown} is a directory, not a file; list it with list_directory"
        ) from None
    except NotADirectoryError:
        raise ToolFailure(f"no such file: {shown} (a parent is not a directory)") from None
    except UnsafePath as exc:
        raise ToolFailure(f"{shown}: {exc.strerror}") from None
    except PermissionError:
        raise ToolFailure(f"permission denied: {shown}") from None
    with os.fdopen(fd, "rb") as stream:
        head = stream.read(_SNIFF_BYTES)
        if looks_binary(head):
            size = os.fstat(stream.fileno()).st_size
            raise ToolFailure(
                f"{shown} is a binary file ({_describe_kind(head)}, {size:,} bytes); "
                "read_file only returns text"
            )
        stream.seek(0)
        out: list[str] = []
        total = 0
        cap = MAX_LINE_CHARS * 4 + 1  # UTF-8 needs at most 4 bytes per character
        for total, (raw, cut) in enumerate(_capped_lines(stream, cap), start=1):
            if total < offset or total >= offset + limit:
                continue
            text = raw.decode("utf-8", errors="replace").rstrip("\r\n")
            if cut or len(text) > MAX_LINE_CHARS:
                text = text[:MAX_LINE_CHARS] + " [… line truncated]"
            out.append(f"{total:>6}\t{text}")
    if total == 0:
        return ToolOutput(content=f"{shown}: empty file (0 lines)", summary="empty file")
    if offset > total:
        raise ToolFailure(f"{shown} has {total} lines; offset {offset} is past the end")
    last = offset + len(out) - 1
    header = f"{shown}: lines {offset}-{last} of {total}"
    if last < total:
        header += f" (continue with offset={last + 1})"
    return ToolOutput(content=header + "\n" + "\n".join(out), summary=plural(len(out), "line"))


class PathTool(Tool):
    """A tool whose rules match the resolved path of its `path` argument."""

    path_default: str | None = None

    def rule_subjects(self, args: dict[str, Any], ctx: ToolContext) -> Any:
        requested = args.get("path", self.path_default)
        if requested is None:
            return Subjects()
        return Subjects("path", values=(str(ctx.workspace.resolve(requested).path),))


class ReadFile(PathTool):
    name = "read_file"
    risk_summary = "low; high outside the workspace or for ~/.ssh"
    description = (
        "Read a text file in the workspace. Returns numbered lines (like `cat -n`) with a "
        "header saying which lines of how many were returned. Use offset and limit to page "
        "through long files."
    )
    parameters = {  # noqa: RUF012
        "type": "object",
        "properties": {
            "path": {"type": "string", "description": "File path, relative to the workspace."},
            "offset": {
                "type": "integer",
                "minimum": 1,
                "description": "First line to return, 1-based (default 1).",
            },
            "limit": {
                "type": "integer",
                "minimum": 1,
                "description": f"How many lines to return (default {DEFAULT_LINE_LIMIT}).",
            },
        },
        "required": ["path"],
        "additionalProperties": False,
    }

    def assess(self, args: dict[str, Any], ctx: ToolContext) -> Assessment:
        target = ctx.workspace.resolve(args["path"])
        if ctx.output_dir is not None and ctx.output_dir.resolve() in target.path.parents:
            return Assessment(Risk.LOW, "reads a command output agentcli saved")
        return assess_path(ctx, target, "reads a file")

    async def execute(self, args: dict[str, Any], ctx: ToolContext) -> ToolOutput:
        import asyncio

        # Resolve again right before reading: the file system may have changed since assess.
        target = ctx.workspace.resolve(args["path"])
        shown = ctx.workspace.relative(target.path)
        offset = args.get("offset", 1)
        limit = args.get("limit", DEFAULT_LINE_LIMIT)
        base = walk_base(ctx, target, shown, writing=False)
        return await asyncio.to_thread(read_lines, target.path, base, shown, offset, limit)


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
            lines.append(f"{kind:<4}  {'?':>12}  {'?':<16}  {entry.name}")
            continue
        size = "-" if kind == "dir" else f"{info.st_size:,}"
        when = datetime.fromtimestamp(info.st_mtime).strftime("%Y-%m-%d %H:%M")
        name = entry.name + ("/" if kind == "dir" else "")
        if kind == "link":
            name += f" -> {os.readlink(entry.name, dir_fd=dir_fd)}"
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


class CreateDirectory(PathTool):
    name = "create_directory"
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


def new_file_preview(content: str, shown: str) -> str:
    """A new file for the approval prompt: every line, as the `+` lines of a diff."""
    text = content.replace("\r\n", "\n")  # a lone CR stays, for the prompt to show
    lines = text.removesuffix("\n").split("\n") if text else []
    count = f"{len(lines):,} line{'' if len(lines) == 1 else 's'}"
    head = f"new file {shown} ({count}, {len(content.encode()):,} bytes)"
    return "\n".join([head, *("+" + line for line in lines)]) + "\n"


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


class WriteFile(PathTool):
    name = "write_file"
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
