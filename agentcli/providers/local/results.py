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
    """At most `limit` characters: the head, cut at a line's end (or a space: never inside
    a word), and a note of what was cut."""
    if len(text) <= limit:
        return text
    head = text[:limit]
    cut = head.rfind("\n")
    if cut < limit // 2:
        cut = head.rfind(" ")
    head = head[:cut] if cut > 0 else head
    return head.rstrip() + f"\n[... {len(text) - len(head)} more characters cut]"


def shortened(line: str, width: int = 76) -> str:
    """One line of at most `width` characters, cut at a space with "…" (never mid-word)."""
    line = " ".join(line.split())
    if len(line) <= width:
        return line
    cut = line.rfind(" ", 0, width)
    return (line[:cut] if cut > width // 2 else line[: width - 1]).rstrip(" ,.;:") + "…"


def _size(count: int) -> str:
    if count < 1024:
        return f"{count} bytes"
    return f"{count / 1024:.1f} KB"


# A file up to this size is shown whole after a read; a longer one is summed up
WHOLE_LINES, WHOLE_CHARS = 20, 1500
# A request that asks for all of a result, not its summary
_WANTS_WHOLE = re.compile(
    r"\b(?:whole|entire|full|all of|complete|everything|every line|in full|verbatim|raw)\b",
    re.IGNORECASE,
)
_HEADING = re.compile(r"^(#{1,6})\s+(.+?)\s*#*\s*$")


def wants_whole(request: str) -> bool:
    return bool(_WANTS_WHOLE.search(request))


def file_summary(path: str, body: str, span: str) -> str:
    """What a file is, in a few lines: its size, its title and headings (Markdown) or its
    first lines, and how to see the whole."""
    lines = body.splitlines()
    headings = []
    fenced = False
    for line in lines:
        if line.lstrip().startswith(("```", "~~~")):
            fenced = not fenced
        match = None if fenced else _HEADING.match(line)
        if match:
            headings.append((len(match[1]), match[2]))
    parts = [f"`{path}` is {span}, {_size(len(body.encode()))}."]
    if headings:
        level = min(depth for depth, _ in headings)
        title = next(text for depth, text in headings if depth == level)
        parts.append(f"Title: {shortened(title)}.")
        sections = [text for depth, text in headings if depth == level + 1] or [
            text for depth, text in headings if depth > level
        ]
        if sections:
            named = ", ".join(shortened(text, 40) for text in sections[:8])
            more = f" and {len(sections) - 8} more" if len(sections) > 8 else ""
            parts.append(f"Sections ({len(sections)}): {named}{more}.")
    else:
        first = [shortened(line) for line in lines if line.strip()][:3]
        if first:
            parts.append("It begins:\n\n" + "\n".join(f"> {line}" for line in first))
    parts.append(f'Ask for "the whole {path}" to see all of it.')
    return "\n".join(parts)


def command_summary(command: str, text: str, limit: int) -> str:
    """A command's result: its exit code and its last lines (the whole when short)."""
    head, _, output = text.partition("\noutput:")
    output = output.lstrip("\n") if not output.startswith(" (none)") else ""
    code = re.search(r"exit code (-?\d+)", head)
    status = f"exited with code {code[1]}" if code else "ran"
    timed_out = "timed out" in head
    if timed_out:
        status = "timed out"
    lines = output.rstrip("\n").splitlines()
    if not lines:
        return f"`{command}` {status} and printed nothing."
    if len(lines) <= 12 and len(output) <= limit:
        return f"`{command}` {status}:\n\n{_fenced(output.rstrip())}"
    last = "\n".join(shortened(line, 100) for line in lines[-8:])
    return (
        f"`{command}` {status}; the last 8 of its {len(lines)} lines:\n\n{_fenced(last)}\n\n"
        "Ask for the whole output to see all of it."
    )


def listing_summary(path: str, text: str) -> str:
    """A directory in a few lines: how many folders and files, and their names."""
    first, _, rest = text.partition("\n")
    rows = [line for line in rest.splitlines()[1:] if line and not line.startswith("[")]
    folders = [row.split(None, 4)[-1] for row in rows if row.startswith("dir ")]
    files = [row.split(None, 4)[-1] for row in rows if not row.startswith("dir ")]
    said = []
    for label, names in (("folder", folders), ("file", files)):
        if names:
            shown = ", ".join(f"`{name}`" for name in names[:10])
            more = f" and {len(names) - 10} more" if len(names) > 10 else ""
            said.append(f"{len(names)} {label}{'' if len(names) == 1 else 's'}: {shown}{more}")
    if not said:
        return f"`{path}` is empty." if "empty" in first else f"`{path}`: {first}"
    return f"`{path}` holds {'; '.join(said)}."


def search_summary(pattern: str, text: str) -> str:
    """A search in a few lines: matches in how many files, and the first ones."""
    first, _, rest = text.partition("\n")
    found = [line for line in rest.splitlines() if line.strip() and not line.startswith("[")]
    shown = "\n".join(shortened(line, 100) for line in found[:6])
    more = "\n\nAsk for all the matches to see the rest." if len(found) > 6 else ""
    return f"{first} for `{pattern}`:\n\n{_fenced(shown)}{more}" if shown else first


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


def report_result(call: Any, message: Message, limit: int, request: str = "") -> str:
    """What was done and what came of it, for one call: a sentence filled in from the
    call and its result (a template, not the model's words: a small model misquotes
    results), then the result itself, readably. Never more than the result says."""
    name = call.name if call is not None else "the tool"
    shown = call_text(call) if call is not None else "the tool"
    arguments = _arguments(call)
    text = message.content.strip()
    whole = wants_whole(request)
    if name == "run_shell" and "exit code " in text[:400] and not whole:
        return command_summary(str(arguments.get("command", "")), text, limit)
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
        if not whole and (body.count("\n") >= WHOLE_LINES or len(body) > WHOLE_CHARS):
            return file_summary(head["path"], plain_lines(text[head.end() :]), span)
        return f"Here is `{head['path']}` ({span}):\n\n{_fenced(body)}"
    if name == "calculator":
        return f"{first}." if not rest else f"{shown}:\n\n{_fenced(clip(text, limit))}"
    if name == "write_file" and not rest:
        return f"Done: {first}."
    if name == "run_shell":
        command = arguments.get("command", "")
        return f"I ran `{command}`:\n\n{_fenced(clip(text, limit))}"
    if name == "list_directory" and not whole:
        return listing_summary(str(arguments.get("path") or "."), text)
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
    if name == "search_content" and rest and not whole:
        return search_summary(str(arguments.get("pattern", "")), text)
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
    request = next((m.content for m in reversed(messages) if m.role == "user"), "")
    return "\n\n".join(
        report_result(calls.get(message.tool_call_id or ""), message, limit, request)
        for message in results
    )
