"""The policy's reasons in plain words, for people. The classifier names what it found
("control flow", "it uses `c_style_for_statement`"); the approval prompt says what that
means. Only the display changes: JSON output and the session keep the policy's own text."""

from __future__ import annotations

import re

# The shell grammar's findings that are jargon on their own (agentcli/policy/shell_parse.py).
_PLAIN = {
    "control flow": "it has if/for/while/case logic, which can run any command",
    "a test expression": "it has a [[ … ]] test, which the checker cannot see into",
    "a comment": "it has a # comment, which can hide what a line really does",
    "an ANSI-C string": "it has a $'…' string, which can hide characters",
    "a translated string": 'it has a $"…" string, which the checker cannot read',
    "brace expansion": "braces turn one word into several",
    "it defines a function": "it defines a shell function, which can run anything",
    "a here-document feeds input": "a here-document (<<) feeds text into a command",
    "a here-string feeds input": "a here-string (<<<) feeds text into a command",
    "the shell grammar cannot parse it completely": "the shell grammar cannot read all of it",
    "part of it is invisible to the shell grammar": "part of it is hidden from the checker",
}
_PATTERNS = [
    (
        re.compile(r"^it uses `([\w&|;<>-]+)`$"),
        r"it uses a shell form (\1) the checker does not know",
    ),
    (re.compile(r"^read-only \((.*)\)$"), r"it only reads (\1)"),
    (
        re.compile(r"^`(.+)` is not a known read-only program$"),
        r"`\1` may change things: it is not on the list of programs that only read",
    ),
    (
        re.compile(r"^(.+) is not known to be read-only$"),
        r"\1 may change things: it is not known to only read",
    ),
]


def plain_reason(reason: str) -> str:
    """One reason of the policy's, as a person would say it."""
    if reason in _PLAIN:
        return _PLAIN[reason]
    for pattern, replacement in _PATTERNS:
        if pattern.match(reason):
            return pattern.sub(replacement, reason)
    return reason


def plain_reasons(reasons: list[str]) -> str:
    """The reasons of one decision, in plain words, each once."""
    return "; ".join(dict.fromkeys(plain_reason(r) for r in reasons if r))
