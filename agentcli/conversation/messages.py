"""Conversation messages, provider-neutral, and the collector that builds an assistant
message from the event stream."""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Literal

from agentcli.conversation.encoded import EncodedMessages
from agentcli.conversation.index import MessageIndex
from agentcli.conversation.tokens import TokenTally
from agentcli.conversation.watch import edited
from agentcli.records import dataclass, field

if TYPE_CHECKING:
    from agentcli.conversation import events as ev
    from agentcli.conversation.images import ImagePart

Role = Literal["system", "user", "assistant", "tool"]


def new_id(prefix: str) -> str:
    # secrets.token_hex's own source, without importing secrets (hmac, hashlib, random)
    return f"{prefix}_{os.urandom(8).hex()}"


@dataclass(slots=True)
class ToolCall:
    # First, so that __setattr__ finds it set: caches have seen this call (see Message).
    watched: bool = field(default=False, init=False, repr=False, compare=False)
    id: str
    name: str
    arguments: str  # the raw JSON text the model sent; parsed by the executor

    def __setattr__(self, name: str, value: Any) -> None:
        if name != "watched" and self.watched:  # `watched` is set first, in __init__
            edited()
        object.__setattr__(self, name, value)


@dataclass(slots=True)
class Message:
    # Set once per-message caches have seen it (agentcli.conversation.watch): an edit from
    # then on is counted, so that they can tell an unchanged thread by identity alone.
    watched: bool = field(default=False, init=False, repr=False, compare=False)
    role: Role
    content: str = ""
    tool_calls: list[ToolCall] = field(default_factory=list)
    tool_call_id: str | None = None  # on tool messages: the call this answers
    error: str | None = None  # on tool messages: why the call failed or was refused
    error_kind: str | None = (
        None  # on failed tool messages: agentcli.conversation.error_kinds.ERROR_KINDS
    )
    id: str = field(default_factory=lambda: new_id("msg"))
    extra: dict[str, Any] = field(default_factory=dict)  # provider-specific parts
    # On user and tool messages: images for a model that sees them. `content` describes
    # each one too, for the models that do not (agentcli.conversation.images).
    images: list[ImagePart] = field(default_factory=list)
    # On messages read back from a session: the references its file records of their images
    # ({"sha256", "mimeType", "size"}), which `sessions show` and export describe without
    # opening an image file; `images` holds those that were loaded to be sent on.
    stored_images: list[dict[str, Any]] = field(default_factory=list)

    def __setattr__(self, name: str, value: Any) -> None:
        if name != "watched" and self.watched:  # `watched` is set first, in __init__
            edited()
        object.__setattr__(self, name, value)

    @classmethod
    def user(cls, text: str, images: list[ImagePart] | None = None) -> Message:
        return cls(role="user", content=text, images=list(images or []))

    @classmethod
    def tool_result(
        cls, call_id: str, content: str, error: str | None = None, kind: str | None = None
    ) -> Message:
        if error is not None and kind is None:
            kind = "failed"
        return cls(role="tool", content=content, tool_call_id=call_id, error=error, error_kind=kind)


class TurnCollector:
    """Folds one model step's events into the assistant message. Appends only, so the
    cost per event does not grow with the length of the answer."""

    def __init__(self) -> None:
        self.message_id: str | None = None
        self.text_open = False  # a TEXT_MESSAGE_START without its END yet
        self._text: list[str] = []
        self._calls: dict[str, tuple[str, list[str]]] = {}

    def feed(self, event: ev.Event) -> None:
        if event.type == "TEXT_MESSAGE_CONTENT":  # nearly every event: no import to look up
            self._text.append(event.delta)  # type: ignore[attr-defined]
            return
        from agentcli.conversation import (
            events as ev,  # not at import: `policy explain` needs no events
        )

        if isinstance(event, ev.TextMessageStart):
            self.message_id = self.message_id or event.message_id
            self.text_open = True
        elif isinstance(event, ev.TextMessageEnd):
            self.text_open = False
        elif isinstance(event, ev.ToolCallStart):
            if (event.metadata or {}).get("executedBy") == "provider":
                return  # the provider ran it: shown, never executed here
            self._calls.setdefault(event.tool_call_id, (event.tool_call_name, []))
            self.message_id = self.message_id or event.parent_message_id
        elif isinstance(event, ev.ToolCallArgs) and event.tool_call_id in self._calls:
            delta = event.delta
            if not isinstance(delta, str):  # a provider (a plugin's) that gave the object
                import json

                delta = json.dumps(delta, ensure_ascii=False, default=str)
            self._calls[event.tool_call_id][1].append(delta)

    @property
    def text(self) -> str:
        return "".join(self._text)

    def message(self) -> Message:
        calls = [
            ToolCall(id=call_id, name=name, arguments="".join(parts))
            for call_id, (name, parts) in self._calls.items()
        ]
        message = Message(role="assistant", content=self.text, tool_calls=calls)
        if self.message_id:
            message.id = self.message_id
        return message


