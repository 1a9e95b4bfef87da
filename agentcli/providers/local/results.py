"""How tool calls and their results are shown: to a small model in its prompt, and to the
user in place of the model's retelling (a small model misquotes what it was given, so
after a call its answer is the results quoted as they are)."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

from agentcli.messages import Message


def clip(text: str, limit: int) -> str:
    """At most `limit` characters: the head, and a note of what was cut."""
    if len(text) <= limit:
        return text
    return text[:limit].rstrip() + f"\n[... {len(text) - limit} more characters cut]"


_NUMBERED = re.compile(r"^ *\d+\t", re.MULTILINE)


def plain_lines(text: str) -> str:
    """read_file's `cat -n` numbering taken off: a small model repeats the numbers
    instead of reading the lines."""
    lines = text.splitlines()
    if len(_NUMBERED.findall(text)) >= max(1, len(lines) // 2):
        return _NUMBERED.sub("", text)
    return text


def result_body(message: Message, limit: int) -> str:
    return clip(plain_lines(message.content.strip()), limit)


def tool_result_text(name: str, message: Message, limit: int) -> str:
    body = result_body(message, limit)
    if message.error:
        return f"The tool {name} failed: {body or message.error}"
    return f"Result of {name}:\n{body}" if body else f"The tool {name} returned nothing."


def call_text(call: Any) -> str:
    """`tool(key="value", ...)`: a call as a person reads it."""
    try:
        arguments = json.loads(call.arguments or "{}")
    except ValueError:
        arguments = {}
    shown = ", ".join(f"{k}={json.dumps(v, ensure_ascii=False)}" for k, v in arguments.items())
    return f"{call.name}({shown})" if isinstance(arguments, dict) else call.name


def quote_results_instead_of_retelling(messages: Sequence[Message], *, limit: int = 6000) -> str:
    """The results of the last step's calls, shown as they are: what a small model's
    answer after a tool becomes, since it misquotes what it was given (it answered
    17*23 with 409 right after the calculator said 391)."""
    calls: dict[str, Any] = {}
    results: list[Message] = []
    for message in reversed(messages):
        if message.role != "tool":
            if message.role == "assistant":
                calls = {call.id: call for call in message.tool_calls}
            break
        results.insert(0, message)
    parts = []
    for message in results:
        call = calls.get(message.tool_call_id or "")
        shown = call_text(call) if call is not None else "the tool"
        body = result_body(message, limit)
        if message.error:
            parts.append(f"{shown} failed: {body or message.error}")
        elif not body:
            parts.append(f"{shown} returned nothing.")
        else:
            fence = "`" * max(3, 1 + max((len(run) for run in re.findall(r"`+", body)), default=0))
            parts.append(f"{shown}:\n\n{fence}\n{body}\n{fence}")
    return "\n\n".join(parts)
