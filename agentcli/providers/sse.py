"""Incremental Server-Sent Events decoding: lines in, (event, data) messages out."""

from __future__ import annotations

from agentcli.records import dataclass


@dataclass(frozen=True, slots=True)
class SSEMessage:
    event: str  # "message" unless the server named it
    data: str


class SSEDecoder:
    """Feed it the body's lines (without line endings); it returns each message when the
    blank line that ends it arrives. Comment lines (":" keep-alives) are dropped."""

    def __init__(self) -> None:
        self._event = ""
        self._data: list[str] = []

    def feed(self, line: str) -> SSEMessage | None:
        line = line.rstrip("\r\n")
        if not line:
            return self._dispatch()
        if line.startswith(":"):
            return None
        name, _, value = line.partition(":")
        value = value.removeprefix(" ")
        if name == "data":
            self._data.append(value)
        elif name == "event":
            self._event = value
        return None

    def flush(self) -> SSEMessage | None:
        """A message left open when the body ended."""
        return self._dispatch()

    def _dispatch(self) -> SSEMessage | None:
        if not self._data:
            self._event = ""
            return None
        message = SSEMessage(self._event or "message", "\n".join(self._data))
        self._event, self._data = "", []
        return message
