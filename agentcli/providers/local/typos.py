"""Typos in the words that say what a request wants ("shwo", "serach", "calcualte"),
put right before the request is routed: the router's examples and the argument readers
know the words as they are spelled. Only a small vocabulary of such words is corrected
(by difflib's likeness), so a file's name, a text to write or a word to find is kept as
the user typed it."""

from __future__ import annotations

import difflib
import functools
import re

# The words that say which tool is wanted and how the arguments are given
VOCABULARY = frozenset(
    {
        "show",
        "display",
        "print",
        "read",
        "open",
        "view",
        "list",
        "find",
        "search",
        "grep",
        "look",
        "locate",
        "fetch",
        "download",
        "run",
        "execute",
        "launch",
        "make",
        "create",
        "write",
        "save",
        "change",
        "replace",
        "swap",
        "rename",
        "edit",
        "modify",
        "update",
        "calculate",
        "compute",
        "evaluate",
        "what",
        "where",
        "which",
        "files",
        "file",
        "folder",
        "folders",
        "directory",
        "directories",
        "contents",
        "content",
        "inside",
        "containing",
        "contains",
        "mentions",
        "percent",
        "divided",
        "multiplied",
        "times",
        "plus",
        "minus",
        "please",
        "could",
        "would",
        "delete",
        "remove",
        "overwrite",
        "everything",
        "python",
        "markdown",
        "instead",
    }
)
_WORD = re.compile(r"[A-Za-z]+")


@functools.lru_cache(maxsize=256)
def corrected_word(word: str) -> str:
    """`word`, or the vocabulary's word it is a typo of (same first letter, near in
    length and letters); a word in any other case or shape is kept."""
    lower = word.lower()
    if lower in VOCABULARY or len(lower) < 3 or word != lower:
        return word
    for near in difflib.get_close_matches(lower, VOCABULARY, n=3, cutoff=0.75):
        if near[0] == lower[0] and _one_slip(lower, near):
            return near
    return word


def _one_slip(typed: str, word: str) -> bool:
    """Two letters swapped ("shwo"), or, in a long word, one letter left out, added or
    changed ("serch", "calculatte"): never a word that only ends in another's "s" ("whats",
    "files"), nor one short word for another ("world" for "would")."""
    if len(typed) == len(word) and sorted(typed) == sorted(word):
        return sum(a != b for a, b in zip(typed, word, strict=True)) == 2
    if typed.rstrip("s") == word or len(max(typed, word, key=len)) < 6:
        return False
    ops = [
        op for op in difflib.SequenceMatcher(None, typed, word).get_opcodes() if op[0] != "equal"
    ]
    return len(ops) == 1 and max(ops[0][2] - ops[0][1], ops[0][4] - ops[0][3]) == 1


def corrected(request: str) -> str:
    """The request with its action words' typos put right; every other word as typed
    (words joined to a path, a dot or a digit are never touched)."""

    def one(match: re.Match[str]) -> str:
        start, end = match.span()
        before = request[start - 1] if start else " "
        after = request[end] if end < len(request) else " "
        if before in "./_-\\'\"`" or after in "./_-\\'\"`(" or before.isdigit() or after.isdigit():
            return match.group(0)
        return corrected_word(match.group(0))

    return _WORD.sub(one, request)
