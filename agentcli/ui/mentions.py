"""`@path` in a chat message: the workspace file's content goes into the message; an image
(PNG, JPEG, GIF, WebP, known by its bytes) goes with it as an image, for a model that sees
images, and as its one-line description in the text, for one that does not."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator

from agentcli.conversation.images import (
    DEFAULT_MAX_BYTES,
    SNIFF_BYTES,
    ImagePart,
    describe,
    human_size,
    image_type,
)
from agentcli.workspace.root import Workspace
from agentcli.workspace.safe_open import read_regular

MENTION = re.compile(r"(?<![\w@])@([^\s@]+)")
MAX_BYTES = 100_000
PATH_LIKE = re.compile(r"\.[A-Za-z0-9]{1,8}$")  # ends with an extension: `notes.txt`


def expand_mentions(
    text: str,
    workspace: Workspace,
    *,
    image_limit: int = DEFAULT_MAX_BYTES,
    sees_images: bool = True,
    skip: Callable[[str], bool] | None = None,
) -> tuple[str, list[str], list[ImagePart]]:
    """The message with each mentioned file's content appended, notes on what was done
    (or why a mention was left alone), and the images attached. `skip`: mentions that are
    not files (`@server:uri`)."""
    attachments, notes, images = [], [], []
    for match in MENTION.finditer(text):
        if skip is not None and skip(match.group(1)):
            continue
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
            data = read_regular(target.path, workspace.root, max(MAX_BYTES, image_limit) + 1)
        except OSError:
            notes.append(f"@{requested} could not be read as a regular file; not attached")
            continue
        shown = workspace.relative(target.path)
        kind = image_type(data[:SNIFF_BYTES])
        if kind is not None:
            if len(data) > image_limit:  # described, with why, but not read further
                why = f"not sent to the model: over images.max_bytes ({human_size(image_limit)})"
                described = f"[image: {kind}, over {human_size(image_limit)}; {why}]"
                notes.append(f"{shown} is an image over images.max_bytes; only described")
            else:
                image = ImagePart.of_bytes(data, kind)
                images.append(image)
                described = describe(image)
                seen = "; this model takes no images: it gets the description"
                size = human_size(image.size)
                notes.append(f"attached {shown} ({kind}, {size}{'' if sees_images else seen})")
            attachments.append(f'<file path="{shown}">\n{described}\n</file>')
            continue
        data = data[: MAX_BYTES + 1]
        if b"\x00" in data[:8192]:
            notes.append(f"@{requested} is a binary file; not attached")
            continue
        text_content = data[:MAX_BYTES].decode("utf-8", errors="replace")
        if len(data) > MAX_BYTES:
            text_content += f"\n[… cut at {MAX_BYTES:,} bytes]"
        attachments.append(f'<file path="{shown}">\n{text_content}\n</file>')
        size = f"first {MAX_BYTES:,} bytes" if len(data) > MAX_BYTES else f"{len(data):,} bytes"
        notes.append(f"attached {shown} ({size})")
    if not attachments:
        return text, notes, images
    return text + "\n\n" + "\n\n".join(attachments), notes, images


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
