"""Which files of a directory another process opened or read, by the kernel's own account
(Linux inotify, through ctypes): a test that a command never opens a file does not depend
on timing, memory or atime. The kernel queues each event as the open or read happens, so
once the process has exited, everything it did is in the queue."""

from __future__ import annotations

import ctypes
import errno
import os
import struct
from pathlib import Path
from types import TracebackType

IN_ACCESS = 0x001  # read
IN_OPEN = 0x020
_EVENT = struct.Struct("iIII")  # wd, mask, cookie, len; then len bytes of name


class Watch:
    """Opens and reads of the entries of `directory` from now until `events()`."""

    def __init__(self, directory: Path) -> None:
        self.libc = ctypes.CDLL(None, use_errno=True)
        self.fd = self.libc.inotify_init1(os.O_NONBLOCK | os.O_CLOEXEC)
        if self.fd < 0:
            raise OSError(ctypes.get_errno(), "inotify_init1")
        wd = self.libc.inotify_add_watch(self.fd, os.fsencode(directory), IN_OPEN | IN_ACCESS)
        if wd < 0:
            os.close(self.fd)
            raise OSError(ctypes.get_errno(), f"inotify_add_watch {directory}")

    def events(self) -> list[tuple[str, str]]:
        """(name, "open" or "read") for each event queued so far, in order."""
        found: list[tuple[str, str]] = []
        while True:
            try:
                data = os.read(self.fd, 65536)
            except OSError as error:
                if error.errno == errno.EAGAIN:
                    return found
                raise
            at = 0
            while at < len(data):
                _, mask, _, size = _EVENT.unpack_from(data, at)
                raw = data[at + _EVENT.size : at + _EVENT.size + size]
                name = raw.split(b"\0", 1)[0].decode("utf-8", "replace")
                if mask & IN_OPEN:
                    found.append((name, "open"))
                if mask & IN_ACCESS:
                    found.append((name, "read"))
                at += _EVENT.size + size

    def close(self) -> None:
        os.close(self.fd)

    def __enter__(self) -> Watch:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        value: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()
