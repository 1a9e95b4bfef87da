"""Streams Markdown to a terminal at a cost per chunk that does not grow with the answer.

Completed blocks (paragraphs, lists, closed code fences) are rendered once and printed;
only the open block is re-rendered, by a throttled live region, never once per chunk."""

from __future__ import annotations

from typing import Any

FENCES = ("```", "~~~")


class _OpenBlock:
    """The live region's renderable: rendered only when the live display refreshes."""

    def __init__(self, stream: MarkdownStream) -> None:
        self.stream = stream

    def __rich__(self) -> Any:
        from rich.markdown import Markdown

        return Markdown(self.stream.open_text(), code_theme=self.stream.code_theme)


class MarkdownStream:
    def __init__(self, console: Any, *, code_theme: str = "monokai") -> None:
        self.console = console
        self.code_theme = code_theme
        self._block: list[str] = []  # complete lines of the open block
        self._partial: list[str] = []  # pieces of the line being written
        self._in_fence = False
        self._live: Any = None

    def open_text(self) -> str:
        return "\n".join([*self._block, "".join(self._partial)])

    def feed(self, delta: str) -> None:
        if self._live is None:
            from rich.live import Live

            self._live = Live(
                _OpenBlock(self),
                console=self.console,
                refresh_per_second=8,
                transient=True,
                vertical_overflow="crop",
            )
            self._live.start()
        if "\n" not in delta:
            self._partial.append(delta)
            return
        head, *middle, tail = delta.split("\n")
        self._partial.append(head)
        self._end_line("".join(self._partial))
        for line in middle:
            self._end_line(line)
        self._partial = [tail] if tail else []

    def close(self) -> None:
        if self._partial:
            self._block.append("".join(self._partial))
            self._partial = []
        self._print_block()
        if self._live is not None:
            self._live.stop()
            self._live = None

    def _end_line(self, line: str) -> None:
        stripped = line.strip()
        if stripped.startswith(FENCES):
            self._block.append(line)
            self._in_fence = not self._in_fence
            if not self._in_fence:
                self._print_block()
            return
        if not stripped and not self._in_fence:
            self._print_block()
            return
        self._block.append(line)

    def _print_block(self) -> None:
        if not self._block:
            return
        from rich.markdown import Markdown

        text = "\n".join(self._block)
        self._block = []
        self.console.print(Markdown(text, code_theme=self.code_theme))
