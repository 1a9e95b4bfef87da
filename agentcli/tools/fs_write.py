"""Writing files safely: atomically (temporary file in the same directory, then rename),
keeping the mode of a replaced file, and never through a directory that has moved out of
the workspace since it was resolved."""

from __future__ import annotations

import contextlib
import os
import secrets
from pathlib import Path

from agentcli.tools.base import ToolFailure
from agentcli.workspace import Workspace


def _fd_path(fd: int) -> Path | None:
    """The real path of an open directory (Linux and others with /proc or /dev/fd)."""
    for base in ("/proc/self/fd", "/dev/fd"):
        link = f"{base}/{fd}"
        if os.path.islink(link):
            return Path(os.readlink(link))
    return None


def atomic_write(workspace: Workspace, target: Path, data: bytes, *, must_be_inside: bool) -> None:
    """Writes `data` to `target` (resolved, absolute). The parent directory is opened once
    and everything happens relative to it, so a swapped symlink cannot redirect the write."""
    parent, name = target.parent, target.name
    try:
        dir_fd = os.open(parent, os.O_RDONLY | os.O_DIRECTORY)
    except FileNotFoundError:
        raise ToolFailure(f"directory {workspace.relative(parent)} does not exist") from None
    except NotADirectoryError:
        raise ToolFailure(f"{workspace.relative(parent)} is not a directory") from None
    except PermissionError:
        raise ToolFailure(f"permission denied: {workspace.relative(parent)}") from None
    try:
        opened = _fd_path(dir_fd)
        if must_be_inside and opened is not None and not workspace.contains(opened):
            raise ToolFailure(
                f"{workspace.relative(parent)} moved outside the workspace; not writing"
            )
        mode = None
        with contextlib.suppress(FileNotFoundError):
            existing = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
            if not (existing.st_mode & 0o170000 == 0o100000):
                raise ToolFailure(f"{workspace.relative(target)} exists and is not a regular file")
            mode = existing.st_mode & 0o7777
        temp = f".{name}.{secrets.token_hex(4)}.agentcli-tmp"
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW
        try:
            fd = os.open(temp, flags, 0o666, dir_fd=dir_fd)
        except PermissionError:
            raise ToolFailure(
                f"permission denied: cannot write in {workspace.relative(parent)}"
            ) from None
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
    finally:
        os.close(dir_fd)


def make_parents(workspace: Workspace, directory: Path) -> None:
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except FileExistsError:
        raise ToolFailure(
            f"{workspace.relative(directory)} exists and is not a directory"
        ) from None
    except NotADirectoryError:
        raise ToolFailure(f"a parent of {workspace.relative(directory)} is a file") from None
    except PermissionError:
        raise ToolFailure(
            f"permission denied: cannot create {workspace.relative(directory)}"
        ) from None
