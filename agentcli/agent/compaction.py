"""Context management: when a conversation nears the model's context window, older turns
are replaced by a summary the model writes, while the system and project instructions and
the latest turns stay verbatim. The session file keeps everything; only what is sent
shrinks. What a conversation uses is measured before every step, from each message's
estimate kept by the conversation (agentcli.conversation.tokens)."""

from __future__ import annotations

import contextlib
import json
from collections.abc import Awaitable, Callable
from typing import Any

from agentcli.agent.waiting import WaitingNotice
from agentcli.conversation import events as ev
from agentcli.conversation.messages import Conversation, Message
from agentcli.conversation.tokens import TokenTally, messages_tokens, text_tokens
from agentcli.providers.base import ModelRequest, Provider, events_in
from agentcli.records import dataclass, replace

RESULT_CHARS_IN_TRANSCRIPT = 2_000
# A summary request must fit the window: the transcript goes in pieces of at most this
# share of it (the rest is the instructions, the summary so far and the summary to write).
PIECE_SHARE = 0.6
MIN_PIECE_TOKENS = 1_000  # below this, windows are test artifacts, not models

SUMMARY_SYSTEM = """You condense a conversation between a user and a coding agent so that the
agent can continue the work without the full history. Write a faithful summary: the user's
goals and instructions (verbatim where they are specific), decisions made, files read or
changed and what was learned from them, commands run and their outcomes, errors met, and
what remains to be done. Do not invent anything. Use short Markdown sections."""


def summary_section(summary: str) -> str:
    return f"\n\n## Summary of the earlier conversation\n\n{summary}"


def estimate_tokens(
    system: str,
    messages: list[Message],
    tools: list[dict[str, Any]],
    tally: TokenTally | None = None,
) -> int:
    """`tally`: the conversation's, which knows the messages it measured before."""
    counted = tally.count(messages) if tally is not None else messages_tokens(messages)
    return text_tokens(system) + tools_tokens(tools) + counted


def tools_tokens(tools: list[dict[str, Any]]) -> int:
    return text_tokens(json.dumps(tools, ensure_ascii=False))


def split_text(text: str, budget: int) -> list[str]:
    """`text` in consecutive slices of at most `budget` estimated tokens."""
    slices = []
    while text:
        size = budget * 3
        while size > 1 and text_tokens(text[:size]) > budget:
            size = size * 2 // 3
        slices.append(text[:size])
        text = text[size:]
    return slices


def pieces_of(entries: list[str], budget: int) -> list[str]:
    """The transcript's entries packed, in order, into pieces of at most `budget` tokens;
    an entry larger than that is cut."""
    pieces: list[str] = []
    current: list[str] = []
    used = 0
    for entry in entries:
        for part in split_text(entry, budget) if text_tokens(entry) > budget else [entry]:
            cost = text_tokens(part) + 1
            if current and used + cost > budget:
                pieces.append("\n\n".join(current))
                current, used = [], 0
            current.append(part)
            used += cost
    if current:
        pieces.append("\n\n".join(current))
    return pieces


FIT_SHARE = 0.9  # what a request may use of the window after trimming
TRIMMED_RESULT_CHARS = 1_000
TRIM_NOTE = "\n[… {cut} characters of this result were left out to fit the context window]"


def fit_to_window(
    system: str,
    messages: list[Message],
    tools: list[dict[str, Any]],
    window: int,
    tally: TokenTally | None = None,
) -> list[Message]:
    """What to send when even the latest turns are beyond the window (compaction keeps them
    verbatim): the oldest tool results shortened first, until the request fits. Copies;
    the conversation and the session file keep every result whole."""
    excess = estimate_tokens(system, messages, tools, tally) - int(window * FIT_SHARE)
    if excess <= 0:
        return messages
    fitted = list(messages)
    for index, message in enumerate(messages):
        if excess <= 0:
            break
        if message.role != "tool" or len(message.content) <= TRIMMED_RESULT_CHARS:
            continue
        kept = message.content[:TRIMMED_RESULT_CHARS]
        cut = len(message.content) - len(kept)
        fitted[index] = replace(message, content=kept + TRIM_NOTE.format(cut=cut))
        excess -= text_tokens(message.content) - text_tokens(fitted[index].content)
    return fitted


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
        i
        for i in range(conversation.start + 1, len(messages))
        if messages[i].role == "assistant" and i <= middle
    ]
    return candidates[-1] if candidates else None


