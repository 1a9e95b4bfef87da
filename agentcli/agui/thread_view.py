"""A remote AG-UI thread as the remote agent sees it (`--agent`): its messages and its state,
folded from a run's events the way AG-UI clients fold them (text and tool-call events build
messages, TOOL_CALL_RESULT adds a tool message, MESSAGES_SNAPSHOT replaces them all,
STATE_SNAPSHOT replaces the state, STATE_DELTA patches it with RFC 6902 JSON Patch).

What a run added is kept on agentcli's assistant message (`extra["agui"]`, saved in the
session), so the next run sends the remote agent its own tool calls and results, and any
history its snapshot rewrote, exactly as it last described them."""

from __future__ import annotations

import copy
import json
from typing import Any

from agentcli.agui.state import DEFAULT_LIMIT, StateError, apply_bounded
from agentcli.agui.wire import message_to_wire
from agentcli.conversation.messages import Message
from agentcli.errors import ProviderError

EXTRA_KEY = "agui"


class ThreadView:
    """The remote's messages and state during one run, from what agentcli sent it."""

    state_limit: int = DEFAULT_LIMIT  # bytes of JSON a remote's state may reach

    def __init__(self, messages: list[dict[str, Any]], state: Any) -> None:
        self.messages = [dict(m) for m in messages]
        self.state = copy.deepcopy(state)
        self.state_changed = False
        self._by_id: dict[str, dict[str, Any]] = {m["id"]: m for m in self.messages if "id" in m}
        self._calls: dict[str, dict[str, Any]] = {}  # tool call id -> its function

    def apply(self, raw: dict[str, Any]) -> None:
        kind = raw.get("type")
        handler = _HANDLERS.get(str(kind))
        if handler is not None:
            handler(self, raw)

    def _add(self, message: dict[str, Any]) -> dict[str, Any]:
        self.messages.append(message)
        self._by_id[message["id"]] = message
        return message

    def _text_start(self, raw: dict[str, Any]) -> None:
        ident = raw.get("messageId")
        if ident and ident not in self._by_id:
            self._add({"id": ident, "role": raw.get("role") or "assistant", "content": ""})

    def _text_content(self, raw: dict[str, Any]) -> None:
        message = self._by_id.get(raw.get("messageId") or "")
        if message is None:
            message = self._add({"id": raw.get("messageId"), "role": "assistant", "content": ""})
        delta = str(raw.get("delta") or "")
        content = message.get("content")
        if isinstance(content, list):  # parts (a snapshot's user message): text joins a text part
            last = content[-1] if content else None  # copied: the list may be what was sent
            if isinstance(last, dict) and last.get("type") == "text":
                joined = {**last, "text": str(last.get("text") or "") + delta}
                message["content"] = [*content[:-1], joined]
            else:
                message["content"] = [*content, {"type": "text", "text": delta}]
        elif content is None or isinstance(content, str):
            message["content"] = (content or "") + delta
        else:
            raise ProviderError(
                f"the agent streamed text into message {message.get('id')!r}, whose content "
                "is not text; the run stops here"
            )

    def _call_start(self, raw: dict[str, Any]) -> None:
        call_id = raw.get("toolCallId")
        if not call_id:
            return
        parent = raw.get("parentMessageId")
        message = self._by_id.get(parent) if parent else None
        if message is None or message.get("role") != "assistant":
            last = self.messages[-1] if self.messages else None
            if parent is None and last is not None and last.get("role") == "assistant":
                message = last
            else:
                message = self._add({"id": parent or call_id, "role": "assistant"})
        function = {"name": raw.get("toolCallName") or "", "arguments": ""}
        message.setdefault("toolCalls", []).append(
            {"id": call_id, "type": "function", "function": function}
        )
        self._calls[call_id] = function

    def _call_args(self, raw: dict[str, Any]) -> None:
        function = self._calls.get(raw.get("toolCallId") or "")
        if function is not None:
            function["arguments"] += str(raw.get("delta") or "")

    def _call_result(self, raw: dict[str, Any]) -> None:
        ident = raw.get("messageId") or f"result-{raw.get('toolCallId')}"
        message = {"id": ident, "role": "tool", "toolCallId": raw.get("toolCallId")}
        message["content"] = raw.get("content") if isinstance(raw.get("content"), str) else ""
        self._add(message)

    def _messages_snapshot(self, raw: dict[str, Any]) -> None:
        given = raw.get("messages")
        if not isinstance(given, list):
            return
        self.messages = [dict(m) for m in given if isinstance(m, dict) and m.get("role")]
        self._by_id = {m["id"]: m for m in self.messages if "id" in m}
        self._calls = {
            call["id"]: call.setdefault("function", {"name": "", "arguments": ""})
            for m in self.messages
            for call in m.get("toolCalls") or []
            if isinstance(call, dict) and "id" in call
        }

    def _state_snapshot(self, raw: dict[str, Any]) -> None:
        self.state = copy.deepcopy(raw.get("snapshot"))
        self.state_changed = True

    def _state_delta(self, raw: dict[str, Any]) -> None:
        base = {} if self.state is None else self.state  # AG-UI's state before any
        try:
            # A remote agent's patches are bounded as the model's are (limits.state).
            self.state, _ = apply_bounded(base, list(raw.get("delta") or []), self.state_limit)
        except StateError as error:
            raise StateError(f"the agent's STATE_DELTA does not apply: {error}") from None
        self.state_changed = True


