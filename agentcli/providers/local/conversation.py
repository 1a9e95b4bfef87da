"""Questions about the conversation so far: the last request, the calls made since it."""

from __future__ import annotations

import json
from collections.abc import Sequence

from agentcli.conversation.messages import Message


def last_user_request(messages: Sequence[Message]) -> str:
    """The last request, its action words' typos put right (agentcli.providers.local
    .typos): what is routed and what the arguments are read from."""
    from agentcli.providers.local.typos import corrected

    for message in reversed(messages):
        if message.role == "user":
            return corrected(message.content)
    return ""


def tool_rounds_since_user(messages: Sequence[Message]) -> int:
    """How many assistant steps with tool calls came after the last user message."""
    rounds = 0
    for message in reversed(messages):
        if message.role == "user":
            break
        if message.role == "assistant" and message.tool_calls:
            rounds += 1
    return rounds


def calls_since_user(messages: Sequence[Message]) -> set[tuple[str, str]]:
    """(name, canonical arguments) of the calls made since the last user message."""
    seen: set[tuple[str, str]] = set()
    for message in reversed(messages):
        if message.role == "user":
            break
        for call in message.tool_calls:
            seen.add((call.name, canonical_arguments(call.arguments)))
    return seen


def canonical_arguments(arguments: str) -> str:
    try:
        return json.dumps(json.loads(arguments or "{}"), sort_keys=True)
    except ValueError:
        return arguments


def with_request(messages: Sequence[Message], request: str) -> list[Message]:
    """The conversation with its last user message replaced by `request`."""
    out = list(messages)
    for index in range(len(out) - 1, -1, -1):
        if out[index].role == "user":
            out[index] = Message.user(request)
            break
    return out
