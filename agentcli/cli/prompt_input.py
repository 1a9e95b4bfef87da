"""Where a one-shot prompt comes from: the argument, stdin, or both.

Reading stdin never hangs: when stdin is not a terminal we wait a bounded time for it
to become readable (data or end of file) and treat silence as "no stdin"."""

from __future__ import annotations

import select
import sys
from typing import BinaryIO

from agentcli.errors import UsageError

CONTEXT_WAIT_SECONDS = 3.0  # stdin as context below an argument
PROMPT_WAIT_SECONDS = 30.0  # stdin as the prompt itself


def _stdin_has_input(stream: BinaryIO, wait: float) -> bool:
    try:
        ready, _, _ = select.select([stream], [], [], wait)
    except (OSError, ValueError):  # closed, or not selectable: nothing to read
        return False
    return bool(ready)


def read_stdin(*, prompt_expected: bool, stream: BinaryIO | None = None) -> str | None:
    """Stdin's text when stdin is not a terminal and has data; None otherwise."""
    if stream is None:
        if sys.stdin is None:
            return None
        stream = sys.stdin.buffer
    try:
        if stream.isatty():
            return None
    except ValueError:
        return None
    wait = PROMPT_WAIT_SECONDS if prompt_expected else CONTEXT_WAIT_SECONDS
    if not _stdin_has_input(stream, wait):
        sys.stderr.write(f"agentcli: stdin stayed silent for {wait:g}s; ignoring it\n")
        return None
    data = stream.read()
    from agentcli.text.decoding import contents

    text = contents(data)
    return text if text.strip() else None


def build_prompt(argument: str | None, stdin_text: str | None) -> str:
    """The argument is the instruction; piped stdin is the prompt (no argument, or `-`)
    or context appended below the instruction. The argument comes from argv: bytes in it
    that are not UTF-8 are shown as `\\xHH` (agentcli.text.decoding)."""
    from agentcli.text.decoding import shown

    argument = shown(argument) if argument is not None else None
    if argument is None or argument == "-":
        if stdin_text is None:
            raise UsageError(
                'no prompt: pass one as an argument (agentcli run "...") or pipe it on stdin'
            )
        return stdin_text.strip("\n")
    if not argument.strip():
        raise UsageError("the prompt is empty")
    if stdin_text is None:
        return argument
    return f"{argument}\n\n<stdin>\n{stdin_text.rstrip()}\n</stdin>"
