"""Counted nouns for what the terminal shows: `1 line`, `2 lines`, `1,234 bytes`."""

from __future__ import annotations

_IRREGULAR = {
    "match": "matches",
    "entry": "entries",
    "process": "processes",
    "directory": "directories",
}


def plural(count: int, word: str) -> str:
    """`count` and `word`, in the plural unless the count is one (thousands separated)."""
    many = _IRREGULAR.get(word, word + "s")
    return f"{count:,} {word if count == 1 else many}"
