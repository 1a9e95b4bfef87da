"""Incremental Server-Sent Events decoding: lines in, (event, data) messages out."""

from __future__ import annotations

import re
from typing import NamedTuple

_LINE_END = re.compile("\r\n|\r|\n")
# One line of an event stream: a server that never ends one (no line end, ever) is cut
# here, not held in memory until --timeout. A whole answer in one event fits many times.
MAX_LINE_CHARS = 16 * 1024 * 1024


class LineTooLong(ValueError):
    """A line of the stream passed MAX_LINE_CHARS without ending."""


class SSEMessage(NamedTuple):
    """A tuple: a stream has one per piece of the answer, and a tuple is made in C."""

    event: str  # "message" unless the server named it
    data: str


class SSEDecoder:
    """Feed it the body's lines (without line endings), or the body's text as it arrives
    (`decode`); it returns each message when the blank line that ends it arrives. Comment
    lines (":" keep-alives) are dropped."""

    def __init__(self) -> None:
        self._event = ""
        self._data: list[str] = []
        self._rest = ""  # the start of a line whose end has not arrived
        self._after_cr = False  # the last piece ended with CR: a LF first is its CR LF

    def decode(self, text: str) -> list[SSEMessage]:
        """The messages `text` (the next piece of the body, decoded) completes. Lines end
        at CR LF, LF or CR, as the SSE spec says, and nowhere else: str.splitlines() (and
        so httpx's aiter_lines) also breaks at U+2028, U+0085 and others, which JSON
        carries unescaped inside a string — a model's text would cut its event in two."""
        if self._after_cr and text.startswith("\n"):
            text = text[1:]
        self._after_cr = text.endswith("\r")
        lines = text.split("\n") if "\r" not in text else _LINE_END.split(text)
        lines[0] = self._rest + lines[0]
        self._rest = lines.pop()
        if len(self._rest) > MAX_LINE_CHARS:
            raise LineTooLong(f"a line of more than {MAX_LINE_CHARS:,} characters, not ended")
        messages = []
        for line in lines:
            if line.startswith("data:"):  # nearly every line but the blank ones: inline
                self._data.append(line[6:] if line.startswith("data: ") else line[5:])
            elif not line and len(self._data) == 1 and not self._event:  # a one-line event
                messages.append(SSEMessage("message", self._data.pop()))
            elif line or self._data or self._event:
                message = self.feed(line)
                if message is not None:
                    messages.append(message)
        return messages

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
        if self._rest:
            rest, self._rest = self._rest, ""
            self.feed(rest)
        return self._dispatch()

    def _dispatch(self) -> SSEMessage | None:
        if not self._data:
            self._event = ""
            return None
        message = SSEMessage(self._event or "message", "\n".join(self._data))
        self._event, self._data = "", []
        return message
