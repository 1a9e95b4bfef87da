"""Edits of messages that caches have seen are counted (agentcli.conversation.watch), so
that the caches can trust identity alone while the count stands still; and a
conversation's index (agentcli.conversation.index) always equals what its messages hold."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings

from agentcli.conversation import watch
from agentcli.conversation.index import MessageIndex
from agentcli.conversation.messages import Conversation, Message, ToolCall
from agentcli.conversation.tokens import TokenTally, messages_tokens
from agentcli.records import replace
from tests.message_edits import apply_edit, edits


def _assistant() -> Message:
    calls = [ToolCall(id="c1", name="read_file", arguments='{"path": "a"}')]
    return Message(role="assistant", content="reading", tool_calls=calls, extra={"k": 1})


EDITS = {
    "content": lambda m: setattr(m, "content", "other"),
    "id": lambda m: setattr(m, "id", "msg_other"),
    "role": lambda m: setattr(m, "role", "user"),
    "images replaced": lambda m: setattr(m, "images", []),
    "a call's arguments": lambda m: setattr(m.tool_calls[0], "arguments", "{}"),
    "a call's name": lambda m: setattr(m.tool_calls[0], "name", "write_file"),
    "calls appended": lambda m: m.tool_calls.append(ToolCall(id="c2", name="n", arguments="")),
    "calls extended": lambda m: m.tool_calls.extend([]),
    "calls inserted": lambda m: m.tool_calls.insert(0, ToolCall(id="c0", name="n", arguments="")),
    "a call popped": lambda m: m.tool_calls.pop(),
    "calls cleared": lambda m: m.tool_calls.clear(),
    "calls sorted": lambda m: m.tool_calls.sort(key=lambda c: c.id),
    "calls reversed": lambda m: m.tool_calls.reverse(),
    "a call set": lambda m: m.tool_calls.__setitem__(0, ToolCall(id="x", name="n", arguments="")),
    "a call deleted": lambda m: m.tool_calls.__delitem__(0),
    "calls added to": lambda m: m.tool_calls.__iadd__([]),
    "images appended": lambda m: m.images.append(object()),
    "extra set": lambda m: m.extra.__setitem__("k", 2),
    "extra updated": lambda m: m.extra.update(k=3),
    "extra popped": lambda m: m.extra.pop("k"),
    "extra cleared": lambda m: m.extra.clear(),
    "extra defaulted": lambda m: m.extra.setdefault("new", 1),
}


@pytest.mark.parametrize("kind", list(EDITS))
def test_every_edit_of_a_watched_message_is_counted(kind):
    message = _assistant()
    EDITS[kind](message)  # before it is watched: building a message is not an edit
    message = _assistant()
    before = watch.edits()
    EDITS[kind](_assistant())
    assert watch.edits() == before
    assert watch.watch(message)
    assert watch.edits() == before  # watching is not an edit
    EDITS[kind](message)
    assert watch.edits() > before


def test_watching_keeps_what_a_message_is():
    message = _assistant()
    copy = replace(message)
    watch.watch(message)
    assert message.watched and not copy.watched
    assert message == copy and repr(message) == repr(copy)
    assert message.tool_calls == copy.tool_calls and json.dumps(message.extra) == '{"k": 1}'
    assert isinstance(message.tool_calls, list) and isinstance(message.extra, dict)


def test_an_object_that_cannot_be_watched_keeps_the_check_field_by_field():
    class Plain:  # what a cache may be given besides messages: no `watched`
        def __init__(self, content: str) -> None:
            self.content, self.tool_calls = content, []

    tally = TokenTally()
    plain = [Plain("a" * 30), Plain("b")]
    first = tally.count(plain)  # type: ignore[arg-type]
    plain[0].content = "short"  # not counted as an edit: only the field check sees it
    assert tally.count(plain) < first  # type: ignore[arg-type]


def _expected(messages: list[Message]) -> dict:
    answered = {m.tool_call_id for m in messages if m.role == "tool"}
    calls = {c.id: c for m in messages for c in m.tool_calls}
    return {
        "ids": {m.id for m in messages},
        "answered": answered,
        "unanswered": set(calls) - answered,
        "calls": calls,
        "keys": [
            ("tool", m.tool_call_id) if m.role == "tool" else (m.role, m.id) for m in messages
        ],
        "with_images": sum(1 for m in messages if m.images),
    }


def _seen(index: MessageIndex) -> dict:
    fields = ("ids", "answered", "unanswered", "calls", "keys", "with_images")
    return {name: getattr(index, name) for name in fields}


def _thread() -> list[Message]:
    messages: list[Message] = []
    for n in range(4):
        messages.append(Message.user(f"q{n}"))
        call = ToolCall(id=f"call{n}", name="read_file", arguments="{}")
        messages.append(Message(role="assistant", content="", tool_calls=[call]))
        if n % 2:
            messages.append(Message.tool_result(f"call{n}", "done"))
    return messages


def _id_edit(messages: list[Message], where: int, text: str) -> None:
    if messages:
        messages[where % len(messages)].id = f"msg_{text}"


def _result_edit(messages: list[Message], where: int, text: str) -> None:
    calls = [c.id for m in messages for c in m.tool_calls]
    if calls:
        messages.append(Message.tool_result(calls[where % len(calls)], text))


@settings(max_examples=200, deadline=None)
@given(edits("id", "result", "reorder"))
def test_after_any_edits_the_index_is_what_the_messages_hold(changes):
    messages = _thread()
    index = MessageIndex()
    assert _seen(index.update(messages)) == _expected(messages)
    for kind, where, text in changes:
        if kind == "id":
            _id_edit(messages, where, text)
        elif kind == "result":
            _result_edit(messages, where, text)
        elif kind == "reorder":  # the last few put in another order, as a run does
            messages[-(where % 4 + 1) :] = reversed(messages[-(where % 4 + 1) :])
        else:
            apply_edit(messages, kind, where, text)
        assert _seen(index.update(messages)) == _expected(messages)


def test_a_growing_conversation_is_indexed_by_what_it_added():
    conversation = Conversation(_thread())
    first = conversation.indexed()
    assert first.unanswered == {"call0", "call2"}
    assert conversation.repair() == 2  # the calls without results get theirs
    assert not conversation.indexed().unanswered
    conversation.add(Message.user("more"))
    assert conversation.indexed().keys[-1] == ("user", conversation.messages[-1].id)
    assert conversation.tokens.count(conversation.messages) == messages_tokens(
        conversation.messages
    )


def test_a_run_putting_its_results_in_order_keeps_the_index():
    conversation = Conversation(_thread())
    results = [Message.tool_result("call0", "b"), Message.tool_result("call2", "a")]
    for result in results:
        conversation.add(result)
    generation = conversation.indexed().generation
    conversation.messages[-2:] = reversed(results)
    index = conversation.indexed()
    assert index.generation == generation  # not made again: the sets stand
    assert index.keys == _expected(conversation.messages)["keys"]
    conversation.messages[-1] = Message.tool_result("call2", "another")
    assert conversation.indexed().generation == generation + 1