_HANDLERS: dict[str, Any] = {
    "TEXT_MESSAGE_START": ThreadView._text_start,
    "TEXT_MESSAGE_CONTENT": ThreadView._text_content,
    "TOOL_CALL_START": ThreadView._call_start,
    "TOOL_CALL_ARGS": ThreadView._call_args,
    "TOOL_CALL_RESULT": ThreadView._call_result,
    "MESSAGES_SNAPSHOT": ThreadView._messages_snapshot,
    "STATE_SNAPSHOT": ThreadView._state_snapshot,
    "STATE_DELTA": ThreadView._state_delta,
}


def _same(a: dict[str, Any], b: dict[str, Any]) -> bool:
    """The same message for the remote agent: a tool message by its call and content (an
    agent may give results ids of its own), any other by id, role, text and calls."""

    def key(m: dict[str, Any]) -> Any:
        calls = [
            (c.get("id"), (c.get("function") or {}).get("name"), _args(c))
            for c in m.get("toolCalls") or []
            if isinstance(c, dict)
        ]
        if m.get("role") == "tool":
            return ("tool", m.get("toolCallId"), m.get("content"), m.get("error"))
        return (m.get("id"), m.get("role"), m.get("content") or "", calls)

    return key(a) == key(b)


def _args(call: dict[str, Any]) -> Any:
    text = (call.get("function") or {}).get("arguments") or ""
    try:
        return json.loads(text) if text.strip() else {}
    except ValueError:
        return text


def added(sent: list[dict[str, Any]], view: ThreadView) -> dict[str, Any]:
    """What a run changed, to keep on its assistant message: how many of the messages sent
    the remote still has as they were, the messages after them, and the state."""
    keep = 0
    while keep < min(len(sent), len(view.messages)) and _same(sent[keep], view.messages[keep]):
        keep += 1
    record: dict[str, Any] = {"keep": keep, "messages": view.messages[keep:]}
    if view.state_changed:
        record["state"] = view.state
    return record


def wire_history(messages: list[Message]) -> tuple[list[dict[str, Any]], Any]:
    """The thread's messages as the remote agent last described them, and its state: each
    assistant message a run produced brings what that run added; the rest (user messages,
    results of local tools, history from other models) is sent as agentcli has it."""
    wire: list[dict[str, Any]] = []
    state: Any = None  # none until the agent has sent one: `{}` would be a state, and an
    # agent with an initial state of its own (LlamaIndex's AG-UI workflow) takes it as real
    for message in messages:
        if message.role == "system":
            continue
        record = message.extra.get(EXTRA_KEY) if message.role == "assistant" else None
        if not isinstance(record, dict):
            wire.append(message_to_wire(message))
            continue
        keep = record.get("keep")
        wire = wire[: keep if isinstance(keep, int) else len(wire)]
        wire += [m for m in record.get("messages") or [] if isinstance(m, dict)]
        if "state" in record:
            state = record["state"]
    return wire, state
