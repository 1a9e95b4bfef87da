"""The REPL's bottom toolbar: segments joined by ` · `, fitted to the terminal's width by
leaving out the least needed ones first (a toolbar wider than the terminal wraps and hides
the prompt's last lines at 40 columns)."""

from __future__ import annotations

import shutil

from agentcli.output.visible import one_line

SEPARATOR = " · "


def fit(segments: list[tuple[str, int]], width: int | None = None) -> str:
    """`segments`: (text, keep) in display order; the lowest `keep` goes first while the
    line is wider than `width` (the terminal's, by default). Ties: the later one goes."""
    if width is None:
        width = shutil.get_terminal_size((80, 24)).columns
    shown = [  # a segment may name the workspace, the model: text from outside
        (index, one_line(text), keep) for index, (text, keep) in enumerate(segments) if text
    ]
    while len(shown) > 1 and len(_line(shown)) > width - 1:
        drop = min(shown, key=lambda item: (item[2], -item[0]))
        shown.remove(drop)
    return _line(shown)


def _line(shown: list[tuple[int, str, int]]) -> str:
    return " " + SEPARATOR.join(text for _, text, _ in shown)
