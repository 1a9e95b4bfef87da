"""A stdio server's output read in time linear in a line's length.

The SDK's stdio reader (mcp.client.stdio) joins what it holds of a line with each chunk it
receives and splits the whole again: a line of n bytes arriving in 64 KiB chunks costs
n²/64 KiB (a 70 MB result took minutes). It decodes through anyio's TextReceiveStream,
which it names in its module; agentcli gives it WholeLines instead, a TextReceiveStream
that returns text only up to the end of a line (the pieces of a long line kept in a list,
joined once). The SDK then joins an empty buffer with whole lines: linear. What it reads
and when is unchanged: one receive asks for more only while no line is complete. A line
holding a lone surrogate escape (valid JSON, which pydantic refuses: the answer would be
lost) is given with U+FFFD in its place, as agentcli's own JSON reader does.

The SDK has no hook for its reader, so this replaces a name in its module: the one such
place, pinned by tests/test_adapters.py (a release that renames it fails there). The
quadratic join belongs upstream; once fixed there, this module can go."""

from __future__ import annotations

from anyio import EndOfStream
from anyio.streams.text import TextReceiveStream

from agentcli.text.decoding import lone_free_lines


class WholeLines(TextReceiveStream):
    """Text that ends at a line's end (the last piece, at the end of the stream, may not).
    Made as anyio's TextReceiveStream is (its own constructor)."""

    @property
    def held(self) -> list[str]:
        """The line so far, in pieces."""
        return self.__dict__.setdefault("held_pieces", [])

    @held.setter
    def held(self, pieces: list[str]) -> None:
        self.__dict__["held_pieces"] = pieces

    async def receive(self) -> str:
        while True:
            try:
                chunk = await super().receive()
            except EndOfStream:
                if not self.held:
                    raise
                rest, self.held = "".join(self.held), []
                return lone_free_lines(rest)
            end = chunk.rfind("\n") + 1
            if not end:
                self.held.append(chunk)
                continue
            self.held.append(chunk[:end])
            lines = "".join(self.held)
            self.held = [chunk[end:]] if end < len(chunk) else []
            return lone_free_lines(lines)


def install() -> None:
    """The SDK's stdio reader decodes through WholeLines (once; idempotent)."""
    import mcp.client.stdio as stdio

    if getattr(stdio, "TextReceiveStream", None) is TextReceiveStream:
        stdio.TextReceiveStream = WholeLines  # type: ignore[misc]
