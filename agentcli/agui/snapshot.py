"""The MESSAGES_SNAPSHOT of a served thread, encoded without re-encoding the whole thread
each run: every message is validated and encoded by the SDK's models once and its JSON
kept, and the event is those pieces inside the SDK's own encoding of an empty snapshot.
Byte for byte what `wire.encode(MessagesSnapshot(messages=thread_messages(...)))` writes
(tests/test_agui_snapshot.py), in time that grows with the new messages, not the thread
(besides a check in C of those it encoded before, and copying the bytes out).

A message is known again by identity: a thread never changes a message once it holds it
(content and calls are set before `Conversation.add`), and its content's identity and
its calls' names and arguments are checked too, so one changed in place is encoded anew."""

from __future__ import annotations

from functools import cache
from typing import Any

from agentcli.agui import wire
from agentcli.conversation import events as ev
from agentcli.conversation.encoded import EncodedMessages
from agentcli.conversation.messages import Message

_EMPTY_END = '"messages":[]}\n\n'


def thread_messages(
    messages: list[Message], confirms: list[tuple[str | None, dict[str, Any]]]
) -> list[dict[str, Any]]:
    """The thread's messages in AG-UI's form (MESSAGES_SNAPSHOT), with the run's pending
    `confirm_tool_call` calls in the assistant message they were sent under, so that a
    client that replaces its messages with these can still answer them."""
    shaped = [wire.message_to_wire(m) for m in messages]
    by_id = {m["id"]: m for m in shaped if m["role"] == "assistant"}
    for parent, call in confirms:
        target = by_id.get(parent or "")
        if target is None:
            target = {"id": f"{call['id']}-message", "role": "assistant"}
            shaped.append(target)
            by_id[target["id"]] = target
        target.setdefault("toolCalls", []).append(call)
    return shaped


@cache
def _message_adapter() -> Any:
    from ag_ui.core import Message as SdkMessage
    from pydantic import TypeAdapter

    return TypeAdapter(SdkMessage)


def encode_message(message: dict[str, Any]) -> str:
    """One message's JSON as the SDK writes it inside an event (validated first: raises
    pydantic's ValidationError when it is not an AG-UI message)."""
    adapter = _message_adapter()
    return adapter.dump_json(adapter.validate_python(message), by_alias=True).decode()


class SnapshotWire:
    """One thread's encoded messages, kept between its runs (agentcli.conversation.encoded:
    the unchanged lead of the last record taken whole, each message's JSON by identity)."""

    def __init__(self) -> None:
        self._kept = EncodedMessages()
        self._anew = 0  # messages a run's confirm calls joined, encoded for that record only

    @property
    def encoded(self) -> int:
        """Messages validated and encoded so far (tests count them)."""
        return self._kept.encoded + self._anew

    def message_json(self, message: Message) -> str:
        return self._kept.own_json(message, lambda m: encode_message(wire.message_to_wire(m)))

    def _encode(self, message: dict[str, Any]) -> str:
        self._anew += 1
        return encode_message(message)

    def record(
        self, messages: list[Message], confirms: list[tuple[str | None, dict[str, Any]]]
    ) -> str:
        """The `data: ...` SSE record of the thread's MESSAGES_SNAPSHOT (see
        `threads.thread_messages`: the run's pending confirm calls go in the assistant
        message they were sent under, which is therefore encoded anew)."""
        envelope = wire.encode(ev.MessagesSnapshot(messages=[]))
        if not envelope.endswith(_EMPTY_END):  # not the SDK's layout we know: its own way
            return wire.encode(ev.MessagesSnapshot(messages=thread_messages(messages, confirms)))
        if confirms:
            joined = ",".join(self._pieces(messages, confirms))
            self._kept.own.keep_only(messages)
        else:
            joined = ",".join(
                self._kept.pieces(messages, lambda listed, i: self.message_json(listed[i]))
            )
        return envelope[: -len("]}\n\n")] + joined + "]}\n\n"

    def _pieces(
        self, messages: list[Message], confirms: list[tuple[str | None, dict[str, Any]]]
    ) -> list[str]:
        """With confirm calls (a run that asks for approval), the messages they join are
        encoded anew, the rest taken from what is kept."""
        parents = {parent for parent, _ in confirms}
        changed = [m for m in messages if m.role == "assistant" and m.id in parents]
        # thread_messages says where each confirm call goes: into the changed messages,
        # and into messages of their own (after the thread's) for calls without a parent.
        fresh = {item["id"]: item for item in thread_messages(changed, confirms)}
        pieces = []
        for message in messages:
            if message.role == "assistant" and message.id in fresh:
                pieces.append(self._encode(fresh.pop(message.id)))
            else:
                pieces.append(self.message_json(message))
        return pieces + [self._encode(item) for item in fresh.values()]
