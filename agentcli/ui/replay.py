"""A resumed conversation shown again, compactly, so the screen says where it stands: each
prompt on one line, each answer's first lines, each tool call on one line (a failed or
refused one with why); the latest turns only, when there are many."""

from __future__ import annotations

from typing import TYPE_CHECKING

from agentcli.output.style import format_arguments
from agentcli.output.visible import one_line, visible
from agentcli.text.words import plural

if TYPE_CHECKING:
    from agentcli.conversation.messages import Message
    from agentcli.output.style import Styler

TURNS_SHOWN = 10
ANSWER_LINES = 3


def _cut(text: str, width: int) -> str:
    return text if len(text) <= width else text[: max(width - 1, 1)] + "…"


def _first_line(text: str) -> tuple[str, int]:
    """The first line with text, and how many lines with text follow it."""
    lines = [line.strip() for line in visible(text).splitlines() if line.strip()]
    return (lines[0] if lines else ""), max(len(lines) - 1, 0)


def replay_lines(messages: list[Message], width: int, style: Styler) -> list[str]:
    """The conversation's latest TURNS_SHOWN turns as lines of at most `width` columns."""
    starts = [i for i, message in enumerate(messages) if message.role == "user"]
    left_out = max(len(starts) - TURNS_SHOWN, 0)
    shown = messages[starts[left_out] :] if left_out else messages
    out = [style.dim(f"  … {plural(left_out, 'earlier turn')}")] if left_out else []
    for message in shown:
        if message.role == "user":
            first, more = _first_line(message.content)
            tail = f" (+{plural(more, 'line')})" if more else ""
            out.append(_cut(f"› {first}", width - len(tail)) + style.dim(tail))
        elif message.role == "assistant":
            lines = [x.rstrip() for x in visible(message.content).splitlines() if x.strip()]
            out += [_cut(f"  {line}", width) for line in lines[:ANSWER_LINES]]
            if len(lines) > ANSWER_LINES:
                more = plural(len(lines) - ANSWER_LINES, "more line")
                out.append(style.dim(f"  … {more}"))
            for call in message.tool_calls:
                shown_call = f"  ● {one_line(call.name)} {format_arguments(call.arguments)}"
                out.append(style.dim(_cut(shown_call, width)))
        elif message.role == "tool" and message.error:
            first, _ = _first_line(message.error)
            out.append(style.red(_cut(f"    ✗ {first}", width)))
    return out
