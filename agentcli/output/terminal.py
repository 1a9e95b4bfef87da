"""What the terminal we write to can take: colour (not under NO_COLOR, not on a dumb
terminal or in a pipe), cursor movement (not on a dumb terminal or in a pipe), and
whether Markdown must keep its markers visible (`#`, `>`) because styles are off."""

from __future__ import annotations

import os
import shutil
from typing import Any, TextIO


def dumb() -> bool:
    """TERM=dumb (or unknown, as Rich counts it): text only, no escape sequences at all."""
    return os.environ.get("TERM", "").lower() in ("dumb", "unknown")


def no_color() -> bool:
    return "NO_COLOR" in os.environ


def color_enabled(stream: TextIO) -> bool:
    return stream.isatty() and not no_color() and not dumb()


def can_redraw(stream: TextIO) -> bool:
    """Whether lines may be rewritten in place (a spinner, a live line, a live region)."""
    return stream.isatty() and not dumb()


def plain_markdown() -> bool:
    """Without styles a heading or a quote would look like any paragraph: keep markers."""
    return no_color() or dumb()


# Terminals known to draw OSC 8 hyperlinks, by what they set in the environment. Others —
# tmux (3.3 drops the sequence), screen, ssh sessions, the Linux console — show only the
# link's text, so the URL would be lost.
_OSC8_PROGRAMS = frozenset({"iTerm.app", "WezTerm", "vscode", "ghostty", "Hyper"})
_OSC8_VARIABLES = ("KITTY_WINDOW_ID", "WT_SESSION", "KONSOLE_VERSION")


def shows_hyperlinks() -> bool:
    """Whether a Markdown link may be drawn as an OSC 8 hyperlink (its text only, the URL
    behind it) rather than as `text (URL)`: only on a terminal known to support them,
    never inside tmux or screen, over ssh, under NO_COLOR or on a dumb terminal."""
    env = os.environ
    if plain_markdown() or "TMUX" in env or "STY" in env or "SSH_TTY" in env:
        return False
    if env.get("TERM_PROGRAM") in _OSC8_PROGRAMS or any(name in env for name in _OSC8_VARIABLES):
        return True
    try:  # GNOME Terminal and other VTE terminals since 0.50
        return int(env.get("VTE_VERSION", "0")) >= 5000
    except ValueError:
        return False


def console(stream: TextIO, **options: Any) -> Any:
    """A Rich console for `stream` that follows NO_COLOR and TERM=dumb; on a dumb terminal
    Rich would assume 80 columns, so the real width is given."""
    from rich.console import Console

    if dumb() and stream.isatty():
        options.setdefault("width", size()[0])
        options.setdefault("height", size()[1])
    return Console(file=stream, no_color=no_color(), **options)


def size() -> tuple[int, int]:
    """Columns and lines of the terminal now."""
    columns, lines = shutil.get_terminal_size((80, 24))
    return columns, lines
