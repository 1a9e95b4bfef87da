"""Context management: when a conversation nears the model's context window, older turns
are replaced by a summary the model writes, while the system and project instructions and
the latest turns stay verbatim. The session file keeps everything; only what is sent
shrinks."""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from agentcli import events as ev
from agentcli.messages import Conversation, Message
from agentcli.providers.base import ModelRequest, Provider

CHARS_PER_TOKEN = 4  # a deliberately rough estimate; the threshold leaves room for error
RESULT_CHARS_IN_TRANSCRIPT = 2_000

SUMMARY_SYSTEM = """You condense a conversation between a user and a coding agent so that the
agent can continue the work without the full history. Write a faithful summary: the user's
goals and instructions (verbatim where they are specific), decisions made, files read or
changed and what was learned from them, commands run and their outcomes, errors met, and
what remains to be done. Do not invent anything. Use short Markdown sections."""


def summary_section(summary: str) -> str:
    return f"\n\n## Summary of the earlier conversation\n\n{summary}"


def estimate_tokens(system: str, messages: list[Message], tools: list[dict[str, Any]]) -> int:
    chars = len(system) + len(json.dumps(tools))
    for message in messages:
        chars += len(message.content) + sum(
            len(c.arguments) + len(c.name) for c in message.tool_calls
        )
    return chars // CHARS_PER_TOKEN


def split_point(conversation: Conversation, keep_turns: int) -> int | None:
    """Where the verbatim part starts: at the `keep_turns`-th last user message, or, in one
    long turn, at an assistant message halfway through. Never between a tool call and its
    result. None when there is nothing worth summarising."""
    messages = conversation.messages
    users = [i for i in range(conversation.start, len(messages)) if messages[i].role == "user"]
    if len(users) > keep_turns:
        return users[-keep_turns] if keep_turns else len(messages)
    if len(messages) - conversation.start < 4:
        return None  # a short exchange is all "latest turns": nothing worth summarising
    middle = conversation.start + (len(messages) - conversation.start) // 2
    candidates = [
        i for i in range(conversation.start + 1, len(messages))
        if messages[i].role == "assistant" and i <= middle
    ]  # fmt: skip
    return candidates[-1] if candidates else None


def transcript(messages: list[Message]) -> str:
    lines = []
    for message in messages:
        if message.role == "tool":
            text = message.content
            if len(text) > RESULT_CHARS_IN_TRANSCRIPT:
                text = text[:RESULT_CHARS_IN_TRANSCRIPT] + " […]"
            lines.append(f"[tool result{' (error)' if message.error else ''}]\n{text}")
            continue
        if message.content:
            lines.append(f"[{message.role}]\n{message.content}")
        for call in message.tool_calls:
            lines.append(f"[{message.role} calls {call.name}] {call.arguments}")
    return "\n\n".join(lines)


@dataclass(slots=True)
class Compactor:
    provider: Provider
    window: int
    threshold: float
    keep_turns: int
    emit: Callable[[ev.Event], None]
    on_compacted: Callable[[str, int], None] = lambda summary, start: None

    def needed(self, system: str, conversation: Conversation, tools: list[dict[str, Any]]) -> bool:
        used = estimate_tokens(system, conversation.visible(), tools)
        return used > self.window * self.threshold

    async def compact(self, conversation: Conversation) -> bool:
        """Summarises everything before the split point. False when nothing was done."""
        split = split_point(conversation, self.keep_turns)
        if split is None or split <= conversation.start:
            return False
        older = conversation.messages[conversation.start : split]
        prompt = transcript(older)
        if conversation.summary:
            prompt = f"Summary of what came before:\n{conversation.summary}\n\n{prompt}"
        request = ModelRequest(
            system=SUMMARY_SYSTEM,
            messages=[Message.user(f"Summarise this conversation:\n\n{prompt}")],
        )
        pieces: list[str] = []
        async with contextlib.aclosing(self.provider.stream(request)) as stream:
            async for item in stream:
                if isinstance(item, ev.TextMessageContent):
                    pieces.append(item.delta)
        summary = "".join(pieces).strip()
        if not summary:
            return False
        conversation.summary, conversation.start = summary, split
        self.on_compacted(summary, split)
        self.emit(
            ev.Compaction(
                summarised_messages=len(older),
                kept_messages=len(conversation.messages) - split,
                summary_chars=len(summary),
            )
        )
        return True
