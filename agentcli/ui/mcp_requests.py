"""What an MCP server asks of the person at the terminal, asked the way approvals are (one
block, one key, the terminal held while it is up): an elicitation's form, field by field,
and a sampling request's approval, showing the server and the messages it would send.

Everything a server wrote is made visible first (security.md 17): its text cannot move
the cursor or rewrite a line of the block."""

from __future__ import annotations

import json
from typing import Any

from agentcli.mcp.client_features import FormAnswer, FormRequest, SamplingRequest
from agentcli.output.visible import visible
from agentcli.ui.approval_block import Choice, choice_lines, fit, terminal_width, wrap

MAX_MESSAGE_LINES = 40  # of the sampling messages shown; the rest is counted
FORM_CHOICES = [
    Choice("y", "once", ["answer", "it"]),
    Choice("n", "deny", ["no,", "decline"]),
]
SAMPLING_CHOICES = [
    Choice("y", "once", ["yes,", "send", "it", "to", "the", "model", "once"]),
    Choice("s", "session", ["yes,", "and", "for", "its", "requests", "this", "session"]),
    Choice("n", "deny", ["no,", "decline"]),
]


def _style(enabled: bool, code: str, text: str) -> str:
    return f"\x1b[{code}m{text}\x1b[0m" if enabled else text


def _block(approver: Any, heading: str, lines: list[str], offer: list[Choice]) -> None:
    width = terminal_width(approver.stream)
    color = approver.color
    out = [_style(color, "1;36", line) for line in wrap(heading.split(), width, "? ", "  ")]
    out += [piece for line in lines for piece in fit(line, width, color)]
    out += choice_lines(offer, width, color)
    approver.stream.write("\n".join(out) + "\n")
    approver.stream.flush()


async def _choose(approver: Any, offer: list[Choice]) -> str | None:
    """The kind chosen; None for Ctrl-C or Ctrl-D."""
    keys = {choice.key: choice for choice in offer}
    try:
        choice = keys[await approver.read_key(list(keys))]
    except (KeyboardInterrupt, EOFError):
        return None
    approver.stream.write(f"  → {choice.key}: {' '.join(choice.label)}\n")
    return choice.kind


async def ask_form(approver: Any, request: FormRequest) -> FormAnswer:
    server = visible(request.server)
    lines = [line for line in visible(request.message).splitlines() if line.strip()]
    if request.url:
        lines.append(f"open yourself: {visible(request.url)}")
    else:
        lines.append(f"{len(request.fields)} fields; Enter keeps a default, Ctrl-C cancels")
    _block(approver, f"MCP server {server} asks you:", lines, FORM_CHOICES)
    kind = await _choose(approver, FORM_CHOICES)
    if kind is None:
        return FormAnswer("cancel")
    if kind == "deny":
        return FormAnswer("decline")
    if request.url:
        return FormAnswer("accept")
    content: dict[str, Any] = {}
    for field in request.fields:
        _describe_field(approver, field)
        while True:
            try:
                text = await approver.read_line(f"  {visible(field.name)}: ")
            except (KeyboardInterrupt, EOFError):
                approver.stream.write("  cancelled\n")
                return FormAnswer("cancel")
            if not text.strip():
                if field.has_default:
                    content[field.name] = field.default
                    break
                if not field.required:
                    break
                approver.stream.write("  required: type an answer\n")
                continue
            try:
                content[field.name] = field.parse(text)
                break
            except ValueError as problem:
                approver.stream.write(f"  {problem}\n")
    approver.stream.write(f"  → sent to {server}\n")
    approver.stream.flush()
    return FormAnswer("accept", content)


def _describe_field(approver: Any, field: Any) -> None:
    words = [visible(field.title or field.name)]
    if field.description:
        words.append(f"— {visible(field.description)}")
    hints = []
    if field.kind == "boolean":
        hints.append("y/n")
    elif field.kind in ("number", "integer") and (
        field.minimum is not None or field.maximum is not None
    ):
        hints.append(f"{field.kind} {_bounds(field)}")
    elif field.kind in ("number", "integer"):
        hints.append(field.kind)
    elif field.kind == "choices":
        hints.append("numbers or values, separated by commas")
    if field.required:
        hints.append("required")
    if field.has_default:
        hints.append(f"default {visible(json.dumps(field.default, ensure_ascii=False))}")
    if hints:
        words.append(f"({', '.join(hints)})")
    width = terminal_width(approver.stream)
    out = wrap(" ".join(words).split(), width, "  ", "    ")
    for number, choice in enumerate(field.choices, start=1):
        out.append(f"    {number}. {visible(choice.label)}")
    approver.stream.write(_style(approver.color, "1", out[0]) + "\n")
    if len(out) > 1:
        approver.stream.write("\n".join(out[1:]) + "\n")
    approver.stream.flush()


def _bounds(field: Any) -> str:
    low = "" if field.minimum is None else f"{field.minimum:g}"
    high = "" if field.maximum is None else f"{field.maximum:g}"
    return f"{low}..{high}"


async def ask_sampling(approver: Any, request: SamplingRequest) -> str:
    """ "once", "session" or "deny" (Ctrl-C declines too)."""
    lines = []
    if request.system:
        lines += [f"system: {line}" for line in visible(request.system).splitlines()]
    for role, text in request.messages:
        shown = visible(text).splitlines() or [""]
        lines += [f"{role}: {shown[0]}", *(f"  {line}" for line in shown[1:])]
    if len(lines) > MAX_MESSAGE_LINES:
        more = len(lines) - MAX_MESSAGE_LINES
        lines = [*lines[:MAX_MESSAGE_LINES], f"… {more} more lines"]
    model = visible(request.model) or "the session's model"
    lines.append(f"to {model}, no tools; at most {request.max_tokens} tokens")
    heading = f"MCP server {visible(request.server)} asks to use the model (sampling):"
    _block(approver, heading, lines, SAMPLING_CHOICES)
    return await _choose(approver, SAMPLING_CHOICES) or "deny"
