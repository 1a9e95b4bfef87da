"""What the embedded small model can and cannot do, said where a user meets it (the REPL's
banner and `/status`): it is a tiny demo model, and a newcomer should know that before
asking it to reason over code."""

from __future__ import annotations

CAN = (
    "one tool a turn: read, list or search files, run a command you name, calculate, "
    'create a folder, make a small edit ("in notes.md, replace milk with bread")'
)
CANNOT = (
    "reason about code, answer questions about it, write code or plan several steps: "
    "use a bigger model for those (/model, or --model)"
)


def about_lines() -> list[str]:
    """Two lines of `/status`, labelled as its other facts are: what it can do and what
    it cannot."""
    return [f"can        {CAN}", f"cannot     {CANNOT}"]


def banner_line() -> str:
    return "a tiny demo model on this machine: it picks one tool a turn (/status says more)"
