"""How tool calls and their results are shown: to a small model in its prompt, and to the
user in place of the model's retelling (a small model misquotes what it was given, so
after a call its answer is a sentence filled in from the call, then the result as it is)."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

from agentcli.conversation.messages import Message


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


def _fenced(body: str) -> str:
    """`body` in a code fence longer than any run of backticks inside it."""
    fence = "`" * max(3, 1 + max((len(run) for run in re.findall(r"`+", body)), default=0))
    return f"{fence}\n{body}\n{fence}"


_READ_HEAD = re.compile(r"^(?P<path>.+): lines (?P<first>\d+)-(?P<last>\d+) of (?P<total>\d+)\n")


def _arguments(call: Any) -> dict[str, Any]:
    try:
        arguments = json.loads(call.arguments or "{}") if call is not None else {}
    except ValueError:
        return {}
    return arguments if isinstance(arguments, dict) else {}


def _lines(count: int) -> str:
    return f"{count} line{'' if count == 1 else 's'}"


def report_result(call: Any, message: Message, limit: int) -> str:
    """What was done and what came of it, for one call: a sentence filled in from the
    call and its result (a template, not the model's words: a small model misquotes
    results), then the result itself, readably. Never more than the result says."""
    name = call.name if call is not None else "the tool"
    shown = call_text(call) if call is not None else "the tool"
    arguments = _arguments(call)
    text = message.content.strip()
    if message.error:
        return f"{shown} failed: {clip(text or message.error, limit)}"
    if not text:
        return f"{shown} returned nothing."
    first, _, rest = text.partition("\n")
    if name == "read_file" and (head := _READ_HEAD.match(text + "\n")):
        body = clip(plain_lines(text[head.end() :].rstrip("\n")), limit)
        first_line, last, total = (int(head[k]) for k in ("first", "last", "total"))
        if (first_line, last) == (1, total):
            span = _lines(total)
        else:
            span = f"lines {first_line}-{last} of {total}"
        return f"Here is `{head['path']}` ({span}):\n\n{_fenced(body)}"
    if name == "calculator":
        return f"{first}." if not rest else f"{shown}:\n\n{_fenced(clip(text, limit))}"
    if name == "write_file" and not rest:
        return f"Done: {first}."
    if name == "run_shell":
        command = arguments.get("command", "")
        return f"I ran `{command}`:\n\n{_fenced(clip(text, limit))}"
    if name == "list_directory":
        return f"`{arguments.get('path') or '.'}` holds {first.partition(': ')[2] or first}:" + (
            f"\n\n{_fenced(clip(rest, limit))}" if rest else ""
        )
    if not rest and name in ("search_files", "search_content") and first.startswith("No "):
        return first  # "No files match '*.zzz' in the workspace.": already the sentence
    if name == "search_files":
        count = len(text.splitlines())
        pattern = arguments.get("pattern", "")
        found = f"{count} file{'' if count == 1 else 's'}"
        return f"{found} match `{pattern}`:\n\n{_fenced(clip(text, limit))}"
    if name == "search_content" and rest:
        return f"{first} for `{arguments.get('pattern', '')}`:\n\n{_fenced(clip(rest, limit))}"
    if name == "system_info":
        return f"About this machine:\n\n{_fenced(clip(text, limit))}"
    if not rest and len(first) <= 200:
        return f"{shown}: {first}"
    return f"{shown}:\n\n{_fenced(clip(plain_lines(text), limit))}"


def report_results(messages: Sequence[Message], *, limit: int = 6000) -> str:
    """The answer after the last step's calls, when the model does not write it: each
    call's `report_result`, in order."""
    calls: dict[str, Any] = {}
    results: list[Message] = []
    for message in reversed(messages):
        if message.role != "tool":
            if message.role == "assistant":
                calls = {call.id: call for call in message.tool_calls}
            break
        results.insert(0, message)
    return "\n\n".join(
        report_result(calls.get(message.tool_call_id or ""), message, limit) for message in results
    )
