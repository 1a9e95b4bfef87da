"""File tools confined to the workspace. `read_file` streams the file line by line, so a
100 MB file read with offset/limit never sits in memory whole."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Iterator
from typing import IO, Any

from agentcli.tools.base import Assessment, Risk, Tool, ToolContext, ToolFailure, ToolOutput
from agentcli.workspace import ResolvedPath

DEFAULT_LINE_LIMIT = 2000
MAX_LINE_CHARS = 2000
_SNIFF_BYTES = 8192


def assess_path(target: ResolvedPath, verb: str) -> Assessment:
    if target.inside:
        return Assessment(Risk.LOW, f"{verb} inside the workspace")
    return Assessment(Risk.HIGH, f"path {target.requested!r} resolves outside the workspace")


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


def read_lines(target: ResolvedPath, shown: str, offset: int, limit: int) -> ToolOutput:
    path = target.path
    if not path.exists():
        raise ToolFailure(f"no such file: {shown}")
    if path.is_dir():
        raise ToolFailure(f"{shown} is a directory, not a file; list it with list_directory")
    try:
        stream = open(path, "rb")  # noqa: SIM115 - closed below, after a binary sniff
    except PermissionError:
        raise ToolFailure(f"permission denied: {shown}") from None
    with stream:
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
    return ToolOutput(content=header + "\n" + "\n".join(out), summary=f"{len(out)} lines")


class ReadFile(Tool):
    name = "read_file"
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
        return assess_path(ctx.workspace.resolve(args["path"]), "reads a file")

    async def execute(self, args: dict[str, Any], ctx: ToolContext) -> ToolOutput:
        # Resolve again right before reading: the file system may have changed since assess.
        target = ctx.workspace.resolve(args["path"])
        shown = ctx.workspace.relative(target.path) if target.inside else str(target.path)
        offset = args.get("offset", 1)
        limit = args.get("limit", DEFAULT_LINE_LIMIT)
        return await asyncio.to_thread(read_lines, target, shown, offset, limit)
