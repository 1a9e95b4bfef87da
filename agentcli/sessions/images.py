"""The images of a session, stored once each beside its file: `ID.images/SHA256.EXT`, the
image's own bytes (not base64) named by their hash. A message records only references
(`{"sha256", "mimeType", "size"}`), so the session file stays lines of readable JSON and
an image a run shows the model again and again (or reads twice) is stored once.

Bounded: only images a model may get are stored, each within `images.max_bytes`."""

from __future__ import annotations

import base64
import contextlib
import errno
import os
import stat
from pathlib import Path
from typing import Any

from agentcli.conversation.images import ImagePart, human_size, image_type
from agentcli.regular_files import kind_of

EXTENSIONS = {"image/png": "png", "image/jpeg": "jpg", "image/gif": "gif", "image/webp": "webp"}


def images_dir(session_path: Path) -> Path:
    return session_path.with_suffix(".images")


def store_images(session_path: Path, images: list[ImagePart]) -> list[dict[str, Any]]:
    """Each image written once (an existing file of the same hash is the same image);
    their references. Raises OSError when one cannot be written."""
    directory = images_dir(session_path)
    refs = []
    for image in images:
        digest = image.digest()
        path = directory / f"{digest}.{EXTENSIONS.get(image.mime_type, 'bin')}"
        if not path.exists():
            directory.mkdir(mode=0o700, parents=True, exist_ok=True)
            _write_new(path, base64.b64decode(image.data))
        refs.append(image_ref(image, digest))
    return refs


def image_ref(image: ImagePart, digest: str | None = None) -> dict[str, Any]:
    """What a message record holds of an image: its name here, never its bytes."""
    return {"sha256": digest or image.digest(), "mimeType": image.mime_type, "size": image.size}


def _write_new(path: Path, data: bytes) -> None:
    """Whole or not at all: a kill mid-write leaves a temporary file, never a cut image."""
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC, 0o600)
    try:
        with os.fdopen(fd, "wb") as stream:
            stream.write(data)
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            temporary.unlink()
        raise


def check_refs(value: Any) -> str | None:
    """What is wrong with a message's `images`, or None."""
    if not isinstance(value, list):
        return "a message whose images is not a list"
    for ref in value:
        if not isinstance(ref, dict) or not _is_digest(ref.get("sha256")):
            return "an image reference without its sha256"
        if ref.get("mimeType") not in EXTENSIONS:
            return "an image reference of no image type agentcli stores"
    return None


def _is_digest(value: Any) -> bool:
    """64 lowercase hex digits: the reference names a file here, never a path elsewhere."""
    return isinstance(value, str) and len(value) == 64 and all(c in HEX for c in value)


HEX = frozenset("0123456789abcdef")
READ_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC


def read_stored(path: Path, size: Any, max_bytes: int) -> bytes | str:
    """A stored image's bytes when the file is what its record says, else why not. Both
    the recorded size and `max_bytes` are checked before the file is opened, and the file's
    own size before a byte is read: a 2 GB file put in its place is never read. Opened
    non-blocking (a FIFO cannot hang the read), a link not followed, regular files only."""
    if not isinstance(size, int) or isinstance(size, bool) or size < 0:
        return "no recorded size"
    if size > max_bytes:
        return "over images.max_bytes"
    try:
        fd = os.open(path, READ_FLAGS)
    except FileNotFoundError:
        return "missing"
    except OSError as error:
        return "a link, not followed" if error.errno == errno.ELOOP else "unreadable"
    try:  # checked before fdopen, which refuses a directory with an error of its own
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            return f"{kind_of(info.st_mode)}, not a regular file"
        if info.st_size != size:
            return "not of its recorded size"
        with os.fdopen(fd, "rb", closefd=False) as stream:
            data = stream.read(size + 1)
    finally:
        os.close(fd)
    return data if len(data) == size else "not of its recorded size"


def load_images(
    session_path: Path, refs: list[dict[str, Any]], max_bytes: int
) -> tuple[list[ImagePart], list[str]]:
    """The images the references name, and why each of the others could not be loaded
    (missing, not a regular file of their recorded size, over `max_bytes`, or not the
    bytes their hash names): those stay their descriptions in the message text."""
    import hashlib

    directory = images_dir(session_path)
    images, lost = [], []
    for ref in refs:
        path = directory / f"{ref['sha256']}.{EXTENSIONS[ref['mimeType']]}"
        data = read_stored(path, ref.get("size"), max_bytes)
        if isinstance(data, str):
            lost.append(data)
            continue
        kind = image_type(data[:16])
        if hashlib.sha256(data).hexdigest() != ref["sha256"] or kind is None:
            lost.append("not the image its hash names")
            continue
        images.append(ImagePart.of_bytes(data, kind))  # its bytes' type, whatever was recorded
    return images, lost


def describe_ref(ref: dict[str, Any]) -> str:
    """An image as its record names it, for `sessions show`: its file is not opened."""
    size = ref.get("size")
    shown = human_size(size) if isinstance(size, int) and not isinstance(size, bool) else "?"
    return f"{ref['mimeType']}, {shown}, sha256 {ref['sha256'][:12]}"


def remove_images(session_path: Path) -> None:
    import shutil

    shutil.rmtree(images_dir(session_path), ignore_errors=True)
