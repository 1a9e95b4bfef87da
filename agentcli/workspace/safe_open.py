"""Opening a checked path so that what is used is what was checked.

A path is resolved (realpath) and checked first; then it is opened again by walking
its components one at a time through directory file descriptors with O_NOFOLLOW. A
resolved path has no symlinks left, so a symlink met on the walk was swapped in after
the check: the open fails instead of following it out. This walk was chosen over
openat2(RESOLVE_BENEATH): Python's os module has no openat2, a ctypes call is Linux-only
(5.6+) and RESOLVE_BENEATH still follows symlinks that stay beneath, while the walk works
the same on every POSIX system and lets each component be checked as it is opened.

Regular files are opened with O_NONBLOCK and checked with fstat, so a FIFO, socket or
device is refused without blocking on it."""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import stat
from pathlib import Path

_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | _CLOEXEC


class UnsafePath(OSError):
    """The path changed under the walk (a symlink appeared) or is not a regular file."""


_SPECIAL_KINDS = (
    (stat.S_ISFIFO, "a FIFO (named pipe)"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
)


def special_kind(mode: int) -> str | None:
    """What kind of special file `mode` is, or None for a file, directory or link."""
    for test, kind in _SPECIAL_KINDS:
        if test(mode):
            return kind
    return None


def _components(path: Path, base: Path) -> tuple[str, ...]:
    if path == base:
        return ()
    return path.relative_to(base).parts


def _step(dir_fd: int, name: str, *, create: bool) -> int:
    """Opens directory `name` below `dir_fd` without following a symlink."""
    try:
        return os.open(name, _DIR_FLAGS, dir_fd=dir_fd)
    except FileNotFoundError:
        if not create:
            raise
        with contextlib.suppress(FileExistsError):
            os.mkdir(name, 0o777, dir_fd=dir_fd)
        return _step(dir_fd, name, create=False)
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.ENOTDIR) and _is_link(dir_fd, name):
            raise UnsafePath(
                errno.ELOOP,
                f"{name} became a symbolic link after the path was checked; not following it",
            ) from None
        raise


def _is_link(dir_fd: int, name: str) -> bool:
    try:
        return stat.S_ISLNK(os.stat(name, dir_fd=dir_fd, follow_symlinks=False).st_mode)
    except OSError:
        return False


def open_directory(path: Path, base: Path, *, create: bool = False) -> int:
    """An fd of directory `path` (resolved, below or equal to `base`), reached from `base`
    without following symlinks; missing directories are made when `create` is true."""
    fd = os.open(base, _DIR_FLAGS)  # base is resolved: a symlink here was swapped in
    try:
        for name in _components(path, base):
            next_fd = _step(fd, name, create=create)
            os.close(fd)
            fd = next_fd
    except BaseException:
        os.close(fd)
        raise
    return fd


def open_parent(path: Path, base: Path, *, create: bool = False) -> int:
    """An fd of the directory holding `path`, as open_directory."""
    return open_directory(path.parent, base, create=create)


def open_regular(dir_fd: int, name: str) -> int:
    """Opens `name` in `dir_fd` for reading: a regular file, not a symlink, never blocking
    on a FIFO or device. Raises IsADirectoryError for a directory."""
    info = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
    _refuse_kind(info.st_mode)
    try:
        fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | _CLOEXEC, dir_fd=dir_fd)
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.ENXIO):  # swapped for a link or a socket
            raise UnsafePath(exc.errno, "it changed after it was checked; not opening it") from None
        raise
    try:
        mode = os.fstat(fd).st_mode
        _refuse_kind(mode)
        if stat.S_ISDIR(mode):
            raise IsADirectoryError(errno.EISDIR, "is a directory", name)
        fcntl.fcntl(fd, fcntl.F_SETFL, fcntl.fcntl(fd, fcntl.F_GETFL) & ~os.O_NONBLOCK)
    except BaseException:
        os.close(fd)
        raise
    return fd


def _refuse_kind(mode: int) -> None:
    if stat.S_ISLNK(mode):
        raise UnsafePath(
            errno.ELOOP, "it became a symbolic link after it was checked; not following it"
        )
    kind = special_kind(mode)
    if kind:
        raise UnsafePath(
            errno.EINVAL, f"it is {kind}, not a regular file; file tools do not open those"
        )


def read_regular(path: Path, base: Path, limit: int = -1) -> bytes:
    """The bytes (at most `limit`) of the regular file `path`, opened as open_regular does."""
    dir_fd = open_parent(path, base)
    try:
        fd = open_regular(dir_fd, path.name)
    finally:
        os.close(dir_fd)
    with os.fdopen(fd, "rb") as stream:
        return stream.read(limit)
