"""Bounded capture of a command's output: memory stays constant whatever the command
prints. Keeps the head and the tail for the model, spills everything (up to a cap) to a
file the model can page through, and remembers the latest lines for live display."""

from __future__ import annotations

from collections import deque
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
    ) -> None:
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
        if self._spill is None:
            self.spill_path.parent.mkdir(parents=True, exist_ok=True)
            self._spill = open(self.spill_path, "wb")  # noqa: SIM115 - closed in close()
        part = chunk[: self.spill_cap - self._spilled]
        self._spill.write(part)
        self._spilled += len(part)

    def close(self) -> None:
        if self._spill is not None:
            self._spill.close()
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
        if self.spill_path is not None:
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
