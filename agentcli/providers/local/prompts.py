"""The prompts a small model is shown: the chat turns of a decision (system prompt with
the tool list, few-shot examples, the conversation), of a call's arguments and of a
free-text answer, and the completion-style prompts for base models. Pure text, no model."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Literal

from agentcli.conversation.messages import Message
from agentcli.providers.local.conversation import last_user_request
from agentcli.providers.local.decision import ANSWER, render_decision
from agentcli.providers.local.results import call_text, tool_result_text
from agentcli.records import dataclass

if TYPE_CHECKING:
    from agentcli.providers.local.router import Example


@dataclass(frozen=True, slots=True)
class Turn:
    role: Literal["system", "user", "assistant"]
    content: str


def first_sentence(text: str, limit: int = 110) -> str:
    text = " ".join(text.split())
    match = re.match(r"(.+?(?<!e\.g)(?<!i\.e)[.!?])(\s|$)", text)
    sentence = match.group(1) if match else text
    if len(sentence) > limit:
        sentence = sentence[: limit - 1].rstrip() + "…"
    return sentence


def signature(tool: dict[str, Any]) -> str:
    params = tool.get("parameters") or {}
    required = set(params.get("required") or ())
    names = [name if name in required else f"{name}?" for name in (params.get("properties") or {})]
    return f"{tool['name']}({', '.join(names)})"


def tool_catalog(tools: Sequence[dict[str, Any]]) -> str:
    lines = [
        f"- {signature(tool)}: {first_sentence(tool.get('description', ''))}" for tool in tools
    ]
    lines.append(f"- {ANSWER}: no tool needed; answer in words.")
    return "\n".join(lines)


def decision_system_prompt(tools: Sequence[dict[str, Any]]) -> str:
    return (
        "You are a helpful assistant working in a terminal on the user's project. For each "
        "request, choose one tool to call, or answer directly.\n"
        f"Tools:\n{tool_catalog(tools)}\n"
        'Reply with JSON only: {"name": TOOL, "arguments": {...}} to call a tool, or '
        f'{{"name": "{ANSWER}"}} when no tool is needed.'
    )


def to_turns(
    messages: Sequence[Message], *, result_chars: int = 6000, calls: str = "json"
) -> list[Turn]:
    """The history as alternating user/assistant turns (Gemma's template and others
    refuse anything else): a call is the assistant's JSON decision (`calls="json"`) or
    left out, its result then told in the user's turn (`calls="text"`: a small model
    shown JSON answers would answer in JSON); neighbours of one role are merged."""
    names: dict[str, str] = {}
    turns: list[Turn] = []

    def add(role: Literal["user", "assistant"], text: str) -> None:
        if turns and turns[-1].role == role:
            turns[-1] = Turn(role, f"{turns[-1].content}\n\n{text}".strip())
        else:
            turns.append(Turn(role, text))

    for message in messages:
        if message.role == "user":
            add("user", message.content)
        elif message.role == "assistant":
            parts = [message.content.strip()] if message.content.strip() else []
            for call in message.tool_calls:
                names[call.id] = call.name if calls == "json" else call_text(call)
                if calls == "json":
                    parts.append(render_decision(call.name, call.arguments))
            if parts:
                add("assistant", "\n".join(parts))
        elif message.role == "tool":
            name = names.get(message.tool_call_id or "", "the tool")
            add("user", tool_result_text(name, message, result_chars))
    if turns and turns[0].role != "user":
        turns.insert(0, Turn("user", "(continued)"))
    return turns


def answer_turns(
    system: str,
    messages: Sequence[Message],
    *,
    result_chars: int = 6000,
) -> list[Turn]:
    """The conversation for a free-text answer. After a tool result, the last user turn
    restates the request, so a small model answers it rather than describing the result."""
    turns = to_turns(messages, result_chars=result_chars, calls="text")
    if messages and messages[-1].role == "tool" and turns and turns[-1].role == "user":
        request = last_user_request(messages)
        turns[-1] = Turn(
            "user", f"{turns[-1].content}\n\nUsing this result, answer my request: {request}"
        )
    return [Turn("system", system), *turns] if system else turns


ANSWER_SYSTEM = (
    "You are a helpful assistant working in a terminal on the user's project. Answer "
    "briefly and accurately, using the tool results you are given."
)


def decision_turns(
    tools: Sequence[dict[str, Any]],
    messages: Sequence[Message],
    *,
    examples: Sequence[Example] = (),
    result_chars: int = 6000,
) -> list[Turn]:
    """System prompt with the tool list, few-shot examples (`select_examples`) as
    earlier turns, then the conversation, whose last turn is the user's."""
    return _few_shot(decision_system_prompt(tools), examples, messages, result_chars)


def argument_turns(
    tool: dict[str, Any],
    messages: Sequence[Message],
    *,
    examples: Sequence[Example] = (),
    result_chars: int = 6000,
) -> list[Turn]:
    """The prompt for writing the arguments of a call to `tool`, once chosen: only that
    tool described, only its `examples` shown (`router.own_examples`)."""
    system = (
        "You are a helpful assistant working in a terminal on the user's project. You call "
        f"the tool {signature(tool)}: {first_sentence(tool.get('description', ''))}\n"
        'Reply with JSON only: {"name": TOOL, "arguments": {...}}.'
    )
    return _few_shot(system, examples, messages, result_chars)


def _few_shot(
    system: str, examples: Sequence[Example], messages: Sequence[Message], result_chars: int
) -> list[Turn]:
    """The system turn, each example as a user turn and its decision, then the history."""
    turns = [Turn("system", system)]
    for example in examples:
        turns.append(Turn("user", example.request))
        turns.append(Turn("assistant", render_decision(example.tool, example.arguments)))
    turns.extend(to_turns(messages, result_chars=result_chars))
    return turns


# --- completion-style prompts (for base models, which know no chat template) ------------


def plain_decision_prompt(
    tools: Sequence[dict[str, Any]], request: str, *, examples: Sequence[Example] = ()
) -> str:
    lines = [
        "Each request is followed by the one tool call that serves it, as JSON, or by "
        f'{{"name": "{ANSWER}"}} when no tool is needed.',
        f"Tools:\n{tool_catalog(tools)}",
        "",
    ]
    for example in examples:
        lines.append(f"Request: {example.request}")
        lines.append(f"Call: {render_decision(example.tool, example.arguments)}")
    lines.append(f"Request: {' '.join(request.split())}")
    lines.append("Call:")
    return "\n".join(lines) + " "


PLAIN_STOP = ("\nRequest:", "\n\n", "\nResult of", "\nAnswer:")


def plain_answer_prompt(messages: Sequence[Message], *, result_chars: int = 3000) -> str:
    """A completion prompt for base models: the request, any tool results, `Answer:`."""
    lines = [
        "Below, a helpful assistant answers a user's request in one or two clear sentences,",
        "using the tool result it is given.",
        "",
        "Request: how many lines does notes.txt have?",
        'Result of read_file(path="notes.txt"):',
        "     1\tbuy milk",
        "     2\tcall Anna",
        'Answer: notes.txt has 2 lines: "buy milk" and "call Anna".',
        "",
    ]
    for turn in to_turns(messages, result_chars=result_chars, calls="text")[-4:]:
        if turn.role == "user":
            lines.append(
                turn.content
                if turn.content.startswith(("Result of", "The tool"))
                else f"Request: {turn.content}"
            )
        else:
            lines.append(f"Answer: {turn.content}")
    lines.append("Answer:")
    return "\n".join(lines) + " "
