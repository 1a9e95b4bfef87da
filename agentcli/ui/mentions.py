"""`@path` in a chat message: the workspace file's content goes into the message."""

from __future__ import annotations

import re
from collections.abc import Iterator

from agentcli.workspace.root import Workspace
from agentcli.workspace.safe_open import read_regular

MENTION = re.compile(r"(?<![\w@])@([^\s@]+)")
MAX_BYTES = 100_000
PATH_LIKE = re.compile(r"\.[A-Za-z0-9]{1,8}$")  # ends with an extension: `notes.txt`


def expand_mentions(text: str, workspace: Workspace) -> tuple[str, list[str]]:
    """The message with each mentioned file's content appended, and notes on what was done
    (or why a mention was left alone)."""
    attachments, notes = [], []
    for match in MENTION.finditer(text):
        requested = match.group(1).rstrip(".,;:!?)")
        target = workspace.resolve(requested)
        if not target.inside:
            notes.append(f"@{requested} is outside the workspace; not attached")
            continue
        if target.path.is_dir():
            notes.append(f"@{requested} is a directory; not attached (name a file in it)")
            continue
        if not target.path.is_file():
            if _looks_like_a_path(requested):
                notes.append(f"@{requested}: no such file in the workspace; not attached")
            continue  # otherwise a handle (@alice), not a file
        try:  # opened as the file tools open: no symlink swapped in, no FIFO
            data = read_regular(target.path, workspace.root, MAX_BYTES + 1)
        except OSError:
            notes.append(f"@{requested} could not be read as a regular file; not attached")
            continue
        if b"\x00" in data[:8192]:
            notes.append(f"@{requested} is a binary file; not attached")
            continue
        text_content = data[:MAX_BYTES].decode("utf-8", errors="replace")
        if len(data) > MAX_BYTES:
            text_content += f"\n[… cut at {MAX_BYTES:,} bytes]"
        shown = workspace.relative(target.path)
        attachments.append(f'<file path="{shown}">\n{text_content}\n</file>')
        size = f"first {MAX_BYTES:,} bytes" if len(data) > MAX_BYTES else f"{len(data):,} bytes"
        notes.append(f"attached {shown} ({size})")
    if not attachments:
        return text, notes
    return text + "\n\n" + "\n\n".join(attachments), notes


def _looks_like_a_path(text: str) -> bool:
    """`@notes.txt`, `@src/app`, `@./x`: meant as a file (`@alice` is a handle)."""
    return "/" in text or bool(PATH_LIKE.search(text))


def path_completions(fragment: str, workspace: Workspace) -> Iterator[tuple[str, str]]:
    """(completion, display) pairs for the path after `@`."""
    directory, _, prefix = fragment.rpartition("/")
    base = workspace.resolve(directory or ".")
    if not base.inside or not base.path.is_dir():
        return
    try:
        entries = sorted(base.path.iterdir(), key=lambda p: p.name)
    except OSError:
        return
    for entry in entries[:200]:
        if not entry.name.startswith(prefix) or (entry.name.startswith(".") and not prefix):
            continue
        suffix = "/" if entry.is_dir() else ""
        full = f"{directory}/{entry.name}" if directory else entry.name
        yield full + suffix, entry.name + suffix
