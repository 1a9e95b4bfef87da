"""Opening a file someone else may write (a config file, a session, the summary cache) so
that what is there cannot hang or trick agentcli: opened non-blocking (a FIFO put in its
place returns at once instead of waiting for a writer), then read only when it is a
regular file. A link is followed: users keep their configuration in dotfile folders."""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path
from typing import BinaryIO


class NotRegular(OSError):
    """The path names a FIFO, a directory, a device or a socket."""


def kind_of(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "a device"


def open_regular(path: Path | str) -> BinaryIO:
    """The file open for reading in binary; raises FileNotFoundError (and other OSErrors)
    as `open` does, and NotRegular for anything but a regular file."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise NotRegular(errno.EINVAL, f"it is {kind_of(mode)}, not a regular file")
        os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    return os.fdopen(fd, "rb")


def read_bytes(path: Path | str) -> bytes:
    """A regular file's bytes; raises as open_regular does."""
    with open_regular(path) as stream:
        return stream.read()


def read_text(path: Path | str, errors: str = "strict") -> str:
    """A regular file's text (UTF-8); raises as open_regular does, and UnicodeDecodeError
    (with `errors` "strict")."""
    return read_bytes(path).decode("utf-8", errors)
