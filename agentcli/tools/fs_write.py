"""Writing files safely: atomically (temporary file in the same directory, then rename),
keeping the mode of a replaced file, and through a directory opened without following
symlinks (agentcli.workspace.safe_open), so a swapped symlink cannot redirect the write."""

from __future__ import annotations

import contextlib
import os
import stat
from pathlib import Path

from agentcli.tools.base import ToolFailure
from agentcli.workspace.safe_open import UnsafePath, open_parent


def open_parent_for(path: Path, base: Path, shown: str, *, create: bool) -> int:
    """The fd of the directory that will hold `path`, with clear failures."""
    try:
        return open_parent(path, base, create=create)
    except FileNotFoundError:
        raise ToolFailure(f"the parent of {shown} does not exist") from None
    except UnsafePath as exc:
        raise ToolFailure(f"{shown}: {exc.strerror}") from None
    except (NotADirectoryError, FileExistsError):
        raise ToolFailure(f"a parent of {shown} is a file, not a directory") from None
    except PermissionError:
        raise ToolFailure(f"permission denied: cannot create the directory of {shown}") from None


def write_at(path: Path, base: Path, shown: str, data: bytes) -> bool:
    """Writes `data` to `path` (resolved, below `base`), making missing parents.
    Returns whether the file existed before."""
    dir_fd = open_parent_for(path, base, shown, create=True)
    try:
        return atomic_write(dir_fd, path.name, shown, data)
    finally:
        os.close(dir_fd)


def atomic_write(dir_fd: int, name: str, shown: str, data: bytes) -> bool:
    """Writes `data` to `name` in the open directory `dir_fd`: a temporary file, then a
    rename. Returns whether a file was replaced."""
    mode = None
    with contextlib.suppress(FileNotFoundError):
        existing = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
        if stat.S_ISDIR(existing.st_mode):
            raise ToolFailure(f"{shown} is a directory")
        if not stat.S_ISREG(existing.st_mode):
            raise ToolFailure(f"{shown} exists and is not a regular file")
        mode = existing.st_mode & 0o7777
    temp = f".{name}.{os.urandom(4).hex()}.agentcli-tmp"
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(temp, flags, 0o666, dir_fd=dir_fd)
    except PermissionError:
        raise ToolFailure(f"permission denied: cannot write {shown}") from None
    try:
        with os.fdopen(fd, "wb") as stream:
            stream.write(data)
            stream.flush()
            os.fsync(stream.fileno())
            if mode is not None:
                os.fchmod(stream.fileno(), mode)
        os.replace(temp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temp, dir_fd=dir_fd)
        raise
    return mode is not None
