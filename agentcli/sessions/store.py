"""Session files: one JSON record per line, appended and flushed as it happens.

Each line reaches the kernel as soon as it is written (so `kill -9` at any moment loses
nothing written before), and a background thread fsyncs the file after every batch of
lines (so a machine crash loses at most the last moments). A truncated last line, the mark
of a kill in the middle of a write, is skipped on load with a warning.

One writer at a time: the writer holds an exclusive lock (flock) on the file for as long as
it is open; a second writer waits a little, then gives up with SessionBusyError. Readers
(`sessions list`, `show`, `export`) never lock and read line by line, in bounded memory."""

from __future__ import annotations

import contextlib
import errno
import fcntl
import json
import os
import stat
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, Protocol

from agentcli.errors import AgentCliError
from agentcli.paths import data_dir
from agentcli.records import dataclass

FORMAT_VERSION = 1
LOCK_WAIT_SECONDS = 5.0  # how long a second writer waits for the first to finish


class SessionBusyError(AgentCliError):
    code = "session_busy"


def sessions_dir() -> Path:
    return data_dir() / "sessions"


def new_session_id() -> str:
    return time.strftime("%Y%m%d-%H%M%S") + "-" + os.urandom(3).hex()


def describe_os_error(error: OSError) -> str:
    """`No space left on device`, without Python's `[Errno 28]` and the repeated path."""
    return error.strerror or str(error)


@dataclass(slots=True)
class Cursor:
    """How far a session file has been read: the file (device, inode), the byte offset
    after the last whole line read, and that line's number. A reader that keeps it reads
    only what was appended since (a served thread, run after run)."""

    file: tuple[int, int] = (0, 0)
    offset: int = 0
    line: int = 0


class RecordWriter(Protocol):
    """What records a session: SessionWriter (its file's lines), or a store's rows
    (agentcli.sessions.rows.RowWriter)."""

    lines: int

    def write(self, record: dict[str, Any]) -> None: ...
    def store_images(self, images: list[Any]) -> list[dict[str, Any]]: ...
    def end(self) -> tuple[tuple[int, int], int]: ...
    def close(self) -> None: ...


class SessionWriter:
    """Appends records to one session file, holding its lock. Raises OSError when the file
    cannot be opened or written (full disk, read-only directory), SessionBusyError when
    another writer keeps the lock beyond `lock_wait` seconds."""

    def __init__(self, path: Path, *, lock_wait: float = LOCK_WAIT_SECONDS) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        # A raw descriptor, not a buffered file: a failed write leaves no buffered bytes
        # behind to fail again at close, and each line goes to the kernel in one write.
        # Non-blocking: a FIFO in the session's place fails at once (no reader) instead of
        # waiting for one; anything but a regular file is refused.
        flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC | os.O_NONBLOCK
        self._fd = os.open(path, flags, 0o600)
        try:
            mode = os.fstat(self._fd).st_mode
            if not stat.S_ISREG(mode):
                from agentcli.regular_files import NotRegular, kind_of

                raise NotRegular(errno.EINVAL, f"it is {kind_of(mode)}, not a regular file")
            os.set_blocking(self._fd, True)
            _lock(self._fd, path, lock_wait)
            if not _ends_with_newline(path):  # a kill cut the last line: end it, so it
                self._write_bytes(b"\n")  # stays a lone bad line
        except BaseException:
            os.close(self._fd)
            raise
        self.lines = 0  # written by this writer, each one whole line
        self._dirty = threading.Event()
        self._closing = False
        self._syncer = threading.Thread(target=self._sync_loop, name="session-fsync", daemon=True)
        self._syncer.start()

    def write(self, record: dict[str, Any]) -> None:
        self._write_bytes(record_line(record))  # in the kernel: safe from kill -9 from here on
        self.lines += 1
        self._dirty.set()

    def store_images(self, images: list[Any]) -> list[dict[str, Any]]:
        """The images written once each beside the file; their references. Raises OSError."""
        from agentcli.sessions.images import store_images

        return store_images(self.path, images)

    def end(self) -> tuple[tuple[int, int], int]:
        """The file (device, inode) and its size, as the lock holder sees it."""
        info = os.fstat(self._fd)
        return (info.st_dev, info.st_ino), info.st_size

    def _write_bytes(self, data: bytes) -> None:
        view = memoryview(data)
        while view:
            written = os.write(self._fd, view)
            view = view[written:]

    def _sync_loop(self) -> None:
        while True:
            self._dirty.wait()
            self._dirty.clear()
            if self._closing:
                return
            try:
                os.fsync(self._fd)
            except (OSError, ValueError):
                return

    def close(self) -> None:
        if self._fd < 0:
            return
        with contextlib.suppress(OSError):
            os.fsync(self._fd)
        self._closing = True
        self._dirty.set()
        self._syncer.join(timeout=2)
        os.close(self._fd)  # releases the lock
        self._fd = -1


