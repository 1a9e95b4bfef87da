"""What both search_content backends produce: matching lines and their context, grouped by
file, cut to a readable width; and the checks both apply (sort order, binary files)."""

from __future__ import annotations

from dataclasses import dataclass, field

MAX_LINE_CHARS = 500  # longer lines are cut, keeping the match in view

_LEAD_CHARS = 100  # how much of a long line to keep before the match


def _sort_key(rel: str) -> str:
    # NUL sorts before every other character, so this orders paths component by component,
    # which is also the order of a walk that visits names sorted.
    return rel.replace("/", "\0")


def _has_nul(path: str) -> bool | None:
    """Whether a file has a NUL byte anywhere (None: unreadable); read in chunks."""
    try:
        with open(path, "rb") as f:
            while chunk := f.read(1 << 20):
                if b"\0" in chunk:
                    return True
    except OSError:
        return None
    return False


@dataclass(slots=True)
class Line:
    number: int
    is_match: bool
    text: str  # ready to show: no line terminator, long lines cut


@dataclass(slots=True)
class FileHits:
    """One file's matching lines (and context), from either backend."""

    path: str  # relative to the target's base
    matches: int  # matching lines in the file
    lines: list[Line] = field(default_factory=list)
    raw: list[bytes] | None = None  # ripgrep's JSON records, parsed only if shown

    def records(self) -> list[Line]:
        if self.raw is not None:
            from agentcli.tools.search_rg import _parse_rg_record

            self.lines = [_parse_rg_record(record) for record in self.raw]
            self.raw = None
        return self.lines


def _clip(text: str, column: int) -> str:
    """Cuts a line to MAX_LINE_CHARS characters, keeping the match at `column` in view."""
    if len(text) <= MAX_LINE_CHARS:
        return text
    start = max(0, min(column - _LEAD_CHARS, len(text) - MAX_LINE_CHARS))
    end = start + MAX_LINE_CHARS
    return (
        ("[…] " if start else "")
        + text[start:end]
        + (" [… line truncated]" if end < len(text) else "")
    )


def _display(line: str, column: int) -> str:
    return _clip(line[:-1] if line.endswith("\r") else line, column)