INTERRUPTED = "interrupted: this call was stopped before it finished (Ctrl-C, a crash or a kill)"


def message_to_dict(message: Message) -> dict[str, Any]:
    data: dict[str, Any] = {"id": message.id, "role": message.role, "content": message.content}
    if message.tool_calls:
        data["toolCalls"] = [
            {"id": c.id, "name": c.name, "arguments": c.arguments} for c in message.tool_calls
        ]
    if message.tool_call_id is not None:
        data["toolCallId"] = message.tool_call_id
    if message.error is not None:
        data["error"] = message.error
    if message.error_kind is not None:
        data["errorKind"] = message.error_kind
    if message.extra:
        data["extra"] = message.extra
    return data


def message_from_dict(data: dict[str, Any]) -> Message:
    return Message(
        role=data["role"],
        content=data.get("content", ""),
        tool_calls=[
            ToolCall(id=c["id"], name=c["name"], arguments=c.get("arguments", ""))
            for c in data.get("toolCalls", [])
        ],
        tool_call_id=data.get("toolCallId"),
        error=data.get("error"),
        error_kind=data.get("errorKind"),
        id=data.get("id") or new_id("msg"),
        extra=data.get("extra") or {},
    )


class Conversation:
    """The messages of a session. Every message added is reported to `on_add` (the session
    file). After a compaction, requests carry the summary and the messages from `start`."""

    def __init__(self, messages: list[Message] | None = None) -> None:
        self.messages: list[Message] = list(messages or [])
        self.summary: str | None = None
        self.start = 0  # first message sent verbatim
        self.tokens = TokenTally()  # the messages' estimated tokens, kept between steps
        # Each wire format's encoding of the messages (providers'), kept between steps.
        self.encodings: dict[str, EncodedMessages] = {}
        self._index = MessageIndex()
        self.on_add: Callable[[Message], None] = lambda message: None

    def indexed(self) -> MessageIndex:
        """The messages' ids, calls and answers (agentcli.conversation.index), up to date."""
        return self._index.update(self.messages)

    def add(self, message: Message) -> None:
        self.messages.append(message)
        self.on_add(message)

    def visible(self) -> list[Message]:
        return self.messages[self.start :]

    def order_results(self) -> None:
        """Puts the results after each assistant message in the order of its calls (they
        are recorded in the order they finished)."""
        messages = self.messages
        position = 0
        while position < len(messages):
            message = messages[position]
            position += 1
            if message.role != "assistant" or not message.tool_calls:
                continue
            end = position
            while end < len(messages) and messages[end].role == "tool":
                end += 1
            rank = {call.id: n for n, call in enumerate(message.tool_calls)}
            last = len(rank)
            messages[position:end] = sorted(
                messages[position:end], key=lambda m: rank.get(m.tool_call_id or "", last)
            )
            position = end

    def drop_strays(self) -> int:
        """Leaves out each tool result that does not follow the assistant message of its
        call (its call was lost from the file, or it is a second result of one call): no
        provider takes such a history. Returns how many were left out."""
        kept: list[Message] = []
        open_calls: set[str] = set()
        start = self.start
        for position, message in enumerate(self.messages):
            if message.role == "tool":
                if message.tool_call_id not in open_calls:
                    start -= position < self.start  # the compaction's start moves with it
                    continue
                open_calls.discard(message.tool_call_id or "")
            elif message.role == "assistant":
                open_calls = {call.id for call in message.tool_calls}
            else:
                open_calls = set()
            kept.append(message)
        dropped = len(self.messages) - len(kept)
        if dropped:
            self.messages[:] = kept
            self.start = start
        return dropped

    def repair(self) -> int:
        """Gives every tool call that has no result a synthetic "interrupted" result, so
        that no provider rejects the history. Returns how many were added."""
        index = self.indexed()
        if not index.unanswered:
            return 0  # the usual case, told without walking a long thread's positions
        answered = set(index.answered)
        added = 0
        position = 0
        while position < len(self.messages):
            message = self.messages[position]
            position += 1
            if message.role != "assistant" or not message.tool_calls:
                continue
            # results belong right after their assistant message
            while position < len(self.messages) and self.messages[position].role == "tool":
                position += 1
            for call in message.tool_calls:
                if call.id in answered:
                    continue
                result = Message.tool_result(
                    call.id, INTERRUPTED, error=INTERRUPTED, kind="interrupted"
                )
                self.messages.insert(position, result)
                self.on_add(result)
                answered.add(call.id)
                position += 1
                added += 1
        if added:
            self.order_results()
        return added
