"""Streams Markdown to a terminal at a cost per chunk that does not grow with the answer.

Completed blocks (paragraphs, lists, closed code fences) are rendered once and printed;
only the open block is re-rendered, by a throttled live region, never once per chunk.

Terminals that re-wrap lines on a resize (tmux, most others) turn a live region drawn
at 120 columns into more rows at 40 than were drawn; erasing only the rows drawn would
leave the rest as stray lines. So the region's rows are drawn without trailing padding,
kept to the newest few, and erased by the rows they take at the width of the moment
(xterm and the Linux console cut lines instead: there, by the rows drawn). Printed
blocks are separated by exactly one blank line. Where styles are off (NO_COLOR,
TERM=dumb) headings and quotes keep their `#` and `>`; a dumb terminal gets no live
region at all, only finished blocks."""

from __future__ import annotations

import functools
import math
import os
from typing import Any, ClassVar

from agentcli.output import terminal

FENCES = ("```", "~~~")


@functools.cache
def _markdown_classes() -> tuple[type, type]:
    """Rich's Markdown, and one that keeps `#` on headings and `>` on quotes."""
    from rich.markdown import BlockQuote, Heading, Markdown
    from rich.segment import Segment
    from rich.text import Text

    class MarkedHeading(Heading):
        def __rich_console__(self, console: Any, options: Any) -> Any:
            text = Text("#" * int(self.tag[1:]) + " ") + self.text.copy()
            text.justify = "left"
            yield text

    class MarkedQuote(BlockQuote):
        def __rich_console__(self, console: Any, options: Any) -> Any:
            render_options = options.update(width=options.max_width - 2)
            for line in console.render_lines(self.elements, render_options, style=self.style):
                yield Segment("> ", self.style)
                yield from line
                yield Segment("\n")

    class MarkedMarkdown(Markdown):
        elements: ClassVar[dict[str, type]] = {
            **Markdown.elements, "heading_open": MarkedHeading, "blockquote_open": MarkedQuote
        }  # fmt: skip

    return Markdown, MarkedMarkdown


def markdown(text: str, code_theme: str) -> Any:
    plain, marked = _markdown_classes()
    return (marked if terminal.plain_markdown() else plain)(text, code_theme=code_theme)


class _OpenBlock:
    """The live region's renderable: the newest rows of the open block, without trailing
    padding (padding would make a narrower terminal re-wrap them into more rows)."""

    def __init__(self, stream: MarkdownStream) -> None:
        self.stream = stream

    def __rich_console__(self, console: Any, options: Any) -> Any:
        from rich.segment import Segment

        block = markdown(self.stream.open_text(), self.stream.code_theme)
        lines = console.render_lines(block, options, pad=False)
        keep = max(3, options.size.height // 3)  # room to re-wrap three times over
        lines = [_rstrip(line) for line in lines[-keep:]]
        self.stream.drawn = [Segment.get_line_length(line) for line in lines]
        for number, line in enumerate(lines):
            yield from line
            if number < len(lines) - 1:
                yield Segment.line()


def _rstrip(line: list[Any]) -> list[Any]:
    from rich.segment import Segment

    line = list(line)
    while line and not line[-1].control and not line[-1].text.rstrip():
        line.pop()
    if line and not line[-1].control:
        last = line[-1]
        line[-1] = Segment(last.text.rstrip(), last.style)
    return line


class _Block:
    """A finished block as printed: its Markdown source and its rendered lines."""

    def __init__(self, markup: str, lines: Any) -> None:
        self.markup = markup
        self.lines = lines

    def __rich_console__(self, console: Any, options: Any) -> Any:
        yield self.lines


def _has_text(line: list[Any]) -> bool:
    return any(segment.text.strip() for segment in line if not segment.control)


def reflows() -> bool:
    """Whether the terminal re-wraps its lines on a resize. xterm and the Linux console
    do not (they cut lines); tmux and nearly every other terminal in use do."""
    if "TMUX" in os.environ:
        return True
    return "XTERM_VERSION" not in os.environ and os.environ.get("TERM") != "linux"


def _reflowing_render(stream: MarkdownStream, renderable: Any) -> Any:
    """Rich's LiveRender, erasing the rows the region's lines take at today's width."""
    from rich.control import Control, ControlType
    from rich.live_render import LiveRender

    up = ((ControlType.CURSOR_UP, 1), (ControlType.ERASE_IN_LINE, 2))

    class ReflowingRender(LiveRender):
        def _rows(self) -> int:
            assert self._shape is not None
            if not stream.drawn or not reflows():
                return self._shape[1]
            width = max(1, stream.console.size.width)
            return sum(max(1, math.ceil(cells / width)) for cells in stream.drawn)

        def position_cursor(self) -> Control:
            if self._shape is None:
                return Control()
            erase = (ControlType.ERASE_IN_LINE, 2)
            return Control(ControlType.CARRIAGE_RETURN, erase, *(up * (self._rows() - 1)))

        def restore_cursor(self) -> Control:
            if self._shape is None:
                return Control()
            return Control(ControlType.CARRIAGE_RETURN, *(up * self._rows()))

    return ReflowingRender(renderable, vertical_overflow="crop")


class MarkdownStream:
    def __init__(self, console: Any, *, code_theme: str = "monokai") -> None:
        self.console = console
        self.code_theme = code_theme
        self._block: list[str] = []  # complete lines of the open block
        self._partial: list[str] = []  # pieces of the line being written
        self._in_fence = False
        self._live: Any = None
        self._redraw = console.is_terminal and not console.is_dumb_terminal
        self._printed = False  # a block of this message is on the screen
        self.drawn: list[int] = []  # cells in each row of the live region as last drawn

    def open_text(self) -> str:
        return "\n".join([*self._block, "".join(self._partial)])

    def feed(self, delta: str) -> None:
        if self._live is None and self._redraw:
            from rich.live import Live

            self._live = Live(
                _OpenBlock(self),
                console=self.console,
                refresh_per_second=8,
                transient=True,
                vertical_overflow="crop",
            )
            self._live._live_render = _reflowing_render(self, _OpenBlock(self))
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
        from rich.segment import SegmentLines

        text = "\n".join(self._block)
        self._block = []
        if terminal.dumb() and self.console.file.isatty():
            self.console.size = terminal.size()  # Rich assumes 80 columns there: ask
        lines = self.console.render_lines(markdown(text, self.code_theme), pad=False)
        lines = [_rstrip(line) for line in lines]
        while lines and not _has_text(lines[0]):
            lines.pop(0)
        while lines and not _has_text(lines[-1]):
            lines.pop()
        if not lines:
            return
        if self._printed:
            self.console.line()  # one blank line between blocks, whatever Rich adds
        self.console.print(_Block(text, SegmentLines(lines, new_lines=True)), end="")
        self._printed = True