def transcript(messages: list[Message]) -> str:
    return "\n\n".join(transcript_entries(messages))


def transcript_entries(messages: list[Message]) -> list[str]:
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
    return lines


@dataclass(slots=True)
class Compactor:
    provider: Provider
    window: int
    threshold: float
    keep_turns: int
    emit: Callable[[ev.Event], None]
    on_compacted: Callable[[str, int], None] = lambda summary, start: None
    # Told first, with the trigger ("auto" or "manual"): the user's PreCompact hooks.
    before: Callable[[str], Awaitable[None]] | None = None

    def fit(
        self,
        system: str,
        messages: list[Message],
        tools: list[dict[str, Any]],
        tally: TokenTally | None = None,
    ) -> list[Message]:
        return fit_to_window(system, messages, tools, self.window, tally)

    def used(self, system: str, conversation: Conversation, tools: list[dict[str, Any]]) -> int:
        return estimate_tokens(system, conversation.visible(), tools, conversation.tokens)

    def needed(self, system: str, conversation: Conversation, tools: list[dict[str, Any]]) -> bool:
        return self.over(self.used(system, conversation, tools))

    def over(self, used: int) -> bool:
        return used > self.window * self.threshold

    async def compact(self, conversation: Conversation, *, used: int | None = None) -> bool:
        """Summarises everything before the split point. False when nothing was done. A
        transcript too long for one request (a history grown under a larger model, long
        tool outputs) is summarised piece by piece, each piece with the summary so far.
        `used`: the estimated tokens that made it necessary, for the notice said first."""
        split = split_point(conversation, self.keep_turns)
        if split is None or split <= conversation.start:
            return False
        if self.before is not None:
            await self.before("manual" if used is None else "auto")
        # Said before the summary requests, which may take a while: the user knows why.
        self.emit(ev.Compacting(used_tokens=used, window=self.window))
        older = conversation.messages[conversation.start : split]
        summary = conversation.summary or ""
        entries = transcript_entries(older)
        room = int(self.window * PIECE_SHARE) - text_tokens(SUMMARY_SYSTEM)
        # The summary so far rides along with every piece: leave it room as it grows.
        summary_room = max(text_tokens(summary), int(self.window * 0.1))
        budget = max(room - summary_room, MIN_PIECE_TOKENS)
        pieces = pieces_of(entries, budget)
        for piece in pieces:
            summary = await self._summarise(summary, piece) or summary
        if not summary or summary == conversation.summary:
            return False
        conversation.summary, conversation.start = summary, split
        self.on_compacted(summary, split)
        self.emit(
            ev.Compaction(
                summarised_messages=len(older),
                kept_messages=len(conversation.messages) - split,
                summary_chars=len(summary),
                requests=len(pieces),
            )
        )
        return True

    async def _summarise(self, summary: str, piece: str) -> str:
        prompt = piece
        if summary:
            prompt = f"Summary of what came before:\n{summary}\n\n{piece}"
        request = ModelRequest(
            system=SUMMARY_SYSTEM,
            messages=[Message.user(f"Summarise this conversation:\n\n{prompt}")],
        )
        parts: list[str] = []
        async with contextlib.aclosing(self.provider.stream(request)) as stream:
            with WaitingNotice(self.emit) as waiting:
                async for item in stream:
                    waiting.touch()
                    for event in events_in(item):
                        if isinstance(event, ev.TextMessageContent):
                            parts.append(event.delta)
        return "".join(parts).strip()