def record_line(record: dict[str, Any]) -> bytes:
    """One record as its line of UTF-8. A lone surrogate that reached it (a name from the
    OS, say) is written as agentcli.text.decoding shows it, never raised as an error."""
    line = json.dumps(record, ensure_ascii=False, separators=(",", ":")) + "\n"
    try:
        return line.encode("utf-8")
    except UnicodeEncodeError:
        from agentcli.text.decoding import writable

        return record_line(writable(record))


def _lock(fd: int, path: Path, wait: float) -> None:
    deadline = time.monotonic() + wait
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return
        except BlockingIOError:
            if time.monotonic() >= deadline:
                raise SessionBusyError(
                    f"session {path.stem} is in use by another agentcli (waited {wait:g}s); "
                    "let that one finish, or start a new session (without --continue/--resume)"
                ) from None
            time.sleep(0.05)


def _ends_with_newline(path: Path) -> bool:
    from agentcli.regular_files import open_regular

    try:
        with open_regular(path) as stream:
            stream.seek(-1, os.SEEK_END)
            return stream.read(1) == b"\n"
    except (FileNotFoundError, OSError):  # missing or empty
        return True


class SessionReadError(AgentCliError):
    """A session file or the sessions directory that cannot be read at all."""

    code = "session_unreadable"


def unreadable(path: Path, error: OSError) -> SessionReadError:
    return SessionReadError(f"cannot read {path}: {describe_os_error(error)}")


def iter_lines(
    path: Path, skip: Callable[[int, str], None], cursor: Cursor | None = None
) -> Iterator[tuple[int, dict[str, Any]]]:
    """(line number, record) for each line that is a JSON object, one line at a time
    (memory stays bounded however long the file is). Bytes are decoded as text from
    outside is (agentcli.text.decoding), so an invalid byte costs at most its line. A line
    that is cut off, damaged or not an object goes to `skip(number, why)`. With `cursor`,
    reading starts where it points and it is moved past each whole line read."""
    from agentcli.regular_files import open_regular
    from agentcli.text.decoding import contents, loads

    try:  # non-blocking: a FIFO in a session's place cannot hang `sessions list` or a resume
        stream = open_regular(path)
    except OSError as error:
        raise unreadable(path, error) from None
    with stream:
        try:
            number = 0
            if cursor is not None:
                info = os.fstat(stream.fileno())
                cursor.file = (info.st_dev, info.st_ino)
                stream.seek(cursor.offset)
                number = cursor.line
            line = stream.readline()
            while line:
                number += 1
                following = stream.readline()
                if cursor is not None and line.endswith(b"\n"):
                    cursor.offset, cursor.line = cursor.offset + len(line), number
                if line.strip():
                    try:
                        record = loads(contents(line))
                    except ValueError:
                        why = "damaged: not JSON" if following else "the last line, cut off"
                        skip(number, why)
                    else:
                        if isinstance(record, dict):
                            yield number, record
                        else:
                            skip(number, "JSON, but not a record")
                line = following
        except OSError as error:
            raise unreadable(path, error) from None
