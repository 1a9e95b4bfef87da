"""Streams Markdown to a terminal so that what the terminal shows at the end is what the
whole answer rendered in one piece shows, whatever the pieces were.

A block (a paragraph, a list, a table, a closed code fence) is final once a blank line or
its closing fence ends it: it is rendered once, printed, and never touched again. The block
still open is shown under it in a live region that this module alone draws: its newest
rows, redrawn at most every REDRAW_SECONDS (and once more when the stream pauses), never
once per piece. To redraw, the cursor goes up over exactly the rows the region takes on the
screen now: each row drawn, counted in cells (a wide character is two), against the width
of the moment — a terminal that re-wraps its lines on a resize (tmux, most others) turns one
row drawn at 120 columns into three at 40; xterm and the Linux console cut lines instead, so
there a row stays a row. The region's rows carry no trailing padding (padding would make a
narrower terminal re-wrap them into more rows) and are kept to a third of the screen and to
what a re-wrap can push up without reaching above the screen's top (agentcli.ui.live_room):
a tall open block has its settled first rows printed for good as it grows, at the width it
began at, and only its newest rows redrawn. Erasing never clears from the screen's top-left
corner, which tmux would take for a whole-screen clear and keep a copy of in its history.

A link shows its URL after its text, `text (URL)`, unless the terminal is known to draw
OSC 8 hyperlinks (agentcli.output.terminal.shows_hyperlinks).

Printed blocks are separated by exactly one blank line. Where styles are off (NO_COLOR,
TERM=dumb) headings and quotes keep their `#` and `>`; a dumb terminal gets no live region
at all, only finished blocks."""

from __future__ import annotations

import functools
import os
import time
from collections.abc import Callable
from typing import Any, ClassVar

from agentcli.output import terminal
from agentcli.ui import live_room

FENCES = ("```", "~~~")
REDRAW_SECONDS = 0.1  # the live region's frame time: ten redraws a second at most
# A redraw renders the whole open block (a table's widths are the whole table's), so a
# long one costs more each time: the next waits FRAME_SHARE times what the last took, and
# drawing stays a fifth of the time however long the block grows (it was quadratic: an
# 800-row table streamed a row a piece took 49 s to reach the prompt, Ctrl-C unheard).
FRAME_SHARE = 4.0
REDRAW_VARIABLE = "AGENTCLI_REDRAW_SECONDS"  # 0 redraws at every piece (the tests' worst case)


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
            **Markdown.elements,
            "heading_open": MarkedHeading,
            "blockquote_open": MarkedQuote,
        }

    return Markdown, MarkedMarkdown


def markdown(text: str, code_theme: str) -> Any:
    plain, marked = _markdown_classes()
    kind = marked if terminal.plain_markdown() else plain
    return kind(text, code_theme=code_theme, hyperlinks=terminal.shows_hyperlinks())


def redraw_seconds() -> float:
    try:
        return max(float(os.environ.get(REDRAW_VARIABLE, REDRAW_SECONDS)), 0.0)
    except ValueError:
        return REDRAW_SECONDS


def reflows() -> bool:
    """Whether the terminal re-wraps its lines on a resize. xterm and the Linux console
    do not (they cut lines); tmux and nearly every other terminal in use do."""
    if "TMUX" in os.environ:
        return True
    return "XTERM_VERSION" not in os.environ and os.environ.get("TERM") != "linux"


def _rstrip(line: list[Any]) -> list[Any]:
    from rich.segment import Segment

    line = list(line)
    while line and not line[-1].control and not line[-1].text.rstrip():
        line.pop()
    if line and not line[-1].control:
        last = line[-1]
        line[-1] = Segment(last.text.rstrip(), last.style)
    return line


def _cells_of(styled: str) -> int:
    """The cells a line with escape sequences takes on the screen."""
    from rich.text import Text

    return Text.from_ansi(styled).cell_len


def _has_text(line: list[Any]) -> bool:
    return any(segment.text.strip() for segment in line if not segment.control)


