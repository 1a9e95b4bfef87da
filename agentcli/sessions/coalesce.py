"""Streamed pieces, coalesced for the session file: one line per piece made a long answer a
huge file. A piece that comes after a quiet moment is written at once (so `kill -9` right
after text was shown keeps it); a burst is written at most every COALESCE_SECONDS, as one
event carrying the pieces' text joined."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any

COALESCE_SECONDS = 0.05
# The streamed event types, each with the field that says which message or call it extends.
DELTA_KEYS = {
    "TEXT_MESSAGE_CONTENT": "messageId",
    "TOOL_CALL_ARGS": "toolCallId",
    "REASONING_MESSAGE_CONTENT": "messageId",
}


class Coalescer:
    """Takes wire events; hands `write` each one to record, streamed pieces joined."""

    def __init__(self, write: Callable[[dict[str, Any]], None]) -> None:
        self.write = write
        self._pending: dict[str, Any] | None = None  # a piece not yet written
        self._key: tuple[str, Any] = ("", None)
        self._more: list[str] = []  # later pieces of the same message or call
        self._last_write = 0.0
        self._timer: asyncio.TimerHandle | None = None

    def add(self, wire: dict[str, Any]) -> None:
        id_key = DELTA_KEYS.get(wire["type"])
        if id_key is None:
            self.flush()
            self.write(wire)
            return
        key = (wire["type"], wire.get(id_key))
        if self._pending is not None and self._key != key:
            self.flush()
        if self._pending is None:
            self._pending, self._key = wire, key
        else:
            self._more.append(wire.get("delta", ""))
        if time.monotonic() - self._last_write >= COALESCE_SECONDS:
            self.flush()
        elif self._timer is None:
            try:
                loop = asyncio.get_running_loop()
            except RuntimeError:  # no event loop to flush later: now, then
                self.flush()
            else:
                self._timer = loop.call_later(COALESCE_SECONDS, self.flush)

    def extend(self, kind: str, owner: Any, delta: str) -> bool:
        """A streamed piece of the message or call already waiting to be written (`owner`:
        its id): added without building its wire form. False when it is not that one; the
        caller then adds the piece's wire form as usual."""
        if self._pending is None or self._key != (kind, owner):
            return False
        self._more.append(delta)
        if time.monotonic() - self._last_write >= COALESCE_SECONDS:
            self.flush()
        return True

    def flush(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        pending, self._pending = self._pending, None
        if pending is None:
            return
        if self._more:
            pending["delta"] = pending.get("delta", "") + "".join(self._more)
            self._more = []
        self.write(pending)
        self._last_write = time.monotonic()
