"""Bounded capture of a command's output: memory stays constant whatever the command
prints. Keeps the head and the tail for the model, spills everything (up to a cap) to a
file the model can page through, and remembers the latest lines for live display.

The head and the tail never depend on the spill file: when it cannot be written (a full or
read-only data directory), spilling stops, `on_spill_error` hears why once, and the model
still gets what fits in the limit, with a marker that says the rest was not saved."""

from __future__ import annotations

import contextlib
from collections import deque
from collections.abc import Callable
from pathlib import Path
from typing import BinaryIO

DEFAULT_LIMIT_CHARS = 30_000
DEFAULT_SPILL_CAP = 64 * 1024 * 1024


class OutputCapture:
    def __init__(
        self,
        limit: int = DEFAULT_LIMIT_CHARS,
        spill_path: Path | None = None,
        spill_cap: int = DEFAULT_SPILL_CAP,
        on_spill_error: Callable[[Path, OSError], None] | None = None,
        unsaved: str | None = None,
    ) -> None:
        """`unsaved`: why there is no spill file (nothing can be saved), for the marker."""
        self.head_limit = limit // 2
        self.tail_limit = limit - self.head_limit
        self.head = bytearray()
        self._tail: deque[bytes] = deque()
        self._tail_size = 0
        self.total = 0  # bytes seen
        self.spill_path = spill_path
        self.spill_cap = spill_cap
        self._spill: BinaryIO | None = None
        self._spilled = 0
        self._recent = bytearray()  # the end of the output, for live display
        self.on_spill_error = on_spill_error
        self.unsaved = unsaved  # why the output is not saved whole, once it is not

    def feed(self, chunk: bytes) -> None:
        self.total += len(chunk)
        room = self.head_limit - len(self.head)
        if room > 0:
            self.head += chunk[:room]
            chunk_rest = chunk[room:]
        else:
            chunk_rest = chunk
        if chunk_rest:
            self._tail.append(chunk_rest)
            self._tail_size += len(chunk_rest)
            while self._tail_size - len(self._tail[0]) >= self.tail_limit:
                self._tail_size -= len(self._tail.popleft())
        if len(chunk) >= 4096:
            self._recent = bytearray(chunk[-4096:])
        else:
            self._recent += chunk
            del self._recent[:-4096]
        self._write_spill(chunk)

    def _write_spill(self, chunk: bytes) -> None:
        if self.spill_path is None or self._spilled >= self.spill_cap:
            return
        try:
            if self._spill is None:
                self.spill_path.parent.mkdir(parents=True, exist_ok=True)
                self._spill = open(self.spill_path, "wb")  # noqa: SIM115 - closed in close()
            part = chunk[: self.spill_cap - self._spilled]
            self._spill.write(part)
            self._spilled += len(part)
        except OSError as error:
            self._stop_spilling(error)

    def _stop_spilling(self, error: OSError) -> None:
        path, self.spill_path = self.spill_path, None
        self.unsaved = error.strerror or str(error)
        spill, self._spill = self._spill, None
        if spill is not None:
            with contextlib.suppress(OSError):  # buffered bytes fail again: nothing to keep
                spill.close()
            if path is not None:
                with contextlib.suppress(OSError):
                    path.unlink()  # a cut copy would claim to be the whole output
        if self.on_spill_error is not None and path is not None:
            self.on_spill_error(path, error)

    def close(self) -> None:
        if self._spill is not None:
            try:
                self._spill.close()
            except OSError as error:  # the last buffered bytes did not fit
                self._stop_spilling(error)
            self._spill = None

    @property
    def truncated(self) -> bool:
        return self.total > self.head_limit + self.tail_limit

    def latest_lines(self, count: int = 3) -> list[str]:
        text = self._recent.decode("utf-8", errors="replace")
        return [line for line in text.splitlines() if line.strip()][-count:]

    def text(self) -> str:
        """Head and tail, decoded lossily, with a marker for what was left out."""
        tail = b"".join(self._tail)
        if not self.truncated:
            return (bytes(self.head) + tail).decode("utf-8", errors="replace")
        tail = tail[-self.tail_limit :]
        omitted = self.total - len(self.head) - len(tail)
        where = ""
        if self.unsaved is not None:
            where = f"; the whole output was not saved ({self.unsaved})"
        elif self.spill_path is not None:
            whole = (
                "the full output"
                if self.total <= self.spill_cap
                else (f"the first {self.spill_cap:,} bytes")
            )
            where = f"; {whole} is in {self.spill_path} (read it with read_file)"
        marker = f"\n[… {omitted:,} bytes omitted{where} …]\n"
        return (
            bytes(self.head).decode("utf-8", errors="replace")
            + marker
            + tail.decode("utf-8", errors="replace")
        )