class LiveRegion:
    """The rows at the bottom of the terminal that the stream may redraw: how many cells
    each row drawn holds, so that erasing goes up over exactly those rows and no higher.

    `size()` gives the terminal's (columns, lines) now. The cursor is left at the end of
    the last row drawn (no newline after it), which is where erasing starts."""

    def __init__(self, size: Callable[[], tuple[int, int]], reflowing: bool) -> None:
        self.size = size
        self.reflowing = reflowing
        self.cells: list[int] = []  # per row drawn

    def rows(self) -> int:
        """The rows the region takes on the screen now."""
        if not self.cells:
            return 0
        columns, lines = self.size()
        columns = max(columns, 1)
        if self.reflowing:
            taken = sum(max(1, -(-cells // columns)) for cells in self.cells)
        else:
            taken = len(self.cells)
        return min(taken, max(lines, 1))  # above the screen's top the cursor cannot go

    def erase(self) -> str:
        """The escape sequences that take the region off the screen, leaving the cursor at
        the start of its first row."""
        taken = self.rows()
        self.cells = []
        if not taken:
            return ""
        up = f"\x1b[{taken - 1}A" if taken > 1 else ""
        # Not `ESC[J` from the first column: where that is the screen's top-left corner
        # (the region on row 1 of a fresh pane, or pushed there by a re-wrap), tmux takes
        # it for a whole-screen clear and scrolls the old rows into its history
        # (scroll-on-clear) — a copy left behind at every redraw. So: the first row
        # erased whole, the rest of the screen from its second column, then back.
        return "\r" + up + "\x1b[2K\x1b[2G\x1b[J\r"

    def draw(self, text: str, cells: list[int]) -> str:
        """`text` (rendered rows, a newline between them and none after) as the region's
        rows, of `cells` cells each."""
        self.cells = list(cells)
        return text


class MarkdownStream:
    def __init__(
        self,
        console: Any,
        *,
        code_theme: str = "monokai",
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.console = console
        self.code_theme = code_theme
        self._block: list[str] = []  # complete lines of the open block
        self._partial: list[str] = []  # pieces of the line being written
        self._in_fence = False
        self._redraw = console.is_terminal and not console.is_dumb_terminal
        self._printed = False  # a block of this message is on the screen
        self._clock = clock
        self.region = LiveRegion(self._size, reflows())
        self._stale = False  # the open block changed since the region was drawn
        self._frame = redraw_seconds()
        self._drawn_at = -self._frame  # when the region was last drawn
        self._cost = 0.0  # seconds the last drawing took
        self._timer: Any = None  # the redraw after a pause, on the running event loop
        self._closed = False
        # Lines of the REPL's own (a message queued) while the answer streams: drawn under
        # it in the live region, printed after it once it ends — never between its blocks.
        self._asides: list[str] = []
        self._above: list[int] = []  # cells of the rows this stream printed, newest last
        self._committed: list[list[Any]] = []  # the open block's rows printed for good
        self._pinned: int | None = None  # the width they were rendered at

    def _size(self) -> tuple[int, int]:
        size = self.console.size
        return size.width, size.height

    def open_text(self) -> str:
        return "\n".join([*self._block, "".join(self._partial)])

    # --- the pieces

    def feed(self, delta: str) -> None:
        printed = False
        if "\n" not in delta:
            self._partial.append(delta)
        else:
            head, *middle, tail = delta.split("\n")
            first, self._partial = "".join([*self._partial, head]), []
            for line in (first, *middle):
                printed |= self._end_line(line)
            self._partial = [tail] if tail else []
        if self._redraw and delta:
            self._stale = True
            if printed:
                self._draw_region()  # the region went above the block: put it back now
            else:
                self._redraw_soon()

    def interject(self, line: str) -> None:
        """`line` (someone else's: a queued message, say) under the answer: at the foot of
        the live region while it streams, printed below the answer when it ends."""
        self._asides.append(line)
        if self._redraw and not self._closed:
            self._draw_region()

    def _print_asides(self) -> None:
        if self._asides:
            self.console.file.write("".join(line + "\n" for line in self._asides))
            self.console.file.flush()
            self._asides = []

    def close(self) -> None:
        """The message ended: the open block becomes final."""
        if self._closed:
            return
        self._closed = True
        self._cancel_timer()
        if self._partial:
            self._block.append("".join(self._partial))
            self._partial = []
        if not self._print_block():
            erase = self.region.erase()
            if erase:
                self.console.file.write(erase)
                self.console.file.flush()
        self._print_asides()

    # --- blocks

    def _end_line(self, line: str) -> bool:
        """Adds a complete line to the open block; True when that ended the block and it
        was printed."""
        stripped = line.strip()
        if stripped.startswith(FENCES):
            self._block.append(line)
            self._in_fence = not self._in_fence
            return not self._in_fence and self._print_block()
        if not stripped and not self._in_fence:
            return self._print_block()
        self._block.append(line)
        return False

    def _render(self, text: str, width: int | None = None) -> list[list[Any]]:
        """`text` as rows of segments at `width` (the terminal's width now if None),
        without trailing padding or leading and trailing blank rows."""
        return self._rendered(markdown(text, self.code_theme), width)

    def _rendered(self, document: Any, width: int | None) -> list[list[Any]]:
        options = self.console.options
        if width is not None:
            options = options.update(width=width)
        lines = self.console.render_lines(document, options, pad=False)
        lines = [_rstrip(line) for line in lines]
        while lines and not _has_text(lines[0]):
            lines.pop(0)
        while lines and not _has_text(lines[-1]):
            lines.pop()
        return lines

    def _ansi(self, lines: list[list[Any]]) -> str:
        """Rows of segments as the text to write, styles included; no newline at the end."""
        from rich.segment import SegmentLines

        with self.console.capture() as capture:
            # Not cropped: rows printed at the width their block began at may be wider now.
            self.console.print(SegmentLines(lines, new_lines=True), end="", crop=False)
        return capture.get().removesuffix("\n")

    def _print_block(self) -> bool:
        """Prints the open block as final (under the region's place); False when it held
        nothing to print."""
        if not self._block:
            return False
        text = "\n".join(self._block)
        self._block = []
        if terminal.dumb() and self.console.file.isatty():
            self.console.size = terminal.size()  # Rich assumes 80 columns there: ask
        committed, pinned = self._committed, self._pinned
        self._committed, self._pinned = [], None
        lines = self._render(text, pinned)  # where rows are printed already: at their width
        if not lines and not committed:
            return False
        # Its first rows printed for good: the rest. Should the whole block have rendered
        # them otherwise (rare: a list that reached 100 items, say), from the first that
        # differs — a row shown twice rather than one lost.
        start = next(
            (i for i, row in enumerate(committed) if i >= len(lines) or lines[i] != row),
            len(committed),
        )
        rest = lines[start:]
        out = self.console.file
        out.write(self.region.erase() + (self._printing(rest, not committed) if rest else ""))
        out.flush()
        return True

    def _printing(self, lines: list[list[Any]], first: bool) -> str:
        """The text that prints `lines` for good (after a blank line where they are the
        `first` of a block under another one), noting them as rows above the region."""
        from rich.segment import Segment

        gap = "\n" if self._printed and first else ""  # one blank line between blocks
        if gap:
            self._above.append(0)
        self._above.extend(Segment.get_line_length(line) for line in lines)
        del self._above[:-1000]  # more rows than any screen holds
        self._printed = True
        return gap + self._ansi(lines) + "\n"

    def _rows_above(self) -> int:
        """The rows this stream printed that are on the screen now, as far as they go up
        (counted at the width of the moment) — rows known to be above the live region."""
        columns, lines = self._size()
        rows = 0
        for cells in reversed(self._above):
            if rows >= lines:
                break
            rows += live_room.taken(cells, columns) if self.region.reflowing else 1
        return min(rows, lines)

    # --- the live region

    def _redraw_soon(self) -> None:
        spacing = max(self._frame, FRAME_SHARE * self._cost) if self._frame else 0.0
        wait = self._drawn_at + spacing - self._clock()
        if wait <= 0:
            self._draw_region()
        elif self._timer is None:
            import asyncio

            try:
                loop = asyncio.get_running_loop()
            except RuntimeError:
                return  # no event loop: the next piece draws it
            self._timer = loop.call_later(wait, self._on_timer)

    def _on_timer(self) -> None:
        self._timer = None
        if not self._closed and self._stale:
            self._draw_region()

    def _cancel_timer(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def _draw_region(self) -> None:
        """The open block's newest rows, in place of the ones drawn before."""
        from rich.segment import Segment

        self._stale = False
        if not (self._block or self._partial or self._asides):  # nothing to draw, no frame spent
            erase = self.region.erase()
            if erase:
                self.console.file.write(erase)
                self.console.file.flush()
            return
        self._drawn_at = self._clock()
        lines, printed = self._open_rows() if self._block or self._partial else ([], "")
        self._cost = self._clock() - self._drawn_at
        cells = [Segment.get_line_length(line) for line in lines]
        rows = [self._ansi(lines)] if lines else []
        for aside in self._asides[-3:]:  # the newest few: the region must stay on screen
            rows.append(aside)
            cells.append(_cells_of(aside))
        out = self.console.file
        out.write(self.region.erase() + printed + self.region.draw("\n".join(rows), cells))
        out.flush()

    def _open_rows(self) -> tuple[list[list[Any]], str]:
        """The open block's rows for the live region, and the text printing for good the
        settled first rows that no longer fit in it (agentcli.ui.live_room)."""
        from rich.segment import Segment

        columns, height = self._size()
        document = markdown(self.open_text(), self.code_theme)
        lines = self._rendered(document, self._pinned)[len(self._committed) :]
        room = live_room.split(
            [Segment.get_line_length(line) for line in lines],
            self._rows_above(),
            columns if self.region.reflowing else 0,
            max(3, height // 3),  # a third of the screen at most
            may_commit=live_room.settles(document.parsed),
        )
        printed = ""
        if room.commit:
            settled = lines[: room.commit]
            printed = self._printing(settled, not self._committed)
            self._pinned = columns if self._pinned is None else self._pinned
            self._committed.extend(settled)
        return lines[room.commit + room.hidden :], printed
