"""A line of agentcli's own (a result, an error) broken between words to fit the terminal,
so that the terminal's own wrap never cuts a word in two (`con` / `nection`, `[10` / `0%]`).
Lines to a pipe are left whole: a script reads them as they were."""

from __future__ import annotations

import re
from typing import Any

_SGR = re.compile(r"\x1b\[[0-9;]*m")


def _spans(plain: str, width: int, indent: int) -> list[tuple[int, int]]:
    """Where each line starts and ends in `plain`: the last space that fits, else a fold
    (a word longer than the line); the first line has `width` cells, the others `width -
    indent`."""
    from rich.cells import cell_len

    spans: list[tuple[int, int]] = []
    start, room = 0, width
    lead = len(plain) - len(plain.lstrip(" "))  # the first line's own indent: no break there
    while start < len(plain):
        cells, index, space = 0, start, -1
        while index < len(plain) and cells + cell_len(plain[index]) <= room:
            if plain[index] == " " and index > start + lead:
                space = index
            cells += cell_len(plain[index])
            index += 1
        if index == len(plain):
            spans.append((start, index))
            break
        if plain[index] == " " and index > start + lead:
            space = index  # the word ends at the edge: it fits whole
        cut = space if space > start else max(index, start + 1)
        spans.append((start, cut))
        start, room, lead = cut, width - indent, 0
        while start < len(plain) and plain[start] == " ":
            start += 1
    return spans


def word_wrapped(styled: str, width: int, console: Any) -> str:
    """`styled` (one line, SGR styles allowed) as lines of at most `width` cells, broken
    between words, the later lines indented under the text of the first; rendered back
    with `console`'s colours. Short lines and very narrow terminals: as it is."""
    from rich.cells import cell_len

    plain = _SGR.sub("", styled).rstrip()
    if width < 20 or cell_len(plain) <= width:
        return styled
    from rich.text import Text

    text = Text.from_ansi(styled)
    lead = len(plain) - len(plain.lstrip(" "))
    indent = min(lead + 2, width // 3)  # under the text after a mark (`  ✗ `)
    spans = _spans(plain, width, indent)
    lines = [text[a:b] for a, b in spans[:1]] + [
        Text(" " * indent) + text[a:b] for a, b in spans[1:]
    ]
    with console.capture() as capture:
        for line in lines:
            line.rstrip()  # a space left at a break would be a cell past the words
            console.print(line, end="\n", soft_wrap=True)
    return capture.get().removesuffix("\n")


def for_stream(line: str, stream: Any) -> str:
    """`line` as it should be written to `stream`: broken between words on a terminal, as
    it is to a pipe or a file (a script reads one line per message there)."""
    try:
        if not stream.isatty():
            return line
    except (AttributeError, ValueError):  # closed, or not a real stream
        return line
    from agentcli.output import terminal

    return word_wrapped(line, terminal.size()[0], terminal.console(stream, highlight=False))
