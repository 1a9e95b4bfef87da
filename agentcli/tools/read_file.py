"""read_file: numbered lines of a text file in the workspace. It streams the file line by
line, so a 100 MB file read with offset/limit never sits in memory whole."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

from agentcli.conversation.images import (
    DEFAULT_MAX_BYTES,
    ImagePart,
    describe,
    human_size,
    image_type,
)
from agentcli.risk import Assessment, Risk
from agentcli.text.words import plural
from agentcli.tools.base import ToolContext, ToolFailure, ToolOutput
from agentcli.tools.content import TextPart
from agentcli.tools.file_access import PathTool, assess_path, open_for_reading, walk_base
from agentcli.workspace.safe_open import UnsafePath

DEFAULT_LINE_LIMIT = 2000
MAX_LINE_CHARS = 2000
_SNIFF_BYTES = 8192


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


def read_lines(
    path: Path,
    base: Path,
    shown: str,
    offset: int,
    limit: int,
    image_limit: int = DEFAULT_MAX_BYTES,
) -> ToolOutput:
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
        kind = image_type(head)
        if kind is not None:  # by its bytes: a screenshot named .txt is still an image
            return _read_image(stream, head, shown, kind, image_limit)
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


def _read_image(stream: IO[bytes], head: bytes, shown: str, kind: str, cap: int) -> ToolOutput:
    """The image as a part a model that sees images gets; one over `cap` bytes is only
    described (and not read further)."""
    size = os.fstat(stream.fileno()).st_size
    if size > cap:
        text = f"{shown}: {kind} image, {size:,} bytes"
        note = f"not sent to the model: over images.max_bytes ({human_size(cap)})"
        return ToolOutput(content=f"{text}; {note}", summary=f"{kind}, {human_size(size)}; {note}")
    data = head + stream.read(cap + 1 - len(head))
    if len(data) > cap:  # it grew while being read
        raise ToolFailure(f"{shown} grew past images.max_bytes while it was read; try again")
    image = ImagePart.of_bytes(data, kind)
    output = ToolOutput.of_parts([TextPart(f"{shown}: {kind} image, {len(data):,} bytes"), image])
    output.summary = describe(image)  # the terminal's line: never the bytes
    return output


class ReadFile(PathTool):
    name = "read_file"
    read_only = True
    risk_summary = "low; high outside the workspace or for ~/.ssh"
    description = (
        "Read a text file in the workspace. Returns numbered lines (like `cat -n`) with a "
        "header saying which lines of how many were returned. Use offset and limit to page "
        "through long files. An image (PNG, JPEG, GIF, WebP) is returned as the image to a "
        "model that can see images, otherwise as a one-line description."
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
        return await asyncio.to_thread(
            read_lines, target.path, base, shown, offset, limit, ctx.image_limit
        )
